/*
 * Report writers: the perf-like table (thousands separators, running
 * percentage, <not counted> / <not supported>), CSV in perf's column order
 * parsed back, JSON lines parsed back with jansson, the SVG chart checked
 * for well-formed XML and its series; and the table built from a monitor
 * session on the simulated cluster.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/an_internal.h"
#include "dynpmu/analysis.h"
#include "dynpmu/backend.h"
#include "dynpmu/monitor.h"

#define MS 1000000ull

static void add(struct dpmu_an_unit *u, const char *ev, uint64_t v, uint64_t en, uint64_t run)
{
	struct dpmu_err err;
	assert_int_equal(dpmu_an_count_add(u, ev, true, v, en, run, &err), 0);
}

/* One sample, units cpu0 and cluster0: CPU_CYCLES 1234567 all the time,
 * INST_RETIRED 600000 on a counter 75 % of the time (estimate 800000),
 * L1D_CACHE never on a counter, L2D_CACHE not supported. */
static void build(struct dpmu_an_table *t)
{
	struct dpmu_err err;
	dpmu_an_table_init(t);
	snprintf(t->workload, sizeof t->workload, "demo & <test>");
	struct dpmu_an_sample *s;
	assert_int_equal(dpmu_an_sample_add(t, 0, 4 * MS, &s, &err), 0);
	struct dpmu_an_unit *u;
	assert_int_equal(dpmu_an_unit_add(s, DPMU_AN_CPU, 0, "cpu0", 2800000000, &u, &err), 0);
	add(u, "CPU_CYCLES", 1234567, 4 * MS, 4 * MS);
	add(u, "INST_RETIRED", 600000, 4 * MS, 3 * MS);
	add(u, "L1D_CACHE", 0, 4 * MS, 0);
	assert_int_equal(dpmu_an_count_add(u, "L2D_CACHE", false, 0, 0, 0, &err), 0);
	assert_int_equal(dpmu_an_unit_add(s, DPMU_AN_CLUSTER, 0, "cluster0", 1500000000, &u, &err), 0);
	add(u, "L3D_CACHE", 1000, 4 * MS, 4 * MS);
	add(u, "L3D_CACHE_REFILL", 250, 4 * MS, 4 * MS);
}

static const struct dpmu_an_metric *report_metrics[2];

static struct dpmu_an_report report(bool advice, const char *sep)
{
	report_metrics[0] = dpmu_an_metric_find("ipc");
	report_metrics[1] = dpmu_an_metric_find("l3_hit_rate");
	struct dpmu_an_report r = {report_metrics, 2, advice, sep};
	return r;
}

/* Run a writer into a memory buffer (caller frees). */
typedef int (*writer_fn)(FILE *, const struct dpmu_an_table *, const struct dpmu_an_report *,
			 struct dpmu_err *);
static char *capture(writer_fn w, const struct dpmu_an_table *t, const struct dpmu_an_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct dpmu_err err;
	dpmu_err_clear(&err);
	int rc = w(f, t, r, &err);
	fclose(f);
	if (rc)
		fail_msg("writer failed: %s", err.msg);
	return buf;
}

static void thousands_separators_like_perf(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(dpmu_an_thousands(0, b, sizeof b), "0");
	assert_string_equal(dpmu_an_thousands(999, b, sizeof b), "999");
	assert_string_equal(dpmu_an_thousands(1000, b, sizeof b), "1,000");
	assert_string_equal(dpmu_an_thousands(1234567, b, sizeof b), "1,234,567");
	assert_string_equal(dpmu_an_thousands(UINT64_MAX, b, sizeof b), "18,446,744,073,709,551,615");
}

static uint64_t printed(uint64_t value, uint64_t enabled, uint64_t running)
{
	struct dpmu_an_count c = {.supported = true, .value = value, .enabled_ns = enabled,
				  .running_ns = running};
	return dpmu_an_round_estimate(&c);
}

/* The estimate printed, value x enabled / running rounded to nearest, at
 * the edges of a uint64_t: past 2^63 (where llround stops) and up to 2^64. */
static void estimates_round_to_nearest_up_to_2_64(void **state)
{
	(void)state;
	assert_int_equal(printed(5, 3, 2), 8);  /* 7.5: halves away from zero */
	assert_int_equal(printed(1, 3, 2), 2);  /* 1.5 */
	assert_int_equal(printed(3, 7, 5), 4);  /* 4.2 */
	assert_int_equal(printed(0, 7, 5), 0);
	/* not scaled: the value, exactly, also where a double cannot hold it */
	assert_true(printed((1ull << 53) + 1, MS, MS) == (1ull << 53) + 1);
	assert_true(printed((1ull << 63) + 1, 0, 0) == (1ull << 63) + 1);
	assert_true(printed(UINT64_MAX, MS, MS) == UINT64_MAX);
	struct dpmu_an_count never = {.supported = true, .value = 7, .enabled_ns = MS};
	assert_int_equal(dpmu_an_round_estimate(&never), 7);
	struct dpmu_an_count unsupported = {.supported = false, .value = 9, .enabled_ns = 2,
					    .running_ns = 1};
	assert_int_equal(dpmu_an_round_estimate(&unsupported), 9);
	/* scaled beyond 2^63 */
	assert_true(printed(1ull << 62, 2, 1) == 1ull << 63);
	assert_true(printed(3ull << 61, 2, 1) == 3ull << 62);
	/* between 1.8e19 and UINT64_MAX (about 1.845e19) */
	assert_true(printed(9100000000000000000ull, 2, 1) == 18200000000000000000ull);
	/* the largest double below 2^64, and 2^64 and beyond */
	assert_true(printed((1ull << 63) - 1024, 2, 1) == 18446744073709549568ull);
	assert_true(printed(1ull << 63, 2, 1) == UINT64_MAX);
	assert_true(printed(UINT64_MAX, 3, 1) == UINT64_MAX);

	/* as the CSV writer prints it */
	struct dpmu_an_table t;
	dpmu_an_table_init(&t);
	struct dpmu_err err;
	struct dpmu_an_sample *sm;
	struct dpmu_an_unit *u;
	assert_int_equal(dpmu_an_sample_add(&t, 0, MS, &sm, &err), 0);
	assert_int_equal(dpmu_an_unit_add(sm, DPMU_AN_SYSTEM, 0, "system", 0, &u, &err), 0);
	add(u, "CPU_CYCLES", 3ull << 61, 2 * MS, MS);
	struct dpmu_an_report r = {NULL, 0, false, ","};
	char *out = capture(dpmu_an_write_csv, &t, &r);
	assert_non_null(strstr(out, "13835058055282163712,,CPU_CYCLES,"));
	free(out);
	dpmu_an_table_free(&t);
}

static void text_table_prints_like_perf_stat(void **state)
{
	(void)state;
	struct dpmu_an_table t;
	build(&t);
	struct dpmu_an_report r = report(false, NULL);
	char *out = capture(dpmu_an_write_text, &t, &r);
	assert_non_null(strstr(out, " Performance counter stats for 'demo & <test>':"));
	assert_non_null(strstr(out, "cpu0                1,234,567      CPU_CYCLES\n"));
	/* the estimate 600000 * 4 / 3, with the running percentage */
	assert_non_null(strstr(out, "cpu0                  800,000      INST_RETIRED"));
	assert_non_null(strstr(out, "(75.00%)\n"));
	assert_non_null(strstr(out, "<not counted>      L1D_CACHE\n"));
	assert_non_null(strstr(out, "<not supported>      L2D_CACHE\n"));
	/* ipc = 800000 / 1234567, from a count that ran 75 % of the time */
	assert_non_null(strstr(out, "0.65 insn/cycle      ipc"));
	assert_non_null(strstr(out, "cluster0              75.00 %      l3_hit_rate\n"));
	assert_non_null(strstr(out, "<not available>      ipc                              # "
				    "INST_RETIRED not counted on cluster0"));
	assert_non_null(strstr(out, "0.004000000 seconds time elapsed"));
	free(out);
	dpmu_an_table_free(&t);
}

static void text_table_appends_firing_advice(void **state)
{
	(void)state;
	struct dpmu_an_table t;
	build(&t);
	t.samples[0].units[1].little = true;
	t.samples[0].units[1].counts[1].value = 800; /* hit rate 20 % */
	struct dpmu_an_report r = report(true, NULL);
	char *out = capture(dpmu_an_write_text, &t, &r);
	assert_non_null(strstr(out, "advice [little_l3_hit_rate]: cluster0: L3 hit rate 20.00 %"));
	assert_non_null(strstr(out, "(seed 001 section 4.2)"));
	free(out);
	dpmu_an_table_free(&t);
}

/* Split one line on sep into at most 16 fields (modifies line). */
static size_t split(char *line, const char *sep, char **f)
{
	size_t n = 0, sl = strlen(sep);
	char *p = line;
	for (;;) {
		f[n++] = p;
		char *e = strstr(p, sep);
		if (!e || n == 16)
			break;
		*e = '\0';
		p = e + sl;
	}
	return n;
}

static void csv_has_perfs_columns_and_parses_back(void **state)
{
	(void)state;
	struct dpmu_an_table t;
	build(&t);
	struct dpmu_an_report r = report(false, ";");
	char *out = capture(dpmu_an_write_csv, &t, &r);
	unsigned rows = 0, counts = 0, metrics = 0;
	char *save = NULL;
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[16];
		size_t n = split(line, ";", f);
		/* unit first with per-core rows, then perf's five fields */
		assert_int_equal(n, 6);
		rows++;
		assert_true(strcmp(f[0], "cpu0") == 0 || strcmp(f[0], "cluster0") == 0);
		if (f[2][0] == '\0') { /* an event count: empty unit field */
			counts++;
			if (strcmp(f[3], "INST_RETIRED") == 0) {
				assert_string_equal(f[1], "800000");
				assert_string_equal(f[4], "3000000");
				assert_string_equal(f[5], "75.00");
			} else if (strcmp(f[3], "L1D_CACHE") == 0) {
				assert_string_equal(f[1], "<not counted>");
				assert_string_equal(f[5], "0.00");
			} else if (strcmp(f[3], "L2D_CACHE") == 0) {
				assert_string_equal(f[1], "<not supported>");
			} else if (strcmp(f[3], "CPU_CYCLES") == 0) {
				assert_string_equal(f[1], "1234567");
				assert_string_equal(f[5], "100.00");
			}
		} else { /* a metric: its unit in the unit field */
			metrics++;
			if (strcmp(f[3], "l3_hit_rate") == 0 && strcmp(f[0], "cluster0") == 0) {
				assert_string_equal(f[1], "75");
				assert_string_equal(f[2], "%");
			}
			if (strcmp(f[3], "ipc") == 0 && strcmp(f[0], "cluster0") == 0)
				assert_string_equal(f[1], "<not available>");
		}
	}
	assert_int_equal(counts, 6);
	assert_int_equal(metrics, 4);
	assert_int_equal(rows, 10);
	free(out);
	dpmu_an_table_free(&t);
}

static void csv_interval_rows_start_with_the_time(void **state)
{
	(void)state;
	struct dpmu_an_table t;
	struct dpmu_err err;
	dpmu_an_table_init(&t);
	t.intervals = true;
	for (unsigned i = 0; i < 3; i++) {
		struct dpmu_an_sample *s;
		struct dpmu_an_unit *u;
		assert_int_equal(dpmu_an_sample_add(&t, i * 100 * MS, 100 * MS, &s, &err), 0);
		assert_int_equal(dpmu_an_unit_add(s, DPMU_AN_SYSTEM, 0, "system", 0, &u, &err), 0);
		add(u, "INST_RETIRED", 10 * (i + 1), 100 * MS, 100 * MS);
	}
	struct dpmu_an_report r = {NULL, 0, false, ","};
	char *out = capture(dpmu_an_write_csv, &t, &r);
	assert_string_equal(out, "0.100000000,10,,INST_RETIRED,100000000,100.00\n"
				 "0.200000000,20,,INST_RETIRED,100000000,100.00\n"
				 "0.300000000,30,,INST_RETIRED,100000000,100.00\n");
	free(out);
	dpmu_an_table_free(&t);
}

static void json_lines_parse_back_with_jansson(void **state)
{
	(void)state;
	struct dpmu_an_table t;
	build(&t);
	t.samples[0].units[1].little = true;
	t.samples[0].units[1].counts[1].value = 800;
	struct dpmu_an_report r = report(true, NULL);
	char *out = capture(dpmu_an_write_json, &t, &r);
	unsigned run = 0, counts = 0, metrics = 0, advice = 0;
	char *save = NULL;
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);
		if (!o)
			fail_msg("line does not parse: %s (%s)", line, je.text);
		assert_true(json_is_object(o));
		const char *type = json_string_value(json_object_get(o, "type"));
		assert_non_null(type);
		if (strcmp(type, "run") == 0) {
			run++;
			assert_string_equal(json_string_value(json_object_get(o, "workload")), "demo & <test>");
			assert_int_equal(json_integer_value(json_object_get(o, "elapsed_ns")), 4 * MS);
		} else if (strcmp(type, "count") == 0) {
			counts++;
			const char *ev = json_string_value(json_object_get(o, "event"));
			const char *st = json_string_value(json_object_get(o, "status"));
			if (strcmp(ev, "INST_RETIRED") == 0) {
				assert_string_equal(json_string_value(json_object_get(o, "unit")), "cpu0");
				assert_string_equal(st, "counted");
				assert_int_equal(json_integer_value(json_object_get(o, "value")), 800000);
				assert_int_equal(json_integer_value(json_object_get(o, "raw")), 600000);
				assert_float_equal(json_real_value(json_object_get(o, "running_pct")), 75.0, 1e-9);
			} else if (strcmp(ev, "L1D_CACHE") == 0) {
				assert_string_equal(st, "not counted");
				assert_true(json_is_null(json_object_get(o, "value")));
			} else if (strcmp(ev, "L2D_CACHE") == 0) {
				assert_string_equal(st, "not supported");
			}
		} else if (strcmp(type, "metric") == 0) {
			metrics++;
			const char *m = json_string_value(json_object_get(o, "metric"));
			const char *u = json_string_value(json_object_get(o, "unit"));
			if (strcmp(m, "l3_hit_rate") == 0 && strcmp(u, "cluster0") == 0) {
				assert_true(json_is_true(json_object_get(o, "available")));
				assert_float_equal(json_real_value(json_object_get(o, "value")), 20.0, 1e-9);
				assert_string_equal(json_string_value(json_object_get(o, "metric_unit")), "%");
			}
			if (strcmp(m, "ipc") == 0 && strcmp(u, "cluster0") == 0) {
				assert_true(json_is_false(json_object_get(o, "available")));
				assert_string_equal(json_string_value(json_object_get(o, "reason")),
						    "INST_RETIRED not counted on cluster0");
			}
		} else if (strcmp(type, "advice") == 0) {
			advice++;
			assert_string_equal(json_string_value(json_object_get(o, "rule")), "little_l3_hit_rate");
			json_t *v = json_object_get(json_object_get(o, "values"), "l3_hit_rate");
			assert_float_equal(json_real_value(v), 20.0, 1e-9);
			v = json_object_get(json_object_get(o, "thresholds"), "l3_hit_rate");
			assert_float_equal(json_real_value(v), 40.0, 1e-9);
		} else {
			fail_msg("unknown row type %s", type);
		}
		json_decref(o);
	}
	assert_int_equal(run, 1);
	assert_int_equal(counts, 6);
	assert_int_equal(metrics, 4);
	assert_int_equal(advice, 1);
	free(out);
	dpmu_an_table_free(&t);
}

/* A small XML well-formedness check: balanced, properly nested tags,
 * quoted attributes, only the five predefined entities. Returns NULL or
 * what is wrong. */
static const char *xml_check(const char *p)
{
	char stack[64][32];
	int depth = 0;
	bool root_seen = false;
	if (strncmp(p, "<?xml", 5) == 0) {
		p = strstr(p, "?>");
		if (!p)
			return "unterminated XML declaration";
		p += 2;
	}
	while (*p) {
		if (*p == '&') {
			static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
			bool ok = false;
			for (int i = 0; i < 5 && !ok; i++)
				ok = strncmp(p, ents[i], strlen(ents[i])) == 0;
			if (!ok)
				return "bad entity";
			p++;
			continue;
		}
		if (*p != '<') {
			if (depth == 0 && *p != '\n' && *p != ' ')
				return "text outside the root element";
			p++;
			continue;
		}
		bool closing = p[1] == '/';
		p += closing ? 2 : 1;
		char name[32];
		int k = 0;
		while (*p && *p != ' ' && *p != '>' && *p != '/' && *p != '\n' && k < 31)
			name[k++] = *p++;
		name[k] = '\0';
		if (!k)
			return "empty tag name";
		bool self = false;
		while (*p && *p != '>') {
			if (*p == '"') {
				const char *e = strchr(p + 1, '"');
				if (!e)
					return "unterminated attribute";
				for (const char *q = p + 1; q < e; q++)
					if (*q == '<')
						return "'<' in an attribute value";
				p = e + 1;
				continue;
			}
			if (*p == '=' && p[1] != '"')
				return "unquoted attribute";
			self = *p == '/';
			p++;
		}
		if (!*p)
			return "unterminated tag";
		p++;
		if (closing) {
			if (depth == 0 || strcmp(stack[depth - 1], name) != 0)
				return "mismatched closing tag";
			depth--;
		} else if (!self) {
			if (depth == 0 && root_seen)
				return "two root elements";
			if (depth == 64)
				return "too deep";
			root_seen = true;
			snprintf(stack[depth++], sizeof stack[0], "%s", name);
		}
	}
	return depth ? "unclosed element" : root_seen ? NULL : "no root element";
}

static unsigned occurrences(const char *s, const char *what)
{
	unsigned n = 0;
	size_t len = strlen(what);
	for (size_t i = 0; s[i]; i++)
		n += strncmp(s + i, what, len) == 0;
	return n;
}

static void svg_is_well_formed_and_has_every_series(void **state)
{
	(void)state;
	struct dpmu_an_table t;
	struct dpmu_err err;
	dpmu_an_table_init(&t);
	t.intervals = true;
	snprintf(t.workload, sizeof t.workload, "a<b & c");
	for (unsigned i = 0; i < 5; i++) {
		struct dpmu_an_sample *s;
		struct dpmu_an_unit *u;
		assert_int_equal(dpmu_an_sample_add(&t, i * 10 * MS, 10 * MS, &s, &err), 0);
		for (unsigned c = 0; c < 2; c++) {
			char name[16];
			snprintf(name, sizeof name, "cpu%u", c * 4);
			assert_int_equal(dpmu_an_unit_add(s, DPMU_AN_CPU, c * 4, name, 1, &u, &err), 0);
			add(u, "CPU_CYCLES", 1000000, 10 * MS, 10 * MS);
			add(u, "INST_RETIRED", 100000 * (i + 1 + c), 10 * MS, 10 * MS);
		}
		assert_int_equal(dpmu_an_unit_add(s, DPMU_AN_CLUSTER, 0, "cluster0", 1, &u, &err), 0);
		add(u, "L3D_CACHE", 1000, 10 * MS, 10 * MS);
		add(u, "L3D_CACHE_REFILL", 100 * i, 10 * MS, 10 * MS);
	}
	struct dpmu_an_report r = report(false, NULL);
	char *out = capture(dpmu_an_write_svg, &t, &r);
	const char *bad = xml_check(out);
	if (bad)
		fail_msg("SVG is not well-formed XML: %s", bad);
	assert_non_null(strstr(out, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	/* one panel per metric, one line per unit that has the metric */
	assert_int_equal(occurrences(out, "<g class=\"panel\""), 2);
	assert_non_null(strstr(out, "data-metric=\"ipc\""));
	assert_non_null(strstr(out, "data-metric=\"l3_hit_rate\""));
	assert_int_equal(occurrences(out, "<polyline data-unit=\"cpu0\""), 1);
	assert_int_equal(occurrences(out, "<polyline data-unit=\"cpu4\""), 1);
	assert_int_equal(occurrences(out, "<polyline data-unit=\"cluster0\""), 1);
	assert_int_equal(occurrences(out, "<circle"), 15); /* 5 points x 3 lines */
	assert_non_null(strstr(out, ">time (ms)</text>"));
	assert_non_null(strstr(out, "a&lt;b &amp; c"));
	/* the legend names every unit */
	assert_non_null(strstr(out, ">cluster0</text>"));

	/* xmllint, when installed (scripts/deps.sh test), must agree */
	if (access("/usr/bin/xmllint", X_OK) == 0) {
		char path[] = "/tmp/dpmu_svg_XXXXXX";
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, out, strlen(out)), (ssize_t)strlen(out));
		close(fd);
		char cmd[128];
		snprintf(cmd, sizeof cmd, "/usr/bin/xmllint --noout %s", path);
		assert_int_equal(system(cmd), 0);
		unlink(path);
	}
	free(out);

	/* no metric: a clear error, not an empty chart */
	struct dpmu_an_report none = {NULL, 0, false, NULL};
	FILE *f = fopen("/dev/null", "w");
	assert_int_equal(dpmu_an_write_svg(f, &t, &none, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "at least one metric"));
	fclose(f);
	dpmu_an_table_free(&t);
}

static void svg_panel_says_why_a_metric_is_not_available(void **state)
{
	(void)state;
	struct dpmu_an_table t;
	build(&t);
	report_metrics[0] = dpmu_an_metric_find("coherency_bandwidth");
	struct dpmu_an_report r = {report_metrics, 1, false, NULL};
	char *out = capture(dpmu_an_write_svg, &t, &r);
	assert_null(xml_check(out));
	assert_non_null(strstr(out, "not available: DATA_TRANSFER not counted on cpu0"));
	free(out);
	dpmu_an_table_free(&t);
}

/* The trace of tests/integration/traces/two_cores.trace: cpu0 (A75) retires
 * 4 instructions, cpu5 (A55) 5. */
static const char two_cores[] = "i 0x400000\nl 0x400004 0x10000 8\nb 0x400008 0x400000 T cond\n"
				"cpu 5\ni 500000\ns 500004 20000 4\nb 500008 50000c N cond\n"
				"b 50000c 600000 T call\nb 600000 500010 T ret\ncpu 0\ni 40000c\n";

/* The simulated backend on the two-core trace, written to path (a
 * mkstemp template the caller unlinks after). */
static struct dpmu_backend *two_cores_backend(char *path)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, two_cores, sizeof two_cores - 1), (ssize_t)(sizeof two_cores - 1));
	close(fd);
	struct dpmu_err err;
	dpmu_err_clear(&err);
	struct dpmu_backend *b = NULL;
	struct dpmu_sim_options so = {.profile = NULL, .trace = path};
	assert_int_equal(dpmu_sim_create(&so, &b, &err), 0);
	return b;
}

static void table_from_a_monitor_session(void **state)
{
	(void)state;
	char path[] = "/tmp/dpmu_trace_XXXXXX";
	struct dpmu_backend *b = two_cores_backend(path);
	struct dpmu_err err;
	dpmu_err_clear(&err);
	static struct dpmu_mon_events ev;
	assert_int_equal(dpmu_mon_events_parse("inst_retired,cpu_cycles,l3d_cache", b->profile,
					       b->cores, &ev, &err), 0);
	struct dpmu_mon_session *s = NULL;
	assert_int_equal(dpmu_mon_session_create(b->drv, b->profile, &ev, b->cores, &s, &err), 0);
	assert_int_equal(dpmu_mon_run(s, b, &err), 0);

	struct dpmu_an_table t;
	dpmu_an_table_init(&t);
	assert_int_equal(dpmu_an_table_from_session(&t, s, b->profile, DPMU_AN_RUN_COUNTS, 0,
						    b->ops->time_ns(b), &err), 0);
	assert_int_equal(t.nsamples, 1);
	const struct dpmu_an_sample *sm = &t.samples[0];
	assert_int_equal(sm->start_ns, 0);
	assert_int_equal(sm->length_ns, b->ops->time_ns(b));
	/* one unit per measured core and cluster, nothing summed yet */
	size_t ncores = 0;
	for (unsigned n = 0; n < 64; n++)
		ncores += b->cores >> n & 1;
	assert_int_equal(sm->nunits, ncores + 1);
	const struct dpmu_an_unit *u0 = dpmu_an_unit_find(sm, "cpu0");
	const struct dpmu_an_unit *u5 = dpmu_an_unit_find(sm, "cpu5");
	const struct dpmu_an_unit *c0 = dpmu_an_unit_find(sm, "cluster0");
	assert_non_null(u0);
	assert_non_null(u5);
	assert_non_null(c0);
	assert_int_equal(dpmu_an_count_find(u0, "INST_RETIRED")->value, 4);
	assert_int_equal(dpmu_an_count_find(u5, "INST_RETIRED")->value, 5);
	assert_null(dpmu_an_count_find(u0, "L3D_CACHE")); /* a cluster event */
	assert_non_null(dpmu_an_count_find(c0, "L3D_CACHE"));
	assert_false(u0->little);  /* Cortex-A75 */
	assert_true(u5->little);   /* Cortex-A55, the slower type */
	assert_false(c0->little);  /* the cluster mixes both */
	assert_int_equal(u0->freq_hz, b->profile->core_types[0].freq_hz);
	assert_int_equal(t.const_freq_hz, b->profile->const_freq_hz);

	/* per core type and system sums */
	assert_int_equal(dpmu_an_sample_aggregate(&t.samples[0], b->profile,
						  DPMU_AN_AGG_CORE_TYPE | DPMU_AN_AGG_SYSTEM, &err), 0);
	sm = &t.samples[0];
	assert_int_equal(dpmu_an_count_find(dpmu_an_unit_find(sm, "Cortex-A75"), "INST_RETIRED")->value, 4);
	assert_true(dpmu_an_unit_find(sm, "Cortex-A55")->little);
	assert_int_equal(dpmu_an_count_find(dpmu_an_unit_find(sm, "system"), "INST_RETIRED")->value, 9);

	/* the system row of a whole-run table: every unit summed */
	struct dpmu_an_table agg;
	dpmu_an_table_init(&agg);
	assert_int_equal(dpmu_an_table_from_session(&agg, s, b->profile, DPMU_AN_RUN_COUNTS, 0,
						    b->ops->time_ns(b), &err), 0);
	assert_int_equal(dpmu_an_sample_aggregate(&agg.samples[0], b->profile, DPMU_AN_AGG_SYSTEM,
						  &err), 0);
	const struct dpmu_an_unit *sys = dpmu_an_unit_find(&agg.samples[0], "system");
	assert_non_null(sys);
	assert_int_equal(dpmu_an_count_find(sys, "INST_RETIRED")->value, 9);
	struct dpmu_an_value v;
	assert_int_equal(dpmu_an_metric_eval(dpmu_an_metric_find("ipc"), &agg, &agg.samples[0], sys,
					     &v, &err), 0);
	assert_true(v.available);
	assert_true(v.value > 0);

	dpmu_an_table_free(&agg);
	dpmu_an_table_free(&t);
	dpmu_mon_session_destroy(s);
	dpmu_backend_destroy(b);
	unlink(path);
}

/* Two clusters of two cores: cluster0 two big cores (type 0, 2 GHz),
 * cluster1 a big and a LITTLE core (type 1, 1 GHz). */
static void two_cluster_profile(struct dpmu_profile *p)
{
	memset(p, 0, sizeof *p);
	p->n_core_types = 2;
	snprintf(p->core_types[0].name, sizeof p->core_types[0].name, "Cortex-A75");
	p->core_types[0].freq_hz = 2000000000u;
	snprintf(p->core_types[1].name, sizeof p->core_types[1].name, "Cortex-A55");
	p->core_types[1].freq_hz = 1000000000u;
	p->nclusters = 2;
	p->clusters[0].ncores = 2;
	p->clusters[1].ncores = 2;
	p->clusters[1].core_type[1] = 1;
}

static struct dpmu_an_unit *unit_with(struct dpmu_an_sample *s, enum dpmu_an_unit_kind kind,
				      unsigned index, const char *name, uint64_t inst,
				      struct dpmu_err *err)
{
	struct dpmu_an_unit *u = NULL;
	assert_int_equal(dpmu_an_unit_add(s, kind, index, name, 0, &u, err), 0);
	assert_int_equal(dpmu_an_count_add(u, "INST_RETIRED", true, inst, 100, 50, err), 0);
	return u;
}

/* Each aggregation alone and all at once: a cluster row adds only its own
 * cores, and the core-type and system sums do not count the cores twice
 * through the cluster rows. */
static void aggregate_per_type_cluster_and_system(void **state)
{
	(void)state;
	struct dpmu_profile p;
	two_cluster_profile(&p);
	struct dpmu_err err;
	dpmu_err_clear(&err);
	for (unsigned what = 0; what <= 7; what++) {
		struct dpmu_an_table t;
		dpmu_an_table_init(&t);
		struct dpmu_an_sample *s = NULL;
		assert_int_equal(dpmu_an_sample_add(&t, 0, 100, &s, &err), 0);
		unit_with(s, DPMU_AN_CPU, 0, "cpu0", 1, &err);
		unit_with(s, DPMU_AN_CPU, 1, "cpu1", 2, &err);
		unit_with(s, DPMU_AN_CPU, 2, "cpu2", 4, &err);
		unit_with(s, DPMU_AN_CPU, 3, "cpu3", 8, &err);
		struct dpmu_an_unit *c0 = unit_with(s, DPMU_AN_CLUSTER, 0, "cluster0", 16, &err);
		c0->line_bytes = 64;
		unit_with(s, DPMU_AN_CLUSTER, 1, "cluster1", 32, &err);
		assert_int_equal(dpmu_an_sample_aggregate(s, &p, what, &err), 0);
		size_t want = 6 + (what & DPMU_AN_AGG_CORE_TYPE ? 2 : 0) +
			      (what & DPMU_AN_AGG_SYSTEM ? 1 : 0);
		assert_int_equal(s->nunits, want);
		const struct dpmu_an_count *c;
		c = dpmu_an_count_find(dpmu_an_unit_find(s, "cluster0"), "INST_RETIRED");
		assert_int_equal(c->value, what & DPMU_AN_AGG_CLUSTER ? 16 + 1 + 2 : 16);
		assert_int_equal(c->enabled_ns, what & DPMU_AN_AGG_CLUSTER ? 300 : 100);
		assert_int_equal(c->running_ns, what & DPMU_AN_AGG_CLUSTER ? 150 : 50);
		assert_int_equal(dpmu_an_unit_find(s, "cluster0")->line_bytes, 64);
		c = dpmu_an_count_find(dpmu_an_unit_find(s, "cluster1"), "INST_RETIRED");
		assert_int_equal(c->value, what & DPMU_AN_AGG_CLUSTER ? 32 + 4 + 8 : 32);
		assert_int_equal(dpmu_an_count_find(dpmu_an_unit_find(s, "cpu3"), "INST_RETIRED")->value,
				 8);
		const struct dpmu_an_unit *big = dpmu_an_unit_find(s, "Cortex-A75");
		const struct dpmu_an_unit *little = dpmu_an_unit_find(s, "Cortex-A55");
		const struct dpmu_an_unit *sys = dpmu_an_unit_find(s, "system");
		if (what & DPMU_AN_AGG_CORE_TYPE) {
			assert_int_equal(dpmu_an_count_find(big, "INST_RETIRED")->value, 1 + 2 + 4);
			assert_int_equal(dpmu_an_count_find(little, "INST_RETIRED")->value, 8);
			assert_false(big->little);
			assert_true(little->little);
			assert_int_equal(big->kind, DPMU_AN_CORE_TYPE);
		} else {
			assert_null(big);
			assert_null(little);
		}
		if (what & DPMU_AN_AGG_SYSTEM)
			assert_int_equal(dpmu_an_count_find(sys, "INST_RETIRED")->value, 63);
		else
			assert_null(sys);
		dpmu_an_table_free(&t);
	}
	struct dpmu_an_sample empty = {0};
	assert_int_equal(dpmu_an_sample_aggregate(&empty, &p, 8, &err), DPMU_EINVAL);
	assert_non_null(strstr(dpmu_errmsg(&err), "0x8"));
}

struct interval_ctx {
	struct dpmu_an_table *t;
	const struct dpmu_profile *p;
	unsigned checked;          /* counts compared with the monitor's */
};

/* Each interval's sample holds that interval's counts (not the run's so
 * far), unit by unit: checked here, where the monitor can still say them. */
static int interval_sample(void *ctx, const struct dpmu_mon_session *s, uint64_t t0, uint64_t t1,
			   struct dpmu_err *err)
{
	struct interval_ctx *x = ctx;
	int rc = dpmu_an_table_from_session(x->t, s, x->p, DPMU_AN_INTERVAL_COUNTS, t0, t1 - t0,
					    err);
	if (rc)
		return rc;
	const struct dpmu_an_sample *sm = &x->t->samples[x->t->nsamples - 1];
	assert_int_equal(sm->start_ns, t0);
	assert_int_equal(sm->length_ns, t1 - t0);
	const struct dpmu_mon_events *ev = dpmu_mon_session_events(s);
	for (size_t k = 0; k < sm->nunits; k++) {
		const struct dpmu_an_unit *u = &sm->units[k];
		for (unsigned i = 0; i < ev->n; i++) {
			const struct dpmu_an_count *c = dpmu_an_count_find(u, ev->ev[i].name);
			/* a core unit has the core-PMU and AMU events, a cluster its own */
			bool mine = (ev->ev[i].target == DPMU_MON_CLUSTER) == (u->kind == DPMU_AN_CLUSTER);
			if (!mine) {
				assert_null(c);
				continue;
			}
			struct dpmu_mon_count mc;
			assert_int_equal(dpmu_mon_interval_count(s, i, u->index, &mc), 0);
			assert_non_null(c);
			assert_int_equal(c->value, mc.value);
			assert_int_equal(c->enabled_ns, mc.enabled_ns);
			assert_int_equal(c->running_ns, mc.running_ns);
			x->checked++;
		}
	}
	return 0;
}

/* -I: one sample per interval, consecutive up to the run's end, each with
 * that interval's counts; a core's AMU counts sit on its cpu unit beside
 * the PMU's. */
static void table_from_session_takes_interval_counts(void **state)
{
	(void)state;
	char path[] = "/tmp/dpmu_trace_XXXXXX";
	struct dpmu_backend *b = two_cores_backend(path);
	struct dpmu_err err;
	dpmu_err_clear(&err);
	static struct dpmu_mon_events ev;
	assert_int_equal(dpmu_mon_events_parse("inst_retired,amu/CPU_CYCLES/,l3d_cache", b->profile,
					       b->cores, &ev, &err), 0);
	struct dpmu_an_table t;
	dpmu_an_table_init(&t);
	struct interval_ctx x = {&t, b->profile, 0};
	/* 1 ns: an interval ends at every poll, so the run has several */
	struct dpmu_mon_options mo = {.interval_ns = 1, .on_interval = interval_sample, .ctx = &x};
	struct dpmu_mon_session *s = NULL;
	assert_int_equal(dpmu_mon_session_create_opts(b->drv, b->profile, &ev, b->cores, &mo, &s,
						      &err), 0);
	assert_int_equal(dpmu_mon_run(s, b, &err), 0);
	assert_true(t.nsamples >= 2);
	assert_int_equal(t.nsamples, dpmu_mon_session_intervals(s));
	assert_true(x.checked > 0);
	for (size_t i = 0; i < t.nsamples; i++) {
		const struct dpmu_an_sample *sm = &t.samples[i];
		if (i > 0)
			assert_int_equal(sm->start_ns,
					 t.samples[i - 1].start_ns + t.samples[i - 1].length_ns);
		const struct dpmu_an_unit *u0 = dpmu_an_unit_find(sm, "cpu0");
		assert_non_null(u0);
		assert_non_null(dpmu_an_count_find(u0, "amu:CPU_CYCLES"));
		assert_non_null(dpmu_an_count_find(u0, "INST_RETIRED"));
		assert_null(dpmu_an_count_find(u0, "L3D_CACHE"));
		assert_non_null(dpmu_an_count_find(dpmu_an_unit_find(sm, "cluster0"), "L3D_CACHE"));
	}
	assert_int_equal(dpmu_an_table_end_ns(&t), b->ops->time_ns(b));

	dpmu_an_table_free(&t);
	dpmu_mon_session_destroy(s);
	dpmu_backend_destroy(b);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(thousands_separators_like_perf),
		cmocka_unit_test(estimates_round_to_nearest_up_to_2_64),
		cmocka_unit_test(text_table_prints_like_perf_stat),
		cmocka_unit_test(text_table_appends_firing_advice),
		cmocka_unit_test(csv_has_perfs_columns_and_parses_back),
		cmocka_unit_test(csv_interval_rows_start_with_the_time),
		cmocka_unit_test(json_lines_parse_back_with_jansson),
		cmocka_unit_test(svg_is_well_formed_and_has_every_series),
		cmocka_unit_test(svg_panel_says_why_a_metric_is_not_available),
		cmocka_unit_test(table_from_a_monitor_session),
		cmocka_unit_test(aggregate_per_type_cluster_and_system),
		cmocka_unit_test(table_from_session_takes_interval_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
