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

#define DEFAULT_INTERVAL_US 50
#define AMU_CYCLES 0         /* group-0 AMU counters (AMUv1) */
#define AMU_INSTS 2
#define AMU_STALL_MEM 3
#define MAX_EVENTS 6
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

/* A diagnosis in progress on one core: the group counting now. */
struct diag {
	int group;                         /* -1: none */
	unsigned n;                        /* events programmed */
	uint16_t code[MAX_EVENTS];
	const char *name[MAX_EVENTS];
	uint64_t insns, cycles;            /* the AMU's, while the groups counted */
	uint64_t start_ns;
	struct dpmu_an_table t;            /* one sample: cpuN and clusterM units */
};

struct core_mon {
	bool used;
	unsigned cpu, cluster, type;
	struct dpmu_mon_watch w;
	uint64_t last[4];                  /* AMU group-0 counters at the last interval */
	uint64_t first[4];                 /* ... when the run started */
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
	uint64_t next_ns, last_ns;
	struct core_mon core[DPMU_MAX_CORES];
	struct dpmu_mon_events group_ev[DPMU_MON_DIAG_GROUPS];
	unsigned anomalies;
	uint64_t ticks;                    /* intervals ended */
};

/* The event log: a text line, or a JSON line with json_fields. */
void dpmu_mon_log(struct mon *m, uint64_t t, const struct core_mon *c, const char *event,
		  const char *json_fields, const char *text);
/* A JSON string's body: quotes and backslashes escaped, controls dropped. */
void dpmu_mon_json_escape(const char *s, char *out, size_t cap);

/* monitor_diag.c: a diagnosis starts (the PMU groups, the capture); each
 * interval of it collects one group and programs the next, and the last
 * names the cause. */
int dpmu_mon_diag_begin(struct mon *m, struct core_mon *c, uint64_t now, struct dpmu_err *err);
int dpmu_mon_diag_interval(struct mon *m, struct core_mon *c, uint64_t now, uint64_t insns,
			   uint64_t cycles, struct dpmu_err *err);

#endif
