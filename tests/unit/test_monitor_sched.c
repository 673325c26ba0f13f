/*
 * Monitor methods: perf's event syntax, rotation (seed 003 section 4.2)
 * with perf's scaling (reference section 7: value x enabled / running),
 * groups scheduled whole, CHAIN pairs for 64-bit counts (reference
 * section 1), no lost 32-bit wrap (seed 003 section 8.3), interval
 * snapshots whose sums equal the totals (seed 001 section 4.1), and the
 * --purpose intervals (seed 001 section 5.2). Counts are delivered to the
 * model and read back through the driver by the monitor.
 */
#include "unit/monitor_fixture.h"
#define MUX 1000u

static void parse_ok(struct fixture *f, const char *list)
{
	int rc = dpmu_mon_events_parse(list, f->p, CPU0, &f->ev, &f->err);
	if (rc)
		fail_msg("%s: %s", list, f->err.msg);
}

static void parse_fails(struct fixture *f, const char *list, int code, const char *msg)
{
	assert_int_equal(dpmu_mon_events_parse(list, f->p, CPU0, &f->ev, &f->err), code);
	if (!strstr(f->err.msg, msg))
		fail_msg("'%s': message '%s' lacks '%s'", list, f->err.msg, msg);
}

/* perf's generic names map as Linux's arm_pmuv3 driver maps them. */
static void perf_generic_names_map_to_arm_events(void **state)
{
	(void)state;
	struct fixture *f = open_default();
	parse_ok(f, "cycles,instructions,branches,branch-misses,cache-references,cache-misses,"
		    "L1-dcache-load-misses,L1-icache-load-misses,dTLB-load-misses,iTLB-load-misses,"
		    "bus-cycles,stalled-cycles-frontend,stalled-cycles-backend");
	const char *want[] = {"CPU_CYCLES", "INST_RETIRED", "BR_RETIRED", "BR_MIS_PRED",
			      "L1D_CACHE", "L1D_CACHE_REFILL", "L1D_CACHE_REFILL",
			      "L1I_CACHE_REFILL", "L1D_TLB_REFILL", "L1I_TLB_REFILL", "BUS_CYCLES",
			      "STALL_FRONTEND", "STALL_BACKEND"};
	assert_int_equal(f->ev.n, 13);
	for (unsigned i = 0; i < 13; i++) {
		assert_string_equal(f->ev.ev[i].name, want[i]);
		/* "cycles" is the core's CPU_CYCLES, not the DSU's CYCLES */
		assert_int_equal(f->ev.ev[i].target, DPMU_MON_CORE);
	}
	assert_int_equal(f->ev.ev[0].code[0], 0x11);
	assert_int_equal(f->ev.ev[2].code[0], 0x21);
	close_fixture(f);
}

/* :u / :k are the PMEVTYPER filters (reference section 1); groups. */
static void modifiers_and_groups_parse(void **state)
{
	(void)state;
	struct fixture *f = open_default();
	parse_ok(f, "inst_retired:u,cycles:k,{l1d_cache,l1d_cache_refill}:u,core/br_retired/k,"
		    "amu/cpu_cycles/,l3d_cache");
	assert_int_equal(f->ev.n, 7);
	assert_string_equal(f->ev.ev[0].name, "INST_RETIRED:u");
	assert_int_equal(f->ev.ev[0].els, DPMU_DRV_EL0);
	assert_int_equal(f->ev.ev[1].els, DPMU_DRV_EL1);
	assert_true(f->ev.ev[2].grouped && f->ev.ev[3].grouped);
	assert_int_equal(f->ev.ev[2].group, f->ev.ev[3].group);
	assert_int_equal(f->ev.ev[3].els, DPMU_DRV_EL0);
	assert_string_equal(f->ev.ev[4].name, "BR_RETIRED:k");
	assert_int_equal(f->ev.ev[5].target, DPMU_MON_AMU);
	assert_string_equal(f->ev.ev[5].name, "amu:CPU_CYCLES");
	assert_int_equal(f->ev.ev[6].target, DPMU_MON_CLUSTER);
	assert_int_equal(f->ev.ev[6].els, DPMU_DRV_EL01); /* no modifier: EL0 and EL1 */
	assert_int_equal(f->ev.ngroups, 6);
	close_fixture(f);
}

static void bad_event_syntax_is_named(void **state)
{
	(void)state;
	struct fixture *f = open_default();
	parse_fails(f, "{inst_retired,cycles", DPMU_EINVAL, "unbalanced '{'");
	parse_fails(f, "inst_retired,cycles}", DPMU_EINVAL, "unbalanced '}'");
	parse_fails(f, "{inst_retired,{cycles}}", DPMU_EINVAL, "groups cannot nest");
	parse_fails(f, "{}", DPMU_EINVAL, "empty group");
	parse_fails(f, "cycles:x", DPMU_EINVAL, "event 'cycles:x': unknown modifier 'x' (use u, k or h)");
	parse_fails(f, "cycles:", DPMU_EINVAL, "empty modifier");
	parse_fails(f, "l3d_cache:u", DPMU_EINVAL, "the cluster PMU cannot filter by exception level");
	parse_fails(f, "amu/cpu_cycles/u", DPMU_EINVAL, "Activity Monitors cannot filter");
	parse_fails(f, "cylces", DPMU_ENOENT, "unknown event 'cylces' (did you mean cycles?)");
	parse_fails(f, "l1d_cahce", DPMU_ENOENT, "unknown event 'l1d_cahce' (did you mean l1d_cache?)");
	parse_fails(f, "amu/l3d_cache/", DPMU_ENOENT, "unknown event 'l3d_cache'");
	close_fixture(f);
}

static void scaling_is_value_times_enabled_over_running(void **state)
{
	(void)state;
	/* reference section 7; hand-computed */
	struct dpmu_mon_count c = {true, 300, 1000, 300};
	assert_int_equal(dpmu_mon_scaled(&c), 1000);
	c = (struct dpmu_mon_count){true, 1, 3, 2};
	assert_int_equal(dpmu_mon_scaled(&c), 2); /* 1.5 rounds to 2 */
	c = (struct dpmu_mon_count){true, 777, 500, 500};
	assert_int_equal(dpmu_mon_scaled(&c), 777);
	c = (struct dpmu_mon_count){true, 5, 500, 0};
	assert_int_equal(dpmu_mon_scaled(&c), 0); /* <not counted> */
}

static const uint16_t twelve_codes[12] = {0x08, 0x21, 0x04, 0x03, 0x16, 0x17,
					  0x13, 0x14, 0x01, 0x1b, 0x19, 0x10};
#define TWELVE "inst_retired,br_retired,l1d_cache,l1d_cache_refill,l2d_cache,l2d_cache_refill," \
	       "mem_access,l1i_cache,l1i_cache_refill,inst_spec,core/bus_access/,br_mis_pred"

/* Seed 003 section 4.2: twelve events on six counters take turns of six;
 * after four periods each ran two, and the estimate is exact for a
 * constant rate. */
static void rotation_gives_every_event_a_fair_share(void **state)
{
	(void)state;
	struct fixture *f = open_default();
	parse_ok(f, TWELVE);
	struct dpmu_mon_options opt = {.mux_ns = MUX};
	struct dpmu_mon_session *s;
	assert_int_equal(dpmu_mon_session_create_opts(f->drv, f->p, &f->ev, CPU0, &opt, &s, &f->err), 0);
	const struct dpmu_mon_pmu *pmu = dpmu_mon_session_pmu(s, DPMU_MON_CORE, 0);
	assert_true(pmu->rotates);
	assert_int_equal(dpmu_mon_start(s, 0, &f->err), 0);
	for (unsigned period = 0; period < 4; period++) {
		for (unsigned i = 0; i < 12; i++)
			dpmu_model_core_event(f->m, 0, twelve_codes[i], 100 + i);
		assert_int_equal(dpmu_mon_poll(s, (period + 1) * MUX, &f->err), 0);
	}
	assert_int_equal(dpmu_mon_stop(s, 4 * MUX, &f->err), 0);
	assert_true(pmu->rotations >= 3);
	for (unsigned i = 0; i < 12; i++) {
		struct dpmu_mon_count c;
		assert_int_equal(dpmu_mon_count_on(s, i, 0, &c), 0);
		assert_true(c.supported);
		assert_int_equal(c.enabled_ns, 4 * MUX);
		assert_int_equal(c.running_ns, 2 * MUX);
		assert_int_equal(c.value, 2 * (100 + i));
		assert_int_equal(dpmu_mon_scaled(&c), 4 * (100 + i));
	}
	dpmu_mon_session_destroy(s);
	close_fixture(f);
}

/* A group goes on whole or not at all: two groups of four on six counters
 * alternate; no turn mixes them. */
static void groups_are_always_scheduled_together(void **state)
{
	(void)state;
	struct fixture *f = open_default();
	parse_ok(f, "{inst_retired,br_retired,l1d_cache,l1d_cache_refill},"
		    "{l2d_cache,l2d_cache_refill,mem_access,l1i_cache}");
	struct dpmu_mon_options opt = {.mux_ns = MUX};
	struct dpmu_mon_session *s;
	assert_int_equal(dpmu_mon_session_create_opts(f->drv, f->p, &f->ev, CPU0, &opt, &s, &f->err), 0);
	const struct dpmu_mon_pmu *pmu = dpmu_mon_session_pmu(s, DPMU_MON_CORE, 0);
	assert_int_equal(dpmu_mon_start(s, 0, &f->err), 0);
	for (unsigned turn = 0; turn < 4; turn++) {
		unsigned on_first = 0, on_second = 0;
		for (unsigned i = 0; i < 8; i++)
			if (pmu->counter[i] != DPMU_MON_UNSCHEDULED)
				*(i < 4 ? &on_first : &on_second) += 1;
		assert_true((on_first == 4 && on_second == 0) || (on_first == 0 && on_second == 4));
		assert_int_equal(on_first, turn % 2 == 0 ? 4 : 0);
		assert_int_equal(dpmu_mon_poll(s, (turn + 1) * MUX, &f->err), 0);
	}
	assert_int_equal(dpmu_mon_stop(s, 4 * MUX, &f->err), 0);
	struct dpmu_mon_count a, b;
	dpmu_mon_count_on(s, 0, 0, &a);
	dpmu_mon_count_on(s, 3, 0, &b);
	assert_int_equal(a.running_ns, b.running_ns); /* members share their running time */
	dpmu_mon_session_destroy(s);
	close_fixture(f);
}

/* --long: CHAIN on the odd counter makes a 64-bit pair (reference section
 * 1), so more than 2^33 events with no read in between come back exact. */
static void chained_pair_counts_past_two_to_the_33(void **state)
{
	(void)state;
	struct fixture *f = open_default();
	parse_ok(f, "inst_retired,l1d_cache");
	struct dpmu_mon_options opt = {.long_counters = true};
	struct dpmu_mon_session *s;
	assert_int_equal(dpmu_mon_session_create_opts(f->drv, f->p, &f->ev, CPU0, &opt, &s, &f->err), 0);
	const struct dpmu_mon_pmu *pmu = dpmu_mon_session_pmu(s, DPMU_MON_CORE, 0);
	assert_int_equal(pmu->need[0], 2);
	assert_int_equal(pmu->counter[0], 0);
	assert_int_equal(pmu->counter[1], 2);
	assert_int_equal(dpmu_mon_start(s, 0, &f->err), 0);
	uint64_t want = (UINT64_C(1) << 33) + 12345;
	for (uint64_t left = want; left;) {
		uint64_t n = left > (UINT64_C(1) << 31) ? UINT64_C(1) << 31 : left;
		dpmu_model_core_event(f->m, 0, 0x08, n);
		left -= n;
	}
	dpmu_model_core_event(f->m, 0, 0x04, 7);
	assert_int_equal(dpmu_mon_stop(s, 10, &f->err), 0);
	struct dpmu_mon_count c;
	assert_int_equal(dpmu_mon_count_on(s, 0, 0, &c), 0);
	assert_true(c.value == want);
	assert_int_equal(dpmu_mon_count_on(s, 1, 0, &c), 0);
	assert_int_equal(c.value, 7);
	dpmu_mon_session_destroy(s);
	close_fixture(f);
}

/* Without --long a 32-bit counter read after one wrap and more (5e9 events,
 * seed 003 section 8.3's ~4 s at 1 GHz and beyond) is still exact: its
 * overflow flag says it wrapped. */
static void overflow_flag_keeps_a_wrap_between_reads(void **state)
{
	(void)state;
	struct fixture *f = open_default();
	parse_ok(f, "inst_retired");
	struct dpmu_mon_session *s;
	assert_int_equal(dpmu_mon_session_create(f->drv, f->p, &f->ev, CPU0, &s, &f->err), 0);
	assert_int_equal(dpmu_mon_start(s, 0, &f->err), 0);
	/* the overflow interrupt is armed, so a backend calls the monitor */
	dpmu_model_core_event(f->m, 0, 0x08, UINT64_C(1) << 32);
	assert_true(dpmu_model_core_irq(f->m, 0));
	assert_int_equal(dpmu_mon_poll(s, 1, &f->err), 0);
	assert_false(dpmu_model_core_irq(f->m, 0)); /* handled: PMOVSSET cleared */
	dpmu_model_core_event(f->m, 0, 0x08, UINT64_C(5000000000));
	assert_int_equal(dpmu_mon_stop(s, 2, &f->err), 0);
	struct dpmu_mon_count c;
	assert_int_equal(dpmu_mon_count_on(s, 0, 0, &c), 0);
	assert_true(c.value == (UINT64_C(1) << 32) + UINT64_C(5000000000));
	dpmu_mon_session_destroy(s);
	close_fixture(f);
}

struct sums {
	uint64_t value[16];
	uint64_t running[16];
	unsigned calls;
	uint64_t last_t1;
};

static int add_interval(void *ctx, const struct dpmu_mon_session *s, uint64_t t0, uint64_t t1,
			struct dpmu_err *err)
{
	(void)err;
	struct sums *sum = ctx;
	sum->calls++;
	assert_int_equal(t0, sum->last_t1);
	sum->last_t1 = t1;
	const struct dpmu_mon_events *ev = dpmu_mon_session_events(s);
	for (unsigned i = 0; i < ev->n && i < 16; i++) {
		struct dpmu_mon_count c;
		unsigned unit = 0; /* cpu0 and cluster0 */
		assert_int_equal(dpmu_mon_interval_count(s, i, unit, &c), 0);
		assert_int_equal(c.enabled_ns, t1 - t0);
		sum->value[i] += c.value;
		sum->running[i] += c.running_ns;
	}
	return 0;
}

/* Seed 001 section 4.1: a snapshot per interval with PMSSRR resetting the
 * counters; the intervals add up to the totals, also while rotating. */
static void interval_sums_equal_totals(void **state)
{
	(void)state;
	struct fixture *f = open_default();
	parse_ok(f, "cycles,inst_retired,l3d_cache,br_retired,l1d_cache,l1d_cache_refill,l2d_cache,"
		    "l2d_cache_refill,mem_access");
	struct sums sum = {0};
	struct dpmu_mon_options opt = {.mux_ns = 700, .interval_ns = 1000, .on_interval = add_interval,
				       .ctx = &sum};
	struct dpmu_mon_session *s;
	assert_int_equal(dpmu_mon_session_create_opts(f->drv, f->p, &f->ev, CPU0, &opt, &s, &f->err), 0);
	assert_int_equal(dpmu_mon_start(s, 0, &f->err), 0);
	for (unsigned k = 1; k <= 35; k++) {
		dpmu_model_core_cycles(f->m, 0, 1000 + k);
		dpmu_model_core_event(f->m, 0, 0x08, 3 * k);
		dpmu_model_core_event(f->m, 0, 0x21, k);
		dpmu_model_core_event(f->m, 0, 0x04, 2 * k);
		dpmu_model_core_event(f->m, 0, 0x16, 5);
		dpmu_model_cluster_event(f->m, 0, 0x2b, k);
		assert_int_equal(dpmu_mon_poll(s, k * 100, &f->err), 0);
	}
	assert_int_equal(dpmu_mon_stop(s, 3550, &f->err), 0);
	assert_int_equal(sum.calls, 4); /* 3 whole intervals and the partial last */
	assert_int_equal(dpmu_mon_session_intervals(s), 4);
	assert_int_equal(sum.last_t1, 3550);
	for (unsigned i = 0; i < f->ev.n; i++) {
		struct dpmu_mon_count c;
		assert_int_equal(dpmu_mon_count_on(s, i, 0, &c), 0);
		assert_true(c.value == sum.value[i]);
		assert_true(c.running_ns == sum.running[i]);
	}
	struct dpmu_mon_count c;
	dpmu_mon_count_on(s, 0, 0, &c); /* cycles: never rotated out */
	assert_int_equal(c.value, 35 * 1000 + 35 * 36 / 2);
	dpmu_mon_count_on(s, 2, 0, &c);
	assert_int_equal(c.value, 35 * 36 / 2);
	dpmu_mon_session_destroy(s);
	close_fixture(f);
}

/* Seed 001 section 5.2's ranges, one value in each. */
static void purposes_pick_a_value_in_the_seed_range(void **state)
{
	(void)state;
	const uint64_t ms = 1000000;
	uint64_t v = dpmu_mon_purpose_interval("power");
	assert_true(v >= 100 * ms && v <= 500 * ms);
	v = dpmu_mon_purpose_interval("tuning");
	assert_true(v >= 10 * ms && v <= 50 * ms);
	v = dpmu_mon_purpose_interval("Locks");
	assert_true(v >= 1 * ms && v <= 5 * ms);
	assert_int_equal(dpmu_mon_purpose_interval("speed"), 0);
	assert_int_equal(dpmu_mon_purpose_interval(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perf_generic_names_map_to_arm_events),
		cmocka_unit_test(modifiers_and_groups_parse),
		cmocka_unit_test(bad_event_syntax_is_named),
		cmocka_unit_test(scaling_is_value_times_enabled_over_running),
		cmocka_unit_test(rotation_gives_every_event_a_fair_share),
		cmocka_unit_test(groups_are_always_scheduled_together),
		cmocka_unit_test(chained_pair_counts_past_two_to_the_33),
		cmocka_unit_test(overflow_flag_keeps_a_wrap_between_reads),
		cmocka_unit_test(interval_sums_equal_totals),
		cmocka_unit_test(purposes_pick_a_value_in_the_seed_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
