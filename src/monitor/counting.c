/*
 * Sessions over kernel-scheduled counters (include/dynpmu/monitor.h,
 * struct dpmu_mon_counting): the perf backend. The kernel's PMU driver
 * owns the registers, so where session.c schedules groups onto counters
 * and rotates them, this file only opens every event on every unit and
 * reads back perf's value, time_enabled and time_running (reference
 * section 7). The rest of the session (intervals, results) is session.c's
 * and results.c's, unchanged: the same counts reach the same reports.
 */
#include <stdlib.h>
#include <string.h>

#include "dynpmu/backend.h"
#include "dynpmu/monitor.h"

#include "monitor/mon_internal.h"

/* Open the events of `target` on one unit; a refusal of the unit's PMU
 * (DPMU_ENOTSUP) leaves the event uncounted there. */
static int open_unit(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, const int32_t *codes,
		     struct dpmu_err *err)
{
	const struct dpmu_mon_counting *c = s->counting;
	for (unsigned i = 0; i < s->ev.n; i++) {
		pmu->counter[i] = DPMU_MON_UNSCHEDULED;
		const struct dpmu_mon_event *e = &s->ev.ev[i];
		bool here = pmu->target == DPMU_MON_CLUSTER
				    ? e->target == DPMU_MON_CLUSTER
				    : e->target == DPMU_MON_CORE || e->target == DPMU_MON_SOFTWARE;
		if (!here || codes[i] == DPMU_MON_NO_CODE)
			continue;
		int rc = c->open(c->ctx, e, i, pmu->cpu, (uint32_t)codes[i], s->opt.long_counters, err);
		if (rc == DPMU_ENOTSUP)
			continue;
		if (rc)
			return rc;
		pmu->counted[i] = true;
		pmu->code[i] = (uint16_t)codes[i];
	}
	return 0;
}

int dpmu_mon_session_create_counting(const struct dpmu_mon_counting *c,
				     const struct dpmu_profile *p, const struct dpmu_mon_events *ev,
				     uint64_t cores, const struct dpmu_mon_options *opt,
				     struct dpmu_mon_session **out, struct dpmu_err *err)
{
	*out = NULL;
	if (!c || !p || !ev)
		return dpmu_err_set(err, DPMU_EINVAL, "monitor session: no backend, profile or events");
	if (opt && (opt->on_sample || opt->sample_period || opt->sample_freq))
		return dpmu_err_set(err, DPMU_ENOTSUP,
				    "the %s backend counts; it does not sample (record runs on the "
				    "simulation)",
				    c->name);
	for (unsigned i = 0; i < ev->n; i++)
		if (ev->ev[i].target == DPMU_MON_AMU)
			/* Linux reads the AMU itself (frequency invariance) and
			 * gives user space no interface to it (docs/hardware.md) */
			return dpmu_err_set(err, DPMU_ENOTSUP,
					    "%s: the %s backend cannot reach the Activity Monitors: "
					    "Linux does not expose the AMU to user space",
					    ev->ev[i].name, c->name);
	struct dpmu_mon_session *s = calloc(1, sizeof *s);
	if (!s)
		return dpmu_err_set(err, DPMU_ENOMEM, "monitor session: out of memory");
	s->counting = c;
	s->p = p;
	s->ev = *ev;
	if (opt)
		s->opt = *opt;
	int rc = 0;
	int32_t codes[DPMU_MON_MAX_EVENTS];
	unsigned ncores = dpmu_profile_ncores(p);
	for (unsigned core = 0; !rc && core < ncores && core < DPMU_MAX_CORES; core++) {
		if (!(cores >> core & 1))
			continue;
		unsigned cl, idx;
		const struct dpmu_core_type *t = dpmu_profile_core(p, core, &cl, &idx);
		if (!t) {
			rc = dpmu_err_set(err, DPMU_EINVAL, "monitor session: no cpu%u", core);
			break;
		}
		unsigned ti = (unsigned)(t - p->core_types);
		struct dpmu_mon_pmu *pmu = &s->core[core];
		pmu->used = true;
		pmu->target = DPMU_MON_CORE;
		pmu->cpu = core;
		pmu->width = 64; /* the kernel widens every count to 64 bits */
		for (unsigned i = 0; i < ev->n; i++)
			codes[i] = ev->ev[i].code[ti];
		rc = open_unit(s, pmu, codes, err);
		s->cores |= UINT64_C(1) << core;
		s->clusters |= UINT64_C(1) << cl;
	}
	for (unsigned cl = 0; !rc && cl < p->nclusters && cl < DPMU_MAX_CLUSTERS; cl++) {
		if (!(s->clusters >> cl & 1))
			continue;
		struct dpmu_mon_pmu *pmu = &s->cluster[cl];
		pmu->used = true;
		pmu->target = DPMU_MON_CLUSTER;
		pmu->cpu = cl;
		pmu->width = 64;
		for (unsigned i = 0; i < ev->n; i++)
			codes[i] = ev->ev[i].cluster_code[cl];
		rc = open_unit(s, pmu, codes, err);
	}
	if (rc) {
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int dpmu_mon_counting_read(struct dpmu_mon_session *s, uint64_t now, struct dpmu_err *err)
{
	(void)now;
	const struct dpmu_mon_counting *c = s->counting;
	for (unsigned k = 0; k < NPMUS; k++) {
		struct dpmu_mon_pmu *pmu = pmu_at(s, k);
		if (!pmu->used)
			continue;
		for (unsigned i = 0; i < s->ev.n; i++) {
			if (!pmu->counted[i])
				continue;
			int rc = c->read(c->ctx, i, pmu->cpu, &pmu->total[i], &pmu->enabled[i],
					 &pmu->running[i], err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int dpmu_mon_session_for_backend(struct dpmu_backend *b, const struct dpmu_mon_events *ev,
				 const struct dpmu_mon_options *opt,
				 struct dpmu_mon_session **out, struct dpmu_err *err)
{
	if (b->counting)
		return dpmu_mon_session_create_counting(b->counting, b->profile, ev, b->cores, opt,
							out, err);
	return dpmu_mon_session_create_opts(b->drv, b->profile, ev, b->cores, opt, out, err);
}
