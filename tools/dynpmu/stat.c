/*
 * dynpmu stat --trace FILE [-e EVENTS] [-A] [-x SEP] [--profile P]
 *
 * Replays a trace through the engine on the simulated cluster and prints
 * the counts read back through the driver, in perf stat's layout: the
 * table (right-aligned counts with thousands separators, a "# ..." ratio
 * after the events perf annotates, the elapsed time) or, with -x, perf's
 * CSV rows (value, unit, event, running time in ns, percentage running).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "commands.h"
#include "dynpmu/analysis.h"
#include "dynpmu/backend.h"
#include "dynpmu/monitor.h"
#include "dynpmu/qemu.h"

/* The "# ..." comments perf prints after an event: the ratio of this event
 * to another measured on the same PMU (reference section 6's metrics). */
struct stat_ratio {
	const char *event;
	const char *base;
	double scale;
	const char *fmt;
};

static const struct stat_ratio ratios[] = {
	{"INST_RETIRED", "CPU_CYCLES", 1.0, "%8.2f  insn per cycle"},
	{"BR_MIS_PRED_RETIRED", "BR_RETIRED", 100.0, "%7.2f%% of all branches"},
	{"BR_MIS_PRED", "BR_PRED", 100.0, "%7.2f%% of all predicted branches"},
	{"L1D_CACHE_REFILL", "L1D_CACHE", 100.0, "%7.2f%% of all L1D_CACHE accesses"},
	{"L1I_CACHE_REFILL", "L1I_CACHE", 100.0, "%7.2f%% of all L1I_CACHE accesses"},
	{"L2D_CACHE_REFILL", "L2D_CACHE", 100.0, "%7.2f%% of all L2D_CACHE accesses"},
	{"L3D_CACHE_REFILL", "L3D_CACHE", 100.0, "%7.2f%% of all L3D_CACHE accesses"},
	{"L3_MISS", "L3_ACCESS", 100.0, "%7.2f%% of all L3 accesses"},
};

struct stat_opts {
	const char *trace;
	const char *profile;
	char events[4096];
	bool have_events;
	bool per_unit;
	const char *sep;
	/* -- PROGRAM [ARGS...]: run it under qemu-aarch64 (src/backend/qemu.c) */
	char **prog_argv;
	const char *sysroot;
	const char *cpus;
	const char *place;
	const char *output;
	bool by_symbol;
	/* monitoring methods (docs/stat.md) */
	bool long_counters;        /* --long */
	uint64_t mux_ns;           /* --mux-interval MS */
	uint64_t interval_ns;      /* -I MS or --purpose */
	bool per_type, per_cluster;
	const char *metrics;       /* -M */
	bool json;
	const char *svg;
};

static void stat_usage(FILE *out)
{
	fprintf(out,
		"usage: dynpmu stat --trace FILE [-e EVENTS] [-A] [-x SEP] [--profile P]\n"
		"       dynpmu stat [-e EVENTS] [-A] [-x SEP] [--profile P] [--sysroot DIR]\n"
		"                   [--cpus LIST] [--place big|little|spread] [--by-symbol]\n"
		"                   [-o FILE] -- PROGRAM [ARGS...]\n\n"
		"Replay a trace of retired instructions (docs/trace-format.md) on the simulated\n"
		"cluster and print the counts read back through the driver, like perf stat.\n\n"
		"  --trace FILE     trace to replay (text or binary)\n"
		"  -e, --event L    comma-separated events: catalog names (case-insensitive),\n"
		"                   raw codes r1b / 0x1b, core/NAME/ or cluster/NAME/\n"
		"  -A, --no-aggr    one row per core (cpuN) and cluster (clusterN)\n"
		"  -x, --field-separator SEP   CSV: value,unit,event,running ns,percentage\n"
		"  --profile P      built-in profile or JSON file (default %s)\n"
		"  -- PROGRAM ARGS  run an aarch64 Linux program under qemu-aarch64 on the\n"
		"                   simulated cluster (docs/frontend.md); the report goes to\n"
		"                   stderr or -o FILE, the program's exit status is dynpmu's\n"
		"  --sysroot DIR    root of a dynamic program's loader and libraries (qemu -L)\n"
		"  --cpus LIST      cores guest threads may run on (0-3,6)\n"
		"  --place P        big, little or spread (default): which cores threads take\n"
		"  --by-symbol      counts per function\n"
		"  --long           64-bit counts: CHAIN pairs on 32-bit PMUs\n"
		"  --mux-interval MS  rotation period when events outnumber counters, in\n"
		"                   simulated ms (default 0.004: perf's 4 ms scaled to the replay)\n"
		"  -I MS            one row set per MS simulated ms (snapshots, PMSSRR reset)\n"
		"  --purpose P      power (200 ms), tuning (20 ms) or locks (2 ms) intervals\n"
		"  --per-type, --per-cluster   aggregate per core type / per cluster\n"
		"  -M, --metrics L  metrics to print (default: IPC, miss ratios, mispredicts)\n"
		"  --json           JSON lines (docs/output.md)\n"
		"  --svg FILE       chart of the interval metrics per core and cluster\n",
		DPMU_PROFILE_DEFAULT);
}

/* A time in (simulated) milliseconds, fractions allowed: "10", "0.004". */
static int parse_ms(const char *opt, const char *arg, uint64_t *ns)
{
	char *end;
	errno = 0;
	double ms = strtod(arg, &end);
	if (end == arg || *end || errno || !(ms > 0) || ms > 1e9) {
		fprintf(stderr, "dynpmu stat: %s '%s': give a positive time in milliseconds "
				"(fractions allowed, e.g. 10 or 0.05)\n", opt, arg);
		return -1;
	}
	double v = ms * 1e6;
	if (v < 1.0) {
		fprintf(stderr, "dynpmu stat: %s '%s': shorter than a nanosecond\n", opt, arg);
		return -1;
	}
	*ns = (uint64_t)(v + 0.5);
	return 0;
}

static int parse_opts(int argc, char **argv, struct stat_opts *o)
{
	static const struct option longopts[] = {
		{"trace", required_argument, NULL, 't'},
		{"event", required_argument, NULL, 'e'},
		{"no-aggr", no_argument, NULL, 'A'},
		{"field-separator", required_argument, NULL, 'x'},
		{"profile", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{"sysroot", required_argument, NULL, 's'},
		{"cpus", required_argument, NULL, 'C'},
		{"place", required_argument, NULL, 'P'},
		{"by-symbol", no_argument, NULL, 'S'},
		{"output", required_argument, NULL, 'o'},
		{"long", no_argument, NULL, 'L'},
		{"mux-interval", required_argument, NULL, 'm'},
		{"interval-print", required_argument, NULL, 'I'},
		{"purpose", required_argument, NULL, 'u'},
		{"per-type", no_argument, NULL, 'T'},
		{"per-cluster", no_argument, NULL, 'K'},
		{"metrics", required_argument, NULL, 'M'},
		{"json", no_argument, NULL, 'J'},
		{"svg", required_argument, NULL, 'G'},
		{NULL, 0, NULL, 0},
	};
	memset(o, 0, sizeof *o);
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+:e:Ax:ho:I:M:", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			o->trace = optarg;
			break;
		case 'e': {
			/* Several -e options add up, as in perf. */
			size_t used = strlen(o->events);
			if (used + strlen(optarg) + 2 > sizeof o->events) {
				fprintf(stderr, "dynpmu stat: event list too long\n");
				return DPMU_EXIT_USAGE;
			}
			snprintf(o->events + used, sizeof o->events - used, "%s%s", used ? "," : "",
				 optarg);
			o->have_events = true;
			break;
		}
		case 'A':
			o->per_unit = true;
			break;
		case 'x':
			o->sep = optarg;
			break;
		case 'p':
			o->profile = optarg;
			break;
		case 's':
			o->sysroot = optarg;
			break;
		case 'C':
			o->cpus = optarg;
			break;
		case 'P':
			o->place = optarg;
			break;
		case 'S':
			o->by_symbol = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'L':
			o->long_counters = true;
			break;
		case 'm':
			if (parse_ms("--mux-interval", optarg, &o->mux_ns))
				return DPMU_EXIT_USAGE;
			break;
		case 'I':
			if (parse_ms("-I", optarg, &o->interval_ns))
				return DPMU_EXIT_USAGE;
			break;
		case 'u':
			o->interval_ns = dpmu_mon_purpose_interval(optarg);
			if (!o->interval_ns) {
				fprintf(stderr, "dynpmu stat: unknown purpose '%s' (use power, tuning "
						"or locks)\n", optarg);
				return DPMU_EXIT_USAGE;
			}
			break;
		case 'T':
			o->per_type = true;
			break;
		case 'K':
			o->per_cluster = true;
			break;
		case 'M':
			o->metrics = optarg;
			break;
		case 'J':
			o->json = true;
			break;
		case 'G':
			o->svg = optarg;
			break;
		case 'h':
			stat_usage(stdout);
			return -1;
		case ':':
			fprintf(stderr, "dynpmu stat: option '%s' needs a value\n", argv[optind - 1]);
			return DPMU_EXIT_USAGE;
		default:
			fprintf(stderr, "dynpmu stat: unknown option '%s'\n", argv[optind - 1]);
			stat_usage(stderr);
			return DPMU_EXIT_USAGE;
		}
	}
	if (optind < argc && o->trace) {
		fprintf(stderr, "dynpmu stat: give either --trace FILE or -- PROGRAM, not both\n");
		return DPMU_EXIT_USAGE;
	}
	if (optind < argc) {
		o->prog_argv = argv + optind;
		return 0;
	}
	if (!o->trace) {
		fprintf(stderr, "dynpmu stat: no trace given (--trace FILE)\n");
		stat_usage(stderr);
		return DPMU_EXIT_USAGE;
	}
	return 0;
}

/* 1234567 -> "1,234,567" (perf's %'llu without depending on the locale). */
static const char *thousands(uint64_t v, char *buf, size_t cap)
{
	char digits[32];
	int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
	size_t k = 0;
	for (int i = 0; i < n && k + 2 < cap; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = digits[i];
	}
	buf[k] = '\0';
	return buf;
}

static void unit_name(enum dpmu_mon_target t, unsigned u, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s%u", t == DPMU_MON_CLUSTER ? "cluster" : "cpu", u);
}

/* The ratio comment for event i on a unit (or the totals when all). */
static bool ratio_comment(const struct dpmu_mon_session *s, unsigned i, bool all, unsigned u,
			  char *buf, size_t cap)
{
	const struct dpmu_mon_events *ev = dpmu_mon_session_events(s);
	for (size_t r = 0; r < sizeof ratios / sizeof ratios[0]; r++) {
		if (strcasecmp(ev->ev[i].name, ratios[r].event) != 0)
			continue;
		int b = dpmu_mon_events_find(ev, ratios[r].base);
		if (b < 0 || ev->ev[b].target != ev->ev[i].target)
			return false;
		struct dpmu_mon_count num, den;
		if (all) {
			dpmu_mon_count_total(s, i, &num);
			dpmu_mon_count_total(s, (unsigned)b, &den);
		} else if (dpmu_mon_count_on(s, i, u, &num) || dpmu_mon_count_on(s, (unsigned)b, u, &den)) {
			return false;
		}
		if (!num.supported || !den.supported || den.value == 0)
			return false;
		snprintf(buf, cap, ratios[r].fmt, ratios[r].scale * (double)num.value / (double)den.value);
		return true;
	}
	return false;
}

static void print_row(const struct stat_opts *o, const struct dpmu_mon_session *s, unsigned i,
		      const char *unit, const struct dpmu_mon_count *c, const char *comment)
{
	const char *name = dpmu_mon_session_events(s)->ev[i].name;
	if (o->sep) {
		if (unit)
			printf("%s%s", unit, o->sep);
		if (c->supported)
			printf("%llu", (unsigned long long)c->value);
		else
			printf("<not supported>");
		double pct = c->enabled_ns ? 100.0 * (double)c->running_ns / (double)c->enabled_ns
					   : (c->supported ? 100.0 : 0.0);
		printf("%s%s%s%s%llu%s%.2f\n", o->sep, o->sep, name, o->sep,
		       (unsigned long long)c->running_ns, o->sep, pct);
		return;
	}
	char num[40];
	const char *shown = c->supported ? thousands(c->value, num, sizeof num) : "<not supported>";
	if (unit)
		printf("%-10s", unit);
	if (comment)
		printf("%18s      %-32s # %s\n", shown, name, comment);
	else
		printf("%18s      %s\n", shown, name);
}

static void print_results(const struct stat_opts *o, const struct dpmu_mon_session *s,
			  const char *workload, uint64_t elapsed_ns)
{
	const struct dpmu_mon_events *ev = dpmu_mon_session_events(s);
	if (!o->sep)
		printf("\n Performance counter stats for '%s':\n\n", workload);
	for (unsigned i = 0; i < ev->n; i++) {
		char comment[96];
		struct dpmu_mon_count c;
		if (!o->per_unit) {
			dpmu_mon_count_total(s, i, &c);
			bool has = ratio_comment(s, i, true, 0, comment, sizeof comment);
			print_row(o, s, i, NULL, &c, has ? comment : NULL);
			continue;
		}
		enum dpmu_mon_target t = ev->ev[i].target;
		uint64_t units = t == DPMU_MON_CLUSTER ? dpmu_mon_session_clusters(s)
						       : dpmu_mon_session_cores(s);
		for (unsigned u = 0; u < 64; u++) {
			if (!(units >> u & 1))
				continue;
			char name[24];
			unit_name(t, u, name, sizeof name);
			dpmu_mon_count_on(s, i, u, &c);
			bool has = ratio_comment(s, i, false, u, comment, sizeof comment);
			print_row(o, s, i, name, &c, has ? comment : NULL);
		}
	}
	if (!o->sep)
		printf("\n%18.9f seconds time elapsed (simulated)\n\n", (double)elapsed_ns / 1e9);
}

/* -- PROGRAM: the qemu backend runs it; the report goes to stderr (or -o
 * FILE) because the program's stdout is its own, and dynpmu exits with the
 * program's status. */
static int stat_program(const struct stat_opts *o)
{
	struct dpmu_err err;
	dpmu_err_clear(&err);
	struct dpmu_qemu_options qo = {.profile = o->profile, .program = o->prog_argv[0],
				       .argv = o->prog_argv, .sysroot = o->sysroot,
				       .cpus = o->cpus, .by_symbol = o->by_symbol};
	if (o->place && dpmu_qemu_place_parse(o->place, &qo.place, &err)) {
		fprintf(stderr, "dynpmu stat: %s\n", dpmu_errmsg(&err));
		return DPMU_EXIT_USAGE;
	}
	FILE *out = stderr;
	if (o->output && !(out = fopen(o->output, "w"))) {
		fprintf(stderr, "dynpmu stat: -o %s: %s\n", o->output, strerror(errno));
		return DPMU_EXIT_USAGE;
	}
	struct dpmu_backend *b = NULL;
	int rc = dpmu_qemu_create(&qo, &b, &err);
	if (rc) {
		fprintf(stderr, "dynpmu stat: %s\n", dpmu_errmsg(&err));
		if (out != stderr)
			fclose(out);
		return DPMU_EXIT_FAIL;
	}
	static struct dpmu_mon_events ev;
	rc = o->have_events ? dpmu_mon_events_parse(o->events, b->profile, b->cores, &ev, &err)
			    : dpmu_mon_events_default(b->profile, b->cores, &ev, &err);
	struct dpmu_mon_session *s = NULL;
	if (!rc)
		rc = dpmu_mon_session_create(b->drv, b->profile, &ev, b->cores, &s, &err);
	static struct dpmu_qemu_report_event rev[DPMU_MON_MAX_EVENTS];
	unsigned nrev = 0;
	for (unsigned i = 0; !rc && i < ev.n && i < 64; i++) {
		rev[nrev].name = ev.ev[i].name;
		rev[nrev++].code = ev.ev[i].target == DPMU_MON_CLUSTER ? -1 : ev.ev[i].code[0];
	}
	if (!rc)
		rc = dpmu_qemu_set_region_events(b, rev, nrev, &err);
	if (rc) {
		fprintf(stderr, "dynpmu stat: %s\n", dpmu_errmsg(&err));
		dpmu_mon_session_destroy(s);
		dpmu_backend_destroy(b);
		if (out != stderr)
			fclose(out);
		return DPMU_EXIT_USAGE;
	}
	rc = dpmu_mon_run(s, b, &err);
	int status = DPMU_EXIT_FAIL;
	if (rc) {
		fprintf(stderr, "dynpmu stat: %s\n", dpmu_errmsg(&err));
	} else {
		/* print_results writes to stdout: point it at the report's file */
		fflush(stdout);
		int saved = dup(STDOUT_FILENO);
		fflush(out);
		dup2(fileno(out), STDOUT_FILENO);
		print_results(o, s, b->workload, b->ops->time_ns(b));
		fflush(stdout);
		dup2(saved, STDOUT_FILENO);
		close(saved);
		dpmu_qemu_report(b, rev, nrev, o->sep, out);
		fflush(out);
		status = dpmu_qemu_exit_code(b);
	}
	dpmu_mon_session_destroy(s);
	dpmu_backend_destroy(b);
	if (out != stderr)
		fclose(out);
	return status;
}

/* ---- --trace: the monitor's methods, reported by the analysis layer ----- */

/* The backend a trace runs on (the only place that builds one for --trace). */
static int stat_backend(const struct stat_opts *o, struct dpmu_backend **b, struct dpmu_err *err)
{
	struct dpmu_sim_options so = {.profile = o->profile, .trace = o->trace};
	return dpmu_sim_create(&so, b, err);
}

/* Metrics plain `stat` prints (perf's default comments, as metrics). */
static const char default_metrics[] =
	"ipc,l1d_cache_miss_ratio,l3_cache_miss_ratio,branch_misprediction_ratio,branch_mpki";

/* perf -M counts the metrics' events too: append those the list lacks
 * and the profile knows (either formula's, so both DSU numberings work). */
static void add_metric_events(const struct dpmu_an_metric *const *m, size_t nm,
			      const struct dpmu_backend *b, char *list, size_t cap)
{
	/* Two parsed lists are large (DPMU_MON_MAX_EVENTS each): keep them off
	 * the stack. On allocation failure no event is added; the metrics
	 * then report what is missing. */
	struct dpmu_mon_events *one = malloc(sizeof *one), *have = malloc(sizeof *have);
	if (!one || !have)
		goto out;
	for (size_t i = 0; i < nm; i++) {
		for (int alt = 0; alt < 2; alt++) {
			char names[16][DPMU_NAME_MAX];
			size_t n = dpmu_an_metric_events(m[i], alt, names, 16);
			for (size_t k = 0; k < n && k < 16; k++) {
				char item[DPMU_NAME_MAX + 8];
				bool amu = strncasecmp(names[k], "amu:", 4) == 0;
				int len = amu ? snprintf(item, sizeof item, "amu/%s/", names[k] + 4)
					      : snprintf(item, sizeof item, "%s", names[k]);
				if (len < 0 || (size_t)len >= sizeof item)
					continue; /* not a name any catalog has */
				struct dpmu_err e;
				if (dpmu_mon_events_parse(item, b->profile, b->cores, one, &e))
					continue;
				if (list[0] &&
				    dpmu_mon_events_parse(list, b->profile, b->cores, have, &e) == 0 &&
				    dpmu_mon_events_find(have, one->ev[0].name) >= 0)
					continue;
				size_t used = strlen(list);
				if (used + strlen(item) + 2 < cap)
					snprintf(list + used, cap - used, "%s%s", used ? "," : "", item);
			}
		}
	}
out:
	free(one);
	free(have);
}

struct stat_ctx {
	const struct stat_opts *o;
	const struct dpmu_profile *p;
	struct dpmu_an_table *t;
};

/* Add `c` into unit u's count of the same event (perf's aggregation:
 * values, enabled and running times add up). */
static int accumulate(struct dpmu_an_unit *u, const char *event, const struct dpmu_mon_count *c,
		      struct dpmu_err *err)
{
	for (size_t k = 0; k < u->ncounts; k++) {
		struct dpmu_an_count *have = &u->counts[k];
		if (strcasecmp(have->event, event) != 0)
			continue;
		have->supported = have->supported || c->supported;
		have->value += c->value;
		have->enabled_ns += c->enabled_ns;
		have->running_ns += c->running_ns;
		return 0;
	}
	return dpmu_an_count_add(u, event, c->supported, c->value, c->enabled_ns, c->running_ns,
				 err);
}

static int count_of(const struct dpmu_mon_session *s, bool interval, unsigned i, unsigned unit,
		    struct dpmu_mon_count *c)
{
	return interval ? dpmu_mon_interval_count(s, i, unit, c) : dpmu_mon_count_on(s, i, unit, c);
}

/* One sample: a unit per measured core (core PMU and AMU counts) and per
 * cluster, then the aggregation the options ask for. */
static int add_sample(struct stat_ctx *x, const struct dpmu_mon_session *s, bool interval,
		      uint64_t t0, uint64_t t1, struct dpmu_err *err)
{
	const struct dpmu_profile *p = x->p;
	const struct dpmu_mon_events *ev = dpmu_mon_session_events(s);
	struct dpmu_an_sample *smp;
	int rc = dpmu_an_sample_add(x->t, t0, t1 - t0, &smp, err);
	uint64_t cores = dpmu_mon_session_cores(s), clusters = dpmu_mon_session_clusters(s);
	for (unsigned core = 0; !rc && core < 64; core++) {
		if (!(cores >> core & 1))
			continue;
		unsigned cl, idx;
		const struct dpmu_core_type *ct = dpmu_profile_core(p, core, &cl, &idx);
		char name[DPMU_NAME_MAX];
		snprintf(name, sizeof name, "cpu%u", core);
		struct dpmu_an_unit *u;
		rc = dpmu_an_unit_add(smp, DPMU_AN_CPU, core, name, ct ? ct->freq_hz : 0, &u, err);
		if (rc)
			break;
		u->little = ct && dpmu_an_is_little(p, (unsigned)(ct - p->core_types));
		u->line_bytes = ct ? ct->l1d.line : 0;
		u->bus_bytes = p->bus_width;
		for (unsigned i = 0; !rc && i < ev->n; i++) {
			struct dpmu_mon_count c;
			if (ev->ev[i].target == DPMU_MON_CLUSTER ||
			    dpmu_an_count_find(u, ev->ev[i].name) || count_of(s, interval, i, core, &c))
				continue;
			rc = dpmu_an_count_add(u, ev->ev[i].name, c.supported, c.value, c.enabled_ns,
					       c.running_ns, err);
		}
	}
	for (unsigned cl = 0; !rc && cl < 64 && cl < p->nclusters; cl++) {
		if (!(clusters >> cl & 1))
			continue;
		char name[DPMU_NAME_MAX];
		snprintf(name, sizeof name, "cluster%u", cl);
		struct dpmu_an_unit *u;
		rc = dpmu_an_unit_add(smp, DPMU_AN_CLUSTER, cl, name, p->clusters[cl].freq_hz, &u, err);
		if (rc)
			break;
		u->little = p->clusters[cl].ncores > 0;
		for (unsigned k = 0; k < p->clusters[cl].ncores; k++)
			u->little = u->little && dpmu_an_is_little(p, p->clusters[cl].core_type[k]);
		u->line_bytes = p->clusters[cl].l3.line;
		u->bus_bytes = p->bus_width;
		for (unsigned i = 0; !rc && i < ev->n; i++) {
			struct dpmu_mon_count c;
			if (ev->ev[i].target != DPMU_MON_CLUSTER ||
			    dpmu_an_count_find(u, ev->ev[i].name) || count_of(s, interval, i, cl, &c))
				continue;
			rc = dpmu_an_count_add(u, ev->ev[i].name, c.supported, c.value, c.enabled_ns,
					       c.running_ns, err);
		}
	}
	if (rc)
		return rc;
	const struct stat_opts *o = x->o;
	/* --per-cluster: each cluster's row adds its cores' counts. */
	if (o->per_cluster) {
		for (size_t ui = 0; ui < smp->nunits; ui++) {
			if (smp->units[ui].kind != DPMU_AN_CLUSTER)
				continue;
			for (size_t ci = 0; ci < smp->nunits; ci++) {
				const struct dpmu_an_unit *cu = &smp->units[ci];
				unsigned cl = 0, idx;
				if (cu->kind != DPMU_AN_CPU || !dpmu_profile_core(p, cu->index, &cl, &idx) ||
				    cl != smp->units[ui].index)
					continue;
				for (size_t k = 0; !rc && k < cu->ncounts; k++) {
					const struct dpmu_an_count *a = &cu->counts[k];
					struct dpmu_mon_count c = {a->supported, a->value, a->enabled_ns,
								   a->running_ns};
					rc = accumulate(&smp->units[ui], a->event, &c, err);
				}
			}
		}
	} else if (!o->per_unit) {
		rc = dpmu_an_sample_aggregate(smp, p, o->per_type, !o->per_type, err);
	}
	if (rc)
		return rc;
	/* Keep the rows of the aggregation asked for. */
	size_t kept = 0;
	for (size_t ui = 0; ui < smp->nunits; ui++) {
		enum dpmu_an_unit_kind k = smp->units[ui].kind;
		bool keep = o->per_unit      ? (k == DPMU_AN_CPU || k == DPMU_AN_CLUSTER)
			    : o->per_cluster ? k == DPMU_AN_CLUSTER
			    : o->per_type    ? (k == DPMU_AN_CORE_TYPE || k == DPMU_AN_CLUSTER)
					     : k == DPMU_AN_SYSTEM;
		if (keep)
			smp->units[kept++] = smp->units[ui];
		else
			free(smp->units[ui].counts);
	}
	smp->nunits = kept;
	return 0;
}

static int on_interval(void *ctx, const struct dpmu_mon_session *s, uint64_t t0, uint64_t t1,
		       struct dpmu_err *err)
{
	return add_sample(ctx, s, true, t0, t1, err);
}

static int stat_trace(const struct stat_opts *o)
{
	struct dpmu_err err;
	dpmu_err_clear(&err);
	struct dpmu_backend *b = NULL;
	int rc = stat_backend(o, &b, &err);
	if (rc) {
		fprintf(stderr, "dynpmu stat: %s\n", dpmu_errmsg(&err));
		return DPMU_EXIT_FAIL;
	}
	const struct dpmu_an_metric *metrics[32];
	size_t nmetrics = 0;
	const char *mlist = o->metrics ? o->metrics : o->have_events ? NULL : default_metrics;
	if (mlist)
		rc = dpmu_an_metrics_parse(mlist, metrics, 32, &nmetrics, &err);
	static char list[8192];
	static struct dpmu_mon_events ev;
	if (!rc) {
		snprintf(list, sizeof list, "%s", o->have_events ? o->events : "");
		if (o->metrics)
			add_metric_events(metrics, nmetrics, b, list, sizeof list);
		rc = list[0] ? dpmu_mon_events_parse(list, b->profile, b->cores, &ev, &err)
			     : dpmu_mon_events_default(b->profile, b->cores, &ev, &err);
	}
	struct dpmu_an_table t;
	dpmu_an_table_init(&t);
	snprintf(t.workload, sizeof t.workload, "%s", b->workload);
	t.intervals = o->interval_ns != 0;
	t.const_freq_hz = b->profile->const_freq_hz;
	struct stat_ctx x = {o, b->profile, &t};
	struct dpmu_mon_options mo = {.long_counters = o->long_counters, .mux_ns = o->mux_ns,
				      .interval_ns = o->interval_ns,
				      .on_interval = o->interval_ns ? on_interval : NULL, .ctx = &x};
	struct dpmu_mon_session *s = NULL;
	if (!rc)
		rc = dpmu_mon_session_create_opts(b->drv, b->profile, &ev, b->cores, &mo, &s, &err);
	if (rc) {
		/* A bad event list is bad input (exit 2), like an unknown option. */
		fprintf(stderr, "dynpmu stat: %s\n", dpmu_errmsg(&err));
		dpmu_an_table_free(&t);
		dpmu_backend_destroy(b);
		return DPMU_EXIT_USAGE;
	}
	rc = dpmu_mon_run(s, b, &err);
	if (!rc && !o->interval_ns)
		rc = add_sample(&x, s, false, 0, b->ops->time_ns(b), &err);
	struct dpmu_an_report rep = {.metrics = metrics, .nmetrics = nmetrics,
				     .advice = nmetrics > 0, .sep = o->sep};
	if (!rc) {
		if (o->json)
			rc = dpmu_an_write_json(stdout, &t, &rep, &err);
		else if (o->sep)
			rc = dpmu_an_write_csv(stdout, &t, &rep, &err);
		else
			rc = dpmu_an_write_text(stdout, &t, &rep, &err);
	}
	if (!rc && o->svg) {
		FILE *f = fopen(o->svg, "w");
		if (!f) {
			rc = dpmu_err_set(&err, DPMU_EIO, "--svg %s: %s", o->svg, strerror(errno));
		} else {
			rc = dpmu_an_write_svg(f, &t, &rep, &err);
			if (fclose(f) && !rc)
				rc = dpmu_err_set(&err, DPMU_EIO, "--svg %s: write failed", o->svg);
		}
	}
	if (rc)
		fprintf(stderr, "dynpmu stat: %s\n", dpmu_errmsg(&err));
	fflush(stdout);
	dpmu_mon_session_destroy(s);
	dpmu_an_table_free(&t);
	dpmu_backend_destroy(b);
	if (rc)
		return DPMU_EXIT_FAIL;
	return ferror(stdout) ? DPMU_EXIT_FAIL : DPMU_EXIT_OK;
}

int dpmu_cmd_stat(int argc, char **argv)
{
	struct stat_opts o;
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc < 0 ? DPMU_EXIT_OK : rc;
	if (o.prog_argv)
		return stat_program(&o);

	return stat_trace(&o);
}
