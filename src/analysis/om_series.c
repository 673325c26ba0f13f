/*
 * dynpmu's OpenMetrics series (docs/openmetrics.md): what an analysis
 * sample of cpu and cluster units becomes on /metrics. The names are kept
 * here, in one place, so that every command publishing them (stat -I, the
 * monitor) publishes the same series.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynpmu/openmetrics.h"

int dpmu_om_totals_add(struct dpmu_an_table *acc, const struct dpmu_an_sample *s,
		       struct dpmu_err *err)
{
	if (!acc->nsamples) {
		int rc = dpmu_an_sample_add(acc, 0, 0, NULL, err);
		if (rc)
			return rc;
	}
	struct dpmu_an_sample *t = &acc->samples[0];
	if (s->start_ns + s->length_ns > t->start_ns + t->length_ns)
		t->length_ns = s->start_ns + s->length_ns - t->start_ns;
	for (size_t i = 0; i < s->nunits; i++) {
		const struct dpmu_an_unit *u = &s->units[i];
		if (u->kind != DPMU_AN_CPU && u->kind != DPMU_AN_CLUSTER)
			continue;
		struct dpmu_an_unit *d = (struct dpmu_an_unit *)dpmu_an_unit_find(t, u->name);
		if (!d) {
			int rc = dpmu_an_unit_add(t, u->kind, u->index, u->name, u->freq_hz, &d, err);
			if (rc)
				return rc;
			d->little = u->little;
			d->line_bytes = u->line_bytes;
			d->bus_bytes = u->bus_bytes;
		}
		for (size_t k = 0; k < u->ncounts; k++) {
			int rc = dpmu_an_count_accumulate(d, &u->counts[k], err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* A cpu's labels: cpu, core_type, cluster. buf holds two numbers. */
static size_t cpu_labels(unsigned cpu, const struct dpmu_profile *p, char (*buf)[24],
			 struct dpmu_om_label *l)
{
	unsigned cl = 0, idx = 0;
	const struct dpmu_core_type *ct = dpmu_profile_core(p, cpu, &cl, &idx);
	snprintf(buf[0], sizeof buf[0], "%u", cpu);
	snprintf(buf[1], sizeof buf[1], "%u", cl);
	l[0] = (struct dpmu_om_label){"cpu", buf[0]};
	l[1] = (struct dpmu_om_label){"core_type", ct ? ct->name : "unknown"};
	l[2] = (struct dpmu_om_label){"cluster", buf[1]};
	return 3;
}

/* The labels of a cpu or cluster unit: cpu, core_type, cluster (a cpu), or
 * cluster (a cluster PMU); then room for event. Returns how many. */
static size_t unit_labels(const struct dpmu_an_unit *u, const struct dpmu_profile *p,
			  char (*buf)[24], struct dpmu_om_label *l)
{
	if (u->kind == DPMU_AN_CPU)
		return cpu_labels(u->index, p, buf, l);
	snprintf(buf[1], sizeof buf[1], "%u", u->index);
	l[0] = (struct dpmu_om_label){"cluster", buf[1]};
	return 1;
}

/* The one family both stat and the monitor put core counts in. */
static int events_family(struct dpmu_om_snapshot *s, struct dpmu_err *err)
{
	return dpmu_om_family(s, "dynpmu_events_total", DPMU_OM_COUNTER,
			      "Core PMU and AMU events counted on a core since the run started "
			      "(as counted: not scaled for multiplexing)", err);
}

static int add_counts(struct dpmu_om_snapshot *s, const struct dpmu_an_sample *totals,
		      const struct dpmu_profile *p, struct dpmu_err *err)
{
	int fe = events_family(s, err);
	int fc = fe < 0 ? fe
		 : dpmu_om_family(s, "dynpmu_cluster_events_total", DPMU_OM_COUNTER,
				  "DSU cluster PMU events counted since the run started", err);
	int fr = fc < 0 ? fc
		 : dpmu_om_family(s, "dynpmu_event_running_ratio", DPMU_OM_GAUGE,
				  "Share of the run an event was on a counter (running / enabled; "
				  "below 1 when multiplexed: scale the count by its inverse)",
				  err);
	if (fr < 0)
		return fr;
	for (size_t i = 0; totals && i < totals->nunits; i++) {
		const struct dpmu_an_unit *u = &totals->units[i];
		if (u->kind != DPMU_AN_CPU && u->kind != DPMU_AN_CLUSTER)
			continue;
		char buf[2][24];
		struct dpmu_om_label l[4];
		size_t n = unit_labels(u, p, buf, l);
		for (size_t k = 0; k < u->ncounts; k++) {
			const struct dpmu_an_count *c = &u->counts[k];
			/* <not supported> has no count to give */
			if (!c->supported)
				continue;
			l[n] = (struct dpmu_om_label){"event", c->event};
			int rc = dpmu_om_add_u64(s, u->kind == DPMU_AN_CPU ? fe : fc, l, n + 1,
						 c->value, err);
			if (!rc && c->enabled_ns)
				rc = dpmu_om_add_double(s, fr, l, n + 1,
							(double)c->running_ns / (double)c->enabled_ns,
							err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int add_metrics(struct dpmu_om_snapshot *s, const struct dpmu_an_table *t,
		       const struct dpmu_an_sample *last, const struct dpmu_profile *p,
		       const struct dpmu_an_metric *const *m, size_t nm, struct dpmu_err *err)
{
	for (size_t i = 0; i < nm; i++) {
		char name[DPMU_NAME_MAX + 16], help[512];
		snprintf(name, sizeof name, "dynpmu_%s", m[i]->name);
		snprintf(help, sizeof help, "%s (%s, over the latest interval: %s)",
			 m[i]->description, m[i]->unit, m[i]->formula);
		int f = dpmu_om_family(s, name, DPMU_OM_GAUGE, help, err);
		if (f < 0)
			return f;
		for (size_t k = 0; last && k < last->nunits; k++) {
			const struct dpmu_an_unit *u = &last->units[k];
			if (u->kind != DPMU_AN_CPU && u->kind != DPMU_AN_CLUSTER)
				continue;
			struct dpmu_an_value v;
			int rc = dpmu_an_metric_eval(m[i], t, last, u, &v, err);
			if (rc)
				return rc;
			/* a value that does not exist is no sample, rather than a NaN
			 * a dashboard would have to filter out */
			if (!v.available)
				continue;
			char buf[2][24];
			struct dpmu_om_label l[4];
			size_t n = unit_labels(u, p, buf, l);
			rc = dpmu_om_add_double(s, f, l, n, v.value, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* What every snapshot ends with: the time, the intervals, the end. */
static int add_run_info(struct dpmu_om_snapshot *s, const struct dpmu_om_run *r,
			struct dpmu_err *err)
{
	int rc;
	int f = dpmu_om_family(s, "dynpmu_simulated_seconds", DPMU_OM_GAUGE,
			       "Simulated time of the workload at this snapshot", err);
	if (f >= 0)
		rc = dpmu_om_add_double(s, f, NULL, 0, (double)r->sim_ns / 1e9, err);
	else
		rc = f;
	if (!rc) {
		f = dpmu_om_family(s, "dynpmu_intervals_total", DPMU_OM_COUNTER,
				   "Snapshot intervals ended so far", err);
		rc = f < 0 ? f : dpmu_om_add_u64(s, f, NULL, 0, r->intervals, err);
	}
	if (!rc) {
		f = dpmu_om_family(s, "dynpmu_run_finished", DPMU_OM_GAUGE,
				   "1 once the workload has ended: the values are final", err);
		rc = f < 0 ? f : dpmu_om_add_u64(s, f, NULL, 0, r->finished ? 1 : 0, err);
	}
	return rc;
}

int dpmu_om_add_run(struct dpmu_om_snapshot *s, const struct dpmu_an_table *t,
		    const struct dpmu_an_sample *totals, const struct dpmu_an_sample *last,
		    const struct dpmu_profile *p, const struct dpmu_an_metric *const *m, size_t nm,
		    const struct dpmu_om_run *r, struct dpmu_err *err)
{
	int rc = add_counts(s, totals, p, err);
	if (!rc)
		rc = add_metrics(s, t, last, p, m, nm, err);
	if (rc)
		return rc;
	return add_run_info(s, r, err);
}

/* ---- the monitor's series ---------------------------------------------------------- */

const char *const dpmu_om_amu_event[DPMU_OM_AMU_COUNTERS] = {
	"amu:CPU_CYCLES", "amu:CNT_CYCLES", "amu:INST_RETIRED", "amu:STALL_BACKEND_MEM",
};

/* The monitor's families, in the order they are rendered. */
enum { W_EVENTS, W_THREAD_EVENTS, W_CPI, W_STALL, W_BASE, W_BAND, W_ANOMALY, W_ANOMALIES, W_N };

static const struct {
	const char *name;
	enum dpmu_om_type type;
	const char *help;
} watch_family[W_N] = {
	[W_EVENTS] = { "dynpmu_events_total", DPMU_OM_COUNTER, NULL /* events_family's */ },
	[W_THREAD_EVENTS] = { "dynpmu_thread_events_total", DPMU_OM_COUNTER,
			      "AMU events counted while a thread ran on its core, since the run started" },
	[W_CPI] = { "dynpmu_monitor_cpi", DPMU_OM_GAUGE,
		    "CPI (AMU CPU_CYCLES / INST_RETIRED) over the latest interval the monitor judged" },
	[W_STALL] = { "dynpmu_monitor_memory_stall_ratio", DPMU_OM_GAUGE,
		      "Memory-stall share (AMU STALL_BACKEND_MEM / CPU_CYCLES) over the latest "
		      "interval the monitor judged" },
	[W_BASE] = { "dynpmu_monitor_baseline_cpi", DPMU_OM_GAUGE,
		     "The baseline's CPI (the median of its intervals)" },
	[W_BAND] = { "dynpmu_monitor_band_cpi", DPMU_OM_GAUGE,
		     "Half-width of the baseline's CPI band: further from the baseline is outside" },
	[W_ANOMALY] = { "dynpmu_monitor_anomaly", DPMU_OM_GAUGE, "1 while an anomaly lasts" },
	[W_ANOMALIES] = { "dynpmu_monitor_anomalies_total", DPMU_OM_COUNTER,
			  "Anomalies started so far (a change from one to another counts as a new one)" },
};

int dpmu_om_add_watch(struct dpmu_om_snapshot *s, const struct dpmu_om_watch *w, size_t n,
		      const struct dpmu_profile *p, const struct dpmu_om_run *r,
		      struct dpmu_err *err)
{
	int f[W_N];
	for (unsigned k = 0; k < W_N; k++) {
		f[k] = watch_family[k].help ? dpmu_om_family(s, watch_family[k].name,
							      watch_family[k].type,
							      watch_family[k].help, err)
					    : events_family(s, err);
		if (f[k] < 0)
			return f[k];
	}
	for (size_t i = 0; i < n; i++) {
		const struct dpmu_om_watch *u = &w[i];
		char buf[2][24], tbuf[24];
		struct dpmu_om_label l[5];
		size_t nl = cpu_labels(u->cpu, p, buf, l);
		if (u->thread >= 0) {
			snprintf(tbuf, sizeof tbuf, "%d", u->thread);
			l[nl++] = (struct dpmu_om_label){"thread", tbuf};
		}
		int rc = 0;
		for (unsigned k = 0; !rc && k < DPMU_OM_AMU_COUNTERS; k++) {
			l[nl] = (struct dpmu_om_label){"event", dpmu_om_amu_event[k]};
			rc = dpmu_om_add_u64(s, f[u->thread >= 0 ? W_THREAD_EVENTS : W_EVENTS], l, nl + 1,
					     u->amu[k], err);
		}
		/* a value the monitor does not have yet is no sample, not a NaN */
		if (!rc && u->judged)
			rc = dpmu_om_add_double(s, f[W_CPI], l, nl, u->cpi, err);
		if (!rc && u->judged)
			rc = dpmu_om_add_double(s, f[W_STALL], l, nl, u->stall, err);
		if (!rc && u->have_base)
			rc = dpmu_om_add_double(s, f[W_BASE], l, nl, u->base_cpi, err);
		if (!rc && u->have_base)
			rc = dpmu_om_add_double(s, f[W_BAND], l, nl, u->band, err);
		if (!rc)
			rc = dpmu_om_add_u64(s, f[W_ANOMALY], l, nl, u->in_anomaly, err);
		if (!rc)
			rc = dpmu_om_add_u64(s, f[W_ANOMALIES], l, nl, u->anomalies, err);
		if (rc)
			return rc;
	}
	return add_run_info(s, r, err);
}
