/*
 * OpenMetrics output (src/analysis/openmetrics*.c): counts and metrics
 * served over HTTP at /metrics in the Prometheus text exposition format
 * 0.0.4, so that Prometheus can watch many machines (docs/openmetrics.md).
 *
 * Three parts, so that the endpoint is never in the simulation's path
 * (DESIGN.md "Where the new capabilities sit"):
 *
 *   snapshot   the series of one moment: families (name, counter or
 *              gauge, HELP) and their samples (labels, value). Built by
 *              one thread, then immutable once published.
 *   publisher  holds the latest published snapshot. Publishing swaps a
 *              pointer under a mutex that is held for nothing else, so the
 *              publishing thread never waits for a client; a scrape takes
 *              a reference and renders it on the server's own thread.
 *   server     libmicrohttpd on its own threads: GET /metrics, with
 *              connection limits and timeouts so a slow or stuck client
 *              holds one connection slot for a bounded time and nothing
 *              else.
 */
#ifndef DYNPMU_OPENMETRICS_H
#define DYNPMU_OPENMETRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dynpmu/analysis.h"
#include "dynpmu/error.h"

/* The content type of format 0.0.4, as Prometheus's own client libraries send it. */
#define DPMU_OM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* ---- snapshots ------------------------------------------------------------- */

enum dpmu_om_type {
	DPMU_OM_COUNTER = 0, /* only goes up during a run; its name ends in _total */
	DPMU_OM_GAUGE = 1,
};

struct dpmu_om_label {
	const char *name;  /* [a-zA-Z_][a-zA-Z0-9_]*, not starting with __ */
	const char *value; /* any UTF-8 text; escaped when rendered */
};

struct dpmu_om_snapshot;

int dpmu_om_snapshot_create(struct dpmu_om_snapshot **out, struct dpmu_err *err);
/* Drop the caller's reference (NULL is fine); the last one frees it. */
void dpmu_om_snapshot_release(struct dpmu_om_snapshot *s);

/* The family `name`, declared on first use: returns its index (>= 0), or
 * DPMU_EINVAL for a name that is not a Prometheus metric name, a counter
 * whose name does not end in _total, or a name declared again with
 * another type or HELP text. */
int dpmu_om_family(struct dpmu_om_snapshot *s, const char *name, enum dpmu_om_type type,
		   const char *help, struct dpmu_err *err);
/* Add a sample to family `family`: an exact integer, or a double (NaN and
 * infinities allowed for gauges; a counter must be finite and >= 0). A bad
 * label name or a label given twice is DPMU_EINVAL. Giving one label set
 * twice in a family is the caller's mistake (Prometheus drops the scrape). */
int dpmu_om_add_u64(struct dpmu_om_snapshot *s, int family, const struct dpmu_om_label *labels,
		    size_t nlabels, uint64_t value, struct dpmu_err *err);
int dpmu_om_add_double(struct dpmu_om_snapshot *s, int family,
		       const struct dpmu_om_label *labels, size_t nlabels, double value,
		       struct dpmu_err *err);
size_t dpmu_om_snapshot_samples(const struct dpmu_om_snapshot *s);

/* The text exposition: per family `# HELP`, `# TYPE`, then its samples,
 * families in the order they were declared. *text is malloc'd and
 * NUL-terminated; *len excludes the NUL. NULL s renders nothing (""). */
int dpmu_om_render(const struct dpmu_om_snapshot *s, char **text, size_t *len,
		   struct dpmu_err *err);
/* A double as the format writes it: the shortest decimal that reads back
 * as the same double, NaN, +Inf, -Inf. Returns the length. */
int dpmu_om_format_double(double v, char *buf, size_t cap);

/* ---- publisher ------------------------------------------------------------- */

struct dpmu_om_publisher;

int dpmu_om_publisher_create(struct dpmu_om_publisher **out, struct dpmu_err *err);
/* Releases the latest snapshot; the server must have been stopped first. */
void dpmu_om_publisher_destroy(struct dpmu_om_publisher *p);
/* Make s the latest snapshot. Takes the caller's reference; s must not be
 * changed after. The previous one is released (freed here unless a scrape
 * still renders it, then by that scrape). Never waits for a client. */
void dpmu_om_publish(struct dpmu_om_publisher *p, struct dpmu_om_snapshot *s);
/* The latest snapshot with a reference for the caller
 * (dpmu_om_snapshot_release), or NULL before the first publish. */
struct dpmu_om_snapshot *dpmu_om_acquire(struct dpmu_om_publisher *p);
/* Snapshots published so far. */
uint64_t dpmu_om_publications(struct dpmu_om_publisher *p);

/* ---- server ---------------------------------------------------------------- */

struct dpmu_om_server_opts {
	unsigned max_connections; /* open at once, all clients (0: 32) */
	unsigned per_ip;          /* open at once from one address (0: 8) */
	unsigned timeout_s;       /* an idle connection is closed after this (0: 10) */
	unsigned threads;         /* serving threads (0: 2) */
};

struct dpmu_om_server;

/* "HOST:PORT", "[V6ADDR]:PORT" or ":PORT" (every address); PORT 0 lets the
 * system pick one (dpmu_om_server_port). A malformed address is
 * DPMU_EINVAL, a host that does not resolve DPMU_ENOENT; both name the
 * input. */
int dpmu_om_listen_parse(const char *hostport, void *sockaddr, unsigned *socklen,
			 struct dpmu_err *err);
/* Serve p's snapshots at http://HOSTPORT/metrics. A bad HOSTPORT as
 * above; an address that cannot be bound (in use, not local) is DPMU_EIO
 * with the system's reason. */
int dpmu_om_server_start(const char *hostport, struct dpmu_om_publisher *p,
			 const struct dpmu_om_server_opts *o, struct dpmu_om_server **out,
			 struct dpmu_err *err);
unsigned dpmu_om_server_port(const struct dpmu_om_server *s);
/* Responses sent so far with status 200 (scrapes served). */
uint64_t dpmu_om_server_scrapes(const struct dpmu_om_server *s);
/* Close the socket, end the connections and the threads. */
void dpmu_om_server_stop(struct dpmu_om_server *s);

/* ---- dynpmu's series ------------------------------------------------------- */

/* Add the cpu and cluster units of interval sample s into acc's one sample
 * (created on first use): the running totals dpmu_om_add_run publishes.
 * Counts add up as perf's aggregation does (dpmu_an_count_accumulate). */
int dpmu_om_totals_add(struct dpmu_an_table *acc, const struct dpmu_an_sample *s,
		       struct dpmu_err *err);

/* What dpmu_om_add_run adds besides the counts (docs/openmetrics.md). */
struct dpmu_om_run {
	uint64_t sim_ns;     /* simulated time at the snapshot */
	uint64_t intervals;  /* intervals ended so far */
	bool finished;       /* the workload has ended: these are the final values */
};

/* Add dynpmu's series to snapshot s (docs/openmetrics.md):
 *   totals  a sample of cpu and cluster units (dpmu_an_table_from_session's,
 *           not aggregated): the run so far; its counts give
 *           dynpmu_events_total, dynpmu_cluster_events_total and
 *           dynpmu_event_running_ratio
 *   last    the latest interval (may be NULL): metrics m[0..nm) evaluated
 *           on its units give one gauge family per metric, dynpmu_<name>;
 *           a metric not available on a unit has no sample for it
 *   p       core types and clusters of the cpu units
 * plus dynpmu_simulated_seconds, dynpmu_intervals_total and
 * dynpmu_run_finished from r. */
int dpmu_om_add_run(struct dpmu_om_snapshot *s, const struct dpmu_an_table *t,
		    const struct dpmu_an_sample *totals, const struct dpmu_an_sample *last,
		    const struct dpmu_profile *p, const struct dpmu_an_metric *const *m, size_t nm,
		    const struct dpmu_om_run *r, struct dpmu_err *err);

/* ---- the monitor's series (dynpmu monitor --listen) ------------------------ */

/* The AMU's group-0 counters as dynpmu_events_total spells them (stat's
 * amu: events), in counter order (AMUv1: AMEVCNTR0<n>). */
#define DPMU_OM_AMU_COUNTERS 4
extern const char *const dpmu_om_amu_event[DPMU_OM_AMU_COUNTERS];

/* One unit the monitor watches: a core, or a thread on a core. */
struct dpmu_om_watch {
	unsigned cpu;
	int thread;          /* the backend's thread number; -1: the core itself */
	/* the AMU's group-0 counts since the run started (a core: on it; a
	 * thread: while it ran) */
	uint64_t amu[DPMU_OM_AMU_COUNTERS];
	bool judged;         /* an interval has been judged: cpi and stall hold */
	double cpi, stall;   /* the latest judged interval's CPI and memory-stall share */
	bool have_base;      /* base_cpi and band hold */
	double base_cpi, band;
	bool in_anomaly;
	unsigned anomalies;  /* started so far */
};

/* Add the monitor's series for units w[0..n) (docs/openmetrics.md, "the
 * monitor's series"): the cores' AMU counts in dynpmu_events_total, the
 * threads' in dynpmu_thread_events_total, and per unit the gauges
 * dynpmu_monitor_cpi, _memory_stall_ratio, _baseline_cpi, _band,
 * _anomaly and the counter dynpmu_monitor_anomalies_total (a thread's
 * with a thread label); then dynpmu_simulated_seconds,
 * dynpmu_intervals_total and dynpmu_run_finished from r. */
int dpmu_om_add_watch(struct dpmu_om_snapshot *s, const struct dpmu_om_watch *w, size_t n,
		      const struct dpmu_profile *p, const struct dpmu_om_run *r,
		      struct dpmu_err *err);

#endif
