/*
 * Analysis (src/analysis): derived metrics, advice from the seeds' rules of
 * thumb, and the report writers (perf-like table, CSV, JSON lines, SVG).
 *
 * The input is a neutral table of samples, independent of how the counts
 * were obtained (one run of the monitor, multiplexed rounds, intervals,
 * perf on real hardware):
 *
 *   table   the run: workload, constant and reference clocks, hot symbols
 *   sample  one interval, or the whole run: start and length in ns
 *   unit    what a row is about: cpuN, clusterN, a core type, the system;
 *           its clock, line size and bus width, whether it is a LITTLE unit
 *   count   a named event count with enabled / running times (perf's
 *           PERF_FORMAT_TOTAL_TIME_ENABLED / _RUNNING, reference section 7)
 *
 * Metrics and advice rules are rows of tables (docs/metrics.md lists every
 * one with its formula, threshold and source); one evaluator reads them.
 */
#ifndef DYNPMU_ANALYSIS_H
#define DYNPMU_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dynpmu/arch.h"
#include "dynpmu/error.h"

struct dpmu_mon_session;

/* ---- the sample table ------------------------------------------------------ */

enum dpmu_an_unit_kind {
	DPMU_AN_CPU = 0,        /* one core: "cpu3" */
	DPMU_AN_CLUSTER = 1,    /* one DSU cluster PMU: "cluster0" */
	DPMU_AN_CORE_TYPE = 2,  /* every measured core of one type: "Cortex-A55" */
	DPMU_AN_SYSTEM = 3,     /* everything measured, summed: "system" */
};

struct dpmu_an_count {
	char event[DPMU_NAME_MAX]; /* Arm's spelling; "amu:CPU_CYCLES" for an AMU count */
	bool supported;            /* false: the unit's PMU cannot count it (<not supported>) */
	uint64_t value;            /* as read: not scaled by enabled / running */
	uint64_t enabled_ns;
	uint64_t running_ns;       /* 0 with enabled_ns > 0: <not counted> */
};

struct dpmu_an_unit {
	enum dpmu_an_unit_kind kind;
	unsigned index;            /* cpu, cluster or core-type number; 0 for the system */
	char name[DPMU_NAME_MAX];  /* "cpu0", "cluster0", "Cortex-A55", "system" */
	bool little;               /* a LITTLE core, or a cluster / type of LITTLE cores only */
	uint64_t freq_hz;          /* the unit's clock (core or DSU); 0 unknown */
	uint32_t line_bytes;       /* cache line (coherency bandwidth); 0 unknown */
	uint32_t bus_bytes;        /* bytes per BUS_ACCESS beat; 0 unknown */
	size_t ncounts, cap;
	struct dpmu_an_count *counts;
};

struct dpmu_an_sample {
	uint64_t start_ns;         /* from the start of the run */
	uint64_t length_ns;        /* the interval (or the run) length */
	size_t nunits, cap;
	struct dpmu_an_unit *units;
};

/* A symbol and how much of a traffic it accounts for (hot-spot reports,
 * where the collector knows them). */
#define DPMU_AN_MAX_SYMBOLS 16
struct dpmu_an_symbol {
	char name[DPMU_NAME_MAX];
	uint64_t count;            /* e.g. snoop data transfers on its lines */
};

struct dpmu_an_table {
	char workload[256];
	bool intervals;            /* samples are consecutive intervals (-I), not one run */
	uint64_t const_freq_hz;    /* AMU constant clock (CNT_CYCLES), reference section 4 */
	uint64_t ref_freq_hz;      /* reference clock for normalisation (seed 001 section 5.2) */
	size_t nsymbols;
	struct dpmu_an_symbol symbols[DPMU_AN_MAX_SYMBOLS];
	size_t nsamples, cap;
	struct dpmu_an_sample *samples;
};

void dpmu_an_table_init(struct dpmu_an_table *t);
void dpmu_an_table_free(struct dpmu_an_table *t);

/* Append a sample / a unit / a count. The pointers returned stay valid
 * until the next append to the same container. A unit name or event name
 * that does not fit, or a count set twice, is DPMU_EINVAL. */
int dpmu_an_sample_add(struct dpmu_an_table *t, uint64_t start_ns, uint64_t length_ns,
		       struct dpmu_an_sample **out, struct dpmu_err *err);
int dpmu_an_unit_add(struct dpmu_an_sample *s, enum dpmu_an_unit_kind kind, unsigned index,
		     const char *name, uint64_t freq_hz, struct dpmu_an_unit **out,
		     struct dpmu_err *err);
int dpmu_an_count_add(struct dpmu_an_unit *u, const char *event, bool supported, uint64_t value,
		      uint64_t enabled_ns, uint64_t running_ns, struct dpmu_err *err);
/* Count by event name (case-insensitive), or NULL. */
const struct dpmu_an_count *dpmu_an_count_find(const struct dpmu_an_unit *u, const char *event);
const struct dpmu_an_unit *dpmu_an_unit_find(const struct dpmu_an_sample *s, const char *name);
/* When the table's last sample ends: the run's elapsed time. */
uint64_t dpmu_an_table_end_ns(const struct dpmu_an_table *t);
/* Add c into u's count of the same event, creating it: values, enabled and
 * running times add up, as perf's aggregation does. */
int dpmu_an_count_accumulate(struct dpmu_an_unit *u, const struct dpmu_an_count *c,
			     struct dpmu_err *err);

/* The value perf reports for a count multiplexed onto a counter part of the
 * time: value * enabled / running (reference section 7); value when running
 * equals enabled. */
double dpmu_an_count_estimate(const struct dpmu_an_count *c);
/* Seed 001 section 5.2: a count taken at cpu_hz expressed at ref_hz,
 * count * ref_freq / cpu_freq. */
double dpmu_an_normalise(double count, uint64_t ref_hz, uint64_t cpu_hz);

/* What dpmu_an_sample_aggregate adds to a sample of cpu and cluster units;
 * flags, any combination. */
enum dpmu_an_aggregation {
	DPMU_AN_AGG_CORE_TYPE = 1u << 0, /* a unit per core type: its cpu units summed */
	DPMU_AN_AGG_CLUSTER = 1u << 1,   /* each cluster unit adds its cores' cpu units
	                                  * (stat --per-cluster) */
	DPMU_AN_AGG_SYSTEM = 1u << 2,    /* one "system" unit: every cpu and cluster unit */
};

/* Aggregate the cpu and cluster units of sample s as `what` asks, summing
 * counts as perf does (dpmu_an_count_accumulate). Core-type and system sums
 * read the cluster units as they were, before DPMU_AN_AGG_CLUSTER adds the
 * cores' counts into them. `p` maps cores to types and clusters; LITTLE
 * follows dpmu_an_is_little. An unknown flag is DPMU_EINVAL. */
int dpmu_an_sample_aggregate(struct dpmu_an_sample *s, const struct dpmu_profile *p,
			     unsigned what, struct dpmu_err *err);
/* A core type is LITTLE when the profile has a faster one (the lowest-clocked
 * types of a big.LITTLE profile); a profile of one type has none. */
bool dpmu_an_is_little(const struct dpmu_profile *p, unsigned core_type);

/* Which counts of a monitor session a sample takes. */
enum dpmu_an_counts {
	DPMU_AN_RUN_COUNTS = 0,      /* the whole run: dpmu_mon_count_on, after dpmu_mon_run */
	DPMU_AN_INTERVAL_COUNTS = 1, /* one -I interval: dpmu_mon_interval_count, so only
	                              * inside the session's on_interval callback */
};

/* Append one sample (start_ns, length_ns) from monitor session s: one unit
 * per measured core (its core-PMU and AMU counts) and per measured cluster
 * (its cluster-PMU counts), each count in the order the events were asked
 * for. Frequencies, LITTLE, line size and bus width come from the profile;
 * the table's const_freq_hz too when it is 0. Core-type, cluster and system
 * rows are dpmu_an_sample_aggregate's. */
int dpmu_an_table_from_session(struct dpmu_an_table *t, const struct dpmu_mon_session *s,
			       const struct dpmu_profile *p, enum dpmu_an_counts which,
			       uint64_t start_ns, uint64_t length_ns, struct dpmu_err *err);

/* ---- metrics --------------------------------------------------------------- */

/*
 * A metric's formula is an expression over event names (a count of the
 * unit; "amu:NAME" for an AMU count), numbers, + - * / and parentheses, and
 * these variables of the sample and unit:
 *   time        sample length in seconds      freq        the unit's clock, Hz
 *   const_freq  AMU constant clock, Hz        ref_freq    reference clock, Hz
 *   line        cache line bytes              bus_width   bytes per BUS_ACCESS
 * The alternative formula (may be NULL) is tried when the first needs an
 * event that was not counted (dpmu_an_metric_eval): the DSU-120 numbering,
 * or a core type's own events.
 */
struct dpmu_an_metric {
	const char *name;          /* perf-style: "ipc", "l1d_cache_miss_ratio" */
	const char *formula;
	const char *alt;
	const char *unit;          /* "insn/cycle", "ratio", "MPKI", "%", "B/s", "Hz", "cycles" */
	const char *source;        /* reference section or seed section */
	const char *description;
};

const struct dpmu_an_metric *dpmu_an_metric_table(size_t *n);
const struct dpmu_an_metric *dpmu_an_metric_find(const char *name);

/* Parse "ipc,l2_cache_mpki": unknown names fail with DPMU_ENOENT and
 * "unknown metric 'ipcc' (did you mean ipc?)". */
int dpmu_an_metrics_parse(const char *list, const struct dpmu_an_metric **out, size_t cap,
			  size_t *n, struct dpmu_err *err);

/* The events a formula needs (alt = false: the first formula), in order of
 * first use, without duplicates; returns how many (at most cap are stored). */
size_t dpmu_an_metric_events(const struct dpmu_an_metric *m, bool alt,
			     char (*names)[DPMU_NAME_MAX], size_t cap);

/* Why a metric is not available: the first input of the formula that failed. */
enum dpmu_an_reason {
	DPMU_AN_AVAILABLE = 0,        /* it is */
	DPMU_AN_NOT_COUNTED = 1,      /* an event has no count on the unit */
	DPMU_AN_NOT_SUPPORTED = 2,    /* the unit's PMU cannot count an event */
	DPMU_AN_NEVER_ON_COUNTER = 3, /* an event was enabled but never on a counter */
	DPMU_AN_UNKNOWN_VARIABLE = 4, /* a variable (clock, line, bus width, time) is 0 */
	DPMU_AN_ZERO_DENOMINATOR = 5, /* a denominator is 0 */
	DPMU_AN_NOT_FINITE = 6,       /* the result is not a finite number */
};

struct dpmu_an_value {
	const struct dpmu_an_metric *metric;
	bool available;
	double value;
	double running;            /* lowest running / enabled fraction among its counts */
	enum dpmu_an_reason reason;
	char why[160];             /* not available: "L2D_CACHE_REFILL not counted on cpu0" */
};

/* Evaluate m on unit u of sample s. Returns 0 whether or not the metric is
 * available (see out->available, out->reason, out->why); a malformed formula
 * is DPMU_EINVAL. Counts are the perf estimates (dpmu_an_count_estimate).
 * The alternative formula is tried when the first lacks an event (reason
 * DPMU_AN_NOT_COUNTED, _NOT_SUPPORTED or _NEVER_ON_COUNTER), and its answer
 * taken unless it lacks an event too (DPMU_AN_NOT_COUNTED or
 * _NEVER_ON_COUNTER): then the first formula's reason stands. */
int dpmu_an_metric_eval(const struct dpmu_an_metric *m, const struct dpmu_an_table *t,
			const struct dpmu_an_sample *s, const struct dpmu_an_unit *u,
			struct dpmu_an_value *out, struct dpmu_err *err);

/* ---- advice ---------------------------------------------------------------- */

enum dpmu_an_op { DPMU_AN_LT = 0, DPMU_AN_GE = 1 };

struct dpmu_an_cond {
	const char *metric;        /* a row of the metric table */
	enum dpmu_an_op op;
	double threshold;          /* in the metric's own unit (ratios as 0..1) */
};

enum dpmu_an_rule_kind {
	DPMU_AN_RULE_METRICS = 0,  /* every condition holds */
	DPMU_AN_RULE_ZERO = 1,     /* an event that counts whenever the unit runs stayed 0 */
};

#define DPMU_AN_RULE_CONDS 2
struct dpmu_an_rule {
	const char *name;
	enum dpmu_an_rule_kind kind;
	bool little_only;          /* only on LITTLE units */
	struct dpmu_an_cond cond[DPMU_AN_RULE_CONDS]; /* metric NULL: unused */
	const char *zero_events;   /* DPMU_AN_RULE_ZERO: comma-separated */
	/* {unit}, {v0} {v1} (condition values), {t0} {t1} (thresholds),
	 * {events} (the zero counts), {symbols} (hottest known symbols). */
	const char *message;
	const char *source;
};

const struct dpmu_an_rule *dpmu_an_rule_table(size_t *n);

struct dpmu_an_advice {
	const struct dpmu_an_rule *rule;
	size_t sample;
	char unit[DPMU_NAME_MAX];
	double value[DPMU_AN_RULE_CONDS];
	char text[512];
};

/* Run every rule on every unit of sample `sample`; stores at most cap
 * firings in out and their number in *n. */
int dpmu_an_advise(const struct dpmu_an_table *t, size_t sample, struct dpmu_an_advice *out,
		   size_t cap, size_t *n, struct dpmu_err *err);

/* ---- the hot functions of a trace (trace_image.c) --------------------------- */

/* The functions a trace directory's decoded instructions ran in, the most
 * first: at most cap of them in out (*n), *total instructions in all. */
struct dpmu_tracedir;
struct dpmu_an_hot {
	char name[96];
	uint64_t insns;
};
int dpmu_an_trace_hot(const struct dpmu_tracedir *t, struct dpmu_an_hot *out, size_t cap, size_t *n,
		      uint64_t *total, struct dpmu_err *err);

/* ---- the monitor's timeline (timeline.c) ------------------------------------- */

struct dpmu_an_timeline_anomaly {
	uint64_t start_ns, end_ns;   /* end 0: lasted to the end */
	unsigned n;
	char cause[64];              /* "" : not diagnosed */
};
/* One core: its CPI at the end of each interval, its baseline (learned at
 * base_ns) and band, its anomalies. */
struct dpmu_an_timeline_core {
	char name[48];
	size_t n;
	const uint64_t *t_ns;
	const double *cpi;
	bool have_base;
	double base, band;
	uint64_t base_ns;
	size_t nanom;
	const struct dpmu_an_timeline_anomaly *anom;
};
/* An SVG with a panel per core. */
int dpmu_an_write_timeline(FILE *f, const char *title, const struct dpmu_an_timeline_core *cores,
			   size_t ncores, struct dpmu_err *err);

/* ---- the monitor's diagnosis (diagnose.c) ---------------------------------- */

/* The cause of an anomaly from the diagnosis groups' counts in sample
 * `sample`: on unit `cpu` (its PMU events and INST_RETIRED) and on unit
 * `cluster` (the DSU's; NULL: none). The metric that most exceeds its
 * threshold names it; `found` is false when none reaches its threshold
 * (the nearest is given). */
struct dpmu_an_cause {
	const char *group;         /* "memory hierarchy", "front end", "coherence" */
	const char *metric;
	double value, threshold;
	bool found;
	char text[256];
};
int dpmu_an_diagnose(const struct dpmu_an_table *t, size_t sample, const char *cpu,
		     const char *cluster, struct dpmu_an_cause *out, struct dpmu_err *err);

/* ---- writers --------------------------------------------------------------- */

struct dpmu_an_report {
	const struct dpmu_an_metric *const *metrics; /* metrics to print (may be 0) */
	size_t nmetrics;
	bool advice;               /* append the advice that fires */
	const char *sep;           /* CSV field separator (dpmu_an_write_csv) */
};

/* perf stat's table: right-aligned counts with thousands separators, the
 * running percentage "(75.00%)" below 100 %, <not counted> / <not supported>,
 * then the metrics and the advice. */
int dpmu_an_write_text(FILE *f, const struct dpmu_an_table *t, const struct dpmu_an_report *r,
		       struct dpmu_err *err);
/* perf stat -x SEP: [time,][unit,]value,unit,event,running ns,percentage
 * (docs/output.md). */
int dpmu_an_write_csv(FILE *f, const struct dpmu_an_table *t, const struct dpmu_an_report *r,
		      struct dpmu_err *err);
/* One JSON object per line: counts, metrics, advice (docs/output.md). */
int dpmu_an_write_json(FILE *f, const struct dpmu_an_table *t, const struct dpmu_an_report *r,
		       struct dpmu_err *err);
/* The metrics over time, one small-multiple panel per metric, one line per
 * unit (plain SVG 1.1 text). Needs at least one metric. */
int dpmu_an_write_svg(FILE *f, const struct dpmu_an_table *t, const struct dpmu_an_report *r,
		      struct dpmu_err *err);

/* 1234567 -> "1,234,567"; returns buf. */
const char *dpmu_an_thousands(uint64_t v, char *buf, size_t cap);

/* ---- profiles: where a perf.data's samples went (dynpmu report) ------------------
 *
 * Every figure weighs a sample by its period (the events it stands for),
 * as perf report does. Addresses are looked up in the files the file's
 * MMAP records name (symbols.c, libdwfl). */

struct dpmu_perf_file;
struct dpmu_an_syms;

/* What an address is: function, object, source line (file NULL: none). */
struct dpmu_an_loc {
	const char *sym, *dso, *file;
	int line;
	uint64_t sym_addr, sym_size;
};

int dpmu_an_syms_create(struct dpmu_an_syms **out, struct dpmu_err *err);
void dpmu_an_syms_destroy(struct dpmu_an_syms *s);
/* ip in process pid (never NULL: "[unknown]" parts when not found). */
const struct dpmu_an_loc *dpmu_an_syms_lookup(struct dpmu_an_syms *s,
					      const struct dpmu_perf_file *f, uint32_t pid,
					      uint64_t ip);
/* len bytes of code at addr of process pid, from its file: 0, or -1 when
 * the file does not hold them. */
int dpmu_an_syms_code(struct dpmu_an_syms *s, const struct dpmu_perf_file *f, uint32_t pid,
		      uint64_t addr, uint64_t len, uint8_t *out);

/* A function's address and size in a (non-position-independent) ELF
 * executable's symbol table: DPMU_EINVAL naming the file otherwise. */
int dpmu_an_elf_function(const char *path, const char *name, uint64_t *start, uint64_t *size,
			 struct dpmu_err *err);

struct dpmu_an_profile_opts {
	/* comma-separated keys, perf's: comm, dso, sym, tid, cpu, srcline
	 * (NULL: "comm,dso,sym") */
	const char *sort;
	bool callgraph;      /* each function's callers and callees */
	double percent_limit;/* rows below this share are left out */
};

/* perf report --stdio's table per event: share, samples, the keys. A bad
 * sort key is DPMU_EINVAL naming it. */
int dpmu_an_profile_report(FILE *out, const struct dpmu_perf_file *f, struct dpmu_an_syms *s,
			   const struct dpmu_an_profile_opts *o, struct dpmu_err *err);
/* Collapsed stacks of event `event` (the flame-graph tools' format): one
 * line per distinct stack, outermost function first, frames joined by
 * ';', a space and the events. */
int dpmu_an_profile_folded(FILE *out, const struct dpmu_perf_file *f, struct dpmu_an_syms *s,
			   unsigned event, struct dpmu_err *err);
/* The same stacks as a flame graph: SVG 1.1, a box per function per
 * stack, as wide as its share, each with its name and share. */
int dpmu_an_profile_flame(FILE *out, const struct dpmu_perf_file *f, struct dpmu_an_syms *s,
			  unsigned event, const char *title, struct dpmu_err *err);
/* perf annotate: the function's instructions (capstone), each with its
 * share of the function's samples of every event and its source line. An
 * unknown function is DPMU_ENOENT. */
int dpmu_an_profile_annotate(FILE *out, const struct dpmu_perf_file *f, struct dpmu_an_syms *s,
			     const char *symbol, struct dpmu_err *err);

#endif
