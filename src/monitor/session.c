/*
 * A monitoring session: events scheduled onto the counters of every
 * measured core PMU and cluster PMU, programmed, polled and read back
 * through the driver only (DESIGN.md "Data flow": the monitor touches
 * counters only through the driver).
 */
#include <stdlib.h>
#include <string.h>

#include "dynpmu/backend.h"
#include "dynpmu/monitor.h"

struct dpmu_mon_session {
	struct dpmu_drv *drv;
	const struct dpmu_profile *p;
	struct dpmu_mon_events ev;
	uint64_t cores, clusters;
	struct dpmu_mon_pmu core[DPMU_MAX_CORES];
	struct dpmu_mon_pmu cluster[DPMU_MAX_CLUSTERS];
	uint64_t t_start, t_stop;
	bool started, stopped;
};

/* CPU_CYCLES on a core PMU and CYCLES (same number, 0x11) on the DSU go on
 * the dedicated cycle counter (PMCCNTR_EL0, CLUSTERPMCCNTR_EL1): it leaves
 * the event counters free and is 64 bits wide. */
static bool is_cycles(int32_t code)
{
	return code == DPMU_EV_CPU_CYCLES;
}

/* Place the events of one PMU; returns how many event counters they need. */
static unsigned schedule(struct dpmu_mon_pmu *pmu, const struct dpmu_mon_events *ev,
			 enum dpmu_mon_target target, const int32_t *codes,
			 bool (*implemented)(void *, uint16_t), void *ictx)
{
	unsigned next = 0;
	bool cycle_used = false;
	for (unsigned i = 0; i < ev->n; i++) {
		pmu->counter[i] = DPMU_MON_UNSCHEDULED;
		if (ev->ev[i].target != target)
			continue;
		int32_t code = codes[i];
		if (code == DPMU_MON_NO_CODE || !implemented(ictx, (uint16_t)code))
			continue;
		if (is_cycles(code) && !cycle_used) {
			pmu->counter[i] = DPMU_DRV_CYCLE;
			pmu->mask |= DPMU_DRV_CYCLE_BIT;
			cycle_used = true;
			continue;
		}
		if (next < pmu->nslots && next < DPMU_DRV_MAX_COUNTERS) {
			pmu->counter[i] = (uint8_t)next;
			pmu->mask |= 1u << next;
		}
		next++;
	}
	return next;
}

struct impl_ctx {
	struct dpmu_drv *drv;
	unsigned unit;
};

/* What PMCEID advertises (the driver's discovery); events outside the
 * PMCEID ranges are taken on the catalog's word. */
static bool core_implements(void *ctx, uint16_t code)
{
	struct impl_ctx *c = ctx;
	return dpmu_drv_cpu_event(c->drv, c->unit, code) != DPMU_DRV_EVENT_NO;
}

static bool cluster_implements(void *ctx, uint16_t code)
{
	struct impl_ctx *c = ctx;
	return dpmu_drv_cluster_event(c->drv, c->unit, code) != DPMU_DRV_EVENT_NO;
}

static int too_many(const char *what, unsigned unit, unsigned need, unsigned have,
		    const struct dpmu_mon_events *ev, bool cluster, struct dpmu_err *err)
{
	return dpmu_err_set(err, DPMU_EBUSY,
			    "too many events for the %s PMU of %s%u: %u need event counters, it has "
			    "%u (%s goes on the cycle counter); multiplexing is not supported yet, "
			    "so measure at most %u at a time (%u events requested)",
			    what, cluster ? "cluster" : "cpu", unit, need, have,
			    cluster ? "CYCLES" : "CPU_CYCLES", have, ev->n);
}

int dpmu_mon_session_create(struct dpmu_drv *drv, const struct dpmu_profile *p,
			    const struct dpmu_mon_events *ev, uint64_t cores,
			    struct dpmu_mon_session **out, struct dpmu_err *err)
{
	*out = NULL;
	if (!drv || !p || !ev)
		return dpmu_err_set(err, DPMU_EINVAL, "monitor session: no driver, profile or events");
	struct dpmu_mon_session *s = calloc(1, sizeof *s);
	if (!s)
		return dpmu_err_set(err, DPMU_ENOMEM, "monitor session: out of memory");
	s->drv = drv;
	s->p = p;
	s->ev = *ev;
	unsigned ncores = dpmu_drv_ncpus(drv);
	int32_t codes[DPMU_MON_MAX_EVENTS];
	for (unsigned core = 0; core < ncores && core < DPMU_MAX_CORES; core++) {
		if (!(cores >> core & 1))
			continue;
		const struct dpmu_drv_cpuinfo *ci = dpmu_drv_cpuinfo(drv, core);
		unsigned cl, idx;
		const struct dpmu_core_type *t = dpmu_profile_core(p, core, &cl, &idx);
		if (!ci || !t) {
			free(s);
			return dpmu_err_set(err, DPMU_EINVAL, "monitor session: no cpu%u", core);
		}
		unsigned ti = (unsigned)(t - p->core_types);
		struct dpmu_mon_pmu *pmu = &s->core[core];
		pmu->used = true;
		pmu->cpu = core;
		pmu->nslots = ci->pmu_n;
		pmu->width = t->pmuv3p5 ? 64 : 32;
		for (unsigned i = 0; i < ev->n; i++)
			codes[i] = ev->ev[i].code[ti];
		struct impl_ctx ic = {drv, core};
		unsigned need = schedule(pmu, ev, DPMU_MON_CORE, codes, core_implements, &ic);
		if (need > pmu->nslots) {
			int rc = too_many(t->name, core, need, pmu->nslots, ev, false, err);
			free(s);
			return rc;
		}
		s->cores |= UINT64_C(1) << core;
		s->clusters |= UINT64_C(1) << cl;
	}
	for (unsigned cl = 0; cl < dpmu_drv_nclusters(drv) && cl < DPMU_MAX_CLUSTERS; cl++) {
		if (!(s->clusters >> cl & 1))
			continue;
		const struct dpmu_drv_clusterinfo *ci = dpmu_drv_clusterinfo(drv, cl);
		struct dpmu_mon_pmu *pmu = &s->cluster[cl];
		pmu->used = true;
		pmu->cpu = cl;
		pmu->nslots = ci ? ci->pmu_n : 0;
		pmu->width = cl < p->nclusters && p->clusters[cl].counters64 ? 64 : 32;
		for (unsigned i = 0; i < ev->n; i++)
			codes[i] = ev->ev[i].cluster_code[cl];
		struct impl_ctx ic = {drv, cl};
		unsigned need = schedule(pmu, ev, DPMU_MON_CLUSTER, codes, cluster_implements, &ic);
		if (need > pmu->nslots) {
			int rc = too_many("DSU", cl, need, pmu->nslots, ev, true, err);
			free(s);
			return rc;
		}
	}
	*out = s;
	return 0;
}

void dpmu_mon_session_destroy(struct dpmu_mon_session *s)
{
	free(s);
}

static int start_core(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, struct dpmu_err *err)
{
	unsigned cpu = pmu->cpu;
	/* LC: the cycle counter overflows at 64 bits, so a widened read of it
	 * never needs a wrap correction (reference section 1, PMCR.LC). */
	int rc = dpmu_drv_pmu_reset(s->drv, cpu, DPMU_DRV_PMCR_LC, err);
	for (unsigned i = 0; !rc && i < s->ev.n; i++) {
		unsigned c = pmu->counter[i];
		if (c == DPMU_MON_UNSCHEDULED)
			continue;
		if (c == DPMU_DRV_CYCLE) {
			rc = dpmu_drv_pmu_program_cycles(s->drv, cpu, DPMU_DRV_EL01, err);
		} else {
			const struct dpmu_core_type *t = dpmu_profile_core(s->p, cpu, NULL, NULL);
			unsigned ti = (unsigned)(t - s->p->core_types);
			rc = dpmu_drv_pmu_program(s->drv, cpu, c, (uint16_t)s->ev.ev[i].code[ti],
						  DPMU_DRV_EL01, err);
		}
	}
	for (unsigned c = 0; !rc && c < 32; c++)
		if (pmu->mask >> c & 1)
			rc = dpmu_drv_pmu_read(s->drv, cpu, c, &pmu->last[c], err);
	if (!rc)
		rc = dpmu_drv_pmu_start(s->drv, cpu, pmu->mask, err);
	if (!rc)
		rc = dpmu_drv_pmu_enable(s->drv, cpu, true, err);
	return rc;
}

static int start_cluster(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu,
			 struct dpmu_err *err)
{
	unsigned cl = pmu->cpu;
	int rc = dpmu_drv_cluster_reset(s->drv, cl, err);
	for (unsigned i = 0; !rc && i < s->ev.n; i++) {
		unsigned c = pmu->counter[i];
		/* The DSU cycle counter has no event type to program. */
		if (c == DPMU_MON_UNSCHEDULED || c == DPMU_DRV_CYCLE)
			continue;
		rc = dpmu_drv_cluster_program(s->drv, cl, c, (uint16_t)s->ev.ev[i].cluster_code[cl],
					      err);
	}
	for (unsigned c = 0; !rc && c < 32; c++)
		if (pmu->mask >> c & 1)
			rc = dpmu_drv_cluster_read(s->drv, cl, c, &pmu->last[c], err);
	if (!rc)
		rc = dpmu_drv_cluster_start(s->drv, cl, pmu->mask, err);
	if (!rc)
		rc = dpmu_drv_cluster_enable(s->drv, cl, true, err);
	return rc;
}

int dpmu_mon_start(struct dpmu_mon_session *s, uint64_t now_ns, struct dpmu_err *err)
{
	if (s->started)
		return dpmu_err_set(err, DPMU_ESTATE, "monitor session already started");
	for (unsigned c = 0; c < DPMU_MAX_CORES; c++) {
		if (!s->core[c].used)
			continue;
		int rc = start_core(s, &s->core[c], err);
		if (rc)
			return rc;
	}
	for (unsigned c = 0; c < DPMU_MAX_CLUSTERS; c++) {
		if (!s->cluster[c].used)
			continue;
		int rc = start_cluster(s, &s->cluster[c], err);
		if (rc)
			return rc;
	}
	s->started = true;
	s->t_start = s->t_stop = now_ns;
	return 0;
}

/* Add what counter c counted since the last read, modulo its width. */
static void accumulate(struct dpmu_mon_pmu *pmu, unsigned nev, unsigned c, uint64_t now)
{
	unsigned bits = c == DPMU_DRV_CYCLE ? 64 : pmu->width;
	uint64_t m = bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
	uint64_t delta = (now - pmu->last[c]) & m;
	pmu->last[c] = now;
	for (unsigned i = 0; i < nev; i++)
		if (pmu->counter[i] == c) {
			pmu->total[i] += delta;
			return;
		}
}

int dpmu_mon_poll(struct dpmu_mon_session *s, uint64_t now_ns, struct dpmu_err *err)
{
	if (!s->started || s->stopped)
		return dpmu_err_set(err, DPMU_ESTATE, "monitor session is not running");
	for (unsigned u = 0; u < DPMU_MAX_CORES; u++) {
		struct dpmu_mon_pmu *pmu = &s->core[u];
		for (unsigned c = 0; pmu->used && c < 32; c++) {
			if (!(pmu->mask >> c & 1))
				continue;
			uint64_t v;
			int rc = dpmu_drv_pmu_read(s->drv, pmu->cpu, c, &v, err);
			if (rc)
				return rc;
			accumulate(pmu, s->ev.n, c, v);
		}
	}
	for (unsigned u = 0; u < DPMU_MAX_CLUSTERS; u++) {
		struct dpmu_mon_pmu *pmu = &s->cluster[u];
		for (unsigned c = 0; pmu->used && c < 32; c++) {
			if (!(pmu->mask >> c & 1))
				continue;
			uint64_t v;
			int rc = dpmu_drv_cluster_read(s->drv, pmu->cpu, c, &v, err);
			if (rc)
				return rc;
			accumulate(pmu, s->ev.n, c, v);
		}
	}
	s->t_stop = now_ns;
	return 0;
}

int dpmu_mon_stop(struct dpmu_mon_session *s, uint64_t now_ns, struct dpmu_err *err)
{
	int rc = dpmu_mon_poll(s, now_ns, err);
	if (rc)
		return rc;
	for (unsigned u = 0; u < DPMU_MAX_CORES && !rc; u++)
		if (s->core[u].used)
			rc = dpmu_drv_pmu_enable(s->drv, u, false, err);
	for (unsigned u = 0; u < DPMU_MAX_CLUSTERS && !rc; u++)
		if (s->cluster[u].used)
			rc = dpmu_drv_cluster_enable(s->drv, u, false, err);
	s->stopped = true;
	return rc;
}

static int run_tick(void *ctx, uint64_t now_ns, struct dpmu_err *err)
{
	return dpmu_mon_poll(ctx, now_ns, err);
}

int dpmu_mon_run(struct dpmu_mon_session *s, struct dpmu_backend *b, struct dpmu_err *err)
{
	int rc = dpmu_mon_start(s, b->ops->time_ns(b), err);
	if (rc)
		return rc;
	rc = b->ops->run(b, DPMU_MON_POLL_INSNS, run_tick, s, err);
	if (rc)
		return rc;
	return dpmu_mon_stop(s, b->ops->time_ns(b), err);
}

/* ---- results ----------------------------------------------------------------- */

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

const struct dpmu_mon_pmu *dpmu_mon_session_pmu(const struct dpmu_mon_session *s,
						enum dpmu_mon_target t, unsigned unit)
{
	if (t == DPMU_MON_CLUSTER)
		return unit < DPMU_MAX_CLUSTERS && s->cluster[unit].used ? &s->cluster[unit] : NULL;
	return unit < DPMU_MAX_CORES && s->core[unit].used ? &s->core[unit] : NULL;
}

int dpmu_mon_count_on(const struct dpmu_mon_session *s, unsigned i, unsigned unit,
		      struct dpmu_mon_count *out)
{
	memset(out, 0, sizeof *out);
	if (i >= s->ev.n)
		return DPMU_EINVAL;
	const struct dpmu_mon_pmu *pmu = dpmu_mon_session_pmu(s, s->ev.ev[i].target, unit);
	if (!pmu)
		return DPMU_EINVAL;
	if (pmu->counter[i] == DPMU_MON_UNSCHEDULED)
		return 0;
	out->supported = true;
	out->value = pmu->total[i];
	out->enabled_ns = out->running_ns = s->t_stop - s->t_start;
	return 0;
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
			out->enabled_ns = c.enabled_ns;
			out->running_ns = c.running_ns;
		}
	}
}
