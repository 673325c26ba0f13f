/*
 * dynpmu stat --trace FILE | -- PROGRAM [ARGS...]
 *
 * One path from the options to the report for both kinds of workload:
 * the backend is built (a trace replayed on the simulation backend, or a
 * real aarch64 program under qemu-aarch64 with dynpmu's plugin), then the
 * same monitor session (rotation, --long CHAIN pairs, -I snapshots with
 * PMSSRR reset in simulated time, the overflow interrupt), the same
 * analysis table (per cpu / cluster / core type / system) and the same
 * writers (perf-like text, -x CSV, --json, --svg, metrics and advice).
 * A program's own stdin, stdout and stderr pass through and its exit
 * status is dynpmu's, so its report goes to stderr or -o FILE; a program
 * also gets its region (DPMU_REGION_BEGIN/END) and --by-symbol tables.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "stat.h"

static void stat_usage(FILE *out)
{
	fprintf(out,
		"usage: dynpmu stat [OPTIONS] --trace FILE\n"
		"       dynpmu stat [OPTIONS] [--sysroot DIR] [--cpus LIST] [--place P]\n"
		"                   [--by-symbol] [--per-thread] -- PROGRAM [ARGS...]\n"
		"       dynpmu stat --backend perf [OPTIONS] [-a] [-p PID] [-- PROGRAM [ARGS...]]\n\n"
		"Count events of a workload on the simulated cluster, read back through the\n"
		"driver, like perf stat: a trace of retired instructions (docs/trace-format.md)\n"
		"or a real aarch64 program run under qemu-aarch64 (docs/frontend.md). Every\n"
		"option below works for both but --sysroot, --cpus, --place, --by-symbol,\n"
		"--per-thread and -v, which are a program's; -o FILE takes the report.\n\n"
		"  --backend B      sim (default): the simulated cluster; perf: this machine's\n"
		"                   PMUs through Linux perf_event (docs/hardware.md)\n"
		"  -p, --pid PID    perf: count a running process (its threads) until it ends\n"
		"                   or SIGINT\n"
		"  -a, --all-cpus   perf: every cpu, every task (per-cpu events; -A, --per-cluster)\n"
		"  --trace FILE     trace to replay (text or binary)\n"
		"  -e, --event L    comma-separated events: catalog names (case-insensitive),\n"
		"                   raw codes r1b / 0x1b, core/NAME/ or cluster/NAME/; with\n"
		"                   perf also software events: task-clock, page-faults, sw/NAME/\n"
		"  -A, --no-aggr    one row per core (cpuN) and cluster (clusterN)\n"
		"  -x, --field-separator SEP   CSV: value,unit,event,running ns,percentage\n"
		"  --profile P      built-in profile or JSON file (default %s)\n"
		"  -o, --output FILE  write the report to FILE\n"
		"  -- PROGRAM ARGS  run an aarch64 Linux program under qemu-aarch64 on the\n"
		"                   simulated cluster (docs/frontend.md); the report goes to\n"
		"                   stderr or -o FILE, the program's exit status is dynpmu's\n"
		"  --sysroot DIR    root of a dynamic program's loader and libraries (qemu -L)\n"
		"  --cpus LIST      cores guest threads may run on (0-3,6)\n"
		"  --place P        big, little or spread (default): which cores threads take\n"
		"  --by-symbol      counts per function\n"
		"  --per-thread     every event per thread (qemu's vCPUs) as well\n"
		"  -v, --verbose    after a program's run, how its threads were interleaved:\n"
		"                   turns, threads set aside without words, host time idle\n"
		"  --long           64-bit counts: CHAIN pairs on 32-bit PMUs\n"
		"  --mux-interval MS  rotation period when events outnumber counters, in\n"
		"                   simulated ms (default 0.004: perf's 4 ms scaled to the replay)\n"
		"  -I MS            one row set per MS simulated ms (snapshots, PMSSRR reset)\n"
		"  --purpose P      power (200 ms), tuning (20 ms) or locks (2 ms) intervals\n"
		"  --per-type, --per-cluster   aggregate per core type / per cluster\n"
		"  -M, --metrics L  metrics to print (default: IPC, miss ratios, mispredicts)\n"
		"  --json           JSON lines (docs/output.md)\n"
		"  --svg FILE       chart of the interval metrics per core and cluster\n"
		"  --listen HOST:PORT  serve the running counts at http://HOST:PORT/metrics\n"
		"                   for Prometheus, updated each -I interval (docs/openmetrics.md)\n"
		"  --linger S       with --listen: after the run, keep serving the final values\n"
		"                   S seconds (or until SIGINT/SIGTERM)\n",
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

/* --backend perf: what the kernel counts, and what only the simulation has. */
static int perf_opts(int argc, char **argv, struct dpmu_stat_opts *o)
{
	if (optind < argc)
		o->prog_argv = argv + optind;
	const struct {
		bool given;
		const char *name, *why;
	} sim_only[] = {
		{o->trace != NULL, "--trace", "replays a trace on the simulation (--backend sim)"},
		{o->profile != NULL, "--profile",
		 "is a simulated cluster; perf reads this machine's from sysfs"},
		{o->sysroot != NULL, "--sysroot", "is qemu-aarch64's (--backend sim)"},
		{o->cpus != NULL, "--cpus", "places a simulated program's threads; on Linux use taskset"},
		{o->place != NULL, "--place", "places a simulated program's threads; on Linux use taskset"},
		{o->by_symbol, "--by-symbol", "needs the simulation's exact attribution (--backend sim)"},
		{o->per_thread, "--per-thread", "is the simulation's (--backend sim)"},
		{o->verbose, "-v", "reports the simulation's scheduler (--backend sim)"},
		{o->mux_ns != 0, "--mux-interval",
		 "the kernel multiplexes: its period is the PMU's perf_event_mux_interval_ms in sysfs"},
	};
	for (size_t i = 0; i < sizeof sim_only / sizeof sim_only[0]; i++)
		if (sim_only[i].given) {
			fprintf(stderr, "dynpmu stat: %s: %s\n", sim_only[i].name, sim_only[i].why);
			return DPMU_EXIT_USAGE;
		}
	if (o->pid && (o->prog_argv || o->system_wide)) {
		fprintf(stderr, "dynpmu stat: -p PID counts one process: no program and no -a with "
				"it\n");
		return DPMU_EXIT_USAGE;
	}
	if (!o->pid && !o->system_wide && !o->prog_argv) {
		fprintf(stderr, "dynpmu stat: --backend perf: give -- PROGRAM, -p PID or -a\n");
		return DPMU_EXIT_USAGE;
	}
	/* A task is counted wherever it runs (one count per core type):
	 * per-cpu rows need per-cpu events. */
	if (!o->system_wide && (o->per_unit || o->per_cluster)) {
		fprintf(stderr, "dynpmu stat: %s: a task's counts are per core type, not per cpu "
				"(the kernel counts it wherever it runs): add -a for per-cpu counts\n",
			o->per_unit ? "-A" : "--per-cluster");
		return DPMU_EXIT_USAGE;
	}
	return 0;
}

static int parse_opts(int argc, char **argv, struct dpmu_stat_opts *o)
{
	static const struct option longopts[] = {
		{"trace", required_argument, NULL, 't'},
		{"event", required_argument, NULL, 'e'},
		{"no-aggr", no_argument, NULL, 'A'},
		{"field-separator", required_argument, NULL, 'x'},
		{"profile", required_argument, NULL, 'f'},
		{"backend", required_argument, NULL, 'B'},
		{"pid", required_argument, NULL, 'p'},
		{"all-cpus", no_argument, NULL, 'a'},
		{"help", no_argument, NULL, 'h'},
		{"sysroot", required_argument, NULL, 's'},
		{"cpus", required_argument, NULL, 'C'},
		{"place", required_argument, NULL, 'P'},
		{"by-symbol", no_argument, NULL, 'S'},
		{"per-thread", no_argument, NULL, 'H'},
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
		{"verbose", no_argument, NULL, 'v'},
		{"listen", required_argument, NULL, 'l'},
		{"linger", required_argument, NULL, 'W'},
		{NULL, 0, NULL, 0},
	};
	memset(o, 0, sizeof *o);
#ifdef DPMU_PERF_ONLY
	o->perf = true; /* the only backend in this build */
#endif
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+:e:Ax:ho:I:M:vp:a", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			o->trace = optarg;
			break;
		case 'e': {
			if (!*optarg) {
				fprintf(stderr, "dynpmu stat: -e '': no event given\n");
				return DPMU_EXIT_USAGE;
			}
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
			/* an empty separator would run every field together */
			if (!*optarg) {
				fprintf(stderr, "dynpmu stat: -x '': give a separator, e.g. -x ,\n");
				return DPMU_EXIT_USAGE;
			}
			o->sep = optarg;
			break;
		case 'f':
			o->profile = optarg;
			break;
		case 'B':
			if (strcmp(optarg, "perf") != 0 && strcmp(optarg, "sim") != 0) {
				fprintf(stderr, "dynpmu stat: --backend '%s': use sim or perf\n", optarg);
				return DPMU_EXIT_USAGE;
			}
			o->perf = strcmp(optarg, "perf") == 0;
			break;
		case 'p': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || v <= 0 || v > 0x3fffffff) {
				fprintf(stderr, "dynpmu stat: -p '%s': give a process id\n", optarg);
				return DPMU_EXIT_USAGE;
			}
			o->pid = (pid_t)v;
			break;
		}
		case 'a':
			o->system_wide = true;
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
		case 'H':
			o->per_thread = true;
			break;
		case 'v':
			o->verbose = true;
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
		case 'l':
			o->listen = optarg;
			break;
		case 'W':
			if (dpmu_tool_linger_parse("stat", optarg, &o->linger_s))
				return DPMU_EXIT_USAGE;
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
	if (o->linger_s > 0 && !o->listen) {
		fprintf(stderr, "dynpmu stat: --linger: keeps --listen's endpoint up; give "
				"--listen HOST:PORT too\n");
		return DPMU_EXIT_USAGE;
	}
	if (o->perf)
		return perf_opts(argc, argv, o);
	if (o->pid || o->system_wide) {
		fprintf(stderr, "dynpmu stat: %s: counts on this machine's PMUs: give --backend perf\n",
			o->pid ? "-p" : "-a");
		return DPMU_EXIT_USAGE;
	}
	if (optind < argc && o->trace) {
		fprintf(stderr, "dynpmu stat: give either --trace FILE or -- PROGRAM, not both\n");
		return DPMU_EXIT_USAGE;
	}
	if (optind < argc) {
		o->prog_argv = argv + optind;
		return 0;
	}
	/* The options only a program has: with a trace they would be ignored. */
	const struct {
		bool given;
		const char *name, *why;
	} program_only[] = {
		{o->sysroot != NULL, "--sysroot", "is for a program (-- PROGRAM), not a trace"},
		{o->cpus != NULL, "--cpus", "is for a program (-- PROGRAM): a trace names its cores"},
		{o->place != NULL, "--place", "is for a program (-- PROGRAM): a trace names its cores"},
		{o->by_symbol, "--by-symbol", "is for a program (-- PROGRAM), not a trace"},
		{o->per_thread, "--per-thread",
		 "a trace has cores, not threads (use -A); threads are a program's (-- PROGRAM)"},
		{o->verbose, "-v", "is for a program (-- PROGRAM), not a trace"},
	};
	for (size_t i = 0; o->trace && i < sizeof program_only / sizeof program_only[0]; i++)
		if (program_only[i].given) {
			fprintf(stderr, "dynpmu stat: %s: %s\n", program_only[i].name, program_only[i].why);
			return DPMU_EXIT_USAGE;
		}
	if (!o->trace) {
		fprintf(stderr, optind > 1 && !strcmp(argv[optind - 1], "--")
					? "dynpmu stat: no program after --\n"
					: "dynpmu stat: no trace given (--trace FILE)\n");
		stat_usage(stderr);
		return DPMU_EXIT_USAGE;
	}
	return 0;
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
	const struct dpmu_stat_opts *o;
	const struct dpmu_profile *p;
	struct dpmu_an_table *t;
	const struct dpmu_an_metric *const *metrics;
	size_t nmetrics;
	/* --listen: the cpu and cluster counts of the run so far, and of the
	 * latest interval (its metrics), kept apart from t, whose rows are
	 * the aggregation the report asks for */
	struct dpmu_an_table totals, last;
	uint64_t intervals;
};

/* --listen: publish the run so far (docs/openmetrics.md). The snapshot is
 * built here, on the measuring thread, and handed over by a pointer swap;
 * rendering and writing it to clients is the server's threads' work. */
static int publish(struct stat_ctx *x, const struct dpmu_an_sample *raw, uint64_t sim_ns,
		   bool finished, struct dpmu_err *err)
{
	int rc = 0;
	if (raw)
		rc = dpmu_om_totals_add(&x->totals, raw, err);
	/* A zero-length interval (a core's last batch delivered at the stop,
	 * docs/stat.md) has counts but no time: its metrics would all be
	 * undefined, so the gauges keep the interval before it. */
	if (!rc && raw && raw->length_ns) {
		dpmu_an_table_free(&x->last);
		dpmu_an_table_init(&x->last);
		rc = dpmu_om_totals_add(&x->last, raw, err);
		if (!rc) {
			/* the copy keeps the interval's own time, for rate metrics */
			x->last.samples[0].start_ns = raw->start_ns;
			x->last.samples[0].length_ns = raw->length_ns;
		}
	}
	struct dpmu_om_snapshot *snap = NULL;
	if (!rc)
		rc = dpmu_om_snapshot_create(&snap, err);
	if (!rc) {
		struct dpmu_om_run run = {.sim_ns = sim_ns, .intervals = x->intervals,
					  .finished = finished};
		rc = dpmu_om_add_run(snap, x->t,
				     x->totals.nsamples ? &x->totals.samples[0] : NULL,
				     x->last.nsamples ? &x->last.samples[0] : NULL, x->p,
				     x->metrics, x->nmetrics, &run, err);
	}
	if (rc) {
		dpmu_om_snapshot_release(snap);
		return rc;
	}
	dpmu_om_publish(x->o->publish, snap);
	return 0;
}

/* One sample: a unit per measured core (core PMU and AMU counts) and per
 * cluster, then the aggregation the options ask for. */
static int add_sample(struct stat_ctx *x, const struct dpmu_mon_session *s, bool interval,
		      uint64_t t0, uint64_t t1, struct dpmu_err *err)
{
	const struct dpmu_profile *p = x->p;
	int rc = dpmu_an_table_from_session(x->t, s, p,
					    interval ? DPMU_AN_INTERVAL_COUNTS : DPMU_AN_RUN_COUNTS,
					    t0, t1 - t0, err);
	if (rc)
		return rc;
	struct dpmu_an_sample *smp = &x->t->samples[x->t->nsamples - 1];
	const struct dpmu_stat_opts *o = x->o;
	if (o->publish) {
		/* before the aggregation below: the endpoint has per-cpu series
		 * whatever rows the report shows */
		x->intervals += interval;
		rc = publish(x, smp, t1, !interval, err);
		if (rc)
			return rc;
	}
	/* --per-cluster fills the cluster rows, also beside -A's cpu rows */
	if (o->per_cluster || !o->per_unit) {
		unsigned what = o->per_cluster ? DPMU_AN_AGG_CLUSTER
				: o->per_type  ? DPMU_AN_AGG_CORE_TYPE
					       : DPMU_AN_AGG_SYSTEM;
		rc = dpmu_an_sample_aggregate(smp, p, what, err);
		if (rc)
			return rc;
	}
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

/* The backend: the only place the two kinds of workload differ. */
static int stat_backend(const struct dpmu_stat_opts *o, struct dpmu_stat_run *r,
			struct dpmu_err *err)
{
	if (o->perf) {
		struct dpmu_perf_options po = {.argv = o->prog_argv, .pid = o->pid,
					       .system_wide = o->system_wide};
		return dpmu_perf_backend_create(&po, &r->b, err);
	}
	if (!o->prog_argv) {
		struct dpmu_sim_options so = {.profile = o->profile, .trace = o->trace};
		return dpmu_sim_create(&so, &r->b, err);
	}
	struct dpmu_qemu_options qo = {.profile = o->profile, .program = o->prog_argv[0],
				       .argv = o->prog_argv, .sysroot = o->sysroot,
				       .cpus = o->cpus, .by_symbol = o->by_symbol,
				       .per_thread = o->per_thread};
	if (o->place && dpmu_qemu_place_parse(o->place, &qo.place, err)) {
		r->bad_input = true;
		return DPMU_EINVAL;
	}
	return dpmu_qemu_create(&qo, &r->b, err);
}

/* The hottest functions of a --by-symbol run, for the advice that names
 * them (docs/metrics.md: false sharing), ranked by the core cycles spent in
 * them (the backend keeps no per-function event counts). */
static void hot_symbols(struct dpmu_stat_run *r)
{
	struct dpmu_qemu_symbol v[DPMU_AN_MAX_SYMBOLS * 4];
	size_t n = dpmu_qemu_symbols(r->b, v, sizeof v / sizeof v[0]);
	struct dpmu_an_table *t = &r->t;
	t->nsymbols = 0;
	for (size_t i = 0; i < n && i < sizeof v / sizeof v[0]; i++) {
		if (!v[i].cycles || strcmp(v[i].name, "[unknown]") == 0)
			continue;
		/* start-up code is not a suspect: a twentieth of the hottest */
		if (t->nsymbols && v[i].cycles * 20 < t->symbols[0].count)
			break;
		if (t->nsymbols == DPMU_AN_MAX_SYMBOLS)
			break;
		struct dpmu_an_symbol *s = &t->symbols[t->nsymbols++];
		snprintf(s->name, sizeof s->name, "%.*s", (int)sizeof s->name - 1, v[i].name);
		s->count = v[i].cycles;
	}
}

int dpmu_stat_measure(const struct dpmu_stat_opts *o, struct dpmu_stat_run *r,
		      struct dpmu_err *err)
{
	memset(r, 0, sizeof *r);
	dpmu_an_table_init(&r->t);
	int rc = stat_backend(o, r, err);
	if (rc)
		return rc;
	struct dpmu_backend *b = r->b;
	r->ev = calloc(1, sizeof *r->ev);
	char *list = calloc(1, 8192);
	if (!r->ev || !list) {
		free(list);
		return dpmu_err_set(err, DPMU_ENOMEM, "stat: out of memory");
	}
	r->bad_input = true; /* until the session exists, a failure is the options' */
	/* without a core PMU (perf on a machine with software events only)
	 * no default metric could be computed */
	bool no_pmu = o->perf && !dpmu_perf_has_core_pmu(b);
	const char *mlist = o->metrics ? o->metrics : o->have_events || no_pmu ? NULL
								    : default_metrics;
	if (mlist)
		rc = dpmu_an_metrics_parse(mlist, r->metrics, DPMU_STAT_MAX_METRICS, &r->nmetrics, err);
	if (!rc) {
		snprintf(list, 8192, "%s", o->have_events ? o->events : "");
		if (o->perf && !o->have_events)
			dpmu_perf_default_events(b, list, 8192);
		if (o->metrics)
			add_metric_events(r->metrics, r->nmetrics, b, list, 8192);
		rc = list[0] ? dpmu_mon_events_parse(list, b->profile, b->cores, r->ev, err)
			     : dpmu_mon_events_default(b->profile, b->cores, r->ev, err);
	}
	free(list);
	struct dpmu_an_table *t = &r->t;
	snprintf(t->workload, sizeof t->workload, "%s", b->workload);
	t->intervals = o->interval_ns != 0;
	t->const_freq_hz = b->profile->const_freq_hz;
	struct stat_ctx x = {.o = o, .p = b->profile, .t = t, .metrics = r->metrics,
			     .nmetrics = r->nmetrics};
	dpmu_an_table_init(&x.totals);
	dpmu_an_table_init(&x.last);
	/* scrapers see the run has started before its first interval ends */
	if (!rc && o->publish)
		rc = publish(&x, NULL, 0, false, err);
	struct dpmu_mon_options mo = {.long_counters = o->long_counters, .mux_ns = o->mux_ns,
				      .interval_ns = o->interval_ns,
				      .on_interval = o->interval_ns ? on_interval : NULL, .ctx = &x};
	struct dpmu_mon_session *s = NULL;
	if (!rc)
		rc = dpmu_mon_session_for_backend(b, r->ev, &mo, &s, err);
	/* a simulated program's regions count the core-PMU events of the list */
	bool qemu = o->prog_argv && !o->perf;
	for (unsigned i = 0; !rc && qemu && i < r->ev->n; i++) {
		r->rev[r->nrev].name = r->ev->ev[i].name;
		r->rev[r->nrev++].code =
			r->ev->ev[i].target == DPMU_MON_CORE ? r->ev->ev[i].code[0] : -1;
	}
	if (!rc && qemu)
		rc = dpmu_qemu_set_region_events(b, r->rev, r->nrev, err);
	if (rc) {
		dpmu_mon_session_destroy(s);
		return rc;
	}
	r->bad_input = false;
	rc = dpmu_mon_run(s, b, err);
	if (!rc && !o->interval_ns)
		rc = add_sample(&x, s, false, 0, b->ops->time_ns(b), err);
	else if (!rc && o->publish)
		/* the intervals add up to the run: the last published totals
		 * are the final ones, now marked so */
		rc = publish(&x, NULL, b->ops->time_ns(b), true, err);
	dpmu_an_table_free(&x.totals);
	dpmu_an_table_free(&x.last);
	r->intervals = dpmu_mon_session_intervals(s);
	dpmu_mon_session_destroy(s);
	if (!rc && qemu && o->by_symbol)
		hot_symbols(r);
	return rc;
}

int dpmu_stat_report(const struct dpmu_stat_opts *o, const struct dpmu_stat_run *r, FILE *out,
		     FILE *svg, struct dpmu_err *err)
{
	struct dpmu_an_report rep = {.metrics = r->metrics, .nmetrics = r->nmetrics,
				     .advice = r->nmetrics > 0, .sep = o->sep};
	int rc;
	if (o->json)
		rc = dpmu_an_write_json(out, &r->t, &rep, err);
	else if (o->sep)
		rc = dpmu_an_write_csv(out, &r->t, &rep, err);
	else
		rc = dpmu_an_write_text(out, &r->t, &rep, err);
	if (!rc && o->prog_argv && !o->perf && !o->json)
		dpmu_qemu_report(r->b, r->rev, r->nrev, o->sep, out);
	if (!rc && svg) {
		rc = dpmu_an_write_svg(svg, &r->t, &rep, err);
		if (!rc && (fflush(svg) || ferror(svg)))
			rc = dpmu_err_set(err, DPMU_EIO, "--svg %s: write failed", o->svg);
	}
	if (!rc && (fflush(out) || ferror(out)))
		rc = dpmu_err_set(err, DPMU_EIO, "writing the report failed");
	return rc;
}

void dpmu_stat_run_free(struct dpmu_stat_run *r)
{
	dpmu_an_table_free(&r->t);
	dpmu_backend_destroy(r->b);
	r->b = NULL;
	free(r->ev);
	r->ev = NULL;
}

/* -v: what the qemu backend's scheduler did (docs/frontend.md "Threads and
 * interleaving"), on stderr whatever -o says: it is about the run, not the
 * counts. */
static void print_sched(const struct dpmu_backend *b)
{
	struct dpmu_qemu_sched_stats st;
	dpmu_qemu_sched_stats(b, &st);
	fprintf(stderr,
		"dynpmu stat: scheduler: %llu turns; set aside without words: %llu waiting "
		"(futex, sleep, poll), %llu in another system call (%llu found asleep), %llu "
		"outside one, %llu ended; futex waits woken: %llu after their waker's wake, %llu "
		"waited for it, %llu let go without one; threads started: %llu at their parent's "
		"clone, %llu let go without one; %llu sleeps (%.3f ms simulated); %llu pipe reads "
		"after their write; %.1f ms idle (nothing to run)\n",
		(unsigned long long)st.turns, (unsigned long long)st.aside_waiting,
		(unsigned long long)st.aside_syscall, (unsigned long long)st.aside_asleep,
		(unsigned long long)st.aside_running, (unsigned long long)st.aside_ended,
		(unsigned long long)st.sync_paired, (unsigned long long)st.sync_waited,
		(unsigned long long)st.sync_let_go, (unsigned long long)st.born,
		(unsigned long long)st.born_let_go, (unsigned long long)st.slept,
		(double)st.slept_ns / 1e6, (unsigned long long)st.pipe_paired,
		(double)st.idle_ns / 1e6);
}

/* The run a signal handler looks at: a handler can reach nothing else. */
static struct dpmu_stat_run *volatile stat_running;

/* SIGINT or SIGTERM while a program runs ends the program, not dynpmu, so
 * that its counts up to then are reported (with the signal that ended it)
 * as perf stat does. A terminal's Ctrl-C reaches the program too, in
 * dynpmu's process group; a signal sent to dynpmu alone (kill, a job
 * scheduler) is passed on. Before the program starts or after it ended,
 * dynpmu ends as it would without the handler; the handler is set with
 * SA_RESETHAND, so a second signal ends dynpmu at once (and qemu with it,
 * PR_SET_PDEATHSIG). */
static void stat_on_signal(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	struct dpmu_stat_run *r = stat_running;
	/* si_code <= 0: SI_USER, SI_QUEUE, SI_TKILL, sent by a process */
	if (r && r->b && dpmu_qemu_signal(r->b, si->si_code <= 0 ? sig : 0))
		return;
	raise(sig);
}

static void stat_signals(bool on)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	if (on) {
		sa.sa_sigaction = stat_on_signal;
		sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_RESETHAND;
	} else {
		sa.sa_handler = SIG_DFL;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int dpmu_cmd_stat(int argc, char **argv)
{
	struct dpmu_stat_opts o;
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc < 0 ? DPMU_EXIT_OK : rc;
	/* A program's stdout is its own: its report goes to stderr. */
	FILE *out = o.prog_argv ? stderr : stdout;
	/* Both files are opened before the run, so a path that cannot be
	 * written is told at once, not after a long run. */
	if (o.output && !(out = fopen(o.output, "w"))) {
		fprintf(stderr, "dynpmu stat: -o %s: %s\n", o.output, strerror(errno));
		return DPMU_EXIT_USAGE;
	}
	FILE *svg = NULL;
	if (o.svg && !(svg = fopen(o.svg, "w"))) {
		fprintf(stderr, "dynpmu stat: --svg %s: %s\n", o.svg, strerror(errno));
		if (out != stdout && out != stderr)
			fclose(out);
		return DPMU_EXIT_USAGE;
	}
	struct dpmu_om_server *srv = NULL;
	if (o.listen && (rc = dpmu_tool_listen_start("stat", o.listen, &o.publish, &srv)) != 0) {
		if (out != stdout && out != stderr)
			fclose(out);
		if (svg)
			fclose(svg);
		return rc;
	}
	struct dpmu_err err;
	dpmu_err_clear(&err);
	struct dpmu_stat_run r;
	/* zeroed before the handler can look at it (r.b NULL: no program yet) */
	memset(&r, 0, sizeof r);
	/* perf's backend takes SIGINT and SIGTERM itself while it counts */
	bool qemu = o.prog_argv && !o.perf;
	if (qemu) {
		stat_running = &r;
		stat_signals(true);
	}
	if (!o.perf)
		dpmu_tool_perf_hint("stat");
	rc = dpmu_stat_measure(&o, &r, &err);
	if (qemu) {
		stat_signals(false);
		stat_running = NULL;
	}
	/* what the kernel would not count: <not supported> rows, and why */
	if (o.perf && r.b) {
		const char *n = dpmu_perf_notes(r.b);
		for (const char *q = n; *q;) {
			const char *e = strchr(q, '\n');
			size_t len = e ? (size_t)(e - q) : strlen(q);
			fprintf(stderr, "dynpmu stat: %.*s\n", (int)len, q);
			q += len + (e != NULL);
		}
	}
	int status;
	if (rc) {
		fprintf(stderr, "dynpmu stat: %s\n", dpmu_errmsg(&err));
		status = r.bad_input ? DPMU_EXIT_USAGE : DPMU_EXIT_FAIL;
	} else if (dpmu_stat_report(&o, &r, out, svg, &err)) {
		fprintf(stderr, "dynpmu stat: %s\n", dpmu_errmsg(&err));
		status = DPMU_EXIT_FAIL;
	} else {
		status = o.perf && o.prog_argv ? dpmu_perf_exit_code(r.b)
			 : o.prog_argv         ? dpmu_qemu_exit_code(r.b)
					       : DPMU_EXIT_OK;
		if (o.verbose && qemu)
			print_sched(r.b);
	}
	dpmu_stat_run_free(&r);
	if (out != stdout && out != stderr && fclose(out) && status == DPMU_EXIT_OK)
		status = DPMU_EXIT_FAIL;
	if (svg && fclose(svg) && status == DPMU_EXIT_OK)
		status = DPMU_EXIT_FAIL;
	/* after the report is written and closed, so that a scraper comparing
	 * the two finds the file complete */
	if (srv && !rc && o.linger_s > 0)
		dpmu_tool_linger(o.linger_s);
	dpmu_om_server_stop(srv);
	dpmu_om_publisher_destroy(o.publish);
	return status;
}
