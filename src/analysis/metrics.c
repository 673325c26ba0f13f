/*
 * Derived metrics: one table row per metric (formula over event names,
 * unit, source) and one small recursive-descent evaluator for the formulas.
 * docs/metrics.md lists the same rows for people.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/an_internal.h"

static const struct dpmu_an_metric metrics[] = {
	{"ipc", "INST_RETIRED / CPU_CYCLES", NULL, "insn/cycle", "reference section 6",
	 "instructions retired per core cycle"},
	{"cpi", "CPU_CYCLES / INST_RETIRED", NULL, "cycles/insn", "reference section 6; seed 003 section 8",
	 "core cycles per instruction retired (the seed's AMU baseline metric)"},
	{"l1i_cache_mpki", "L1I_CACHE_REFILL * 1000 / INST_RETIRED", NULL, "MPKI",
	 "reference section 6", "L1 instruction cache refills per 1000 instructions"},
	{"l1d_cache_mpki", "L1D_CACHE_REFILL * 1000 / INST_RETIRED", NULL, "MPKI",
	 "reference section 6", "L1 data cache refills per 1000 instructions"},
	{"l2_cache_mpki", "L2D_CACHE_REFILL * 1000 / INST_RETIRED", NULL, "MPKI",
	 "reference section 6", "L2 cache refills per 1000 instructions"},
	{"l3_cache_mpki", "L3D_CACHE_REFILL * 1000 / INST_RETIRED", "L3_MISS * 1000 / INST_RETIRED",
	 "MPKI", "reference section 6; seed 001 section 4.2 (DSU-120 L3_MISS)",
	 "L3 refills (misses) per 1000 instructions"},
	{"itlb_mpki", "ITLB_WALK * 1000 / INST_RETIRED", NULL, "MPKI", "reference section 6",
	 "instruction-side page-table walks per 1000 instructions"},
	{"dtlb_mpki", "DTLB_WALK * 1000 / INST_RETIRED", NULL, "MPKI", "reference section 6",
	 "data-side page-table walks per 1000 instructions"},
	{"l1i_cache_miss_ratio", "100 * L1I_CACHE_REFILL / L1I_CACHE", NULL, "%",
	 "reference section 6", "L1 instruction cache accesses that refilled"},
	{"l1d_cache_miss_ratio", "100 * L1D_CACHE_REFILL / L1D_CACHE", NULL, "%",
	 "reference section 6", "L1 data cache accesses that refilled"},
	{"l2_cache_miss_ratio", "100 * L2D_CACHE_REFILL / L2D_CACHE", NULL, "%",
	 "reference section 6", "L2 cache accesses that refilled"},
	{"l3_cache_miss_ratio", "100 * L3D_CACHE_REFILL / L3D_CACHE", "100 * L3_MISS / L3_ACCESS", "%",
	 "reference section 6; seed 001 section 4.2", "L3 accesses that missed"},
	{"l3_hit_rate", "100 * (L3D_CACHE - L3D_CACHE_REFILL) / L3D_CACHE",
	 "100 * (L3_ACCESS - L3_MISS) / L3_ACCESS", "%", "seed 001 section 4.2",
	 "L3 accesses that hit: (access - miss) / access, in the classic DSU or DSU-120 numbering"},
	/* Seed 001's formula counts the L2's write-backs into the L3, which
	 * always hit, so a read thrash still reads about 50 %; reads alone show
	 * it (docs/workloads.md, traversal). */
	{"l3_read_hit_rate", "100 * (L3D_CACHE_RD - L3D_CACHE_REFILL_RD) / L3D_CACHE_RD",
	 "100 * (L3_ACCESS_RD - L3_MISS_RD) / L3_ACCESS_RD", "%", "seed 001 section 5.2; Arm ARM L3D_CACHE_RD",
	 "L3 reads that hit (write-backs excluded)"},
	{"ll_cache_read_hit_ratio", "100 * (LL_CACHE_RD - LL_CACHE_MISS_RD) / LL_CACHE_RD", NULL, "%",
	 "reference section 6", "last-level cache reads that hit"},
	{"branch_misprediction_ratio", "100 * BR_MIS_PRED_RETIRED / BR_RETIRED",
	 "100 * BR_MIS_PRED / BR_PRED", "%", "reference section 6; seed 003 section 6.2",
	 "branches mispredicted (retired; speculative when the retired events are absent)"},
	{"branch_mpki", "BR_MIS_PRED_RETIRED * 1000 / INST_RETIRED", NULL, "MPKI",
	 "reference section 6", "branch mispredictions per 1000 instructions"},
	{"frontend_stalled_cycles", "100 * STALL_FRONTEND / CPU_CYCLES", NULL, "%",
	 "reference section 6", "cycles with no operation issued because the front end had none"},
	{"backend_stalled_cycles", "100 * STALL_BACKEND / CPU_CYCLES", NULL, "%",
	 "reference section 6; seed 003 section 3.2",
	 "cycles with no operation issued because the back end could not accept one"},
	{"bus_bandwidth", "BUS_ACCESS * bus_width / time", NULL, "B/s",
	 "reference section 3 (BUS_ACCESS); profile bus_width",
	 "bytes moved on the bus interface per second"},
	{"coherency_bandwidth", "DATA_TRANSFER * line / time", NULL, "B/s", "seed 001 section 4.2",
	 "snoop data transfers (core to core) times the line size per second"},
	{"coherency_ratio", "100 * DATA_TRANSFER / L3_ACCESS", NULL, "%", "seed 001 section 4.2",
	 "L3 requests answered with data from another core's cache"},
	{"snoop_rate", "SNOOP_REQ / time", "SCU_SNP_ACCESS / time", "1/s",
	 "seed 001 section 4.2; DSU TRM (SCU_SNP_ACCESS)", "snoop requests sent to cores per second"},
	{"load_percentage", "100 * LD_SPEC / INST_SPEC", NULL, "%", "reference section 6",
	 "instruction mix: loads"},
	{"store_percentage", "100 * ST_SPEC / INST_SPEC", NULL, "%", "reference section 6",
	 "instruction mix: stores"},
	{"integer_dp_percentage", "100 * DP_SPEC / INST_SPEC", NULL, "%", "reference section 6",
	 "instruction mix: integer data processing"},
	{"simd_percentage", "100 * ASE_SPEC / INST_SPEC", NULL, "%", "reference section 6",
	 "instruction mix: Advanced SIMD"},
	{"scalar_fp_percentage", "100 * VFP_SPEC / INST_SPEC", NULL, "%", "reference section 6",
	 "instruction mix: scalar floating point"},
	{"crypto_percentage", "100 * CRYPTO_SPEC / INST_SPEC", NULL, "%", "reference section 6",
	 "instruction mix: cryptographic"},
	{"branch_percentage", "100 * (BR_IMMED_SPEC + BR_RETURN_SPEC + BR_INDIRECT_SPEC) / INST_SPEC",
	 "100 * BR_RETIRED / INST_RETIRED", "%", "reference section 6",
	 "instruction mix: branches (retired share where the BR_*_SPEC events are absent, as on Cortex-A75)"},
	{"effective_frequency", "const_freq * amu:CPU_CYCLES / amu:CNT_CYCLES",
	 "const_freq * CPU_CYCLES / CNT_CYCLES", "Hz", "reference section 4",
	 "average core clock while running: f_const * dCPU_CYCLES / dCNT_CYCLES (AMU)"},
	{"cycles_frequency", "CPU_CYCLES / time", "CYCLES / time", "Hz", "reference section 6",
	 "cycles counted per second of the sample"},
	{"cpu_cycles_normalised", "CPU_CYCLES * ref_freq / freq", NULL, "cycles",
	 "seed 001 section 5.2", "core cycles expressed at the reference clock: count * ref_freq / cpu_freq"},
};

#define NMETRICS (sizeof metrics / sizeof metrics[0])

const struct dpmu_an_metric *dpmu_an_metric_table(size_t *n)
{
	*n = NMETRICS;
	return metrics;
}

const struct dpmu_an_metric *dpmu_an_metric_find(const char *name)
{
	for (size_t i = 0; i < NMETRICS; i++)
		if (strcasecmp(metrics[i].name, name) == 0)
			return &metrics[i];
	return NULL;
}


int dpmu_an_metrics_parse(const char *list, const struct dpmu_an_metric **out, size_t cap,
			  size_t *n, struct dpmu_err *err)
{
	*n = 0;
	if (!list || !list[0])
		return dpmu_err_set(err, DPMU_EINVAL, "empty metric list");
	const char *p = list;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!*p)
			break;
		const char *e = p;
		while (*e && *e != ',')
			e++;
		size_t len = (size_t)(e - p);
		while (len && p[len - 1] == ' ')
			len--;
		char name[DPMU_NAME_MAX];
		if (len >= sizeof name)
			return dpmu_err_set(err, DPMU_EINVAL, "metric name '%.*s...' is too long", 20, p);
		memcpy(name, p, len);
		name[len] = '\0';
		const struct dpmu_an_metric *m = dpmu_an_metric_find(name);
		if (!m) {
			const char *best = NULL;
			unsigned bd = 4; /* suggest only close names */
			for (size_t i = 0; i < NMETRICS; i++) {
				unsigned d = dpmu_name_distance(name, metrics[i].name);
				if (d < bd) {
					bd = d;
					best = metrics[i].name;
				}
			}
			if (best)
				return dpmu_err_set(err, DPMU_ENOENT,
						    "unknown metric '%s' (did you mean %s?)", name, best);
			return dpmu_err_set(err, DPMU_ENOENT,
					    "unknown metric '%s' (docs/metrics.md lists them)", name);
		}
		bool dup = false;
		for (size_t i = 0; i < *n; i++)
			dup = dup || out[i] == m;
		if (!dup) {
			if (*n >= cap)
				return dpmu_err_set(err, DPMU_ERANGE, "more than %zu metrics in '%s'",
						    cap, list);
			out[(*n)++] = m;
		}
		p = e;
	}
	if (*n == 0)
		return dpmu_err_set(err, DPMU_EINVAL, "empty metric list");
	return 0;
}

/* ---- the formula evaluator ------------------------------------------------- */

struct expr {
	const char *src;          /* the formula */
	const char *p;
	/* evaluation context; u == NULL: only collect the event names */
	const struct dpmu_an_table *t;
	const struct dpmu_an_sample *s;
	const struct dpmu_an_unit *u;
	bool missing;             /* an input is not available (why says which) */
	enum dpmu_an_reason reason;
	char why[160];
	double running;
	char (*names)[DPMU_NAME_MAX];
	size_t nnames, cap;
	struct dpmu_err *err;
	int rc;
};

static void skip_ws(struct expr *x)
{
	while (*x->p == ' ' || *x->p == '\t')
		x->p++;
}

static void not_available(struct expr *x, enum dpmu_an_reason reason, const char *fmt,
			  const char *a, const char *b)
{
	if (x->missing)
		return; /* keep the first reason */
	x->missing = true;
	x->reason = reason;
	/* A reason longer than the buffer is cut; the start names the event. */
	if (snprintf(x->why, sizeof x->why, fmt, a, b) >= (int)sizeof x->why)
		x->why[sizeof x->why - 1] = '\0';
}

static void syntax(struct expr *x, const char *what)
{
	if (x->rc)
		return;
	x->rc = dpmu_err_set(x->err, DPMU_EINVAL, "formula '%s': %s at offset %d", x->src, what,
			     (int)(x->p - x->src));
}

static double variable(struct expr *x, const char *name, bool *found)
{
	static const char *const vars[] = {"time", "freq", "const_freq", "ref_freq", "line",
					   "bus_width"};
	*found = false;
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		*found = *found || strcmp(name, vars[i]) == 0;
	if (!*found || !x->u)
		return 1.0;
	double v = 0;
	const char *what = NULL;
	if (strcmp(name, "time") == 0) {
		v = (double)x->s->length_ns / 1e9;
		what = "the sample length";
	} else if (strcmp(name, "freq") == 0) {
		v = (double)x->u->freq_hz;
		what = "the unit's clock";
	} else if (strcmp(name, "const_freq") == 0) {
		v = (double)x->t->const_freq_hz;
		what = "the AMU constant clock";
	} else if (strcmp(name, "ref_freq") == 0) {
		v = (double)x->t->ref_freq_hz;
		what = "the reference clock";
	} else if (strcmp(name, "line") == 0) {
		v = (double)x->u->line_bytes;
		what = "the cache line size";
	} else if (strcmp(name, "bus_width") == 0) {
		v = (double)x->u->bus_bytes;
		what = "the bus width";
	}
	if (v == 0)
		not_available(x, DPMU_AN_UNKNOWN_VARIABLE, "%s is not known for %s", what,
			      x->u->name);
	return v;
}

static double event(struct expr *x, const char *name)
{
	if (!x->u) {
		for (size_t i = 0; i < x->nnames; i++)
			if (strcmp(x->names[i], name) == 0)
				return 1.0;
		if (x->nnames < x->cap)
			snprintf(x->names[x->nnames], DPMU_NAME_MAX, "%s", name);
		x->nnames++;
		return 1.0;
	}
	const struct dpmu_an_count *c = dpmu_an_count_find(x->u, name);
	if (!c && strncasecmp(name, "amu:", 4) == 0) {
		/* the monitor may spell an AMU count as amu/NAME/ */
		char alt[DPMU_NAME_MAX + 8];
		snprintf(alt, sizeof alt, "amu/%s/", name + 4);
		c = dpmu_an_count_find(x->u, alt);
	}
	if (!c) {
		not_available(x, DPMU_AN_NOT_COUNTED, "%s not counted on %s", name, x->u->name);
		return 0;
	}
	if (!c->supported) {
		not_available(x, DPMU_AN_NOT_SUPPORTED, "%s not supported on %s", name, x->u->name);
		return 0;
	}
	if (c->enabled_ns && c->running_ns == 0) {
		not_available(x, DPMU_AN_NEVER_ON_COUNTER,
			      "%s not counted on %s (never on a counter)", name, x->u->name);
		return 0;
	}
	double frac = c->enabled_ns ? (double)c->running_ns / (double)c->enabled_ns : 1.0;
	if (frac < x->running)
		x->running = frac;
	return dpmu_an_count_estimate(c);
}

static double parse_sum(struct expr *x);

static double parse_factor(struct expr *x)
{
	skip_ws(x);
	char ch = *x->p;
	if (ch == '(') {
		x->p++;
		double v = parse_sum(x);
		skip_ws(x);
		if (*x->p != ')') {
			syntax(x, "missing ')'");
			return 0;
		}
		x->p++;
		return v;
	}
	if (ch == '-') {
		x->p++;
		return -parse_factor(x);
	}
	if (isdigit((unsigned char)ch) || ch == '.') {
		char *end;
		double v = strtod(x->p, &end);
		x->p = end;
		return v;
	}
	if (isalpha((unsigned char)ch) || ch == '_') {
		char name[DPMU_NAME_MAX];
		size_t k = 0;
		while ((isalnum((unsigned char)*x->p) || *x->p == '_' || *x->p == ':') &&
		       k + 1 < sizeof name)
			name[k++] = *x->p++;
		name[k] = '\0';
		bool found;
		double v = variable(x, name, &found);
		return found ? v : event(x, name);
	}
	syntax(x, ch ? "unexpected character" : "unexpected end");
	return 0;
}

static double parse_product(struct expr *x)
{
	double v = parse_factor(x);
	for (;;) {
		skip_ws(x);
		char op = *x->p;
		if (op != '*' && op != '/')
			return v;
		x->p++;
		skip_ws(x);
		const char *from = x->p;
		double r = parse_factor(x);
		if (op == '*') {
			v *= r;
		} else if (r == 0) {
			if (x->u && !x->missing) {
				char span[DPMU_NAME_MAX];
				snprintf(span, sizeof span, "%.*s", (int)(x->p - from), from);
				not_available(x, DPMU_AN_ZERO_DENOMINATOR, "%s is 0 on %s", span,
					      x->u->name);
			}
			v = 0;
		} else {
			v /= r;
		}
	}
}

static double parse_sum(struct expr *x)
{
	double v = parse_product(x);
	for (;;) {
		skip_ws(x);
		char op = *x->p;
		if (op != '+' && op != '-')
			return v;
		x->p++;
		double r = parse_product(x);
		v = op == '+' ? v + r : v - r;
	}
}

static int run(struct expr *x, double *v)
{
	x->p = x->src;
	x->running = 1.0;
	*v = parse_sum(x);
	skip_ws(x);
	if (!x->rc && *x->p)
		syntax(x, "unexpected text");
	return x->rc;
}

size_t dpmu_an_metric_events(const struct dpmu_an_metric *m, bool alt,
			     char (*names)[DPMU_NAME_MAX], size_t cap)
{
	const char *f = alt ? m->alt : m->formula;
	if (!f)
		return 0;
	struct expr x = {.src = f, .names = names, .cap = cap};
	double v;
	if (run(&x, &v))
		return 0;
	return x.nnames;
}

static int eval_one(const char *f, const struct dpmu_an_table *t, const struct dpmu_an_sample *s,
		    const struct dpmu_an_unit *u, struct dpmu_an_value *out, struct dpmu_err *err)
{
	struct expr x = {.src = f, .t = t, .s = s, .u = u, .err = err};
	double v;
	int rc = run(&x, &v);
	if (rc)
		return rc;
	out->available = !x.missing && isfinite(v);
	out->value = out->available ? v : 0;
	out->running = x.running;
	out->reason = x.missing ? x.reason : out->available ? DPMU_AN_AVAILABLE : DPMU_AN_NOT_FINITE;
	snprintf(out->why, sizeof out->why, "%s", x.missing ? x.why : "");
	return 0;
}

/* The unit has no count of an event (none, or never on a counter). */
static bool lacks_event(enum dpmu_an_reason r)
{
	return r == DPMU_AN_NOT_COUNTED || r == DPMU_AN_NEVER_ON_COUNTER;
}

int dpmu_an_metric_eval(const struct dpmu_an_metric *m, const struct dpmu_an_table *t,
			const struct dpmu_an_sample *s, const struct dpmu_an_unit *u,
			struct dpmu_an_value *out, struct dpmu_err *err)
{
	memset(out, 0, sizeof *out);
	out->metric = m;
	int rc = eval_one(m->formula, t, s, u, out, err);
	if (rc || out->available || !m->alt)
		return rc;
	/* The alternative only when the first formula lacks an event: a zero
	 * denominator or an unknown clock in the first is an answer, not a
	 * reason to switch. */
	if (!lacks_event(out->reason) && out->reason != DPMU_AN_NOT_SUPPORTED)
		return 0;
	struct dpmu_an_value second;
	memset(&second, 0, sizeof second);
	second.metric = m;
	rc = eval_one(m->alt, t, s, u, &second, err);
	if (rc)
		return rc;
	/* The alternative's answer, unless it lacks an event too: then the
	 * first formula's reason, which names the usual event. */
	if (!lacks_event(second.reason))
		*out = second;
	return 0;
}

/* ---- formatting ------------------------------------------------------------ */

void dpmu_an_format_value(const struct dpmu_an_metric *m, double v, char *buf, size_t cap)
{
	const char *u = m->unit;
	if (strcmp(u, "%") == 0) {
		snprintf(buf, cap, "%.2f %%", v);
	} else if (strcmp(u, "B/s") == 0 || strcmp(u, "Hz") == 0 || strcmp(u, "1/s") == 0) {
		static const char *const pre[] = {"", "k", "M", "G", "T"};
		unsigned k = 0;
		double a = fabs(v);
		while (a >= 1000.0 && k + 1 < sizeof pre / sizeof pre[0]) {
			a /= 1000.0;
			v /= 1000.0;
			k++;
		}
		snprintf(buf, cap, "%.2f %s%s", v, pre[k], u);
	} else if (strcmp(u, "cycles") == 0) {
		snprintf(buf, cap, "%.0f %s", v, u);
	} else {
		snprintf(buf, cap, "%.2f %s", v, u);
	}
}
