/*
 * The monitor (src/monitor): turns a list of event names into counters
 * programmed through the driver, runs a workload on a backend, and reads
 * the counts back, as firmware would: every value comes from a register
 * read through include/dynpmu/driver.h.
 *
 * A session has three steps:
 *   1. an event list, parsed against the catalogs of the profile's core
 *      types and clusters (dpmu_mon_events_parse / _default);
 *   2. a schedule: each event onto a counter of every core (or cluster) it
 *      is measured on, the cycle events onto the cycle counters
 *      (dpmu_mon_session_create, which fails when events outnumber
 *      counters: multiplexing is not part of this session);
 *   3. start, polls while the workload runs (counters are widened to 64
 *      bits in software: each poll adds the wrapped difference since the
 *      last one), stop, and the results.
 */
#ifndef DYNPMU_MONITOR_H
#define DYNPMU_MONITOR_H

#include <stdbool.h>
#include <stdint.h>

#include "dynpmu/arch.h"
#include "dynpmu/driver.h"
#include "dynpmu/error.h"

struct dpmu_backend;

#define DPMU_MON_MAX_EVENTS 64
/* A core type or cluster that does not implement an event. */
#define DPMU_MON_NO_CODE (-1)

enum dpmu_mon_target {
	DPMU_MON_CORE = 0,     /* the core PMU of each measured core */
	DPMU_MON_CLUSTER = 1,  /* the DSU cluster PMU of each measured cluster */
};

/* One requested event, resolved per core type and per cluster (a name may
 * have different codes, or none, in the A75 and A55 catalogs). */
struct dpmu_mon_event {
	char name[DPMU_NAME_MAX];           /* Arm's spelling, or the raw form "r1b" */
	enum dpmu_mon_target target;
	bool raw;                           /* given as a code (r1b, 0x1b) */
	int32_t code[DPMU_MAX_CORE_TYPES];  /* core target: code per profile core type */
	int32_t cluster_code[DPMU_MAX_CLUSTERS];
};

struct dpmu_mon_events {
	unsigned n;
	struct dpmu_mon_event ev[DPMU_MON_MAX_EVENTS];
};

/* Parse a comma-separated list. Each item is a catalog name
 * (case-insensitive), a raw code (r1b or 0x1b, hex), or either of
 * those qualified by a PMU, core/NAME/ or cluster/NAME/. An unqualified
 * name found in a cluster catalog goes on the cluster PMU (L3D_CACHE,
 * BUS_ACCESS); raw codes go on the core PMU. Names are looked up in the
 * catalogs of the core types of the cores in `cores` (bit n = core n) and
 * of their clusters. Unknown names fail with DPMU_ENOENT and
 * "unknown event 'l1d_cahce' (did you mean l1d_cache?)". */
int dpmu_mon_events_parse(const char *list, const struct dpmu_profile *p, uint64_t cores,
			  struct dpmu_mon_events *out, struct dpmu_err *err);
/* The default set (perf-like): CPU_CYCLES, INST_RETIRED, BR_RETIRED,
 * BR_MIS_PRED_RETIRED, L1D_CACHE, L1D_CACHE_REFILL and the clusters' L3
 * access and refill events, those the catalogs have. */
int dpmu_mon_events_default(const struct dpmu_profile *p, uint64_t cores,
			    struct dpmu_mon_events *out, struct dpmu_err *err);

/* Where event i sits on one PMU. */
#define DPMU_MON_UNSCHEDULED 0xffu   /* not counted here (not implemented) */

struct dpmu_mon_pmu {
	bool used;
	unsigned cpu;                        /* core, or the cluster number */
	unsigned nslots;                     /* event counters it has (PMCR.N) */
	unsigned width;                      /* event counter bits: 32, or 64 (PMUv3p5, newer DSUs) */
	uint8_t counter[DPMU_MON_MAX_EVENTS];/* counter index, DPMU_DRV_CYCLE, or unscheduled */
	uint64_t last[32];                   /* raw value at the previous poll (per counter) */
	uint64_t total[DPMU_MON_MAX_EVENTS]; /* widened count per event */
	uint32_t mask;                       /* PMCNTENSET bits in use */
};

struct dpmu_mon_session;

/* Schedule `ev` on the core PMUs of `cores` and the cluster PMUs of their
 * clusters. Fails with DPMU_EBUSY, naming the core type and the counts, when
 * one PMU would need more counters than it has. `drv` and `p` must outlive
 * the session. */
int dpmu_mon_session_create(struct dpmu_drv *drv, const struct dpmu_profile *p,
			    const struct dpmu_mon_events *ev, uint64_t cores,
			    struct dpmu_mon_session **out, struct dpmu_err *err);
void dpmu_mon_session_destroy(struct dpmu_mon_session *s);

/* Reset, program and enable every scheduled counter; `now_ns` starts the
 * enabled/running clocks. */
int dpmu_mon_start(struct dpmu_mon_session *s, uint64_t now_ns, struct dpmu_err *err);
/* Read every counter and add what it counted since the last poll. Call at
 * least once per 2^32 events on a counter (the trace replay does it every
 * DPMU_MON_POLL_INSNS instructions). */
int dpmu_mon_poll(struct dpmu_mon_session *s, uint64_t now_ns, struct dpmu_err *err);
/* Final poll, then disable the counters. */
int dpmu_mon_stop(struct dpmu_mon_session *s, uint64_t now_ns, struct dpmu_err *err);
#define DPMU_MON_POLL_INSNS 65536u

/* start, the backend's run (polling on each tick), stop. */
int dpmu_mon_run(struct dpmu_mon_session *s, struct dpmu_backend *b, struct dpmu_err *err);

/* ---- results -------------------------------------------------------------- */

struct dpmu_mon_count {
	bool supported;       /* counted on at least one PMU */
	uint64_t value;
	uint64_t enabled_ns;  /* time the event was enabled */
	uint64_t running_ns;  /* time it was on a counter (= enabled here) */
};

const struct dpmu_mon_events *dpmu_mon_session_events(const struct dpmu_mon_session *s);
/* Event i on core `cpu` or cluster `cluster` (its target decides which). */
int dpmu_mon_count_on(const struct dpmu_mon_session *s, unsigned i, unsigned unit,
		      struct dpmu_mon_count *out);
/* Event i summed over every core (or cluster) it was measured on. */
void dpmu_mon_count_total(const struct dpmu_mon_session *s, unsigned i,
			  struct dpmu_mon_count *out);
/* Cores and clusters measured (bit n = core / cluster n). */
uint64_t dpmu_mon_session_cores(const struct dpmu_mon_session *s);
uint64_t dpmu_mon_session_clusters(const struct dpmu_mon_session *s);
/* The schedule on a core or cluster PMU (for tests and reports). */
const struct dpmu_mon_pmu *dpmu_mon_session_pmu(const struct dpmu_mon_session *s,
						enum dpmu_mon_target t, unsigned unit);
/* First event index with this name (case-insensitive), or -1. */
int dpmu_mon_events_find(const struct dpmu_mon_events *ev, const char *name);

#endif
