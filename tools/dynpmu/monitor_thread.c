/*
 * dynpmu monitor's threads: each thread of the program is watched with
 * its own baseline, as seed 003's framework keeps each task's CPI
 * (section 5.3). The AMU counts per core, so a thread's counts are its
 * core's between the thread switches there: the backend calls
 * dpmu_mon_thread_switched at each (dpmu_backend_ops.on_switch, where a
 * kernel's context switch saves a task's counters), and each interval the
 * thread still running is charged up to the interval's end. A thread that
 * retired nothing in an interval is not judged, as a core is not. A
 * program's only thread is its core's series: its log lines, which would
 * repeat the core's, are written once the program has a second thread (the
 * endpoint has its series all the same).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor.h"
#include "dynpmu/driver.h"

/* Thread `id`'s state, made (its baseline from --baseline, or learned) on
 * first sight. */
static int thread_get(struct mon *m, int id, struct thread_mon **out, struct dpmu_err *err)
{
	if ((size_t)id >= m->capthr) {
		size_t cap = m->capthr ? m->capthr : 8;
		while (cap <= (size_t)id)
			cap *= 2;
		struct thread_mon *n = realloc(m->thr, cap * sizeof *n);
		if (!n)
			return dpmu_err_set(err, DPMU_ENOMEM, "out of memory keeping the threads");
		memset(n + m->capthr, 0, (cap - m->capthr) * sizeof *n);
		m->thr = n;
		m->capthr = cap;
	}
	struct thread_mon *t = &m->thr[id];
	if (!t->used) {
		struct dpmu_mon_baseline base;
		int have = m->o->load ? dpmu_mon_baseline_load("--baseline", m->o->load, "threads",
							       "thread", (unsigned)id, &base, err)
				      : 1;
		if (have < 0)
			return have;
		int rc = dpmu_mon_watch_init(&t->w, &m->o->w, have == 0 ? &base : NULL, err);
		if (rc)
			return rc;
		t->used = true;
		t->id = id;
		m->nthreads++;
	}
	*out = t;
	return 0;
}

int dpmu_mon_threads_charge(struct mon *m, struct core_mon *c, struct dpmu_err *err)
{
	uint64_t v[4];
	for (unsigned k = 0; k < 4; k++) {
		int rc = dpmu_drv_amu_read(m->b->drv, c->cpu, 0, k, &v[k], err);
		if (rc)
			return rc;
	}
	if (c->thread >= 0 && (size_t)c->thread < m->capthr && m->thr[c->thread].used) {
		struct thread_mon *t = &m->thr[c->thread];
		for (unsigned k = 0; k < 4; k++) {
			t->acc[k] += v[k] - c->at_switch[k];
			t->total[k] += v[k] - c->at_switch[k];
		}
	}
	memcpy(c->at_switch, v, sizeof v);
	return 0;
}

int dpmu_mon_thread_switched(void *ctx, unsigned cpu, int prev, int next, uint64_t now,
			     struct dpmu_err *err)
{
	(void)prev; /* the core's own record says who ran: c->thread */
	(void)now;
	struct mon *m = ctx;
	if (cpu >= DPMU_MAX_CORES || !m->core[cpu].used)
		return 0;
	struct core_mon *c = &m->core[cpu];
	int rc = dpmu_mon_threads_charge(m, c, err);
	struct thread_mon *t = NULL;
	if (!rc && next >= 0 && !(rc = thread_get(m, next, &t, err)))
		t->cpu = cpu;
	c->thread = next;
	return rc;
}

int dpmu_mon_threads_interval(struct mon *m, uint64_t now, struct dpmu_err *err)
{
	for (unsigned i = 0; i < DPMU_MAX_CORES; i++) {
		if (!m->core[i].used)
			continue;
		int rc = dpmu_mon_threads_charge(m, &m->core[i], err);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < m->capthr; i++) {
		struct thread_mon *t = &m->thr[i];
		uint64_t cyc = t->acc[AMU_CYCLES], ins = t->acc[AMU_INSTS], stl = t->acc[AMU_STALL_MEM];
		memset(t->acc, 0, sizeof t->acc);
		if (!t->used || !dpmu_mon_watch_judges(&t->w, ins, cyc))
			continue;
		t->intervals++;
		t->judged = true;
		t->cpi = (double)cyc / (double)ins;
		t->stall = (double)stl / (double)cyc;
		enum dpmu_mon_watch_event e = dpmu_mon_watch_step(&t->w, t->cpi, t->stall);
		if (e == DPMU_MON_ANOMALY_START || e == DPMU_MON_ANOMALY_CHANGE) {
			t->anomaly = ++m->thread_anomalies;
			t->anomaly_ns = now;
		}
		dpmu_mon_watch_log(m, now, &m->core[t->cpu], t->id, e, &t->w, t->anomaly,
				   t->anomaly_ns, t->cpi, t->stall);
		if (e == DPMU_MON_ANOMALY_END)
			t->anomaly = 0;
	}
	return 0;
}

void dpmu_mon_threads_summary(struct mon *m, uint64_t end)
{
	for (size_t i = 0; m->nthreads > 1 && i < m->capthr; i++) {
		const struct thread_mon *t = &m->thr[i];
		if (!t->used || !t->intervals)
			continue;
		bool base = t->w.state != DPMU_MON_LEARNING;
		char text[300], json[600];
		snprintf(text, sizeof text, "thread %d: summary: %" PRIu64 " intervals, %s, %u anomal%s",
			 t->id, t->intervals, base ? "baseline learned" : "no baseline (too few intervals)",
			 t->w.anomalies, t->w.anomalies == 1 ? "y" : "ies");
		snprintf(json, sizeof json,
			 "\"thread\":%d,\"intervals\":%" PRIu64 ",\"anomalies\":%u,\"baseline\":%s,"
			 "\"cpi\":%.17g,\"stall\":%.17g,\"amu\":{\"CPU_CYCLES\":%" PRIu64
			 ",\"CNT_CYCLES\":%" PRIu64 ",\"INST_RETIRED\":%" PRIu64
			 ",\"STALL_BACKEND_MEM\":%" PRIu64 "}",
			 t->id, t->intervals, t->w.anomalies, base ? "true" : "false", t->cpi, t->stall,
			 t->total[0], t->total[1], t->total[2], t->total[3]);
		dpmu_mon_log(m, end, &m->core[t->cpu], "thread_summary", json, text);
	}
}

void dpmu_mon_threads_save(const struct mon *m, FILE *f)
{
	fprintf(f, ",\"threads\":[");
	bool first = true;
	for (size_t i = 0; i < m->capthr; i++) {
		const struct thread_mon *t = &m->thr[i];
		if (!t->used || t->w.state == DPMU_MON_LEARNING)
			continue;
		const struct dpmu_mon_baseline *b = &t->w.base;
		fprintf(f, "%s{\"thread\":%d,\"cpu\":%u,\"cpi\":%.17g,\"cpi_mad\":%.17g,\"stall\":%.17g,"
			   "\"stall_mad\":%.17g,\"intervals\":%u}",
			first ? "" : ",", t->id, t->cpu, b->cpi, b->cpi_mad, b->stall, b->stall_mad,
			b->intervals);
		first = false;
	}
	fprintf(f, "]");
}

size_t dpmu_mon_threads_watch(const struct mon *m, struct dpmu_om_watch *w, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < m->capthr && n < cap; i++) {
		const struct thread_mon *t = &m->thr[i];
		if (!t->used)
			continue;
		struct dpmu_om_watch *u = &w[n++];
		memset(u, 0, sizeof *u);
		u->cpu = t->cpu;
		u->thread = t->id;
		memcpy(u->amu, t->total, sizeof u->amu);
		dpmu_mon_om_unit(u, &t->w, t->judged, t->cpi, t->stall);
	}
	return n;
}
