/*
 * The external (memory-mapped, EXT32) view of every PMU in the model: one
 * 4 KiB frame per core PMU and one per DSU cluster PMU (reference section 2,
 * seed 001 sections 2-3). A frame is another path to the very state the
 * system registers reach (struct dpmu_bank); nothing here keeps a copy.
 *
 * Access (Arm ARM, "External debug interface register access permissions"):
 *   IsCorePowered() && !DoubleLockStatus() && !OSLockStatus() &&
 *   AllowExternalPMUAccess()
 * gives access to the registers in the Core power domain; otherwise the
 * access is an error (DPMU_EIO, reads 0) and EDPRSR.SPMAD is set only when
 * AllowExternalPMUAccess() was the reason (the highest-priority failing
 * condition). Secure accesses always pass AllowExternalPMUAccess().
 * Then SoftwareLockStatus() (PMLSR.SLK) makes the frame read-only: writes
 * are ignored without an error.
 *
 * The management registers at 0xF00-0xFFC (PMITCTRL, PMDEVAFF, PMLAR, PMLSR,
 * PMAUTHSTATUS, PMDEVARCH, PMDEVID, PMDEVTYPE, PIDR, CIDR) are in the Debug
 * power domain when FEAT_DoPD is not implemented, as on the Armv8.2 cores
 * modelled: they answer whatever the core's power, locks or authentication,
 * so a debugger can always identify the component and drive the lock.
 */
#include <stddef.h>

#include "dynpmu/ext32.h"
#include "model/model_internal.h"

/* EDPRSR (external debug, offset 0x314 of the debug frame) bits we model. */
#define EDPRSR_PU (1u << 0)
#define EDPRSR_OSLK (1u << 5)
#define EDPRSR_DLK (1u << 6)
#define EDPRSR_EPMAD (1u << 9)
#define EDPRSR_SPMAD (1u << 10)   /* sticky; cleared by a read of EDPRSR */

/* PMCFGR fields (Arm ARM, PMCFGR). */
#define PMCFGR_SIZE_SHIFT 8       /* SIZE = largest counter size - 1 */
#define PMCFGR_CC (1u << 14)      /* dedicated cycle counter */
#define PMCFGR_CCD (1u << 15)     /* PMCR.D implemented */
#define PMCFGR_EX (1u << 16)      /* PMCR.X implemented */
#define PMCFGR_UEN (1u << 19)     /* RAZ: PMUSERENR is not visible externally */
#define PMCFGR_SS (1u << 22)      /* FEAT_PMUv3_SS; see pmcfgr() */

/* PMCR bits visible in this view: [31:11] (N, IDCODE, IMP) are RAZ/WI here
 * and reported by PMCFGR and PMIIDR instead (reference section 2). */
#define EXT_PMCR_MASK 0x7ffu

#define PMLSR_SLI (1u << 0)       /* software lock implemented */
#define PMLSR_SLK (1u << 1)       /* locked; nTT (bit 2) reads 0 */

/* PMAUTHSTATUS field values (DBGAUTHSTATUS encoding). */
#define AUTH_DISABLED 0x2u        /* implemented and disabled */
#define AUTH_ENABLED 0x3u         /* implemented and enabled */

/* JEP106 identity of Arm: bank 5 (continuation code 4), code 0x3B. */
#define JEP106_ARM_CODE 0x3Bu
#define JEP106_ARM_CONT 0x4u
#define PMIIDR_IMPLEMENTER_ARM ((JEP106_ARM_CONT << 8) | JEP106_ARM_CODE) /* 0x43B */


/*
 * What differs between the two kinds of frame, as data. Part numbers are the
 * model's choice (docs/model.md): a core frame takes the MIDR part number of
 * its core so tools can tell an A75 PMU from an A55 one; the cluster frame
 * uses 0x9E0, a number no Arm core part uses.
 */
struct ext_kind {
	const char *name;
	uint32_t evtyper_mask;        /* PMEVTYPER bits this PMU keeps */
	uint32_t ccfiltr_mask;        /* PMCCFILTR bits (0: no filter, RAZ/WI) */
	uint32_t part;                /* 0: from the core's MIDR */
	uint32_t devtype;             /* PMDEVTYPE */
};

static const struct ext_kind ext_kinds[] = {
	[DPMU_FRAME_CORE] = {
		.name = "core",
		/* P U NSK NSU NSH M and a 16-bit evtCount (PMUv3p1 and later). */
		.evtyper_mask = DPMU_EVTYPER_FILTER | DPMU_EVTYPER_EVT,
		.ccfiltr_mask = DPMU_EVTYPER_FILTER,
		.part = 0,
		.devtype = 0x16,      /* performance monitor (6), processor (1) */
	},
	[DPMU_FRAME_CLUSTER] = {
		.name = "cluster",
		/* Cluster events are not attributable to an exception level:
		 * the DSU has no filter bits, only the event number. */
		.evtyper_mask = DPMU_EVTYPER_EVT,
		.ccfiltr_mask = 0,
		.part = 0x9E0,
		.devtype = 0x16,      /* the seed: the same layout as a core frame */
	},
};

#define CIDR0 0x0Du
#define CIDR1 0x90u              /* component class 9: CoreSight */
#define CIDR2 0x05u
#define CIDR3 0xB1u

/* The frame an access is aimed at, resolved once. */
struct frame {
	const struct ext_kind *kind;
	struct dpmu_bank *bank;
	struct dpmu_core *core;       /* core frame */
	struct dpmu_cluster *cl;      /* cluster frame */
	const struct dpmu_evset *implemented;
	bool powered, doublelock, oslock, extauth;
	bool *slk;
	uint32_t *sticky;
};

static int frame_get(struct dpmu_model *m, struct dpmu_frame f, struct frame *fr)
{
	if (!m)
		return DPMU_EINVAL;
	*fr = (struct frame){ 0 };
	if (f.kind == DPMU_FRAME_CORE) {
		if (f.index >= m->ncores)
			return DPMU_EINVAL;
		struct dpmu_core *c = &m->cores[f.index];
		fr->kind = &ext_kinds[DPMU_FRAME_CORE];
		fr->bank = &c->pmu;
		fr->core = c;
		fr->implemented = c->implemented;
		fr->powered = c->powered;
		fr->doublelock = c->doublelock;
		fr->oslock = c->oslock;
		fr->extauth = c->extauth;
		fr->slk = &c->pmlsr_slk;
		fr->sticky = &c->edprsr_sticky;
		return 0;
	}
	if (f.kind == DPMU_FRAME_CLUSTER) {
		if (f.index >= m->nclusters)
			return DPMU_EINVAL;
		struct dpmu_cluster *cl = &m->clusters[f.index];
		fr->kind = &ext_kinds[DPMU_FRAME_CLUSTER];
		fr->bank = &cl->pmu;
		fr->cl = cl;
		fr->implemented = cl->implemented;
		/* The DSU is powered while any core of its cluster is. */
		for (unsigned k = 0; k < cl->ncores; k++)
			fr->powered |= m->cores[cl->first_core + k].powered;
		fr->doublelock = cl->doublelock;
		fr->oslock = cl->oslock;
		fr->extauth = cl->extauth;
		fr->slk = &cl->pmlsr_slk;
		fr->sticky = &cl->edprsr_sticky;
		return 0;
	}
	return DPMU_EINVAL;
}

/* Offsets 0xF00-0xFFC: Debug power domain without FEAT_DoPD. */
static bool in_debug_domain(uint32_t offset)
{
	return offset >= DPMU_EXT_PMITCTRL;
}

/* The access rule for the Core-power-domain registers. */
static int check_access(const struct frame *fr, bool secure)
{
	if (!fr->powered)          /* IsCorePowered() */
		return DPMU_EIO;
	if (fr->doublelock)        /* DoubleLockStatus() */
		return DPMU_EIO;
	if (fr->oslock)            /* OSLockStatus() */
		return DPMU_EIO;
	if (!secure && !fr->extauth) {   /* AllowExternalPMUAccess() */
		*fr->sticky |= EDPRSR_SPMAD;
		return DPMU_EIO;
	}
	return 0;
}

/* After a change to PMCR.E, an enable, an event type or the filter. */
static void refresh(const struct frame *fr)
{
	if (fr->core)
		dpmu_pmu_refresh(fr->core);
	else
		dpmu_clusterpmu_refresh(fr->cl);
}

static uint64_t frame_mpidr(struct dpmu_model *m, const struct frame *fr)
{
	if (fr->core)
		return fr->core->mpidr;
	/* Cluster frame (seed 001 section 3.1): Aff0 = 0x80 (all threads),
	 * Aff1 = 0x80 (all cores of the cluster), Aff2 = the cluster; MT, U,
	 * bit 31 and Aff3 as in the MPIDR_EL1 of the cluster's cores. */
	uint64_t first = m->cores[fr->cl->first_core].mpidr;
	uint64_t keep = (0xffull << 32) | (1ull << 31) | (1ull << 30) | (1ull << 24);
	return (first & keep) | ((uint64_t)(fr->cl->id & 0xff) << 16) | (0x80u << 8) | 0x80u;
}

/* Part number, variant and revision of a component: its core's (MIDR_EL1
 * PartNum, Variant, Revision), or `part` r0p0 without a core. */
static void ident(const struct dpmu_core *c, uint32_t part, uint32_t *partnum,
		  uint32_t *variant, uint32_t *revision)
{
	if (c) {
		uint32_t midr = c->type->midr;
		*partnum = (midr >> 4) & 0xfff;
		*variant = (midr >> 20) & 0xf;
		*revision = midr & 0xf;
	} else {
		*partnum = part;
		*variant = 0;
		*revision = 0;
	}
}

uint32_t dpmu_ext_coresight_id(const struct dpmu_core *c, uint32_t kind_part, uint32_t off)
{
	uint32_t part, variant, revision;
	ident(c, kind_part, &part, &variant, &revision);
	switch (off) {
	case DPMU_EXT_PIDR4: return JEP106_ARM_CONT;  /* SIZE 0: one 4 KiB frame */
	case DPMU_EXT_PIDR(0): return part & 0xff;
	case DPMU_EXT_PIDR(1): return ((part >> 8) & 0xf) | ((JEP106_ARM_CODE & 0xf) << 4);
	case DPMU_EXT_PIDR(2):
		/* DES_1, JEDEC = 1, REVISION = the core's variant (rN). */
		return ((JEP106_ARM_CODE >> 4) & 0x7) | (1u << 3) | (variant << 4);
	case DPMU_EXT_PIDR(3): return revision << 4;  /* REVAND = pN, CMOD 0 */
	case DPMU_EXT_CIDR(0): return CIDR0;
	case DPMU_EXT_CIDR(1): return CIDR1;
	case DPMU_EXT_CIDR(2): return CIDR2;
	case DPMU_EXT_CIDR(3): return CIDR3;
	default: return 0;        /* PIDR5-7 */
	}
}

static uint32_t pmcfgr(const struct frame *fr)
{
	const struct dpmu_bank *b = fr->bank;
	uint32_t v = (b->n & 0xff) | (63u << PMCFGR_SIZE_SHIFT) | PMCFGR_CC;
	if (b->pmcr_rw & DPMU_PMCR_D)
		v |= PMCFGR_CCD;
	if (b->pmcr_rw & DPMU_PMCR_X)
		v |= PMCFGR_EX;
	/* UEN is RAZ (PMUSERENR is not in the external view). SS stays 0:
	 * the snapshot registers here are the seed's IMPLEMENTATION DEFINED
	 * mechanism, which the Arm ARM allows at 0x600-0x7FC and 0xE30-0xE3C
	 * exactly when PMCFGR.SS = 0; FEAT_PMUv3_SS (Armv8.8) has another
	 * programming model and no Armv8.2 core implements it. */
	return v;
}

uint32_t dpmu_ext_authstatus(bool extauth)
{
	/* NSID and SID are 0b00: invasive debug is not implemented by a PMU
	 * or a trace unit. NSNID follows the non-secure authentication
	 * (AllowExternalPMUAccess, ExternalNoninvasiveDebugEnabled); SNID is
	 * enabled: the model has no separate secure signal, and secure
	 * accesses always pass. */
	uint32_t nsnid = extauth ? AUTH_ENABLED : AUTH_DISABLED;
	return (nsnid << 2) | (AUTH_ENABLED << 6);
}

static uint32_t lo32(uint64_t v)
{
	return (uint32_t)v;
}

static uint32_t hi32(uint64_t v)
{
	return (uint32_t)(v >> 32);
}

/* The management (Debug power domain) registers, read. */
static uint32_t read_mgmt(struct dpmu_model *m, const struct frame *fr, uint32_t off)
{
	if (off >= DPMU_EXT_PIDR4)
		return dpmu_ext_coresight_id(fr->core, fr->kind->part, off);
	switch (off) {
	case DPMU_EXT_PMDEVAFF0: return lo32(frame_mpidr(m, fr));
	case DPMU_EXT_PMDEVAFF1: return hi32(frame_mpidr(m, fr));
	case DPMU_EXT_PMLSR: return PMLSR_SLI | (*fr->slk ? PMLSR_SLK : 0);
	case DPMU_EXT_PMAUTHSTATUS: return dpmu_ext_authstatus(fr->extauth);
	case DPMU_EXT_PMDEVARCH: return DPMU_EXT_PMDEVARCH_PMUV3;
	case DPMU_EXT_PMDEVID: return 0;          /* no PC sampling here */
	case DPMU_EXT_PMDEVTYPE: return fr->kind->devtype;
	default: return 0;        /* PMITCTRL (0), PMLAR (write-only), RAZ */
	}
}

/* Counter registers and arrays: 0x000-0x7FC. Returns false when unmapped. */
static bool read_array(const struct frame *fr, uint32_t off, uint32_t *v)
{
	const struct dpmu_bank *b = fr->bank;
	unsigned word = (off >> 2) & 1;
	if (off < 0x100) {                           /* PMEVCNTR<n>, PMCCNTR */
		unsigned i = off / 8;
		uint64_t c = i == DPMU_CC ? b->ccnt : dpmu_bank_read_evcnt(b, i);
		*v = word ? hi32(c) : lo32(c);          /* 32-bit counter: hi 0 */
		return true;
	}
	if (off >= 0x400 && off < 0x480) {           /* PMEVTYPER<n>, PMCCFILTR */
		unsigned i = (off - 0x400) / 4;
		if (i == DPMU_CC)
			*v = b->ccfiltr & fr->kind->ccfiltr_mask;
		else
			*v = i < b->n ? b->evtyper[i] : 0;
		return true;
	}
	if (off >= 0x600 && off < 0x700) {           /* PMEVCNTSVR<n>, PMCCNTSVR */
		unsigned i = (off - 0x600) / 8;
		uint64_t s = i == DPMU_CC ? b->ccsvr : (i < b->n ? b->evsvr[i] : 0);
		*v = word ? hi32(s) : lo32(s);
		return true;
	}
	return false;
}

static uint32_t read_core_domain(const struct frame *fr, uint32_t off)
{
	const struct dpmu_bank *b = fr->bank;
	uint32_t mask = dpmu_bank_mask(b);
	uint32_t v;
	if (read_array(fr, off, &v))
		return v;
	switch (off) {
	case DPMU_EXT_PMCNTENSET:
	case DPMU_EXT_PMCNTENCLR: return b->cnten & mask;
	case DPMU_EXT_PMINTENSET:
	case DPMU_EXT_PMINTENCLR: return b->inten & mask;
	case DPMU_EXT_PMOVSCLR:
	case DPMU_EXT_PMOVSSET: return b->ovs & mask;
	case DPMU_EXT_PMCFGR: return pmcfgr(fr);
	case DPMU_EXT_PMCR: return b->pmcr & EXT_PMCR_MASK;
	case DPMU_EXT_PMIIDR: {
		uint32_t part, variant, revision;
		ident(fr->core, fr->kind->part, &part, &variant, &revision);
		return (part << 20) | (variant << 16) | (revision << 12) | PMIIDR_IMPLEMENTER_ARM;
	}
	case DPMU_EXT_PMCEID0: return dpmu_evset_word32(fr->implemented, 0x0000);
	case DPMU_EXT_PMCEID1: return dpmu_evset_word32(fr->implemented, 0x0020);
	case DPMU_EXT_PMCEID2: return dpmu_evset_word32(fr->implemented, 0x4000);
	case DPMU_EXT_PMCEID3: return dpmu_evset_word32(fr->implemented, 0x4020);
	case DPMU_EXT_PMSSCR: return b->snap_busy ? DPMU_EXT_PMSSCR_SS : 0;
	case DPMU_EXT_PMSSRR: return b->ssrr;
	default: return 0;        /* PMSWINC (write-only), unallocated: RAZ */
	}
}

static bool write_array(const struct frame *fr, uint32_t off, uint32_t v)
{
	struct dpmu_bank *b = fr->bank;
	unsigned word = (off >> 2) & 1;
	if (off < 0x100) {
		unsigned i = off / 8;
		if (i == DPMU_CC)
			b->ccnt = dpmu_set_word(b->ccnt, word, v);
		else if (i < b->n && (b->ev64 || word == 0))
			dpmu_bank_write_evcnt(b, i, dpmu_set_word(dpmu_bank_read_evcnt(b, i), word, v));
		return true;
	}
	if (off >= 0x400 && off < 0x480) {
		unsigned i = (off - 0x400) / 4;
		if (i == DPMU_CC)
			b->ccfiltr = v & fr->kind->ccfiltr_mask;
		else if (i < b->n)
			dpmu_bank_write_evtyper(b, i, v & fr->kind->evtyper_mask);
		else
			return true;
		refresh(fr);
		return true;
	}
	/* The snapshot registers are read-only; 0x600-0x7FC ignores writes. */
	return off >= 0x600 && off < 0x800;
}

static void write_core_domain(struct dpmu_model *m, const struct frame *fr, uint32_t off,
			      uint32_t v)
{
	struct dpmu_bank *b = fr->bank;
	uint32_t mask = dpmu_bank_mask(b);
	if (write_array(fr, off, v))
		return;
	switch (off) {
	case DPMU_EXT_PMCNTENSET: b->cnten |= v & mask; refresh(fr); break;
	case DPMU_EXT_PMCNTENCLR: b->cnten &= ~(v & mask); refresh(fr); break;
	case DPMU_EXT_PMINTENSET: b->inten |= v & mask; dpmu_bank_irq_changed(b); break;
	case DPMU_EXT_PMINTENCLR: b->inten &= ~(v & mask); dpmu_bank_irq_changed(b); break;
	case DPMU_EXT_PMOVSSET: b->ovs |= v & mask; dpmu_bank_irq_changed(b); break;
	case DPMU_EXT_PMOVSCLR: b->ovs &= ~(v & mask); dpmu_bank_irq_changed(b); break;
	case DPMU_EXT_PMSWINC: dpmu_bank_swinc(b, v & mask & ~(1u << DPMU_CC)); break;
	case DPMU_EXT_PMCR:
		dpmu_bank_write_pmcr(b, v & EXT_PMCR_MASK);
		refresh(fr);
		break;
	case DPMU_EXT_PMSSCR:
		/* Seed 001 section 2.2: writing SS = 1 captures every counter;
		 * SS reads 1 until the capture completes. A request while one
		 * is in progress is ignored (docs/model.md). */
		if ((v & DPMU_EXT_PMSSCR_SS) && !b->snap_busy)
			dpmu_bank_snapshot(b, m->profile.snapshot_latency);
		break;
	case DPMU_EXT_PMSSRR:
		/* Seed 001 section 2.3: RP<n> for the implemented event
		 * counters; every other bit RAZ/WI. */
		b->ssrr = v & mask & ~(1u << DPMU_CC);
		break;
	default: break;           /* read-only or unallocated: WI */
	}
}

static int check_offset(uint32_t offset)
{
	return (offset & 3) || offset >= DPMU_EXT_FRAME_SIZE ? DPMU_EINVAL : 0;
}

int dpmu_model_ext_read(struct dpmu_model *m, struct dpmu_frame f, uint32_t offset, bool secure,
			uint32_t *value)
{
	struct frame fr;
	if (value)
		*value = 0;
	if (!value || check_offset(offset))
		return DPMU_EINVAL;
	if (f.kind == DPMU_FRAME_ETM)
		return dpmu_etm_ext_read(m, f.index, offset, secure, value);
	if (frame_get(m, f, &fr))
		return DPMU_EINVAL;
	if (in_debug_domain(offset)) {
		*value = read_mgmt(m, &fr, offset);
		return 0;
	}
	int rc = check_access(&fr, secure);
	if (rc)
		return rc;
	*value = read_core_domain(&fr, offset);
	return 0;
}

int dpmu_model_ext_write(struct dpmu_model *m, struct dpmu_frame f, uint32_t offset, bool secure,
			 uint32_t value)
{
	struct frame fr;
	if (check_offset(offset))
		return DPMU_EINVAL;
	if (f.kind == DPMU_FRAME_ETM)
		return dpmu_etm_ext_write(m, f.index, offset, secure, value);
	if (frame_get(m, f, &fr))
		return DPMU_EINVAL;
	if (offset == DPMU_EXT_PMLAR) {
		/* Always writable, whatever the lock: the key unlocks, any
		 * other value locks (Arm ARM, PMLAR). */
		*fr.slk = value != DPMU_EXT_PMLAR_KEY;
		return 0;
	}
	if (in_debug_domain(offset))
		return 0;         /* read-only identification: WI */
	int rc = check_access(&fr, secure);
	if (rc)
		return rc;
	if (*fr.slk)
		return 0;         /* SoftwareLockStatus(): ignored, no error */
	write_core_domain(m, &fr, offset, value);
	return 0;
}

uint32_t dpmu_model_edprsr_read(struct dpmu_model *m, struct dpmu_frame f)
{
	struct frame fr;
	if (frame_get(m, f, &fr))
		return 0;
	uint32_t v = *fr.sticky & EDPRSR_SPMAD;
	if (fr.powered)
		v |= EDPRSR_PU;
	if (fr.oslock)
		v |= EDPRSR_OSLK;
	if (fr.doublelock)
		v |= EDPRSR_DLK;
	if (!fr.extauth)
		v |= EDPRSR_EPMAD;
	/* SPMAD is cleared by a read of EDPRSR (Arm ARM, EDPRSR). */
	*fr.sticky &= ~EDPRSR_SPMAD;
	return v;
}
