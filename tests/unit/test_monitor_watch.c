/*
 * The anomaly watch (src/monitor/watch.c): the baseline is the median and
 * MAD of the learning intervals (outliers move neither), the band is
 * max(k x 1.4826 x MAD, floor x median), an anomaly starts after
 * `consecutive` intervals outside, a different level inside an anomaly is
 * a new one, and the anomaly ends after that many back inside. Options out
 * of range are refused with a message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dynpmu/arch.h"
#include "dynpmu/monitor.h"

static struct dpmu_mon_watch w;

static enum dpmu_mon_watch_event step(double cpi)
{
	return dpmu_mon_watch_step(&w, cpi, 0.0);
}

static void learn(const double *cpi, unsigned n)
{
	struct dpmu_mon_watch_opts o = DPMU_MON_WATCH_DEFAULTS;
	o.learn = n;
	assert_int_equal(dpmu_mon_watch_init(&w, &o, NULL, NULL), 0);
	for (unsigned i = 0; i + 1 < n; i++)
		assert_int_equal(step(cpi[i]), DPMU_MON_NOTHING);
	assert_int_equal(step(cpi[n - 1]), DPMU_MON_BASELINE);
}

static void the_baseline_is_median_and_mad(void **state)
{
	(void)state;
	/* one wild outlier (the program's start) */
	const double cpi[] = { 9.0, 1.0, 1.1, 0.9, 1.0, 1.2, 0.8, 1.0 };
	learn(cpi, 8);
	assert_true(w.base.cpi > 0.999 && w.base.cpi < 1.001);
	/* |x - 1| = 8, 0, .1, .1, 0, .2, .2, 0: median 0.1 */
	assert_true(w.base.cpi_mad > 0.0999 && w.base.cpi_mad < 0.1001);
	/* band: max(4 x 1.4826 x 0.1, 0.15 x 1) */
	double band = dpmu_mon_watch_band(&w);
	assert_true(band > 0.593 && band < 0.594);
	assert_false(dpmu_mon_watch_outside(&w, 1.59, 0));
	assert_true(dpmu_mon_watch_outside(&w, 1.6, 0));
	assert_true(dpmu_mon_watch_outside(&w, 1.0, 0.2)); /* stall share: floor 0.05 */
}

static void an_anomaly_starts_changes_and_ends(void **state)
{
	(void)state;
	const double cpi[] = { 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0 };
	learn(cpi, 8);
	assert_true(dpmu_mon_watch_band(&w) > 0.149); /* MAD 0: the floor */
	assert_int_equal(step(3.0), DPMU_MON_NOTHING);      /* one interval out */
	assert_int_equal(step(1.0), DPMU_MON_NOTHING);      /* back: no anomaly */
	assert_int_equal(step(3.0), DPMU_MON_NOTHING);
	assert_int_equal(step(3.1), DPMU_MON_ANOMALY_START); /* two in a row */
	assert_int_equal(step(3.0), DPMU_MON_NOTHING);      /* its level forms */
	assert_int_equal(step(3.0), DPMU_MON_NOTHING);
	assert_int_equal(step(3.05), DPMU_MON_NOTHING);     /* the same level */
	assert_int_equal(step(1.6), DPMU_MON_NOTHING);      /* another level, once */
	assert_int_equal(step(1.6), DPMU_MON_ANOMALY_CHANGE);
	assert_int_equal(step(2.2), DPMU_MON_NOTHING);      /* a new level forms: no change */
	assert_int_equal(step(1.65), DPMU_MON_NOTHING);
	assert_int_equal(step(1.05), DPMU_MON_NOTHING);     /* in the band, once */
	assert_int_equal(step(0.95), DPMU_MON_ANOMALY_END);
	assert_int_equal(step(1.0), DPMU_MON_NOTHING);
	assert_int_equal(w.anomalies, 2);
}

static void a_given_baseline_needs_no_learning(void **state)
{
	(void)state;
	struct dpmu_mon_baseline b = { 2.0, 0.0, 0.1, 0.0, 5 };
	assert_int_equal(dpmu_mon_watch_init(&w, NULL, &b, NULL), 0);
	assert_int_equal(w.state, DPMU_MON_STEADY);
	assert_int_equal(dpmu_mon_watch_step(&w, 2.1, 0.1), DPMU_MON_NOTHING);
	assert_int_equal(dpmu_mon_watch_step(&w, 4.0, 0.1), DPMU_MON_NOTHING);
	assert_int_equal(dpmu_mon_watch_step(&w, 4.0, 0.1), DPMU_MON_ANOMALY_START);
}

/* An interval of too few instructions (a thread's start or end) is not
 * judged; nor one with no cycles. */
static void few_instructions_are_not_judged(void **state)
{
	(void)state;
	struct dpmu_err err;
	struct dpmu_mon_watch_opts o = DPMU_MON_WATCH_DEFAULTS;
	o.min_insns = 1000;
	assert_int_equal(dpmu_mon_watch_init(&w, &o, NULL, &err), 0);
	assert_false(dpmu_mon_watch_judges(&w, 999, 100000));
	assert_true(dpmu_mon_watch_judges(&w, 1000, 100000));
	assert_false(dpmu_mon_watch_judges(&w, 5000, 0));
	assert_false(dpmu_mon_watch_judges(&w, 0, 100));
}

static void bad_options_are_refused(void **state)
{
	(void)state;
	struct dpmu_err err;
	struct dpmu_mon_watch_opts o = DPMU_MON_WATCH_DEFAULTS;
	o.learn = 2;
	assert_int_equal(dpmu_mon_watch_init(&w, &o, NULL, &err), DPMU_EINVAL);
	o = (struct dpmu_mon_watch_opts)DPMU_MON_WATCH_DEFAULTS;
	o.consecutive = 0;
	assert_int_equal(dpmu_mon_watch_init(&w, &o, NULL, &err), DPMU_EINVAL);
	o = (struct dpmu_mon_watch_opts)DPMU_MON_WATCH_DEFAULTS;
	o.k = -1;
	assert_int_equal(dpmu_mon_watch_init(&w, &o, NULL, &err), DPMU_EINVAL);
	struct dpmu_mon_baseline b = { 0.0, 0.0, 0.0, 0.0, 0 };
	assert_int_equal(dpmu_mon_watch_init(&w, NULL, &b, &err), DPMU_EINVAL);
}

static void the_groups_name_their_events(void **state)
{
	(void)state;
	for (unsigned g = 0; g < DPMU_MON_DIAG_GROUPS; g++) {
		const struct dpmu_mon_diag *d = dpmu_mon_diag_group((enum dpmu_mon_diag_group)g);
		assert_non_null(d);
		assert_non_null(d->events[0]);
	}
	assert_int_equal(dpmu_mon_diag_group(DPMU_MON_DIAG_COHERENCE)->target, DPMU_MON_CLUSTER);
	assert_null(dpmu_mon_diag_group(DPMU_MON_DIAG_GROUPS));
}

/* The coherence group counts on both DSU numberings (seed 001 section
 * 4.2): the classic DSU's snoops and L3 accesses, the DSU-120's snoop
 * requests, data transfers and L3 accesses; each profile's cluster PMU
 * implements its own three. */
static unsigned coherence_events_on(const char *profile, const char *must)
{
	struct dpmu_err err;
	struct dpmu_profile *p;
	assert_int_equal(dpmu_profile_load(profile, &p, &err), 0);
	const struct dpmu_mon_diag *d = dpmu_mon_diag_group(DPMU_MON_DIAG_COHERENCE);
	unsigned n = 0;
	bool found = false;
	for (unsigned i = 0; i < 6 && d->events[i]; i++) {
		char name[64];
		snprintf(name, sizeof name, "cluster/%s/", d->events[i]);
		struct dpmu_mon_events ev;
		if (dpmu_mon_events_parse(name, p, 1, &ev, &err) == 0 && ev.ev[0].cluster_code[0] >= 0) {
			n++;
			found |= strcmp(d->events[i], must) == 0;
		}
	}
	dpmu_profile_free(p);
	assert_true(found);
	return n;
}

static void coherence_counts_on_both_dsus(void **state)
{
	(void)state;
	assert_int_equal(coherence_events_on("a75x4-a55x4", "SCU_SNP_ACCESS"), 3);
	assert_int_equal(coherence_events_on("a75x4-a55x4-dsu120", "DATA_TRANSFER"), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_baseline_is_median_and_mad),
		cmocka_unit_test(an_anomaly_starts_changes_and_ends),
		cmocka_unit_test(a_given_baseline_needs_no_learning),
		cmocka_unit_test(few_instructions_are_not_judged),
		cmocka_unit_test(bad_options_are_refused),
		cmocka_unit_test(the_groups_name_their_events),
		cmocka_unit_test(coherence_counts_on_both_dsus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
