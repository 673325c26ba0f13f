/*
 * dynpmu monitor [OPTIONS] -- PROGRAM [ARGS]
 *
 * Seed 003's automated framework (sections 5.3 and 7.2, and its closing
 * paragraph): the Activity Monitors count all the time, and each interval
 * of simulated time gives every core's CPI (AMU CPU_CYCLES / INST_RETIRED)
 * and memory-stall share (AMU STALL_BACKEND_MEM / CPU_CYCLES). The first
 * intervals are the baseline (or --baseline FILE). When a core leaves its
 * band (src/monitor/watch.c), the monitor programs its PMU with the
 * diagnosis groups in turn, one interval each (memory hierarchy, front
 * end, the cluster's coherence), names the cause from their metrics
 * (src/analysis/diagnose.c) with the seeds' advice, and goes back to the
 * AMU alone. Like firmware, it runs at the timer's interrupts and touches
 * the counters only through the driver (docs/monitor.md).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "commands.h"
#include "monitor.h"
#include "dynpmu/analysis.h"
#include "dynpmu/backend.h"
#include "dynpmu/driver.h"
#include "dynpmu/monitor.h"
#include "dynpmu/etm.h"
#include "dynpmu/openmetrics.h"
#include "dynpmu/qemu.h"
#include "dynpmu/tracedir.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dynpmu monitor [-I US] [--learn N] [--threshold K] [--floor F]\n"
		"                      [--consecutive N] [--min-insns N] [--baseline FILE]\n"
		"                      [--save-baseline FILE]\n"
		"                      [--compare FILE] [--json] [-o FILE] [--cpus LIST]\n"
		"                      [--listen HOST:PORT [--linger S]]\n"
		"                      [--profile P] [--sysroot DIR] -- PROGRAM [ARGS...]\n"
		"       dynpmu monitor [OPTIONS] --trace FILE\n\n"
		"Watches every core's CPI and memory-stall share with the Activity Monitors,\n"
		"learns a baseline, and on an anomaly diagnoses it with the PMU (seed 003).\n\n"
		"  -I, --interval US   simulated microseconds per interval (default %u)\n"
		"  --learn N           baseline intervals (default 8)\n"
		"  --threshold K       band half-width in MADs (default 4)\n"
		"  --floor F           least CPI band, a fraction of the baseline (default 0.15)\n"
		"  --consecutive N     intervals in a row that start or end an anomaly (default 2)\n"
		"  --min-insns N       least instructions of an interval that is judged (default 5000)\n"
		"  --baseline FILE     use a saved baseline instead of learning one\n"
		"  --save-baseline F   save each core's baseline (JSON)\n"
		"  --compare FILE      at the end, this run's CPI against a saved baseline\n"
		"  --window INSNS      instructions the trace unit captures on an anomaly\n"
		"                      (default %u; its hot functions are named)\n"
		"  --capture DIR       also keep each capture as DIR/anomaly-N (dynpmu trace show)\n"
		"  --svg FILE          the timeline: CPI, the band, the anomalies and their causes\n"
		"  --trace FILE        replay an instruction trace instead of running a program\n"
		"  --json              the event log as JSON lines\n"
		"  -o, --output FILE   the event log (default: stderr)\n"
		"  --listen HOST:PORT  serve each interval's AMU counts, CPI, stall share and\n"
		"                      anomalies at http://HOST:PORT/metrics (OpenMetrics)\n"
		"  --linger S          with --listen: after the run, keep serving the final values\n"
		"                      S seconds (SIGINT or SIGTERM ends the wait)\n",
		DEFAULT_INTERVAL_US, DEFAULT_WINDOW);
}

static int num(const char *opt, const char *arg, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (end == arg || *end || errno || !(v >= lo && v <= hi)) {
		fprintf(stderr, "dynpmu monitor: %s '%s': give a number from %g to %g\n", opt, arg, lo,
			hi);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse(int argc, char **argv, struct mon_opts *o)
{
	static const struct option lo[] = {
		{ "interval", required_argument, NULL, 'I' }, { "learn", required_argument, NULL, 'L' },
		{ "threshold", required_argument, NULL, 'k' }, { "floor", required_argument, NULL, 'F' },
		{ "consecutive", required_argument, NULL, 'c' }, { "baseline", required_argument, NULL, 'b' },
		{ "save-baseline", required_argument, NULL, 'S' }, { "json", no_argument, NULL, 'j' },
		{ "compare", required_argument, NULL, 'M' },  { "trace", required_argument, NULL, 'T' },
		{ "window", required_argument, NULL, 'W' },   { "capture", required_argument, NULL, 'P' },
		{ "svg", required_argument, NULL, 'G' },      { "listen", required_argument, NULL, 'l' },
		{ "linger", required_argument, NULL, 'g' },   { "min-insns", required_argument, NULL, 'N' },
		{ "output", required_argument, NULL, 'o' },   { "cpus", required_argument, NULL, 'C' },
		{ "profile", required_argument, NULL, 'p' },  { "sysroot", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },           { NULL, 0, NULL, 0 },
	};
	static const struct dpmu_mon_watch_opts def = DPMU_MON_WATCH_DEFAULTS;
	memset(o, 0, sizeof *o);
	o->w = def;
	o->interval_ns = DEFAULT_INTERVAL_US * 1000ull;
	o->window = DEFAULT_WINDOW;
	optind = 1;
	opterr = 0;
	int c;
	double v;
	while ((c = getopt_long(argc, argv, "+:I:o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'I':
			if (num("--interval", optarg, 1, 1e7, &v))
				return DPMU_EXIT_USAGE;
			o->interval_ns = (uint64_t)(v * 1000);
			break;
		case 'L':
			if (num("--learn", optarg, 3, DPMU_MON_WATCH_LEARN_MAX, &v))
				return DPMU_EXIT_USAGE;
			o->w.learn = (unsigned)v;
			break;
		case 'k':
			if (num("--threshold", optarg, 0.1, 100, &o->w.k))
				return DPMU_EXIT_USAGE;
			break;
		case 'F':
			if (num("--floor", optarg, 0, 10, &o->w.floor))
				return DPMU_EXIT_USAGE;
			break;
		case 'c':
			if (num("--consecutive", optarg, 1, 100, &v))
				return DPMU_EXIT_USAGE;
			o->w.consecutive = (unsigned)v;
			break;
		case 'N':
			if (num("--min-insns", optarg, 1, 1e9, &v))
				return DPMU_EXIT_USAGE;
			o->w.min_insns = (uint64_t)v;
			break;
		case 'b': o->load = optarg; break;
		case 'S': o->save = optarg; break;
		case 'M': o->compare = optarg; break;
		case 'T': o->trace = optarg; break;
		case 'P': o->capture = optarg; break;
		case 'G': o->svg = optarg; break;
		case 'W':
			if (num("--window", optarg, 0, 65535, &v))
				return DPMU_EXIT_USAGE;
			o->window = (uint64_t)v;
			break;
		case 'l': o->listen = optarg; break;
		case 'g':
			if (dpmu_tool_linger_parse("monitor", optarg, &o->linger_s))
				return DPMU_EXIT_USAGE;
			break;
		case 'j': o->json = true; break;
		case 'o': o->output = optarg; break;
		case 'C': o->cpus = optarg; break;
		case 'p': o->profile = optarg; break;
		case 's': o->sysroot = optarg; break;
		case 'h': usage(stdout); return -1;
		case ':':
			fprintf(stderr, "dynpmu monitor: option '%s' needs a value\n", argv[optind - 1]);
			return DPMU_EXIT_USAGE;
		default:
			fprintf(stderr, "dynpmu monitor: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return DPMU_EXIT_USAGE;
		}
	}
	if (o->linger_s > 0 && !o->listen) {
		fprintf(stderr, "dynpmu monitor: --linger: keeps --listen's endpoint up; give "
				"--listen HOST:PORT too\n");
		return DPMU_EXIT_USAGE;
	}
	if (o->trace && optind < argc) {
		fprintf(stderr, "dynpmu monitor: give either --trace FILE or -- PROGRAM, not both\n");
		return DPMU_EXIT_USAGE;
	}
	if (!o->trace && optind >= argc) {
		fprintf(stderr, "dynpmu monitor: no program: dynpmu monitor [options] -- PROGRAM [ARGS] "
				"(or --trace FILE)\n");
		return DPMU_EXIT_USAGE;
	}
	o->prog_argv = o->trace ? NULL : argv + optind;
	return 0;
}

/* ---- the event log ------------------------------------------------------------ */

void dpmu_mon_log(struct mon *m, uint64_t t, const struct core_mon *c, const char *event,
		     const char *json_fields, const char *text)
{
	if (m->o->json)
		fprintf(m->out, "{\"time_ns\":%" PRIu64 ",\"cpu\":%u,\"event\":\"%s\"%s%s}\n", t, c->cpu,
			event, json_fields[0] ? "," : "", json_fields);
	else
		fprintf(m->out, "%10.3f ms  cpu%-2u %s\n", (double)t / 1e6, c->cpu, text);
}

/* A JSON string's body: quotes and backslashes escaped, controls dropped. */
void dpmu_mon_om_unit(struct dpmu_om_watch *u, const struct dpmu_mon_watch *w, bool judged,
		      double cpi, double stall)
{
	u->judged = judged;
	u->cpi = cpi;
	u->stall = stall;
	u->have_base = w->state != DPMU_MON_LEARNING;
	u->base_cpi = w->base.cpi;
	u->band = dpmu_mon_watch_band(w);
	u->in_anomaly = w->state == DPMU_MON_ANOMALY;
	u->anomalies = w->anomalies;
}

void dpmu_mon_json_escape(const char *s, char *out, size_t cap)
{
	size_t k = 0;
	for (; *s && k + 3 < cap; s++) {
		if (*s == '"' || *s == '\\')
			out[k++] = '\\';
		if ((unsigned char)*s >= 0x20)
			out[k++] = *s;
	}
	out[k] = '\0';
}

/* A new anomaly on the timeline; the one before it (a change) ends here. */
static int anomaly_push(struct core_mon *c, uint64_t now, struct dpmu_err *err)
{
	if (c->nanom && !c->anom[c->nanom - 1].end_ns)
		c->anom[c->nanom - 1].end_ns = now;
	if (c->nanom == c->capanom) {
		size_t cap = c->capanom ? 2 * c->capanom : 16;
		struct dpmu_an_timeline_anomaly *n = realloc(c->anom, cap * sizeof *n);
		if (!n)
			return dpmu_err_set(err, DPMU_ENOMEM, "out of memory keeping the anomalies");
		c->anom = n;
		c->capanom = cap;
	}
	c->anom[c->nanom++] = (struct dpmu_an_timeline_anomaly){ .start_ns = now, .n = c->anomaly };
	return 0;
}

/* ---- the interval ------------------------------------------------------------- */

static int interval(struct mon *m, struct core_mon *c, uint64_t now, struct dpmu_err *err)
{
	uint64_t v[4];
	for (unsigned i = 0; i < 4; i++) {
		int rc = dpmu_drv_amu_read(m->b->drv, c->cpu, 0, i, &v[i], err);
		if (rc)
			return rc;
	}
	uint64_t cyc = v[AMU_CYCLES] - c->last[AMU_CYCLES], ins = v[AMU_INSTS] - c->last[AMU_INSTS],
		 stl = v[AMU_STALL_MEM] - c->last[AMU_STALL_MEM];
	memcpy(c->last, v, sizeof v);
	if (!dpmu_mon_watch_judges(&c->w, ins, cyc))
		return 0; /* the core did not run the program this interval, or hardly */
	c->intervals++;
	int rc = 0;
	if (c->ncpis == c->capcpis) {
		size_t cap = c->capcpis ? 2 * c->capcpis : 256;
		double *n = realloc(c->cpis, cap * sizeof *n);
		if (n)
			c->cpis = n;
		uint64_t *nt = realloc(c->ts, cap * sizeof *nt);
		if (nt)
			c->ts = nt;
		if (!n || !nt)
			return dpmu_err_set(err, DPMU_ENOMEM, "out of memory keeping the CPIs");
		c->capcpis = cap;
	}
	c->ts[c->ncpis] = now;
	c->cpis[c->ncpis++] = (double)cyc / (double)ins;
	double cpi = (double)cyc / (double)ins, stall = (double)stl / (double)cyc;
	c->judged = true;
	c->cpi = cpi;
	c->stall = stall;
	enum dpmu_mon_watch_event e = dpmu_mon_watch_step(&c->w, cpi, stall);
	bool starts = e == DPMU_MON_ANOMALY_START || e == DPMU_MON_ANOMALY_CHANGE;
	/* the running diagnosis's group counted this interval; an interval that
	 * starts a new anomaly is the new one's, so a diagnosis running then
	 * ends without it (dpmu_mon_diag_begin) */
	if (c->d.s.group >= 0 && !starts) {
		rc = dpmu_mon_diag_interval(m, c, now, ins, cyc, err);
		if (rc)
			return rc;
	}
	switch (e) {
	case DPMU_MON_BASELINE:
		c->base_ns = now;
		break;
	case DPMU_MON_ANOMALY_START:
	case DPMU_MON_ANOMALY_CHANGE:
		c->anomaly = ++m->anomalies;
		c->anomaly_ns = now;
		rc = anomaly_push(c, now, err);
		break;
	case DPMU_MON_ANOMALY_END:
		if (c->nanom)
			c->anom[c->nanom - 1].end_ns = now;
		break;
	case DPMU_MON_NOTHING:
		break;
	}
	dpmu_mon_watch_log(m, now, c, -1, e, &c->w, c->anomaly, c->anomaly_ns, cpi, stall);
	if (!rc && starts)
		rc = dpmu_mon_diag_begin(m, c, now, err);
	if (e == DPMU_MON_ANOMALY_END)
		c->anomaly = 0;
	return rc;
}

void dpmu_mon_watch_log(struct mon *m, uint64_t now, const struct core_mon *c, int thread,
			enum dpmu_mon_watch_event e, const struct dpmu_mon_watch *w,
			unsigned anomaly, uint64_t since_ns, double cpi, double stall)
{
	static const char *const name[][2] = {
		[DPMU_MON_BASELINE] = { "baseline", "thread_baseline" },
		[DPMU_MON_ANOMALY_START] = { "anomaly", "thread_anomaly" },
		[DPMU_MON_ANOMALY_CHANGE] = { "anomaly", "thread_anomaly" },
		[DPMU_MON_ANOMALY_END] = { "anomaly_end", "thread_anomaly_end" },
	};
	/* a lone thread's lines would repeat its core's */
	if (e == DPMU_MON_NOTHING || (thread >= 0 && m->nthreads < 2))
		return;
	char who[32] = "", tj[32] = "", text[400], json[400];
	if (thread >= 0) {
		snprintf(who, sizeof who, "thread %d: ", thread);
		snprintf(tj, sizeof tj, "\"thread\":%d,", thread);
	}
	const struct dpmu_mon_baseline *bl = &w->base;
	switch (e) {
	case DPMU_MON_BASELINE:
		snprintf(text, sizeof text,
			 "%sbaseline: CPI %.3f (MAD %.3f, band +-%.3f), memory stall %.1f%% (%u intervals)",
			 who, bl->cpi, bl->cpi_mad, dpmu_mon_watch_band(w), 100 * bl->stall, bl->intervals);
		snprintf(json, sizeof json,
			 "%s\"cpi\":%.4f,\"cpi_mad\":%.4f,\"band\":%.4f,\"stall\":%.4f,\"stall_mad\":%.4f,"
			 "\"intervals\":%u",
			 tj, bl->cpi, bl->cpi_mad, dpmu_mon_watch_band(w), bl->stall, bl->stall_mad,
			 bl->intervals);
		break;
	case DPMU_MON_ANOMALY_START:
	case DPMU_MON_ANOMALY_CHANGE:
		snprintf(text, sizeof text,
			 "%sanomaly %u: CPI %.3f (baseline %.3f +-%.3f), memory stall %.1f%% (baseline "
			 "%.1f%%)",
			 who, anomaly, cpi, bl->cpi, dpmu_mon_watch_band(w), 100 * stall, 100 * bl->stall);
		snprintf(json, sizeof json,
			 "%s\"anomaly\":%u,\"cpi\":%.4f,\"baseline_cpi\":%.4f,\"band\":%.4f,\"stall\":%.4f,"
			 "\"baseline_stall\":%.4f",
			 tj, anomaly, cpi, bl->cpi, dpmu_mon_watch_band(w), stall, bl->stall);
		break;
	default: /* DPMU_MON_ANOMALY_END */
		snprintf(text, sizeof text, "%sanomaly %u ended: CPI %.3f back in the band (%.3f ms)",
			 who, anomaly, cpi, (double)(now - since_ns) / 1e6);
		snprintf(json, sizeof json, "%s\"anomaly\":%u,\"cpi\":%.4f,\"lasted_ns\":%" PRIu64, tj,
			 anomaly, cpi, now - since_ns);
		break;
	}
	dpmu_mon_log(m, now, c, name[e][thread >= 0], json, text);
}

/* --listen: the run so far as a snapshot, built here on the simulation's
 * thread and handed to the server's threads by a pointer swap
 * (docs/openmetrics.md, "the monitor's series"). */
static int publish(struct mon *m, uint64_t now, bool finished, struct dpmu_err *err)
{
	if (!m->o->publish)
		return 0;
	size_t cap = DPMU_MAX_CORES + m->capthr, n = 0;
	struct dpmu_om_watch *w = malloc(cap * sizeof *w);
	if (!w)
		return dpmu_err_set(err, DPMU_ENOMEM, "out of memory publishing");
	for (unsigned i = 0; i < DPMU_MAX_CORES; i++) {
		const struct core_mon *c = &m->core[i];
		if (!c->used)
			continue;
		struct dpmu_om_watch *u = &w[n++];
		memset(u, 0, sizeof *u);
		u->cpu = c->cpu;
		u->thread = -1;
		for (unsigned k = 0; k < DPMU_OM_AMU_COUNTERS; k++)
			u->amu[k] = c->last[k] - c->first[k];
		dpmu_mon_om_unit(u, &c->w, c->judged, c->cpi, c->stall);
	}
	n += dpmu_mon_threads_watch(m, w + n, cap - n);
	struct dpmu_om_snapshot *snap = NULL;
	int rc = dpmu_om_snapshot_create(&snap, err);
	struct dpmu_om_run r = { .sim_ns = now, .intervals = m->ticks, .finished = finished };
	if (!rc)
		rc = dpmu_om_add_watch(snap, w, n, m->b->profile, &r, err);
	free(w);
	if (rc) {
		dpmu_om_snapshot_release(snap);
		return rc;
	}
	dpmu_om_publish(m->o->publish, snap);
	return 0;
}

static int tick(void *ctx, uint64_t now, struct dpmu_err *err)
{
	struct mon *m = ctx;
	if (now < m->next_ns)
		return 0;
	m->next_ns = (now / m->o->interval_ns + 1) * m->o->interval_ns;
	m->last_ns = now;
	for (unsigned i = 0; i < DPMU_MAX_CORES; i++) {
		if (!m->core[i].used)
			continue;
		int rc = interval(m, &m->core[i], now, err);
		if (rc)
			return rc;
	}
	int rc = dpmu_mon_threads_interval(m, now, err);
	m->ticks++;
	return rc ? rc : publish(m, now, false, err);
}

/* ---- baselines on disk ---------------------------------------------------------- */

static int save_baselines(const struct mon *m, const char *path, struct dpmu_err *err)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return dpmu_err_set(err, DPMU_EIO, "--save-baseline %s: %s", path, strerror(errno));
	fprintf(f, "{\"format\":\"dynpmu-baseline\",\"version\":1,\"cores\":[");
	bool first = true;
	for (unsigned i = 0; i < DPMU_MAX_CORES; i++) {
		const struct core_mon *c = &m->core[i];
		if (!c->used || c->w.state == DPMU_MON_LEARNING)
			continue;
		fprintf(f, "%s{\"cpu\":%u,\"cpi\":%.17g,\"cpi_mad\":%.17g,\"stall\":%.17g,"
			   "\"stall_mad\":%.17g,\"intervals\":%u}",
			first ? "" : ",", c->cpu, c->w.base.cpi, c->w.base.cpi_mad, c->w.base.stall,
			c->w.base.stall_mad, c->w.base.intervals);
		first = false;
	}
	fprintf(f, "]");
	dpmu_mon_threads_save(m, f);
	fprintf(f, "}\n");
	if (fclose(f))
		return dpmu_err_set(err, DPMU_EIO, "--save-baseline %s: %s", path, strerror(errno));
	return 0;
}

int dpmu_mon_baseline_load(const char *opt, const char *path, const char *list, const char *key,
			   unsigned id, struct dpmu_mon_baseline *out, struct dpmu_err *err)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	if (!j)
		return dpmu_err_set(err, DPMU_EINVAL, "%s %s: line %d: %s", opt, path, je.line, je.text);
	int rc = 1;
	json_t *cores = json_object_get(j, "cores"), *entries = json_object_get(j, list);
	const char *fmt = json_string_value(json_object_get(j, "format"));
	if (!fmt || strcmp(fmt, "dynpmu-baseline") || !json_is_array(cores))
		rc = dpmu_err_set(err, DPMU_EINVAL,
				  "%s %s: not a baseline from --save-baseline (no \"format\": "
				  "\"dynpmu-baseline\" and \"cores\" array)",
				  opt, path);
	/* a file from before threads were saved has no "threads": none */
	for (size_t i = 0; rc == 1 && i < json_array_size(entries); i++) {
		json_t *c = json_array_get(entries, i);
		json_t *n = json_object_get(c, key);
		if (!json_is_integer(n) || json_integer_value(n) != (json_int_t)id)
			continue;
		const char *f[4] = { "cpi", "cpi_mad", "stall", "stall_mad" };
		double v[4];
		for (unsigned k = 0; rc == 1 && k < 4; k++) {
			json_t *x = json_object_get(c, f[k]);
			if (!json_is_number(x))
				rc = dpmu_err_set(err, DPMU_EINVAL, "%s %s: %s %u: \"%s\" is not a number",
						  opt, path, key, id, f[k]);
			else
				v[k] = json_number_value(x);
		}
		if (rc == 1) {
			*out = (struct dpmu_mon_baseline){ v[0], v[1], v[2], v[3], 0 };
			json_t *ni = json_object_get(c, "intervals");
			out->intervals = json_is_integer(ni) ? (unsigned)json_integer_value(ni) : 0;
			rc = 0;
		}
	}
	json_decref(j);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Seed 003 section 7.2, step 4: after the fix, the AMU baseline confirms
 * the gain. This run's median CPI per core against a saved baseline's,
 * judged by the baseline's band. */
static int compare(struct mon *m, uint64_t end, struct dpmu_err *err)
{
	for (unsigned i = 0; i < DPMU_MAX_CORES; i++) {
		struct core_mon *c = &m->core[i];
		if (!c->used || !c->ncpis)
			continue;
		struct dpmu_mon_baseline base;
		int have = dpmu_mon_baseline_load("--compare", m->o->compare, "cores", "cpu", c->cpu,
						  &base, err);
		if (have < 0)
			return have;
		if (have == 1)
			continue; /* the file has no baseline for this core */
		double *v = malloc(c->ncpis * sizeof *v);
		if (!v)
			return dpmu_err_set(err, DPMU_ENOMEM, "out of memory comparing");
		memcpy(v, c->cpis, c->ncpis * sizeof *v);
		qsort(v, c->ncpis, sizeof *v, cmp_double);
		double med = c->ncpis % 2 ? v[c->ncpis / 2] : (v[c->ncpis / 2 - 1] + v[c->ncpis / 2]) / 2;
		free(v);
		struct dpmu_mon_watch w;
		if (dpmu_mon_watch_init(&w, &m->o->w, &base, err))
			return DPMU_EINVAL;
		double band = dpmu_mon_watch_band(&w), change = 100 * (med - base.cpi) / base.cpi;
		const char *verdict = fabs(med - base.cpi) <= band ? "the same (within the band)"
				      : med < base.cpi		    ? "better"
									    : "worse";
		char text[300], json[300];
		snprintf(text, sizeof text,
			 "compare: median CPI %.3f over %zu intervals against the baseline's %.3f "
			 "(+-%.3f): %s, %+.1f%%",
			 med, c->ncpis, base.cpi, band, verdict, change);
		snprintf(json, sizeof json,
			 "\"cpi\":%.4f,\"intervals\":%zu,\"baseline_cpi\":%.4f,\"band\":%.4f,"
			 "\"verdict\":\"%s\",\"change_percent\":%.2f",
			 med, c->ncpis, base.cpi, band,
			 verdict[0] == 't' ? "same" : verdict, change);
		dpmu_mon_log(m, end, c, "compare", json, text);
	}
	return 0;
}

static int write_svg(const struct mon *m, const char *path, struct dpmu_err *err)
{
	struct dpmu_an_timeline_core cores[DPMU_MAX_CORES];
	size_t n = 0;
	for (unsigned i = 0; i < DPMU_MAX_CORES; i++) {
		const struct core_mon *c = &m->core[i];
		if (!c->used || !c->ncpis)
			continue;
		struct dpmu_an_timeline_core *k = &cores[n++];
		memset(k, 0, sizeof *k);
		snprintf(k->name, sizeof k->name, "cpu%u (%.30s)", c->cpu,
			 m->b->profile->core_types[c->type].name);
		k->n = c->ncpis;
		k->t_ns = c->ts;
		k->cpi = c->cpis;
		k->have_base = c->w.state != DPMU_MON_LEARNING;
		k->base = c->w.base.cpi;
		k->band = dpmu_mon_watch_band(&c->w);
		k->base_ns = c->base_ns;
		k->nanom = c->nanom;
		k->anom = c->anom;
	}
	FILE *f = fopen(path, "w");
	if (!f)
		return dpmu_err_set(err, DPMU_EIO, "--svg %s: %s", path, strerror(errno));
	char title[300];
	snprintf(title, sizeof title, "dynpmu monitor: %.250s", m->b->workload);
	int rc = dpmu_an_write_timeline(f, title, cores, n, err);
	if (fclose(f) && !rc)
		rc = dpmu_err_set(err, DPMU_EIO, "--svg %s: %s", path, strerror(errno));
	return rc;
}

/* ---- the run -------------------------------------------------------------------- */

static int run(const struct mon_opts *o, FILE *out, struct dpmu_err *err, bool *bad_input)
{
	*bad_input = true;
	struct dpmu_backend *b = NULL;
	char program[4096] = "";
	int rc;
	if (o->trace) {
		struct dpmu_sim_options so = { .profile = o->profile, .trace = o->trace };
		rc = dpmu_sim_create(&so, &b, err);
	} else {
		/* the path qemu runs, for the captures' program image: PROGRAM
		 * may be a name found in PATH */
		rc = dpmu_qemu_check_program(o->prog_argv[0], o->sysroot, program, sizeof program, err);
		if (rc)
			return rc;
		struct dpmu_qemu_options qo = { .profile = o->profile, .program = o->prog_argv[0],
						.argv = o->prog_argv, .sysroot = o->sysroot,
						.cpus = o->cpus };
		rc = dpmu_qemu_create(&qo, &b, err);
	}
	if (rc)
		return rc;
	struct mon *m = calloc(1, sizeof *m);
	if (!m) {
		dpmu_backend_destroy(b);
		return dpmu_err_set(err, DPMU_ENOMEM, "out of memory");
	}
	m->o = o;
	m->b = b;
	m->out = out;
	memcpy(m->program, program, sizeof m->program);
	m->next_ns = o->interval_ns;
	rc = dpmu_mon_diagnoser_init(&m->dx, b->drv, b->profile, b->cores, err);
	for (unsigned i = 0; !rc && i < DPMU_MAX_CORES; i++) {
		if (!(b->cores >> i & 1))
			continue;
		struct core_mon *c = &m->core[i];
		unsigned cl, idx;
		const struct dpmu_core_type *t = dpmu_profile_core(b->profile, i, &cl, &idx);
		if (!t)
			continue;
		c->used = true;
		c->cpu = i;
		c->cluster = cl;
		c->type = (unsigned)(t - b->profile->core_types);
		dpmu_mon_diagnosis_init(&c->d.s, i, cl, c->type);
		c->thread = -1;
		struct dpmu_mon_baseline base;
		int have = o->load ? dpmu_mon_baseline_load("--baseline", o->load, "cores", "cpu", i,
							    &base, err)
				   : 1;
		rc = have < 0 ? have : dpmu_mon_watch_init(&c->w, &o->w, have == 0 ? &base : NULL, err);
		/* EL3 firmware enables the AMU's group-0 counters */
		if (!rc)
			rc = b->ops->amu_setup ? b->ops->amu_setup(b, i, NULL, 0, err)
					       : dpmu_err_set(err, DPMU_ENOTSUP, "the %s backend has no AMU set-up",
							      b->ops->name);
		for (unsigned k = 0; !rc && k < 4; k++)
			rc = dpmu_drv_amu_read(b->drv, i, 0, k, &c->last[k], err);
		memcpy(c->first, c->last, sizeof c->first);
		memcpy(c->at_switch, c->last, sizeof c->at_switch);
		/* the trace unit's sink, for the captures (a program run) */
		if (!rc && !o->trace && o->window) {
			rc = dpmu_etm_sink_init(&c->sink, SINK_BYTES, err);
			if (!rc)
				rc = dpmu_qemu_trace_attach(b, i, &c->sink, err);
			if (!rc)
				rc = dpmu_drv_etm_ids(b->drv, i, c->idr, err);
		}
	}
	if (!rc && o->capture && mkdir(o->capture, 0777) && errno != EEXIST)
		rc = dpmu_err_set(err, DPMU_EIO, "--capture %s: %s", o->capture, strerror(errno));
	if (!rc && o->compare) {
		/* a bad file is bad input: found before the run, not after */
		struct dpmu_mon_baseline probe;
		int have = dpmu_mon_baseline_load("--compare", o->compare, "cores", "cpu", 0, &probe,
						  err);
		rc = have < 0 ? have : 0;
	}
	if (!rc)
		rc = publish(m, 0, false, err); /* before the run: no counts yet */
	/* each thread's counts: the core's between its switches */
	if (!rc && b->ops->on_switch)
		b->ops->on_switch(b, dpmu_mon_thread_switched, m);
	if (!rc) {
		*bad_input = false;
		rc = b->ops->run_timed ? b->ops->run_timed(b, DPMU_MON_POLL_INSNS, o->interval_ns, tick, m, err)
				       : b->ops->run(b, DPMU_MON_POLL_INSNS, tick, m, err);
	}
	uint64_t end = b->ops->time_ns(b);
	/* a diagnosis the run's end cut short still names what it found */
	for (unsigned i = 0; !rc && i < DPMU_MAX_CORES; i++)
		if (m->core[i].used)
			rc = dpmu_mon_diag_finish(m, &m->core[i], end, "the run ended", err);
	/* the counts since the last interval (not judged: it may be short) go
	 * into the totals the summary and the endpoint give */
	for (unsigned i = 0; !rc && i < DPMU_MAX_CORES; i++) {
		for (unsigned k = 0; m->core[i].used && !rc && k < 4; k++)
			rc = dpmu_drv_amu_read(b->drv, i, 0, k, &m->core[i].last[k], err);
		if (!rc && m->core[i].used)
			rc = dpmu_mon_threads_charge(m, &m->core[i], err);
	}
	if (b->ops->on_switch)
		b->ops->on_switch(b, NULL, NULL);
	if (!rc)
		rc = publish(m, end, true, err);
	if (!rc) {
		/* the summary */
		for (unsigned i = 0; i < DPMU_MAX_CORES; i++) {
			const struct core_mon *c = &m->core[i];
			if (!c->used || !c->intervals)
				continue;
			char text[300], json[600];
			snprintf(text, sizeof text, "summary: %" PRIu64 " intervals, %s, %u anomal%s",
				 c->intervals, c->w.state == DPMU_MON_LEARNING ? "no baseline (too few intervals)"
										 : "baseline learned",
				 c->w.anomalies, c->w.anomalies == 1 ? "y" : "ies");
			/* the run's AMU counts and the last judged interval, as
			 * --listen serves them */
			snprintf(json, sizeof json,
				 "\"intervals\":%" PRIu64 ",\"anomalies\":%u,\"baseline\":%s,"
				 "\"cpi\":%.17g,\"stall\":%.17g,\"amu\":{\"CPU_CYCLES\":%" PRIu64
				 ",\"CNT_CYCLES\":%" PRIu64 ",\"INST_RETIRED\":%" PRIu64
				 ",\"STALL_BACKEND_MEM\":%" PRIu64 "}",
				 c->intervals, c->w.anomalies,
				 c->w.state == DPMU_MON_LEARNING ? "false" : "true", c->cpi, c->stall,
				 c->last[0] - c->first[0], c->last[1] - c->first[1],
				 c->last[2] - c->first[2], c->last[3] - c->first[3]);
			dpmu_mon_log(m, end, c, "summary", json, text);
		}
		dpmu_mon_threads_summary(m, end);
		if (o->compare)
			rc = compare(m, end, err);
		if (!rc && o->svg)
			rc = write_svg(m, o->svg, err);
		if (!rc && o->save)
			rc = save_baselines(m, o->save, err);
	}
	for (unsigned i = 0; i < DPMU_MAX_CORES; i++) {
		struct core_mon *c = &m->core[i];
		free(c->cpis);
		free(c->ts);
		free(c->anom);
		if (c->sink.buf) {
			if (c->tracing)
				dpmu_drv_etm_stop(b->drv, i, NULL);
			dpmu_qemu_trace_attach(b, i, NULL, NULL);
			dpmu_etm_sink_free(&c->sink);
		}
	}
	free(m->thr);
	free(m);
	int status = o->trace ? 0 : dpmu_qemu_wait_status(b);
	dpmu_backend_destroy(b);
	if (!rc)
		dpmu_tool_program_status("monitor", status);
	return rc;
}

int dpmu_cmd_monitor(int argc, char **argv)
{
	struct mon_opts o;
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? DPMU_EXIT_OK : rc;
	FILE *out = stderr;
	if (o.output && !(out = fopen(o.output, "w"))) {
		fprintf(stderr, "dynpmu monitor: -o %s: %s\n", o.output, strerror(errno));
		return DPMU_EXIT_USAGE;
	}
	/* before the run, so that a bad address is told at once */
	struct dpmu_om_server *srv = NULL;
	if (o.listen && (rc = dpmu_tool_listen_start("monitor", o.listen, &o.publish, &srv))) {
		if (out != stderr)
			fclose(out);
		return rc;
	}
	struct dpmu_err err;
	dpmu_err_clear(&err);
	bool bad_input;
	rc = run(&o, out, &err, &bad_input);
	if (out != stderr && fclose(out) && !rc)
		rc = dpmu_err_set(&err, DPMU_EIO, "-o %s: %s", o.output, strerror(errno));
	int status = DPMU_EXIT_OK;
	if (rc) {
		fprintf(stderr, "dynpmu monitor: %s\n", dpmu_errmsg(&err));
		status = bad_input ? DPMU_EXIT_USAGE : DPMU_EXIT_FAIL;
	}
	/* after the log is written and closed, so that a scraper comparing the
	 * two finds it complete */
	if (srv && !rc && o.linger_s > 0)
		dpmu_tool_linger(o.linger_s);
	dpmu_om_server_stop(srv);
	dpmu_om_publisher_destroy(o.publish);
	return status;
}
