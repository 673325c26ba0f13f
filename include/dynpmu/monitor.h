/*
 * The monitor (src/monitor): turns a list of events into counters
 * programmed through the driver, runs a workload on a backend, and reads
 * the counts back, as firmware would: every value comes from a register
 * read through include/dynpmu/driver.h.
 *
 * A session has three steps:
 *   1. an event list in perf's syntax, parsed against the catalogs of the
 *      profile's core types, clusters and Activity Monitors
 *      (dpmu_mon_events_parse / _default);
 *   2. a schedule: on every core (or cluster) PMU, the groups of events it
 *      implements; when they need more event counters than the PMU has,
 *      they take turns (rotation, seed 003 section 4.2), a group always
 *      as a whole (dpmu_mon_session_create_opts);
 *   3. start, ticks while the workload runs (reads, rotations, interval
 *      snapshots, overflow handling), stop, and the results: per event
 *      and unit the count with perf's enabled / running times.
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
	DPMU_MON_AMU = 2,      /* the Activity Monitors of each measured core */
	DPMU_MON_SOFTWARE = 3, /* a Linux software event of each measured core
	                        * (task-clock, page-faults): the perf backend only */
};

/* Linux's software events, as perf spells them (perf list "Software
 * event"). The monitor only names them; the perf backend maps each to its
 * PERF_COUNT_SW_* number (<linux/perf_event.h>). An event's code is its
 * enum value. */
enum dpmu_mon_sw {
	DPMU_MON_SW_CPU_CLOCK = 0,
	DPMU_MON_SW_TASK_CLOCK,
	DPMU_MON_SW_PAGE_FAULTS,
	DPMU_MON_SW_CONTEXT_SWITCHES,
	DPMU_MON_SW_CPU_MIGRATIONS,
	DPMU_MON_SW_MINOR_FAULTS,
	DPMU_MON_SW_MAJOR_FAULTS,
	DPMU_MON_SW_ALIGNMENT_FAULTS,
	DPMU_MON_SW_EMULATION_FAULTS,
	DPMU_MON_SW_COUNT
};
/* perf's name of software event `sw` ("task-clock"), NULL out of range. */
const char *dpmu_mon_sw_name(unsigned sw);

/* One requested event, resolved per core type and per cluster (a name may
 * have different codes, or none, in the A75 and A55 catalogs). */
struct dpmu_mon_event {
	/* Arm's spelling, with the modifiers as given: "INST_RETIRED",
	 * "INST_RETIRED:u", the raw form "r1b", "amu:CPU_CYCLES". */
	char name[DPMU_NAME_MAX];
	enum dpmu_mon_target target;
	bool raw;                           /* given as a code (r1b, 0x1b) */
	unsigned els;                       /* core PMU: DPMU_DRV_EL0 | ... it counts at */
	unsigned group;                     /* group number: events of one {...} share it */
	bool grouped;                       /* written inside {...} */
	int32_t code[DPMU_MAX_CORE_TYPES];  /* core / AMU target: code per profile core type */
	int32_t cluster_code[DPMU_MAX_CLUSTERS];
};

struct dpmu_mon_events {
	unsigned n;
	unsigned ngroups;
	struct dpmu_mon_event ev[DPMU_MON_MAX_EVENTS];
};

/* Parse a comma-separated list in perf's syntax:
 *   NAME          a catalog name (case-insensitive) or one of perf's
 *                 generic names (cycles, instructions, branch-misses,
 *                 L1-dcache-load-misses, ...), mapped as Linux's arm_pmuv3
 *                 driver maps them;
 *   r1b, 0x1b     a raw event number (hex) on the core PMU;
 *   core/NAME/, cluster/NAME/, amu/NAME/   the PMU made explicit;
 *   NAME:u, :k, :h, :uk ...   count only at EL0 / EL1 / EL2 (PMEVTYPER
 *                 filter; core PMU only; default EL0 and EL1);
 *   {a,b,...}     a group: always on counters together; {a,b}:u applies
 *                 the modifier to each member;
 *   task-clock, page-faults, context-switches, cpu-migrations, ... or
 *   sw/NAME/      a Linux software event (DPMU_MON_SOFTWARE; counted only
 *                 by the perf backend).
 * An unqualified name found in a cluster catalog goes on the cluster PMU
 * (L3D_CACHE, BUS_ACCESS); raw codes go on the core PMU. Names are looked
 * up in the catalogs of the core types of the cores in `cores` (bit n =
 * core n) and of their clusters. Unknown names fail with DPMU_ENOENT and
 * "unknown event 'l1d_cahce' (did you mean l1d_cache?)"; bad syntax with
 * DPMU_EINVAL and a message naming the item. */
int dpmu_mon_events_parse(const char *list, const struct dpmu_profile *p, uint64_t cores,
			  struct dpmu_mon_events *out, struct dpmu_err *err);
/* The default set (perf-like): CPU_CYCLES, INST_RETIRED, BR_RETIRED,
 * BR_MIS_PRED_RETIRED, L1D_CACHE, L1D_CACHE_REFILL and the clusters' L3
 * access and refill events, those the catalogs have. */
int dpmu_mon_events_default(const struct dpmu_profile *p, uint64_t cores,
			    struct dpmu_mon_events *out, struct dpmu_err *err);

/* Where event i sits on one PMU at the moment. */
#define DPMU_MON_UNSCHEDULED 0xffu   /* not on a counter now (or not implemented) */

struct dpmu_mon_pmu {
	bool used;
	enum dpmu_mon_target target;
	unsigned cpu;                        /* core, or the cluster number */
	unsigned nslots;                     /* event counters it has (PMCR.N) */
	unsigned width;                      /* event counter bits: 32, or 64 (PMUv3p5, newer DSUs) */
	bool chain;                          /* 64-bit counts from CHAIN pairs (--long) */
	bool rotates;                        /* its groups take turns */
	uint8_t counter[DPMU_MON_MAX_EVENTS];/* counter index, DPMU_DRV_CYCLE, or unscheduled */
	bool counted[DPMU_MON_MAX_EVENTS];   /* implemented here (takes part in the schedule) */
	uint16_t code[DPMU_MON_MAX_EVENTS];  /* event number on this PMU */
	uint8_t need[DPMU_MON_MAX_EVENTS];   /* event counters it takes: 0 (cycle counter), 1, 2 */
	uint64_t last[32];                   /* raw value at the previous read (per counter) */
	uint64_t total[DPMU_MON_MAX_EVENTS]; /* widened count per event */
	uint64_t running[DPMU_MON_MAX_EVENTS];/* ns on a counter */
	/* kernel-scheduled counters (dpmu_mon_counting): perf's time_enabled
	 * of each event, which is not the session's clock for a task's events */
	uint64_t enabled[DPMU_MON_MAX_EVENTS];
	uint64_t mark_enabled[DPMU_MON_MAX_EVENTS];
	uint64_t since;                      /* when the current schedule went on */
	uint32_t mask;                       /* PMCNTENSET bits in use now */
	uint32_t wide;                       /* counters read as 64-bit pairs (even index) */
	unsigned head;                       /* rotation: first group of the next turn */
	unsigned rotations;                  /* turns taken */
	uint32_t ssrr;                       /* PMSSRR as read back (interval mode) */
	/* at the last interval boundary */
	uint64_t mark_total[DPMU_MON_MAX_EVENTS];
	uint64_t mark_running[DPMU_MON_MAX_EVENTS];
	/* sampling: the period the counter is armed with, and the count and
	 * time at the last sample (or the start) */
	uint64_t period[DPMU_MON_MAX_EVENTS];
	uint64_t sampled_total[DPMU_MON_MAX_EVENTS];
	uint64_t sampled_ns[DPMU_MON_MAX_EVENTS];
	uint64_t samples[DPMU_MON_MAX_EVENTS];
};

struct dpmu_mon_session;

/* One sample (dynpmu record; seed 003 sections 2 and 7.1): the counter of
 * `event` on core `cpu` overflowed at time_ns, `period` events after the
 * previous sample of that event on that core (its weight: exact, whatever
 * the period asked for). The backend knows the rest (where the core is). */
struct dpmu_mon_sample {
	unsigned event;   /* index in the session's events */
	unsigned cpu;
	uint64_t period;
	uint64_t time_ns;
};
typedef int (*dpmu_mon_sample_fn)(void *ctx, const struct dpmu_mon_sample *smp,
				  struct dpmu_err *err);

/* perf record's default is -F 4000 of real time on hardware that runs
 * ~10^9 instructions a second; the simulation replays ~10^6-10^7 a second,
 * so the default samples at 1 MHz of simulated time: about as many
 * samples per second of the run as perf takes (docs/record.md). */
#define DPMU_MON_SAMPLE_FREQ_DEFAULT 1000000u

/* How a session runs. Zero fields take the defaults. */
struct dpmu_mon_options {
	bool long_counters;   /* --long: CHAIN pairs on 32-bit PMUs */
	uint64_t mux_ns;      /* rotation period; 0: DPMU_MON_MUX_DEFAULT_NS */
	uint64_t interval_ns; /* snapshot interval (-I); 0: none */
	/* Called at the end of each interval (and of the last, partial one)
	 * with the interval's start and end: dpmu_mon_interval_count reads
	 * its counts. A non-zero return stops the run. */
	int (*on_interval)(void *ctx, const struct dpmu_mon_session *s, uint64_t t0_ns,
			   uint64_t t1_ns, struct dpmu_err *err);
	void *ctx;
	/* Sampling: with on_sample set, every event (core-PMU events only)
	 * samples on its counter's overflow interrupt: the counter is preset
	 * to overflow after sample_period events (-c), or after a period that
	 * adapts to sample_freq samples per second of simulated time (-F;
	 * both 0: DPMU_MON_SAMPLE_FREQ_DEFAULT), and re-armed at each sample.
	 * The events must fit on the counters at once (no rotation) and
	 * there are no intervals. A non-zero return stops the run. */
	uint64_t sample_period;
	uint64_t sample_freq;
	dpmu_mon_sample_fn on_sample;
	void *sample_ctx;
};

/* perf's default rotation period is 4 ms of wall-clock time on hardware
 * running ~10^9 instructions a second; the simulation replays ~10^6-10^7
 * a second, so 4 ms of a hardware run is ~4 us of simulated time: the
 * default rotates at the same rate per replayed instruction (docs/stat.md). */
#define DPMU_MON_MUX_DEFAULT_NS 4000u

/* Schedule `ev` on the core PMUs of `cores`, their AMUs and the cluster
 * PMUs of their clusters. A group that needs more event counters than a
 * PMU has is DPMU_EBUSY, naming the group, the PMU and the counts; AMU
 * events beyond the AMU's group-1 counters likewise. `drv` and `p` must
 * outlive the session. */
int dpmu_mon_session_create_opts(struct dpmu_drv *drv, const struct dpmu_profile *p,
				 const struct dpmu_mon_events *ev, uint64_t cores,
				 const struct dpmu_mon_options *opt,
				 struct dpmu_mon_session **out, struct dpmu_err *err);
/* ---- kernel-scheduled counters (the perf backend) --------------------------
 *
 * On Linux perf_event the kernel owns the PMU registers: it puts events on
 * counters, multiplexes them (rotating every perf_event_mux_interval_ms),
 * widens them to 64 bits and keeps each event's time_enabled and
 * time_running. A session over such a backend does not schedule, program
 * or rotate counters; it opens each event on each unit through these
 * operations and reads perf's three numbers, so the results, intervals and
 * everything above them are the same as on the simulation.
 */
struct dpmu_mon_counting {
	const char *name;     /* "perf", for messages */
	void *ctx;
	/* Open event i of the list (ev) on `unit`: a core for DPMU_MON_CORE
	 * and DPMU_MON_SOFTWARE, a cluster for DPMU_MON_CLUSTER; `code` is its
	 * number there (ev->code of the core's type, ev->cluster_code).
	 * Events are opened in list order, unit by unit, so a group's first
	 * member on a unit comes before the others (its leader). Returns 0,
	 * DPMU_ENOTSUP when that unit cannot count it (the count shows
	 * <not supported>), or an error that ends the session. */
	int (*open)(void *ctx, const struct dpmu_mon_event *ev, unsigned i, unsigned unit,
		    uint32_t code, bool long_counter, struct dpmu_err *err);
	/* Start (on = true) or stop every opened event. */
	int (*enable)(void *ctx, bool on, struct dpmu_err *err);
	/* Event i on `unit` so far: the 64-bit count and perf's
	 * time_enabled / time_running in ns. */
	int (*read)(void *ctx, unsigned i, unsigned unit, uint64_t *value, uint64_t *enabled_ns,
		    uint64_t *running_ns, struct dpmu_err *err);
};

/* A session whose counters the kernel schedules: `ev` opened through `c`
 * on the core PMUs of `cores` and the cluster PMUs of their clusters (as
 * the profile groups them). Options: long_counters (passed to open),
 * interval_ns and on_interval; rotation and sampling are the kernel's and
 * not available. `c` and `p` must outlive the session. */
int dpmu_mon_session_create_counting(const struct dpmu_mon_counting *c,
				     const struct dpmu_profile *p, const struct dpmu_mon_events *ev,
				     uint64_t cores, const struct dpmu_mon_options *opt,
				     struct dpmu_mon_session **out, struct dpmu_err *err);
/* The session a backend asks for: counting when it has b->counting,
 * counters programmed through b->drv otherwise. */
int dpmu_mon_session_for_backend(struct dpmu_backend *b, const struct dpmu_mon_events *ev,
				 const struct dpmu_mon_options *opt,
				 struct dpmu_mon_session **out, struct dpmu_err *err);

/* The same with default options. */
int dpmu_mon_session_create(struct dpmu_drv *drv, const struct dpmu_profile *p,
			    const struct dpmu_mon_events *ev, uint64_t cores,
			    struct dpmu_mon_session **out, struct dpmu_err *err);
void dpmu_mon_session_destroy(struct dpmu_mon_session *s);

/* Reset, program and enable every scheduled counter; `now_ns` starts the
 * enabled/running clocks. AMU events need dpmu_mon_run (the backend sets
 * the AMU up as EL3 firmware would) or an AMU already enabled. */
int dpmu_mon_start(struct dpmu_mon_session *s, uint64_t now_ns, struct dpmu_err *err);
/* Read every counter and add what it counted since the last read; rotate
 * when a rotation period has passed, snapshot when an interval has ended.
 * A 32-bit counter is read often enough and its overflow flag (PMOVSSET)
 * taken into account, so fewer than 2^33 events between two calls are
 * counted exactly. */
int dpmu_mon_poll(struct dpmu_mon_session *s, uint64_t now_ns, struct dpmu_err *err);
/* Final poll (and interval), then disable the counters. */
int dpmu_mon_stop(struct dpmu_mon_session *s, uint64_t now_ns, struct dpmu_err *err);
#define DPMU_MON_POLL_INSNS 65536u

/* AMU setup through the backend, start, the backend's run (ticking on
 * the rotation / interval period and on overflow interrupts), stop. */
int dpmu_mon_run(struct dpmu_mon_session *s, struct dpmu_backend *b, struct dpmu_err *err);

/* ---- results -------------------------------------------------------------- */

struct dpmu_mon_count {
	bool supported;       /* counted on at least one PMU */
	uint64_t value;       /* as counted (not scaled) */
	uint64_t enabled_ns;  /* time the event was enabled */
	uint64_t running_ns;  /* time it was on a counter */
};

/* perf's estimate of a multiplexed count: value x enabled / running
 * (rounded to nearest); value when running = enabled; 0 when running = 0. */
uint64_t dpmu_mon_scaled(const struct dpmu_mon_count *c);

const struct dpmu_mon_events *dpmu_mon_session_events(const struct dpmu_mon_session *s);
/* Event i on core `unit` or cluster `unit` (its target decides which). */
int dpmu_mon_count_on(const struct dpmu_mon_session *s, unsigned i, unsigned unit,
		      struct dpmu_mon_count *out);
/* Event i summed over every core (or cluster) it was measured on: values,
 * enabled and running times add up, as perf aggregates. */
void dpmu_mon_count_total(const struct dpmu_mon_session *s, unsigned i,
			  struct dpmu_mon_count *out);
/* In an on_interval callback: event i on `unit` during that interval. */
int dpmu_mon_interval_count(const struct dpmu_mon_session *s, unsigned i, unsigned unit,
			    struct dpmu_mon_count *out);
/* Cores and clusters measured (bit n = core / cluster n). */
uint64_t dpmu_mon_session_cores(const struct dpmu_mon_session *s);
uint64_t dpmu_mon_session_clusters(const struct dpmu_mon_session *s);
/* The schedule on a core, AMU or cluster PMU (for tests and reports). */
const struct dpmu_mon_pmu *dpmu_mon_session_pmu(const struct dpmu_mon_session *s,
						enum dpmu_mon_target t, unsigned unit);
/* Snapshots taken (intervals ended) so far. */
unsigned dpmu_mon_session_intervals(const struct dpmu_mon_session *s);
/* First event index with this name (case-insensitive), or -1. */
int dpmu_mon_events_find(const struct dpmu_mon_events *ev, const char *name);

/* --purpose: the snapshot interval for what is being studied (seed 001
 * section 5.2: power 100-500 ms, tuning 10-50 ms, locks 1-5 ms). Returns
 * the interval in ns, or 0 for an unknown purpose. */
uint64_t dpmu_mon_purpose_interval(const char *purpose);

/* ---- the anomaly watch (watch.c; seed 003 sections 5.3 and 7.2) -----------------
 *
 * Per core, each interval's CPI (AMU CPU_CYCLES / INST_RETIRED) and
 * memory-stall share (AMU STALL_BACKEND_MEM / CPU_CYCLES). The baseline is
 * the median and the median absolute deviation (MAD) of the first `learn`
 * intervals, or given. An interval is outside the band when its CPI is
 * further from the baseline's median than max(k x 1.4826 x MAD, floor x
 * median) (1.4826 x MAD estimates a standard deviation, robustly), or its
 * stall share further than max(k x 1.4826 x MAD, stall_floor). An anomaly
 * starts after `consecutive` intervals outside; it changes (a new anomaly)
 * when that many in a row leave the anomaly's own level (the median CPI of
 * its intervals after the first `consecutive`, with the same band) and
 * ends after that many back inside the band. An interval with fewer than
 * min_insns instructions is not judged (dpmu_mon_watch_judges): its CPI
 * measures a start or an end (a thread woken after a long wait, cold, or
 * exiting), not a phase. */
struct dpmu_mon_watch_opts {
	unsigned learn;          /* intervals the baseline is learned from */
	double k;                /* MADs of the band */
	double floor;            /* least CPI band, as a fraction of the median */
	double stall_floor;      /* least stall-share band, absolute (0..1) */
	unsigned consecutive;    /* intervals in a row that start, change or end one */
	uint64_t min_insns;      /* least instructions of a judged interval */
};
#define DPMU_MON_WATCH_DEFAULTS { 8, 4.0, 0.15, 0.05, 2, 5000 }
#define DPMU_MON_WATCH_LEARN_MAX 1024
#define DPMU_MON_WATCH_LEVEL_MAX 64

struct dpmu_mon_baseline {
	double cpi, cpi_mad;     /* median and MAD */
	double stall, stall_mad;
	unsigned intervals;      /* learned from */
};

enum dpmu_mon_watch_state { DPMU_MON_LEARNING = 0, DPMU_MON_STEADY = 1, DPMU_MON_ANOMALY = 2 };
enum dpmu_mon_watch_event {
	DPMU_MON_NOTHING = 0,
	DPMU_MON_BASELINE = 1,       /* the baseline was learned with this interval */
	DPMU_MON_ANOMALY_START = 2,  /* from steady */
	DPMU_MON_ANOMALY_CHANGE = 3, /* a different anomaly follows the last one */
	DPMU_MON_ANOMALY_END = 4,    /* back in the band */
};

struct dpmu_mon_watch {
	struct dpmu_mon_watch_opts o;
	enum dpmu_mon_watch_state state;
	struct dpmu_mon_baseline base;
	double learn_cpi[DPMU_MON_WATCH_LEARN_MAX], learn_stall[DPMU_MON_WATCH_LEARN_MAX];
	unsigned nlearn;
	unsigned run;            /* intervals in a row outside the band (steady) or in it (anomaly) */
	unsigned away;           /* intervals in a row away from the anomaly's level */
	double level[DPMU_MON_WATCH_LEVEL_MAX]; /* the anomaly's CPIs (the last ones) */
	unsigned nlevel;
	unsigned anomalies;
};

/* base NULL: learn it. Options out of range are DPMU_EINVAL naming them. */
int dpmu_mon_watch_init(struct dpmu_mon_watch *w, const struct dpmu_mon_watch_opts *o,
			const struct dpmu_mon_baseline *base, struct dpmu_err *err);
/* One interval. */
enum dpmu_mon_watch_event dpmu_mon_watch_step(struct dpmu_mon_watch *w, double cpi, double stall);
/* Whether (cpi, stall) lies outside the baseline's band (after learning). */
/* Whether an interval of these counts is judged: instructions at least
 * min_insns, and cycles. */
bool dpmu_mon_watch_judges(const struct dpmu_mon_watch *w, uint64_t insns, uint64_t cycles);
bool dpmu_mon_watch_outside(const struct dpmu_mon_watch *w, double cpi, double stall);
/* The band's CPI half-width. */
double dpmu_mon_watch_band(const struct dpmu_mon_watch *w);

/* The diagnosis groups (seed 003 section 7.2, step 2): the PMU events the
 * monitor counts in turn on an anomaly, by catalog name. */
enum dpmu_mon_diag_group { DPMU_MON_DIAG_MEMORY = 0, DPMU_MON_DIAG_FRONTEND = 1,
			   DPMU_MON_DIAG_COHERENCE = 2, DPMU_MON_DIAG_GROUPS = 3 };
struct dpmu_mon_diag {
	const char *name;            /* "memory hierarchy" */
	enum dpmu_mon_target target; /* the core PMU, or the cluster PMU */
	const char *events[6];       /* NULL-terminated when fewer */
};
const struct dpmu_mon_diag *dpmu_mon_diag_group(enum dpmu_mon_diag_group g);

/* ---- the diagnosis (diagnosis.c; seed 003 section 7.2 step 2) ------------------
 *
 * On an anomaly of a core, the groups of dpmu_mon_diag_group count in
 * turn, one interval each, on the core's PMU or its cluster's, through the
 * driver; the counts are handed back for the analysis to name the cause.
 * A cluster's PMU is shared by its cores: one diagnosis at a time holds
 * it (the diagnoser's cluster_owner), and another skips its coherence
 * group meanwhile. A diagnosis may be stopped early (a new anomaly, the
 * run's end): its counts are those of the groups that completed. The
 * caller reads the AMU and gives each interval's instructions and cycles,
 * so that the same code serves the simulated cluster and perf_event. */
#define DPMU_MON_DIAG_EVENTS 6
#define DPMU_MON_DIAG_COUNTS (DPMU_MON_DIAG_GROUPS * DPMU_MON_DIAG_EVENTS)

/* What the diagnoses of a run share. */
struct dpmu_mon_diagnoser {
	struct dpmu_drv *drv;
	const struct dpmu_profile *p;
	struct dpmu_mon_events ev[DPMU_MON_DIAG_GROUPS]; /* the groups resolved */
	unsigned cluster_owner[DPMU_MAX_CLUSTERS];      /* cpu + 1 holding it; 0: free */
};

/* Resolve the groups' events for the profile's core types and clusters of
 * `cores` (an event a catalog does not have is left out of its group). */
int dpmu_mon_diagnoser_init(struct dpmu_mon_diagnoser *x, struct dpmu_drv *drv,
			    const struct dpmu_profile *p, uint64_t cores, struct dpmu_err *err);

/* One count of a diagnosis: counted while its group ran (running_ns of the
 * diagnosis's counted_ns), on the core's PMU or the cluster's. */
struct dpmu_mon_diag_count {
	const char *event;
	bool cluster;
	uint64_t value, running_ns;
};

struct dpmu_mon_diagnosis {
	unsigned cpu, cluster, type;   /* type: the core type's index in the profile */
	int group;                     /* counting now; -1: no diagnosis runs */
	unsigned anomaly;              /* the anomaly it diagnoses (the caller's number) */
	uint64_t start_ns, group_ns;   /* when it, and the group counting now, started */
	uint64_t counted_ns;           /* time the completed groups counted, in all */
	uint64_t insns, cycles;        /* the AMU's over the completed groups' intervals */
	unsigned counted, skipped;     /* groups completed; left out */
	unsigned n;                    /* events of the group counting now */
	uint16_t code[DPMU_MON_DIAG_EVENTS];
	const char *name[DPMU_MON_DIAG_EVENTS];
	struct dpmu_mon_diag_count counts[DPMU_MON_DIAG_COUNTS];
	unsigned ncounts;
	/* set by the last begin or interval call when it skipped a group: its
	 * name and the cpu whose diagnosis held the PMU; NULL: none */
	const char *skipped_group;
	unsigned skipped_owner;
};

/* A core's diagnosis state, none running. */
void dpmu_mon_diagnosis_init(struct dpmu_mon_diagnosis *d, unsigned cpu, unsigned cluster,
			     unsigned type);
/* Start diagnosing `anomaly` at now (none may be running: stop it first).
 * The interval calls then return 0 while groups remain, 1 when the last
 * has counted (the counts are complete), or an error. */
int dpmu_mon_diagnosis_begin(struct dpmu_mon_diagnoser *x, struct dpmu_mon_diagnosis *d,
			     unsigned anomaly, uint64_t now, struct dpmu_err *err);
/* At an interval's end: the group that counted in it is read, the next
 * programmed; insns and cycles are the core's over the interval (AMU). */
int dpmu_mon_diagnosis_interval(struct dpmu_mon_diagnoser *x, struct dpmu_mon_diagnosis *d,
				uint64_t now, uint64_t insns, uint64_t cycles, struct dpmu_err *err);
/* The group counting now stops, unread (it counted part of an interval);
 * the diagnosis is no longer running, its counts those of the groups that
 * completed. Nothing when none runs. */
int dpmu_mon_diagnosis_stop(struct dpmu_mon_diagnoser *x, struct dpmu_mon_diagnosis *d,
			    struct dpmu_err *err);

#endif
