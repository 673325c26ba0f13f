/*
 * dynpmu trace record [--trigger 'EVENT>N'] [--window INSNS] [--range R]
 *                     [-o DIR] -- PROGRAM [ARGS]
 *
 * Captures instruction trace of one core's trace unit (ETMv4), started by
 * a PMU event as seed 003 section 7.1 does it, into a trace directory
 * (docs/trace-unit.md). The trace unit is programmed through the driver,
 * as silicon's would be (dpmu_drv_etm_window_config):
 *
 *   TRCEXTINSELR  SEL0 = the trigger's PMU event, SEL1 = INST_RETIRED
 *   RS2 = SEL0 fired          counter 0 counts it, from N + 1 down to 0
 *   RS3 = counter 0 at zero   ViewInst's EVENT without a window
 *   RS4 AND NOT RS5           counter 0 at zero and counter 1 not:
 *                             ViewInst's EVENT with a window (pair 2)
 *   RS6 AND RS7               INST_RETIRED once counter 0 is at zero:
 *                             counter 1 counts it from INSNS down (pair 3)
 *   TRCACVR0/1, TRCVIIECTLR   the --range include range
 *   TRCVICTLR.EXLEVEL         EL0 only (the program), as perf's :u
 *   TRCCONFIGR.CID            the context ID: which thread runs
 *   TRCCONFIGR.CCI            --cycles, threshold TRCIDR3.CCITMIN
 *
 * While the window is open the PMU counters are read every --interval of
 * simulated time and each reading goes on the trace's time line: a
 * timestamp packet with the reading's time (seed 003 section 7.1, counter
 * association).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "dynpmu/analysis.h"
#include "dynpmu/backend.h"
#include "dynpmu/driver.h"
#include "dynpmu/etm.h"
#include "dynpmu/monitor.h"
#include "dynpmu/qemu.h"
#include "dynpmu/tracedir.h"

#define DEFAULT_BUFFER (1u << 20)
#define DEFAULT_INTERVAL_NS 1000u
#define COUNTER_MAX 0xFFFFu           /* TRCCNTVR is 16 bits */

struct rec_opts {
	const char *trigger, *range, *output, *profile, *sysroot, *events, *executed;
	uint64_t window, buffer, interval_ns;
	unsigned cpu;
	bool quiet, cycles;
	char **prog_argv;
};

struct rec_ctx {
	struct dpmu_backend *b;
	unsigned cpu;
	struct dpmu_tracedir *t;
	const struct dpmu_etm_sink *sink;
	uint64_t *snap_at;            /* the sink's byte count at each reading's timestamp */
	size_t snapcap;
	FILE *executed;
	int err;                      /* errno of a failed --executed write */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dynpmu trace record [--trigger 'EVENT>N'] [--window INSNS]\n"
		"                           [--range SYMBOL|START-END] [-o DIR] [--cpu N]\n"
		"                           [--cycles] [--buffer BYTES] [-e EVENTS] [-I NS]\n"
		"                           [--executed FILE]\n"
		"                           [--profile P] [--sysroot DIR] -- PROGRAM [ARGS...]\n\n"
		"Traces the program's instructions with one core's ETMv4 trace unit on the\n"
		"simulated cluster, into a trace directory that dynpmu trace show (through\n"
		"OpenCSD) decodes.\n\n"
		"  --trigger E>N    start tracing once the core-PMU event E has counted more\n"
		"                   than N (an ETM counter, decremented by E as an external\n"
		"                   input; N below %u)\n"
		"  --window INSNS   stop tracing INSNS instructions after the start (at most %u)\n"
		"  --range R        trace only in function R (the program's symbol table) or in\n"
		"                   [START, END) (hex addresses)\n"
		"  -o, --output DIR the trace directory (default: dynpmu.trace)\n"
		"  --cpu N          the core the program runs and is traced on (default 0)\n"
		"  --cycles         cycle counts in the trace (TRCCONFIGR.CCI): the core's cycles\n"
		"                   up to each branch\n"
		"  --buffer BYTES   the trace sink (circular; default %u)\n"
		"  -e EVENTS        PMU events read while tracing (default: cycles,instructions\n"
		"                   and the trigger's event)\n"
		"  -I, --interval NS  simulated ns between readings (default %u, or less: half\n"
		"                   the least time the window can take, so that it has two)\n"
		"  --executed FILE  also write every instruction the trace unit was given,\n"
		"                   'INDEX ADDRESS traced|-' per line (a check for decoders)\n"
		"  --profile P      cluster profile (default %s)\n"
		"  --sysroot DIR    where a dynamic program's loader and libraries are\n"
		"  -q, --quiet      no summary on stderr\n",
		COUNTER_MAX, COUNTER_MAX, DEFAULT_BUFFER, DEFAULT_INTERVAL_NS, DPMU_PROFILE_DEFAULT);
}

static int number(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 0);
	if (end == arg || *end || errno || v < min || v > max || arg[0] == '-') {
		fprintf(stderr, "dynpmu trace record: %s '%s': give a whole number from %llu to %llu\n",
			opt, arg, (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse(int argc, char **argv, struct rec_opts *o)
{
	static const struct option lo[] = {
		{ "trigger", required_argument, NULL, 't' }, { "window", required_argument, NULL, 'w' },
		{ "range", required_argument, NULL, 'r' },   { "output", required_argument, NULL, 'o' },
		{ "cpu", required_argument, NULL, 'C' },     { "buffer", required_argument, NULL, 'B' },
		{ "event", required_argument, NULL, 'e' },   { "interval", required_argument, NULL, 'I' },
		{ "executed", required_argument, NULL, 'X' }, { "profile", required_argument, NULL, 'p' },
		{ "sysroot", required_argument, NULL, 's' }, { "quiet", no_argument, NULL, 'q' },
		{ "cycles", no_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },          { NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof *o);
	o->output = "dynpmu.trace";
	o->buffer = DEFAULT_BUFFER;
	o->interval_ns = 0; /* the default: reading_interval */
	optind = 1;
	opterr = 0;
	int c;
	uint64_t v;
	while ((c = getopt_long(argc, argv, "+:o:e:I:qh", lo, NULL)) != -1) {
		switch (c) {
		case 't': o->trigger = optarg; break;
		case 'r': o->range = optarg; break;
		case 'o': o->output = optarg; break;
		case 'e': o->events = optarg; break;
		case 'X': o->executed = optarg; break;
		case 'p': o->profile = optarg; break;
		case 's': o->sysroot = optarg; break;
		case 'q': o->quiet = true; break;
		case 'Y': o->cycles = true; break;
		case 'w':
			if (number("--window", optarg, 1, COUNTER_MAX, &o->window))
				return DPMU_EXIT_USAGE;
			break;
		case 'C':
			if (number("--cpu", optarg, 0, 63, &v))
				return DPMU_EXIT_USAGE;
			o->cpu = (unsigned)v;
			break;
		case 'B':
			if (number("--buffer", optarg, 64, 1ull << 32, &o->buffer))
				return DPMU_EXIT_USAGE;
			break;
		case 'I':
			if (number("--interval", optarg, 100, 1000000000, &o->interval_ns))
				return DPMU_EXIT_USAGE;
			break;
		case 'h': usage(stdout); return -1;
		case ':':
			fprintf(stderr, "dynpmu trace record: option '%s' needs a value\n",
				argv[optind - 1]);
			return DPMU_EXIT_USAGE;
		default:
			fprintf(stderr, "dynpmu trace record: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return DPMU_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "dynpmu trace record: no program: dynpmu trace record [options] -- "
				"PROGRAM [ARGS]\n");
		return DPMU_EXIT_USAGE;
	}
	o->prog_argv = argv + optind;
	return 0;
}

/* 'EVENT>N': the event's name into name, N into *n. */
static int parse_trigger(const char *s, char *name, size_t cap, uint64_t *n, struct dpmu_err *err)
{
	const char *gt = strchr(s, '>');
	if (!gt || gt == s || (size_t)(gt - s) >= cap || !gt[1])
		return dpmu_err_set(err, DPMU_EINVAL,
				    "--trigger '%s': give EVENT>N, e.g. 'L1D_CACHE_REFILL>1000'", s);
	memcpy(name, s, (size_t)(gt - s));
	name[gt - s] = '\0';
	char *end;
	errno = 0;
	unsigned long long v = strtoull(gt + 1, &end, 0);
	if (*end || errno || gt[1] == '-' || v >= COUNTER_MAX)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "--trigger '%s': N must be a whole number below %u (the trace "
				    "unit's counters are 16 bits, TRCCNTVR)",
				    s, COUNTER_MAX);
	*n = v;
	return 0;
}

/* --range: a function of the program, or START-END. */
static int parse_range(const char *s, const char *program, struct dpmu_tracedir *t,
		       struct dpmu_err *err)
{
	char *end;
	unsigned long long a = strtoull(s, &end, 16);
	if (end != s && *end == '-') {
		char *e2;
		unsigned long long b = strtoull(end + 1, &e2, 16);
		if (*e2 || e2 == end + 1 || b <= a || (a & 3) || (b & 3))
			return dpmu_err_set(err, DPMU_EINVAL,
					    "--range '%s': give START-END, hex, 4-byte aligned, "
					    "START below END",
					    s);
		t->range_start = a;
		t->range_end = b;
	} else {
		uint64_t size;
		int rc = dpmu_an_elf_function(program, s, &t->range_start, &size, err);
		if (rc)
			return rc;
		t->range_end = t->range_start + size;
	}
	snprintf(t->range_name, sizeof t->range_name, "%s", s);
	return 0;
}

static void on_seen(void *ctx, unsigned core, uint64_t index, uint64_t pc, bool traced)
{
	(void)core;
	struct rec_ctx *x = ctx;
	if (fprintf(x->executed, "%" PRIu64 " 0x%" PRIx64 " %s\n", index, pc,
		    traced ? "traced" : "-") < 0 && !x->err)
		x->err = errno ? errno : EIO;
}

/* A reading of the counters while the window is open, on the trace's time
 * line. */
static int on_interval(void *ctx, const struct dpmu_mon_session *s, uint64_t t0, uint64_t t1,
		       struct dpmu_err *err)
{
	(void)t0;
	struct rec_ctx *x = ctx;
	struct dpmu_etm_status st;
	dpmu_qemu_trace_status(x->b, x->cpu, &st);
	if (!st.open)
		return 0;
	struct dpmu_tracedir *t = x->t;
	if (t->nsnap == x->snapcap) {
		/* readings the sink no longer holds the timestamps of are dropped
		 * as it wraps, so that a long run keeps what it needs; only when
		 * the array is full, and in bulk, so that a window open all run
		 * does not move every reading at every interval */
		size_t keep = 0;
		uint64_t oldest = x->sink->written - dpmu_etm_sink_fill(x->sink);
		while (keep < t->nsnap && x->snap_at[keep] < oldest)
			keep++;
		bool grow = keep < t->nsnap / 2 && x->snapcap < DPMU_TRACEDIR_MAX_SNAPSHOTS;
		if (keep && !grow) {
			memmove(t->snap, t->snap + keep, (t->nsnap - keep) * sizeof *t->snap);
			memmove(x->snap_at, x->snap_at + keep, (t->nsnap - keep) * sizeof *x->snap_at);
			t->nsnap -= keep;
		}
	}
	if (t->nsnap == x->snapcap) {
		size_t cap = x->snapcap ? 2 * x->snapcap : 64;
		if (cap > DPMU_TRACEDIR_MAX_SNAPSHOTS)
			return 0; /* enough readings: the rest of the window has none */
		struct dpmu_tracedir_snapshot *n = realloc(t->snap, cap * sizeof *n);
		if (n)
			t->snap = n;
		uint64_t *at = realloc(x->snap_at, cap * sizeof *at);
		if (at)
			x->snap_at = at;
		if (!n || !at)
			return dpmu_err_set(err, DPMU_ENOMEM, "out of memory for PMU readings");
		x->snapcap = cap;
	}
	uint64_t written_at = x->sink->written;
	if (!dpmu_qemu_trace_mark(x->b, x->cpu, t1))
		return 0; /* no timestamp written (TS off or not tracing): no reading */
	x->snap_at[t->nsnap] = written_at;
	struct dpmu_tracedir_snapshot *sn = &t->snap[t->nsnap++];
	memset(sn, 0, sizeof *sn);
	sn->time_ns = t1;
	const struct dpmu_mon_events *ev = dpmu_mon_session_events(s);
	for (unsigned i = 0; i < ev->n && sn->n < DPMU_TRACEDIR_MAX_COUNTS; i++) {
		struct dpmu_mon_count c;
		if (dpmu_mon_count_on(s, i, x->cpu, &c) || !c.supported)
			continue;
		snprintf(sn->name[sn->n], sizeof sn->name[0], "%.47s", ev->ev[i].name);
		sn->value[sn->n++] = dpmu_mon_scaled(&c);
	}
	return 0;
}

/* The readings' default interval: DEFAULT_INTERVAL_NS, or for a --window
 * shorter than that half the least time the window can take (its
 * instructions at the core's stall-free CPI and clock), so that a short
 * window holds at least two readings whatever the program's IPC; at least
 * --interval's least, 100 ns. */
static uint64_t reading_interval(const struct rec_opts *o, const struct dpmu_core_type *type)
{
	if (o->interval_ns)
		return o->interval_ns;
	if (!o->window || !type->freq_hz)
		return DEFAULT_INTERVAL_NS;
	uint64_t least_ns = o->window * type->pipeline.base_cpi_milli * 1000000ull / type->freq_hz;
	uint64_t half = least_ns / 2;
	return half < 100 ? 100 : half < DEFAULT_INTERVAL_NS ? half : DEFAULT_INTERVAL_NS;
}

static int record(const struct rec_opts *o, struct dpmu_err *err, bool *bad_input)
{
	*bad_input = true;
	struct dpmu_tracedir t;
	memset(&t, 0, sizeof t);
	t.cpu = o->cpu;
	t.window = o->window;
	bool trigger = o->trigger != NULL;
	if (trigger && parse_trigger(o->trigger, t.trigger_event, sizeof t.trigger_event,
				     &t.trigger_count, err))
		return DPMU_EINVAL;
	char resolved[4096];
	int rc = dpmu_qemu_check_program(o->prog_argv[0], o->sysroot, resolved, sizeof resolved, err);
	if (rc)
		return rc;
	if (o->range && (rc = parse_range(o->range, resolved, &t, err)))
		return rc;
	char cpus[16];
	snprintf(cpus, sizeof cpus, "%u", o->cpu);
	struct dpmu_qemu_options qo = { .profile = o->profile, .program = o->prog_argv[0],
					.argv = o->prog_argv, .sysroot = o->sysroot, .cpus = cpus };
	struct dpmu_backend *b = NULL;
	if ((rc = dpmu_qemu_create(&qo, &b, err)))
		return rc;
	unsigned cl, idx;
	const struct dpmu_core_type *type = dpmu_profile_core(b->profile, o->cpu, &cl, &idx);
	if (!type) {
		rc = dpmu_err_set(err, DPMU_EINVAL, "--cpu %u: the profile has cpu0-cpu%u", o->cpu,
				  dpmu_profile_ncores(b->profile) - 1);
		goto out;
	}
	snprintf(t.core_type, sizeof t.core_type, "%.47s", type->name);
	/* the readings' events, the trigger's among them */
	char list[1024];
	if ((size_t)snprintf(list, sizeof list, "%s%s%s", o->events ? o->events : "cycles,instructions",
			     trigger ? "," : "", trigger ? t.trigger_event : "") >= sizeof list) {
		rc = dpmu_err_set(err, DPMU_EINVAL, "-e: the event list is too long (%zu characters "
						    "at most)", sizeof list - 64);
		goto out;
	}
	struct dpmu_mon_events ev, tev;
	if ((rc = dpmu_mon_events_parse(list, b->profile, 1ull << o->cpu, &ev, err)))
		goto out;
	uint8_t code = 0;
	if (trigger) {
		/* the trigger's event on its own: its code, whatever -e holds */
		if ((rc = dpmu_mon_events_parse(t.trigger_event, b->profile, 1ull << o->cpu, &tev, err)))
			goto out;
		const struct dpmu_mon_event *te = &tev.ev[0];
		int32_t k = te->code[type - b->profile->core_types];
		if (te->target != DPMU_MON_CORE || k < 0 || k > 0xFF) {
			rc = dpmu_err_set(err, DPMU_EINVAL,
					  "--trigger '%s': %s is not a core-PMU event numbered below "
					  "0x100 on %s (the trace unit's external inputs, TRCEXTINSELR, "
					  "are the PMU's event numbers 0x00-0xFF)",
					  o->trigger, t.trigger_event, type->name);
			goto out;
		}
		code = (uint8_t)k;
	}
	struct dpmu_etm_sink sink;
	if ((rc = dpmu_etm_sink_init(&sink, (size_t)o->buffer, err)))
		goto out;
	struct rec_ctx x = { .b = b, .cpu = o->cpu, .t = &t, .sink = &sink };
	if (o->executed && !(x.executed = fopen(o->executed, "w"))) {
		rc = dpmu_err_set(err, DPMU_EIO, "--executed %s: %s", o->executed, strerror(errno));
		goto out_sink;
	}
	struct dpmu_drv_etm_config cfg;
	struct dpmu_drv_etm_window win = { .cpu = o->cpu, .trigger = trigger,
					   .trigger_event = code,
					   .trigger_count = (uint32_t)t.trigger_count,
					   .window = (uint32_t)o->window, .cycles = o->cycles };
	if (t.range_name[0]) {
		win.range_start = t.range_start;
		win.range_end = t.range_end;
	}
	dpmu_drv_etm_window_config(&win, &cfg);
	struct dpmu_mon_options mo = { .interval_ns = reading_interval(o, type), .on_interval = on_interval,
				       .ctx = &x };
	struct dpmu_mon_session *s = NULL;
	if ((rc = dpmu_mon_session_create_opts(b->drv, b->profile, &ev, 1ull << o->cpu, &mo, &s, err)))
		goto out_exec;
	/* from here a failure is the system's, not the input's */
	*bad_input = false;
	if ((rc = dpmu_qemu_trace_attach(b, o->cpu, &sink, err)) ||
	    (rc = dpmu_drv_etm_ids(b->drv, o->cpu, t.regs.idr, err)) ||
	    (rc = dpmu_drv_etm_start(b->drv, o->cpu, &cfg, err)))
		goto out_sess;
	if (x.executed)
		dpmu_qemu_trace_seen(b, o->cpu, on_seen, &x);
	t.regs.configr = cfg.configr;
	t.regs.traceidr = cfg.traceidr;
	rc = dpmu_mon_run(s, b, err);
	struct dpmu_err serr;
	if (dpmu_drv_etm_stop(b->drv, o->cpu, &serr) && !rc)
		rc = dpmu_err_set(err, DPMU_EIO, "%s", dpmu_errmsg(&serr));
	dpmu_qemu_trace_seen(b, o->cpu, NULL, NULL);
	struct dpmu_etm_status st;
	dpmu_qemu_trace_status(b, o->cpu, &st);
	t.given = st.seen;
	t.traced = st.traced;
	t.first = st.first;
	t.last = st.last;
	t.event_at = st.event_at;
	t.sink_size = sink.size;
	t.sink_written = sink.written;
	t.wrapped = sink.wrapped;
	t.trace_len = dpmu_etm_sink_fill(&sink);
	/* the readings whose timestamps the sink still holds */
	size_t keep = 0;
	while (keep < t.nsnap && x.snap_at[keep] < sink.written - t.trace_len)
		keep++;
	if (keep) {
		memmove(t.snap, t.snap + keep, (t.nsnap - keep) * sizeof *t.snap);
		t.nsnap -= keep;
	}
	t.trace = malloc(t.trace_len ? t.trace_len : 1);
	if (!t.trace && !rc)
		rc = dpmu_err_set(err, DPMU_ENOMEM, "out of memory copying the trace");
	if (t.trace)
		dpmu_etm_sink_copy(&sink, t.trace);
	t.program = resolved;
	struct dpmu_qemu_mapping maps[DPMU_TRACEDIR_MAX_MAPS];
	size_t nm = dpmu_qemu_mappings(b, maps, DPMU_TRACEDIR_MAX_MAPS);
	for (size_t i = 0; i < nm && i < DPMU_TRACEDIR_MAX_MAPS; i++)
		t.maps[t.nmaps++] = (struct dpmu_tracedir_map){ maps[i].start, maps[i].len,
								maps[i].pgoff, (char *)maps[i].path };
	if (!rc && x.err)
		rc = dpmu_err_set(err, DPMU_EIO, "--executed %s: %s", o->executed, strerror(x.err));
	if (!rc)
		rc = dpmu_tracedir_write(o->output, &t, err);
	if (!rc && !o->quiet) {
		char a[32], g[32], w[32];
		fprintf(stderr, "[ dynpmu trace record: cpu%u: %s of %s instructions traced, %s bytes "
				"of trace in %s ]\n",
			o->cpu, dpmu_an_thousands(t.traced, a, sizeof a),
			dpmu_an_thousands(t.given, g, sizeof g),
			dpmu_an_thousands(t.trace_len, w, sizeof w), o->output);
		if (trigger && t.event_at == DPMU_TRACEDIR_NONE)
			fprintf(stderr, "dynpmu trace record: the trigger never fired: %s counted %s "
					"or fewer\n",
				t.trigger_event, dpmu_an_thousands(t.trigger_count, a, sizeof a));
		if (t.wrapped)
			fprintf(stderr, "dynpmu trace record: the trace sink wrapped: the oldest %s "
					"bytes were overwritten (give a larger --buffer or a smaller "
					"--window)\n",
				dpmu_an_thousands(t.sink_written - t.trace_len, a, sizeof a));
	}
	t.program = NULL;
	t.nmaps = 0;
out_sess:
	dpmu_mon_session_destroy(s);
out_exec:
	free(x.snap_at);
	if (x.executed && fclose(x.executed) && !rc)
		rc = dpmu_err_set(err, DPMU_EIO, "--executed %s: %s", o->executed, strerror(errno));
out_sink:
	dpmu_qemu_trace_attach(b, o->cpu, NULL, NULL);
	dpmu_etm_sink_free(&sink);
out:
	if (b && !*bad_input) {
		int status = dpmu_qemu_wait_status(b);
		if (!rc)
			dpmu_tool_program_status("trace record", status);
	}
	dpmu_backend_destroy(b);
	dpmu_tracedir_free(&t);
	return rc;
}

int dpmu_cmd_trace_record(int argc, char **argv)
{
	struct rec_opts o;
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? DPMU_EXIT_OK : rc;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	bool bad_input;
	if (record(&o, &err, &bad_input)) {
		fprintf(stderr, "dynpmu trace record: %s\n", dpmu_errmsg(&err));
		return bad_input ? DPMU_EXIT_USAGE : DPMU_EXIT_FAIL;
	}
	return DPMU_EXIT_OK;
}
