/*
 * Core PMU conformance: PMCR_EL0 (reference section 1; Arm ARM PMCR_EL0).
 * Every test drives the model through system-register accesses only.
 */
#include "conformance.h"

#define PMCR DPMU_SYSREG(3, 3, 9, 12, 0)
#define PMCNTENSET DPMU_SYSREG(3, 3, 9, 12, 1)
#define PMCCNTR DPMU_SYSREG(3, 3, 9, 13, 0)
#define PMEVCNTR(n) DPMU_SYSREG(3, 3, 14, 8 + ((n) >> 3), (n) & 7)
#define PMEVTYPER(n) DPMU_SYSREG(3, 3, 14, 12 + ((n) >> 3), (n) & 7)
#define PMCCFILTR DPMU_SYSREG(3, 3, 14, 15, 7)

#define E (1u << 0)
#define P (1u << 1)
#define C (1u << 2)
#define D (1u << 3)
#define LC (1u << 6)
#define LP (1u << 7)
#define CC (1u << 31)
#define INST_RETIRED 0x08

static const struct dpmu_core_type *type_of(struct dpmu_model *m, unsigned core)
{
	const struct dpmu_profile *p = dpmu_model_profile(m);
	unsigned cl = dpmu_model_core_cluster(m, core), first = 0;
	for (unsigned i = 0; i < cl; i++)
		first += p->clusters[i].ncores;
	return &p->core_types[p->clusters[cl].core_type[core - first]];
}

/* Counter 0 counts INST_RETIRED; the cycle counter is enabled too. */
static void start(struct dpmu_model *m, uint32_t pmcr)
{
	conf_wr(m, 0, PMEVTYPER(0), INST_RETIRED);
	conf_wr(m, 0, PMCNTENSET, 1u | CC);
	conf_wr(m, 0, PMCR, pmcr | E);
}

/* Reference section 1: N [15:11], IDCODE [23:16], IMP [31:24] = 0x41 are
 * read-only and come from the core type. */
static void PMCR_N_IDCODE_IMP_are_read_only_from_the_core_type(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	for (unsigned core = 0; core < dpmu_model_ncores(m); core++) {
		const struct dpmu_core_type *t = type_of(m, core);
		uint64_t v = conf_rd(m, core, PMCR);
		assert_int_equal((v >> 11) & 0x1f, t->pmu_counters);
		assert_int_equal((v >> 16) & 0xff, t->pmcr_idcode);
		assert_int_equal((v >> 24) & 0xff, 0x41);
		conf_wr(m, core, PMCR, 0xfffff800u); /* ones into N, IDCODE, IMP only */
		assert_int_equal(conf_rd(m, core, PMCR), v);
	}
	dpmu_model_destroy(m);
}

/* Reference section 1 / Arm ARM PMCR_EL0.P: resets every event counter;
 * PMCCNTR is not affected. */
static void PMCR_P_resets_event_counters_not_cycle_counter(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMEVCNTR(0), 1234);
	conf_wr(m, 0, PMEVCNTR(5), 99);
	conf_wr(m, 0, PMCCNTR, 777);
	conf_wr(m, 0, PMCR, P);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 0);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(5)), 0);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 777);
	dpmu_model_destroy(m);
}

/* Arm ARM PMCR_EL0.C: resets PMCCNTR only. */
static void PMCR_C_resets_cycle_counter_not_event_counters(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMEVCNTR(1), 55);
	conf_wr(m, 0, PMCCNTR, 1ull << 40);
	conf_wr(m, 0, PMCR, C);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 0);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(1)), 55);
	dpmu_model_destroy(m);
}

/* Reference section 1: P and C are write-only; they read as zero. */
static void PMCR_P_and_C_read_as_zero(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMCR, E | P | C);
	uint64_t v = conf_rd(m, 0, PMCR);
	assert_int_equal(v & (P | C), 0);
	assert_int_equal(v & E, E);
	dpmu_model_destroy(m);
}

/* Reference section 1: LP (bit 7) exists only with PMUv3p5; without it the
 * bit is RES0 (reads 0 whatever is written). */
static void PMCR_LP_is_RES0_without_PMUv3p5(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	assert_false(type_of(m, 0)->pmuv3p5);
	conf_wr(m, 0, PMCR, LP | LC | D);
	assert_int_equal(conf_rd(m, 0, PMCR) & (LP | LC | D), LC | D);
	dpmu_model_destroy(m);
}

/* Reference section 1: with PMUv3p5, LP is a stored control bit. */
static void PMCR_LP_is_writable_with_PMUv3p5(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model_p5();
	conf_wr(m, 0, PMCR, LP);
	assert_int_equal(conf_rd(m, 0, PMCR) & LP, LP);
	conf_wr(m, 0, PMCR, 0);
	assert_int_equal(conf_rd(m, 0, PMCR) & LP, 0);
	dpmu_model_destroy(m);
}

/* Reference section 1 "Counting and overflow": a counter counts only while
 * PMCR.E = 1, and E = 0 stops the cycle counter too. */
static void PMCR_E_clear_stops_every_counter(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	start(m, 0);
	dpmu_model_core_event(m, 0, INST_RETIRED, 10);
	dpmu_model_core_cycles(m, 0, 100);
	conf_wr(m, 0, PMCR, 0);
	dpmu_model_core_event(m, 0, INST_RETIRED, 10);
	dpmu_model_core_cycles(m, 0, 100);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 10);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 100);
	dpmu_model_destroy(m);
}

/* Reference section 1: PMCR.D = 1 with LC = 0: the cycle counter counts
 * once every 64 cycles; the remainder carries over between deliveries. */
static void PMCR_D_divides_cycle_counter_by_64_when_LC_is_0(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	start(m, D);
	dpmu_model_core_cycles(m, 0, 63);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 0);
	dpmu_model_core_cycles(m, 0, 1);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 1);
	dpmu_model_core_cycles(m, 0, 64 * 1000 + 10);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 1001);
	dpmu_model_destroy(m);
}

/* Arm ARM PMCR_EL0.D: ignored when PMCR.LC = 1 (every cycle counts). */
static void PMCR_D_is_ignored_when_LC_is_1(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	start(m, D | LC);
	dpmu_model_core_cycles(m, 0, 100);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 100);
	dpmu_model_destroy(m);
}

/* The divider divides only the cycle counter: CPU_CYCLES on an event
 * counter counts every cycle (Arm ARM PMCR_EL0.D affects PMCCNTR_EL0). */
static void PMCR_D_does_not_divide_CPU_CYCLES_event_counter(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	start(m, D);
	conf_wr(m, 0, PMEVTYPER(0), 0x11);
	dpmu_model_core_cycles(m, 0, 640);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 640);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 10);
	dpmu_model_destroy(m);
}

/* Cold reset (power-up, model.h): PMCR reads 0 except the read-only
 * identification fields; counters, enables and types are 0. */
static void PMU_registers_reset_to_zero_on_power_up(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	struct dpmu_err err;
	uint64_t ident = conf_rd(m, 0, PMCR) & 0xfffff800u;
	start(m, D | LC);
	conf_wr(m, 0, PMEVCNTR(0), 42);
	conf_wr(m, 0, PMCCFILTR, 1u << 31);
	assert_int_equal(dpmu_model_set_power(m, 0, false, &err), 0);
	assert_int_equal(dpmu_model_set_power(m, 0, true, &err), 0);
	assert_int_equal(conf_rd(m, 0, PMCR), ident);
	assert_int_equal(conf_rd(m, 0, PMCNTENSET), 0);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 0);
	assert_int_equal(conf_rd(m, 0, PMEVTYPER(0)), 0);
	assert_int_equal(conf_rd(m, 0, PMCCFILTR), 0);
	dpmu_model_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(PMCR_N_IDCODE_IMP_are_read_only_from_the_core_type),
		cmocka_unit_test(PMCR_P_resets_event_counters_not_cycle_counter),
		cmocka_unit_test(PMCR_C_resets_cycle_counter_not_event_counters),
		cmocka_unit_test(PMCR_P_and_C_read_as_zero),
		cmocka_unit_test(PMCR_LP_is_RES0_without_PMUv3p5),
		cmocka_unit_test(PMCR_LP_is_writable_with_PMUv3p5),
		cmocka_unit_test(PMCR_E_clear_stops_every_counter),
		cmocka_unit_test(PMCR_D_divides_cycle_counter_by_64_when_LC_is_0),
		cmocka_unit_test(PMCR_D_is_ignored_when_LC_is_1),
		cmocka_unit_test(PMCR_D_does_not_divide_CPU_CYCLES_event_counter),
		cmocka_unit_test(PMU_registers_reset_to_zero_on_power_up),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
