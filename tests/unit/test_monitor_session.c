/*
 * Monitor: event lists against the catalogs of each core type and cluster,
 * counter assignment across core types (a75x4-a55x4: cpu0-3 Cortex-A75,
 * cpu4-7 Cortex-A55, one classic DSU), the too-many-events error, and
 * counts read back through the driver from the model.
 */
#include "unit/monitor_fixture.h"
#define CPU4 (UINT64_C(1) << 4)

static void names_are_case_insensitive_and_canonical(void **state)
{
	(void)state;
	struct fixture *f = open_profile("a75x4-a55x4");
	assert_int_equal(dpmu_mon_events_parse("inst_retired, Cpu_Cycles ,L1D_CACHE_REFILL",
					       f->p, CPU0, &f->ev, &f->err),
			 0);
	assert_int_equal(f->ev.n, 3);
	assert_string_equal(f->ev.ev[0].name, "INST_RETIRED");
	assert_int_equal(f->ev.ev[0].target, DPMU_MON_CORE);
	assert_int_equal(f->ev.ev[0].code[0], 0x08);
	assert_string_equal(f->ev.ev[1].name, "CPU_CYCLES");
	assert_int_equal(f->ev.ev[1].code[0], 0x11);
	assert_int_equal(f->ev.ev[2].code[0], 0x03);
	close_fixture(f);
}

static void raw_codes_go_on_the_core_pmu(void **state)
{
	(void)state;
	struct fixture *f = open_profile("a75x4-a55x4");
	assert_int_equal(dpmu_mon_events_parse("r1b,0x1B,cluster/r2b/", f->p, CPU0 | CPU4, &f->ev,
					       &f->err),
			 0);
	assert_int_equal(f->ev.n, 3);
	assert_true(f->ev.ev[0].raw);
	assert_string_equal(f->ev.ev[0].name, "r1b");
	assert_string_equal(f->ev.ev[1].name, "r1b");
	assert_int_equal(f->ev.ev[0].target, DPMU_MON_CORE);
	assert_int_equal(f->ev.ev[0].code[0], 0x1b);
	assert_int_equal(f->ev.ev[0].code[1], 0x1b);
	assert_int_equal(f->ev.ev[2].target, DPMU_MON_CLUSTER);
	assert_int_equal(f->ev.ev[2].cluster_code[0], 0x2b);
	close_fixture(f);
}

static void cluster_catalog_names_go_on_the_cluster_pmu(void **state)
{
	(void)state;
	struct fixture *f = open_profile("a75x4-a55x4");
	/* L3D_CACHE is in both the A75 and the DSU catalog: the cluster PMU
	 * counts it unless core/ asks for the core's view. */
	assert_int_equal(dpmu_mon_events_parse("l3d_cache,core/l3d_cache/,cluster/CYCLES/", f->p,
					       CPU0, &f->ev, &f->err),
			 0);
	assert_int_equal(f->ev.ev[0].target, DPMU_MON_CLUSTER);
	assert_int_equal(f->ev.ev[0].cluster_code[0], 0x2b);
	assert_int_equal(f->ev.ev[1].target, DPMU_MON_CORE);
	assert_int_equal(f->ev.ev[1].code[0], 0x2b);
	assert_int_equal(f->ev.ev[2].target, DPMU_MON_CLUSTER);
	close_fixture(f);

	f = open_profile("a75x4-a55x4-dsu120");
	assert_int_equal(dpmu_mon_events_parse("L3_ACCESS,l3_miss", f->p, CPU0, &f->ev, &f->err), 0);
	assert_int_equal(f->ev.ev[0].target, DPMU_MON_CLUSTER);
	assert_int_equal(f->ev.ev[0].cluster_code[0], 0x4000);
	assert_int_equal(f->ev.ev[1].cluster_code[0], 0x4001);
	/* The classic name does not exist in the DSU-120 numbering. */
	assert_int_equal(dpmu_mon_events_parse("cluster/L3D_CACHE/", f->p, CPU0, &f->ev, &f->err),
			 DPMU_ENOENT);
	close_fixture(f);
}

static void unknown_events_suggest_the_nearest_name(void **state)
{
	(void)state;
	struct fixture *f = open_profile("a75x4-a55x4");
	assert_int_equal(dpmu_mon_events_parse("inst_retired,l1d_cahce", f->p, CPU0, &f->ev, &f->err),
			 DPMU_ENOENT);
	assert_string_equal(f->err.msg, "unknown event 'l1d_cahce' (did you mean l1d_cache?)");
	assert_int_equal(dpmu_mon_events_parse("INST_RETIRD", f->p, CPU0, &f->ev, &f->err),
			 DPMU_ENOENT);
	assert_string_equal(f->err.msg, "unknown event 'INST_RETIRD' (did you mean INST_RETIRED?)");
	assert_int_equal(dpmu_mon_events_parse("frobnicate", f->p, CPU0, &f->ev, &f->err),
			 DPMU_ENOENT);
	assert_string_equal(f->err.msg, "unknown event 'frobnicate'");
	assert_int_equal(dpmu_mon_events_parse("inst_retired,,cpu_cycles", f->p, CPU0, &f->ev,
					       &f->err),
			 DPMU_EINVAL);
	assert_string_equal(f->err.msg, "event list 'inst_retired,,cpu_cycles': empty event name");
	assert_int_equal(dpmu_mon_events_parse("armv8_pmuv3/inst_retired/", f->p, CPU0, &f->ev,
					       &f->err),
			 DPMU_EINVAL);
	assert_non_null(strstr(f->err.msg, "unknown PMU"));
	/* PMEVTYPER<n>_EL0.evtCount is 16 bits: a wider raw number is said to be */
	assert_int_equal(dpmu_mon_events_parse("r10000", f->p, CPU0, &f->ev, &f->err), DPMU_EINVAL);
	assert_string_equal(f->err.msg,
			    "raw event 'r10000': event numbers are 16 bits (r0 to rffff)");
	assert_int_equal(dpmu_mon_events_parse("rffff", f->p, CPU0, &f->ev, &f->err), 0);
	close_fixture(f);
}

static void default_set_is_perf_like(void **state)
{
	(void)state;
	static const char *const classic[] = {"CPU_CYCLES", "INST_RETIRED", "BR_RETIRED",
					      "BR_MIS_PRED_RETIRED", "L1D_CACHE", "L1D_CACHE_REFILL",
					      "L3D_CACHE", "L3D_CACHE_REFILL"};
	struct fixture *f = open_profile("a75x4-a55x4");
	assert_int_equal(dpmu_mon_events_default(f->p, CPU0, &f->ev, &f->err), 0);
	assert_int_equal(f->ev.n, 8);
	for (unsigned i = 0; i < 8; i++)
		assert_string_equal(f->ev.ev[i].name, classic[i]);
	assert_int_equal(f->ev.ev[5].target, DPMU_MON_CORE);
	assert_int_equal(f->ev.ev[6].target, DPMU_MON_CLUSTER);
	close_fixture(f);

	f = open_profile("a75x4-a55x4-dsu120");
	assert_int_equal(dpmu_mon_events_default(f->p, CPU0, &f->ev, &f->err), 0);
	assert_int_equal(f->ev.n, 8);
	assert_string_equal(f->ev.ev[6].name, "L3_ACCESS");
	assert_string_equal(f->ev.ev[7].name, "L3_MISS");
	close_fixture(f);
}

static void cycles_go_on_the_cycle_counter(void **state)
{
	(void)state;
	struct fixture *f = open_profile("a75x4-a55x4");
	assert_int_equal(dpmu_mon_events_parse("inst_retired,cpu_cycles,cpu_cycles,cluster/cycles/,"
					       "l3d_cache",
					       f->p, CPU0, &f->ev, &f->err),
			 0);
	struct dpmu_mon_session *s;
	assert_int_equal(dpmu_mon_session_create(f->drv, f->p, &f->ev, CPU0, &s, &f->err), 0);
	const struct dpmu_mon_pmu *pmu = dpmu_mon_session_pmu(s, DPMU_MON_CORE, 0);
	assert_non_null(pmu);
	assert_int_equal(pmu->counter[0], 0);
	assert_int_equal(pmu->counter[1], DPMU_DRV_CYCLE);
	/* A second CPU_CYCLES takes an event counter. */
	assert_int_equal(pmu->counter[2], 1);
	assert_int_equal(pmu->counter[3], DPMU_MON_UNSCHEDULED);
	const struct dpmu_mon_pmu *cl = dpmu_mon_session_pmu(s, DPMU_MON_CLUSTER, 0);
	assert_non_null(cl);
	assert_int_equal(cl->counter[3], DPMU_DRV_CYCLE);
	assert_int_equal(cl->counter[4], 0);
	assert_null(dpmu_mon_session_pmu(s, DPMU_MON_CORE, 1));
	dpmu_mon_session_destroy(s);
	close_fixture(f);
}

static void assignment_follows_each_core_type(void **state)
{
	(void)state;
	struct fixture *f = open_profile("a75x4-a55x4");
	/* DSB_SPEC is in the A75 catalog only, BR_COND_PRED in the A55's. */
	assert_int_equal(dpmu_mon_events_parse("inst_retired,dsb_spec,br_cond_pred,l1d_cache", f->p,
					       CPU0 | CPU4, &f->ev, &f->err),
			 0);
	assert_int_equal(f->ev.ev[1].target, DPMU_MON_CORE);
	struct dpmu_mon_session *s;
	assert_int_equal(dpmu_mon_session_create(f->drv, f->p, &f->ev, CPU0 | CPU4, &s, &f->err), 0);
	assert_int_equal(dpmu_mon_session_cores(s), CPU0 | CPU4);
	assert_int_equal(dpmu_mon_session_clusters(s), 1);
	const struct dpmu_mon_pmu *a75 = dpmu_mon_session_pmu(s, DPMU_MON_CORE, 0);
	const struct dpmu_mon_pmu *a55 = dpmu_mon_session_pmu(s, DPMU_MON_CORE, 4);
	assert_int_equal(a75->counter[0], 0);
	assert_int_equal(a75->counter[1], 1);
	assert_int_equal(a75->counter[2], DPMU_MON_UNSCHEDULED);
	assert_int_equal(a75->counter[3], 2);
	assert_int_equal(a55->counter[0], 0);
	assert_int_equal(a55->counter[1], DPMU_MON_UNSCHEDULED);
	assert_int_equal(a55->counter[2], 1);
	assert_int_equal(a55->counter[3], 2);
	/* Not counted anywhere it is not implemented: reported, not zero. */
	assert_int_equal(dpmu_mon_start(s, 0, &f->err), 0);
	assert_int_equal(dpmu_mon_stop(s, 10, &f->err), 0);
	struct dpmu_mon_count c;
	assert_int_equal(dpmu_mon_count_on(s, 1, 4, &c), 0);
	assert_false(c.supported);
	assert_int_equal(dpmu_mon_count_on(s, 1, 0, &c), 0);
	assert_true(c.supported);
	dpmu_mon_session_destroy(s);
	close_fixture(f);
}

static void too_many_events_rotate_and_big_groups_fail(void **state)
{
	(void)state;
	struct fixture *f = open_profile("a75x4-a55x4");
	struct dpmu_mon_session *s;
	/* Six event counters plus the cycle counter: seven events fit. */
	assert_int_equal(dpmu_mon_events_parse("cpu_cycles,inst_retired,br_retired,l1d_cache,"
					       "l1d_cache_refill,l2d_cache,l2d_cache_refill",
					       f->p, CPU0, &f->ev, &f->err),
			 0);
	assert_int_equal(dpmu_mon_session_create(f->drv, f->p, &f->ev, CPU0, &s, &f->err), 0);
	dpmu_mon_session_destroy(s);
	/* Seven that need event counters take turns (seed 003 section 4.2)... */
	assert_int_equal(dpmu_mon_events_parse("inst_retired,br_retired,l1d_cache,l1d_cache_refill,"
					       "l2d_cache,l2d_cache_refill,mem_access",
					       f->p, CPU0, &f->ev, &f->err),
			 0);
	assert_int_equal(dpmu_mon_session_create(f->drv, f->p, &f->ev, CPU0, &s, &f->err), 0);
	assert_true(dpmu_mon_session_pmu(s, DPMU_MON_CORE, 0)->rotates);
	dpmu_mon_session_destroy(s);
	/* ...but a group of seven cannot be split. */
	assert_int_equal(dpmu_mon_events_parse("{inst_retired,br_retired,l1d_cache,l1d_cache_refill,"
					       "l2d_cache,l2d_cache_refill,mem_access}",
					       f->p, CPU0, &f->ev, &f->err),
			 0);
	assert_int_equal(dpmu_mon_session_create(f->drv, f->p, &f->ev, CPU0, &s, &f->err),
			 DPMU_EBUSY);
	assert_null(s);
	assert_non_null(strstr(f->err.msg, "group {INST_RETIRED,BR_RETIRED,L1D_CACHE,"
					   "L1D_CACHE_REFILL,L2D_CACHE,L2D_CACHE_REFILL,MEM_ACCESS} "
					   "needs 7 event counters at once, but the Cortex-A75 PMU of "
					   "cpu0 has 6"));
	/* The same on the cluster PMU. */
	assert_int_equal(dpmu_mon_events_parse("{l3d_cache,l3d_cache_refill,l3d_cache_allocate,"
					       "l3d_cache_wb,bus_access,bus_cycles,memory_error}",
					       f->p, CPU4, &f->ev, &f->err),
			 0);
	assert_int_equal(dpmu_mon_session_create(f->drv, f->p, &f->ev, CPU4, &s, &f->err),
			 DPMU_EBUSY);
	assert_non_null(strstr(f->err.msg, "the DSU PMU of cluster0 has 6"));
	close_fixture(f);
}

static void counts_come_back_through_the_driver(void **state)
{
	(void)state;
	struct fixture *f = open_profile("a75x4-a55x4");
	assert_int_equal(dpmu_mon_events_parse("inst_retired,cpu_cycles,l3d_cache", f->p,
					       CPU0 | CPU4, &f->ev, &f->err),
			 0);
	struct dpmu_mon_session *s;
	assert_int_equal(dpmu_mon_session_create(f->drv, f->p, &f->ev, CPU0 | CPU4, &s, &f->err), 0);
	/* Counted before the session starts: reset by the start. */
	dpmu_model_core_event(f->m, 0, 0x08, 99);
	assert_int_equal(dpmu_mon_start(s, 100, &f->err), 0);
	dpmu_model_core_event(f->m, 0, 0x08, 1000);
	dpmu_model_core_event(f->m, 4, 0x08, 7);
	dpmu_model_core_cycles(f->m, 0, 5000);
	dpmu_model_cluster_event(f->m, 0, 0x2b, 42);
	assert_int_equal(dpmu_mon_stop(s, 600, &f->err), 0);
	/* After the stop nothing counts. */
	dpmu_model_core_event(f->m, 0, 0x08, 1000);
	struct dpmu_mon_count c;
	assert_int_equal(dpmu_mon_count_on(s, 0, 0, &c), 0);
	assert_true(c.supported);
	assert_int_equal(c.value, 1000);
	assert_int_equal(c.enabled_ns, 500);
	assert_int_equal(c.running_ns, 500);
	assert_int_equal(dpmu_mon_count_on(s, 0, 4, &c), 0);
	assert_int_equal(c.value, 7);
	dpmu_mon_count_total(s, 0, &c);
	assert_int_equal(c.value, 1007);
	assert_int_equal(dpmu_mon_count_on(s, 1, 0, &c), 0);
	assert_int_equal(c.value, 5000);
	assert_int_equal(dpmu_mon_count_on(s, 2, 0, &c), 0);
	assert_int_equal(c.value, 42);
	/* A core the session does not measure. */
	assert_int_equal(dpmu_mon_count_on(s, 0, 1, &c), DPMU_EINVAL);
	dpmu_mon_session_destroy(s);
	close_fixture(f);
}

static void polls_widen_32_bit_counters(void **state)
{
	(void)state;
	struct fixture *f = open_profile("a75x4-a55x4");
	assert_int_equal(dpmu_mon_events_parse("inst_retired", f->p, CPU0, &f->ev, &f->err), 0);
	struct dpmu_mon_session *s;
	assert_int_equal(dpmu_mon_session_create(f->drv, f->p, &f->ev, CPU0, &s, &f->err), 0);
	assert_int_equal(dpmu_mon_start(s, 0, &f->err), 0);
	/* The A75's event counters are 32 bits (no PMUv3p5): three polls
	 * each seeing fewer than 2^32 events add up past the wrap. */
	for (int i = 0; i < 3; i++) {
		dpmu_model_core_event(f->m, 0, 0x08, 3000000000u);
		assert_int_equal(dpmu_mon_poll(s, (uint64_t)i, &f->err), 0);
	}
	assert_int_equal(dpmu_mon_stop(s, 3, &f->err), 0);
	struct dpmu_mon_count c;
	assert_int_equal(dpmu_mon_count_on(s, 0, 0, &c), 0);
	assert_true(c.value == UINT64_C(9000000000));
	assert_int_equal(dpmu_mon_poll(s, 4, &f->err), DPMU_ESTATE);
	dpmu_mon_session_destroy(s);
	close_fixture(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_are_case_insensitive_and_canonical),
		cmocka_unit_test(raw_codes_go_on_the_core_pmu),
		cmocka_unit_test(cluster_catalog_names_go_on_the_cluster_pmu),
		cmocka_unit_test(unknown_events_suggest_the_nearest_name),
		cmocka_unit_test(default_set_is_perf_like),
		cmocka_unit_test(cycles_go_on_the_cycle_counter),
		cmocka_unit_test(assignment_follows_each_core_type),
		cmocka_unit_test(too_many_events_rotate_and_big_groups_fail),
		cmocka_unit_test(counts_come_back_through_the_driver),
		cmocka_unit_test(polls_widen_32_bit_counters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
