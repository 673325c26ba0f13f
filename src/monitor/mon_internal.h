/*
 * Shared by the monitor's files, not part of the API: session.c (the
 * schedule, start, poll, stop), sample.c (sampling on overflow) and
 * results.c (the counts).
 */
#ifndef DPMU_MONITOR_INTERNAL_H
#define DPMU_MONITOR_INTERNAL_H

#include "dynpmu/monitor.h"

/* AMU counter numbers in a dpmu_mon_pmu: group 0 as is, group 1 from 16. */
#define AMU_G1 16u

struct dpmu_mon_session {
	struct dpmu_drv *drv;          /* NULL with counting */
	const struct dpmu_mon_counting *counting; /* kernel-scheduled counters (counting.c) */
	const struct dpmu_profile *p;
	struct dpmu_mon_events ev;
	struct dpmu_mon_options opt;
	uint64_t cores, clusters;
	struct dpmu_mon_pmu core[DPMU_MAX_CORES];
	struct dpmu_mon_pmu amu[DPMU_MAX_CORES];
	struct dpmu_mon_pmu cluster[DPMU_MAX_CLUSTERS];
	uint64_t t_start, t_stop;
	uint64_t next_rotate, next_interval, interval_start;
	unsigned intervals;
	bool rotating;         /* some PMU multiplexes */
	bool has_amu;
	bool in_interval;      /* inside on_interval: interval counts readable */
	uint64_t interval_len;
	bool started, stopped;
};

/* The PMUs of a session, in one loop. */
static inline struct dpmu_mon_pmu *pmu_at(struct dpmu_mon_session *s, unsigned k)
{
	if (k < DPMU_MAX_CORES)
		return &s->core[k];
	k -= DPMU_MAX_CORES;
	if (k < DPMU_MAX_CORES)
		return &s->amu[k];
	k -= DPMU_MAX_CORES;
	return k < DPMU_MAX_CLUSTERS ? &s->cluster[k] : NULL;
}
#define NPMUS (2 * DPMU_MAX_CORES + DPMU_MAX_CLUSTERS)

/* ---- kernel-scheduled counters (counting.c) ---- */

/* Read every opened event: totals, running and enabled times up to now. */
int dpmu_mon_counting_read(struct dpmu_mon_session *s, uint64_t now, struct dpmu_err *err);

/* ---- sampling (sample.c) ---- */

/* With on_sample set: the options and events a sampling session needs
 * (after the schedule). 0 otherwise. */
int dpmu_mon_sample_check(const struct dpmu_mon_session *s, struct dpmu_err *err);
/* When event i samples on counter c of pmu: its first period set up at
 * `now`, *preset the value to write to the counter; false when it does
 * not sample. */
bool dpmu_mon_sample_arm(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, unsigned i,
			 unsigned c, uint64_t now, uint64_t *preset);
/* Sampled counter c overflowed and was read as `value` (credited): the
 * sample goes to on_sample, *preset is the value that arms the next. */
int dpmu_mon_sample_overflow(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, unsigned c,
			     uint64_t value, uint64_t now, uint64_t *preset, struct dpmu_err *err);

#endif
