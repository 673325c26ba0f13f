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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <jansson.h>

#include "dynpmu/arch.h"
#include "dynpmu/embedded.h"

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
			/* Cortex-A55 SOG sections 4.5, 4.11 (docs/profiles.md) */
			assert_int_equal(t->pipeline.exec_latency[DPMU_EX_FP], 4);
			assert_int_equal(t->pipeline.exec_latency[DPMU_EX_FP_DIV], 22);
		}
		/* a result of the simple class is ready at its issue */
		assert_int_equal(t->pipeline.exec_latency[DPMU_EX_SIMPLE], 0);
		assert_true(t->pipeline.exec_latency[DPMU_EX_INT_MUL] > 0);
		/* Both cores: 6 event counters, PMUv3 without v3p5 (reference section 1). */
		assert_int_equal(t->pmu_counters, 6);
		assert_false(t->pmuv3p5);
		assert_true(t->freq_hz > 0);
		/* Seed 003 section 5: 3 fixed AMU counters, 2 programmable over 6 events. */
		/* AMUv1: four architected group-0 counters (AMCGCR_EL0.CG0NC = 4). */
		assert_int_equal(t->amu_group0, 4);
		assert_int_equal(t->amu_group0_events[0], DPMU_EV_CPU_CYCLES);
		assert_int_equal(t->amu_group0_events[1], DPMU_EV_CNT_CYCLES);
		assert_int_equal(t->amu_group0_events[2], DPMU_EV_INST_RETIRED);
		assert_int_equal(t->amu_group0_events[3], 0x4005); /* STALL_BACKEND_MEM */
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

/* ---- malformed profiles ------------------------------------------------- */

/* The default profile as a JSON tree to mutate. */
static json_t *default_tree(void)
{
	const struct dpmu_embedded_file *f = dpmu_embedded_find("profiles/a75x4-a55x4.json");
	assert_non_null(f);
	json_error_t je;
	json_t *root = json_loads(f->data, 0, &je);
	assert_non_null(root);
	return root;
}

/* Walk "a.b[2].c" to the parent of the last component; set or (value NULL)
 * delete it. */
static void mutate(json_t *root, const char *path, json_t *value)
{
	char buf[200];
	snprintf(buf, sizeof buf, "%s", path);
	json_t *cur = root;
	char *s = buf;
	for (;;) {
		char key[64];
		size_t n = strcspn(s, ".[");
		memcpy(key, s, n);
		key[n] = '\0';
		s += n;
		json_t *obj = cur;
		if (n)
			cur = json_object_get(obj, key);
		long idx = -1;
		if (*s == '[') {
			idx = strtol(s + 1, &s, 10);
			s++; /* ']' */
		}
		bool last = (*s == '\0');
		if (last && idx < 0) {
			if (value)
				json_object_set_new(obj, key, value);
			else
				json_object_del(obj, key);
			return;
		}
		if (idx >= 0) {
			if (last) {
				json_array_set_new(cur, (size_t)idx, value);
				return;
			}
			cur = json_array_get(cur, (size_t)idx);
		}
		assert_non_null(cur);
		if (*s == '.')
			s++;
	}
}

static int parse_tree(json_t *root, struct dpmu_profile **p, struct dpmu_err *err)
{
	char *text = json_dumps(root, JSON_INDENT(1));
	assert_non_null(text);
	dpmu_err_clear(err);
	int rc = dpmu_profile_parse(text, "myprof.json", p, err);
	free(text);
	json_decref(root);
	return rc;
}

/* One mutation of the default profile must fail with `code` and a message
 * that contains `needle` (which starts with the file and key path). */
static void expect_bad(const char *path, json_t *value, int code, const char *needle)
{
	json_t *root = default_tree();
	mutate(root, path, value);
	struct dpmu_profile *p = (struct dpmu_profile *)1;
	struct dpmu_err err;
	int rc = parse_tree(root, &p, &err);
	if (rc == 0 || !strstr(err.msg, needle))
		fail_msg("%s: rc %d msg '%s'; want %d and '%s'", path, rc, err.msg, code, needle);
	assert_int_equal(rc, code);
	assert_null(p);
}

static void test_bad_cache_geometry(void **state)
{
	(void)state;
	expect_bad("core_types[0].l1d.ways", json_integer(3), DPMU_EINVAL,
		   "myprof.json: core_types[0].l1d.ways: must be a power of two, got 3");
	expect_bad("core_types[1].l1i.line", json_integer(8), DPMU_EINVAL,
		   "myprof.json: core_types[1].l1i.line: must be a power of two >= 16 bytes, got 8");
	expect_bad("core_types[1].l1i.line", json_integer(48), DPMU_EINVAL,
		   "core_types[1].l1i.line: must be a power of two >= 16 bytes, got 48");
	expect_bad("core_types[0].l1d.size", json_string("48KiB"), DPMU_EINVAL,
		   "myprof.json: core_types[0].l1d.size: must be ways x line x sets with sets a "
		   "power of two");
	expect_bad("core_types[0].l2.size", json_string("256 furlongs"), DPMU_EINVAL,
		   "core_types[0].l2.size: cannot read \"256 furlongs\"");
	expect_bad("clusters[0].l3.ways", json_integer(0), DPMU_ERANGE,
		   "myprof.json: clusters[0].l3.ways: must be 1 to 64, got 0");
	expect_bad("clusters[0].l3.replacement", json_string("fifo"), DPMU_EINVAL,
		   "clusters[0].l3.replacement: must be one of lru, plru, random, got \"fifo\"");
	expect_bad("core_types[0].l1d.prefetcher", json_string("magic"), DPMU_EINVAL,
		   "core_types[0].l1d.prefetcher: must be one of none, next-line, stride");
	expect_bad("core_types[0].l1d.latency", json_integer(0), DPMU_ERANGE,
		   "core_types[0].l1d.latency: must be 1 to");
}

static void test_unknown_and_missing_keys(void **state)
{
	(void)state;
	expect_bad("core_types[0].l1d.wayz", json_integer(4), DPMU_EINVAL,
		   "myprof.json: core_types[0].l1d: unknown key 'wayz'");
	expect_bad("clusterz", json_array(), DPMU_EINVAL, "myprof.json: unknown key 'clusterz'");
	expect_bad("core_types[0].pipeline.exec_latency.fp_add", json_integer(3), DPMU_EINVAL,
		   "core_types[0].pipeline.exec_latency: unknown key 'fp_add'");
	expect_bad("clusters[0].pmu.counter", json_integer(6), DPMU_EINVAL,
		   "clusters[0].pmu: unknown key 'counter'");
	expect_bad("core_types[1].l2.size", NULL, DPMU_EINVAL,
		   "myprof.json: core_types[1].l2: missing required key 'size'");
	expect_bad("timer_freq", NULL, DPMU_EINVAL, "myprof.json: missing required key 'timer_freq'");
	expect_bad("clusters[0].snoop_filter", NULL, DPMU_EINVAL,
		   "clusters[0]: missing required key 'snoop_filter'");
	expect_bad("core_types[0].tlb.l2", NULL, DPMU_EINVAL,
		   "core_types[0].tlb: missing required key 'l2'");
	expect_bad("clusters", NULL, DPMU_EINVAL, "missing required key 'clusters'");
}

static void test_wrong_types(void **state)
{
	(void)state;
	expect_bad("core_types[0].pmu.counters", json_string("six"), DPMU_EINVAL,
		   "myprof.json: core_types[0].pmu.counters: must be an integer, got a string");
	expect_bad("core_types[0].pmu.pmuv3p5", json_integer(1), DPMU_EINVAL,
		   "core_types[0].pmu.pmuv3p5: must be true or false, got an integer");
	expect_bad("core_types[0].midr", json_string("D0A"), DPMU_EINVAL,
		   "core_types[0].midr: must be an integer or a \"0x...\" hex string");
	expect_bad("core_types[0].midr", json_string("0x1410fd0a0"), DPMU_ERANGE,
		   "core_types[0].midr: must be at most 0xffffffff");
	expect_bad("core_types[0].l1d", json_integer(64), DPMU_EINVAL,
		   "core_types[0].l1d: must be an object, got an integer");
	expect_bad("clusters", json_object(), DPMU_EINVAL, "clusters: must be an array, got an object");
	expect_bad("core_types[0].pipeline.base_cpi", json_string("0.4"), DPMU_EINVAL,
		   "core_types[0].pipeline.base_cpi: must be a number, got a string");
	expect_bad("name", json_integer(7), DPMU_EINVAL, "myprof.json: name: must be a string");
	expect_bad("core_types[0].pipeline.exec_latency", json_integer(3), DPMU_EINVAL,
		   "core_types[0].pipeline.exec_latency: must be an object");
}

static void test_out_of_range_values(void **state)
{
	(void)state;
	expect_bad("core_types[0].pmu.counters", json_integer(0), DPMU_ERANGE,
		   "core_types[0].pmu.counters: must be 1 to 31, got 0");
	expect_bad("core_types[0].pmu.counters", json_integer(32), DPMU_ERANGE,
		   "core_types[0].pmu.counters: must be 1 to 31, got 32");
	expect_bad("clusters[0].pmu.counters", json_integer(32), DPMU_ERANGE,
		   "clusters[0].pmu.counters: must be 1 to 31, got 32");
	expect_bad("clusters[0].freq", json_integer(0), DPMU_ERANGE,
		   "myprof.json: clusters[0].freq: must be 1 to");
	expect_bad("core_types[1].freq", json_string("-1GHz"), DPMU_ERANGE,
		   "core_types[1].freq: must be 1 to");
	expect_bad("timer_freq", json_string("fast"), DPMU_EINVAL, "timer_freq: cannot read \"fast\"");
	expect_bad("core_types[0].pmu.idcode", json_integer(256), DPMU_ERANGE,
		   "core_types[0].pmu.idcode: must be at most 0xff");
	expect_bad("core_types[0].tlb.page_size", json_string("8KiB"), DPMU_EINVAL,
		   "core_types[0].tlb.page_size: must be a translation granule");
	expect_bad("core_types[0].tlb.l2.ways", json_integer(3), DPMU_EINVAL,
		   "core_types[0].tlb.l2.ways: entries / ways must be a whole power of two");
	expect_bad("core_types[0].branch.entries", json_integer(1000), DPMU_EINVAL,
		   "core_types[0].branch.entries: must be a power of two, got 1000");
	expect_bad("core_types[0].branch.history_bits", json_integer(0), DPMU_ERANGE,
		   "core_types[0].branch.history_bits: must be at least 1 for a gshare");
	expect_bad("core_types[0].pipeline.issue_width", json_integer(0), DPMU_ERANGE,
		   "core_types[0].pipeline.issue_width: must be 1 to 16, got 0");
	expect_bad("core_types[0].pipeline.base_cpi", json_real(0.0), DPMU_ERANGE,
		   "core_types[0].pipeline.base_cpi: must be 0.01 to 100");
	expect_bad("core_types[1].pipeline.exec_latency.fp_div", json_integer(1001), DPMU_ERANGE,
		   "core_types[1].pipeline.exec_latency.fp_div: must be 0 to 1000, got 1001");
	expect_bad("memory.bus_width", json_integer(24), DPMU_EINVAL,
		   "memory.bus_width: must be a power of two, got 24");
	expect_bad("memory.dram_bandwidth", json_string("0GB/s"), DPMU_ERANGE,
		   "memory.dram_bandwidth: must be 1 to");
	expect_bad("snapshot_latency", json_integer(-1), DPMU_ERANGE,
		   "snapshot_latency: must be 0 to 1000000, got -1");
}

static void test_topology_limits(void **state)
{
	(void)state;
	expect_bad("clusters[0].cores[1].type", json_string("Cortex-A76"), DPMU_ENOENT,
		   "myprof.json: clusters[0].cores[1].type: unknown core type 'Cortex-A76' "
		   "(core_types defines: Cortex-A75, Cortex-A55)");
	expect_bad("clusters[0].cores[0].count", json_integer(5), DPMU_ERANGE,
		   "clusters[0].cores[1].count: at most 8 cores per cluster, got 9");
	expect_bad("clusters[0].cores[0].count", json_integer(0), DPMU_ERANGE,
		   "clusters[0].cores[0].count: must be 1 to 8, got 0");
	expect_bad("clusters[0].cores", json_array(), DPMU_ERANGE,
		   "clusters[0].cores: must have 1 to 8 entries, got 0");
	expect_bad("core_types[1].name", json_string("Cortex-A75"), DPMU_EINVAL,
		   "core_types[1].name: core type name repeats core_types[0]");
	expect_bad("clusters[0].cores[0].freq", json_string("2GHz"), DPMU_EINVAL,
		   "clusters[0].cores[0].freq: conflicts with the frequency");

	/* five clusters, five core types: one more than DPMU_MAX_* */
	json_t *root = default_tree();
	json_t *cl = json_object_get(root, "clusters");
	for (int i = 0; i < DPMU_MAX_CLUSTERS; i++)
		json_array_append_new(cl, json_deep_copy(json_array_get(cl, 0)));
	struct dpmu_profile *p;
	struct dpmu_err err;
	assert_int_equal(parse_tree(root, &p, &err), DPMU_ERANGE);
	assert_non_null(strstr(err.msg, "myprof.json: clusters: must have 1 to 4 entries, got 5"));

	root = default_tree();
	json_t *ct = json_object_get(root, "core_types");
	for (int i = 0; i < 3; i++)
		json_array_append_new(ct, json_deep_copy(json_array_get(ct, 0)));
	assert_int_equal(parse_tree(root, &p, &err), DPMU_ERANGE);
	assert_non_null(strstr(err.msg, "myprof.json: core_types: must have 1 to 4 entries, got 5"));
}

static void test_bad_event_references(void **state)
{
	(void)state;
	json_t *ev = json_pack("[s, s]", "CPU_CYCLES", "NOPE");
	expect_bad("core_types[0].pmu.events", ev, DPMU_ENOENT,
		   "myprof.json: core_types[0].pmu.events[1]: unknown event 'NOPE' in catalog "
		   "'cortex-a75'");
	expect_bad("core_types[1].pmu.events", json_pack("[i, i]", 0x11, 0x11), DPMU_EINVAL,
		   "core_types[1].pmu.events[1]: event 0x11 listed twice");
	expect_bad("core_types[1].pmu.events", json_pack("[i]", 0xE0), DPMU_ENOENT,
		   "core_types[1].pmu.events[0]: event 0xe0 is not in catalog 'cortex-a55'");
	expect_bad("core_types[0].pmu.events", json_string("most"), DPMU_EINVAL,
		   "core_types[0].pmu.events: must be \"all\" or an array");
	expect_bad("clusters[0].pmu.events", json_pack("[s]", "L3_ACCESS"), DPMU_ENOENT,
		   "clusters[0].pmu.events[0]: unknown event 'L3_ACCESS' in catalog 'dsu'");
	expect_bad("core_types[0].amu.group0", json_pack("[s,s,s,s,s]", "CPU_CYCLES", "CNT_CYCLES",
							 "INST_RETIRED", "STALL_BACKEND_MEM",
							 "L1D_CACHE"),
		   DPMU_ERANGE, "core_types[0].amu.group0: at most 4 events, got 5");
	expect_bad("core_types[0].amu.selectable", json_pack("[s]", "BR_RETIRED"), DPMU_ENOENT,
		   "core_types[0].amu.selectable[0]: unknown event 'BR_RETIRED' in catalog 'amu'");
	expect_bad("core_types[0].amu.selectable", json_array(), DPMU_EINVAL,
		   "core_types[0].amu.selectable: must list at least one event when group1 has 2");
	expect_bad("core_types[0].amu.group1", json_integer(17), DPMU_ERANGE,
		   "core_types[0].amu.group1: must be 0 to 16, got 17");
	expect_bad("core_types[0].catalog", json_string("cortex-a99"), DPMU_ENOENT,
		   "myprof.json: core_types[0].catalog: no event catalog 'cortex-a99'");
	expect_bad("core_types[0].catalog", json_string("dsu"), DPMU_EINVAL,
		   "core_types[0].catalog: catalog 'dsu' has no core PMU events");
	expect_bad("clusters[0].pmu.catalog", json_string("cortex-a75"), DPMU_EINVAL,
		   "clusters[0].pmu.catalog: catalog 'cortex-a75' has no cluster PMU events");
}

static void test_syntax_errors_give_line_and_column(void **state)
{
	(void)state;
	struct dpmu_profile *p;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	assert_int_equal(dpmu_profile_parse("{\n  \"name\": \"x\",\n  \"clusters\": [,]\n}", "myprof.json",
					    &p, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "myprof.json:3:"));
	assert_non_null(strstr(err.msg, "JSON syntax error"));
	assert_int_equal(dpmu_profile_parse("{\"name\": \"a\", \"name\": \"b\"}", "dup.json", &p, &err),
			 DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "dup.json:1:"));
	assert_non_null(strstr(err.msg, "duplicate"));
	assert_int_equal(dpmu_profile_parse("[]", "arr.json", &p, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "arr.json: must be an object, got an array"));
	assert_int_equal(dpmu_profile_parse("", "empty.json", &p, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "empty.json:"));
	assert_int_equal(dpmu_profile_parse(NULL, "null.json", &p, &err), DPMU_EINVAL);
}

/* ---- what a hand-written profile may say --------------------------------- */

static struct dpmu_profile *parse_ok(json_t *root)
{
	struct dpmu_profile *p = NULL;
	struct dpmu_err err;
	if (parse_tree(root, &p, &err) != 0)
		fail_msg("%s", err.msg);
	return p;
}

static void test_units_and_numbers_both_accepted(void **state)
{
	(void)state;
	json_t *root = default_tree();
	mutate(root, "core_types[0].l1d.size", json_integer(65536));
	mutate(root, "core_types[1].l1d.size", json_string("32 KB"));
	mutate(root, "clusters[0].l3.size", json_string("2MiB"));
	mutate(root, "core_types[0].freq", json_integer(2800000000));
	mutate(root, "timer_freq", json_string("19.2MHz"));
	mutate(root, "memory.dram_bandwidth", json_string("1GiB/s"));
	mutate(root, "core_types[0].midr", json_integer(0x410fd0a0));
	struct dpmu_profile *p = parse_ok(root);
	assert_int_equal(p->core_types[0].l1d.size, 65536);
	assert_int_equal(p->core_types[1].l1d.size, 32768);
	assert_int_equal(p->clusters[0].l3.size, 2u << 20);
	assert_int_equal(p->core_types[0].freq_hz, 2800000000ull);
	assert_int_equal(p->timer_freq_hz, 19200000ull);
	assert_int_equal(p->dram_bandwidth, 1ull << 30);
	assert_int_equal(p->core_types[0].midr, 0x410fd0a0u);
	dpmu_profile_free(p);
}

static void test_user_profile_options(void **state)
{
	(void)state;
	json_t *root = default_tree();
	/* a user profile may give PMUv3p5 and more counters; name defaults to the file */
	mutate(root, "core_types[0].pmu.pmuv3p5", json_true());
	mutate(root, "core_types[0].pmu.counters", json_integer(31));
	mutate(root, "core_types[0].pmu.events", json_pack("[s, s, i, s]", "cpu_cycles", "CHAIN", 0x08,
							   "0x03"));
	mutate(root, "clusters[0].pmu.counters64", json_true());
	mutate(root, "name", NULL);
	mutate(root, "snapshot_latency", NULL);
	mutate(root, "amu_const_freq", NULL);
	mutate(root, "core_types[1].amu", NULL);
	mutate(root, "core_types[1].l2.replacement", NULL);
	/* frequency given with the cores instead of the type */
	mutate(root, "core_types[1].freq", NULL);
	mutate(root, "clusters[0].cores[1].freq", json_string("2GHz"));
	struct dpmu_profile *p = parse_ok(root);
	const struct dpmu_core_type *t = &p->core_types[0];
	assert_string_equal(p->name, "myprof");
	assert_true(t->pmuv3p5);
	assert_int_equal(t->pmu_counters, 31);
	assert_int_equal(t->n_events, 4);
	assert_true(dpmu_core_type_implements(t, 0x11));
	assert_true(dpmu_core_type_implements(t, 0x1e));
	assert_true(dpmu_core_type_implements(t, 0x08));
	assert_true(dpmu_core_type_implements(t, 0x03));
	assert_false(dpmu_core_type_implements(t, 0x04));
	assert_true(p->clusters[0].counters64);
	assert_int_equal(p->snapshot_latency, 0);
	assert_int_equal(p->const_freq_hz, p->timer_freq_hz);
	assert_int_equal(p->core_types[1].amu_group0, 0); /* no AMU */
	assert_int_equal(p->core_types[1].amu_group1, 0);
	assert_int_equal(p->core_types[1].l2.replacement, DPMU_REPL_LRU);
	assert_int_equal(p->core_types[1].freq_hz, 2000000000ull);
	dpmu_profile_free(p);

	/* no frequency anywhere for a used type */
	root = default_tree();
	mutate(root, "core_types[1].freq", NULL);
	struct dpmu_err err;
	assert_int_equal(parse_tree(root, &p, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "myprof.json: clusters[0].cores[1]: no frequency for core "
					"type 'Cortex-A55'"));
}

/* The default implements exactly its catalogs (docs/profiles.md). */
static void test_default_implements_its_catalogs(void **state)
{
	(void)state;
	struct dpmu_profile *p = load_ok(DPMU_PROFILE_DEFAULT);
	for (unsigned i = 0; i < p->n_core_types; i++) {
		const struct dpmu_core_type *t = &p->core_types[i];
		const struct dpmu_event_catalog *c = dpmu_catalog_get(t->catalog, NULL);
		assert_non_null(c);
		assert_int_equal(t->n_events, c->count);
		for (size_t k = 0; k < c->count; k++)
			assert_true(dpmu_core_type_implements(t, c->events[k].code));
	}
	/* A75 has MMU_PTW 0xE0, the A55 does not; both have CHAIN */
	assert_true(dpmu_core_type_implements(&p->core_types[0], 0xE0));
	assert_false(dpmu_core_type_implements(&p->core_types[1], 0xE0));
	assert_true(dpmu_core_type_implements(&p->core_types[1], DPMU_EV_CHAIN));
	assert_false(dpmu_core_type_implements(&p->core_types[0], 0x4000));
	const struct dpmu_event_catalog *dsu = dpmu_catalog_get("dsu", NULL);
	assert_int_equal(p->clusters[0].n_events, dsu->count);
	assert_true(dpmu_cluster_implements(&p->clusters[0], 0x2B));
	assert_false(dpmu_cluster_implements(&p->clusters[0], 0x4000));
	assert_false(dpmu_core_type_implements(NULL, 0x11));
	assert_false(dpmu_cluster_implements(NULL, 0x11));
	dpmu_profile_free(p);
}

/* DynamIQ MPIDR_EL1: bit31 RES1, U = 0, MT = 1, Aff0 = 0, Aff1 = core in
 * cluster, Aff2 = cluster (Arm ARM MPIDR_EL1; DSU TRM). */
static void test_mpidr_dynamiq_layout(void **state)
{
	(void)state;
	struct dpmu_profile *p = load_ok(DPMU_PROFILE_DEFAULT);
	for (unsigned core = 0; core < 8; core++) {
		uint64_t m = dpmu_profile_mpidr(p, core);
		assert_int_equal(m, 0x81000000ull | ((uint64_t)core << 8));
		assert_true(m & (1ull << 31));
		assert_false(m & (1ull << 30));
		assert_true(m & (1ull << 24));
		assert_int_equal(m & 0xff, 0);
	}
	dpmu_profile_free(p);

	/* second cluster: Aff2 = 1, Aff1 restarts at 0 */
	json_t *root = default_tree();
	json_t *cl = json_object_get(root, "clusters");
	json_array_append_new(cl, json_deep_copy(json_array_get(cl, 0)));
	mutate(root, "clusters[1].cores", json_pack("[{s:s, s:i}]", "type", "Cortex-A55", "count", 2));
	p = parse_ok(root);
	assert_int_equal(dpmu_profile_ncores(p), 10);
	unsigned c = 9, i = 9;
	const struct dpmu_core_type *t = dpmu_profile_core(p, 9, &c, &i);
	assert_non_null(t);
	assert_string_equal(t->name, "Cortex-A55");
	assert_int_equal(c, 1);
	assert_int_equal(i, 1);
	assert_int_equal(dpmu_profile_mpidr(p, 8), 0x81010000ull);
	assert_int_equal(dpmu_profile_mpidr(p, 9), 0x81010100ull);
	assert_int_equal(dpmu_profile_mpidr(p, 10), 0);
	dpmu_profile_free(p);
}

static void test_load_from_file_and_bad_names(void **state)
{
	(void)state;
	const struct dpmu_embedded_file *f = dpmu_embedded_find("profiles/a75x4-a55x4.json");
	char dir[] = "/tmp/dpmu-arch-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof path, "%s/mine.json", dir);
	FILE *o = fopen(path, "w");
	assert_non_null(o);
	fputs(f->data, o);
	fclose(o);
	struct dpmu_profile *p = load_ok(path);
	check_default_topology(p);
	dpmu_profile_free(p);

	/* a bad file names itself */
	o = fopen(path, "w");
	fputs("{\"name\": \"x\",\n \"core_types\": 3}", o);
	fclose(o);
	struct dpmu_err err;
	dpmu_err_clear(&err);
	assert_int_equal(dpmu_profile_load(path, &p, &err), DPMU_EINVAL);
	char want[200];
	snprintf(want, sizeof want, "%s: missing required key 'timer_freq'", path);
	assert_non_null(strstr(err.msg, want));
	unlink(path);
	rmdir(dir);

	assert_int_equal(dpmu_profile_load(path, &p, &err), DPMU_ENOENT);
	assert_non_null(strstr(err.msg, path));
	assert_int_equal(dpmu_profile_load("nope.json", &p, &err), DPMU_ENOENT);
	assert_non_null(strstr(err.msg, "nope.json: cannot open"));
	assert_int_equal(dpmu_profile_load("a75x8", &p, &err), DPMU_ENOENT);
	assert_non_null(strstr(err.msg, "no built-in profile 'a75x8'"));
	assert_non_null(strstr(err.msg, "a75x4-a55x4-dsu120"));
	assert_int_equal(dpmu_profile_load("", &p, &err), DPMU_EINVAL);
	assert_int_equal(dpmu_profile_load(NULL, &p, &err), DPMU_EINVAL);
	assert_null(p);
}

/* ---- deriving a profile from a base ------------------------------------- */

/* Every field the loader fills, one by one (a failure names the field),
 * then the whole struct: a field added later is compared too. */
#define SAME(f) assert_memory_equal(&a->f, &b->f, sizeof a->f)
static void same_cache(const struct dpmu_cache_params *a, const struct dpmu_cache_params *b)
{
	SAME(size), SAME(ways), SAME(line), SAME(latency), SAME(replacement), SAME(prefetch);
}

static void same_tlb(const struct dpmu_tlb_params *a, const struct dpmu_tlb_params *b)
{
	SAME(entries), SAME(ways), SAME(latency);
}

static void same_type(const struct dpmu_core_type *a, const struct dpmu_core_type *b)
{
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->catalog, b->catalog);
	SAME(midr), SAME(freq_hz), SAME(pmu_counters), SAME(pmuv3p5), SAME(pmcr_idcode);
	SAME(n_events), SAME(events), SAME(amu_group0), SAME(amu_group0_events);
	SAME(amu_group1), SAME(amu_n_selectable), SAME(amu_selectable);
	same_cache(&a->l1i, &b->l1i);
	same_cache(&a->l1d, &b->l1d);
	same_cache(&a->l2, &b->l2);
	same_tlb(&a->l1itlb, &b->l1itlb);
	same_tlb(&a->l1dtlb, &b->l1dtlb);
	same_tlb(&a->l2tlb, &b->l2tlb);
	SAME(page_size), SAME(walk_latency);
	SAME(bp.kind), SAME(bp.entries), SAME(bp.history_bits), SAME(bp.btb_entries);
	SAME(bp.ras_entries);
	SAME(pipeline.issue_width), SAME(pipeline.base_cpi_milli);
	SAME(pipeline.mispredict_penalty), SAME(pipeline.reorder_window),
	    SAME(pipeline.miss_buffers), SAME(pipeline.exec_latency);
}

static void same_cluster(const struct dpmu_cluster_params *a, const struct dpmu_cluster_params *b)
{
	SAME(ncores), SAME(core_type), SAME(freq_hz), SAME(numbering);
	assert_string_equal(a->catalog, b->catalog);
	SAME(pmu_counters), SAME(counters64), SAME(n_events), SAME(events);
	same_cache(&a->l3, &b->l3);
	SAME(snoop_filter_entries), SAME(snoop_latency);
}

static void same_profile(const struct dpmu_profile *a, const struct dpmu_profile *b)
{
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->description, b->description);
	SAME(n_core_types), SAME(nclusters), SAME(const_freq_hz), SAME(timer_freq_hz);
	SAME(snapshot_latency), SAME(bus_latency), SAME(dram_latency), SAME(dram_bandwidth);
	SAME(bus_width);
	for (unsigned i = 0; i < DPMU_MAX_CORE_TYPES; i++)
		same_type(&a->core_types[i], &b->core_types[i]);
	for (unsigned i = 0; i < DPMU_MAX_CLUSTERS; i++)
		same_cluster(&a->clusters[i], &b->clusters[i]);
	assert_memory_equal(a, b, sizeof *a);
}
#undef SAME

/* a75x4-a55x4-dsu120 is the default with the DSU-120 catalog: derived from
 * it, it loads to what the full copy it replaced loaded to. */
static void test_dsu120_derives_from_the_default(void **state)
{
	(void)state;
	json_t *root = default_tree();
	mutate(root, "name", json_string("a75x4-a55x4-dsu120"));
	mutate(root, "description", json_string("The default cluster with the seed's DSU-120 "
						"cluster-PMU event numbering (0x4000 range)"));
	mutate(root, "clusters[0].pmu.catalog", json_string("dsu-120"));
	struct dpmu_profile *full = parse_ok(root);
	struct dpmu_profile *derived = load_ok("a75x4-a55x4-dsu120");
	same_profile(derived, full);
	dpmu_profile_free(full);
	dpmu_profile_free(derived);
	const struct dpmu_embedded_file *f = dpmu_embedded_find("profiles/a75x4-a55x4-dsu120.json");
	assert_non_null(f);
	assert_non_null(strstr(f->data, "\"base\": \"a75x4-a55x4\""));
}

static char *write_file(const char *dir, const char *name, const char *text)
{
	static char path[8][256];
	static unsigned next;
	char *p = path[next++ % 8];
	snprintf(p, sizeof path[0], "%s/%s", dir, name);
	FILE *o = fopen(p, "w");
	assert_non_null(o);
	fputs(text, o);
	fclose(o);
	return p;
}

static void expect_load_fails(const char *path, int code, const char *needle)
{
	struct dpmu_profile *p = (struct dpmu_profile *)1;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	int rc = dpmu_profile_load(path, &p, &err);
	if (rc == 0 || !strstr(err.msg, needle))
		fail_msg("%s: rc %d msg '%s'; want %d and '%s'", path, rc, err.msg, code, needle);
	assert_int_equal(rc, code);
	assert_null(p);
}

/* The merge rules of docs/profiles.md: objects key by key, arrays of
 * objects element by element (extra elements added), null removes a key,
 * any other value replaces; name and description are not inherited; a
 * relative base is found beside the file that names it. */
static void test_base_overrides_merge_key_by_key(void **state)
{
	(void)state;
	char dir[] = "/tmp/dpmu-base-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char sub[64];
	snprintf(sub, sizeof sub, "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	write_file(dir, "mid.json",
		   "{\"base\": \"a75x4-a55x4\", \"description\": \"mid\",\n"
		   " \"core_types\": [{}, {\"l2\": {\"size\": \"256KiB\"}, \"amu\": null}],\n"
		   " \"amu_const_freq\": null, \"memory\": {\"bus_width\": 32}}");
	char *top = write_file(sub, "top.json",
		   "{\"base\": \"../mid.json\",\n"
		   " \"core_types\": [{\"pmu\": {\"events\": [\"CPU_CYCLES\", \"INST_RETIRED\"]}}],\n"
		   " \"clusters\": [{\"freq\": \"2GHz\", \"cores\": [{}, {\"count\": 2}]},\n"
		   "   {\"cores\": [{\"type\": \"Cortex-A75\", \"count\": 2}], \"freq\": \"1GHz\",\n"
		   "    \"pmu\": {\"catalog\": \"dsu\", \"counters\": 4},\n"
		   "    \"l3\": {\"size\": \"1MiB\", \"ways\": 16, \"line\": 64, \"latency\": 20,\n"
		   "           \"replacement\": null},\n"
		   "    \"snoop_filter\": {\"entries\": 4096, \"latency\": 20}}]}");
	struct dpmu_profile *p = load_ok(top);
	struct dpmu_profile *d = load_ok(DPMU_PROFILE_DEFAULT);
	assert_string_equal(p->name, "top");      /* from the file name, not the base's */
	assert_string_equal(p->description, ""); /* not inherited */
	assert_int_equal(p->const_freq_hz, p->timer_freq_hz); /* null: the key's default */
	assert_int_equal(p->bus_width, 32);
	assert_int_equal(p->bus_latency, d->bus_latency);
	assert_int_equal(p->core_types[1].l2.size, 256u << 10);
	assert_int_equal(p->core_types[1].l2.ways, d->core_types[1].l2.ways);
	assert_int_equal(p->core_types[1].amu_group0, 0);
	assert_int_equal(p->core_types[0].amu_group0, d->core_types[0].amu_group0);
	assert_int_equal(p->core_types[0].n_events, 2); /* a list replaces the base's */
	assert_int_equal(p->core_types[0].l1d.size, d->core_types[0].l1d.size);
	assert_int_equal(p->nclusters, 2);
	assert_int_equal(p->clusters[0].freq_hz, 2000000000ull);
	assert_int_equal(p->clusters[0].ncores, 4 + 2); /* cores[1].count 4 -> 2 */
	assert_string_equal(p->clusters[0].catalog, "dsu");
	assert_int_equal(p->clusters[1].ncores, 2);
	assert_int_equal(p->clusters[1].pmu_counters, 4);
	/* a null in an element the base does not have: the key's default too */
	assert_int_equal(p->clusters[1].l3.replacement, DPMU_REPL_LRU);
	dpmu_profile_free(d);
	dpmu_profile_free(p);

	/* dpmu_profile_parse finds a relative base beside source_name */
	struct dpmu_err err;
	char src[128];
	snprintf(src, sizeof src, "%s/inline.json", sub);
	assert_int_equal(dpmu_profile_parse("{\"base\": \"../mid.json\"}", src, &p, &err), 0);
	assert_string_equal(p->name, "inline");
	assert_int_equal(p->bus_width, 32);
	dpmu_profile_free(p);

	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* A base that is missing, is not a name, is not an object, or leads back to
 * the profile is refused with the profile, the key and the base named. */
static void test_bad_bases_are_named(void **state)
{
	(void)state;
	char dir[] = "/tmp/dpmu-base-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char want[512];

	char *p = write_file(dir, "a.json", "{\"base\": \"a75x4\"}");
	snprintf(want, sizeof want, "%s: base: no built-in profile 'a75x4' (built-in: "
				    "a75x4-a55x4, a75x4-a55x4-dsu120", p);
	expect_load_fails(p, DPMU_ENOENT, want);

	p = write_file(dir, "b.json", "{\"base\": \"gone.json\"}");
	snprintf(want, sizeof want, "%s: base: %s/gone.json: cannot open", p, dir);
	expect_load_fails(p, DPMU_ENOENT, want);

	p = write_file(dir, "c.json", "{\"base\": \"./c.json\"}");
	snprintf(want, sizeof want, "%s: base: './c.json' is already in the base chain (%s -> "
				    "%s/./c.json)", p, p, dir);
	expect_load_fails(p, DPMU_EINVAL, want);

	/* a cycle through two files, the second spelling the first another way */
	write_file(dir, "d.json", "{\"base\": \"e.json\", \"timer_freq\": \"1GHz\"}");
	const char *leaf = strrchr(dir, '/') + 1;
	char text[128];
	snprintf(text, sizeof text, "{\"base\": \"../%s/d.json\"}", leaf);
	p = write_file(dir, "e.json", text);
	char d[256];
	snprintf(d, sizeof d, "%s/d.json", dir);
	snprintf(want, sizeof want, "%s: base: '../%s/d.json' is already in the base chain (%s -> %s"
				    " -> %s/../%s/d.json)", p, leaf, d, p, dir, leaf);
	expect_load_fails(d, DPMU_EINVAL, want);

	p = write_file(dir, "f.json", "{\"base\": [\"a75x4-a55x4\"]}");
	snprintf(want, sizeof want, "%s: base: must name a built-in profile or a profile file, got "
				    "an array", p);
	expect_load_fails(p, DPMU_EINVAL, want);
	p = write_file(dir, "g.json", "{\"base\": \"\"}");
	expect_load_fails(p, DPMU_EINVAL, "base: must name a built-in profile or a profile file, "
					  "got an empty string");

	char *arr = write_file(dir, "arr.json", "[1, 2]");
	p = write_file(dir, "h.json", "{\"base\": \"arr.json\"}");
	snprintf(want, sizeof want, "%s: must be an object, got an array", arr);
	expect_load_fails(p, DPMU_EINVAL, want);

	/* a base's own syntax error names the base */
	char *bad = write_file(dir, "bad.json", "{\"timer_freq\": }");
	p = write_file(dir, "i.json", "{\"base\": \"bad.json\"}");
	snprintf(want, sizeof want, "%s:1:16: JSON syntax error", bad);
	expect_load_fails(p, DPMU_EINVAL, want);

	/* nine profiles deep: each names the next */
	for (int i = 0; i < 9; i++) {
		char name[32], body[64];
		snprintf(name, sizeof name, "deep%d.json", i);
		snprintf(body, sizeof body, "{\"base\": \"deep%d.json\"}", i + 1);
		write_file(dir, name, body);
	}
	write_file(dir, "deep9.json", "{\"base\": \"a75x4-a55x4\"}");
	snprintf(d, sizeof d, "%s/deep0.json", dir);
	expect_load_fails(d, DPMU_ERANGE, "base: more than 8 profiles in the base chain");
	snprintf(d, sizeof d, "%s/deep2.json", dir); /* deep2 .. deep9 and the built-in */
	expect_load_fails(d, DPMU_ERANGE, "base: more than 8 profiles in the base chain");
	snprintf(d, sizeof d, "%s/deep3.json", dir); /* 8: fine */
	struct dpmu_profile *ok = load_ok(d);
	assert_string_equal(ok->name, "deep3");
	dpmu_profile_free(ok);

	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_is_first_builtin),
		cmocka_unit_test(test_default_topology),
		cmocka_unit_test(test_dsu120_topology),
		cmocka_unit_test(test_bad_cache_geometry),
		cmocka_unit_test(test_unknown_and_missing_keys),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_out_of_range_values),
		cmocka_unit_test(test_topology_limits),
		cmocka_unit_test(test_bad_event_references),
		cmocka_unit_test(test_syntax_errors_give_line_and_column),
		cmocka_unit_test(test_units_and_numbers_both_accepted),
		cmocka_unit_test(test_user_profile_options),
		cmocka_unit_test(test_default_implements_its_catalogs),
		cmocka_unit_test(test_mpidr_dynamiq_layout),
		cmocka_unit_test(test_load_from_file_and_bad_names),
		cmocka_unit_test(test_dsu120_derives_from_the_default),
		cmocka_unit_test(test_base_overrides_merge_key_by_key),
		cmocka_unit_test(test_bad_bases_are_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
