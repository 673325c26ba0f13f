/*
 * DSU cluster PMU system registers (reference section 3; DSU TRM; the DSU-120
 * TRM 107721 "Accessibility" pseudocode).
 *
 * One bank per cluster: every core of the cluster reaches the same counters
 * through its own MRS/MSR, and the counters see the whole cluster. The
 * registers are _EL1 registers: UNDEFINED at EL0. Reads are allowed at EL1
 * and above; writes from EL1 trap to EL2 when ACTLR_EL2.CLUSTERPMUEN is 0
 * (if EL2 is enabled, that is Non-secure) and to EL3 when
 * ACTLR_EL3.CLUSTERPMUEN is 0; writes from EL2 trap to EL3 likewise
 * (Cortex-A75/A76 TRM ACTLR_EL2/EL3: "CLUSTERPM* registers are not
 * write-accessible from a lower Exception level"). CLUSTERPMMDCR is the DSU
 * TRM's CLUSTERPMMDCR_EL3: EL3 only.
 */
#include <stddef.h>

#include "model/model_internal.h"

/* ACTLR_EL2/EL3.CLUSTERPMUEN (Cortex-A75/A55/A76 TRM, ACTLR_ELx bit 12). */
#define DPMU_CLUSTERPMU_ACTLR_EN (1ull << 12)
/* CLUSTERPMMDCR_EL3.SPME: event counting allowed in Secure state. */
#define DPMU_CLUSTERPMU_MDCR_SPME (1u << 0)
/* CLUSTERPMSELR.SEL [4:0]. */
#define DPMU_CLUSTERPMU_SEL_MASK 0x1fu

enum clusterpmu_reg {
	CL_PMCR,
	CL_CNTENSET,
	CL_CNTENCLR,
	CL_OVSSET,
	CL_OVSCLR,
	CL_SELR,
	CL_INTENSET,
	CL_INTENCLR,
	CL_CCNTR,
	CL_XEVTYPER,
	CL_XEVCNTR,
	CL_MDCR,
	CL_CEID0,
	CL_CEID1,
};

/* The 14 registers: encoding 3,0,15,CRm,op2 (reference section 3). */
static const struct {
	uint32_t enc;
	enum clusterpmu_reg reg;
	bool el3_only;      /* CLUSTERPMMDCR_EL3 */
} clusterpmu_regs[] = {
	{ DPMU_SYSREG(3, 0, 15, 5, 0), CL_PMCR, false },
	{ DPMU_SYSREG(3, 0, 15, 5, 1), CL_CNTENSET, false },
	{ DPMU_SYSREG(3, 0, 15, 5, 2), CL_CNTENCLR, false },
	{ DPMU_SYSREG(3, 0, 15, 5, 3), CL_OVSSET, false },
	{ DPMU_SYSREG(3, 0, 15, 5, 4), CL_OVSCLR, false },
	{ DPMU_SYSREG(3, 0, 15, 5, 5), CL_SELR, false },
	{ DPMU_SYSREG(3, 0, 15, 5, 6), CL_INTENSET, false },
	{ DPMU_SYSREG(3, 0, 15, 5, 7), CL_INTENCLR, false },
	{ DPMU_SYSREG(3, 0, 15, 6, 0), CL_CCNTR, false },
	{ DPMU_SYSREG(3, 0, 15, 6, 1), CL_XEVTYPER, false },
	{ DPMU_SYSREG(3, 0, 15, 6, 2), CL_XEVCNTR, false },
	{ DPMU_SYSREG(3, 0, 15, 6, 3), CL_MDCR, true },
	{ DPMU_SYSREG(3, 0, 15, 6, 4), CL_CEID0, false },
	{ DPMU_SYSREG(3, 0, 15, 6, 5), CL_CEID1, false },
};

/* CLUSTERPMCR read-only identification (reference section 3: IMP 0x41).
 * The DSU TRM leaves IDCODE to the implementation; the model reports 0. */
#define DPMU_CLUSTERPMU_IMP DPMU_IMP_ARM
#define DPMU_CLUSTERPMU_IDCODE 0x00u

void dpmu_clusterpmu_reset(struct dpmu_cluster *cl)
{
	dpmu_bank_reset(&cl->pmu);
	/* Only E is stored: the DSU has no clock divider (D), export (X),
	 * DP or LC (its cycle counter is always 64-bit). */
	cl->pmu.pmcr_rw = DPMU_PMCR_E;
	cl->pmmdcr = 0; /* SPME resets to 0 (DSU TRM) */
	cl->live_gen++; /* the reset bank has forgotten what counted before it */
	dpmu_clusterpmu_refresh(cl);
}

void dpmu_clusterpmu_refresh(struct dpmu_cluster *cl)
{
	struct dpmu_bank *b = &cl->pmu;
	/* No exception-level filtering: a counter may count when its event is
	 * one the profile implements; the cycle counter always may. */
	uint32_t allowed = 1u << DPMU_CC;
	for (unsigned i = 0; i < b->n; i++)
		if (dpmu_evset_has(cl->implemented, b->ev[i]))
			allowed |= 1u << i;
	b->allowed = allowed;
	if (dpmu_bank_update_active(b))
		cl->live_gen++;
}

static uint64_t read_reg(const struct dpmu_cluster *cl, enum clusterpmu_reg r)
{
	const struct dpmu_bank *b = &cl->pmu;
	unsigned sel = b->selr;
	switch (r) {
	case CL_PMCR:
		return (b->pmcr & DPMU_PMCR_E) | ((uint64_t)b->n << DPMU_PMCR_N_SHIFT) |
		       ((uint64_t)DPMU_CLUSTERPMU_IDCODE << DPMU_PMCR_IDCODE_SHIFT) |
		       ((uint64_t)DPMU_CLUSTERPMU_IMP << DPMU_PMCR_IMP_SHIFT);
	case CL_CNTENSET:
	case CL_CNTENCLR:
		return b->cnten;
	case CL_OVSSET:
	case CL_OVSCLR:
		return b->ovs;
	case CL_SELR:
		return sel;
	case CL_INTENSET:
	case CL_INTENCLR:
		return b->inten;
	case CL_CCNTR:
		return b->ccnt;
	case CL_XEVTYPER:
		/* Selecting 31 or an unimplemented counter: RAZ/WI (the DSU
		 * cycle counter has no filter register). */
		return sel < b->n ? b->evtyper[sel] : 0;
	case CL_XEVCNTR:
		return sel < b->n ? dpmu_bank_read_evcnt(b, sel) : 0;
	case CL_MDCR:
		return cl->pmmdcr;
	case CL_CEID0:
		return dpmu_evset_ceid(cl->implemented, 0x00); /* the core PMCEID layout */
	case CL_CEID1:
		return dpmu_evset_ceid(cl->implemented, 0x20);
	}
	return 0;
}

static void write_reg(struct dpmu_cluster *cl, enum clusterpmu_reg r, uint64_t v)
{
	struct dpmu_bank *b = &cl->pmu;
	uint32_t mask = dpmu_bank_mask(b);
	uint32_t bits = (uint32_t)v & mask; /* unimplemented counters' bits RAZ/WI */
	unsigned sel = b->selr;
	switch (r) {
	case CL_PMCR:
		/* E stored; P and C reset the counters and read as 0. */
		dpmu_bank_write_pmcr(b, (uint32_t)v & (DPMU_PMCR_E | DPMU_PMCR_P | DPMU_PMCR_C));
		dpmu_clusterpmu_refresh(cl);
		return;
	case CL_CNTENSET:
		b->cnten |= bits;
		dpmu_clusterpmu_refresh(cl);
		return;
	case CL_CNTENCLR:
		b->cnten &= ~bits;
		dpmu_clusterpmu_refresh(cl);
		return;
	case CL_OVSSET:
		b->ovs |= bits;
		dpmu_bank_irq_changed(b);
		return;
	case CL_OVSCLR:
		b->ovs &= ~bits;
		dpmu_bank_irq_changed(b);
		return;
	case CL_SELR:
		b->selr = (uint32_t)v & DPMU_CLUSTERPMU_SEL_MASK;
		return;
	case CL_INTENSET:
		b->inten |= bits;
		dpmu_bank_irq_changed(b);
		return;
	case CL_INTENCLR:
		b->inten &= ~bits;
		dpmu_bank_irq_changed(b);
		return;
	case CL_CCNTR:
		b->ccnt = v;
		return;
	case CL_XEVTYPER:
		if (sel < b->n) {
			/* evtCount only: 16 bits, so the DSU-120 numbering's
			 * 0x4000-range events fit; no filter bits. */
			dpmu_bank_write_evtyper(b, sel, (uint32_t)v & DPMU_EVTYPER_EVT);
			dpmu_clusterpmu_refresh(cl);
		}
		return;
	case CL_XEVCNTR:
		if (sel < b->n)
			dpmu_bank_write_evcnt(b, sel, v);
		return;
	case CL_MDCR:
		cl->pmmdcr = (uint32_t)v & DPMU_CLUSTERPMU_MDCR_SPME;
		return;
	case CL_CEID0:
	case CL_CEID1:
		return; /* read-only identification: writes ignored */
	}
}

struct dpmu_access dpmu_clusterpmu_sysreg(struct dpmu_model *m, struct dpmu_core *c,
					  uint32_t enc, bool write, uint64_t *value)
{
	size_t k;
	for (k = 0; k < sizeof clusterpmu_regs / sizeof clusterpmu_regs[0]; k++)
		if (clusterpmu_regs[k].enc == enc)
			break;
	if (k == sizeof clusterpmu_regs / sizeof clusterpmu_regs[0])
		return dpmu_access_notmine();

	/* _EL1 registers: UNDEFINED at EL0; CLUSTERPMMDCR_EL3 below EL3. */
	if (c->el == 0 || (clusterpmu_regs[k].el3_only && c->el < 3))
		return dpmu_access_undef();

	/* Write traps (DSU-120 TRM MSR pseudocode; EL2Enabled() is
	 * Non-secure here: these cores have no Secure EL2). */
	if (write && c->el == 1 && !dpmu_core_secure(c) &&
	    !(c->actlr_el2 & DPMU_CLUSTERPMU_ACTLR_EN))
		return dpmu_access_trap(2);
	if (write && c->el < 3 && !(c->actlr_el3 & DPMU_CLUSTERPMU_ACTLR_EN))
		return dpmu_access_trap(3);

	struct dpmu_cluster *cl = &m->clusters[c->cluster];
	if (write)
		write_reg(cl, clusterpmu_regs[k].reg, *value);
	else
		*value = read_reg(cl, clusterpmu_regs[k].reg);
	return dpmu_access_ok();
}
