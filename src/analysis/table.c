/*
 * The neutral sample table the analysis reads (include/dynpmu/analysis.h):
 * growing arrays of samples, units and counts; aggregation per core type;
 * and the one adapter from a monitor session.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/an_internal.h"
#include "dynpmu/monitor.h"

void dpmu_an_table_init(struct dpmu_an_table *t)
{
	memset(t, 0, sizeof *t);
}

static void unit_free(struct dpmu_an_unit *u)
{
	free(u->counts);
	u->counts = NULL;
	u->ncounts = u->cap = 0;
}

void dpmu_an_table_free(struct dpmu_an_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nsamples; i++) {
		for (size_t k = 0; k < t->samples[i].nunits; k++)
			unit_free(&t->samples[i].units[k]);
		free(t->samples[i].units);
	}
	free(t->samples);
	t->samples = NULL;
	t->nsamples = t->cap = 0;
}

/* Make room for one more element of size `size` in *arr (length n, capacity *cap). */
static int grow(void **arr, size_t n, size_t *cap, size_t size, const char *what,
		struct dpmu_err *err)
{
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 8;
	void *p = realloc(*arr, ncap * size);
	if (!p)
		return dpmu_err_set(err, DPMU_ENOMEM, "out of memory growing the %s list to %zu",
				    what, ncap);
	memset((char *)p + *cap * size, 0, (ncap - *cap) * size);
	*arr = p;
	*cap = ncap;
	return 0;
}

int dpmu_an_sample_add(struct dpmu_an_table *t, uint64_t start_ns, uint64_t length_ns,
		       struct dpmu_an_sample **out, struct dpmu_err *err)
{
	void *arr = t->samples;
	int rc = grow(&arr, t->nsamples, &t->cap, sizeof *t->samples, "sample", err);
	t->samples = arr;
	if (rc)
		return rc;
	struct dpmu_an_sample *s = &t->samples[t->nsamples++];
	memset(s, 0, sizeof *s);
	s->start_ns = start_ns;
	s->length_ns = length_ns;
	if (out)
		*out = s;
	return 0;
}

int dpmu_an_unit_add(struct dpmu_an_sample *s, enum dpmu_an_unit_kind kind, unsigned index,
		     const char *name, uint64_t freq_hz, struct dpmu_an_unit **out,
		     struct dpmu_err *err)
{
	if (!name || !name[0] || strlen(name) >= DPMU_NAME_MAX)
		return dpmu_err_set(err, DPMU_EINVAL, "unit name '%s' is empty or longer than %d",
				    name ? name : "(null)", DPMU_NAME_MAX - 1);
	if (dpmu_an_unit_find(s, name))
		return dpmu_err_set(err, DPMU_EINVAL, "unit '%s' is already in this sample", name);
	void *arr = s->units;
	int rc = grow(&arr, s->nunits, &s->cap, sizeof *s->units, "unit", err);
	s->units = arr;
	if (rc)
		return rc;
	struct dpmu_an_unit *u = &s->units[s->nunits++];
	memset(u, 0, sizeof *u);
	u->kind = kind;
	u->index = index;
	snprintf(u->name, sizeof u->name, "%s", name);
	u->freq_hz = freq_hz;
	if (out)
		*out = u;
	return 0;
}

int dpmu_an_count_add(struct dpmu_an_unit *u, const char *event, bool supported, uint64_t value,
		      uint64_t enabled_ns, uint64_t running_ns, struct dpmu_err *err)
{
	if (!event || !event[0] || strlen(event) >= DPMU_NAME_MAX)
		return dpmu_err_set(err, DPMU_EINVAL, "event name '%s' on %s is empty or too long",
				    event ? event : "(null)", u->name);
	if (dpmu_an_count_find(u, event))
		return dpmu_err_set(err, DPMU_EINVAL, "event %s is already counted on %s", event,
				    u->name);
	if (running_ns > enabled_ns)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "%s on %s: running time %llu ns exceeds enabled time %llu ns",
				    event, u->name, (unsigned long long)running_ns,
				    (unsigned long long)enabled_ns);
	void *arr = u->counts;
	int rc = grow(&arr, u->ncounts, &u->cap, sizeof *u->counts, "count", err);
	u->counts = arr;
	if (rc)
		return rc;
	struct dpmu_an_count *c = &u->counts[u->ncounts++];
	snprintf(c->event, sizeof c->event, "%s", event);
	c->supported = supported;
	c->value = value;
	c->enabled_ns = enabled_ns;
	c->running_ns = running_ns;
	return 0;
}

const struct dpmu_an_count *dpmu_an_count_find(const struct dpmu_an_unit *u, const char *event)
{
	for (size_t i = 0; i < u->ncounts; i++)
		if (strcasecmp(u->counts[i].event, event) == 0)
			return &u->counts[i];
	return NULL;
}

const struct dpmu_an_unit *dpmu_an_unit_find(const struct dpmu_an_sample *s, const char *name)
{
	for (size_t i = 0; i < s->nunits; i++)
		if (strcasecmp(s->units[i].name, name) == 0)
			return &s->units[i];
	return NULL;
}

double dpmu_an_count_estimate(const struct dpmu_an_count *c)
{
	if (!c->supported || c->running_ns == 0 || c->running_ns >= c->enabled_ns)
		return (double)c->value;
	return (double)c->value * (double)c->enabled_ns / (double)c->running_ns;
}

double dpmu_an_normalise(double count, uint64_t ref_hz, uint64_t cpu_hz)
{
	return cpu_hz ? count * (double)ref_hz / (double)cpu_hz : 0.0;
}

bool dpmu_an_is_little(const struct dpmu_profile *p, unsigned core_type)
{
	if (core_type >= p->n_core_types)
		return false;
	uint64_t top = 0;
	for (unsigned i = 0; i < p->n_core_types; i++)
		if (p->core_types[i].freq_hz > top)
			top = p->core_types[i].freq_hz;
	return p->core_types[core_type].freq_hz < top;
}

int dpmu_an_count_accumulate(struct dpmu_an_unit *u, const struct dpmu_an_count *c,
			     struct dpmu_err *err)
{
	for (size_t i = 0; i < u->ncounts; i++) {
		struct dpmu_an_count *d = &u->counts[i];
		if (strcasecmp(d->event, c->event) != 0)
			continue;
		d->supported = d->supported || c->supported;
		d->value += c->value;
		d->enabled_ns += c->enabled_ns;
		d->running_ns += c->running_ns;
		return 0;
	}
	return dpmu_an_count_add(u, c->event, c->supported, c->value, c->enabled_ns,
				 c->running_ns, err);
}

static int unit_accumulate(struct dpmu_an_unit *dst, const struct dpmu_an_unit *src,
			   struct dpmu_err *err)
{
	for (size_t i = 0; i < src->ncounts; i++) {
		int rc = dpmu_an_count_accumulate(dst, &src->counts[i], err);
		if (rc)
			return rc;
	}
	if (!dst->line_bytes)
		dst->line_bytes = src->line_bytes;
	if (!dst->bus_bytes)
		dst->bus_bytes = src->bus_bytes;
	return 0;
}

int dpmu_an_sample_aggregate(struct dpmu_an_sample *s, const struct dpmu_profile *p,
			     unsigned what, struct dpmu_err *err)
{
	if (what & ~(unsigned)(DPMU_AN_AGG_CORE_TYPE | DPMU_AN_AGG_CLUSTER | DPMU_AN_AGG_SYSTEM))
		return dpmu_err_set(err, DPMU_EINVAL, "aggregation flags 0x%x name no aggregation",
				    what);
	size_t base = s->nunits; /* units added below are not inputs */
	if (what & DPMU_AN_AGG_CORE_TYPE) {
		for (unsigned ty = 0; ty < p->n_core_types; ty++) {
			struct dpmu_an_unit *agg = NULL;
			for (size_t i = 0; i < base; i++) {
				const struct dpmu_an_unit *u = &s->units[i];
				if (u->kind != DPMU_AN_CPU)
					continue;
				unsigned cl, idx;
				const struct dpmu_core_type *ct = dpmu_profile_core(p, u->index, &cl, &idx);
				if (!ct || ct != &p->core_types[ty])
					continue;
				if (!agg) {
					int rc = dpmu_an_unit_add(s, DPMU_AN_CORE_TYPE, ty, ct->name,
								  ct->freq_hz, &agg, err);
					if (rc)
						return rc;
					agg->little = dpmu_an_is_little(p, ty);
					u = &s->units[i]; /* the add may have moved the array */
				}
				int rc = unit_accumulate(agg, u, err);
				if (rc)
					return rc;
			}
		}
	}
	if (what & DPMU_AN_AGG_SYSTEM) {
		struct dpmu_an_unit *sys = NULL;
		int rc = dpmu_an_unit_add(s, DPMU_AN_SYSTEM, 0, "system", 0, &sys, err);
		if (rc)
			return rc;
		for (size_t i = 0; i < base; i++) {
			if (s->units[i].kind != DPMU_AN_CPU && s->units[i].kind != DPMU_AN_CLUSTER)
				continue;
			rc = unit_accumulate(sys, &s->units[i], err);
			if (rc)
				return rc;
		}
	}
	/* Last, as it changes the cluster units the sums above read. The
	 * cluster keeps its clock, line size and bus width: its row is still the
	 * DSU's. */
	if (what & DPMU_AN_AGG_CLUSTER) {
		for (size_t ui = 0; ui < base; ui++) {
			if (s->units[ui].kind != DPMU_AN_CLUSTER)
				continue;
			for (size_t ci = 0; ci < base; ci++) {
				const struct dpmu_an_unit *cu = &s->units[ci];
				unsigned cl = 0, idx;
				if (cu->kind != DPMU_AN_CPU || !dpmu_profile_core(p, cu->index, &cl, &idx) ||
				    cl != s->units[ui].index)
					continue;
				for (size_t k = 0; k < cu->ncounts; k++) {
					int rc = dpmu_an_count_accumulate(&s->units[ui], &cu->counts[k],
									  err);
					if (rc)
						return rc;
				}
			}
		}
	}
	return 0;
}

/* Event i on `unit` (a core or a cluster, as the event's target says):
 * the whole run's count, or, inside an on_interval callback, the interval's. */
static int session_count(const struct dpmu_mon_session *ms, enum dpmu_an_counts which,
			 unsigned i, unsigned unit, struct dpmu_mon_count *c)
{
	return which == DPMU_AN_INTERVAL_COUNTS ? dpmu_mon_interval_count(ms, i, unit, c)
						: dpmu_mon_count_on(ms, i, unit, c);
}

/* Add every event of the session that targets `cluster_unit` (the cluster
 * PMU) or not (a core's PMU and its AMU) to u, in the order the events were
 * asked for; the same event asked for twice is counted once. */
static int unit_counts(struct dpmu_an_unit *u, const struct dpmu_mon_session *ms,
		       enum dpmu_an_counts which, bool cluster_unit, struct dpmu_err *err)
{
	const struct dpmu_mon_events *ev = dpmu_mon_session_events(ms);
	for (unsigned i = 0; i < ev->n; i++) {
		struct dpmu_mon_count c;
		if ((ev->ev[i].target == DPMU_MON_CLUSTER) != cluster_unit ||
		    dpmu_an_count_find(u, ev->ev[i].name) ||
		    session_count(ms, which, i, u->index, &c))
			continue;
		int rc = dpmu_an_count_add(u, ev->ev[i].name, c.supported, c.value, c.enabled_ns,
					   c.running_ns, err);
		if (rc)
			return rc;
	}
	return 0;
}

int dpmu_an_table_from_session(struct dpmu_an_table *t, const struct dpmu_mon_session *ms,
			       const struct dpmu_profile *p, enum dpmu_an_counts which,
			       uint64_t start_ns, uint64_t length_ns, struct dpmu_err *err)
{
	struct dpmu_an_sample *s = NULL;
	int rc = dpmu_an_sample_add(t, start_ns, length_ns, &s, err);
	if (rc)
		return rc;
	if (!t->const_freq_hz)
		t->const_freq_hz = p->const_freq_hz;
	uint64_t cores = dpmu_mon_session_cores(ms), clusters = dpmu_mon_session_clusters(ms);
	for (unsigned n = 0; n < 64; n++) {
		if (!(cores >> n & 1))
			continue;
		unsigned cl, idx;
		const struct dpmu_core_type *ct = dpmu_profile_core(p, n, &cl, &idx);
		char name[DPMU_NAME_MAX];
		snprintf(name, sizeof name, "cpu%u", n);
		struct dpmu_an_unit *u = NULL;
		rc = dpmu_an_unit_add(s, DPMU_AN_CPU, n, name, ct ? ct->freq_hz : 0, &u, err);
		if (rc)
			return rc;
		u->little = ct && dpmu_an_is_little(p, (unsigned)(ct - p->core_types));
		u->line_bytes = ct ? ct->l1d.line : 0;
		u->bus_bytes = p->bus_width;
		rc = unit_counts(u, ms, which, false, err);
		if (rc)
			return rc;
	}
	for (unsigned n = 0; n < 64 && n < p->nclusters; n++) {
		if (!(clusters >> n & 1))
			continue;
		const struct dpmu_cluster_params *cp = &p->clusters[n];
		char name[DPMU_NAME_MAX];
		snprintf(name, sizeof name, "cluster%u", n);
		struct dpmu_an_unit *u = NULL;
		rc = dpmu_an_unit_add(s, DPMU_AN_CLUSTER, n, name, cp->freq_hz, &u, err);
		if (rc)
			return rc;
		/* LITTLE only when every core of the cluster is */
		u->little = cp->ncores > 0;
		for (unsigned k = 0; k < cp->ncores; k++)
			u->little = u->little && dpmu_an_is_little(p, cp->core_type[k]);
		u->line_bytes = cp->l3.line;
		u->bus_bytes = p->bus_width;
		rc = unit_counts(u, ms, which, true, err);
		if (rc)
			return rc;
	}
	return 0;
}
