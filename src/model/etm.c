/*
 * The trace unit (ETMv4.2) of each core: its programmers' model, reached by
 * the System registers (MRS/MSR, op0 = 2) and by its 4 KiB external frame,
 * the same state by both paths. The layout and stored bits are the table of
 * src/arch/etm.c; what is not plain storage is here.
 *
 * System registers (IHI 0064, "Trace unit System register access"): EL1
 * and above only (UNDEFINED at EL0); CPTR_EL2.TTA traps EL0/EL1 to EL2,
 * CPTR_EL3.TTA traps EL0-EL2 to EL3. The OS lock does not block them: the
 * OS saves and restores the trace unit through them with the lock set.
 * MSR to a read-only register and MRS of a write-only one are UNDEFINED.
 *
 * External frame, the rule of the PMU frame applied to the trace unit:
 * the core powered, no OS double lock, the trace unit's own OS lock clear
 * (TRCOSLSR.OSLM = 0b10: the trace unit implements it), and non-secure
 * accesses only with ExternalNoninvasiveDebugEnabled(); otherwise an error
 * (DPMU_EIO, reads 0). TRCOSLAR, TRCOSLSR, TRCPDCR and TRCPDSR stay
 * reachable with the OS lock set, so a debugger can see and clear it; the
 * management registers (0xF00-0xFFC) and TRCPDSR answer whatever the
 * power, locks or authentication. TRCLSR.SLK makes the frame read-only
 * (writes ignored without an error) until TRCLAR is written with the key.
 *
 * Configuration registers written while TRCPRGCTLR.EN = 1 are UNPREDICTABLE
 * (IHI 0064: program the trace unit only while it is idle); the model
 * ignores such writes (docs/model.md).
 */
#include <stddef.h>

#include "model/model_internal.h"

#define TRCOSLSR_OSLM1 (1u << 3)  /* OSLM = 0b10: OS lock implemented here */
#define TRCLSR_SLI (1u << 0)
#define TRCDEVTYPE_TRACE_PE 0x13u /* SUB 1 (processor), MAJOR 3 (trace source) */

void dpmu_etm_reset(struct dpmu_core *c)
{
	struct dpmu_etm *e = &c->etm;
	bool slk = e->slk;        /* the software lock is not in this domain */
	*e = (struct dpmu_etm){ 0 };
	e->slk = slk;
	/* Cold reset of the core power domain: the OS lock is set and
	 * TRCPDSR.STICKYPD records that the trace registers were lost. */
	e->oslk = true;
	e->stickypd = true;
	dpmu_etm_run_enable(c, false); /* the registers are gone: so is the trace */
}

static bool enabled(const struct dpmu_etm *e)
{
	return e->reg[DPMU_TRCPRGCTLR >> 2] & DPMU_TRCPRGCTLR_EN;
}

/* The value of a whole register (not the word of a 64-bit one). Reading
 * TRCPDSR clears STICKYPD. */
static uint64_t etm_read(struct dpmu_core *c, const struct dpmu_etm_reg *r, unsigned index,
			 uint32_t base)
{
	struct dpmu_etm *e = &c->etm;
	switch (base) {
	case DPMU_TRCSTATR:
		/* Nothing is ever pending: disabled is idle at once, and the
		 * programmers' model is stable while idle. */
		return enabled(e) ? 0 : DPMU_TRCSTATR_IDLE | DPMU_TRCSTATR_PMSTABLE;
	case DPMU_TRCOSLSR:
		return TRCOSLSR_OSLM1 | (e->oslk ? DPMU_TRCOSLSR_OSLK : 0);
	case DPMU_TRCPDSR: {
		uint64_t v = DPMU_TRCPDSR_POWER | (e->stickypd ? DPMU_TRCPDSR_STICKYPD : 0) |
			     (e->oslk ? DPMU_TRCPDSR_OSLK : 0);
		e->stickypd = false;
		return v;
	}
	case DPMU_TRCCLAIMSET: return 0xF;     /* four claim tags implemented */
	case DPMU_TRCCLAIMCLR: return e->claim;
	case DPMU_TRCDEVAFF0: return (uint32_t)c->mpidr;
	case DPMU_TRCDEVAFF1: return (uint32_t)(c->mpidr >> 32);
	case DPMU_TRCLSR: return TRCLSR_SLI | (e->slk ? DPMU_TRCLSR_SLK : 0);
	case DPMU_TRCAUTHSTATUS: return dpmu_ext_authstatus(c->extauth);
	case DPMU_TRCDEVARCH: return DPMU_TRCDEVARCH_ETMV4_2;
	case DPMU_TRCDEVTYPE: return TRCDEVTYPE_TRACE_PE;
	default: break;
	}
	if (r->offset == DPMU_TRCIDR0_7(0) || r->offset == DPMU_TRCIDR8_13(8))
		return dpmu_etm_idr(&dpmu_etm_default, r->first + index);
	if (base >= DPMU_TRCPIDR4)
		return dpmu_ext_coresight_id(c, 0, base);
	if (r->flags & DPMU_ETM_WO)
		return 0;
	return e->reg[base >> 2];
}

static void etm_write(struct dpmu_core *c, const struct dpmu_etm_reg *r, uint32_t base,
		      uint64_t v)
{
	struct dpmu_etm *e = &c->etm;
	switch (base) {
	case DPMU_TRCOSLAR: e->oslk = v & 1; return;
	case DPMU_TRCCLAIMSET: e->claim |= (uint32_t)v & 0xF; return;
	case DPMU_TRCCLAIMCLR: e->claim &= ~((uint32_t)v & 0xF); return;
	default: break;
	}
	if (r->flags & DPMU_ETM_RO)
		return;
	if ((r->flags & DPMU_ETM_IDLE_ONLY) && enabled(e))
		return;
	bool was = enabled(e);
	e->reg[base >> 2] = v & r->wmask;
	if (base == DPMU_TRCPRGCTLR && enabled(e) != was)
		dpmu_etm_run_enable(c, enabled(e));
}

struct dpmu_access dpmu_etm_sysreg(struct dpmu_core *c, uint32_t enc, bool write, uint64_t *value)
{
	long off = dpmu_etm_sysreg_offset(enc);
	if (off < 0)
		return dpmu_access_notmine();
	unsigned index;
	const struct dpmu_etm_reg *r = dpmu_etm_reg_at((uint32_t)off, &index, NULL);
	if (c->el == 0)
		return dpmu_access_undef();
	if ((write && (r->flags & DPMU_ETM_RO)) ||
	    (!write && (r->flags & DPMU_ETM_WO)))
		return dpmu_access_undef();
	struct dpmu_access a = dpmu_sysreg_trace_traps(c);
	if (a.kind != DPMU_ACCESS_OK)
		return a;
	if (write)
		etm_write(c, r, (uint32_t)off, *value);
	else
		*value = etm_read(c, r, index, (uint32_t)off);
	return dpmu_access_ok();
}

/* The access rule of the frame; `off` is not a management register. */
static int frame_access(const struct dpmu_core *c, uint32_t off, bool secure)
{
	if (off == DPMU_TRCPDSR)
		return 0;                     /* debug power domain */
	if (!c->powered || c->doublelock)
		return DPMU_EIO;
	bool os_regs = off == DPMU_TRCOSLAR || off == DPMU_TRCOSLSR || off == DPMU_TRCPDCR;
	if (c->etm.oslk && !os_regs)
		return DPMU_EIO;
	if (!secure && !c->extauth)
		return DPMU_EIO;
	return 0;
}

static struct dpmu_core *frame_core(struct dpmu_model *m, unsigned core)
{
	return m && core < m->ncores ? &m->cores[core] : NULL;
}

int dpmu_etm_ext_read(struct dpmu_model *m, unsigned core, uint32_t offset, bool secure,
		      uint32_t *value)
{
	struct dpmu_core *c = frame_core(m, core);
	*value = 0;
	if (!c)
		return DPMU_EINVAL;
	unsigned index, word;
	const struct dpmu_etm_reg *r = dpmu_etm_reg_at(offset, &index, &word);
	if (!r || !(r->flags & DPMU_ETM_MGMT)) {
		int rc = frame_access(c, offset, secure);
		if (rc)
			return rc;
	}
	if (!r)
		return 0;                     /* unallocated: RAZ */
	uint64_t v = etm_read(c, r, index, offset - 4 * word);
	*value = (uint32_t)(word ? v >> 32 : v);
	return 0;
}

int dpmu_etm_ext_write(struct dpmu_model *m, unsigned core, uint32_t offset, bool secure,
		       uint32_t value)
{
	struct dpmu_core *c = frame_core(m, core);
	if (!c)
		return DPMU_EINVAL;
	unsigned index, word;
	const struct dpmu_etm_reg *r = dpmu_etm_reg_at(offset, &index, &word);
	if (offset == DPMU_TRCLAR) {
		/* Always writable: the key unlocks, any other value locks. */
		c->etm.slk = value != DPMU_TRCLAR_KEY;
		return 0;
	}
	if (!r || !(r->flags & DPMU_ETM_MGMT)) {
		int rc = frame_access(c, offset, secure);
		if (rc)
			return rc;
	}
	if (!r || c->etm.slk)
		return 0;                     /* unallocated, or SoftwareLockStatus() */
	uint32_t base = offset - 4 * word;
	uint64_t v = r->flags & DPMU_ETM_64 ? dpmu_set_word(c->etm.reg[base >> 2], word, value)
					     : value;
	etm_write(c, r, base, v);
	return 0;
}
