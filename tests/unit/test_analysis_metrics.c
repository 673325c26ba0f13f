/*
 * Metrics: every row of the metric table against a value computed by hand
 * from the formulas of reference section 6, seed 001 sections 4.2 and 5.2
 * and reference section 4; the DSU-120 alternative; "not available" naming
 * the missing event; perf's enabled/running scaling; the -M list parser.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dynpmu/analysis.h"

#define MS 1000000ull /* one millisecond in ns */

struct fx {
	struct dpmu_an_table t;
	struct dpmu_an_sample *s;
	struct dpmu_err err;
};

static void add(struct dpmu_an_unit *u, const char *ev, uint64_t v)
{
	struct dpmu_err err;
	assert_int_equal(dpmu_an_count_add(u, ev, true, v, MS, MS, &err), 0);
}

/* cpu4: a LITTLE core at 1.8 GHz, one 1 ms sample; cluster0 in the DSU-120
 * numbering; cluster1 in the classic numbering. */
static void build(struct fx *f)
{
	memset(f, 0, sizeof *f);
	dpmu_an_table_init(&f->t);
	f->t.const_freq_hz = 25000000;
	f->t.ref_freq_hz = 1000000000;
	assert_int_equal(dpmu_an_sample_add(&f->t, 0, MS, &f->s, &f->err), 0);
	struct dpmu_an_unit *u;
	assert_int_equal(dpmu_an_unit_add(f->s, DPMU_AN_CPU, 4, "cpu4", 1800000000, &u, &f->err), 0);
	u->little = true;
	u->line_bytes = 64;
	u->bus_bytes = 16;
	static const struct {
		const char *ev;
		uint64_t v;
	} cpu[] = {
		{"CPU_CYCLES", 2000000}, {"INST_RETIRED", 1000000}, {"L1I_CACHE", 400000},
		{"L1I_CACHE_REFILL", 4000}, {"L1D_CACHE", 500000}, {"L1D_CACHE_REFILL", 25000},
		{"L2D_CACHE", 30000}, {"L2D_CACHE_REFILL", 6000}, {"L3D_CACHE", 6000},
		{"L3D_CACHE_REFILL", 4500}, {"L3D_CACHE_RD", 4000}, {"L3D_CACHE_REFILL_RD", 3000},
		{"ITLB_WALK", 100}, {"DTLB_WALK", 300},
		{"LL_CACHE_RD", 5000}, {"LL_CACHE_MISS_RD", 1000}, {"BR_RETIRED", 200000},
		{"BR_MIS_PRED_RETIRED", 12000}, {"STALL_FRONTEND", 300000}, {"STALL_BACKEND", 800000},
		{"BUS_ACCESS", 10000}, {"INST_SPEC", 1250000}, {"LD_SPEC", 250000}, {"ST_SPEC", 125000},
		{"DP_SPEC", 500000}, {"ASE_SPEC", 62500}, {"VFP_SPEC", 12500}, {"CRYPTO_SPEC", 0},
		{"BR_IMMED_SPEC", 150000}, {"BR_RETURN_SPEC", 50000}, {"BR_INDIRECT_SPEC", 25000},
		{"amu:CPU_CYCLES", 2000000}, {"amu:CNT_CYCLES", 25000},
	};
	for (size_t i = 0; i < sizeof cpu / sizeof cpu[0]; i++)
		add(u, cpu[i].ev, cpu[i].v);

	assert_int_equal(dpmu_an_unit_add(f->s, DPMU_AN_CLUSTER, 0, "cluster0", 1500000000, &u, &f->err), 0);
	u->line_bytes = 64;
	add(u, "CYCLES", 1500000);
	add(u, "L3_ACCESS", 10000);
	add(u, "L3_MISS", 7000);
	add(u, "DATA_TRANSFER", 2000);
	add(u, "SNOOP_REQ", 5000);

	assert_int_equal(dpmu_an_unit_add(f->s, DPMU_AN_CLUSTER, 1, "cluster1", 1500000000, &u, &f->err), 0);
	add(u, "L3D_CACHE", 8000);
	add(u, "L3D_CACHE_REFILL", 2000);
	add(u, "SCU_SNP_ACCESS", 3000);
}

static struct dpmu_an_value eval(struct fx *f, const char *metric, const char *unit)
{
	const struct dpmu_an_metric *m = dpmu_an_metric_find(metric);
	assert_non_null(m);
	const struct dpmu_an_unit *u = dpmu_an_unit_find(f->s, unit);
	assert_non_null(u);
	struct dpmu_an_value v;
	assert_int_equal(dpmu_an_metric_eval(m, &f->t, f->s, u, &v, &f->err), 0);
	return v;
}

/* Hand-computed from the fixture above. */
static const struct {
	const char *metric, *unit;
	double expect;
} expected[] = {
	{"ipc", "cpu4", 0.5},                      /* 1e6 / 2e6 */
	{"cpi", "cpu4", 2.0},
	{"l1i_cache_mpki", "cpu4", 4.0},           /* 4000 per 1e6 insns */
	{"l1d_cache_mpki", "cpu4", 25.0},
	{"l2_cache_mpki", "cpu4", 6.0},
	{"l3_cache_mpki", "cpu4", 4.5},
	{"itlb_mpki", "cpu4", 0.1},
	{"dtlb_mpki", "cpu4", 0.3},
	{"l1i_cache_miss_ratio", "cpu4", 1.0},     /* % */
	{"l1d_cache_miss_ratio", "cpu4", 5.0},
	{"l2_cache_miss_ratio", "cpu4", 20.0},
	{"l3_cache_miss_ratio", "cpu4", 75.0},     /* 4500 / 6000 */
	{"l3_hit_rate", "cpu4", 25.0},             /* (6000 - 4500) / 6000 */
	{"l3_read_hit_rate", "cpu4", 25.0},        /* (4000 - 3000) / 4000 */
	{"ll_cache_read_hit_ratio", "cpu4", 80.0},
	{"branch_misprediction_ratio", "cpu4", 6.0},
	{"branch_mpki", "cpu4", 12.0},
	{"frontend_stalled_cycles", "cpu4", 15.0},
	{"backend_stalled_cycles", "cpu4", 40.0},
	{"bus_bandwidth", "cpu4", 160e6},          /* 10000 * 16 B / 1 ms */
	{"coherency_bandwidth", "cluster0", 128e6},/* 2000 * 64 B / 1 ms */
	{"coherency_ratio", "cluster0", 20.0},     /* 2000 / 10000 */
	{"snoop_rate", "cluster0", 5e6},           /* 5000 / 1 ms */
	{"load_percentage", "cpu4", 20.0},
	{"store_percentage", "cpu4", 10.0},
	{"integer_dp_percentage", "cpu4", 40.0},
	{"simd_percentage", "cpu4", 5.0},
	{"scalar_fp_percentage", "cpu4", 1.0},
	{"crypto_percentage", "cpu4", 0.0},
	{"branch_percentage", "cpu4", 18.0},       /* 225000 / 1.25e6 */
	{"effective_frequency", "cpu4", 2e9},      /* 25 MHz * 2e6 / 25000 */
	{"cycles_frequency", "cpu4", 2e9},         /* 2e6 / 1 ms */
	{"cpu_cycles_normalised", "cpu4", 2e6 * 1e9 / 1.8e9},
};

static void every_metric_matches_its_hand_computed_value(void **state)
{
	(void)state;
	struct fx f;
	build(&f);
	for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
		struct dpmu_an_value v = eval(&f, expected[i].metric, expected[i].unit);
		if (!v.available || fabs(v.value - expected[i].expect) > 1e-9 * fmax(1, fabs(expected[i].expect)))
			fail_msg("%s on %s: got %g (%s), want %g", expected[i].metric, expected[i].unit,
				 v.value, v.available ? "available" : v.why, expected[i].expect);
	}
	dpmu_an_table_free(&f.t);
}

static void every_metric_row_has_a_hand_computed_test(void **state)
{
	(void)state;
	size_t n;
	const struct dpmu_an_metric *m = dpmu_an_metric_table(&n);
	for (size_t i = 0; i < n; i++) {
		bool found = false;
		for (size_t k = 0; k < sizeof expected / sizeof expected[0]; k++)
			found = found || strcmp(expected[k].metric, m[i].name) == 0;
		if (!found)
			fail_msg("metric %s has no hand-computed value in this test", m[i].name);
		assert_non_null(m[i].unit);
		assert_non_null(m[i].source);
		assert_non_null(m[i].description);
		/* every formula parses and names at least one event */
		char names[8][DPMU_NAME_MAX];
		assert_true(dpmu_an_metric_events(&m[i], false, names, 8) > 0);
		if (m[i].alt)
			assert_true(dpmu_an_metric_events(&m[i], true, names, 8) > 0);
	}
}

/* Seed 001 section 4.2: the same hit rate in both DSU numberings. */
static void l3_hit_rate_uses_either_dsu_numbering(void **state)
{
	(void)state;
	struct fx f;
	build(&f);
	struct dpmu_an_value v = eval(&f, "l3_hit_rate", "cluster0");
	assert_true(v.available);
	assert_float_equal(v.value, 30.0, 1e-9); /* (10000 - 7000) / 10000 */
	v = eval(&f, "l3_hit_rate", "cluster1");
	assert_true(v.available);
	assert_float_equal(v.value, 75.0, 1e-9); /* (8000 - 2000) / 8000 */
	v = eval(&f, "l3_cache_miss_ratio", "cluster0");
	assert_float_equal(v.value, 70.0, 1e-9);
	v = eval(&f, "snoop_rate", "cluster1"); /* classic: SCU_SNP_ACCESS */
	assert_float_equal(v.value, 3e6, 1e-3);
	v = eval(&f, "cycles_frequency", "cluster0"); /* CYCLES on the cluster */
	assert_float_equal(v.value, 1.5e9, 1e-3);
	dpmu_an_table_free(&f.t);
}

static void missing_event_is_not_available_and_named(void **state)
{
	(void)state;
	struct fx f;
	build(&f);
	struct dpmu_an_value v = eval(&f, "ipc", "cluster0");
	assert_false(v.available);
	assert_string_equal(v.why, "INST_RETIRED not counted on cluster0");
	assert_int_equal(v.reason, DPMU_AN_NOT_COUNTED);
	/* classic DSU has no snoop data transfer event */
	v = eval(&f, "coherency_bandwidth", "cluster1");
	assert_false(v.available);
	assert_string_equal(v.why, "DATA_TRANSFER not counted on cluster1");
	/* with neither numbering, the first formula's event is named */
	v = eval(&f, "l3_hit_rate", "cluster0");
	assert_true(v.available);
	struct dpmu_an_unit *u;
	assert_int_equal(dpmu_an_unit_add(f.s, DPMU_AN_CPU, 0, "cpu0", 2800000000, &u, &f.err), 0);
	add(u, "CPU_CYCLES", 10);
	v = eval(&f, "l3_hit_rate", "cpu0");
	assert_false(v.available);
	assert_string_equal(v.why, "L3D_CACHE not counted on cpu0");
	dpmu_an_table_free(&f.t);
}

static void unsupported_and_never_scheduled_counts_are_not_available(void **state)
{
	(void)state;
	struct fx f;
	build(&f);
	struct dpmu_an_unit *u;
	assert_int_equal(dpmu_an_unit_add(f.s, DPMU_AN_CPU, 1, "cpu1", 1, &u, &f.err), 0);
	assert_int_equal(dpmu_an_count_add(u, "INST_RETIRED", false, 0, 0, 0, &f.err), 0);
	assert_int_equal(dpmu_an_count_add(u, "CPU_CYCLES", true, 0, MS, 0, &f.err), 0);
	struct dpmu_an_value v = eval(&f, "ipc", "cpu1");
	assert_false(v.available);
	assert_string_equal(v.why, "INST_RETIRED not supported on cpu1");
	assert_int_equal(v.reason, DPMU_AN_NOT_SUPPORTED);
	v = eval(&f, "cpi", "cpu1");
	assert_false(v.available);
	assert_string_equal(v.why, "CPU_CYCLES not counted on cpu1 (never on a counter)");
	assert_int_equal(v.reason, DPMU_AN_NEVER_ON_COUNTER);
	dpmu_an_table_free(&f.t);
}

static void zero_denominator_is_not_available(void **state)
{
	(void)state;
	struct fx f;
	build(&f);
	struct dpmu_an_unit *u;
	assert_int_equal(dpmu_an_unit_add(f.s, DPMU_AN_CPU, 2, "cpu2", 1, &u, &f.err), 0);
	add(u, "BR_RETIRED", 0);
	add(u, "BR_MIS_PRED_RETIRED", 0);
	struct dpmu_an_value v = eval(&f, "branch_misprediction_ratio", "cpu2");
	assert_false(v.available);
	assert_string_equal(v.why, "BR_RETIRED is 0 on cpu2");
	assert_int_equal(v.reason, DPMU_AN_ZERO_DENOMINATOR);
	dpmu_an_table_free(&f.t);
}

static struct dpmu_an_value eval_on(struct fx *f, const struct dpmu_an_metric *m,
				    const struct dpmu_an_unit *u)
{
	struct dpmu_an_value v;
	assert_int_equal(dpmu_an_metric_eval(m, &f->t, f->s, u, &v, &f->err), 0);
	return v;
}

/* The alternative formula is chosen by the reason's code, whatever the
 * reason's text says: the unit names below read like reasons. */
static void alternative_formula_is_chosen_by_the_reason(void **state)
{
	(void)state;
	struct fx f;
	build(&f);
	const struct dpmu_an_metric m = {"m", "A / B", "C / D", "ratio", "test", "test"};
	struct dpmu_an_unit *u;
	/* a zero denominator is the first formula's answer */
	assert_int_equal(dpmu_an_unit_add(f.s, DPMU_AN_CPU, 10, "x not counted", 1, &u, &f.err), 0);
	add(u, "A", 1);
	add(u, "B", 0);
	add(u, "C", 6);
	add(u, "D", 3);
	struct dpmu_an_value v = eval_on(&f, &m, u);
	assert_false(v.available);
	assert_int_equal(v.reason, DPMU_AN_ZERO_DENOMINATOR);
	assert_string_equal(v.why, "B is 0 on x not counted");
	/* a missing event is not: the alternative answers */
	assert_int_equal(dpmu_an_unit_add(f.s, DPMU_AN_CPU, 11, "y is 0", 1, &u, &f.err), 0);
	add(u, "A", 1);
	add(u, "C", 6);
	add(u, "D", 3);
	v = eval_on(&f, &m, u);
	assert_true(v.available);
	assert_int_equal(v.reason, DPMU_AN_AVAILABLE);
	assert_float_equal(v.value, 2.0, 0);
	/* the alternative's own zero denominator is its answer */
	assert_int_equal(dpmu_an_unit_add(f.s, DPMU_AN_CPU, 12, "z", 1, &u, &f.err), 0);
	assert_int_equal(dpmu_an_count_add(u, "A", false, 0, MS, MS, &f.err), 0);
	add(u, "C", 6);
	add(u, "D", 0);
	v = eval_on(&f, &m, u);
	assert_false(v.available);
	assert_int_equal(v.reason, DPMU_AN_ZERO_DENOMINATOR);
	assert_string_equal(v.why, "D is 0 on z");
	/* both lack an event: the first formula's reason names the usual one */
	assert_int_equal(dpmu_an_unit_add(f.s, DPMU_AN_CPU, 13, "w", 1, &u, &f.err), 0);
	add(u, "B", 2);
	assert_int_equal(dpmu_an_count_add(u, "C", true, 0, MS, 0, &f.err), 0);
	add(u, "D", 3);
	v = eval_on(&f, &m, u);
	assert_false(v.available);
	assert_int_equal(v.reason, DPMU_AN_NOT_COUNTED);
	assert_string_equal(v.why, "A not counted on w");
	dpmu_an_table_free(&f.t);
}

/* Reference section 7: a multiplexed count is value * enabled / running,
 * and the metric reports the lowest running fraction of its inputs. */
static void multiplexed_counts_are_scaled(void **state)
{
	(void)state;
	struct fx f;
	build(&f);
	struct dpmu_an_unit *u;
	assert_int_equal(dpmu_an_unit_add(f.s, DPMU_AN_CPU, 3, "cpu3", 1, &u, &f.err), 0);
	assert_int_equal(dpmu_an_count_add(u, "INST_RETIRED", true, 300, 4 * MS, 3 * MS, &f.err), 0);
	assert_int_equal(dpmu_an_count_add(u, "CPU_CYCLES", true, 800, 4 * MS, 4 * MS, &f.err), 0);
	assert_float_equal(dpmu_an_count_estimate(&u->counts[0]), 400.0, 1e-9);
	struct dpmu_an_value v = eval(&f, "ipc", "cpu3");
	assert_true(v.available);
	assert_float_equal(v.value, 0.5, 1e-12);
	assert_float_equal(v.running, 0.75, 1e-12);
	/* running > enabled is bad input */
	assert_int_equal(dpmu_an_count_add(u, "L1D_CACHE", true, 1, MS, 2 * MS, &f.err), DPMU_EINVAL);
	assert_non_null(strstr(f.err.msg, "L1D_CACHE on cpu3"));
	dpmu_an_table_free(&f.t);
}

static void unknown_clock_makes_frequency_metrics_not_available(void **state)
{
	(void)state;
	struct fx f;
	build(&f);
	f.t.const_freq_hz = 0;
	struct dpmu_an_value v = eval(&f, "effective_frequency", "cpu4");
	assert_false(v.available);
	assert_string_equal(v.why, "the AMU constant clock is not known for cpu4");
	assert_int_equal(v.reason, DPMU_AN_UNKNOWN_VARIABLE);
	dpmu_an_table_free(&f.t);
}

/* Seed 001 section 5.2: count * ref_freq / cpu_freq. */
static void normalise_scales_by_the_clock_ratio(void **state)
{
	(void)state;
	assert_float_equal(dpmu_an_normalise(1800.0, 1000000000, 1800000000), 1000.0, 1e-9);
	assert_float_equal(dpmu_an_normalise(1000.0, 2000000000, 1000000000), 2000.0, 1e-9);
	assert_float_equal(dpmu_an_normalise(1000.0, 1, 0), 0.0, 0);
}

static void metric_list_parses_and_suggests(void **state)
{
	(void)state;
	const struct dpmu_an_metric *ms[8];
	size_t n;
	struct dpmu_err err;
	assert_int_equal(dpmu_an_metrics_parse("ipc, L2_CACHE_MPKI,ipc", ms, 8, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(ms[0]->name, "ipc");
	assert_string_equal(ms[1]->name, "l2_cache_mpki");
	assert_int_equal(dpmu_an_metrics_parse("ipcc", ms, 8, &n, &err), DPMU_ENOENT);
	assert_string_equal(err.msg, "unknown metric 'ipcc' (did you mean ipc?)");
	assert_int_equal(dpmu_an_metrics_parse("zzzzzzzzzz", ms, 8, &n, &err), DPMU_ENOENT);
	assert_non_null(strstr(err.msg, "docs/metrics.md"));
	assert_int_equal(dpmu_an_metrics_parse("", ms, 8, &n, &err), DPMU_EINVAL);
	assert_int_equal(dpmu_an_metrics_parse("ipc,cpi", ms, 1, &n, &err), DPMU_ERANGE);
}

static void metric_events_lists_each_event_once(void **state)
{
	(void)state;
	char names[8][DPMU_NAME_MAX];
	size_t n = dpmu_an_metric_events(dpmu_an_metric_find("l3_hit_rate"), false, names, 8);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "L3D_CACHE");
	assert_string_equal(names[1], "L3D_CACHE_REFILL");
	n = dpmu_an_metric_events(dpmu_an_metric_find("l3_hit_rate"), true, names, 8);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "L3_ACCESS");
	assert_string_equal(names[1], "L3_MISS");
	/* variables are not events */
	n = dpmu_an_metric_events(dpmu_an_metric_find("coherency_bandwidth"), false, names, 8);
	assert_int_equal(n, 1);
	assert_string_equal(names[0], "DATA_TRANSFER");
}

static void malformed_formula_is_an_error(void **state)
{
	(void)state;
	struct fx f;
	build(&f);
	const struct dpmu_an_metric bad = {"bad", "(INST_RETIRED / ", NULL, "x", "test", "test"};
	struct dpmu_an_value v;
	assert_int_equal(dpmu_an_metric_eval(&bad, &f.t, f.s, &f.s->units[0], &v, &f.err),
			 DPMU_EINVAL);
	assert_non_null(strstr(f.err.msg, "formula '(INST_RETIRED / '"));
	dpmu_an_table_free(&f.t);
}

static void table_rejects_bad_names_and_duplicates(void **state)
{
	(void)state;
	struct fx f;
	build(&f);
	struct dpmu_an_unit *u;
	assert_int_equal(dpmu_an_unit_add(f.s, DPMU_AN_CPU, 4, "cpu4", 1, &u, &f.err), DPMU_EINVAL);
	assert_string_equal(f.err.msg, "unit 'cpu4' is already in this sample");
	assert_int_equal(dpmu_an_unit_add(f.s, DPMU_AN_CPU, 9, "", 1, &u, &f.err), DPMU_EINVAL);
	assert_int_equal(dpmu_an_count_add(&f.s->units[0], "ipc_not_an_event_but_fine", true, 1, 0, 0,
					   &f.err),
			 0);
	assert_int_equal(dpmu_an_count_add(&f.s->units[0], "cpu_cycles", true, 1, 0, 0, &f.err),
			 DPMU_EINVAL);
	assert_string_equal(f.err.msg, "event cpu_cycles is already counted on cpu4");
	dpmu_an_table_free(&f.t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_metric_matches_its_hand_computed_value),
		cmocka_unit_test(every_metric_row_has_a_hand_computed_test),
		cmocka_unit_test(l3_hit_rate_uses_either_dsu_numbering),
		cmocka_unit_test(missing_event_is_not_available_and_named),
		cmocka_unit_test(unsupported_and_never_scheduled_counts_are_not_available),
		cmocka_unit_test(zero_denominator_is_not_available),
		cmocka_unit_test(alternative_formula_is_chosen_by_the_reason),
		cmocka_unit_test(multiplexed_counts_are_scaled),
		cmocka_unit_test(unknown_clock_makes_frequency_metrics_not_available),
		cmocka_unit_test(normalise_scales_by_the_clock_ratio),
		cmocka_unit_test(metric_list_parses_and_suggests),
		cmocka_unit_test(metric_events_lists_each_event_once),
		cmocka_unit_test(malformed_formula_is_an_error),
		cmocka_unit_test(table_rejects_bad_names_and_duplicates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
