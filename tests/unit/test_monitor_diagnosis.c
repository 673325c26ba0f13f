/*
 * The diagnosis state machine (src/monitor/diagnosis.c): the groups count
 * in turn, one interval each, and their counts come back with the
 * instructions and time they counted over; a cluster's PMU is one
 * diagnosis's at a time, another skips the coherence group and names the
 * owner; a diagnosis stopped early keeps the groups that completed.
 */
#include "unit/monitor_fixture.h"

#define US 1000u
#define CPUS01 (UINT64_C(3))

static struct fixture *f;
static struct dpmu_mon_diagnoser x;

static void start(struct dpmu_mon_diagnosis *d, unsigned cpu)
{
	unsigned cl, idx;
	const struct dpmu_core_type *t = dpmu_profile_core(f->p, cpu, &cl, &idx);
	assert_non_null(t);
	dpmu_mon_diagnosis_init(d, cpu, cl, (unsigned)(t - f->p->core_types));
}

static int setup(void **state)
{
	(void)state;
	f = open_default();
	return dpmu_mon_diagnoser_init(&x, f->drv, f->p, CPUS01, &f->err);
}

static int teardown(void **state)
{
	(void)state;
	close_fixture(f);
	return 0;
}

static void the_groups_count_in_turn(void **state)
{
	(void)state;
	struct dpmu_mon_diagnosis d;
	start(&d, 0);
	assert_int_equal(d.group, -1);
	assert_int_equal(dpmu_mon_diagnosis_begin(&x, &d, 7, 0, &f->err), 0);
	assert_int_equal(d.group, DPMU_MON_DIAG_MEMORY);
	assert_int_equal(d.anomaly, 7);
	assert_int_equal(dpmu_mon_diagnosis_interval(&x, &d, 50 * US, 1000, 2000, &f->err), 0);
	assert_int_equal(d.group, DPMU_MON_DIAG_FRONTEND);
	assert_int_equal(dpmu_mon_diagnosis_interval(&x, &d, 100 * US, 1000, 2000, &f->err), 0);
	assert_int_equal(d.group, DPMU_MON_DIAG_COHERENCE);
	assert_int_equal(x.cluster_owner[0], 1); /* cpu0's */
	assert_int_equal(dpmu_mon_diagnosis_interval(&x, &d, 150 * US, 1000, 2000, &f->err), 1);
	assert_int_equal(d.group, -1);
	assert_int_equal(x.cluster_owner[0], 0);
	assert_int_equal(d.counted, 3);
	assert_int_equal(d.counted_ns, 150 * US);
	assert_int_equal(d.insns, 3000);
	assert_int_equal(d.cycles, 6000);
	/* each group's events, each counted over its own interval */
	bool l2 = false, br = false, l3 = false;
	for (unsigned i = 0; i < d.ncounts; i++) {
		assert_int_equal(d.counts[i].running_ns, 50 * US);
		l2 |= !strcmp(d.counts[i].event, "L2D_CACHE_REFILL") && !d.counts[i].cluster;
		br |= !strcmp(d.counts[i].event, "BR_MIS_PRED_RETIRED") && !d.counts[i].cluster;
		l3 |= !strcmp(d.counts[i].event, "L3D_CACHE") && d.counts[i].cluster;
	}
	assert_true(l2 && br && l3);
	/* the classic DSU has no DSU-120 events: not in its group */
	for (unsigned i = 0; i < d.ncounts; i++)
		assert_string_not_equal(d.counts[i].event, "SNOOP_REQ");
}

static void one_diagnosis_holds_a_cluster_pmu(void **state)
{
	(void)state;
	struct dpmu_mon_diagnosis a, b;
	start(&a, 0);
	start(&b, 1);
	assert_int_equal(dpmu_mon_diagnosis_begin(&x, &a, 1, 0, &f->err), 0);
	assert_int_equal(dpmu_mon_diagnosis_begin(&x, &b, 2, 0, &f->err), 0);
	for (unsigned k = 1; k <= 2; k++) {
		assert_int_equal(dpmu_mon_diagnosis_interval(&x, &a, k * 50 * US, 10, 20, &f->err), 0);
		if (k == 1)
			assert_int_equal(dpmu_mon_diagnosis_interval(&x, &b, k * 50 * US, 10, 20, &f->err), 0);
	}
	/* cpu0 counts on cluster0's PMU now: cpu1 skips the coherence group */
	assert_int_equal(dpmu_mon_diagnosis_interval(&x, &b, 100 * US, 10, 20, &f->err), 1);
	assert_string_equal(b.skipped_group, "coherence");
	assert_int_equal(b.skipped_owner, 0);
	assert_int_equal(b.skipped, 1);
	assert_int_equal(b.counted, 2);
	assert_int_equal(x.cluster_owner[0], 1);
	assert_int_equal(dpmu_mon_diagnosis_interval(&x, &a, 150 * US, 10, 20, &f->err), 1);
	assert_null(a.skipped_group);
	assert_int_equal(a.counted, 3);
	assert_int_equal(x.cluster_owner[0], 0);
}

static void a_stopped_diagnosis_keeps_what_completed(void **state)
{
	(void)state;
	struct dpmu_mon_diagnosis d;
	start(&d, 0);
	assert_int_equal(dpmu_mon_diagnosis_begin(&x, &d, 3, 0, &f->err), 0);
	assert_int_equal(dpmu_mon_diagnosis_interval(&x, &d, 50 * US, 10, 20, &f->err), 0);
	assert_int_equal(dpmu_mon_diagnosis_interval(&x, &d, 100 * US, 10, 20, &f->err), 0);
	/* a second one cannot start over it */
	assert_int_equal(dpmu_mon_diagnosis_begin(&x, &d, 4, 120 * US, &f->err), DPMU_EINVAL);
	assert_int_equal(dpmu_mon_diagnosis_stop(&x, &d, &f->err), 0);
	assert_int_equal(d.group, -1);
	assert_int_equal(d.counted, 2);
	assert_int_equal(d.counted_ns, 100 * US);
	assert_int_equal(x.cluster_owner[0], 0); /* the coherence group let go of it */
	assert_int_equal(dpmu_mon_diagnosis_stop(&x, &d, &f->err), 0); /* none runs: nothing */
	assert_int_equal(dpmu_mon_diagnosis_begin(&x, &d, 4, 120 * US, &f->err), 0);
	assert_int_equal(d.anomaly, 4);
	assert_int_equal(d.counted, 0);
	assert_int_equal(dpmu_mon_diagnosis_stop(&x, &d, &f->err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_groups_count_in_turn),
		cmocka_unit_test(one_diagnosis_holds_a_cluster_pmu),
		cmocka_unit_test(a_stopped_diagnosis_keeps_what_completed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
