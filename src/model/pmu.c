/*
 * The core PMU (PMUv3) as system registers: PMCR_EL0 and the enable,
 * overflow, interrupt and selection registers, the counters and their
 * filters, PMCEID, and the EL0 access control of PMUSERENR_EL0 (reference
 * section 1; Arm ARM D7 "The Performance Monitors Extension" and the
 * register accessibility pseudocode of D17.5).
 *
 * Counting, overflow, CHAIN and the PMCR.D divider live in bank.c; this file
 * decides who may reach which register and keeps bank->allowed in step with
 * the event types, filters and the core's exception level.
 */
#include "model/model_internal.h"

/* PMUSERENR_EL0 fields: which EL0 accesses each bit opens (Arm ARM
 * PMUSERENR_EL0; the register pseudocode checks them as noted per row). */
#define PMUSERENR_EN (1u << 0) /* every PMU register that EL0 can reach */
#define PMUSERENR_SW (1u << 1) /* PMSWINC_EL0 writes */
#define PMUSERENR_CR (1u << 2) /* PMCCNTR_EL0 reads */
#define PMUSERENR_ER (1u << 3) /* PMEVCNTR<n>/PMXEVCNTR reads, PMSELR reads and writes */
#define PMUSERENR_RW (PMUSERENR_EN | PMUSERENR_SW | PMUSERENR_CR | PMUSERENR_ER)

#define PMSELR_SEL 0x1fu
#define PMSELR_SEL_CC 31u      /* PMXEVTYPER reaches PMCCFILTR_EL0 */

/* Writable bits of PMEVTYPER<n>_EL0 (PMCCFILTR_EL0: the filter alone) */
#define EVTYPER_RW (DPMU_EVTYPER_FILTER | DPMU_EVTYPER_EVT)

enum pmu_reg {
	R_PMCR,
	R_PMCNTENSET,
	R_PMCNTENCLR,
	R_PMOVSCLR,
	R_PMOVSSET,
	R_PMSWINC,
	R_PMSELR,
	R_PMCEID0,
	R_PMCEID1,
	R_PMCCNTR,
	R_PMXEVTYPER,
	R_PMXEVCNTR,
	R_PMUSERENR,
	R_PMINTENSET,
	R_PMINTENCLR,
	R_PMMIR,
	R_PMCCFILTR,
	R_PMEVCNTR,     /* PMEVCNTR<n>_EL0, n from the encoding */
	R_PMEVTYPER,    /* PMEVTYPER<n>_EL0 */
};

/* Access flags of a register row. */
#define F_RO 0x01       /* no MSR form: MSR is UNDEFINED */
#define F_WO 0x02       /* no MRS form: MRS is UNDEFINED */
#define F_EL1 0x04      /* _EL1 register: UNDEFINED at EL0 */
#define F_EL0_RO 0x08   /* MSR at EL0 UNDEFINED (PMUSERENR_EL0 itself) */
#define F_TPMCR 0x10    /* MDCR_EL2.TPMCR also traps EL0/EL1 accesses */
#define F_P4 0x20       /* needs PMUv3p4: UNDEFINED without it */

/*
 * One row per register: its encoding (reference section 1), how an EL0
 * access is opened by PMUSERENR_EL0 (el0_rd / el0_wr: any of these bits
 * lets EL0 through; 0 = no PMUSERENR check), and the flags above. The EL0
 * masks follow the Arm ARM accessibility pseudocode of each register.
 */
struct pmu_regdesc {
	uint32_t enc;
	enum pmu_reg reg;
	uint8_t flags;
	uint8_t el0_rd, el0_wr;
};

#define EN PMUSERENR_EN
static const struct pmu_regdesc pmu_regs[] = {
	{ DPMU_SYSREG(3, 3, 9, 12, 0), R_PMCR, F_TPMCR, EN, EN },
	{ DPMU_SYSREG(3, 3, 9, 12, 1), R_PMCNTENSET, 0, EN, EN },
	{ DPMU_SYSREG(3, 3, 9, 12, 2), R_PMCNTENCLR, 0, EN, EN },
	{ DPMU_SYSREG(3, 3, 9, 12, 3), R_PMOVSCLR, 0, EN, EN },
	{ DPMU_SYSREG(3, 3, 9, 12, 4), R_PMSWINC, F_WO, 0, EN | PMUSERENR_SW },
	{ DPMU_SYSREG(3, 3, 9, 12, 5), R_PMSELR, 0, EN | PMUSERENR_ER, EN | PMUSERENR_ER },
	{ DPMU_SYSREG(3, 3, 9, 12, 6), R_PMCEID0, F_RO, EN, 0 },
	{ DPMU_SYSREG(3, 3, 9, 12, 7), R_PMCEID1, F_RO, EN, 0 },
	{ DPMU_SYSREG(3, 3, 9, 13, 0), R_PMCCNTR, 0, EN | PMUSERENR_CR, EN },
	{ DPMU_SYSREG(3, 3, 9, 13, 1), R_PMXEVTYPER, 0, EN, EN },
	{ DPMU_SYSREG(3, 3, 9, 13, 2), R_PMXEVCNTR, 0, EN | PMUSERENR_ER, EN },
	/* PMUSERENR_EL0: EL0 may always read it, never write it. */
	{ DPMU_SYSREG(3, 3, 9, 14, 0), R_PMUSERENR, F_EL0_RO, 0, 0 },
	{ DPMU_SYSREG(3, 3, 9, 14, 3), R_PMOVSSET, 0, EN, EN },
	{ DPMU_SYSREG(3, 0, 9, 14, 1), R_PMINTENSET, F_EL1, 0, 0 },
	{ DPMU_SYSREG(3, 0, 9, 14, 2), R_PMINTENCLR, F_EL1, 0, 0 },
	{ DPMU_SYSREG(3, 0, 9, 14, 6), R_PMMIR, F_EL1 | F_RO | F_P4, 0, 0 },
	{ DPMU_SYSREG(3, 3, 14, 15, 7), R_PMCCFILTR, 0, EN, EN },
};
static const struct pmu_regdesc pmu_evcntr = { 0, R_PMEVCNTR, 0, EN | PMUSERENR_ER, EN };
static const struct pmu_regdesc pmu_evtyper = { 0, R_PMEVTYPER, 0, EN, EN };
#undef EN

/* Find the row of an encoding; *n gets the counter number of
 * PMEVCNTR<n>/PMEVTYPER<n> (3,3,14,8+(n>>3),n&7 / 3,3,14,12+(n>>3),n&7). */
static const struct pmu_regdesc *pmu_lookup(uint32_t enc, unsigned *n)
{
	for (size_t i = 0; i < sizeof pmu_regs / sizeof pmu_regs[0]; i++)
		if (pmu_regs[i].enc == enc)
			return &pmu_regs[i];
	if (DPMU_SYSREG_OP0(enc) == 3 && DPMU_SYSREG_OP1(enc) == 3 && DPMU_SYSREG_CRN(enc) == 14) {
		unsigned crm = DPMU_SYSREG_CRM(enc);
		*n = ((crm & 3u) << 3) | DPMU_SYSREG_OP2(enc);
		if (crm >= 8 && crm <= 11)
			return &pmu_evcntr;
		if (crm >= 12 && crm <= 15) /* 14,15,7 is PMCCFILTR, found above */
			return &pmu_evtyper;
	}
	return NULL;
}

/*
 * Who may make this access, in the Arm ARM pseudocode's order: encodings
 * that do not exist for this core (n >= PMCR.N, PMUv3p4 registers) are
 * UNDEFINED first; at EL0 the PMUSERENR_EL0 check traps to EL1; then
 * MDCR_EL2.TPM/TPMCR (EL0/EL1 when EL2 is enabled) to EL2, then MDCR_EL3.TPM
 * (EL0-EL2) to EL3. HCR_EL2.TGE is not modelled (0), so EL0 traps go to EL1.
 */
static struct dpmu_access pmu_check(const struct dpmu_core *c, const struct pmu_regdesc *r,
				    unsigned n, bool write)
{
	if ((r->reg == R_PMEVCNTR || r->reg == R_PMEVTYPER) && n >= c->pmu.n)
		return dpmu_access_undef();
	if ((r->flags & F_P4) && !c->type->pmuv3p5) /* PMUv3p5 implies PMUv3p4 */
		return dpmu_access_undef();
	if ((write && (r->flags & F_RO)) || (!write && (r->flags & F_WO)))
		return dpmu_access_undef();
	if (c->el == 0) {
		if ((r->flags & F_EL1) || (write && (r->flags & F_EL0_RO)))
			return dpmu_access_undef();
		uint32_t open = write ? r->el0_wr : r->el0_rd;
		if (open && !(c->pmuserenr & open))
			return dpmu_access_trap(1);
	}
	return dpmu_sysreg_pmu_traps(c, (r->flags & F_TPMCR) != 0);
}

/* Does a PMEVTYPER/PMCCFILTR filter let the counter count at this EL and
 * security state? Reference section 1 (Arm ARM PMUCountingAllowed /
 * AArch64.CountPMUEvents): EL0 is filtered if (secure ? U : U != NSU), EL1
 * if (secure ? P : P != NSK), EL2 unless NSH, EL3 if M != P. */
static bool pmu_filter_counts(uint32_t f, unsigned el, bool secure)
{
	bool p = f & DPMU_EVTYPER_P, u = f & DPMU_EVTYPER_U;
	bool nsk = f & DPMU_EVTYPER_NSK, nsu = f & DPMU_EVTYPER_NSU;
	bool nsh = f & DPMU_EVTYPER_NSH, m = f & DPMU_EVTYPER_M;

	switch (el) {
	case 0:
		return !(secure ? u : u != nsu);
	case 1:
		return !(secure ? p : p != nsk);
	case 2:
		return nsh;
	default:
		return m == p;
	}
}

void dpmu_pmu_refresh(struct dpmu_core *c)
{
	struct dpmu_bank *b = &c->pmu;
	bool secure = dpmu_core_secure(c);
	uint32_t allowed = 0;

	/* A counter programmed with an event the core does not implement never
	 * counts, but its registers stay readable and writable (reference
	 * section 1 "Counting and overflow"). */
	for (unsigned i = 0; i < b->n; i++)
		if (dpmu_evset_has(c->implemented, b->ev[i]) &&
		    pmu_filter_counts(b->evtyper[i], c->el, secure))
			allowed |= 1u << i;
	c->cc_allowed = pmu_filter_counts(b->ccfiltr, c->el, secure);
	if (c->cc_allowed)
		allowed |= 1u << DPMU_CC;
	b->allowed = allowed;
	if (dpmu_bank_update_active(b))
		c->live_gen++;
}

void dpmu_pmu_reset(struct dpmu_core *c)
{
	/* Every PMU register with an UNKNOWN reset value reads 0 after a Cold
	 * reset (docs/model.md); PMUSERENR_EL0 resets to 0. PMCR.N, IDCODE and
	 * IMP are not state: they come from the core type on every read. */
	dpmu_bank_reset(&c->pmu);
	c->pmuserenr = 0;
	/* The reset bank has forgotten what counted before it. */
	c->live_gen++;
	dpmu_pmu_refresh(c);
}

static uint64_t pmcr_read(const struct dpmu_core *c)
{
	const struct dpmu_bank *b = &c->pmu;
	return (uint64_t)b->pmcr | (uint64_t)b->n << DPMU_PMCR_N_SHIFT |
	       (uint64_t)c->type->pmcr_idcode << DPMU_PMCR_IDCODE_SHIFT |
	       (uint64_t)DPMU_IMP_ARM << DPMU_PMCR_IMP_SHIFT;
}

static void pmu_read(struct dpmu_core *c, const struct pmu_regdesc *r, unsigned n,
		     uint64_t *value)
{
	struct dpmu_bank *b = &c->pmu;
	unsigned sel = b->selr;

	switch (r->reg) {
	case R_PMCR:
		*value = pmcr_read(c);
		break;
	case R_PMCNTENSET:
	case R_PMCNTENCLR:
		*value = b->cnten;
		break;
	case R_PMOVSSET:
	case R_PMOVSCLR:
		*value = b->ovs;
		break;
	case R_PMINTENSET:
	case R_PMINTENCLR:
		*value = b->inten;
		break;
	case R_PMSELR:
		*value = sel;
		break;
	case R_PMCEID0:
		*value = dpmu_evset_ceid(c->implemented, 0x00);
		break;
	case R_PMCEID1:
		*value = dpmu_evset_ceid(c->implemented, 0x20);
		break;
	case R_PMCCNTR:
		*value = b->ccnt;
		break;
	case R_PMXEVTYPER:
		/* SEL = 31 reaches PMCCFILTR; SEL >= N otherwise RAZ/WI
		 * (reference section 1; a CONSTRAINED UNPREDICTABLE choice). */
		if (sel == PMSELR_SEL_CC)
			*value = b->ccfiltr;
		else
			*value = sel < b->n ? b->evtyper[sel] : 0;
		break;
	case R_PMXEVCNTR:
		/* SEL = 31 or SEL >= N: RAZ/WI (reference section 1). */
		*value = sel < b->n ? dpmu_bank_read_evcnt(b, sel) : 0;
		break;
	case R_PMUSERENR:
		*value = c->pmuserenr;
		break;
	case R_PMMIR:
		*value = 0; /* SLOTS etc. not described by the profile: RAZ */
		break;
	case R_PMCCFILTR:
		*value = b->ccfiltr;
		break;
	case R_PMEVCNTR:
		*value = dpmu_bank_read_evcnt(b, n);
		break;
	case R_PMEVTYPER:
		*value = b->evtyper[n];
		break;
	case R_PMSWINC:
		*value = 0; /* not reached: write-only, MRS is UNDEFINED */
		break;
	}
}

static void write_evtyper(struct dpmu_core *c, unsigned i, uint64_t v)
{
	dpmu_bank_write_evtyper(&c->pmu, i, (uint32_t)v & EVTYPER_RW);
	dpmu_pmu_refresh(c);
}

static void write_ccfiltr(struct dpmu_core *c, uint64_t v)
{
	c->pmu.ccfiltr = (uint32_t)v & DPMU_EVTYPER_FILTER;
	dpmu_pmu_refresh(c);
}

static void pmu_write(struct dpmu_core *c, const struct pmu_regdesc *r, unsigned n, uint64_t v)
{
	struct dpmu_bank *b = &c->pmu;
	uint32_t mask = dpmu_bank_mask(b); /* unimplemented counters' bits RAZ/WI */
	unsigned sel = b->selr;

	switch (r->reg) {
	case R_PMCR:
		/* P and C reset the counters and read 0; N, IDCODE, IMP are
		 * read-only; LP is stored only on PMUv3p5 (bank pmcr_rw). */
		dpmu_bank_write_pmcr(b, (uint32_t)v);
		dpmu_pmu_refresh(c);
		break;
	case R_PMCNTENSET:
		b->cnten |= (uint32_t)v & mask;
		dpmu_pmu_refresh(c);
		break;
	case R_PMCNTENCLR:
		b->cnten &= ~((uint32_t)v & mask);
		dpmu_pmu_refresh(c);
		break;
	case R_PMOVSSET:
		b->ovs |= (uint32_t)v & mask;
		dpmu_bank_irq_changed(b);
		break;
	case R_PMOVSCLR:
		b->ovs &= ~((uint32_t)v & mask);
		dpmu_bank_irq_changed(b);
		break;
	case R_PMINTENSET:
		b->inten |= (uint32_t)v & mask;
		dpmu_bank_irq_changed(b);
		break;
	case R_PMINTENCLR:
		b->inten &= ~((uint32_t)v & mask);
		dpmu_bank_irq_changed(b);
		break;
	case R_PMSWINC:
		/* Bits [30:0]: event counters only (bit 31 is RES0). */
		dpmu_bank_swinc(b, (uint32_t)v & mask & ~(1u << DPMU_CC));
		break;
	case R_PMSELR:
		b->selr = (uint32_t)v & PMSELR_SEL;
		break;
	case R_PMCCNTR:
		b->ccnt = v;
		break;
	case R_PMXEVTYPER:
		if (sel == PMSELR_SEL_CC)
			write_ccfiltr(c, v);
		else if (sel < b->n)
			write_evtyper(c, sel, v);
		break;
	case R_PMXEVCNTR:
		if (sel < b->n)
			dpmu_bank_write_evcnt(b, sel, v);
		break;
	case R_PMUSERENR:
		c->pmuserenr = (uint32_t)v & PMUSERENR_RW;
		break;
	case R_PMCCFILTR:
		write_ccfiltr(c, v);
		break;
	case R_PMEVCNTR:
		/* 32-bit counters keep bits [31:0]; 64-bit with PMUv3p5. */
		dpmu_bank_write_evcnt(b, n, v);
		break;
	case R_PMEVTYPER:
		write_evtyper(c, n, v);
		break;
	case R_PMCEID0:
	case R_PMCEID1:
	case R_PMMIR:
		break; /* not reached: read-only, MSR is UNDEFINED */
	}
}

struct dpmu_access dpmu_pmu_sysreg(struct dpmu_model *m, struct dpmu_core *c, uint32_t enc,
				   bool write, uint64_t *value)
{
	(void)m;
	unsigned n = 0;
	const struct pmu_regdesc *r = pmu_lookup(enc, &n);
	if (!r)
		return dpmu_access_notmine();
	struct dpmu_access a = pmu_check(c, r, n, write);
	if (a.kind != DPMU_ACCESS_OK)
		return a;
	if (write)
		pmu_write(c, r, n, *value);
	else
		pmu_read(c, r, n, value);
	return a;
}
