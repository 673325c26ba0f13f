/*
 * dynpmu record: where the time goes, as perf record samples it, into a
 * perf.data that Linux perf reads (docs/record.md).
 *
 * Sampling goes through the driver and the model like every count: the
 * monitor presets each event's counter to overflow after its period with
 * its overflow interrupt enabled (src/monitor/sample.c); the backend
 * retires the program one instruction at a time, so the interrupt comes
 * right after the instruction whose event overflowed the counter (no skid
 * unless --skid asks for some); the sample is where that core was: the
 * instruction, its thread and the calls it is in (the front end's shadow
 * call stack).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "commands.h"
#include "dynpmu/backend.h"
#include "dynpmu/monitor.h"
#include "dynpmu/perfdata.h"
#include "dynpmu/qemu.h"

#define MAX_THREADS 1024

struct record_opts {
	char events[4096];
	uint64_t period, freq;
	bool callgraph;
	const char *output, *profile, *cpus, *sysroot;
	unsigned skid;
	bool quiet;
	char **prog_argv;
};

struct record_ctx {
	struct dpmu_backend *b;
	struct dpmu_perf_writer *w;
	uint32_t pid;
	uint32_t tids[MAX_THREADS];
	unsigned ntids;
	uint64_t nsamples;
	bool callgraph;
	const char *comm;
};

static void record_usage(FILE *out)
{
	fprintf(out,
		"usage: dynpmu record [-e EVENTS] [-c PERIOD | -F FREQ] [-g] [-o FILE]\n"
		"                     [--profile P] [--cpus LIST] [--sysroot DIR] [--skid N]\n"
		"                     -- PROGRAM [ARGS...]\n\n"
		"Samples an aarch64 program on the simulated cluster on counter overflow, as\n"
		"perf record does, into a perf.data that perf report and perf script read.\n\n"
		"  -e, --event L    core-PMU events to sample on (default: cycles), perf's syntax\n"
		"  -c, --count N    a sample every N events\n"
		"  -F, --freq HZ    samples per second of simulated time, the period adapting\n"
		"                   (default %u)\n"
		"  -g               record each sample's call chain\n"
		"  -o, --output F   the file (default: perf.data)\n"
		"  --profile P      cluster profile (default %s)\n"
		"  --cpus LIST      cores the program's threads may run on\n"
		"  --sysroot DIR    where a dynamic program's loader and libraries are\n"
		"  --skid N         take the interrupt N instructions after the overflow, as\n"
		"                   silicon's skid would (default 0: the overflowing instruction)\n"
		"  -q, --quiet      no summary on stderr\n",
		DPMU_MON_SAMPLE_FREQ_DEFAULT, DPMU_PROFILE_DEFAULT);
}

static int parse_count(const char *opt, const char *arg, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (end == arg || *end || errno || v == 0 || v > max || arg[0] == '-') {
		fprintf(stderr, "dynpmu record: %s '%s': give a whole number from 1 to %llu\n", opt,
			arg, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{"event", required_argument, NULL, 'e'},
		{"count", required_argument, NULL, 'c'},
		{"freq", required_argument, NULL, 'F'},
		{"call-graph", no_argument, NULL, 'g'},
		{"output", required_argument, NULL, 'o'},
		{"profile", required_argument, NULL, 'p'},
		{"cpus", required_argument, NULL, 'C'},
		{"sysroot", required_argument, NULL, 's'},
		{"skid", required_argument, NULL, 'K'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	memset(o, 0, sizeof *o);
	o->output = "perf.data";
	optind = 1;
	opterr = 0;
	int c;
	uint64_t v;
	while ((c = getopt_long(argc, argv, "+:e:c:F:go:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e': {
			size_t used = strlen(o->events);
			if (!*optarg || used + strlen(optarg) + 2 > sizeof o->events) {
				fprintf(stderr, "dynpmu record: -e '%s': %s\n", optarg,
					*optarg ? "the event list is too long" : "no event given");
				return DPMU_EXIT_USAGE;
			}
			snprintf(o->events + used, sizeof o->events - used, "%s%s", used ? "," : "",
				 optarg);
			break;
		}
		case 'c':
			if (parse_count("-c", optarg, (UINT64_C(1) << 31) - 1, &o->period))
				return DPMU_EXIT_USAGE;
			break;
		case 'F':
			if (parse_count("-F", optarg, 1000000000u, &o->freq))
				return DPMU_EXIT_USAGE;
			break;
		case 'g':
			o->callgraph = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'p':
			o->profile = optarg;
			break;
		case 'C':
			o->cpus = optarg;
			break;
		case 's':
			o->sysroot = optarg;
			break;
		case 'K':
			if (parse_count("--skid", optarg, 1000000u, &v))
				return DPMU_EXIT_USAGE;
			o->skid = (unsigned)v;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			record_usage(stdout);
			return -1;
		case ':':
			fprintf(stderr, "dynpmu record: option '%s' needs a value\n", argv[optind - 1]);
			return DPMU_EXIT_USAGE;
		default:
			fprintf(stderr, "dynpmu record: unknown option '%s'\n", argv[optind - 1]);
			record_usage(stderr);
			return DPMU_EXIT_USAGE;
		}
	}
	if (o->period && o->freq) {
		fprintf(stderr, "dynpmu record: give -c (a period) or -F (a frequency), not both\n");
		return DPMU_EXIT_USAGE;
	}
	if (optind >= argc) {
		fprintf(stderr, "dynpmu record: no program: dynpmu record [options] -- PROGRAM "
				"[ARGS]\n");
		return DPMU_EXIT_USAGE;
	}
	o->prog_argv = argv + optind;
	return 0;
}

/* The perf attribute of an event: a generic name perf knows (as typed:
 * `given`) is perf's hardware event, which Linux's arm_pmuv3 driver maps
 * to the PMU event (armv8_pmuv3_perf_map); any other event is raw, its
 * event number the config and its name, lower case, in event_desc. */
static void perf_event_of(const struct dpmu_mon_event *e, const char *given, uint16_t code,
			  const struct record_opts *o, struct dpmu_perf_event *out)
{
	static const struct {
		const char *name;
		uint16_t code;
		uint64_t hw;
	} generic[] = {
		{"cycles", DPMU_EV_CPU_CYCLES, 0},      {"cpu-cycles", DPMU_EV_CPU_CYCLES, 0},
		{"instructions", 0x08, 1},              {"cache-references", 0x04, 2},
		{"cache-misses", 0x03, 3},              {"branch-instructions", 0x21, 4},
		{"branches", 0x21, 4},                  {"branch-misses", 0x22, 5},
		{"bus-cycles", 0x1d, 6},
	};
	memset(out, 0, sizeof *out);
	out->type = DPMU_PERF_TYPE_RAW;
	out->config = code;
	snprintf(out->name, sizeof out->name, "%s", e->name);
	for (char *p = out->name; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	for (size_t i = 0; given && i < sizeof generic / sizeof generic[0]; i++)
		if (generic[i].code == code && strcasecmp(generic[i].name, given) == 0) {
			out->type = DPMU_PERF_TYPE_HARDWARE;
			out->config = generic[i].hw;
			snprintf(out->name, sizeof out->name, "%s", generic[i].name);
		}
	out->freq = !o->period;
	out->period = o->period ? o->period : o->freq ? o->freq : DPMU_MON_SAMPLE_FREQ_DEFAULT;
	out->precise = o->skid ? 0 : 3;
}

/* The names as typed, in list order (braces and modifiers taken off):
 * each event's; NULL past them. */
static unsigned typed_names(const char *list, char names[][64], unsigned cap)
{
	unsigned n = 0;
	const char *p = list;
	while (*p && n < cap) {
		size_t len = strcspn(p, ",");
		char item[64];
		snprintf(item, sizeof item, "%.*s", (int)len, p);
		char *a = item + strspn(item, "{");
		a[strcspn(a, "}:")] = '\0';
		snprintf(names[n++], 64, "%s", a);
		p += len + (p[len] == ',');
	}
	return n;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int on_sample(void *ctx, const struct dpmu_mon_sample *smp, struct dpmu_err *err)
{
	struct record_ctx *x = ctx;
	struct dpmu_backend_where wh;
	int rc = x->b->ops->where(x->b, smp->cpu, &wh, err);
	if (rc)
		return rc;
	if (!x->pid)
		x->pid = wh.pid;
	/* a thread seen for the first time: its FORK and COMM */
	bool known = wh.tid == x->pid;
	for (unsigned i = 0; !known && i < x->ntids; i++)
		known = x->tids[i] == wh.tid;
	if (!known && x->ntids < MAX_THREADS) {
		x->tids[x->ntids++] = wh.tid;
		dpmu_perf_fork(x->w, x->pid, x->pid, wh.tid, x->pid, smp->time_ns);
		dpmu_perf_comm(x->w, x->pid, wh.tid, x->comm, false, smp->time_ns);
	}
	x->nsamples++;
	rc = dpmu_perf_sample(x->w, smp->event, wh.pc, wh.pid, wh.tid, smp->time_ns, smp->cpu,
			      smp->period, wh.call, x->callgraph ? wh.depth : 0);
	return rc ? dpmu_perf_error(x->w, err) : 0;
}

static int record(const struct record_opts *o, struct dpmu_err *err, bool *bad_input)
{
	*bad_input = true;
	struct dpmu_qemu_options qo = {.profile = o->profile, .program = o->prog_argv[0],
				       .argv = o->prog_argv, .sysroot = o->sysroot,
				       .cpus = o->cpus, .sample = true, .skid = o->skid};
	struct dpmu_backend *b = NULL;
	int rc = dpmu_qemu_create(&qo, &b, err);
	if (rc)
		return rc;
	struct dpmu_mon_events ev;
	rc = dpmu_mon_events_parse(o->events[0] ? o->events : "cycles", b->profile, b->cores, &ev,
				   err);
	struct dpmu_perf_desc d = {.ncpus = dpmu_profile_ncores(b->profile), .callchain = o->callgraph,
				   .hostname = "dynpmu", .osrelease = "simulated"};
	if (!rc && ev.n > sizeof d.ev / sizeof d.ev[0])
		rc = dpmu_err_set(err, DPMU_EINVAL, "%u events: record samples at most %zu", ev.n,
				  sizeof d.ev / sizeof d.ev[0]);
	char typed[16][64];
	unsigned ntyped = typed_names(o->events[0] ? o->events : "cycles", typed, 16);
	for (unsigned i = 0; !rc && i < ev.n; i++) {
		/* the code on the first measured core's type */
		unsigned cl, idx, core = (unsigned)__builtin_ctzll(b->cores);
		const struct dpmu_core_type *t = dpmu_profile_core(b->profile, core, &cl, &idx);
		int32_t code = t ? ev.ev[i].code[t - b->profile->core_types] : DPMU_MON_NO_CODE;
		perf_event_of(&ev.ev[i], ntyped == ev.n ? typed[i] : NULL, code < 0 ? 0 : (uint16_t)code,
			      o, &d.ev[i]);
	}
	d.nevents = ev.n;
	struct record_ctx x = {.b = b, .callgraph = o->callgraph, .comm = base_name(o->prog_argv[0])};
	struct dpmu_mon_options mo = {.sample_period = o->period, .sample_freq = o->freq,
				      .on_sample = on_sample, .sample_ctx = &x};
	struct dpmu_mon_session *s = NULL;
	if (!rc)
		rc = dpmu_mon_session_create_opts(b->drv, b->profile, &ev, b->cores, &mo, &s, err);
	/* the command line perf shows: this one */
	char *cmd[64] = {"dynpmu", "record"};
	unsigned nc = 2;
	for (char **a = o->prog_argv; *a && nc < 62; a++)
		cmd[nc++] = *a;
	cmd[nc] = NULL;
	d.cmdline = (const char *const *)cmd;
	if (!rc)
		rc = dpmu_perf_create(o->output, &d, &x.w, err);
	if (rc) {
		dpmu_mon_session_destroy(s);
		dpmu_backend_destroy(b);
		return rc;
	}
	*bad_input = false;
	rc = dpmu_mon_run(s, b, err);
	uint64_t end = b->ops->time_ns(b);
	dpmu_mon_session_destroy(s);
	if (!x.pid)
		x.pid = dpmu_qemu_pid(b);
	/* the process and what it mapped, before every sample (time 0) */
	dpmu_perf_comm(x.w, x.pid, x.pid, x.comm, true, 0);
	struct dpmu_qemu_mapping maps[DPMU_QEMU_MAX_MAPS];
	size_t nm = dpmu_qemu_mappings(b, maps, DPMU_QEMU_MAX_MAPS);
	for (size_t i = 0; i < nm && i < DPMU_QEMU_MAX_MAPS; i++)
		dpmu_perf_mmap2(x.w, x.pid, x.pid, maps[i].start, maps[i].len, maps[i].pgoff,
				maps[i].path, 0);
	for (unsigned i = 0; i < x.ntids; i++)
		dpmu_perf_exit(x.w, x.pid, x.pid, x.tids[i], x.pid, end);
	dpmu_perf_exit(x.w, x.pid, x.pid, x.pid, x.pid, end);
	struct dpmu_err werr;
	int wrc = dpmu_perf_close(x.w, &werr);
	if (!rc && wrc)
		rc = dpmu_err_set(err, wrc, "%s", dpmu_errmsg(&werr));
	if (!rc && !o->quiet)
		fprintf(stderr, "[ dynpmu record: %llu samples of %u event%s in %s (%.3f ms simulated) ]\n",
			(unsigned long long)x.nsamples, ev.n, ev.n == 1 ? "" : "s", o->output,
			(double)end / 1e6);
	int status = dpmu_qemu_wait_status(b);
	dpmu_backend_destroy(b);
	if (!rc)
		dpmu_tool_program_status("record", status);
	return rc;
}

int dpmu_cmd_record(int argc, char **argv)
{
	struct record_opts o;
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc < 0 ? DPMU_EXIT_OK : rc;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	bool bad_input;
	if (record(&o, &err, &bad_input)) {
		fprintf(stderr, "dynpmu record: %s\n", dpmu_errmsg(&err));
		return bad_input ? DPMU_EXIT_USAGE : DPMU_EXIT_FAIL;
	}
	return DPMU_EXIT_OK;
}
