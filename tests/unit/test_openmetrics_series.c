/*
 * dynpmu's OpenMetrics series (src/analysis/om_series.c, docs/openmetrics.md):
 * running totals from interval samples, the per-cpu labels from the
 * profile, counts as counted with their running ratio, metric gauges over
 * the latest interval, and the run's own gauges, as rendered.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dynpmu/openmetrics.h"

#define MS 1000000ull

/* One interval: cpu0 (a Cortex-A75), cpu4 (a Cortex-A55), cluster0, and
 * a core-type row that the endpoint must ignore (its series are per cpu). */
static void interval(struct dpmu_an_table *t, uint64_t start, uint64_t insns, uint64_t cycles)
{
	struct dpmu_err err;
	struct dpmu_an_sample *s;
	struct dpmu_an_unit *u;
	assert_int_equal(dpmu_an_sample_add(t, start, 1 * MS, &s, &err), 0);
	assert_int_equal(dpmu_an_unit_add(s, DPMU_AN_CPU, 0, "cpu0", 2800000000, &u, &err), 0);
	assert_int_equal(dpmu_an_count_add(u, "INST_RETIRED", true, insns, MS, MS, &err), 0);
	assert_int_equal(dpmu_an_count_add(u, "CPU_CYCLES", true, cycles, MS, MS, &err), 0);
	/* multiplexed: on a counter a quarter of the time */
	assert_int_equal(dpmu_an_count_add(u, "L1D_CACHE", true, 10, MS, MS / 4, &err), 0);
	assert_int_equal(dpmu_an_count_add(u, "L2D_CACHE", false, 0, 0, 0, &err), 0);
	assert_int_equal(dpmu_an_unit_add(s, DPMU_AN_CPU, 4, "cpu4", 1800000000, &u, &err), 0);
	/* no cycles: ipc is not available on cpu4 */
	assert_int_equal(dpmu_an_count_add(u, "INST_RETIRED", true, 7, MS, MS, &err), 0);
	assert_int_equal(dpmu_an_unit_add(s, DPMU_AN_CLUSTER, 0, "cluster0", 1500000000, &u, &err),
			 0);
	assert_int_equal(dpmu_an_count_add(u, "L3D_CACHE", true, 100, MS, MS, &err), 0);
	assert_int_equal(dpmu_an_unit_add(s, DPMU_AN_CORE_TYPE, 0, "Cortex-A75", 2800000000, &u,
					  &err), 0);
	assert_int_equal(dpmu_an_count_add(u, "INST_RETIRED", true, insns, MS, MS, &err), 0);
}

static void test_series_rendered(void **state)
{
	(void)state;
	struct dpmu_err err;
	struct dpmu_profile *p;
	assert_int_equal(dpmu_profile_load("a75x4-a55x4", &p, &err), 0);
	struct dpmu_an_table t, totals;
	dpmu_an_table_init(&t);
	dpmu_an_table_init(&totals);
	interval(&t, 0, 1000, 2000);
	interval(&t, MS, 3000, 2000);
	for (size_t i = 0; i < t.nsamples; i++)
		assert_int_equal(dpmu_om_totals_add(&totals, &t.samples[i], &err), 0);
	assert_int_equal(totals.nsamples, 1);
	assert_int_equal(totals.samples[0].length_ns, 2 * MS);
	const struct dpmu_an_metric *m[] = {dpmu_an_metric_find("ipc")};
	assert_non_null(m[0]);
	struct dpmu_om_snapshot *s;
	assert_int_equal(dpmu_om_snapshot_create(&s, &err), 0);
	struct dpmu_om_run run = {.sim_ns = 2 * MS, .intervals = 2, .finished = true};
	assert_int_equal(dpmu_om_add_run(s, &t, &totals.samples[0], &t.samples[1], p, m, 1, &run,
					 &err), 0);
	char *text;
	size_t len;
	assert_int_equal(dpmu_om_render(s, &text, &len, &err), 0);
	const char *want[] = {
		"# TYPE dynpmu_events_total counter\n",
		/* the two intervals summed, labelled from the profile */
		"\ndynpmu_events_total{cpu=\"0\",core_type=\"Cortex-A75\",cluster=\"0\","
		"event=\"INST_RETIRED\"} 4000\n",
		"\ndynpmu_events_total{cpu=\"0\",core_type=\"Cortex-A75\",cluster=\"0\","
		"event=\"CPU_CYCLES\"} 4000\n",
		/* as counted, not scaled */
		"\ndynpmu_events_total{cpu=\"0\",core_type=\"Cortex-A75\",cluster=\"0\","
		"event=\"L1D_CACHE\"} 20\n",
		"\ndynpmu_events_total{cpu=\"4\",core_type=\"Cortex-A55\",cluster=\"0\","
		"event=\"INST_RETIRED\"} 14\n",
		"# TYPE dynpmu_cluster_events_total counter\n",
		"\ndynpmu_cluster_events_total{cluster=\"0\",event=\"L3D_CACHE\"} 200\n",
		"\ndynpmu_event_running_ratio{cpu=\"0\",core_type=\"Cortex-A75\",cluster=\"0\","
		"event=\"L1D_CACHE\"} 0.25\n",
		"\ndynpmu_event_running_ratio{cluster=\"0\",event=\"L3D_CACHE\"} 1\n",
		"# TYPE dynpmu_ipc gauge\n",
		/* the latest interval's 3000 / 2000, not the run's 4000 / 4000 */
		"\ndynpmu_ipc{cpu=\"0\",core_type=\"Cortex-A75\",cluster=\"0\"} 1.5\n",
		"\ndynpmu_simulated_seconds 0.002\n",
		"# TYPE dynpmu_intervals_total counter\n",
		"\ndynpmu_intervals_total 2\n",
		"\ndynpmu_run_finished 1\n",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!strstr(text, want[i]))
			fail_msg("missing %s in:\n%s", want[i], text);
	/* not available, not supported, not per cpu: no sample */
	assert_null(strstr(text, "dynpmu_ipc{cpu=\"4\""));
	assert_null(strstr(text, "L2D_CACHE"));
	assert_null(strstr(text, "{core_type=\"Cortex-A75\""));
	free(text);
	dpmu_om_snapshot_release(s);
	dpmu_an_table_free(&t);
	dpmu_an_table_free(&totals);
	dpmu_profile_free(p);
}

/* Before the first interval: the run's gauges only, no counts. */
static void test_series_before_counts(void **state)
{
	(void)state;
	struct dpmu_err err;
	struct dpmu_profile *p;
	assert_int_equal(dpmu_profile_load("a75x4-a55x4", &p, &err), 0);
	struct dpmu_an_table t;
	dpmu_an_table_init(&t);
	struct dpmu_om_snapshot *s;
	assert_int_equal(dpmu_om_snapshot_create(&s, &err), 0);
	struct dpmu_om_run run = {0};
	assert_int_equal(dpmu_om_add_run(s, &t, NULL, NULL, p, NULL, 0, &run, &err), 0);
	char *text;
	size_t len;
	assert_int_equal(dpmu_om_render(s, &text, &len, &err), 0);
	assert_null(strstr(text, "dynpmu_events_total"));
	assert_non_null(strstr(text, "\ndynpmu_run_finished 0\n"));
	assert_non_null(strstr(text, "\ndynpmu_intervals_total 0\n"));
	free(text);
	dpmu_om_snapshot_release(s);
	dpmu_an_table_free(&t);
	dpmu_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series_rendered),
		cmocka_unit_test(test_series_before_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
