/*
 * Core PMU conformance: who may reach which register. PMUSERENR_EL0 at EL0,
 * _EL1 registers, MDCR_EL2.TPM/TPMCR and MDCR_EL3.TPM, their priority, the
 * EL2/EL3 controls and identification registers, and encodings the model
 * does not implement (reference section 1; Arm ARM system register
 * accessibility pseudocode for each register named).
 */
#include "conformance.h"

#define PMCR DPMU_SYSREG(3, 3, 9, 12, 0)
#define PMCNTENSET DPMU_SYSREG(3, 3, 9, 12, 1)
#define PMCNTENCLR DPMU_SYSREG(3, 3, 9, 12, 2)
#define PMOVSCLR DPMU_SYSREG(3, 3, 9, 12, 3)
#define PMSWINC DPMU_SYSREG(3, 3, 9, 12, 4)
#define PMSELR DPMU_SYSREG(3, 3, 9, 12, 5)
#define PMCEID0 DPMU_SYSREG(3, 3, 9, 12, 6)
#define PMCEID1 DPMU_SYSREG(3, 3, 9, 12, 7)
#define PMCCNTR DPMU_SYSREG(3, 3, 9, 13, 0)
#define PMXEVTYPER DPMU_SYSREG(3, 3, 9, 13, 1)
#define PMXEVCNTR DPMU_SYSREG(3, 3, 9, 13, 2)
#define PMUSERENR DPMU_SYSREG(3, 3, 9, 14, 0)
#define PMOVSSET DPMU_SYSREG(3, 3, 9, 14, 3)
#define PMINTENSET DPMU_SYSREG(3, 0, 9, 14, 1)
#define PMINTENCLR DPMU_SYSREG(3, 0, 9, 14, 2)
#define PMMIR DPMU_SYSREG(3, 0, 9, 14, 6)
#define PMEVCNTR(n) DPMU_SYSREG(3, 3, 14, 8 + ((n) >> 3), (n) & 7)
#define PMEVTYPER(n) DPMU_SYSREG(3, 3, 14, 12 + ((n) >> 3), (n) & 7)
#define PMCCFILTR DPMU_SYSREG(3, 3, 14, 15, 7)
#define MDCR_EL2 DPMU_SYSREG(3, 4, 1, 1, 1)
#define MDCR_EL3 DPMU_SYSREG(3, 6, 1, 3, 1)
#define CPTR_EL2 DPMU_SYSREG(3, 4, 1, 1, 2)
#define CPTR_EL3 DPMU_SYSREG(3, 6, 1, 1, 2)
#define ACTLR_EL2 DPMU_SYSREG(3, 4, 1, 0, 1)
#define ACTLR_EL3 DPMU_SYSREG(3, 6, 1, 0, 1)
#define MIDR_EL1 DPMU_SYSREG(3, 0, 0, 0, 0)
#define MPIDR_EL1 DPMU_SYSREG(3, 0, 0, 0, 5)

#define EN (1u << 0)
#define SW (1u << 1)
#define CR (1u << 2)
#define ER (1u << 3)
#define TPMCR (1u << 5)
#define TPM (1u << 6)
#define TAM (1u << 30)
#define CLUSTERPMUEN (1u << 12)

static const struct dpmu_core_type *type_of(struct dpmu_model *m, unsigned core)
{
	const struct dpmu_profile *p = dpmu_model_profile(m);
	unsigned cl = dpmu_model_core_cluster(m, core), first = 0;
	for (unsigned i = 0; i < cl; i++)
		first += p->clusters[i].ncores;
	return &p->core_types[p->clusters[cl].core_type[core - first]];
}

static void set_el(struct dpmu_model *m, unsigned el, enum dpmu_security sec)
{
	struct dpmu_err err;
	if (dpmu_model_set_el(m, 0, el, sec, &err) != 0)
		fail_msg("set_el: %s", dpmu_errmsg(&err));
}

/* Outcome of an MRS / MSR from core 0 as "kind*10 + target EL". */
static unsigned rd(struct dpmu_model *m, uint32_t enc)
{
	uint64_t v = 0;
	struct dpmu_access a = dpmu_model_sysreg_read(m, 0, enc, &v);
	return (unsigned)a.kind * 10 + (a.kind == DPMU_ACCESS_TRAP ? a.el : 0);
}

static unsigned wr(struct dpmu_model *m, uint32_t enc, uint64_t v)
{
	struct dpmu_access a = dpmu_model_sysreg_write(m, 0, enc, v);
	return (unsigned)a.kind * 10 + (a.kind == DPMU_ACCESS_TRAP ? a.el : 0);
}

#define OK 0u
#define TRAP(el) (10u + (el))
#define UNDEF 20u

/* An EL0 access and the PMUSERENR bits that open it (Arm ARM pseudocode of
 * each register: EN for everything; SW for PMSWINC writes; CR for PMCCNTR
 * reads; ER for PMEVCNTR<n>/PMXEVCNTR reads and PMSELR reads/writes). */
struct el0_access {
	const char *name;
	uint32_t enc;
	bool write;
	uint32_t opens;
};

static const struct el0_access el0_accesses[] = {
	{ "MRS PMCR_EL0", PMCR, false, EN },
	{ "MSR PMCR_EL0", PMCR, true, EN },
	{ "MRS PMCNTENSET_EL0", PMCNTENSET, false, EN },
	{ "MSR PMCNTENSET_EL0", PMCNTENSET, true, EN },
	{ "MSR PMCNTENCLR_EL0", PMCNTENCLR, true, EN },
	{ "MRS PMOVSCLR_EL0", PMOVSCLR, false, EN },
	{ "MSR PMOVSSET_EL0", PMOVSSET, true, EN },
	{ "MSR PMSWINC_EL0", PMSWINC, true, EN | SW },
	{ "MRS PMSELR_EL0", PMSELR, false, EN | ER },
	{ "MSR PMSELR_EL0", PMSELR, true, EN | ER },
	{ "MRS PMCEID0_EL0", PMCEID0, false, EN },
	{ "MRS PMCEID1_EL0", PMCEID1, false, EN },
	{ "MRS PMCCNTR_EL0", PMCCNTR, false, EN | CR },
	{ "MSR PMCCNTR_EL0", PMCCNTR, true, EN },
	{ "MRS PMXEVTYPER_EL0", PMXEVTYPER, false, EN },
	{ "MSR PMXEVTYPER_EL0", PMXEVTYPER, true, EN },
	{ "MRS PMXEVCNTR_EL0", PMXEVCNTR, false, EN | ER },
	{ "MSR PMXEVCNTR_EL0", PMXEVCNTR, true, EN },
	{ "MRS PMEVCNTR0_EL0", PMEVCNTR(0), false, EN | ER },
	{ "MSR PMEVCNTR0_EL0", PMEVCNTR(0), true, EN },
	{ "MRS PMEVTYPER0_EL0", PMEVTYPER(0), false, EN },
	{ "MSR PMEVTYPER0_EL0", PMEVTYPER(0), true, EN },
	{ "MRS PMCCFILTR_EL0", PMCCFILTR, false, EN },
	{ "MSR PMCCFILTR_EL0", PMCCFILTR, true, EN },
};

/* For every PMUSERENR value, every EL0 access is allowed exactly when one of
 * the bits that open it is set, and traps to EL1 otherwise. */
static void check_el0_matrix(uint32_t pmuserenr)
{
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMUSERENR, pmuserenr);
	set_el(m, 0, DPMU_NONSECURE);
	for (size_t i = 0; i < sizeof el0_accesses / sizeof el0_accesses[0]; i++) {
		const struct el0_access *x = &el0_accesses[i];
		unsigned want = (pmuserenr & x->opens) ? OK : TRAP(1);
		unsigned got = x->write ? wr(m, x->enc, 0) : rd(m, x->enc);
		if (got != want)
			fail_msg("%s at EL0 with PMUSERENR 0x%x: got %u, expected %u", x->name,
				 pmuserenr, got, want);
	}
	dpmu_model_destroy(m);
}

/* Arm ARM PMUSERENR_EL0: with all of EN/SW/CR/ER clear, every EL0 access to
 * the PMU traps to EL1. */
static void PMUSERENR_zero_traps_every_EL0_PMU_access_to_EL1(void **state)
{
	(void)state;
	check_el0_matrix(0);
}

/* Arm ARM PMUSERENR_EL0.EN: opens every EL0-accessible PMU register. */
static void PMUSERENR_EN_opens_every_EL0_PMU_access(void **state)
{
	(void)state;
	check_el0_matrix(EN);
}

/* Arm ARM PMUSERENR_EL0.SW: opens PMSWINC_EL0 writes and nothing else. */
static void PMUSERENR_SW_opens_only_PMSWINC_writes(void **state)
{
	(void)state;
	check_el0_matrix(SW);
}

/* Arm ARM PMUSERENR_EL0.CR: opens PMCCNTR_EL0 reads only (writes still
 * need EN). */
static void PMUSERENR_CR_opens_only_PMCCNTR_reads(void **state)
{
	(void)state;
	check_el0_matrix(CR);
}

/* Arm ARM PMUSERENR_EL0.ER: opens PMEVCNTR<n>/PMXEVCNTR reads and PMSELR
 * reads and writes; not event-counter writes or PMXEVTYPER. */
static void PMUSERENR_ER_opens_event_counter_reads_and_PMSELR(void **state)
{
	(void)state;
	check_el0_matrix(ER);
}

/* Arm ARM PMUSERENR_EL0: readable at EL0 whatever its value; MSR at EL0 is
 * UNDEFINED. */
static void PMUSERENR_is_readable_at_EL0_and_its_EL0_write_UNDEFINED(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	set_el(m, 0, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMUSERENR), OK);
	assert_int_equal(wr(m, PMUSERENR, EN), UNDEF);
	assert_int_equal(conf_rd(m, 0, PMUSERENR), 0);
	dpmu_model_destroy(m);
}

/* Arm ARM PMUSERENR_EL0: EN SW CR ER are the only fields (PMUv3); the
 * other bits are RES0. Seed 003 section 4.1 writes 1 << 31 to enable
 * PMCCNTR at EL0: that bit does nothing; CR (bit 2) does. */
static void PMUSERENR_keeps_EN_SW_CR_ER_only(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMUSERENR, 0xffffffffffffffffull);
	assert_int_equal(conf_rd(m, 0, PMUSERENR), 0xf);
	conf_wr(m, 0, PMUSERENR, 1u << 31);
	set_el(m, 0, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMCCNTR), TRAP(1));
	dpmu_model_destroy(m);
}

/* Arm ARM PMINTENSET_EL1 / PMINTENCLR_EL1 / PMMIR_EL1: UNDEFINED at EL0,
 * PMUSERENR notwithstanding. */
static void EL1_PMU_registers_are_UNDEFINED_at_EL0(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMUSERENR, EN | SW | CR | ER);
	set_el(m, 0, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMINTENSET), UNDEF);
	assert_int_equal(wr(m, PMINTENSET, 1), UNDEF);
	assert_int_equal(rd(m, PMINTENCLR), UNDEF);
	assert_int_equal(wr(m, PMINTENCLR, 1), UNDEF);
	assert_int_equal(rd(m, PMMIR), UNDEF);
	set_el(m, 1, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMINTENSET), OK);
	assert_int_equal(conf_rd(m, 0, PMINTENSET), 0); /* the EL0 MSR had no effect */
	dpmu_model_destroy(m);
}

/* Arm ARM PMMIR_EL1: present only with FEAT_PMUv3p4, UNDEFINED otherwise
 * (the Armv8.2 cores of the default profile have PMUv3p1). */
static void PMMIR_EL1_is_UNDEFINED_without_PMUv3p4(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	assert_false(type_of(m, 0)->pmuv3p5);
	assert_int_equal(rd(m, PMMIR), UNDEF);
	dpmu_model_destroy(m);

	struct dpmu_err err;
	struct dpmu_profile *p = NULL;
	assert_int_equal(dpmu_profile_load(DPMU_PROFILE_DEFAULT, &p, &err), 0);
	for (unsigned t = 0; t < p->n_core_types; t++)
		p->core_types[t].pmuv3p5 = true; /* PMUv3p5 includes PMUv3p4 */
	assert_int_equal(dpmu_model_create(p, &m, &err), 0);
	dpmu_profile_free(p);
	assert_int_equal(rd(m, PMMIR), OK);
	assert_int_equal(wr(m, PMMIR, 0), UNDEF); /* read-only */
	dpmu_model_destroy(m);
}

/* Arm ARM MDCR_EL2.TPM: Non-secure EL0 and EL1 accesses to the PMU trap to
 * EL2 (EL0 only once PMUSERENR lets it through). */
static void MDCR_EL2_TPM_traps_Nonsecure_EL0_and_EL1_PMU_accesses_to_EL2(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMUSERENR, EN);
	set_el(m, 2, DPMU_NONSECURE);
	conf_wr(m, 0, MDCR_EL2, TPM);
	set_el(m, 1, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMCCNTR), TRAP(2));
	assert_int_equal(wr(m, PMINTENSET, 1), TRAP(2));
	assert_int_equal(rd(m, PMUSERENR), TRAP(2));
	assert_int_equal(wr(m, PMEVTYPER(0), 8), TRAP(2));
	set_el(m, 0, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMCCNTR), TRAP(2));
	assert_int_equal(rd(m, PMUSERENR), TRAP(2));
	assert_int_equal(wr(m, PMSWINC, 1), TRAP(2));
	set_el(m, 2, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMCCNTR), OK); /* EL2 itself is not trapped */
	assert_int_equal(conf_rd(m, 0, PMEVTYPER(0)), 0); /* trapped MSR had no effect */
	dpmu_model_destroy(m);
}

/* Arm ARM EL2Enabled(): without FEAT_SEL2, EL2 controls do not apply in
 * Secure state, so MDCR_EL2.TPM does not trap Secure EL0/EL1. */
static void MDCR_EL2_TPM_does_not_trap_Secure_EL1_or_EL0(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMUSERENR, EN);
	set_el(m, 2, DPMU_NONSECURE);
	conf_wr(m, 0, MDCR_EL2, TPM | TPMCR);
	set_el(m, 1, DPMU_SECURE);
	assert_int_equal(rd(m, PMCR), OK);
	set_el(m, 0, DPMU_SECURE);
	assert_int_equal(rd(m, PMCCNTR), OK);
	dpmu_model_destroy(m);
}

/* Arm ARM MDCR_EL2.TPMCR: traps EL0/EL1 accesses to PMCR_EL0 only. */
static void MDCR_EL2_TPMCR_traps_only_PMCR_accesses_to_EL2(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMUSERENR, EN);
	set_el(m, 2, DPMU_NONSECURE);
	conf_wr(m, 0, MDCR_EL2, TPMCR);
	set_el(m, 1, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMCR), TRAP(2));
	assert_int_equal(wr(m, PMCR, 1), TRAP(2));
	assert_int_equal(rd(m, PMCCNTR), OK);
	assert_int_equal(wr(m, PMCNTENSET, 1), OK);
	set_el(m, 0, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMCR), TRAP(2));
	assert_int_equal(rd(m, PMCEID0), OK);
	set_el(m, 2, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMCR), OK);
	dpmu_model_destroy(m);
}

/* Arm ARM MDCR_EL3.TPM: EL0, EL1 and EL2 accesses to the PMU trap to EL3,
 * Secure or not; EL3 is never trapped. */
static void MDCR_EL3_TPM_traps_EL0_to_EL2_PMU_accesses_to_EL3(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMUSERENR, EN);
	set_el(m, 3, DPMU_SECURE);
	conf_wr(m, 0, MDCR_EL3, TPM);
	assert_int_equal(rd(m, PMCCNTR), OK);
	set_el(m, 2, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMCCNTR), TRAP(3));
	set_el(m, 1, DPMU_NONSECURE);
	assert_int_equal(wr(m, PMCR, 1), TRAP(3));
	set_el(m, 1, DPMU_SECURE);
	assert_int_equal(rd(m, PMINTENSET), TRAP(3));
	set_el(m, 0, DPMU_SECURE);
	assert_int_equal(rd(m, PMUSERENR), TRAP(3));
	set_el(m, 0, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMEVCNTR(0)), TRAP(3));
	dpmu_model_destroy(m);
}

/* Arm ARM pseudocode order: at EL0 the PMUSERENR check (to EL1) comes
 * first, then MDCR_EL2.TPM (to EL2), then MDCR_EL3.TPM (to EL3). */
static void Trap_priority_is_PMUSERENR_then_MDCR_EL2_then_MDCR_EL3(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	set_el(m, 3, DPMU_SECURE);
	conf_wr(m, 0, MDCR_EL3, TPM);
	conf_wr(m, 0, MDCR_EL2, TPM);
	set_el(m, 0, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMCCNTR), TRAP(1));
	set_el(m, 1, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMCCNTR), TRAP(2));
	set_el(m, 3, DPMU_SECURE);
	conf_wr(m, 0, PMUSERENR, CR);
	set_el(m, 0, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMCCNTR), TRAP(2));
	set_el(m, 3, DPMU_SECURE);
	conf_wr(m, 0, MDCR_EL2, 0);
	set_el(m, 0, DPMU_NONSECURE);
	assert_int_equal(rd(m, PMCCNTR), TRAP(3));
	dpmu_model_destroy(m);
}

/* Arm ARM: a register of ELx is UNDEFINED below ELx. */
static void EL2_and_EL3_control_registers_are_UNDEFINED_below_their_EL(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	static const uint32_t el2_regs[] = { MDCR_EL2, CPTR_EL2, ACTLR_EL2 };
	static const uint32_t el3_regs[] = { MDCR_EL3, CPTR_EL3, ACTLR_EL3 };
	for (unsigned el = 0; el <= 3; el++) {
		enum dpmu_security sec = el == 3 ? DPMU_SECURE : DPMU_NONSECURE;
		set_el(m, el, sec);
		for (size_t i = 0; i < 3; i++) {
			unsigned want2 = el >= 2 ? OK : UNDEF, want3 = el >= 3 ? OK : UNDEF;
			assert_int_equal(rd(m, el2_regs[i]), want2);
			assert_int_equal(rd(m, el3_regs[i]), want3);
		}
	}
	set_el(m, 1, DPMU_SECURE); /* Secure EL1 is still below EL2 */
	assert_int_equal(rd(m, MDCR_EL2), UNDEF);
	dpmu_model_destroy(m);
}

/* Arm ARM MDCR_EL2.HPMN resets to PMCR_EL0.N; not modelled beyond that:
 * it reads as N and writes leave it. TPM and TPMCR read back. */
static void MDCR_EL2_HPMN_reads_as_PMCR_N(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	unsigned n = (unsigned)(conf_rd(m, 0, PMCR) >> 11) & 0x1f;
	set_el(m, 2, DPMU_NONSECURE);
	assert_int_equal(conf_rd(m, 0, MDCR_EL2) & 0x1f, n);
	conf_wr(m, 0, MDCR_EL2, TPM | TPMCR | 1);
	assert_int_equal(conf_rd(m, 0, MDCR_EL2), TPM | TPMCR | n);
	dpmu_model_destroy(m);
}

/* CPTR_EL2/EL3.TAM and ACTLR_EL2/EL3.CLUSTERPMUEN (DynamIQ) are stored
 * controls; CPTR_EL2's RES1 bits read 1 (Arm ARM CPTR_EL2, E2H = 0). The
 * model starts with firmware having granted the cluster PMU (model.c). */
static void CPTR_TAM_and_ACTLR_CLUSTERPMUEN_read_back(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	set_el(m, 3, DPMU_SECURE);
	assert_int_equal(conf_rd(m, 0, ACTLR_EL3), CLUSTERPMUEN);
	assert_int_equal(conf_rd(m, 0, ACTLR_EL2), CLUSTERPMUEN);
	assert_int_equal(conf_rd(m, 0, CPTR_EL2), 0x33ff);
	conf_wr(m, 0, CPTR_EL2, TAM);
	conf_wr(m, 0, CPTR_EL3, TAM);
	conf_wr(m, 0, ACTLR_EL2, 0);
	assert_int_equal(conf_rd(m, 0, CPTR_EL2), TAM | 0x33ff);
	assert_int_equal(conf_rd(m, 0, CPTR_EL3), TAM);
	assert_int_equal(conf_rd(m, 0, ACTLR_EL2), 0);
	dpmu_model_destroy(m);
}

/* Arm ARM MIDR_EL1 / MPIDR_EL1: read-only at EL1 and above (MSR
 * UNDEFINED), UNDEFINED at EL0; values from the core type and topology. */
static void MIDR_and_MPIDR_identify_the_core(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	const struct dpmu_profile *p = dpmu_model_profile(m);
	for (unsigned core = 0; core < dpmu_model_ncores(m); core++) {
		assert_int_equal(conf_rd(m, core, MIDR_EL1), type_of(m, core)->midr);
		assert_int_equal(conf_rd(m, core, MPIDR_EL1), dpmu_profile_mpidr(p, core));
	}
	assert_int_equal(wr(m, MIDR_EL1, 0), UNDEF);
	assert_int_equal(wr(m, MPIDR_EL1, 0), UNDEF);
	set_el(m, 0, DPMU_NONSECURE);
	assert_int_equal(rd(m, MIDR_EL1), UNDEF);
	assert_int_equal(rd(m, MPIDR_EL1), UNDEF);
	dpmu_model_destroy(m);
}

/* model.h: an encoding the model does not implement is UNDEFINED; so is any
 * access on a core that does not exist or is powered down (it executes
 * nothing). A refused MRS leaves the destination untouched. */
static void Unimplemented_encodings_and_absent_cores_are_UNDEFINED(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	struct dpmu_err err;
	uint64_t v = 77;
	set_el(m, 3, DPMU_SECURE);
	assert_int_equal(dpmu_model_sysreg_read(m, 0, DPMU_SYSREG(3, 3, 9, 15, 0), &v).kind,
			 DPMU_ACCESS_UNDEF);
	assert_int_equal(dpmu_model_sysreg_write(m, 0, DPMU_SYSREG(3, 7, 15, 15, 7), 1).kind,
			 DPMU_ACCESS_UNDEF);
	assert_int_equal(v, 77);
	unsigned n = dpmu_model_ncores(m);
	assert_int_equal(dpmu_model_sysreg_read(m, n, PMCR, &v).kind, DPMU_ACCESS_UNDEF);
	assert_int_equal(dpmu_model_sysreg_write(m, n, PMCR, 1).kind, DPMU_ACCESS_UNDEF);
	assert_int_equal(dpmu_model_set_power(m, 1, false, &err), 0);
	assert_int_equal(dpmu_model_sysreg_read(m, 1, MIDR_EL1, &v).kind, DPMU_ACCESS_UNDEF);
	assert_int_equal(v, 77);
	dpmu_model_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(PMUSERENR_zero_traps_every_EL0_PMU_access_to_EL1),
		cmocka_unit_test(PMUSERENR_EN_opens_every_EL0_PMU_access),
		cmocka_unit_test(PMUSERENR_SW_opens_only_PMSWINC_writes),
		cmocka_unit_test(PMUSERENR_CR_opens_only_PMCCNTR_reads),
		cmocka_unit_test(PMUSERENR_ER_opens_event_counter_reads_and_PMSELR),
		cmocka_unit_test(PMUSERENR_is_readable_at_EL0_and_its_EL0_write_UNDEFINED),
		cmocka_unit_test(PMUSERENR_keeps_EN_SW_CR_ER_only),
		cmocka_unit_test(EL1_PMU_registers_are_UNDEFINED_at_EL0),
		cmocka_unit_test(PMMIR_EL1_is_UNDEFINED_without_PMUv3p4),
		cmocka_unit_test(MDCR_EL2_TPM_traps_Nonsecure_EL0_and_EL1_PMU_accesses_to_EL2),
		cmocka_unit_test(MDCR_EL2_TPM_does_not_trap_Secure_EL1_or_EL0),
		cmocka_unit_test(MDCR_EL2_TPMCR_traps_only_PMCR_accesses_to_EL2),
		cmocka_unit_test(MDCR_EL3_TPM_traps_EL0_to_EL2_PMU_accesses_to_EL3),
		cmocka_unit_test(Trap_priority_is_PMUSERENR_then_MDCR_EL2_then_MDCR_EL3),
		cmocka_unit_test(EL2_and_EL3_control_registers_are_UNDEFINED_below_their_EL),
		cmocka_unit_test(MDCR_EL2_HPMN_reads_as_PMCR_N),
		cmocka_unit_test(CPTR_TAM_and_ACTLR_CLUSTERPMUEN_read_back),
		cmocka_unit_test(MIDR_and_MPIDR_identify_the_core),
		cmocka_unit_test(Unimplemented_encodings_and_absent_cores_are_UNDEFINED),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
