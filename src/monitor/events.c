/*
 * Event lists: names from the event catalogs of the profile's core types
 * and clusters (data/events/<name>.json via src/arch), raw codes, PMU qualifiers,
 * and the default set.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dynpmu/monitor.h"

/* The catalogs an event list is resolved against. */
struct catalogs {
	unsigned ntypes;                                 /* profile core types */
	bool type_used[DPMU_MAX_CORE_TYPES];
	const struct dpmu_event_catalog *type[DPMU_MAX_CORE_TYPES];
	unsigned nclusters;
	bool cluster_used[DPMU_MAX_CLUSTERS];
	const struct dpmu_event_catalog *cluster[DPMU_MAX_CLUSTERS];
};

/* perf's default events, in Arm's names; then each cluster catalog's L3
 * access and refill pair (seed 001 section 4.2 uses the DSU-120 pair). */
static const char *const default_core_events[] = {
	"CPU_CYCLES", "INST_RETIRED", "BR_RETIRED", "BR_MIS_PRED_RETIRED",
	"L1D_CACHE", "L1D_CACHE_REFILL",
};
static const char *const default_cluster_events[] = {
	"L3D_CACHE", "L3D_CACHE_REFILL", /* classic DSU numbering */
	"L3_ACCESS", "L3_MISS",          /* DSU-120 numbering (seed 001) */
};

static uint64_t all_cores(const struct dpmu_profile *p)
{
	unsigned n = dpmu_profile_ncores(p);
	return n >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1;
}

static int catalogs_load(const struct dpmu_profile *p, uint64_t cores, struct catalogs *c,
			 struct dpmu_err *err)
{
	memset(c, 0, sizeof *c);
	c->ntypes = p->n_core_types;
	c->nclusters = p->nclusters;
	if (cores == 0)
		cores = all_cores(p);
	unsigned ncores = dpmu_profile_ncores(p);
	for (unsigned core = 0; core < ncores && core < 64; core++) {
		if (!(cores >> core & 1))
			continue;
		unsigned cl, idx;
		const struct dpmu_core_type *t = dpmu_profile_core(p, core, &cl, &idx);
		if (!t)
			continue;
		unsigned ti = (unsigned)(t - p->core_types);
		if (ti < DPMU_MAX_CORE_TYPES)
			c->type_used[ti] = true;
		if (cl < DPMU_MAX_CLUSTERS)
			c->cluster_used[cl] = true;
	}
	for (unsigned t = 0; t < c->ntypes; t++) {
		if (!c->type_used[t])
			continue;
		c->type[t] = dpmu_catalog_get(p->core_types[t].catalog, err);
		if (!c->type[t])
			return err && err->code ? err->code : DPMU_ENOENT;
	}
	for (unsigned k = 0; k < c->nclusters; k++) {
		if (!c->cluster_used[k])
			continue;
		c->cluster[k] = dpmu_catalog_get(p->clusters[k].catalog, err);
		if (!c->cluster[k])
			return err && err->code ? err->code : DPMU_ENOENT;
	}
	return 0;
}

/* Edit distance, case-insensitive, for "did you mean". */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 64;
	size_t row[64];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = diag + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static void suggest_in(const struct dpmu_event_catalog *cat, const char *name, const char **best,
		       size_t *bestd)
{
	if (!cat)
		return;
	for (size_t i = 0; i < cat->count; i++) {
		size_t d = distance(name, cat->events[i].name);
		if (d < *bestd) {
			*bestd = d;
			*best = cat->events[i].name;
		}
	}
}

static int unknown_event(const struct catalogs *c, const char *name, bool core_ok,
			 bool cluster_ok, struct dpmu_err *err)
{
	const char *best = NULL;
	size_t bestd = (size_t)-1;
	for (unsigned t = 0; core_ok && t < c->ntypes; t++)
		suggest_in(c->type[t], name, &best, &bestd);
	for (unsigned k = 0; cluster_ok && k < c->nclusters; k++)
		suggest_in(c->cluster[k], name, &best, &bestd);
	size_t len = strlen(name);
	if (best && bestd <= 3 && bestd * 3 <= len) {
		/* Answer in the user's case: l1d_cahce -> l1d_cache. */
		bool lower = true;
		for (const char *q = name; *q; q++)
			if (isupper((unsigned char)*q))
				lower = false;
		char shown[DPMU_NAME_MAX];
		size_t k = 0;
		for (; best[k] && k + 1 < sizeof shown; k++)
			shown[k] = lower ? (char)tolower((unsigned char)best[k]) : best[k];
		shown[k] = '\0';
		return dpmu_err_set(err, DPMU_ENOENT, "unknown event '%s' (did you mean %s?)", name,
				    shown);
	}
	return dpmu_err_set(err, DPMU_ENOENT, "unknown event '%s'", name);
}

/* r1b or 0x1b: a raw event number (perf's rNNN syntax). */
static bool parse_raw(const char *s, uint16_t *code)
{
	const char *d;
	if ((s[0] == 'r' || s[0] == 'R') && s[1])
		d = s + 1;
	else if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s[2])
		d = s + 2;
	else
		return false;
	unsigned long v = 0;
	for (const char *q = d; *q; q++) {
		if (!isxdigit((unsigned char)*q))
			return false;
		v = v * 16 + (unsigned long)(isdigit((unsigned char)*q) ? *q - '0'
							: tolower((unsigned char)*q) - 'a' + 10);
		if (v > 0xffff)
			return false;
	}
	*code = (uint16_t)v;
	return true;
}

static int resolve(const struct catalogs *c, const char *item, struct dpmu_mon_event *ev,
		   struct dpmu_err *err)
{
	char name[DPMU_NAME_MAX];
	bool core_ok = true, cluster_ok = true;
	const char *s = item;
	/* pmu/EVENT/ qualifiers, as perf writes armv8_pmuv3/.../ and arm_dsu_0/.../ */
	if (strncasecmp(s, "core/", 5) == 0) {
		s += 5;
		cluster_ok = false;
	} else if (strncasecmp(s, "cluster/", 8) == 0) {
		s += 8;
		core_ok = false;
	} else if (strchr(s, '/')) {
		return dpmu_err_set(err, DPMU_EINVAL,
				    "event '%s': unknown PMU (use core/EVENT/ or cluster/EVENT/)",
				    item);
	}
	size_t n = strlen(s);
	if (!cluster_ok || !core_ok) {
		if (n > 0 && s[n - 1] == '/')
			n--;
	}
	if (n == 0)
		return dpmu_err_set(err, DPMU_EINVAL, "event '%s': no event name", item);
	if (n >= sizeof name || memchr(s, '/', n))
		return dpmu_err_set(err, DPMU_EINVAL, "event '%s': malformed name", item);
	memcpy(name, s, n);
	name[n] = '\0';

	memset(ev, 0, sizeof *ev);
	for (unsigned t = 0; t < DPMU_MAX_CORE_TYPES; t++)
		ev->code[t] = DPMU_MON_NO_CODE;
	for (unsigned k = 0; k < DPMU_MAX_CLUSTERS; k++)
		ev->cluster_code[k] = DPMU_MON_NO_CODE;

	/* Cluster catalogs first: L3D_CACHE names the cluster PMU's count of
	 * the shared L3 (the rule; core/L3D_CACHE/ asks the core). */
	const char *canon = NULL;
	if (cluster_ok) {
		for (unsigned k = 0; k < c->nclusters; k++) {
			const struct dpmu_event_desc *d =
				c->cluster[k] ? dpmu_catalog_find_name(c->cluster[k], name) : NULL;
			if (d) {
				ev->cluster_code[k] = d->code;
				canon = d->name;
			}
		}
		if (canon) {
			ev->target = DPMU_MON_CLUSTER;
			snprintf(ev->name, sizeof ev->name, "%s", canon);
			return 0;
		}
	}
	if (core_ok) {
		for (unsigned t = 0; t < c->ntypes; t++) {
			const struct dpmu_event_desc *d =
				c->type[t] ? dpmu_catalog_find_name(c->type[t], name) : NULL;
			if (d) {
				ev->code[t] = d->code;
				canon = d->name;
			}
		}
		if (canon) {
			ev->target = DPMU_MON_CORE;
			snprintf(ev->name, sizeof ev->name, "%s", canon);
			return 0;
		}
	}
	uint16_t raw;
	if (parse_raw(name, &raw)) {
		ev->raw = true;
		snprintf(ev->name, sizeof ev->name, "r%x", raw);
		if (core_ok) {
			ev->target = DPMU_MON_CORE;
			for (unsigned t = 0; t < c->ntypes; t++)
				if (c->type_used[t])
					ev->code[t] = raw;
		} else {
			ev->target = DPMU_MON_CLUSTER;
			for (unsigned k = 0; k < c->nclusters; k++)
				if (c->cluster_used[k])
					ev->cluster_code[k] = raw;
		}
		return 0;
	}
	return unknown_event(c, name, core_ok, cluster_ok, err);
}

int dpmu_mon_events_parse(const char *list, const struct dpmu_profile *p, uint64_t cores,
			  struct dpmu_mon_events *out, struct dpmu_err *err)
{
	memset(out, 0, sizeof *out);
	if (!list)
		return dpmu_err_set(err, DPMU_EINVAL, "no event list");
	struct catalogs c;
	int rc = catalogs_load(p, cores, &c, err);
	if (rc)
		return rc;
	const char *s = list;
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
			n--;
		if (n == 0)
			return dpmu_err_set(err, DPMU_EINVAL, "event list '%s': empty event name",
					    list);
		char item[2 * DPMU_NAME_MAX];
		if (n >= sizeof item)
			return dpmu_err_set(err, DPMU_EINVAL, "event '%.*s...': name too long", 32, s);
		memcpy(item, s, n);
		item[n] = '\0';
		if (out->n == DPMU_MON_MAX_EVENTS)
			return dpmu_err_set(err, DPMU_ERANGE, "event list: more than %d events",
					    DPMU_MON_MAX_EVENTS);
		rc = resolve(&c, item, &out->ev[out->n], err);
		if (rc)
			return rc;
		out->n++;
		if (!e)
			break;
		s = e + 1;
	}
	return 0;
}

int dpmu_mon_events_default(const struct dpmu_profile *p, uint64_t cores,
			    struct dpmu_mon_events *out, struct dpmu_err *err)
{
	memset(out, 0, sizeof *out);
	struct catalogs c;
	int rc = catalogs_load(p, cores, &c, err);
	if (rc)
		return rc;
	struct dpmu_err ignore;
	for (size_t i = 0; i < sizeof default_core_events / sizeof default_core_events[0]; i++) {
		char item[DPMU_NAME_MAX + 8];
		snprintf(item, sizeof item, "core/%s/", default_core_events[i]);
		if (resolve(&c, item, &out->ev[out->n], &ignore) == 0)
			out->n++;
	}
	for (size_t i = 0; i < sizeof default_cluster_events / sizeof default_cluster_events[0];
	     i++) {
		char item[DPMU_NAME_MAX + 12];
		snprintf(item, sizeof item, "cluster/%s/", default_cluster_events[i]);
		if (resolve(&c, item, &out->ev[out->n], &ignore) == 0)
			out->n++;
	}
	return 0;
}

int dpmu_mon_events_find(const struct dpmu_mon_events *ev, const char *name)
{
	for (unsigned i = 0; i < ev->n; i++)
		if (strcasecmp(ev->ev[i].name, name) == 0)
			return (int)i;
	return -1;
}
