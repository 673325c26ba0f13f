/*
 * dynpmu's OpenMetrics series (src/analysis/om_series.c, docs/openmetrics.md):
 * running totals from interval samples, the per-cpu labels from the
 * profile, counts as counted with their running ratio, metric gauges over
 * the latest interval, and the run's own gauges, as rendered; the
 * monitor's series (dpmu_om_add_watch) likewise.
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

/* The monitor's series: a core (AMU counts in dynpmu_events_total, its
 * gauges) and a thread on it (dynpmu_thread_events_total, a thread label);
 * a unit not judged yet has no CPI sample, one still learning no baseline. */
static void test_watch_series(void **state)
{
	(void)state;
	struct dpmu_err err;
	struct dpmu_profile *p;
	assert_int_equal(dpmu_profile_load("a75x4-a55x4", &p, &err), 0);
	struct dpmu_om_watch w[3] = {
		{ .cpu = 4, .thread = -1, .amu = { 2000, 30, 1000, 500 }, .judged = true, .cpi = 2,
		  .stall = 0.25, .have_base = true, .base_cpi = 0.5, .band = 0.075, .in_anomaly = true,
		  .anomalies = 3 },
		{ .cpu = 4, .thread = 1, .amu = { 1500, 20, 600, 400 }, .judged = true, .cpi = 2.5,
		  .stall = 0.5 },
		{ .cpu = 0, .thread = -1 },
	};
	struct dpmu_om_snapshot *s;
	assert_int_equal(dpmu_om_snapshot_create(&s, &err), 0);
	struct dpmu_om_run run = { .sim_ns = 3 * MS, .intervals = 3 };
	assert_int_equal(dpmu_om_add_watch(s, w, 3, p, &run, &err), 0);
	char *text;
	size_t len;
	assert_int_equal(dpmu_om_render(s, &text, &len, &err), 0);
	const char *l4 = "{cpu=\"4\",core_type=\"Cortex-A55\",cluster=\"0\"";
	char want[12][200];
	snprintf(want[0], sizeof want[0], "\ndynpmu_events_total%s,event=\"amu:CPU_CYCLES\"} 2000\n", l4);
	snprintf(want[1], sizeof want[1], "\ndynpmu_events_total%s,event=\"amu:STALL_BACKEND_MEM\"} 500\n", l4);
	snprintf(want[2], sizeof want[2], "\ndynpmu_thread_events_total%s,thread=\"1\",event=\"amu:INST_RETIRED\"} 600\n", l4);
	snprintf(want[3], sizeof want[3], "\ndynpmu_monitor_cpi%s} 2\n", l4);
	snprintf(want[4], sizeof want[4], "\ndynpmu_monitor_cpi%s,thread=\"1\"} 2.5\n", l4);
	snprintf(want[5], sizeof want[5], "\ndynpmu_monitor_memory_stall_ratio%s} 0.25\n", l4);
	snprintf(want[6], sizeof want[6], "\ndynpmu_monitor_baseline_cpi%s} 0.5\n", l4);
	snprintf(want[7], sizeof want[7], "\ndynpmu_monitor_band_cpi%s} 0.075\n", l4);
	snprintf(want[8], sizeof want[8], "\ndynpmu_monitor_anomaly%s} 1\n", l4);
	snprintf(want[9], sizeof want[9], "\ndynpmu_monitor_anomalies_total%s} 3\n", l4);
	snprintf(want[10], sizeof want[10], "# TYPE dynpmu_monitor_anomalies_total counter\n");
	snprintf(want[11], sizeof want[11], "\ndynpmu_run_finished 0\n");
	for (size_t i = 0; i < 12; i++)
		if (!strstr(text, want[i]))
			fail_msg("missing %s in:\n%s", want[i], text);
	/* a thread's counts are not a core's: no double count in sum by (cpu) */
	assert_null(strstr(text, "dynpmu_events_total{cpu=\"4\",core_type=\"Cortex-A55\",cluster=\"0\",thread"));
	/* not judged, no baseline: no sample (not a NaN) */
	assert_null(strstr(text, "dynpmu_monitor_cpi{cpu=\"0\""));
	assert_null(strstr(text, "dynpmu_monitor_baseline_cpi{cpu=\"0\""));
	assert_null(strstr(text, "dynpmu_monitor_baseline_cpi{cpu=\"4\",core_type=\"Cortex-A55\",cluster=\"0\",thread"));
	assert_non_null(strstr(text, "\ndynpmu_monitor_anomaly{cpu=\"0\",core_type=\"Cortex-A75\",cluster=\"0\"} 0\n"));
	free(text);
	dpmu_om_snapshot_release(s);
	dpmu_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series_rendered),
		cmocka_unit_test(test_series_before_counts),
		cmocka_unit_test(test_watch_series),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
