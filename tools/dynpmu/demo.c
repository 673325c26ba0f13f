/*
 * dynpmu demo: the product's main job on the simulated cluster.
 *
 * Part 1, the case studies of the seeds (docs/workloads.md, docs/demo.md):
 * each a real aarch64 program in two variants, the slow one and its fix,
 * measured by dynpmu stat's own path (stat.h: the qemu backend, a monitor
 * session with -I snapshots, the analysis table), then for each the
 * before/after counts, the metrics, the advice that fires on each variant,
 * whether the case study's effect shows, and one SVG of the interval
 * metrics of every case's two variants.
 *
 * Part 2, seed 001 section 4.1 ("multi-core coordinated monitoring") over
 * a real workload, through the driver only:
 *   1. every core PMU: PMCR = E|C|P, six events, PMCNTENSET;
 *   2. the cluster PMU: L3 / bus events, and PMSSRR = RP0|RP1|RP2 so
 *      counters 0-2 restart from zero after each snapshot;
 *   3. periodically in simulated time: PMSSCR.SS = 1 on every frame, poll
 *      until SS reads 0, read the PMEVCNTSVR<n> / PMCCNTSVR snapshot
 *      registers and print them.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "dynpmu/driver.h"
#include "stat.h"

/* Every case study runs on this profile: the DSU-120 numbering has the
 * snoop data transfers (DATA_TRANSFER) the false-sharing metrics need
 * (seed 001 section 4.2); its cores and caches are the default's. */
#define DEMO_PROFILE "a75x4-a55x4-dsu120"
#define DEMO_MAX_ARGS 6

/* How the case study's effect is judged: the event or metric of the slow
 * variant against the fixed one's, by at least `factor`. */
enum demo_dir { DEMO_DROPS = 0, DEMO_RISES = 1 };

struct demo_case {
	const char *name;          /* "matmul" (the program, next to dynpmu in workloads/) */
	const char *source;        /* seed section */
	const char *story;         /* what the slow variant does wrong, what the fix does */
	const char *variant[2];    /* before, after */
	const char *args;          /* sizes, passed to both variants */
	const char *cpus;          /* --cpus; NULL: every core */
	const char *events;        /* counted (no rotation: they fit the counters) */
	const char *metrics;       /* shown and charted: analysis metrics */
	uint64_t interval_ns;      /* -I for the chart */
	bool by_symbol;            /* the advice names the hottest functions */
	const char *rule;          /* advice expected on the slow variant only; NULL: none */
	const char *effect;        /* event or metric name */
	enum demo_dir dir;
	double factor;
};

static const struct demo_case cases[] = {
	{"matmul", "seed 003 section 6.1",
	 "naive walks B down its columns, a new cache line for every multiply-add, in one serial\n"
	 "chain of FP adds; blocked works on 32x32 tiles that stay in the L1D, four columns of C\n"
	 "at a time (four independent chains)",
	 {"naive", "blocked"}, "128", "0",
	 "INST_RETIRED,CPU_CYCLES,L1D_CACHE,L1D_CACHE_REFILL,L2D_CACHE_REFILL,STALL_BACKEND",
	 "ipc,l1d_cache_mpki,l1d_cache_miss_ratio,backend_stalled_cycles", 100000, false, NULL,
	 "L1D_CACHE_REFILL", DEMO_DROPS, 10.0},
	{"branches", "seed 003 section 6.2",
	 "branchy tests each random byte with a data-dependent branch (a coin toss for the\n"
	 "predictor); branchless computes the same with a conditional select",
	 {"branchy", "branchless"}, "200000 4", "0",
	 "INST_RETIRED,CPU_CYCLES,BR_RETIRED,BR_MIS_PRED_RETIRED,STALL_FRONTEND",
	 "ipc,branch_misprediction_ratio,branch_mpki", 100000, false, "branch_layout",
	 "BR_MIS_PRED_RETIRED", DEMO_DROPS, 100.0},
	{"traversal", "seed 001 section 5.2",
	 "aos visits entities whose hot fields are spread over 4 MiB, twice the L3; sparse keeps\n"
	 "the hot fields together in 512 KiB",
	 {"aos", "sparse"}, "32768 4", "0",
	 "INST_RETIRED,CPU_CYCLES,L1D_CACHE,L1D_CACHE_REFILL,STALL_BACKEND,core/L3D_CACHE_RD,"
	 "core/L3D_CACHE_REFILL_RD,L3_ACCESS,L3_MISS",
	 "ipc,l1d_cache_mpki,backend_stalled_cycles,l3_read_hit_rate", 200000, false,
	 "data_locality", "l3_read_hit_rate", DEMO_RISES, 5.0},
	{"false_sharing", "seed 001 section 4.2",
	 "shared: four threads each increment their own counter, but all counters sit in one\n"
	 "64-byte line that every store must take from the last writer; padded gives each its line",
	 {"shared", "padded"}, "4 250000", NULL,
	 "INST_RETIRED,CPU_CYCLES,L1D_CACHE_REFILL,STALL_BACKEND,L3_ACCESS,SNOOP_REQ,DATA_TRANSFER",
	 "ipc,l1d_cache_mpki,coherency_ratio,coherency_bandwidth,snoop_rate", 50000, true,
	 "false_sharing", "DATA_TRANSFER", DEMO_DROPS, 100.0},
};
#define NCASES (sizeof cases / sizeof cases[0])

struct demo_opts {
	const char *profile;       /* snapshot section (and cases) profile; NULL: DEMO_PROFILE */
	const char *svg;           /* NULL: demo.svg next to the dynpmu binary */
	const char *only;          /* one case study by name */
	bool snapshots_only;
	bool no_snapshots;
	uint64_t snap_ns;          /* snapshot period */
	unsigned max_snapshots;
	char dir[4096];            /* where dynpmu is: workloads/ is next to it */
};

/* One variant's run, boiled down: the interval samples (system unit) and
 * their sum over the run. */
struct demo_result {
	struct dpmu_an_table iv;    /* intervals, the system unit only */
	struct dpmu_an_table tot;   /* one sample: the run, the unit named after the variant */
	char output[256];           /* the program's line on stdout */
	int exit_code;
};

/* Copy unit u into sample s under another name, adding to what is there. */
static int unit_copy(struct dpmu_an_sample *s, const struct dpmu_an_unit *u, const char *name,
		     struct dpmu_err *err)
{
	struct dpmu_an_unit *dst = NULL;
	for (size_t i = 0; i < s->nunits; i++)
		if (strcmp(s->units[i].name, name) == 0)
			dst = &s->units[i];
	int rc = 0;
	if (!dst) {
		rc = dpmu_an_unit_add(s, u->kind, u->index, name, u->freq_hz, &dst, err);
		if (rc)
			return rc;
		dst->little = u->little;
		dst->line_bytes = u->line_bytes;
		dst->bus_bytes = u->bus_bytes;
	}
	for (size_t k = 0; !rc && k < u->ncounts; k++)
		rc = dpmu_an_count_accumulate(dst, &u->counts[k], err);
	return rc;
}

/* Run one variant through stat's path (the program's stdout kept aside so
 * the demo's own output stays readable). */
static int run_variant(const struct demo_opts *dop, const struct demo_case *c, unsigned v,
		       struct demo_result *res, struct dpmu_err *err)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/workloads/%s", dop->dir, c->name);
	char argbuf[128];
	snprintf(argbuf, sizeof argbuf, "%s", c->args);
	char *argv[DEMO_MAX_ARGS + 3] = {path, (char *)c->variant[v]};
	unsigned argc = 2;
	for (char *tok = strtok(argbuf, " "); tok && argc < DEMO_MAX_ARGS + 2;
	     tok = strtok(NULL, " "))
		argv[argc++] = tok;
	argv[argc] = NULL;

	struct dpmu_stat_opts o;
	memset(&o, 0, sizeof o);
	o.profile = dop->profile ? dop->profile : DEMO_PROFILE;
	snprintf(o.events, sizeof o.events, "%s", c->events);
	o.have_events = true;
	o.prog_argv = argv;
	o.cpus = c->cpus;
	o.by_symbol = c->by_symbol;
	o.interval_ns = c->interval_ns;

	dpmu_an_table_init(&res->iv);
	dpmu_an_table_init(&res->tot);
	FILE *cap = tmpfile();
	int saved = dup(STDOUT_FILENO);
	if (!cap || saved < 0) {
		if (cap)
			fclose(cap);
		if (saved >= 0)
			close(saved);
		return dpmu_err_set(err, DPMU_EIO, "demo: cannot capture the program's output: %s",
				    strerror(errno));
	}
	fflush(stdout);
	dup2(fileno(cap), STDOUT_FILENO);
	struct dpmu_stat_run r;
	int rc = dpmu_stat_measure(&o, &r, err);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(cap);
	if (!fgets(res->output, sizeof res->output, cap))
		res->output[0] = '\0';
	res->output[strcspn(res->output, "\n")] = '\0';
	fclose(cap);
	if (!rc) {
		res->exit_code = dpmu_qemu_exit_code(r.b);
		if (res->exit_code)
			rc = dpmu_err_set(err, DPMU_EIO, "demo: %s %s exited with status %d", c->name,
					  c->variant[v], res->exit_code);
	}
	/* the intervals as they are, and their sum as one sample of the run */
	struct dpmu_an_sample *tot = NULL;
	if (!rc)
		rc = dpmu_an_sample_add(&res->tot, 0, dpmu_an_table_end_ns(&r.t), &tot, err);
	res->tot.const_freq_hz = res->iv.const_freq_hz = r.t.const_freq_hz;
	res->tot.nsymbols = r.t.nsymbols;
	memcpy(res->tot.symbols, r.t.symbols, sizeof r.t.symbols);
	snprintf(res->tot.workload, sizeof res->tot.workload, "%s", r.t.workload);
	for (size_t i = 0; !rc && i < r.t.nsamples; i++) {
		const struct dpmu_an_sample *s = &r.t.samples[i];
		const struct dpmu_an_unit *u = dpmu_an_unit_find(s, "system");
		if (!u)
			continue;
		struct dpmu_an_sample *d;
		rc = dpmu_an_sample_add(&res->iv, s->start_ns, s->length_ns, &d, err);
		if (!rc)
			rc = unit_copy(d, u, c->variant[v], err);
		if (!rc)
			rc = unit_copy(&res->tot.samples[0], u, c->variant[v], err);
	}
	dpmu_stat_run_free(&r);
	return rc;
}

static const struct dpmu_an_count *total_count(const struct demo_result *r, const char *ev)
{
	if (!r->tot.nsamples || !r->tot.samples[0].nunits)
		return NULL;
	return dpmu_an_count_find(&r->tot.samples[0].units[0], ev);
}

/* The event's count, or the metric's value, over the whole run. */
static bool value_of(const struct demo_result *r, const char *name, double *out)
{
	const struct dpmu_an_count *c = total_count(r, name);
	if (c && c->supported) {
		*out = dpmu_an_count_estimate(c);
		return true;
	}
	const struct dpmu_an_metric *m = dpmu_an_metric_find(name);
	struct dpmu_an_value v;
	struct dpmu_err e;
	if (!m || !r->tot.nsamples || !r->tot.samples[0].nunits ||
	    dpmu_an_metric_eval(m, &r->tot, &r->tot.samples[0], &r->tot.samples[0].units[0], &v, &e) ||
	    !v.available)
		return false;
	*out = v.value;
	return true;
}

static void print_case_counts(const struct demo_case *c, const struct demo_result *res)
{
	printf("\n  %-28s %16s %16s %13s\n", "event (whole run)", c->variant[0], c->variant[1],
	       "after/before");
	for (const char *p = c->events; *p;) {
		size_t len = strcspn(p, ",");
		char item[DPMU_NAME_MAX];
		snprintf(item, sizeof item, "%.*s", (int)len, p);
		p += len + (p[len] == ',');
		const char *name = strncmp(item, "core/", 5) == 0 ? item + 5 : item;
		char b0[32], b1[32];
		const struct dpmu_an_count *a = total_count(&res[0], name),
					   *b = total_count(&res[1], name);
		uint64_t va = a ? a->value : 0, vb = b ? b->value : 0;
		printf("  %-28s %16s %16s", name, a ? dpmu_an_thousands(va, b0, sizeof b0) : "-",
		       b ? dpmu_an_thousands(vb, b1, sizeof b1) : "-");
		if (va)
			printf(" %12.3gx\n", (double)vb / (double)va);
		else
			printf(" %13s\n", "-");
	}
}

/* Large values (bandwidths, rates) in %g form, the others with 2 decimals. */
static bool fabs_big(double x)
{
	return x >= 1e5 || x <= -1e5;
}

static void print_metrics(const struct dpmu_an_metric *const *m, size_t nm,
			  const struct demo_case *c, const struct demo_result *res)
{
	printf("\n  %-28s %16s %16s\n", "metric", c->variant[0], c->variant[1]);
	for (size_t i = 0; i < nm; i++) {
		char label[64];
		snprintf(label, sizeof label, "%s (%s)", m[i]->name, m[i]->unit);
		printf("  %-28s", label);
		for (unsigned v = 0; v < 2; v++) {
			double x;
			if (!value_of(&res[v], m[i]->name, &x))
				printf(" %16s", "n/a");
			else if (fabs_big(x))
				printf(" %16.4g", x);
			else
				printf(" %16.2f", x);
		}
		printf("\n");
	}
}

/* The advice that fires on one variant; returns whether `rule` is among it. */
/* Prints the advice of variant v; returns whether `rule` fires, its
 * first condition's value in *value. */
static bool print_advice(const struct demo_case *c, unsigned v, const struct demo_result *r,
			 const char *rule, double *value, struct dpmu_err *err)
{
	struct dpmu_an_advice adv[16];
	size_t n = 0;
	bool seen = false;
	if (dpmu_an_advise(&r->tot, 0, adv, 16, &n, err)) {
		printf("  advice for %s: cannot evaluate: %s\n", c->variant[v], dpmu_errmsg(err));
		return false;
	}
	if (n == 0)
		printf("  advice for %s: none fires\n", c->variant[v]);
	for (size_t i = 0; i < n && i < 16; i++) {
		printf("  advice for %s: [%s] %s\n", c->variant[v], adv[i].rule->name, adv[i].text);
		if (rule && strcmp(adv[i].rule->name, rule) == 0) {
			seen = true;
			*value = adv[i].value[0];
		}
	}
	return seen;
}

/* Both variants' intervals in one table, a line per variant. */
static int chart_table(const struct demo_case *c, const struct demo_result *res,
		       struct dpmu_an_table *t, struct dpmu_err *err)
{
	dpmu_an_table_init(t);
	snprintf(t->workload, sizeof t->workload, "%s %s vs %s (%s)", c->name, c->variant[0],
		 c->variant[1], c->source);
	t->intervals = true;
	t->const_freq_hz = res[0].iv.const_freq_hz;
	int rc = 0;
	for (unsigned v = 0; v < 2 && !rc; v++)
		for (size_t i = 0; i < res[v].iv.nsamples && !rc; i++) {
			const struct dpmu_an_sample *s = &res[v].iv.samples[i];
			struct dpmu_an_sample *d;
			rc = dpmu_an_sample_add(t, s->start_ns, s->length_ns, &d, err);
			for (size_t u = 0; !rc && u < s->nunits; u++)
				rc = unit_copy(d, &s->units[u], s->units[u].name, err);
		}
	return rc;
}

/* One case study: both variants, the tables, the advice, the verdict; its
 * chart is appended to `svg` (an SVG document per case). */
static int run_case(const struct demo_opts *dop, unsigned k, char **svg, size_t *svglen,
		    bool *effect_ok, bool *advice_ok, bool *faster, struct dpmu_err *err)
{
	const struct demo_case *c = &cases[k];
	printf("\n=== %u/%zu  %s: %s vs %s  (%s) ===\n%s\n", k + 1, NCASES, c->name, c->variant[0],
	       c->variant[1], c->source, c->story);
	struct demo_result res[2];
	memset(res, 0, sizeof res);
	int rc = 0;
	for (unsigned v = 0; v < 2 && !rc; v++) {
		rc = run_variant(dop, c, v, &res[v], err);
		if (!rc)
			printf("  ran %s %s %s on %s: \"%s\"\n", c->name, c->variant[v], c->args,
			       c->cpus ? "cpu0 (Cortex-A75)" : "every core (threads spread)",
			       res[v].output);
	}
	const struct dpmu_an_metric *m[16];
	size_t nm = 0;
	if (!rc)
		rc = dpmu_an_metrics_parse(c->metrics, m, 16, &nm, err);
	if (!rc) {
		print_case_counts(c, res);
		print_metrics(m, nm, c, res);
		printf("\n");
		double vb = 0, va = 0;
		bool before = print_advice(c, 0, &res[0], c->rule, &vb, err);
		bool after = print_advice(c, 1, &res[1], c->rule, &va, err);
		if (c->rule) {
			/* The fix removes the problem the rule names, or at
			 * least halves the figure the rule fires on (the fix
			 * may leave a smaller problem above the threshold:
			 * docs/demo.md says where). */
			bool weaker = after && before && va * 2 <= vb;
			*advice_ok = before && (!after || weaker);
			char how[96];
			if (weaker)
				snprintf(how, sizeof how, "weaker for %s (%.2f -> %.2f)", c->variant[1],
					 vb, va);
			else
				snprintf(how, sizeof how, "%s for %s", after ? "fires" : "silent",
					 c->variant[1]);
			printf("  => advice %s: %s for %s, %s (%s)\n", c->rule,
			       before ? "fires" : "silent", c->variant[0], how,
			       *advice_ok ? "as expected" : "NOT as expected");
		} else {
			*advice_ok = true;
			printf("  => no rule is expected to fire here (docs/demo.md says why)\n");
		}
		double a = 0, b = 0;
		bool have = value_of(&res[0], c->effect, &a) && value_of(&res[1], c->effect, &b);
		double ratio = c->dir == DEMO_DROPS ? (b > 0 ? a / b : (a > 0 ? 1e300 : 0))
						    : (a > 0 ? b / a : (b > 0 ? 1e300 : 0));
		*effect_ok = have && ratio >= c->factor;
		char sa[40], sb[40];
		if (total_count(&res[0], c->effect)) { /* a count: as the table prints it */
			dpmu_an_thousands((uint64_t)(a + 0.5), sa, sizeof sa);
			dpmu_an_thousands((uint64_t)(b + 0.5), sb, sizeof sb);
		} else {
			snprintf(sa, sizeof sa, "%.2f", a);
			snprintf(sb, sizeof sb, "%.2f", b);
		}
		printf("  => effect: %s %s -> %s, %s %s%.3gx (the case study wants >= %gx): %s\n",
		       c->effect, sa, sb, c->dir == DEMO_DROPS ? "down" : "up",
		       ratio >= 1e300 ? ">" : "", ratio >= 1e300 ? 1e6 : ratio, c->factor,
		       *effect_ok ? "SEEN" : "NOT SEEN");
		/* Time: the fix must pay off in cycles too (summed over the
		 * cores a variant ran on). */
		double cb = 0, ca = 0;
		if (value_of(&res[0], "CPU_CYCLES", &cb) && value_of(&res[1], "CPU_CYCLES", &ca)) {
			*faster = ca < cb;
			dpmu_an_thousands((uint64_t)(cb + 0.5), sa, sizeof sa);
			dpmu_an_thousands((uint64_t)(ca + 0.5), sb, sizeof sb);
			printf("  => time: CPU_CYCLES %s -> %s, %.3gx: %s %s\n", sa, sb,
			       cb > 0 ? ca / cb : 0, c->variant[1],
			       *faster ? "is faster" : "is NOT faster");
		} else {
			*faster = false;
			printf("  => time: CPU_CYCLES not counted\n");
		}
	}
	struct dpmu_an_table t;
	dpmu_an_table_init(&t);
	if (!rc)
		rc = chart_table(c, res, &t, err);
	if (!rc) {
		FILE *f = open_memstream(svg, svglen);
		struct dpmu_an_report rep = {.metrics = m, .nmetrics = nm};
		if (!f)
			rc = dpmu_err_set(err, DPMU_ENOMEM, "demo: out of memory");
		else if ((rc = dpmu_an_write_svg(f, &t, &rep, err)) == 0 && fclose(f))
			rc = dpmu_err_set(err, DPMU_EIO, "demo: chart failed");
		else if (rc)
			fclose(f);
	}
	dpmu_an_table_free(&t);
	for (unsigned v = 0; v < 2; v++) {
		dpmu_an_table_free(&res[v].iv);
		dpmu_an_table_free(&res[v].tot);
	}
	return rc;
}

/* The cases' charts stacked into one SVG: each document nested as an
 * <svg> element at its offset (SVG 1.1 section 5.1.2). */
static int write_svg(const char *path, char **svg, const size_t *len, unsigned n,
		     struct dpmu_err *err)
{
	double w = 0, h = 40, y[NCASES];
	for (unsigned k = 0; k < n; k++) {
		double cw = 0, ch = 0;
		const char *root = svg[k] ? strstr(svg[k], "<svg ") : NULL;
		const char *pw = root ? strstr(root, " width=\"") : NULL;
		const char *ph = root ? strstr(root, " height=\"") : NULL;
		if (!pw || !ph || sscanf(pw, " width=\"%lf\"", &cw) != 1 ||
		    sscanf(ph, " height=\"%lf\"", &ch) != 1)
			return dpmu_err_set(err, DPMU_EINVAL, "demo: chart %u is not an SVG document",
					    k + 1);
		y[k] = h;
		h += ch + 10;
		if (cw > w)
			w = cw;
	}
	FILE *f = fopen(path, "w");
	if (!f)
		return dpmu_err_set(err, DPMU_EIO, "demo: %s: %s", path, strerror(errno));
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
		   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Arial, "
		   "sans-serif\">\n<title>dynpmu demo: the case studies over time</title>\n"
		   "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n"
		   "<text x=\"12\" y=\"28\" font-size=\"18\" font-weight=\"bold\">dynpmu demo: "
		   "slow variant and fix, per interval of simulated time</text>\n",
		   w, h, w, h, w, h);
	for (unsigned k = 0; k < n; k++) {
		const char *root = strstr(svg[k], "<svg ");
		fprintf(f, "<g transform=\"translate(0 %.0f)\">\n", y[k]);
		fwrite(root, 1, len[k] - (size_t)(root - svg[k]), f);
		fprintf(f, "</g>\n");
	}
	fprintf(f, "</svg>\n");
	if (fclose(f))
		return dpmu_err_set(err, DPMU_EIO, "demo: %s: write failed", path);
	return 0;
}

/* ---- the snapshot loop's register programming (seed 001 section 4.1) ---- */

#define DEMO_COUNTERS 6
/* Seed 001 section 4.1 step 2: reset counters 0-2 after each capture. */
#define DEMO_PMSSRR ((1u << 0) | (1u << 1) | (1u << 2))

/* Core events: what a performance engineer looks at first (IPC, L1D miss
 * ratio, branch mispredictions, back-end stalls; reference section 6). */
static const char *const core_events[DEMO_COUNTERS] = {
	"INST_RETIRED", "CPU_CYCLES", "L1D_CACHE", "L1D_CACHE_REFILL", "BR_MIS_PRED", "STALL_BACKEND",
};
/* Cluster events per numbering: L3 access and miss first (the hit rate of
 * seed 001 section 4.2 from deltas), then bus / coherency traffic. */
static const char *const cluster_events_classic[DEMO_COUNTERS] = {
	"L3D_CACHE", "L3D_CACHE_REFILL", "BUS_ACCESS", "L3D_CACHE_ALLOCATE", "L3D_CACHE_WB", "BUS_CYCLES",
};
static const char *const cluster_events_120[DEMO_COUNTERS] = {
	"L3_ACCESS", "L3_MISS", "SNOOP_REQ", "DATA_TRANSFER", "BUS_ACCESS", "BUS_CYCLES",
};

struct demo {
	const struct dpmu_profile *p;
	struct dpmu_drv *drv;
	/* per target: event code programmed on each counter, or -1 */
	int core_code[DPMU_MAX_CORES][DEMO_COUNTERS];
	const char *cluster_names[DPMU_MAX_CLUSTERS][DEMO_COUNTERS];
	int cluster_code[DPMU_MAX_CLUSTERS][DEMO_COUNTERS];
};

static int setup_cores(struct demo *d, struct dpmu_err *err)
{
	for (unsigned cpu = 0; cpu < dpmu_drv_ncpus(d->drv); cpu++) {
		unsigned cl, idx;
		const struct dpmu_core_type *t = dpmu_profile_core(d->p, cpu, &cl, &idx);
		const struct dpmu_event_catalog *cat = dpmu_catalog_get(t->catalog, err);
		const struct dpmu_drv_cpuinfo *ci = dpmu_drv_cpuinfo(d->drv, cpu);
		if (!cat)
			return DPMU_ENOENT;
		/* Seed 001 section 4.1 step 1: write_pmcr(PMCR_E | PMCR_C | PMCR_P). */
		int rc = dpmu_drv_pmu_write_pmcr(d->drv, cpu,
						 DPMU_DRV_PMCR_E | DPMU_DRV_PMCR_C | DPMU_DRV_PMCR_P, err);
		if (rc || (rc = dpmu_drv_pmu_program_cycles(d->drv, cpu, DPMU_DRV_EL01, err)))
			return rc;
		uint32_t mask = DPMU_DRV_CYCLE_BIT;
		for (unsigned i = 0; i < DEMO_COUNTERS; i++) {
			const struct dpmu_event_desc *e = dpmu_catalog_find_name(cat, core_events[i]);
			d->core_code[cpu][i] = -1;
			/* Program only what the catalog names and PMCEID does not deny. */
			if (i >= ci->pmu_n || !e ||
			    dpmu_drv_cpu_event(d->drv, cpu, e->code) == DPMU_DRV_EVENT_NO)
				continue;
			if ((rc = dpmu_drv_pmu_program(d->drv, cpu, i, e->code, DPMU_DRV_EL01, err)))
				return rc;
			d->core_code[cpu][i] = e->code;
			mask |= 1u << i;
		}
		if ((rc = dpmu_drv_pmu_start(d->drv, cpu, mask, err)))
			return rc;
	}
	return 0;
}

static int setup_clusters(struct demo *d, struct dpmu_err *err)
{
	for (unsigned cl = 0; cl < dpmu_drv_nclusters(d->drv); cl++) {
		const struct dpmu_cluster_params *cp = &d->p->clusters[cl];
		const struct dpmu_event_catalog *cat = dpmu_catalog_get(cp->catalog, err);
		const struct dpmu_drv_clusterinfo *ki = dpmu_drv_clusterinfo(d->drv, cl);
		if (!cat)
			return DPMU_ENOENT;
		const char *const *names = dpmu_catalog_find_name(cat, "L3_ACCESS")
						   ? cluster_events_120
						   : cluster_events_classic;
		int rc = dpmu_drv_cluster_reset(d->drv, cl, err);
		if (rc)
			return rc;
		uint32_t mask = DPMU_DRV_CYCLE_BIT;
		for (unsigned i = 0; i < DEMO_COUNTERS; i++) {
			const struct dpmu_event_desc *e = dpmu_catalog_find_name(cat, names[i]);
			d->cluster_names[cl][i] = names[i];
			d->cluster_code[cl][i] = -1;
			if (i >= ki->pmu_n || !e ||
			    dpmu_drv_cluster_event(d->drv, cl, e->code) == DPMU_DRV_EVENT_NO)
				continue;
			if ((rc = dpmu_drv_cluster_program(d->drv, cl, i, e->code, err)))
				return rc;
			d->cluster_code[cl][i] = e->code;
			mask |= 1u << i;
		}
		if ((rc = dpmu_drv_cluster_start(d->drv, cl, mask, err)) ||
		    (rc = dpmu_drv_cluster_enable(d->drv, cl, true, err)))
			return rc;
	}
	return 0;
}

/* Every frame: unlock the software lock, then PMSSRR (seed 001 step 2). */
static int setup_snapshots(struct demo *d, struct dpmu_err *err)
{
	int rc;
	for (unsigned cpu = 0; cpu < dpmu_drv_ncpus(d->drv); cpu++)
		if ((rc = dpmu_drv_frame_unlock(d->drv, DPMU_DRV_CORE_FRAME(cpu), true, err)) ||
		    (rc = dpmu_drv_snapshot_reset_mask(d->drv, DPMU_DRV_CORE_FRAME(cpu), DEMO_PMSSRR, err)))
			return rc;
	for (unsigned cl = 0; cl < dpmu_drv_nclusters(d->drv); cl++)
		if ((rc = dpmu_drv_frame_unlock(d->drv, DPMU_DRV_CLUSTER_FRAME(cl), true, err)) ||
		    (rc = dpmu_drv_snapshot_reset_mask(d->drv, DPMU_DRV_CLUSTER_FRAME(cl), DEMO_PMSSRR,
						       err)))
			return rc;
	return 0;
}

static unsigned col_width(const char *name)
{
	size_t n = strlen(name) + 1;
	return (unsigned)(n < 11 ? 11 : n);
}

static void print_header(const char *const *names, const char *cycles, const char *ratio)
{
	printf("%-9s", "");
	for (unsigned i = 0; i < DEMO_COUNTERS; i++) {
		char h[40];
		snprintf(h, sizeof h, "%s%s", (DEMO_PMSSRR >> i) & 1 ? "+" : "", names[i]);
		printf(" %*s", col_width(names[i]), h);
	}
	printf(" %14s %7s\n", cycles, ratio);
}

static void print_counts(const struct dpmu_drv_snapshot *s, const char *const *names,
			 const int *codes)
{
	for (unsigned i = 0; i < DEMO_COUNTERS; i++) {
		if (codes[i] < 0 || i >= s->n)
			printf(" %*s", col_width(names[i]), "-");
		else
			printf(" %*" PRIu64, col_width(names[i]), s->ev[i]);
	}
	printf(" %14" PRIu64, s->cc);
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static int snapshot_all(struct demo *d, struct dpmu_drv_snapshot *core_snap,
			struct dpmu_drv_snapshot *cl_snap, struct dpmu_err *err)
{
	unsigned ncpus = dpmu_drv_ncpus(d->drv), ncl = dpmu_drv_nclusters(d->drv);
	int rc;
	/* Trigger every frame first, then collect: the captures are as close
	 * together in time as the bus allows (seed 001 section 5.2 item 2). */
	for (unsigned cpu = 0; cpu < ncpus; cpu++)
		if ((rc = dpmu_drv_snapshot_trigger(d->drv, DPMU_DRV_CORE_FRAME(cpu), err)))
			return rc;
	for (unsigned cl = 0; cl < ncl; cl++)
		if ((rc = dpmu_drv_snapshot_trigger(d->drv, DPMU_DRV_CLUSTER_FRAME(cl), err)))
			return rc;
	for (unsigned cpu = 0; cpu < ncpus; cpu++) {
		if ((rc = dpmu_drv_snapshot_collect(d->drv, DPMU_DRV_CORE_FRAME(cpu), &core_snap[cpu],
						     err)))
			return rc;
	}
	for (unsigned cl = 0; cl < ncl; cl++) {
		if ((rc = dpmu_drv_snapshot_collect(d->drv, DPMU_DRV_CLUSTER_FRAME(cl), &cl_snap[cl],
						     err)))
			return rc;
	}
	return 0;
}

static void print_interval(struct demo *d, unsigned k, uint64_t t0, uint64_t t1,
			   const struct dpmu_drv_snapshot *core_snap,
			   const struct dpmu_drv_snapshot *cl_snap)
{
	printf("\nsnapshot %u: %.3f ms simulated, from %.3f to %.3f ms\n", k + 1,
	       (double)(t1 - t0) / 1e6, (double)t0 / 1e6, (double)t1 / 1e6);
	print_header(core_events, "PMCCNTR", "IPC");
	for (unsigned cpu = 0; cpu < dpmu_drv_ncpus(d->drv); cpu++) {
		const struct dpmu_drv_snapshot *s = &core_snap[cpu];
		printf("cpu%-6u", cpu);
		print_counts(s, core_events, d->core_code[cpu]);
		/* counters 0 and 1 are per-interval deltas: IPC of this interval */
		printf(" %7.2f\n", ratio(s->ev[0], s->ev[1]));
	}
	for (unsigned cl = 0; cl < dpmu_drv_nclusters(d->drv); cl++) {
		const struct dpmu_drv_snapshot *s = &cl_snap[cl];
		print_header(d->cluster_names[cl], "CLUSTERPMCCNTR", "L3 hit");
		printf("cluster%-2u", cl);
		print_counts(s, d->cluster_names[cl], d->cluster_code[cl]);
		/* seed 001 section 4.2: (L3 access - L3 miss) / L3 access */
		double hit = s->ev[0] ? 1.0 - ratio(s->ev[1], s->ev[0]) : 0.0;
		printf(" %6.1f%%\n", 100.0 * hit);
	}
}

static void print_discovery(struct demo *d)
{
	printf("driver discovery (register reads): %u cpus, %u cluster(s)\n", dpmu_drv_ncpus(d->drv),
	       dpmu_drv_nclusters(d->drv));
	for (unsigned cpu = 0; cpu < dpmu_drv_ncpus(d->drv); cpu++) {
		const struct dpmu_drv_cpuinfo *ci = dpmu_drv_cpuinfo(d->drv, cpu);
		printf("  cpu%-2u MIDR 0x%08" PRIx64 "  cluster %u core %u  PMCR.N %u", cpu, ci->midr,
		       ci->cluster, ci->core, ci->pmu_n);
		if (ci->amu)
			printf("  AMU %u+%u counters\n", ci->amu_cg0nc, ci->amu_cg1nc);
		else
			printf("  no AMU\n");
	}
	for (unsigned cl = 0; cl < dpmu_drv_nclusters(d->drv); cl++) {
		const struct dpmu_drv_clusterinfo *ki = dpmu_drv_clusterinfo(d->drv, cl);
		printf("  cluster%u: %u cpus, CLUSTERPMCR.N %u (accessed from cpu%u)\n", cl, ki->ncpus,
		       ki->pmu_n, ki->cpu);
	}
}


/* ---- part 2: seed 001 section 4.1's snapshot loop over a real workload ---- */

static const char *const snap_argv_tail[] = {"shared", "4", "100000"};
#define SNAP_PROGRAM "false_sharing"

struct snap_ctx {
	struct demo *d;
	struct dpmu_drv_snapshot *core_snap, *cl_snap;
	unsigned k, max;            /* snapshots taken, at most (the last covers the rest) */
	uint64_t last_ns, next_ns, period_ns;
};

static int snap_take(struct snap_ctx *x, uint64_t now, struct dpmu_err *err)
{
	int rc = snapshot_all(x->d, x->core_snap, x->cl_snap, err);
	if (rc)
		return rc;
	print_interval(x->d, x->k++, x->last_ns, now, x->core_snap, x->cl_snap);
	x->last_ns = now;
	return 0;
}

/* The backend's timer: one snapshot per period of simulated time (its
 * other calls, at the poll interval or for an interrupt line, are not). */
static int snap_tick(void *ctx, uint64_t now, struct dpmu_err *err)
{
	struct snap_ctx *x = ctx;
	if (now < x->next_ns || x->k + 1 >= x->max)
		return 0;
	while (x->next_ns <= now)
		x->next_ns += x->period_ns;
	return snap_take(x, now, err);
}

static int run_snapshots(const struct demo_opts *dop)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/workloads/%s", dop->dir, SNAP_PROGRAM);
	char *argv[] = {path, (char *)snap_argv_tail[0], (char *)snap_argv_tail[1],
			(char *)snap_argv_tail[2], NULL};
	/* The program prints while the snapshots are printed: its output
	 * goes aside and follows the loop, as the cases keep theirs. */
	FILE *cap = tmpfile();
	struct dpmu_qemu_options qo = {.profile = dop->profile, .program = path, .argv = argv,
				       .stdout_fd = cap ? fileno(cap) : 0};
	struct dpmu_err err;
	dpmu_err_clear(&err);
	struct dpmu_backend *b = NULL;
	struct demo *d = calloc(1, sizeof *d);
	struct snap_ctx x = {.d = d, .core_snap = calloc(DPMU_MAX_CORES, sizeof *x.core_snap),
			     .cl_snap = calloc(DPMU_MAX_CLUSTERS, sizeof *x.cl_snap),
			     .period_ns = dop->snap_ns, .next_ns = dop->snap_ns,
			     .max = dop->max_snapshots};
	int rc = !d || !x.core_snap || !x.cl_snap
			 ? dpmu_err_set(&err, DPMU_ENOMEM, "out of memory")
			 : dpmu_qemu_create(&qo, &b, &err);
	if (!rc) {
		d->p = b->profile;
		d->drv = b->drv;
		printf("\n=== seed 001 section 4.1: coordinated snapshots of every PMU, profile %s ===\n"
		       "workload: %s %s %s %s (4 threads, spread over the cores), a snapshot every "
		       "%.3f ms of simulated time\n",
		       d->p->name, SNAP_PROGRAM, argv[1], argv[2], argv[3], (double)dop->snap_ns / 1e6);
		print_discovery(d);
		rc = setup_cores(d, &err);
	}
	if (!rc)
		rc = setup_clusters(d, &err);
	if (!rc)
		rc = setup_snapshots(d, &err);
	if (!rc) {
		printf("snapshots: PMSSRR = 0x%x on every frame: columns marked + are reset after each\n"
		       "           capture (per-interval deltas); the others and the cycle counters are\n"
		       "           cumulative since the start\n",
		       DEMO_PMSSRR);
		rc = b->ops->run_timed(b, 0, dop->snap_ns, snap_tick, &x, &err);
	}
	/* the last, partial period */
	if (!rc && b->ops->time_ns(b) > x.last_ns)
		rc = snap_take(&x, b->ops->time_ns(b), &err);
	if (!rc && dpmu_qemu_exit_code(b))
		rc = dpmu_err_set(&err, DPMU_EIO, "%s exited with status %d", SNAP_PROGRAM,
				  dpmu_qemu_exit_code(b));
	char line[256];
	if (!rc && cap && (rewind(cap), fgets(line, sizeof line, cap)))
		printf("\nthe workload printed: %s", line);
	if (cap)
		fclose(cap);
	if (rc)
		fprintf(stderr, "dynpmu demo: %s\n", dpmu_errmsg(&err));
	dpmu_backend_destroy(b);
	free(d);
	free(x.core_snap);
	free(x.cl_snap);
	return rc ? DPMU_EXIT_FAIL : DPMU_EXIT_OK;
}

static void demo_usage(FILE *out)
{
	fprintf(out,
		"usage: dynpmu demo [--case NAME] [--svg FILE] [--snapshots | --no-snapshots]\n"
		"                   [--interval-us US] [--intervals N] [--profile P]\n\n"
		"The seeds' four case studies, each a real aarch64 program in a slow and a fixed\n"
		"variant, run on the simulated cluster through dynpmu stat's path: before/after\n"
		"counts, metrics, the advice that fires, whether the effect shows, and an SVG\n"
		"of the interval metrics (default: demo.svg next to the dynpmu binary). Then\n"
		"seed 001 section 4.1's snapshot loop (every core PMU and the cluster PMU,\n"
		"PMSSRR reset, periodic PMSSCR) over a multi-threaded workload (docs/demo.md).\n\n"
		"  --case NAME      only matmul, branches, traversal or false_sharing\n"
		"  --svg FILE       where the chart goes\n"
		"  --snapshots      only the snapshot loop;  --no-snapshots: only the cases\n"
		"  --interval-us US snapshot period in simulated microseconds (default 100)\n"
		"  --intervals N    at most N snapshots (the last covers the rest of the run)\n"
		"  --profile P      profile (default %s)\n",
		DEMO_PROFILE);
}

static int parse_count(const char *opt, const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v = s ? strtoul(s, &end, 10) : 0;
	if (!s || !*s || *end || v < lo || v > hi) {
		fprintf(stderr, "dynpmu demo: %s needs a number from %u to %u, not '%s'\n", opt, lo, hi,
			s ? s : "");
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

int dpmu_cmd_demo(int argc, char **argv)
{
	struct demo_opts o;
	memset(&o, 0, sizeof o);
	unsigned us = 100, maxsnap = 1000;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			demo_usage(stdout);
			return DPMU_EXIT_OK;
		} else if (strcmp(a, "--profile") == 0 && next) {
			o.profile = argv[++i];
		} else if (strcmp(a, "--svg") == 0 && next) {
			o.svg = argv[++i];
		} else if (strcmp(a, "--case") == 0 && next) {
			o.only = argv[++i];
		} else if (strcmp(a, "--snapshots") == 0) {
			o.snapshots_only = true;
		} else if (strcmp(a, "--no-snapshots") == 0) {
			o.no_snapshots = true;
		} else if (strcmp(a, "--intervals") == 0) {
			if (parse_count(a, next, 1, 1000, &maxsnap))
				return DPMU_EXIT_USAGE;
			i++;
		} else if (strcmp(a, "--interval-us") == 0) {
			if (parse_count(a, next, 1, 1000000, &us))
				return DPMU_EXIT_USAGE;
			i++;
		} else {
			fprintf(stderr, "dynpmu demo: unknown argument '%s'%s\n", a,
				next || a[0] != '-' ? "" : " (or it needs a value)");
			demo_usage(stderr);
			return DPMU_EXIT_USAGE;
		}
	}
	o.snap_ns = (uint64_t)us * 1000u;
	o.max_snapshots = maxsnap;
	int selected = -1;
	if (o.only) {
		for (unsigned k = 0; k < NCASES; k++)
			if (strcmp(o.only, cases[k].name) == 0)
				selected = (int)k;
		if (selected < 0) {
			fprintf(stderr, "dynpmu demo: --case '%s': use matmul, branches, traversal or "
					"false_sharing\n", o.only);
			return DPMU_EXIT_USAGE;
		}
	}
	ssize_t n = readlink("/proc/self/exe", o.dir, sizeof o.dir - 1);
	if (n <= 0) {
		fprintf(stderr, "dynpmu demo: cannot find dynpmu's own path (the workloads are next "
				"to it)\n");
		return DPMU_EXIT_FAIL;
	}
	o.dir[n] = '\0';
	char *slash = strrchr(o.dir, '/');
	if (slash)
		*slash = '\0';
	char wl[4200];
	snprintf(wl, sizeof wl, "%s/workloads/%s", o.dir, cases[0].name);
	if (access(wl, X_OK) != 0) {
		fprintf(stderr, "dynpmu demo: the workloads are not built (%s is missing): install "
				"gcc-aarch64-linux-gnu and libc6-dev-arm64-cross (scripts/deps.sh demo) "
				"and rebuild\n", wl);
		return DPMU_EXIT_FAIL;
	}
	if (o.snapshots_only)
		return run_snapshots(&o);

	printf("dynpmu demo: the seeds' case studies on the simulated cluster (profile %s),\n"
	       "each program run under qemu-aarch64 with every instruction fed to the engine and\n"
	       "the counters read back through the driver, as `dynpmu stat -- PROGRAM` does\n",
	       o.profile ? o.profile : DEMO_PROFILE);
	char *svg[NCASES] = {NULL};
	size_t svglen[NCASES] = {0};
	unsigned ncharts = 0, effects = 0, advices = 0, faster = 0, ran = 0;
	int rc = DPMU_EXIT_OK;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	for (unsigned k = 0; k < NCASES; k++) {
		if (selected >= 0 && k != (unsigned)selected)
			continue;
		bool eff = false, adv = false, fast = false;
		if (run_case(&o, k, &svg[ncharts], &svglen[ncharts], &eff, &adv, &fast, &err)) {
			fprintf(stderr, "dynpmu demo: %s: %s\n", cases[k].name, dpmu_errmsg(&err));
			rc = DPMU_EXIT_FAIL;
			break;
		}
		ncharts++;
		ran++;
		effects += eff;
		advices += adv;
		faster += fast;
	}
	char path[4300];
	if (o.svg)
		snprintf(path, sizeof path, "%s", o.svg);
	else
		snprintf(path, sizeof path, "%s/demo.svg", o.dir);
	if (rc == DPMU_EXIT_OK) {
		printf("\nsummary: %u of %u case-study effects seen, advice as expected in %u of %u, "
		       "the fix faster in %u of %u\n",
		       effects, ran, advices, ran, faster, ran);
		if (write_svg(path, svg, svglen, ncharts, &err)) {
			fprintf(stderr, "dynpmu demo: %s\n", dpmu_errmsg(&err));
			rc = DPMU_EXIT_FAIL;
		} else {
			printf("chart: %s (interval metrics of both variants of every case study)\n",
			       path);
		}
	}
	for (unsigned k = 0; k < NCASES; k++)
		free(svg[k]);
	if (rc == DPMU_EXIT_OK && !o.no_snapshots && selected < 0)
		rc = run_snapshots(&o);
	fflush(stdout);
	return rc;
}
