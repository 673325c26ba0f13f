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

/* The labels of a cpu or cluster unit: cpu, core_type, cluster (a cpu), or
 * cluster (a cluster PMU); then room for event. Returns how many. */
static size_t unit_labels(const struct dpmu_an_unit *u, const struct dpmu_profile *p,
			  char (*buf)[24], struct dpmu_om_label *l)
{
	size_t n = 0;
	if (u->kind == DPMU_AN_CPU) {
		unsigned cl = 0, idx = 0;
		const struct dpmu_core_type *ct = dpmu_profile_core(p, u->index, &cl, &idx);
		snprintf(buf[0], sizeof buf[0], "%u", u->index);
		snprintf(buf[1], sizeof buf[1], "%u", cl);
		l[n++] = (struct dpmu_om_label){"cpu", buf[0]};
		l[n++] = (struct dpmu_om_label){"core_type", ct ? ct->name : "unknown"};
		l[n++] = (struct dpmu_om_label){"cluster", buf[1]};
	} else {
		snprintf(buf[1], sizeof buf[1], "%u", u->index);
		l[n++] = (struct dpmu_om_label){"cluster", buf[1]};
	}
	return n;
}

static int add_counts(struct dpmu_om_snapshot *s, const struct dpmu_an_sample *totals,
		      const struct dpmu_profile *p, struct dpmu_err *err)
{
	int fe = dpmu_om_family(s, "dynpmu_events_total", DPMU_OM_COUNTER,
				"Core PMU and AMU events counted on a core since the run started "
				"(as counted: not scaled for multiplexing)", err);
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
