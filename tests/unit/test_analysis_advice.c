/*
 * Advice: each rule of the rule table fires on the numbers its seed gives
 * and stays silent on the other side of its threshold; the message prints
 * the numbers that made it fire.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dynpmu/analysis.h"

#define MS 1000000ull

struct fx {
	struct dpmu_an_table t;
	struct dpmu_an_sample *s;
	struct dpmu_err err;
	struct dpmu_an_advice adv[16];
	size_t n;
};

static void init(struct fx *f)
{
	memset(f, 0, sizeof *f);
	dpmu_an_table_init(&f->t);
	assert_int_equal(dpmu_an_sample_add(&f->t, 0, MS, &f->s, &f->err), 0);
}

static struct dpmu_an_unit *unit(struct fx *f, enum dpmu_an_unit_kind k, const char *name,
				 bool little)
{
	struct dpmu_an_unit *u;
	assert_int_equal(dpmu_an_unit_add(f->s, k, 0, name, 1000000000, &u, &f->err), 0);
	u->little = little;
	u->line_bytes = 64;
	return u;
}

static void add(struct dpmu_an_unit *u, const char *ev, uint64_t v)
{
	struct dpmu_err err;
	assert_int_equal(dpmu_an_count_add(u, ev, true, v, MS, MS, &err), 0);
}

/* The firing of `rule` on `unit`, or NULL. */
static const struct dpmu_an_advice *fired(struct fx *f, const char *rule, const char *unit_name)
{
	assert_int_equal(dpmu_an_advise(&f->t, 0, f->adv, 16, &f->n, &f->err), 0);
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->adv[i].rule->name, rule) == 0 && strcmp(f->adv[i].unit, unit_name) == 0)
			return &f->adv[i];
	return NULL;
}

/* Seed 001 section 4.2: LITTLE cluster L3 hit rate below 40 %. */
static void little_l3_hit_rate_below_40_percent_fires(void **state)
{
	(void)state;
	struct fx f;
	init(&f);
	struct dpmu_an_unit *u = unit(&f, DPMU_AN_CLUSTER, "cluster1", true);
	add(u, "L3_ACCESS", 1000);
	add(u, "L3_MISS", 650); /* hit rate 35 % */
	const struct dpmu_an_advice *a = fired(&f, "little_l3_hit_rate", "cluster1");
	assert_non_null(a);
	assert_float_equal(a->value[0], 35.0, 1e-9);
	assert_string_equal(a->text, "cluster1: L3 hit rate 35.00 % is below 40.00 % on a LITTLE "
				     "unit: consider moving the task to the big cores");
	dpmu_an_table_free(&f.t);
}

static void little_l3_hit_rate_silent_at_40_percent_or_on_big_units(void **state)
{
	(void)state;
	struct fx f;
	init(&f);
	struct dpmu_an_unit *u = unit(&f, DPMU_AN_CPU, "cpu4", true);
	add(u, "L3D_CACHE", 1000);
	add(u, "L3D_CACHE_REFILL", 600); /* exactly 40 %: not below */
	u = unit(&f, DPMU_AN_CPU, "cpu0", false);
	add(u, "L3D_CACHE", 1000);
	add(u, "L3D_CACHE_REFILL", 900); /* 10 %, but a big core */
	assert_null(fired(&f, "little_l3_hit_rate", "cpu4"));
	assert_null(fired(&f, "little_l3_hit_rate", "cpu0"));
	dpmu_an_table_free(&f.t);
}

/* Seed 001 section 4.2: heavy coherency traffic -> false sharing, with the
 * hottest symbols where the table knows them. */
static void heavy_coherency_traffic_suspects_false_sharing(void **state)
{
	(void)state;
	struct fx f;
	init(&f);
	struct dpmu_an_unit *u = unit(&f, DPMU_AN_CLUSTER, "cluster0", false);
	add(u, "L3_ACCESS", 10000);
	add(u, "DATA_TRANSFER", 2500); /* 25 % of requests, 2500 * 64 B / 1 ms = 160 MB/s */
	const struct dpmu_an_advice *a = fired(&f, "false_sharing", "cluster0");
	assert_non_null(a);
	assert_float_equal(a->value[0], 25.0, 1e-9);
	assert_float_equal(a->value[1], 160e6, 1e-3);
	assert_non_null(strstr(a->text, "25.00 % of L3 requests"));
	assert_non_null(strstr(a->text, "160.00 MB/s"));
	assert_non_null(strstr(a->text, "(no symbol information)"));

	static const struct {
		const char *n;
		uint64_t c;
	} syms[] = {{"cold_table", 3}, {"counters", 900}, {"stats", 40}, {"lock", 120}};
	for (size_t i = 0; i < 4; i++) {
		snprintf(f.t.symbols[i].name, sizeof f.t.symbols[i].name, "%s", syms[i].n);
		f.t.symbols[i].count = syms[i].c;
	}
	f.t.nsymbols = 4;
	a = fired(&f, "false_sharing", "cluster0");
	assert_non_null(a);
	assert_non_null(strstr(a->text, "hottest symbols: counters (900), lock (120), stats (40)"));
	assert_null(strstr(a->text, "cold_table"));
	dpmu_an_table_free(&f.t);
}

static void light_coherency_traffic_is_silent(void **state)
{
	(void)state;
	struct fx f;
	init(&f);
	struct dpmu_an_unit *u = unit(&f, DPMU_AN_CLUSTER, "cluster0", false);
	add(u, "L3_ACCESS", 100000);
	add(u, "DATA_TRANSFER", 5000); /* 5 %: below the ratio threshold */
	struct dpmu_an_unit *v = unit(&f, DPMU_AN_CLUSTER, "cluster1", false);
	add(v, "L3_ACCESS", 100);
	add(v, "DATA_TRANSFER", 50); /* 50 %, but 3.2 MB/s */
	assert_null(fired(&f, "false_sharing", "cluster0"));
	assert_null(fired(&f, "false_sharing", "cluster1"));
	dpmu_an_table_free(&f.t);
}

/* Seed 003 sections 3.2 and 6.1: backend stalls with L1D refills. */
static void backend_stalls_with_high_l1d_mpki_point_at_data_locality(void **state)
{
	(void)state;
	struct fx f;
	init(&f);
	struct dpmu_an_unit *u = unit(&f, DPMU_AN_CPU, "cpu0", false);
	add(u, "CPU_CYCLES", 10000000);
	add(u, "STALL_BACKEND", 4500000); /* 45 % */
	add(u, "INST_RETIRED", 5000000);
	add(u, "L1D_CACHE_REFILL", 125000); /* 25 MPKI */
	const struct dpmu_an_advice *a = fired(&f, "data_locality", "cpu0");
	assert_non_null(a);
	assert_non_null(strstr(a->text, "45.00 % of cycles with 25.00 MPKI"));
	dpmu_an_table_free(&f.t);
}

static void backend_stalls_without_l1d_misses_are_silent(void **state)
{
	(void)state;
	struct fx f;
	init(&f);
	struct dpmu_an_unit *u = unit(&f, DPMU_AN_CPU, "cpu0", false);
	add(u, "CPU_CYCLES", 10000000);
	add(u, "STALL_BACKEND", 4500000);
	add(u, "INST_RETIRED", 5000000);
	add(u, "L1D_CACHE_REFILL", 10000); /* 2 MPKI */
	u = unit(&f, DPMU_AN_CPU, "cpu1", false);
	add(u, "CPU_CYCLES", 10000000);
	add(u, "STALL_BACKEND", 1000000); /* 10 % */
	add(u, "INST_RETIRED", 5000000);
	add(u, "L1D_CACHE_REFILL", 125000);
	assert_null(fired(&f, "data_locality", "cpu0"));
	assert_null(fired(&f, "data_locality", "cpu1"));
	dpmu_an_table_free(&f.t);
}

/* Seed 003 section 6.2: 423K of 5.2M branches mispredicted (8.1 %) before,
 * 156K of 5.1M (3.1 %) after the fix. */
static void seed_branch_case_fires_before_and_not_after(void **state)
{
	(void)state;
	struct fx f;
	init(&f);
	struct dpmu_an_unit *u = unit(&f, DPMU_AN_CPU, "cpu0", false);
	add(u, "BR_RETIRED", 5200000);
	add(u, "BR_MIS_PRED_RETIRED", 423000);
	u = unit(&f, DPMU_AN_CPU, "cpu1", false);
	add(u, "BR_RETIRED", 5100000);
	add(u, "BR_MIS_PRED_RETIRED", 156000);
	const struct dpmu_an_advice *a = fired(&f, "branch_layout", "cpu0");
	assert_non_null(a);
	assert_non_null(strstr(a->text, "8.13 % of branches mispredicted (threshold 5.00 %)"));
	assert_null(fired(&f, "branch_layout", "cpu1"));
	dpmu_an_table_free(&f.t);
}

/* Seed 003 section 8.3: a counter that stays zero. */
static void cycle_counter_stuck_at_zero_fires(void **state)
{
	(void)state;
	struct fx f;
	init(&f);
	struct dpmu_an_unit *u = unit(&f, DPMU_AN_CPU, "cpu2", false);
	add(u, "CPU_CYCLES", 0);
	add(u, "INST_RETIRED", 0);
	add(u, "L1D_CACHE", 0);
	const struct dpmu_an_advice *a = fired(&f, "zero_counter", "cpu2");
	assert_non_null(a);
	assert_non_null(strstr(a->text, "cpu2: CPU_CYCLES, INST_RETIRED stayed 0 over 0.001000 s"));
	assert_non_null(strstr(a->text, "PMCR.E, PMCNTENSET"));
	dpmu_an_table_free(&f.t);
}

static void zero_counter_silent_when_counting_or_not_scheduled(void **state)
{
	(void)state;
	struct fx f;
	init(&f);
	struct dpmu_an_unit *u = unit(&f, DPMU_AN_CPU, "cpu2", false);
	add(u, "CPU_CYCLES", 1000);
	add(u, "L1I_CACHE_REFILL", 0); /* may legitimately be 0 */
	u = unit(&f, DPMU_AN_CPU, "cpu3", false);
	/* never on a counter (multiplexed out): 0 says nothing */
	assert_int_equal(dpmu_an_count_add(u, "CPU_CYCLES", true, 0, MS, 0, &f.err), 0);
	assert_null(fired(&f, "zero_counter", "cpu2"));
	assert_null(fired(&f, "zero_counter", "cpu3"));
	dpmu_an_table_free(&f.t);
}

/* A core that reads 0 on every such event while another core counts ran
 * nothing (idle, as in WFI); one that counts cycles but no instructions
 * has a filter or enable problem. */
static void zero_counter_silent_for_idle_core_but_not_for_half_counting_one(void **state)
{
	(void)state;
	struct fx f;
	init(&f);
	struct dpmu_an_unit *u = unit(&f, DPMU_AN_CPU, "cpu0", false);
	add(u, "CPU_CYCLES", 5000);
	add(u, "INST_RETIRED", 4000);
	u = unit(&f, DPMU_AN_CPU, "cpu1", false);
	add(u, "CPU_CYCLES", 0);
	add(u, "INST_RETIRED", 0);
	u = unit(&f, DPMU_AN_CPU, "cpu2", false);
	add(u, "CPU_CYCLES", 3000);
	add(u, "INST_RETIRED", 0);
	assert_null(fired(&f, "zero_counter", "cpu1"));
	const struct dpmu_an_advice *a = fired(&f, "zero_counter", "cpu2");
	assert_non_null(a);
	assert_non_null(strstr(a->text, "cpu2: INST_RETIRED stayed 0"));
	assert_null(fired(&f, "zero_counter", "cpu0"));
	dpmu_an_table_free(&f.t);
}

static void every_rule_reads_known_metrics_and_has_a_source(void **state)
{
	(void)state;
	size_t n;
	const struct dpmu_an_rule *r = dpmu_an_rule_table(&n);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(r[i].source);
		assert_non_null(strstr(r[i].source, "seed"));
		for (unsigned c = 0; c < DPMU_AN_RULE_CONDS; c++)
			if (r[i].cond[c].metric)
				assert_non_null(dpmu_an_metric_find(r[i].cond[c].metric));
	}
	struct fx f;
	init(&f);
	assert_int_equal(dpmu_an_advise(&f.t, 3, f.adv, 16, &f.n, &f.err), DPMU_ERANGE);
	dpmu_an_table_free(&f.t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(little_l3_hit_rate_below_40_percent_fires),
		cmocka_unit_test(little_l3_hit_rate_silent_at_40_percent_or_on_big_units),
		cmocka_unit_test(heavy_coherency_traffic_suspects_false_sharing),
		cmocka_unit_test(light_coherency_traffic_is_silent),
		cmocka_unit_test(backend_stalls_with_high_l1d_mpki_point_at_data_locality),
		cmocka_unit_test(backend_stalls_without_l1d_misses_are_silent),
		cmocka_unit_test(seed_branch_case_fires_before_and_not_after),
		cmocka_unit_test(cycle_counter_stuck_at_zero_fires),
		cmocka_unit_test(zero_counter_silent_when_counting_or_not_scheduled),
		cmocka_unit_test(zero_counter_silent_for_idle_core_but_not_for_half_counting_one),
		cmocka_unit_test(every_rule_reads_known_metrics_and_has_a_source),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
