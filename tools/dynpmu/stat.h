/*
 * dynpmu stat's measurement path, shared with dynpmu demo: options ->
 * backend (a trace on the simulation backend, or a program under
 * qemu-aarch64) -> monitor session -> analysis table -> report. Only the
 * backend construction differs between the two workload kinds.
 */
#ifndef DPMU_TOOL_STAT_H
#define DPMU_TOOL_STAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dynpmu/analysis.h"
#include "dynpmu/backend.h"
#include "dynpmu/monitor.h"
#include "dynpmu/openmetrics.h"
#include "dynpmu/perf.h"
#include "dynpmu/qemu.h"

#define DPMU_STAT_MAX_METRICS 32

struct dpmu_stat_opts {
	/* --backend perf: Linux perf_event on this machine (docs/hardware.md) */
	bool perf;
	pid_t pid;                 /* -p PID (perf) */
	bool system_wide;          /* -a (perf) */
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
	bool per_thread;           /* --per-thread: the threads table gets the events */
	bool verbose;              /* -v: the scheduler's figures after a program's run */
	/* monitoring methods (docs/stat.md) */
	bool long_counters;        /* --long */
	uint64_t mux_ns;           /* --mux-interval MS */
	uint64_t interval_ns;      /* -I MS or --purpose */
	bool per_type, per_cluster;
	const char *metrics;       /* -M */
	bool json;
	const char *svg;
	/* --listen HOST:PORT: serve the counts at /metrics (docs/openmetrics.md) */
	const char *listen;
	double linger_s;           /* --linger S: keep serving the final values S seconds */
	/* set by the caller when --listen's server runs: each interval, and
	 * the end of the run, publish a snapshot here */
	struct dpmu_om_publisher *publish;
};

/* One measured run: the backend (kept for the program's exit status and
 * its region and per-function tables), the analysis table (one sample for
 * the whole run, or one per -I interval) and the metrics to report. */
struct dpmu_stat_run {
	struct dpmu_backend *b;
	struct dpmu_an_table t;
	const struct dpmu_an_metric *metrics[DPMU_STAT_MAX_METRICS];
	size_t nmetrics;
	struct dpmu_mon_events *ev;
	struct dpmu_qemu_report_event rev[DPMU_MON_MAX_EVENTS];
	unsigned nrev;
	unsigned intervals;        /* snapshots the session took */
	bool bad_input;            /* the failure was the options' (exit 2), not the run's */
};

/* Build the backend, parse the metrics and events (-M adds the metrics'
 * events), create the session with the options' methods, run the workload
 * and fill r->t. On failure r still needs dpmu_stat_run_free. */
int dpmu_stat_measure(const struct dpmu_stat_opts *o, struct dpmu_stat_run *r,
		      struct dpmu_err *err);
/* The report: the analysis writer the options ask for (text, -x CSV,
 * --json) to out, the chart to svg (--svg's file, opened by the caller;
 * NULL: none), and for a program its region and per-function tables (text
 * and CSV only: JSON lines stay JSON). */
int dpmu_stat_report(const struct dpmu_stat_opts *o, const struct dpmu_stat_run *r, FILE *out,
		     FILE *svg, struct dpmu_err *err);
void dpmu_stat_run_free(struct dpmu_stat_run *r);

#endif
