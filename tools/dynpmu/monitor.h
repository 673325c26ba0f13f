/*
 * dynpmu monitor's shared state (tools/dynpmu/monitor.c: options, the
 * intervals, baselines, the run; monitor_diag.c: the diagnosis groups and
 * the trace unit's capture; docs/monitor.md).
 */
#ifndef DPMU_TOOL_MONITOR_H
#define DPMU_TOOL_MONITOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dynpmu/analysis.h"
#include "dynpmu/backend.h"
#include "dynpmu/model.h"
#include "dynpmu/monitor.h"
#include "dynpmu/openmetrics.h"

#define DEFAULT_INTERVAL_US 50
#define AMU_CYCLES 0         /* group-0 AMU counters (AMUv1) */
#define AMU_INSTS 2
#define AMU_STALL_MEM 3
#define DEFAULT_WINDOW 4000  /* instructions a capture traces */
#define SINK_BYTES (256u << 10)
#define HOT_SHOWN 3

struct mon_opts {
	const char *profile, *cpus, *sysroot, *output, *save, *load, *compare, *trace, *svg;
	uint64_t interval_ns, window;
	const char *capture;               /* --capture DIR */
	struct dpmu_mon_watch_opts w;
	bool json;
	char **prog_argv;
	const char *listen;                /* --listen HOST:PORT (docs/openmetrics.md) */
	double linger_s;                   /* --linger S */
	struct dpmu_om_publisher *publish; /* set when --listen's server runs */
};

/* A core's diagnosis: the state machine's (src/monitor/diagnosis.c), and
 * the command's part. */
struct diag {
	struct dpmu_mon_diagnosis s;
	size_t anom;                       /* its anomaly's entry of core_mon.anom */
};

/* A thread of the program, watched with its own baseline (seed 003
 * section 5.3: the AMU keeps each task's CPI). Its counts are the core's
 * AMU counts between the thread switches on its core (monitor_thread.c). */
struct thread_mon {
	bool used;
	int id;                            /* the backend's thread number */
	unsigned cpu;                      /* the core it ran on last */
	struct dpmu_mon_watch w;
	uint64_t acc[4];                   /* AMU counts while it ran, this interval */
	uint64_t total[4];                 /* ... since the run started */
	uint64_t intervals;                /* judged */
	bool judged;
	double cpi, stall;                 /* the latest judged interval's */
	unsigned anomaly;                  /* the current thread anomaly's number, 0: none */
	uint64_t anomaly_ns;
};

struct core_mon {
	bool used;
	unsigned cpu, cluster, type;
	struct dpmu_mon_watch w;
	uint64_t last[4];                  /* AMU group-0 counters at the last interval */
	uint64_t first[4];                 /* ... when the run started */
	int thread;                        /* the thread running here (-1: none yet) */
	uint64_t at_switch[4];             /* AMU counters when it was last charged */
	bool judged;                       /* cpi and stall: the latest judged interval's */
	double cpi, stall;
	uint64_t intervals;
	double *cpis;                      /* every interval's CPI and end time */
	uint64_t *ts;
	size_t ncpis, capcpis;
	uint64_t base_ns;                  /* when the baseline was learned */
	struct dpmu_an_timeline_anomaly *anom; /* the anomalies, for the timeline */
	size_t nanom, capanom;
	unsigned anomaly;                  /* the current anomaly's number, 0: none */
	uint64_t anomaly_ns;
	struct diag d;
	/* seed 003 section 7.2 step 3: the trace unit captures the code */
	struct dpmu_etm_sink sink;
	bool tracing;                      /* a capture is running */
	uint32_t idr[14];
};

struct mon {
	const struct mon_opts *o;
	struct dpmu_backend *b;
	FILE *out;
	char program[4096];                /* the program's path, resolved (the captures' image) */
	uint64_t next_ns, last_ns;
	struct core_mon core[DPMU_MAX_CORES];
	struct dpmu_mon_diagnoser dx;      /* the groups, the cluster PMUs' owners */
	unsigned anomalies;
	uint64_t ticks;                    /* intervals ended */
	struct thread_mon *thr;            /* by thread number */
	size_t capthr;
	unsigned nthreads;                 /* threads seen */
	unsigned thread_anomalies;         /* numbered apart from the cores' */
};

/* The event log: a text line, or a JSON line with json_fields. */
void dpmu_mon_log(struct mon *m, uint64_t t, const struct core_mon *c, const char *event,
		  const char *json_fields, const char *text);
/* A JSON string's body: quotes and backslashes escaped, controls dropped. */
void dpmu_mon_json_escape(const char *s, char *out, size_t cap);

/* The log line of a watch event (baseline, anomaly, its end) of a core
 * (thread < 0) or of a thread on core c; nothing for DPMU_MON_NOTHING. */
void dpmu_mon_watch_log(struct mon *m, uint64_t now, const struct core_mon *c, int thread,
			enum dpmu_mon_watch_event e, const struct dpmu_mon_watch *w,
			unsigned anomaly, uint64_t since_ns, double cpi, double stall);

/* The /metrics unit of a core or a thread: what its watch and latest
 * judged interval say (cpu, thread and amu are the caller's). */
void dpmu_mon_om_unit(struct dpmu_om_watch *u, const struct dpmu_mon_watch *w, bool judged,
		      double cpi, double stall);

/* A saved baseline (--baseline, --compare): of the entry of array `list`
 * ("cores" or "threads") whose `key` ("cpu" or "thread") is id. 1 when the
 * file has none, 0 with *out filled, or an error naming the file. */
int dpmu_mon_baseline_load(const char *opt, const char *path, const char *list, const char *key,
			   unsigned id, struct dpmu_mon_baseline *out, struct dpmu_err *err);

/* monitor_thread.c: the threads. switched is the backend's switch hook
 * (dpmu_backend_switch_fn); threads_interval charges each core's running
 * thread and judges every thread that ran in the interval; the rest give
 * the end's summary lines, the baselines to save and the endpoint's units. */
int dpmu_mon_thread_switched(void *ctx, unsigned cpu, int prev, int next, uint64_t now,
			     struct dpmu_err *err);
int dpmu_mon_threads_interval(struct mon *m, uint64_t now, struct dpmu_err *err);
int dpmu_mon_threads_charge(struct mon *m, struct core_mon *c, struct dpmu_err *err);
void dpmu_mon_threads_summary(struct mon *m, uint64_t end);
void dpmu_mon_threads_save(const struct mon *m, FILE *f);
size_t dpmu_mon_threads_watch(const struct mon *m, struct dpmu_om_watch *w, size_t cap);

/* monitor_diag.c: a diagnosis starts (the PMU groups, the capture); each
 * interval of it collects one group and programs the next, and the last
 * names the cause. */
int dpmu_mon_diag_begin(struct mon *m, struct core_mon *c, uint64_t now, struct dpmu_err *err);
int dpmu_mon_diag_interval(struct mon *m, struct core_mon *c, uint64_t now, uint64_t insns,
			   uint64_t cycles, struct dpmu_err *err);
/* The running diagnosis (if any) ends now with the groups it has counted,
 * its cause logged as partial, cut short by `why` ("anomaly 3 began",
 * "the run ended"). A new anomaly's diagnosis calls it first. */
int dpmu_mon_diag_finish(struct mon *m, struct core_mon *c, uint64_t now, const char *why,
			 struct dpmu_err *err);

#endif
