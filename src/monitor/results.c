/*
 * A session's results: per event and unit the count with perf's enabled
 * and running times, and what a report asks of the schedule.
 */
#include <string.h>

#include "monitor/mon_internal.h"

uint64_t dpmu_mon_scaled(const struct dpmu_mon_count *c)
{
	if (!c->supported || c->running_ns == 0)
		return 0;
	if (c->running_ns >= c->enabled_ns)
		return c->value;
	long double v = (long double)c->value * (long double)c->enabled_ns /
			(long double)c->running_ns;
	return (uint64_t)(v + 0.5L);
}

const struct dpmu_mon_events *dpmu_mon_session_events(const struct dpmu_mon_session *s)
{
	return &s->ev;
}

uint64_t dpmu_mon_session_cores(const struct dpmu_mon_session *s)
{
	return s->cores;
}

uint64_t dpmu_mon_session_clusters(const struct dpmu_mon_session *s)
{
	return s->clusters;
}

unsigned dpmu_mon_session_intervals(const struct dpmu_mon_session *s)
{
	return s->intervals;
}

const struct dpmu_mon_pmu *dpmu_mon_session_pmu(const struct dpmu_mon_session *s,
						enum dpmu_mon_target t, unsigned unit)
{
	/* software events are counted per core, beside its PMU's */
	if (t == DPMU_MON_CLUSTER)
		return unit < DPMU_MAX_CLUSTERS && s->cluster[unit].used ? &s->cluster[unit] : NULL;
	if (t == DPMU_MON_AMU)
		return unit < DPMU_MAX_CORES && s->amu[unit].used ? &s->amu[unit] : NULL;
	return unit < DPMU_MAX_CORES && s->core[unit].used ? &s->core[unit] : NULL;
}

static int count_of(const struct dpmu_mon_session *s, unsigned i, unsigned unit, bool interval,
		    struct dpmu_mon_count *out)
{
	memset(out, 0, sizeof *out);
	if (i >= s->ev.n)
		return DPMU_EINVAL;
	const struct dpmu_mon_pmu *pmu = dpmu_mon_session_pmu(s, s->ev.ev[i].target, unit);
	if (!pmu)
		return DPMU_EINVAL;
	if (!pmu->counted[i])
		return 0;
	out->supported = true;
	if (interval) {
		out->value = pmu->total[i] - pmu->mark_total[i];
		out->running_ns = pmu->running[i] - pmu->mark_running[i];
		out->enabled_ns = s->counting ? pmu->enabled[i] - pmu->mark_enabled[i]
					      : s->interval_len;
	} else {
		out->value = pmu->total[i];
		out->running_ns = pmu->running[i];
		/* perf's time_enabled: a task's events are enabled while it runs */
		out->enabled_ns = s->counting ? pmu->enabled[i] : s->t_stop - s->t_start;
	}
	if (out->running_ns > out->enabled_ns)
		out->running_ns = out->enabled_ns;
	return 0;
}

int dpmu_mon_count_on(const struct dpmu_mon_session *s, unsigned i, unsigned unit,
		      struct dpmu_mon_count *out)
{
	return count_of(s, i, unit, false, out);
}

int dpmu_mon_interval_count(const struct dpmu_mon_session *s, unsigned i, unsigned unit,
			    struct dpmu_mon_count *out)
{
	if (!s->in_interval) {
		memset(out, 0, sizeof *out);
		return DPMU_ESTATE;
	}
	return count_of(s, i, unit, true, out);
}

void dpmu_mon_count_total(const struct dpmu_mon_session *s, unsigned i,
			  struct dpmu_mon_count *out)
{
	memset(out, 0, sizeof *out);
	if (i >= s->ev.n)
		return;
	unsigned nunits = s->ev.ev[i].target == DPMU_MON_CLUSTER ? DPMU_MAX_CLUSTERS : DPMU_MAX_CORES;
	for (unsigned u = 0; u < nunits; u++) {
		struct dpmu_mon_count c;
		if (dpmu_mon_count_on(s, i, u, &c) == 0 && c.supported) {
			out->supported = true;
			out->value += c.value;
			out->enabled_ns += c.enabled_ns;
			out->running_ns += c.running_ns;
		}
	}
}
