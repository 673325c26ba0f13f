/*
 * DSU cluster PMU system registers: one rule per test (reference section 3,
 * DSU TRM, DSU-120 TRM 107721 accessibility pseudocode, Cortex-A75/A76 TRM
 * ACTLR_EL2/EL3.CLUSTERPMUEN, seed 001 section 2.1).
 */
#include "conformance.h"

#define CLUSTERPMCR DPMU_SYSREG(3, 0, 15, 5, 0)
#define CLUSTERPMCNTENSET DPMU_SYSREG(3, 0, 15, 5, 1)
#define CLUSTERPMCNTENCLR DPMU_SYSREG(3, 0, 15, 5, 2)
#define CLUSTERPMOVSSET DPMU_SYSREG(3, 0, 15, 5, 3)
#define CLUSTERPMOVSCLR DPMU_SYSREG(3, 0, 15, 5, 4)
#define CLUSTERPMSELR DPMU_SYSREG(3, 0, 15, 5, 5)
#define CLUSTERPMINTENSET DPMU_SYSREG(3, 0, 15, 5, 6)
#define CLUSTERPMINTENCLR DPMU_SYSREG(3, 0, 15, 5, 7)
#define CLUSTERPMCCNTR DPMU_SYSREG(3, 0, 15, 6, 0)
#define CLUSTERPMXEVTYPER DPMU_SYSREG(3, 0, 15, 6, 1)
#define CLUSTERPMXEVCNTR DPMU_SYSREG(3, 0, 15, 6, 2)
#define CLUSTERPMMDCR DPMU_SYSREG(3, 0, 15, 6, 3)
#define CLUSTERPMCEID0 DPMU_SYSREG(3, 0, 15, 6, 4)
#define CLUSTERPMCEID1 DPMU_SYSREG(3, 0, 15, 6, 5)

#define ACTLR_EL2 DPMU_SYSREG(3, 4, 1, 0, 1)
#define ACTLR_EL3 DPMU_SYSREG(3, 6, 1, 0, 1)
#define CLUSTERPMUEN (1ull << 12)

#define PMCR_E 1ull
#define PMCR_P 2ull
#define PMCR_C 4ull
#define CC (1ull << 31)

#define DSU120_PROFILE "a75x4-a55x4-dsu120"

static const uint32_t all_regs[] = {
	CLUSTERPMCR, CLUSTERPMCNTENSET, CLUSTERPMCNTENCLR, CLUSTERPMOVSSET, CLUSTERPMOVSCLR,
	CLUSTERPMSELR, CLUSTERPMINTENSET, CLUSTERPMINTENCLR, CLUSTERPMCCNTR, CLUSTERPMXEVTYPER,
	CLUSTERPMXEVCNTR, CLUSTERPMMDCR, CLUSTERPMCEID0, CLUSTERPMCEID1,
};
#define NREGS (sizeof all_regs / sizeof all_regs[0])

static void set_el(struct dpmu_model *m, unsigned core, unsigned el, enum dpmu_security sec)
{
	struct dpmu_err err;
	if (dpmu_model_set_el(m, core, el, sec, &err) != 0)
		fail_msg("set_el: %s", dpmu_errmsg(&err));
}

static void el1(struct dpmu_model *m, unsigned core)
{
	set_el(m, core, 1, DPMU_NONSECURE);
}

/* ACTLR_EL2/EL3.CLUSTERPMUEN written by firmware at EL3 / the hypervisor at
 * EL2; the core returns to Non-secure EL1. */
static void set_clusterpmuen(struct dpmu_model *m, unsigned core, bool el2, bool el3)
{
	set_el(m, core, 3, DPMU_SECURE);
	conf_wr(m, core, ACTLR_EL3, el3 ? CLUSTERPMUEN : 0);
	set_el(m, core, 2, DPMU_NONSECURE);
	/* ACTLR_EL2 is written at EL2 whatever ACTLR_EL3 says (a core register) */
	conf_wr(m, core, ACTLR_EL2, el2 ? CLUSTERPMUEN : 0);
	el1(m, core);
}

static const struct dpmu_cluster_params *cluster0(struct dpmu_model *m)
{
	return &dpmu_model_profile(m)->clusters[0];
}

/* First core of cluster `cl`. */
static unsigned first_core(struct dpmu_model *m, unsigned cl)
{
	for (unsigned i = 0; i < dpmu_model_ncores(m); i++)
		if (dpmu_model_core_cluster(m, i) == cl)
			return i;
	fail_msg("cluster %u has no core", cl);
	return 0;
}

/* An event the cluster implements other than CYCLES, and one it does not. */
static uint16_t implemented_event(const struct dpmu_cluster_params *cp)
{
	for (size_t i = 0; i < cp->n_events; i++)
		if (cp->events[i] != DPMU_EV_CPU_CYCLES && cp->events[i] != DPMU_EV_CHAIN)
			return cp->events[i];
	fail_msg("cluster implements no event besides CYCLES");
	return 0;
}

static uint16_t unimplemented_event(const struct dpmu_cluster_params *cp)
{
	for (unsigned e = 0x01; e < 0xffff; e++)
		if (e != DPMU_EV_CHAIN && !dpmu_cluster_implements(cp, (uint16_t)e))
			return (uint16_t)e;
	fail_msg("cluster implements every event");
	return 0;
}

/* Program counter i with event ev through SELR, from core `core`. */
static void program(struct dpmu_model *m, unsigned core, unsigned i, uint16_t ev)
{
	conf_wr(m, core, CLUSTERPMSELR, i);
	conf_wr(m, core, CLUSTERPMXEVTYPER, ev);
}

static uint64_t evcnt(struct dpmu_model *m, unsigned core, unsigned i)
{
	conf_wr(m, core, CLUSTERPMSELR, i);
	return conf_rd(m, core, CLUSTERPMXEVCNTR);
}

/* Reference section 3, seed 001 section 1: the cluster PMU is shared by the
 * cores of the cluster; any core's access reaches the one bank. */
static void CLUSTERPMU_every_core_of_the_cluster_reaches_one_bank(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	unsigned c0 = first_core(m, 0);
	uint16_t ev = implemented_event(cluster0(m));
	program(m, c0, 2, ev);
	conf_wr(m, c0, CLUSTERPMCNTENSET, 1u << 2);
	conf_wr(m, c0, CLUSTERPMCR, PMCR_E);
	dpmu_model_cluster_event(m, 0, ev, 77);
	for (unsigned i = 0; i < dpmu_model_ncores(m); i++) {
		if (dpmu_model_core_cluster(m, i) != 0)
			continue;
		assert_int_equal(conf_rd(m, i, CLUSTERPMCNTENSET), 1u << 2);
		assert_int_equal(evcnt(m, i, 2), 77);
		conf_wr(m, i, CLUSTERPMSELR, 2);
		assert_int_equal(conf_rd(m, i, CLUSTERPMXEVTYPER), ev);
	}
	/* A write from another core of the cluster changes the same bank. */
	unsigned other = c0 + 1 < dpmu_model_ncores(m) && dpmu_model_core_cluster(m, c0 + 1) == 0
				 ? c0 + 1 : c0;
	conf_wr(m, other, CLUSTERPMCNTENCLR, 1u << 2);
	assert_int_equal(conf_rd(m, c0, CLUSTERPMCNTENSET), 0);
	dpmu_model_destroy(m);
}

/* Reference section 3: one cluster PMU per DSU; clusters do not share it.
 * The built-in profiles have one cluster, so the test builds a two-cluster
 * system from the default profile. */
static void CLUSTERPMU_each_cluster_has_its_own_bank(void **state)
{
	(void)state;
	struct dpmu_err err;
	struct dpmu_profile *p = NULL;
	if (dpmu_profile_load(DPMU_PROFILE_DEFAULT, &p, &err) != 0)
		fail_msg("profile: %s", dpmu_errmsg(&err));
	p->nclusters = 2;
	p->clusters[1] = p->clusters[0];
	struct dpmu_model *m = NULL;
	if (dpmu_model_create(p, &m, &err) != 0)
		fail_msg("model: %s", dpmu_errmsg(&err));
	dpmu_profile_free(p);
	assert_int_equal(dpmu_model_nclusters(m), 2);
	unsigned a = first_core(m, 0), b = first_core(m, 1);
	conf_wr(m, a, CLUSTERPMCNTENSET, CC);
	conf_wr(m, a, CLUSTERPMCR, PMCR_E);
	assert_int_equal(conf_rd(m, b, CLUSTERPMCNTENSET), 0);
	dpmu_model_cluster_cycles(m, 0, 9);
	dpmu_model_cluster_cycles(m, 1, 4);
	conf_wr(m, b, CLUSTERPMCNTENSET, CC);
	conf_wr(m, b, CLUSTERPMCR, PMCR_E);
	dpmu_model_cluster_cycles(m, 1, 4);
	assert_int_equal(conf_rd(m, a, CLUSTERPMCCNTR), 9);
	assert_int_equal(conf_rd(m, b, CLUSTERPMCCNTR), 4);
	dpmu_model_destroy(m);
}

/* DSU TRM / 107721 pseudocode: "if PSTATE.EL == EL0 then UNDEFINED" for every
 * CLUSTERPM* register, reads and writes, whatever the ACTLR controls. */
static void CLUSTERPMU_registers_UNDEFINED_at_EL0(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	set_el(m, 0, 0, DPMU_NONSECURE);
	for (size_t i = 0; i < NREGS; i++) {
		uint64_t v = 0;
		assert_int_equal(dpmu_model_sysreg_read(m, 0, all_regs[i], &v).kind,
				 DPMU_ACCESS_UNDEF);
		assert_int_equal(dpmu_model_sysreg_write(m, 0, all_regs[i], 0).kind,
				 DPMU_ACCESS_UNDEF);
	}
	dpmu_model_destroy(m);
}

/* Cortex-A75/A76 TRM ACTLR_EL2.CLUSTERPMUEN: 0 = CLUSTERPM* not
 * write-accessible from EL1; 107721 MSR pseudocode: EL1 write traps to EL2. */
static void CLUSTERPMU_EL1_write_traps_to_EL2_when_ACTLR_EL2_CLUSTERPMUEN_is_0(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	set_clusterpmuen(m, 0, false, true);
	for (size_t i = 0; i < NREGS; i++) {
		if (all_regs[i] == CLUSTERPMMDCR)
			continue; /* EL3 register */
		struct dpmu_access a = dpmu_model_sysreg_write(m, 0, all_regs[i], 0);
		assert_int_equal(a.kind, DPMU_ACCESS_TRAP);
		assert_int_equal(a.el, 2);
	}
	dpmu_model_destroy(m);
}

/* ACTLR_EL3.CLUSTERPMUEN = 0: EL1 writes trap to EL3 (107721 pseudocode). */
static void CLUSTERPMU_EL1_write_traps_to_EL3_when_ACTLR_EL3_CLUSTERPMUEN_is_0(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	set_clusterpmuen(m, 0, true, false);
	struct dpmu_access a = dpmu_model_sysreg_write(m, 0, CLUSTERPMCR, PMCR_E);
	assert_int_equal(a.kind, DPMU_ACCESS_TRAP);
	assert_int_equal(a.el, 3);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCR) & PMCR_E, 0); /* not written */
	dpmu_model_destroy(m);
}

/* 107721 pseudocode order: the ACTLR_EL2 check comes before ACTLR_EL3. */
static void CLUSTERPMU_EL2_trap_takes_priority_over_EL3_trap(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	set_clusterpmuen(m, 0, false, false);
	struct dpmu_access a = dpmu_model_sysreg_write(m, 0, CLUSTERPMSELR, 1);
	assert_int_equal(a.kind, DPMU_ACCESS_TRAP);
	assert_int_equal(a.el, 2);
	dpmu_model_destroy(m);
}

/* ACTLR_EL3.CLUSTERPMUEN = 0: EL2 writes trap to EL3; ACTLR_EL2 does not
 * govern EL2 itself. */
static void CLUSTERPMU_EL2_write_traps_to_EL3_when_ACTLR_EL3_CLUSTERPMUEN_is_0(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	set_clusterpmuen(m, 0, false, false);
	set_el(m, 0, 2, DPMU_NONSECURE);
	struct dpmu_access a = dpmu_model_sysreg_write(m, 0, CLUSTERPMCNTENSET, CC);
	assert_int_equal(a.kind, DPMU_ACCESS_TRAP);
	assert_int_equal(a.el, 3);
	set_clusterpmuen(m, 0, false, true);
	set_el(m, 0, 2, DPMU_NONSECURE);
	conf_wr(m, 0, CLUSTERPMCNTENSET, CC);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCNTENSET), CC);
	dpmu_model_destroy(m);
}

/* EL2Enabled() is false in Secure state (no FEAT_SEL2): Secure EL1 writes
 * skip the ACTLR_EL2 check and are governed by ACTLR_EL3 alone. */
static void CLUSTERPMU_Secure_EL1_write_ignores_ACTLR_EL2(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	set_clusterpmuen(m, 0, false, true);
	set_el(m, 0, 1, DPMU_SECURE);
	conf_wr(m, 0, CLUSTERPMSELR, 3);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMSELR), 3);
	set_clusterpmuen(m, 0, false, false);
	set_el(m, 0, 1, DPMU_SECURE);
	struct dpmu_access a = dpmu_model_sysreg_write(m, 0, CLUSTERPMSELR, 4);
	assert_int_equal(a.kind, DPMU_ACCESS_TRAP);
	assert_int_equal(a.el, 3);
	dpmu_model_destroy(m);
}

/* CLUSTERPMUEN controls write access only: MRS at EL1/EL2 is not trapped
 * (107721 MRS pseudocode; Cortex-A76 TRM "not write-accessible"). */
static void CLUSTERPMU_reads_are_not_trapped_by_CLUSTERPMUEN(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	set_clusterpmuen(m, 0, false, false);
	for (unsigned el = 1; el <= 2; el++) {
		set_el(m, 0, el, DPMU_NONSECURE);
		for (size_t i = 0; i < NREGS; i++) {
			if (all_regs[i] == CLUSTERPMMDCR)
				continue;
			uint64_t v;
			assert_int_equal(dpmu_model_sysreg_read(m, 0, all_regs[i], &v).kind,
					 DPMU_ACCESS_OK);
		}
	}
	dpmu_model_destroy(m);
}

/* EL3 accesses are never trapped by CLUSTERPMUEN. */
static void CLUSTERPMU_EL3_writes_are_never_trapped(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	set_clusterpmuen(m, 0, false, false);
	set_el(m, 0, 3, DPMU_SECURE);
	conf_wr(m, 0, CLUSTERPMCNTENSET, CC);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCNTENSET), CC);
	dpmu_model_destroy(m);
}

/* DSU TRM CLUSTERPMMDCR_EL3: an EL3 register (UNDEFINED at EL1 and EL2);
 * SPME (bit 0) resets to 0 and is the only stored bit. */
static void CLUSTERPMMDCR_is_EL3_only_with_SPME(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	uint64_t v;
	for (unsigned el = 1; el <= 2; el++) {
		set_el(m, 0, el, DPMU_NONSECURE);
		assert_int_equal(dpmu_model_sysreg_read(m, 0, CLUSTERPMMDCR, &v).kind,
				 DPMU_ACCESS_UNDEF);
		assert_int_equal(dpmu_model_sysreg_write(m, 0, CLUSTERPMMDCR, 1).kind,
				 DPMU_ACCESS_UNDEF);
	}
	set_el(m, 0, 3, DPMU_SECURE);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMMDCR), 0);
	conf_wr(m, 0, CLUSTERPMMDCR, ~0ull);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMMDCR), 1);
	dpmu_model_destroy(m);
}

/* Reference section 3: CLUSTERPMCR.N [15:11] = event counters (the
 * profile's), IMP [31:24] = 0x41; E resets to 0. */
static void CLUSTERPMCR_N_is_the_profile_counter_count_and_IMP_is_Arm(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	uint64_t v = conf_rd(m, 0, CLUSTERPMCR);
	assert_int_equal((v >> 11) & 0x1f, cluster0(m)->pmu_counters);
	assert_int_equal((v >> 24) & 0xff, 0x41);
	assert_int_equal(v & PMCR_E, 0);
	assert_int_equal(v >> 32, 0);
	/* N and IMP are read-only */
	conf_wr(m, 0, CLUSTERPMCR, 0);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCR), v);
	dpmu_model_destroy(m);
}

/* Seed 003 / reference section 3: the DSU has 6 event counters. */
static void CLUSTERPMU_has_six_event_counters(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	assert_int_equal((conf_rd(m, 0, CLUSTERPMCR) >> 11) & 0x1f, 6);
	/* Bits [5:0] and 31 are the implemented enable bits. */
	conf_wr(m, 0, CLUSTERPMCNTENSET, 0xffffffffull);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCNTENSET), 0x8000003full);
	dpmu_model_destroy(m);
}

/* PMCR.P (reference section 1, applied by the cluster PMU): writing 1 resets
 * every event counter, not the cycle counter. */
static void CLUSTERPMCR_P_resets_event_counters_not_cycle_counter(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, CLUSTERPMSELR, 1);
	conf_wr(m, 0, CLUSTERPMXEVCNTR, 1234);
	conf_wr(m, 0, CLUSTERPMCCNTR, 5678);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_P);
	assert_int_equal(evcnt(m, 0, 1), 0);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCCNTR), 5678);
	dpmu_model_destroy(m);
}

/* PMCR.C: writing 1 resets the cycle counter, not the event counters. */
static void CLUSTERPMCR_C_resets_cycle_counter_not_event_counters(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, CLUSTERPMSELR, 0);
	conf_wr(m, 0, CLUSTERPMXEVCNTR, 99);
	conf_wr(m, 0, CLUSTERPMCCNTR, 1ull << 40);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_C);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCCNTR), 0);
	assert_int_equal(evcnt(m, 0, 0), 99);
	dpmu_model_destroy(m);
}

/* P and C are write-only actions: they read as 0; E is kept. */
static void CLUSTERPMCR_P_and_C_read_as_zero(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_E | PMCR_P | PMCR_C);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCR) & 7, PMCR_E);
	dpmu_model_destroy(m);
}

/* CLUSTERPMCR.E = 0 disables every counter, the cycle counter included. */
static void CLUSTERPMCR_E_0_stops_all_counters(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	uint16_t ev = implemented_event(cluster0(m));
	program(m, 0, 0, ev);
	conf_wr(m, 0, CLUSTERPMCNTENSET, CC | 1);
	dpmu_model_cluster_event(m, 0, ev, 10);
	dpmu_model_cluster_cycles(m, 0, 10);
	assert_int_equal(evcnt(m, 0, 0), 0);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCCNTR), 0);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_E);
	dpmu_model_cluster_event(m, 0, ev, 10);
	dpmu_model_cluster_cycles(m, 0, 10);
	assert_int_equal(evcnt(m, 0, 0), 10);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCCNTR), 10);
	dpmu_model_destroy(m);
}

/* Counters count only when enabled in CLUSTERPMCNTENSET; CNTENCLR disables
 * and both read the same enable mask. */
static void CLUSTERPMCNTENSET_CLR_enable_and_disable_counting(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	uint16_t ev = implemented_event(cluster0(m));
	program(m, 0, 0, ev);
	program(m, 0, 1, ev);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_E);
	conf_wr(m, 0, CLUSTERPMCNTENSET, 1);
	dpmu_model_cluster_event(m, 0, ev, 5);
	assert_int_equal(evcnt(m, 0, 0), 5);
	assert_int_equal(evcnt(m, 0, 1), 0);
	conf_wr(m, 0, CLUSTERPMCNTENCLR, 1);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCNTENCLR), 0);
	dpmu_model_cluster_event(m, 0, ev, 5);
	assert_int_equal(evcnt(m, 0, 0), 5);
	dpmu_model_destroy(m);
}

/* Reference section 3: event counters are reached only through SELR +
 * XEVTYPER/XEVCNTR; each SEL value reaches its own counter. */
static void CLUSTERPMXEV_registers_reach_the_counter_SELR_selects(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	unsigned n = cluster0(m)->pmu_counters;
	for (unsigned i = 0; i < n; i++) {
		conf_wr(m, 0, CLUSTERPMSELR, i);
		conf_wr(m, 0, CLUSTERPMXEVCNTR, 100 + i);
		conf_wr(m, 0, CLUSTERPMXEVTYPER, 0x10 + i);
	}
	for (unsigned i = 0; i < n; i++) {
		conf_wr(m, 0, CLUSTERPMSELR, i);
		assert_int_equal(conf_rd(m, 0, CLUSTERPMSELR), i);
		assert_int_equal(conf_rd(m, 0, CLUSTERPMXEVCNTR), 100 + i);
		assert_int_equal(conf_rd(m, 0, CLUSTERPMXEVTYPER), 0x10 + i);
	}
	dpmu_model_destroy(m);
}

/* Reference section 1 (PMXEVTYPER/PMXEVCNTR): selecting an unimplemented
 * counter, or 31 (the DSU cycle counter has no filter), is RAZ/WI. */
static void CLUSTERPMXEV_selecting_an_unimplemented_counter_is_RAZ_WI(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	unsigned n = cluster0(m)->pmu_counters;
	unsigned sels[] = { n, 30, 31 };
	for (size_t k = 0; k < 3; k++) {
		conf_wr(m, 0, CLUSTERPMSELR, sels[k]);
		conf_wr(m, 0, CLUSTERPMXEVCNTR, 55);
		conf_wr(m, 0, CLUSTERPMXEVTYPER, 0x11);
		assert_int_equal(conf_rd(m, 0, CLUSTERPMXEVCNTR), 0);
		assert_int_equal(conf_rd(m, 0, CLUSTERPMXEVTYPER), 0);
	}
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(evcnt(m, 0, i), 0);
	dpmu_model_destroy(m);
}

/* CLUSTERPMSELR.SEL is [4:0]; other bits are RES0. */
static void CLUSTERPMSELR_SEL_is_five_bits(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, CLUSTERPMSELR, 0xffffffe3ull);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMSELR), 3);
	dpmu_model_destroy(m);
}

/* Reference section 3: the cycle counter is index/bit 31 of the enable,
 * overflow and interrupt masks, and counts DSU clock cycles. */
static void CLUSTERPMCCNTR_is_bit_31_and_counts_DSU_cycles(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_E);
	conf_wr(m, 0, CLUSTERPMCNTENSET, 1);
	dpmu_model_cluster_cycles(m, 0, 1000);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCCNTR), 0);
	conf_wr(m, 0, CLUSTERPMCNTENSET, CC);
	dpmu_model_cluster_cycles(m, 0, 1000);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCCNTR), 1000);
	dpmu_model_destroy(m);
}

/* The DSU cycle counter is 64-bit and overflows at 64 bits (there is no
 * CLUSTERPMCR.LC): crossing 2^32 sets no overflow, wrapping 2^64 does. */
static void CLUSTERPMCCNTR_is_64_bit_and_overflows_at_64_bits(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_E);
	conf_wr(m, 0, CLUSTERPMCNTENSET, CC);
	conf_wr(m, 0, CLUSTERPMCCNTR, 0xffffffffull);
	dpmu_model_cluster_cycles(m, 0, 2);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCCNTR), 0x100000001ull);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMOVSSET) & CC, 0);
	conf_wr(m, 0, CLUSTERPMCCNTR, ~0ull);
	dpmu_model_cluster_cycles(m, 0, 3);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCCNTR), 2);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMOVSSET) & CC, CC);
	dpmu_model_destroy(m);
}

/* The original DSU's event counters are 32-bit: they wrap at 2^32 and set
 * their overflow bit (Linux arm_dsu_pmu: "32bit independent counters"). */
static void CLUSTERPMEVCNTR_32_bit_wraps_and_sets_overflow(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	assert_false(cluster0(m)->counters64);
	uint16_t ev = implemented_event(cluster0(m));
	program(m, 0, 3, ev);
	conf_wr(m, 0, CLUSTERPMXEVCNTR, 0x1ffffffffull); /* upper bits dropped */
	assert_int_equal(conf_rd(m, 0, CLUSTERPMXEVCNTR), 0xffffffffull);
	conf_wr(m, 0, CLUSTERPMCNTENSET, 1u << 3);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_E);
	dpmu_model_cluster_event(m, 0, ev, 2);
	assert_int_equal(evcnt(m, 0, 3), 1);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMOVSSET), 1u << 3);
	dpmu_model_destroy(m);
}

/* OVSSET writes set and OVSCLR writes clear overflow bits (write-1); both
 * read the same status; bits of unimplemented counters are RAZ/WI. */
static void CLUSTERPMOVSSET_sets_and_CLUSTERPMOVSCLR_clears(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, CLUSTERPMOVSSET, 0xffffffffull);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMOVSCLR), 0x8000003full);
	conf_wr(m, 0, CLUSTERPMOVSCLR, 0x80000001ull);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMOVSSET), 0x3eull);
	dpmu_model_destroy(m);
}

/* Reference section 3: one overflow interrupt line for the cluster
 * (nCLUSTERPMUIRQ), asserted while E and an enabled overflow are set. */
static void CLUSTERPMU_overflow_with_INTENSET_asserts_the_cluster_irq(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	uint16_t ev = implemented_event(cluster0(m));
	program(m, 0, 0, ev);
	conf_wr(m, 0, CLUSTERPMXEVCNTR, 0xfffffffeull);
	conf_wr(m, 0, CLUSTERPMINTENSET, 1);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMINTENCLR), 1);
	conf_wr(m, 0, CLUSTERPMCNTENSET, 1);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_E);
	dpmu_model_cluster_event(m, 0, ev, 1);
	assert_false(dpmu_model_cluster_irq(m, 0));
	dpmu_model_cluster_event(m, 0, ev, 1);
	assert_true(dpmu_model_cluster_irq(m, 0));
	/* level-sensitive: deasserted when the overflow is cleared */
	conf_wr(m, 0, CLUSTERPMOVSCLR, 1);
	assert_false(dpmu_model_cluster_irq(m, 0));
	dpmu_model_destroy(m);
}

/* An overflow whose interrupt is not enabled does not assert the line;
 * INTENCLR disables it again. */
static void CLUSTERPMU_irq_needs_the_interrupt_enable(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_E);
	conf_wr(m, 0, CLUSTERPMOVSSET, CC);
	assert_false(dpmu_model_cluster_irq(m, 0));
	conf_wr(m, 0, CLUSTERPMINTENSET, CC);
	assert_true(dpmu_model_cluster_irq(m, 0));
	conf_wr(m, 0, CLUSTERPMINTENCLR, CC);
	assert_false(dpmu_model_cluster_irq(m, 0));
	dpmu_model_destroy(m);
}

/* The interrupt request needs CLUSTERPMCR.E (reference section 1). */
static void CLUSTERPMU_irq_needs_CLUSTERPMCR_E(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, CLUSTERPMOVSSET, CC);
	conf_wr(m, 0, CLUSTERPMINTENSET, CC);
	assert_false(dpmu_model_cluster_irq(m, 0));
	conf_wr(m, 0, CLUSTERPMCR, PMCR_E);
	assert_true(dpmu_model_cluster_irq(m, 0));
	dpmu_model_destroy(m);
}

/* Expected CLUSTERPMCEID0/1 computed from the profile's event list with the
 * core PMCEID layout (reference section 1). */
static void expected_ceid(const struct dpmu_cluster_params *cp, uint64_t *c0, uint64_t *c1)
{
	*c0 = *c1 = 0;
	for (size_t i = 0; i < cp->n_events; i++) {
		uint16_t e = cp->events[i];
		if (e < 0x20)
			*c0 |= 1ull << e;
		else if (e < 0x40)
			*c1 |= 1ull << (e - 0x20);
		else if (e >= 0x4000 && e < 0x4020)
			*c0 |= 1ull << (32 + e - 0x4000);
		else if (e >= 0x4020 && e < 0x4040)
			*c1 |= 1ull << (32 + e - 0x4020);
	}
}

/* Seed 001 section 2.1, reference section 3: the cluster PMCEID advertises
 * what the profile implements. Classic DSU numbering: the Linux driver's
 * events (CYCLES 0x11, BUS_ACCESS 0x19, L3D_CACHE 0x2B ...) in the low
 * words, nothing in the 0x4000 range. */
static void CLUSTERPMCEID_classic_numbering_advertises_the_profile_events(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	const struct dpmu_cluster_params *cp = cluster0(m);
	assert_int_equal(cp->numbering, DPMU_DSU_CLASSIC);
	uint64_t e0, e1;
	expected_ceid(cp, &e0, &e1);
	uint64_t c0 = conf_rd(m, 0, CLUSTERPMCEID0), c1 = conf_rd(m, 0, CLUSTERPMCEID1);
	assert_int_equal(c0, e0);
	assert_int_equal(c1, e1);
	assert_true(c0 >> 0x11 & 1);               /* CYCLES */
	assert_true(c1 >> (0x2b - 0x20) & 1);      /* L3D_CACHE */
	assert_int_equal(c0 >> 32, 0);
	assert_int_equal(c1 >> 32, 0);
	dpmu_model_destroy(m);
}

/* Seed 001 section 2.1: the DSU-120 numbering's 0x4000-range events show in
 * the upper halves: L3_ACCESS 0x4000 and L3_MISS 0x4001 in CLUSTERPMCEID0
 * [33:32], SNOOP_REQ 0x4022 and DATA_TRANSFER 0x4023 in CLUSTERPMCEID1
 * [35:34]. */
static void CLUSTERPMCEID_DSU120_numbering_shows_0x4000_events_in_upper_half(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(DSU120_PROFILE);
	const struct dpmu_cluster_params *cp = cluster0(m);
	assert_int_equal(cp->numbering, DPMU_DSU_120);
	uint64_t e0, e1;
	expected_ceid(cp, &e0, &e1);
	uint64_t c0 = conf_rd(m, 0, CLUSTERPMCEID0), c1 = conf_rd(m, 0, CLUSTERPMCEID1);
	assert_int_equal(c0, e0);
	assert_int_equal(c1, e1);
	assert_int_equal((c0 >> 32) & 3, 3);
	assert_int_equal((c1 >> 34) & 3, 3);
	dpmu_model_destroy(m);
}

/* CLUSTERPMCEID0/1 are read-only: writes leave them unchanged. */
static void CLUSTERPMCEID_is_read_only(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	uint64_t c0 = conf_rd(m, 0, CLUSTERPMCEID0);
	conf_wr(m, 0, CLUSTERPMCEID0, ~c0);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCEID0), c0);
	dpmu_model_destroy(m);
}

/* Reference section 1 ("a counter programmed with an unimplemented event
 * does not count") applied per numbering: under each profile, an event
 * outside it never counts, but the counter stays programmable. */
static void check_unimplemented_never_counts(const char *profile)
{
	struct dpmu_model *m = conf_model(profile);
	const struct dpmu_cluster_params *cp = cluster0(m);
	uint16_t ev = unimplemented_event(cp);
	program(m, 0, 0, ev);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMXEVTYPER), ev);
	conf_wr(m, 0, CLUSTERPMCNTENSET, 1);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_E);
	dpmu_model_cluster_event(m, 0, ev, 1000);
	assert_int_equal(evcnt(m, 0, 0), 0);
	dpmu_model_destroy(m);
}

static void CLUSTERPMU_unimplemented_event_never_counts(void **state)
{
	(void)state;
	check_unimplemented_never_counts(NULL);
	check_unimplemented_never_counts(DSU120_PROFILE);
}

/* The other numbering's events are not implemented by a profile: the
 * classic profile does not count DSU-120's L3_ACCESS 0x4000. */
static void CLUSTERPMU_classic_profile_does_not_count_DSU120_events(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	assert_false(dpmu_cluster_implements(cluster0(m), 0x4000));
	program(m, 0, 0, 0x4000);
	conf_wr(m, 0, CLUSTERPMCNTENSET, 1);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_E);
	dpmu_model_cluster_event(m, 0, 0x4000, 10);
	assert_int_equal(evcnt(m, 0, 0), 0);
	dpmu_model_destroy(m);
}

/* DSU-120 numbering: an implemented 0x4000-range event counts. */
static void CLUSTERPMU_DSU120_profile_counts_L3_ACCESS(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(DSU120_PROFILE);
	program(m, 0, 4, 0x4000);
	conf_wr(m, 0, CLUSTERPMCNTENSET, 1u << 4);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_E);
	dpmu_model_cluster_event(m, 0, 0x4000, 12);
	assert_int_equal(evcnt(m, 0, 4), 12);
	dpmu_model_destroy(m);
}

/* Reprogramming a counter's event takes effect at once (refresh after an
 * XEVTYPER write). */
static void CLUSTERPMXEVTYPER_change_takes_effect_immediately(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	const struct dpmu_cluster_params *cp = cluster0(m);
	uint16_t good = implemented_event(cp), bad = unimplemented_event(cp);
	program(m, 0, 0, bad);
	conf_wr(m, 0, CLUSTERPMCNTENSET, 1);
	conf_wr(m, 0, CLUSTERPMCR, PMCR_E);
	dpmu_model_cluster_event(m, 0, good, 3);
	program(m, 0, 0, good);
	dpmu_model_cluster_event(m, 0, good, 4);
	assert_int_equal(evcnt(m, 0, 0), 4);
	dpmu_model_destroy(m);
}

/* Cold reset: E, enables, overflow and interrupt enables are 0. */
static void CLUSTERPMU_reset_values_are_zero(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCR) & PMCR_E, 0);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCNTENSET), 0);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMOVSSET), 0);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMINTENSET), 0);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCCNTR), 0);
	assert_false(dpmu_model_cluster_irq(m, 0));
	dpmu_model_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(CLUSTERPMU_every_core_of_the_cluster_reaches_one_bank),
		cmocka_unit_test(CLUSTERPMU_each_cluster_has_its_own_bank),
		cmocka_unit_test(CLUSTERPMU_registers_UNDEFINED_at_EL0),
		cmocka_unit_test(CLUSTERPMU_EL1_write_traps_to_EL2_when_ACTLR_EL2_CLUSTERPMUEN_is_0),
		cmocka_unit_test(CLUSTERPMU_EL1_write_traps_to_EL3_when_ACTLR_EL3_CLUSTERPMUEN_is_0),
		cmocka_unit_test(CLUSTERPMU_EL2_trap_takes_priority_over_EL3_trap),
		cmocka_unit_test(CLUSTERPMU_EL2_write_traps_to_EL3_when_ACTLR_EL3_CLUSTERPMUEN_is_0),
		cmocka_unit_test(CLUSTERPMU_Secure_EL1_write_ignores_ACTLR_EL2),
		cmocka_unit_test(CLUSTERPMU_reads_are_not_trapped_by_CLUSTERPMUEN),
		cmocka_unit_test(CLUSTERPMU_EL3_writes_are_never_trapped),
		cmocka_unit_test(CLUSTERPMMDCR_is_EL3_only_with_SPME),
		cmocka_unit_test(CLUSTERPMCR_N_is_the_profile_counter_count_and_IMP_is_Arm),
		cmocka_unit_test(CLUSTERPMU_has_six_event_counters),
		cmocka_unit_test(CLUSTERPMCR_P_resets_event_counters_not_cycle_counter),
		cmocka_unit_test(CLUSTERPMCR_C_resets_cycle_counter_not_event_counters),
		cmocka_unit_test(CLUSTERPMCR_P_and_C_read_as_zero),
		cmocka_unit_test(CLUSTERPMCR_E_0_stops_all_counters),
		cmocka_unit_test(CLUSTERPMCNTENSET_CLR_enable_and_disable_counting),
		cmocka_unit_test(CLUSTERPMXEV_registers_reach_the_counter_SELR_selects),
		cmocka_unit_test(CLUSTERPMXEV_selecting_an_unimplemented_counter_is_RAZ_WI),
		cmocka_unit_test(CLUSTERPMSELR_SEL_is_five_bits),
		cmocka_unit_test(CLUSTERPMCCNTR_is_bit_31_and_counts_DSU_cycles),
		cmocka_unit_test(CLUSTERPMCCNTR_is_64_bit_and_overflows_at_64_bits),
		cmocka_unit_test(CLUSTERPMEVCNTR_32_bit_wraps_and_sets_overflow),
		cmocka_unit_test(CLUSTERPMOVSSET_sets_and_CLUSTERPMOVSCLR_clears),
		cmocka_unit_test(CLUSTERPMU_overflow_with_INTENSET_asserts_the_cluster_irq),
		cmocka_unit_test(CLUSTERPMU_irq_needs_the_interrupt_enable),
		cmocka_unit_test(CLUSTERPMU_irq_needs_CLUSTERPMCR_E),
		cmocka_unit_test(CLUSTERPMCEID_classic_numbering_advertises_the_profile_events),
		cmocka_unit_test(CLUSTERPMCEID_DSU120_numbering_shows_0x4000_events_in_upper_half),
		cmocka_unit_test(CLUSTERPMCEID_is_read_only),
		cmocka_unit_test(CLUSTERPMU_unimplemented_event_never_counts),
		cmocka_unit_test(CLUSTERPMU_classic_profile_does_not_count_DSU120_events),
		cmocka_unit_test(CLUSTERPMU_DSU120_profile_counts_L3_ACCESS),
		cmocka_unit_test(CLUSTERPMXEVTYPER_change_takes_effect_immediately),
		cmocka_unit_test(CLUSTERPMU_reset_values_are_zero),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
