/*
 * MRS/MSR dispatch for a core, and the EL2/EL3 controls of the monitors:
 * MDCR_EL2/MDCR_EL3 (PMU traps), CPTR_EL2/CPTR_EL3 (AMU traps), ACTLR_EL2/
 * ACTLR_EL3 (DynamIQ CLUSTERPMUEN), and the identification registers
 * MIDR_EL1 / MPIDR_EL1.
 *
 * An access is offered to the core PMU, then the AMU, the cluster PMU and
 * the trace unit register files; what none of them claims and this file does not
 * implement is UNDEFINED, as an unallocated encoding is.
 */
#include <stddef.h>

#include "model/model_internal.h"

/* MDCR_EL2 / MDCR_EL3 (Arm ARM D17.3): TPM traps PMU accesses, TPMCR (EL2
 * only) traps PMCR_EL0 accesses, HPMN [4:0] counters reserved for EL0/EL1. */
#define MDCR_HPMN 0x1full
#define MDCR_TPMCR (1ull << 5)
#define MDCR_TPM (1ull << 6)
/* CPTR_EL2 / CPTR_EL3: TAM traps Activity Monitor accesses. */
#define CPTR_TAM (1ull << 30)
/* CPTR_EL2 (E2H = 0) / CPTR_EL3: TTA traps trace unit System registers. */
#define CPTR_TTA (1ull << 20)
/* CPTR_EL2 with HCR_EL2.E2H = 0: bits [13:12], [9:0] RES1 (bit 8 TZ is RES1
 * without SVE, which Armv8.2 cores of this model do not have). */
#define CPTR_EL2_RES1 0x33ffull
/* ACTLR_EL2 / ACTLR_EL3 bit 12 (DynamIQ cores' TRMs): CLUSTERPMUEN, lets the
 * lower EL reach the CLUSTERPM* registers. */
#define ACTLR_CLUSTERPMUEN (1ull << 12)

enum ctl_id { C_MDCR_EL2, C_MDCR_EL3, C_CPTR_EL2, C_CPTR_EL3, C_ACTLR_EL2, C_ACTLR_EL3,
	      C_MIDR_EL1, C_MPIDR_EL1 };

/*
 * The control registers this file owns. A register of ELx is UNDEFINED
 * below ELx (min_el). Only the bits the model acts on are stored (wmask);
 * the others read as 0 (res1 as 1) and ignore writes: docs/model.md.
 * field: where the stored value lives in struct dpmu_core (read-only
 * identification registers have none).
 */
struct ctl_regdesc {
	uint32_t enc;
	enum ctl_id id;
	unsigned min_el;
	uint64_t wmask, res1;
	size_t field;
	bool ro;
};

static const struct ctl_regdesc ctl_regs[] = {
	{ DPMU_SYSREG(3, 4, 1, 1, 1), C_MDCR_EL2, 2, MDCR_TPM | MDCR_TPMCR, 0,
	  offsetof(struct dpmu_core, mdcr_el2), false },
	{ DPMU_SYSREG(3, 6, 1, 3, 1), C_MDCR_EL3, 3, MDCR_TPM, 0,
	  offsetof(struct dpmu_core, mdcr_el3), false },
	{ DPMU_SYSREG(3, 4, 1, 1, 2), C_CPTR_EL2, 2, CPTR_TAM | CPTR_TTA, CPTR_EL2_RES1,
	  offsetof(struct dpmu_core, cptr_el2), false },
	{ DPMU_SYSREG(3, 6, 1, 1, 2), C_CPTR_EL3, 3, CPTR_TAM | CPTR_TTA, 0,
	  offsetof(struct dpmu_core, cptr_el3), false },
	{ DPMU_SYSREG(3, 4, 1, 0, 1), C_ACTLR_EL2, 2, ACTLR_CLUSTERPMUEN, 0,
	  offsetof(struct dpmu_core, actlr_el2), false },
	{ DPMU_SYSREG(3, 6, 1, 0, 1), C_ACTLR_EL3, 3, ACTLR_CLUSTERPMUEN, 0,
	  offsetof(struct dpmu_core, actlr_el3), false },
	{ DPMU_SYSREG(3, 0, 0, 0, 0), C_MIDR_EL1, 1, 0, 0, 0, true },
	{ DPMU_SYSREG(3, 0, 0, 0, 5), C_MPIDR_EL1, 1, 0, 0, 0, true },
};

static uint64_t *ctl_field(struct dpmu_core *c, const struct ctl_regdesc *r)
{
	return (uint64_t *)((char *)c + r->field);
}

/* EL2Enabled(): EL2 is implemented, and without FEAT_SEL2 it exists only in
 * Non-secure state. */
static bool el2_enabled(const struct dpmu_core *c)
{
	return !dpmu_core_secure(c);
}

struct dpmu_access dpmu_sysreg_pmu_traps(const struct dpmu_core *c, bool pmcr)
{
	/* Arm ARM PMU register pseudocode, after the EL0 PMUSERENR check:
	 * MDCR_EL2.TPM, then MDCR_EL2.TPMCR for PMCR_EL0, for EL0/EL1 when EL2
	 * is enabled; then MDCR_EL3.TPM for EL0-EL2. */
	if (c->el <= 1 && el2_enabled(c)) {
		if (c->mdcr_el2 & MDCR_TPM)
			return dpmu_access_trap(2);
		if (pmcr && (c->mdcr_el2 & MDCR_TPMCR))
			return dpmu_access_trap(2);
	}
	if (c->el <= 2 && (c->mdcr_el3 & MDCR_TPM))
		return dpmu_access_trap(3);
	return dpmu_access_ok();
}

struct dpmu_access dpmu_sysreg_amu_traps(const struct dpmu_core *c)
{
	/* AMU register pseudocode, after the EL0 AMUSERENR check: CPTR_EL2.TAM
	 * for EL0/EL1 when EL2 is enabled, then CPTR_EL3.TAM for EL0-EL2. */
	if (c->el <= 1 && el2_enabled(c) && (c->cptr_el2 & CPTR_TAM))
		return dpmu_access_trap(2);
	if (c->el <= 2 && (c->cptr_el3 & CPTR_TAM))
		return dpmu_access_trap(3);
	return dpmu_access_ok();
}

struct dpmu_access dpmu_sysreg_trace_traps(const struct dpmu_core *c)
{
	/* Trace System register pseudocode (IHI 0064, Armv8 traps): after the
	 * EL0 check, CPTR_EL2.TTA for EL0/EL1 when EL2 is enabled, then
	 * CPTR_EL3.TTA for EL0-EL2. */
	if (c->el <= 1 && el2_enabled(c) && (c->cptr_el2 & CPTR_TTA))
		return dpmu_access_trap(2);
	if (c->el <= 2 && (c->cptr_el3 & CPTR_TTA))
		return dpmu_access_trap(3);
	return dpmu_access_ok();
}

static struct dpmu_access ctl_sysreg(struct dpmu_core *c, uint32_t enc, bool write,
				     uint64_t *value)
{
	const struct ctl_regdesc *r = NULL;
	for (size_t i = 0; i < sizeof ctl_regs / sizeof ctl_regs[0]; i++)
		if (ctl_regs[i].enc == enc)
			r = &ctl_regs[i];
	if (!r || c->el < r->min_el || (write && r->ro))
		return dpmu_access_undef();

	if (write) {
		*ctl_field(c, r) = *value & r->wmask;
		return dpmu_access_ok();
	}
	switch (r->id) {
	case C_MIDR_EL1:
		*value = c->type->midr;
		break;
	case C_MPIDR_EL1:
		*value = c->mpidr;
		break;
	case C_MDCR_EL2:
		/* HPMN is not modelled: it reads as PMCR_EL0.N (its reset
		 * value) and writes are ignored, so EL0/EL1 reach every
		 * counter. */
		*value = (*ctl_field(c, r) & r->wmask) | (c->pmu.n & MDCR_HPMN);
		break;
	default:
		*value = (*ctl_field(c, r) & r->wmask) | r->res1;
		break;
	}
	return dpmu_access_ok();
}

static struct dpmu_access sysreg_access(struct dpmu_model *m, unsigned core, uint32_t enc,
					bool write, uint64_t *value)
{
	/* No such core, or a core that is powered down: it executes nothing,
	 * so nothing can be accessed. Reported as UNDEFINED (docs/model.md). */
	if (!m || core >= m->ncores || !m->cores[core].powered)
		return dpmu_access_undef();
	struct dpmu_core *c = &m->cores[core];
	struct dpmu_access a = dpmu_pmu_sysreg(m, c, enc, write, value);
	if (a.kind == DPMU_ACCESS_NOTMINE)
		a = dpmu_amu_sysreg(m, c, enc, write, value);
	if (a.kind == DPMU_ACCESS_NOTMINE)
		a = dpmu_clusterpmu_sysreg(m, c, enc, write, value);
	if (a.kind == DPMU_ACCESS_NOTMINE)
		a = dpmu_etm_sysreg(c, enc, write, value);
	if (a.kind == DPMU_ACCESS_NOTMINE)
		a = ctl_sysreg(c, enc, write, value);
	return a;
}

struct dpmu_access dpmu_model_sysreg_read(struct dpmu_model *m, unsigned core, uint32_t enc,
					  uint64_t *value)
{
	uint64_t v = 0;
	struct dpmu_access a = sysreg_access(m, core, enc, false, &v);
	/* A refused read leaves the destination as it was. */
	if (a.kind == DPMU_ACCESS_OK && value)
		*value = v;
	return a;
}

struct dpmu_access dpmu_model_sysreg_write(struct dpmu_model *m, unsigned core, uint32_t enc,
					   uint64_t value)
{
	return sysreg_access(m, core, enc, true, &value);
}
