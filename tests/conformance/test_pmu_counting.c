/*
 * Core PMU conformance: enables, counter widths, PMSELR indirection,
 * PMSWINC, PMCEID, implemented events and the core's run state (reference
 * section 1; Arm ARM D7 and the PMU register descriptions).
 */
#include "conformance.h"

#define PMCR DPMU_SYSREG(3, 3, 9, 12, 0)
#define PMCNTENSET DPMU_SYSREG(3, 3, 9, 12, 1)
#define PMCNTENCLR DPMU_SYSREG(3, 3, 9, 12, 2)
#define PMSWINC DPMU_SYSREG(3, 3, 9, 12, 4)
#define PMSELR DPMU_SYSREG(3, 3, 9, 12, 5)
#define PMCEID0 DPMU_SYSREG(3, 3, 9, 12, 6)
#define PMCEID1 DPMU_SYSREG(3, 3, 9, 12, 7)
#define PMCCNTR DPMU_SYSREG(3, 3, 9, 13, 0)
#define PMXEVTYPER DPMU_SYSREG(3, 3, 9, 13, 1)
#define PMXEVCNTR DPMU_SYSREG(3, 3, 9, 13, 2)
#define PMEVCNTR(n) DPMU_SYSREG(3, 3, 14, 8 + ((n) >> 3), (n) & 7)
#define PMEVTYPER(n) DPMU_SYSREG(3, 3, 14, 12 + ((n) >> 3), (n) & 7)
#define PMCCFILTR DPMU_SYSREG(3, 3, 14, 15, 7)

#define E (1u << 0)
#define CC (1u << 31)
#define SW_INCR 0x00
#define INST_RETIRED 0x08
#define L1D_CACHE_REFILL 0x03

static const struct dpmu_core_type *type_of(struct dpmu_model *m, unsigned core)
{
	const struct dpmu_profile *p = dpmu_model_profile(m);
	unsigned cl = dpmu_model_core_cluster(m, core), first = 0;
	for (unsigned i = 0; i < cl; i++)
		first += p->clusters[i].ncores;
	return &p->core_types[p->clusters[cl].core_type[core - first]];
}

static bool implements(const struct dpmu_core_type *t, unsigned ev)
{
	for (size_t i = 0; i < t->n_events; i++)
		if (t->events[i] == ev)
			return true;
	return false;
}

static unsigned pmcr_n(struct dpmu_model *m, unsigned core)
{
	return (unsigned)(conf_rd(m, core, PMCR) >> 11) & 0x1f;
}

/* Reference section 1: PMCNTENSET and PMCNTENCLR both read the one enable
 * mask; SET writes 1 to enable, CLR writes 1 to disable. */
static void PMCNTENSET_and_PMCNTENCLR_read_the_same_enable_mask(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMCNTENSET, 0x5u | CC);
	assert_int_equal(conf_rd(m, 0, PMCNTENSET), 0x5u | CC);
	assert_int_equal(conf_rd(m, 0, PMCNTENCLR), 0x5u | CC);
	conf_wr(m, 0, PMCNTENCLR, 0x1u);
	assert_int_equal(conf_rd(m, 0, PMCNTENSET), 0x4u | CC);
	conf_wr(m, 0, PMCNTENSET, 0); /* writing 0 changes nothing */
	assert_int_equal(conf_rd(m, 0, PMCNTENCLR), 0x4u | CC);
	dpmu_model_destroy(m);
}

/* Reference section 1: bits of counters >= PMCR.N are RAZ/WI. */
static void PMCNTEN_bits_of_unimplemented_counters_are_RAZ_WI(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	unsigned n = pmcr_n(m, 0);
	conf_wr(m, 0, PMCNTENSET, 0xffffffffu);
	assert_int_equal(conf_rd(m, 0, PMCNTENSET), ((1u << n) - 1) | CC);
	dpmu_model_destroy(m);
}

/* Reference section 1 "Counting and overflow": counter n counts when
 * PMCR.E = 1 and PMCNTENSET[n] = 1, not otherwise. */
static void Event_counter_counts_only_when_PMCR_E_and_enabled(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMEVTYPER(0), INST_RETIRED);
	conf_wr(m, 0, PMEVTYPER(1), INST_RETIRED);
	dpmu_model_core_event(m, 0, INST_RETIRED, 5); /* E = 0, not enabled */
	conf_wr(m, 0, PMCNTENSET, 0x1);
	dpmu_model_core_event(m, 0, INST_RETIRED, 5); /* E = 0 */
	conf_wr(m, 0, PMCR, E);
	dpmu_model_core_event(m, 0, INST_RETIRED, 7);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 7);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(1)), 0); /* not enabled */
	dpmu_model_core_event(m, 0, L1D_CACHE_REFILL, 3); /* another event */
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 7);
	dpmu_model_destroy(m);
}

/* Reference section 1: a counter programmed with an event the core does
 * not implement never counts, but stays readable and writable. */
static void Unimplemented_event_never_counts_but_counter_stays_readable_writable(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	const struct dpmu_core_type *t = type_of(m, 0);
	unsigned ev = 0x01;
	while (ev < 0xffff && (implements(t, ev) || ev == 0x11 || ev == 0x1e))
		ev++;
	assert_false(implements(t, ev));
	conf_wr(m, 0, PMEVTYPER(2), ev);
	assert_int_equal(conf_rd(m, 0, PMEVTYPER(2)), ev);
	conf_wr(m, 0, PMCNTENSET, 1u << 2);
	conf_wr(m, 0, PMCR, E);
	conf_wr(m, 0, PMEVCNTR(2), 100);
	dpmu_model_core_event(m, 0, (uint16_t)ev, 50);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(2)), 100);
	conf_wr(m, 0, PMEVCNTR(2), 0xabcd);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(2)), 0xabcd);
	dpmu_model_destroy(m);
}

/* Reference section 1: event counters are 32-bit before PMUv3p5; the
 * upper half of PMEVCNTR<n>_EL0 reads 0. */
static void Event_counters_are_32_bit_before_PMUv3p5(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMEVCNTR(0), 0x123456789abcdef0ull);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 0x9abcdef0ull);
	conf_wr(m, 0, PMEVCNTR(0), 0xffffffffull);
	conf_wr(m, 0, PMEVTYPER(0), INST_RETIRED);
	conf_wr(m, 0, PMCNTENSET, 1);
	conf_wr(m, 0, PMCR, E);
	dpmu_model_core_event(m, 0, INST_RETIRED, 2);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 1);
	dpmu_model_destroy(m);
}

/* Reference section 1: with PMUv3p5 event counters are 64-bit. */
static void Event_counters_are_64_bit_with_PMUv3p5(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model_p5();
	conf_wr(m, 0, PMEVCNTR(0), 0x123456789abcdef0ull);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 0x123456789abcdef0ull);
	conf_wr(m, 0, PMEVCNTR(1), 0xffffffffull);
	conf_wr(m, 0, PMEVTYPER(1), INST_RETIRED);
	conf_wr(m, 0, PMCNTENSET, 2);
	conf_wr(m, 0, PMCR, E);
	dpmu_model_core_event(m, 0, INST_RETIRED, 2);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(1)), 0x100000001ull);
	dpmu_model_destroy(m);
}

/* Reference section 1: PMCCNTR_EL0 is a 64-bit counter whatever PMCR.LC
 * (LC chooses only where overflow is signalled). */
static void Cycle_counter_is_64_bit(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMCCNTR, 0xfffffffeull);
	conf_wr(m, 0, PMCNTENSET, CC);
	conf_wr(m, 0, PMCR, E);
	dpmu_model_core_cycles(m, 0, 4);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 0x100000002ull);
	conf_wr(m, 0, PMCCNTR, 0x0123456789abcdefull);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 0x0123456789abcdefull);
	dpmu_model_destroy(m);
}

/* Reference section 1: PMXEVTYPER/PMXEVCNTR reach the counter PMSELR.SEL
 * selects. */
static void PMXEVTYPER_and_PMXEVCNTR_reach_the_counter_PMSELR_selects(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMSELR, 3);
	assert_int_equal(conf_rd(m, 0, PMSELR), 3);
	conf_wr(m, 0, PMXEVTYPER, INST_RETIRED);
	conf_wr(m, 0, PMXEVCNTR, 4242);
	assert_int_equal(conf_rd(m, 0, PMEVTYPER(3)), INST_RETIRED);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(3)), 4242);
	conf_wr(m, 0, PMEVCNTR(3), 17);
	assert_int_equal(conf_rd(m, 0, PMXEVCNTR), 17);
	dpmu_model_destroy(m);
}

/* Reference section 1: PMSELR.SEL = 31 makes PMXEVTYPER reach PMCCFILTR. */
static void PMXEVTYPER_with_SEL_31_reaches_PMCCFILTR(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMSELR, 31);
	conf_wr(m, 0, PMXEVTYPER, 1u << 31); /* P */
	assert_int_equal(conf_rd(m, 0, PMCCFILTR), 1u << 31);
	conf_wr(m, 0, PMCCFILTR, 1u << 30);
	assert_int_equal(conf_rd(m, 0, PMXEVTYPER), 1u << 30);
	dpmu_model_destroy(m);
}

/* Reference section 1: PMXEVCNTR with SEL = 31, and PMXEVCNTR/PMXEVTYPER
 * with N <= SEL < 31, are RAZ/WI. */
static void PMXEVCNTR_with_SEL_31_or_SEL_at_least_N_is_RAZ_WI(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	unsigned n = pmcr_n(m, 0);
	conf_wr(m, 0, PMCCNTR, 555);
	conf_wr(m, 0, PMSELR, 31);
	conf_wr(m, 0, PMXEVCNTR, 1000);
	assert_int_equal(conf_rd(m, 0, PMXEVCNTR), 0);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 555);
	conf_wr(m, 0, PMSELR, n);
	conf_wr(m, 0, PMXEVCNTR, 1000);
	conf_wr(m, 0, PMXEVTYPER, INST_RETIRED);
	assert_int_equal(conf_rd(m, 0, PMXEVCNTR), 0);
	assert_int_equal(conf_rd(m, 0, PMXEVTYPER), 0);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(conf_rd(m, 0, PMEVCNTR(i)), 0);
		assert_int_equal(conf_rd(m, 0, PMEVTYPER(i)), 0);
	}
	dpmu_model_destroy(m);
}

/* Reference section 1: PMEVTYPER keeps P U NSK NSU NSH M and evtCount
 * [15:0]; every other bit is RES0. */
static void PMEVTYPER_stores_filter_bits_and_evtCount_only(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMEVTYPER(0), 0xffffffffffffffffull);
	assert_int_equal(conf_rd(m, 0, PMEVTYPER(0)), 0xfc00ffffull);
	dpmu_model_destroy(m);
}

/* Reference section 1: PMCCFILTR has the filter bits, no event field. */
static void PMCCFILTR_stores_filter_bits_only(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMCCFILTR, 0xffffffffffffffffull);
	assert_int_equal(conf_rd(m, 0, PMCCFILTR), 0xfc000000ull);
	dpmu_model_destroy(m);
}

/* Reference section 1: a PMSWINC write of bit n increments counter n if it
 * counts SW_INCR, is enabled and not filtered; other counters ignore it. */
static void PMSWINC_increments_enabled_SW_INCR_counters_only(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	assert_true(implements(type_of(m, 0), SW_INCR));
	conf_wr(m, 0, PMEVTYPER(0), SW_INCR);
	conf_wr(m, 0, PMEVTYPER(1), SW_INCR);
	conf_wr(m, 0, PMEVTYPER(2), INST_RETIRED);
	conf_wr(m, 0, PMEVTYPER(3), SW_INCR | (1u << 31)); /* P: excluded at EL1 */
	conf_wr(m, 0, PMCNTENSET, 0x1 | 0x4 | 0x8);          /* counter 1 disabled */
	conf_wr(m, 0, PMCR, E);
	conf_wr(m, 0, PMSWINC, 0xf);
	conf_wr(m, 0, PMSWINC, 0x1);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 2);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(1)), 0);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(2)), 0);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(3)), 0);
	/* SW_INCR cannot be delivered as an ordinary event. */
	dpmu_model_core_event(m, 0, SW_INCR, 10);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 2);
	dpmu_model_destroy(m);
}

/* Reference section 1: PMCEID0[31:0] events 0x00-0x1F, PMCEID1[31:0]
 * 0x20-0x3F, PMCEID0[63:32] 0x4000-0x401F, PMCEID1[63:32] 0x4020-0x403F,
 * a bit set exactly when the core type implements the event. */
static void PMCEID_bits_match_the_events_the_profile_implements(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	for (unsigned core = 0; core < dpmu_model_ncores(m); core++) {
		const struct dpmu_core_type *t = type_of(m, core);
		uint64_t id[2] = { conf_rd(m, core, PMCEID0), conf_rd(m, core, PMCEID1) };
		for (unsigned k = 0; k < 128; k++) {
			unsigned reg = (k >> 5) & 1, bit = (k & 31) + (k >= 64 ? 32 : 0);
			unsigned ev = (k >= 64 ? 0x4000 : 0) + (k & 63);
			if (((id[reg] >> bit) & 1) != implements(t, ev))
				fail_msg("cpu%u PMCEID%u bit %u (event 0x%x) is %u", core, reg, bit,
					 ev, (unsigned)((id[reg] >> bit) & 1));
		}
	}
	dpmu_model_destroy(m);
}

/* Arm ARM: PMCEID0/1_EL0 have no MSR form, PMSWINC_EL0 no MRS form; such
 * accesses are UNDEFINED. */
static void PMCEID_is_read_only_and_PMSWINC_write_only(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	uint64_t v = 0;
	assert_int_equal(dpmu_model_sysreg_write(m, 0, PMCEID0, 0).kind, DPMU_ACCESS_UNDEF);
	assert_int_equal(dpmu_model_sysreg_write(m, 0, PMCEID1, 0).kind, DPMU_ACCESS_UNDEF);
	assert_int_equal(dpmu_model_sysreg_read(m, 0, PMSWINC, &v).kind, DPMU_ACCESS_UNDEF);
	dpmu_model_destroy(m);
}

/* Arm ARM PMEVCNTR<n>_EL0 / PMEVTYPER<n>_EL0 accessibility: n >= PMCR.N is
 * UNDEFINED (checked before any trap, at every EL). */
static void PMEVCNTR_and_PMEVTYPER_n_at_least_N_are_UNDEFINED(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	struct dpmu_err err;
	unsigned n = pmcr_n(m, 0);
	uint64_t v = 0;
	for (unsigned el = 0; el <= 3; el++) {
		assert_int_equal(dpmu_model_set_el(m, 0, el, el == 3 ? DPMU_SECURE : DPMU_NONSECURE,
						   &err), 0);
		for (unsigned i = n; i < 31; i++) {
			assert_int_equal(dpmu_model_sysreg_read(m, 0, PMEVCNTR(i), &v).kind,
					 DPMU_ACCESS_UNDEF);
			assert_int_equal(dpmu_model_sysreg_write(m, 0, PMEVTYPER(i), 0).kind,
					 DPMU_ACCESS_UNDEF);
		}
	}
	dpmu_model_destroy(m);
}

/* model.h: a core in WFI/WFE is clock-gated; nothing counts. */
static void Events_on_a_WFI_core_do_not_count(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	struct dpmu_err err;
	conf_wr(m, 0, PMEVTYPER(0), INST_RETIRED);
	conf_wr(m, 0, PMCNTENSET, 1u | CC);
	conf_wr(m, 0, PMCR, E);
	assert_int_equal(dpmu_model_set_wfi(m, 0, true, &err), 0);
	dpmu_model_core_event(m, 0, INST_RETIRED, 9);
	dpmu_model_core_cycles(m, 0, 99);
	assert_int_equal(dpmu_model_set_wfi(m, 0, false, &err), 0);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 0);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 0);
	dpmu_model_core_event(m, 0, INST_RETIRED, 9);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 9);
	dpmu_model_destroy(m);
}

/* model.h: a powered-down core counts nothing (no overflow, no interrupt)
 * and, executing nothing, cannot access its registers (UNDEFINED). */
static void Events_on_a_powered_down_core_do_not_count(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	struct dpmu_err err;
	uint64_t v = 0;
	conf_wr(m, 0, PMEVTYPER(0), INST_RETIRED);
	conf_wr(m, 0, PMEVCNTR(0), 0xffffffffu);
	conf_wr(m, 0, PMCNTENSET, 1u);
	conf_wr(m, 0, DPMU_SYSREG(3, 0, 9, 14, 1), 1u); /* PMINTENSET */
	conf_wr(m, 0, PMCR, E);
	assert_int_equal(dpmu_model_set_power(m, 0, false, &err), 0);
	dpmu_model_core_event(m, 0, INST_RETIRED, 5);
	dpmu_model_core_cycles(m, 0, 5);
	assert_false(dpmu_model_core_irq(m, 0)); /* no overflow happened */
	assert_int_equal(dpmu_model_sysreg_read(m, 0, PMEVCNTR(0), &v).kind, DPMU_ACCESS_UNDEF);
	assert_int_equal(dpmu_model_sysreg_write(m, 0, PMCR, 0).kind, DPMU_ACCESS_UNDEF);
	assert_int_equal(dpmu_model_set_power(m, 0, true, &err), 0);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 0); /* Cold reset */
	dpmu_model_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(PMCNTENSET_and_PMCNTENCLR_read_the_same_enable_mask),
		cmocka_unit_test(PMCNTEN_bits_of_unimplemented_counters_are_RAZ_WI),
		cmocka_unit_test(Event_counter_counts_only_when_PMCR_E_and_enabled),
		cmocka_unit_test(Unimplemented_event_never_counts_but_counter_stays_readable_writable),
		cmocka_unit_test(Event_counters_are_32_bit_before_PMUv3p5),
		cmocka_unit_test(Event_counters_are_64_bit_with_PMUv3p5),
		cmocka_unit_test(Cycle_counter_is_64_bit),
		cmocka_unit_test(PMXEVTYPER_and_PMXEVCNTR_reach_the_counter_PMSELR_selects),
		cmocka_unit_test(PMXEVTYPER_with_SEL_31_reaches_PMCCFILTR),
		cmocka_unit_test(PMXEVCNTR_with_SEL_31_or_SEL_at_least_N_is_RAZ_WI),
		cmocka_unit_test(PMEVTYPER_stores_filter_bits_and_evtCount_only),
		cmocka_unit_test(PMCCFILTR_stores_filter_bits_only),
		cmocka_unit_test(PMSWINC_increments_enabled_SW_INCR_counters_only),
		cmocka_unit_test(PMCEID_bits_match_the_events_the_profile_implements),
		cmocka_unit_test(PMCEID_is_read_only_and_PMSWINC_write_only),
		cmocka_unit_test(PMEVCNTR_and_PMEVTYPER_n_at_least_N_are_UNDEFINED),
		cmocka_unit_test(Events_on_a_WFI_core_do_not_count),
		cmocka_unit_test(Events_on_a_powered_down_core_do_not_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
