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
	const struct dpmu_profile *p;
	unsigned ntypes;                                 /* profile core types */
	bool type_used[DPMU_MAX_CORE_TYPES];
	const struct dpmu_event_catalog *type[DPMU_MAX_CORE_TYPES];
	unsigned nclusters;
	bool cluster_used[DPMU_MAX_CLUSTERS];
	const struct dpmu_event_catalog *cluster[DPMU_MAX_CLUSTERS];
	const struct dpmu_event_catalog *amu;
};

/* perf's generic names and how Linux's arm_pmuv3 driver maps them
 * (armv8_pmuv3_perf_map and the cache map; branch-instructions takes
 * BR_RETIRED where implemented, else PC_WRITE_RETIRED, as the driver
 * decides from PMCEID). Resolved in each core type's catalog. */
struct perf_alias {
	const char *name;
	const char *event;
	const char *fallback;
};

static const struct perf_alias perf_aliases[] = {
	{"cycles", "CPU_CYCLES", NULL},
	{"cpu-cycles", "CPU_CYCLES", NULL},
	{"instructions", "INST_RETIRED", NULL},
	{"branches", "BR_RETIRED", "PC_WRITE_RETIRED"},
	{"branch-instructions", "BR_RETIRED", "PC_WRITE_RETIRED"},
	{"branch-misses", "BR_MIS_PRED", NULL},
	{"cache-references", "L1D_CACHE", NULL},
	{"cache-misses", "L1D_CACHE_REFILL", NULL},
	{"bus-cycles", "BUS_CYCLES", NULL},
	{"stalled-cycles-frontend", "STALL_FRONTEND", NULL},
	{"stalled-cycles-backend", "STALL_BACKEND", NULL},
	{"L1-dcache-loads", "L1D_CACHE", NULL},
	{"L1-dcache-load-misses", "L1D_CACHE_REFILL", NULL},
	{"L1-icache-loads", "L1I_CACHE", NULL},
	{"L1-icache-load-misses", "L1I_CACHE_REFILL", NULL},
	{"dTLB-loads", "L1D_TLB", NULL},
	{"dTLB-load-misses", "L1D_TLB_REFILL", NULL},
	{"iTLB-loads", "L1I_TLB", NULL},
	{"iTLB-load-misses", "L1I_TLB_REFILL", NULL},
	{"LLC-loads", "LL_CACHE_RD", NULL},
	{"LLC-load-misses", "LL_CACHE_MISS_RD", NULL},
	{"branch-loads", "BR_PRED", NULL},
	{"branch-load-misses", "BR_MIS_PRED", NULL},
};

/* Linux's software events (enum dpmu_mon_sw order), with perf's short
 * aliases (faults, cs, migrations). */
static const struct {
	const char *name;
	enum dpmu_mon_sw sw;
} sw_events[] = {
	{"cpu-clock", DPMU_MON_SW_CPU_CLOCK},
	{"task-clock", DPMU_MON_SW_TASK_CLOCK},
	{"page-faults", DPMU_MON_SW_PAGE_FAULTS},
	{"context-switches", DPMU_MON_SW_CONTEXT_SWITCHES},
	{"cpu-migrations", DPMU_MON_SW_CPU_MIGRATIONS},
	{"minor-faults", DPMU_MON_SW_MINOR_FAULTS},
	{"major-faults", DPMU_MON_SW_MAJOR_FAULTS},
	{"alignment-faults", DPMU_MON_SW_ALIGNMENT_FAULTS},
	{"emulation-faults", DPMU_MON_SW_EMULATION_FAULTS},
	{"faults", DPMU_MON_SW_PAGE_FAULTS},
	{"cs", DPMU_MON_SW_CONTEXT_SWITCHES},
	{"migrations", DPMU_MON_SW_CPU_MIGRATIONS},
};

const char *dpmu_mon_sw_name(unsigned sw)
{
	return sw < DPMU_MON_SW_COUNT ? sw_events[sw].name : NULL;
}

/* A software event: its canonical name and number on every core type. */
static bool resolve_sw(const struct catalogs *c, const char *name, struct dpmu_mon_event *ev)
{
	for (size_t i = 0; i < sizeof sw_events / sizeof sw_events[0]; i++) {
		if (strcasecmp(sw_events[i].name, name) != 0)
			continue;
		ev->target = DPMU_MON_SOFTWARE;
		for (unsigned t = 0; t < c->ntypes && t < DPMU_MAX_CORE_TYPES; t++)
			ev->code[t] = (int32_t)sw_events[i].sw;
		snprintf(ev->name, sizeof ev->name, "%s", sw_events[sw_events[i].sw].name);
		return true;
	}
	return false;
}

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
	c->p = p;
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
	struct dpmu_err ignore;
	c->amu = dpmu_catalog_get("amu", &ignore); /* no AMU catalog: amu/ names are unknown */
	return 0;
}


static void suggest_in(const struct dpmu_event_catalog *cat, const char *name, const char **best,
		       size_t *bestd)
{
	if (!cat)
		return;
	for (size_t i = 0; i < cat->count; i++) {
		size_t d = dpmu_name_distance(name, cat->events[i].name);
		if (d < *bestd) {
			*bestd = d;
			*best = cat->events[i].name;
		}
	}
}

/* Which PMUs a name may be looked up on. */
enum {
	ON_CORE = 1u << 0,
	ON_CLUSTER = 1u << 1,
	ON_AMU = 1u << 2,
	ON_SW = 1u << 3,
};

static int unknown_event(const struct catalogs *c, const char *name, unsigned on,
			 struct dpmu_err *err)
{
	const char *best = NULL;
	size_t bestd = (size_t)-1;
	for (unsigned t = 0; (on & ON_CORE) && t < c->ntypes; t++)
		suggest_in(c->type[t], name, &best, &bestd);
	for (unsigned k = 0; (on & ON_CLUSTER) && k < c->nclusters; k++)
		suggest_in(c->cluster[k], name, &best, &bestd);
	if (on & ON_AMU)
		suggest_in(c->amu, name, &best, &bestd);
	bool alias = false;
	for (size_t i = 0; (on & ON_SW) && i < sizeof sw_events / sizeof sw_events[0]; i++) {
		size_t d = dpmu_name_distance(name, sw_events[i].name);
		if (d < bestd) {
			bestd = d;
			best = sw_events[i].name;
			alias = true;
		}
	}
	for (size_t i = 0; (on & ON_CORE) && i < sizeof perf_aliases / sizeof perf_aliases[0];
	     i++) {
		size_t d = dpmu_name_distance(name, perf_aliases[i].name);
		if (d < bestd) {
			bestd = d;
			best = perf_aliases[i].name;
			alias = true;
		}
	}
	size_t len = strlen(name);
	if (best && bestd <= 3 && bestd * 3 <= len) {
		/* Answer in the user's case: l1d_cahce -> l1d_cache (perf's own
		 * names keep their spelling: L1-dcache-loads). */
		bool lower = !alias;
		for (const char *q = name; lower && *q; q++)
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

/* r1b or 0x1b: a raw event number (perf's rNNN syntax). Returns 1 with
 * the number in *code, 0 for a name that is not raw, -1 for a raw number
 * past 16 bits (PMEVTYPER<n>_EL0.evtCount and the DSU's CLUSTERPMXEVTYPER
 * event field are 16 bits wide). */
static int parse_raw(const char *s, uint16_t *code)
{
	const char *d;
	if ((s[0] == 'r' || s[0] == 'R') && s[1])
		d = s + 1;
	else if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s[2])
		d = s + 2;
	else
		return 0;
	unsigned long v = 0;
	bool wide = false;
	for (const char *q = d; *q; q++) {
		if (!isxdigit((unsigned char)*q))
			return 0;
		v = v * 16 + (unsigned long)(isdigit((unsigned char)*q) ? *q - '0'
							: tolower((unsigned char)*q) - 'a' + 10);
		if (v > 0xffff) {
			wide = true;
			v = 0x10000; /* no overflow however long the digits run */
		}
	}
	if (wide)
		return -1;
	*code = (uint16_t)v;
	return 1;
}

/* perf's modifiers: u (EL0), k (EL1), h (EL2), any combination. */
static int parse_modifiers(const char *item, const char *mods, unsigned *els,
			   struct dpmu_err *err)
{
	if (!*mods)
		return dpmu_err_set(err, DPMU_EINVAL, "event '%s': empty modifier after ':'", item);
	unsigned v = 0;
	for (const char *q = mods; *q; q++) {
		switch (*q) {
		case 'u':
			v |= DPMU_DRV_EL0;
			break;
		case 'k':
			v |= DPMU_DRV_EL1;
			break;
		case 'h':
			v |= DPMU_DRV_EL2;
			break;
		default:
			return dpmu_err_set(err, DPMU_EINVAL,
					    "event '%s': unknown modifier '%c' (use u, k or h)", item,
					    isprint((unsigned char)*q) ? *q : '?');
		}
	}
	*els = v;
	return 0;
}

/* Is `code` one of the AMU events of core type t (group 0 or selectable)? */
static bool amu_has(const struct dpmu_core_type *t, uint16_t code)
{
	for (unsigned i = 0; i < t->amu_group0 && i < DPMU_AMU_GROUP0_MAX; i++)
		if (t->amu_group0_events[i] == code)
			return true;
	for (size_t i = 0; t->amu_group1 && i < t->amu_n_selectable; i++)
		if (t->amu_selectable[i] == code)
			return true;
	return false;
}

static void clear_codes(struct dpmu_mon_event *ev)
{
	memset(ev, 0, sizeof *ev);
	for (unsigned t = 0; t < DPMU_MAX_CORE_TYPES; t++)
		ev->code[t] = DPMU_MON_NO_CODE;
	for (unsigned k = 0; k < DPMU_MAX_CLUSTERS; k++)
		ev->cluster_code[k] = DPMU_MON_NO_CODE;
	ev->els = DPMU_DRV_EL01;
}

/* A perf name (case-insensitive, as perf accepts CYCLES): its Arm event
 * in every core type's catalog. */
static bool resolve_alias(const struct catalogs *c, const char *name, struct dpmu_mon_event *ev)
{
	for (size_t i = 0; i < sizeof perf_aliases / sizeof perf_aliases[0]; i++) {
		const struct perf_alias *a = &perf_aliases[i];
		if (strcasecmp(a->name, name) != 0)
			continue;
		const char *canon = NULL;
		for (unsigned t = 0; t < c->ntypes; t++) {
			if (!c->type[t])
				continue;
			const struct dpmu_event_desc *d = dpmu_catalog_find_name(c->type[t], a->event);
			if (!d && a->fallback)
				d = dpmu_catalog_find_name(c->type[t], a->fallback);
			if (d) {
				ev->code[t] = d->code;
				if (!canon)
					canon = d->name;
			}
		}
		if (!canon)
			canon = a->event;
		ev->target = DPMU_MON_CORE;
		snprintf(ev->name, sizeof ev->name, "%s", canon);
		return true;
	}
	return false;
}

static int resolve(const struct catalogs *c, const char *item, const char *group_mods,
		   struct dpmu_mon_event *ev, struct dpmu_err *err)
{
	char name[DPMU_NAME_MAX];
	unsigned on = ON_CORE | ON_CLUSTER | ON_SW;
	bool qualified = false;
	const char *s = item;
	/* pmu/EVENT/ qualifiers, as perf writes armv8_pmuv3/.../ and arm_dsu_0/.../ */
	if (strncasecmp(s, "core/", 5) == 0) {
		s += 5;
		on = ON_CORE;
		qualified = true;
	} else if (strncasecmp(s, "cluster/", 8) == 0) {
		s += 8;
		on = ON_CLUSTER;
		qualified = true;
	} else if (strncasecmp(s, "amu/", 4) == 0) {
		s += 4;
		on = ON_AMU;
		qualified = true;
	} else if (strncasecmp(s, "sw/", 3) == 0) {
		s += 3;
		on = ON_SW;
		qualified = true;
	} else if (strchr(s, '/')) {
		return dpmu_err_set(err, DPMU_EINVAL,
				    "event '%s': unknown PMU (use core/EVENT/, cluster/EVENT/, "
				    "amu/EVENT/ or sw/EVENT/)",
				    item);
	}
	/* The name ends at the closing '/' of a qualifier, or at ':'. */
	const char *mods = NULL;
	size_t n;
	if (qualified) {
		const char *slash = strchr(s, '/');
		n = slash ? (size_t)(slash - s) : strlen(s);
		if (slash) {
			/* core/NAME/u and core/NAME/:u both carry modifiers */
			const char *after = slash + 1;
			if (*after == ':')
				after++;
			if (*after)
				mods = after;
			else if (after != slash + 1)
				mods = after; /* "core/NAME/:" - empty, reported below */
		} else if (memchr(s, ':', n)) {
			const char *colon = memchr(s, ':', n);
			mods = colon + 1;
			n = (size_t)(colon - s);
		}
	} else {
		const char *colon = strchr(s, ':');
		n = colon ? (size_t)(colon - s) : strlen(s);
		if (colon)
			mods = colon + 1;
	}
	if (n == 0)
		return dpmu_err_set(err, DPMU_EINVAL, "event '%s': no event name", item);
	if (n >= sizeof name || memchr(s, '/', n) || memchr(s, ':', n) || memchr(s, '{', n) ||
	    memchr(s, '}', n))
		return dpmu_err_set(err, DPMU_EINVAL, "event '%s': malformed name", item);
	memcpy(name, s, n);
	name[n] = '\0';

	clear_codes(ev);
	bool has_mods = mods || group_mods;
	unsigned els = DPMU_DRV_EL01;
	if (has_mods) {
		/* the item's own modifiers win over its group's */
		int rc = parse_modifiers(item, mods ? mods : group_mods, &els, err);
		if (rc)
			return rc;
	}

	const char *canon = NULL;
	/* Linux software events: their names are no catalog's */
	if ((on & ON_SW) && resolve_sw(c, name, ev))
		canon = ev->name;
	/* perf's generic names first: "cycles" is the core's CPU_CYCLES, not
	 * the DSU's CYCLES. */
	if (!canon && (on & ON_CORE) && resolve_alias(c, name, ev))
		canon = ev->name;
	/* Then the cluster catalogs: L3D_CACHE names the cluster PMU's count of
	 * the shared L3 (as perf users expect of an uncore event; core/L3D_CACHE/ asks the core). */
	if (!canon && (on & ON_CLUSTER)) {
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
		}
	}
	if (!canon && (on & ON_AMU) && c->amu) {
		const struct dpmu_event_desc *d = dpmu_catalog_find_name(c->amu, name);
		if (d) {
			canon = d->name;
			ev->target = DPMU_MON_AMU;
			snprintf(ev->name, sizeof ev->name, "amu:%s", canon);
			for (unsigned t = 0; t < c->ntypes; t++)
				if (c->type_used[t] && amu_has(&c->p->core_types[t], d->code))
					ev->code[t] = d->code;
		}
	}
	if (!canon && (on & ON_CORE)) {
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
		}
	}
	uint16_t raw;
	int is_raw = !canon && (on & (ON_CORE | ON_CLUSTER)) ? parse_raw(name, &raw) : 0;
	if (is_raw < 0)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "raw event '%s': event numbers are 16 bits (r0 to rffff)", name);
	if (is_raw > 0) {
		canon = name;
		ev->raw = true;
		snprintf(ev->name, sizeof ev->name, "r%x", raw);
		if (on & ON_CORE) {
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
	}
	if (!canon)
		return unknown_event(c, name, on, err);
	if (has_mods && ev->target != DPMU_MON_CORE && ev->target != DPMU_MON_SOFTWARE)
		/* The DSU PMU counts for the whole cluster and the AMU for the
		 * whole core: neither has PMEVTYPER's exception-level filter (Linux's
		 * arm_dsu_pmu refuses exclude_user/kernel the same way). */
		return dpmu_err_set(err, DPMU_EINVAL,
				    "event '%s': the %s cannot filter by exception level, so "
				    "modifiers (:u, :k, :h) do not apply",
				    item, ev->target == DPMU_MON_AMU ? "Activity Monitors" : "cluster PMU");
	ev->els = els;
	if (has_mods) {
		/* Show the filter as perf does: cycles:u. */
		char mod[4];
		size_t k = 0;
		if (els & DPMU_DRV_EL0)
			mod[k++] = 'u';
		if (els & DPMU_DRV_EL1)
			mod[k++] = 'k';
		if (els & DPMU_DRV_EL2)
			mod[k++] = 'h';
		mod[k] = '\0';
		size_t len = strlen(ev->name);
		if (len + 1 + k < sizeof ev->name)
			snprintf(ev->name + len, sizeof ev->name - len, ":%s", mod);
	}
	return 0;
}

static void trim(const char **s, size_t *n)
{
	while (*n > 0 && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

static int add_item(const struct catalogs *c, const char *list, const char *s, size_t n,
		    const char *group_mods, unsigned group, bool grouped,
		    struct dpmu_mon_events *out, struct dpmu_err *err)
{
	trim(&s, &n);
	if (n == 0)
		return dpmu_err_set(err, DPMU_EINVAL, "event list '%s': empty event name", list);
	char item[2 * DPMU_NAME_MAX];
	if (n >= sizeof item)
		return dpmu_err_set(err, DPMU_EINVAL, "event '%.*s...': name too long", 32, s);
	memcpy(item, s, n);
	item[n] = '\0';
	if (out->n == DPMU_MON_MAX_EVENTS)
		return dpmu_err_set(err, DPMU_ERANGE, "event list: more than %d events",
				    DPMU_MON_MAX_EVENTS);
	struct dpmu_mon_event *ev = &out->ev[out->n];
	int rc = resolve(c, item, group_mods, ev, err);
	if (rc)
		return rc;
	ev->group = group;
	ev->grouped = grouped;
	out->n++;
	return 0;
}

/* A group: "{a,b,...}" optionally followed by ":mods". `s` points at '{';
 * *end receives the first character after the group. */
static int add_group(const struct catalogs *c, const char *list, const char *s,
		     const char **end, struct dpmu_mon_events *out, struct dpmu_err *err)
{
	const char *close = NULL;
	for (const char *q = s + 1; *q; q++) {
		if (*q == '{')
			return dpmu_err_set(err, DPMU_EINVAL,
					    "event list '%s': groups cannot nest ('{' inside a group)",
					    list);
		if (*q == '}') {
			close = q;
			break;
		}
	}
	if (!close)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "event list '%s': unbalanced '{' (the group has no closing '}')",
				    list);
	/* Group modifiers: "}:u" up to the next ',' */
	const char *after = close + 1;
	char gmods[16];
	const char *group_mods = NULL;
	if (*after == ':') {
		const char *m = after + 1;
		size_t k = strcspn(m, ",");
		if (k >= sizeof gmods)
			return dpmu_err_set(err, DPMU_EINVAL, "event list '%s': group modifier too long",
					    list);
		memcpy(gmods, m, k);
		gmods[k] = '\0';
		group_mods = gmods;
		after = m + k;
	} else if (*after && *after != ',' && *after != ' ' && *after != '\t') {
		return dpmu_err_set(err, DPMU_EINVAL,
				    "event list '%s': unexpected '%c' after a group's '}'", list,
				    isprint((unsigned char)*after) ? *after : '?');
	}
	unsigned group = out->ngroups;
	const char *p = s + 1;
	if (p == close)
		return dpmu_err_set(err, DPMU_EINVAL, "event list '%s': empty group '{}'", list);
	for (;;) {
		const char *comma = memchr(p, ',', (size_t)(close - p));
		const char *e = comma ? comma : close;
		int rc = add_item(c, list, p, (size_t)(e - p), group_mods, group, true, out, err);
		if (rc)
			return rc;
		if (!comma)
			break;
		p = comma + 1;
	}
	out->ngroups++;
	*end = after;
	return 0;
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
		if (*s == '{') {
			const char *after = NULL;
			rc = add_group(&c, list, s, &after, out, err);
			if (rc)
				return rc;
			while (*after == ' ' || *after == '\t')
				after++;
			if (!*after)
				break;
			s = after + 1; /* after is ',' */
			if (!*s)
				return dpmu_err_set(err, DPMU_EINVAL,
						    "event list '%s': empty event name", list);
			continue;
		}
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		const char *brace = memchr(s, '}', n);
		if (brace)
			return dpmu_err_set(err, DPMU_EINVAL,
					    "event list '%s': unbalanced '}' (no group was opened)", list);
		if (memchr(s, '{', n))
			return dpmu_err_set(err, DPMU_EINVAL,
					    "event list '%s': '{' must start an item", list);
		rc = add_item(&c, list, s, n, NULL, out->ngroups, false, out, err);
		if (rc)
			return rc;
		out->ngroups++;
		if (!e)
			break;
		s = e + 1;
	}
	return 0;
}

/* The names of a default list the catalogs have, each an ungrouped event
 * on the PMU `pmu` names; the others are left out. */
static void add_defaults(const struct catalogs *c, const char *pmu, const char *const *names,
			 size_t n, struct dpmu_mon_events *out)
{
	struct dpmu_err ignore;
	for (size_t i = 0; i < n; i++) {
		char item[DPMU_NAME_MAX + 12];
		snprintf(item, sizeof item, "%s/%s/", pmu, names[i]);
		if (resolve(c, item, NULL, &out->ev[out->n], &ignore) == 0) {
			out->ev[out->n].group = out->ngroups++;
			out->n++;
		}
	}
}

int dpmu_mon_events_default(const struct dpmu_profile *p, uint64_t cores,
			    struct dpmu_mon_events *out, struct dpmu_err *err)
{
	memset(out, 0, sizeof *out);
	struct catalogs c;
	int rc = catalogs_load(p, cores, &c, err);
	if (rc)
		return rc;
	add_defaults(&c, "core", default_core_events,
		     sizeof default_core_events / sizeof default_core_events[0], out);
	add_defaults(&c, "cluster", default_cluster_events,
		     sizeof default_cluster_events / sizeof default_cluster_events[0], out);
	return 0;
}

int dpmu_mon_events_find(const struct dpmu_mon_events *ev, const char *name)
{
	for (unsigned i = 0; i < ev->n; i++)
		if (strcasecmp(ev->ev[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Seed 001 section 5.2 gives a range per purpose; the monitor takes the
 * geometric middle of each, rounded down to one significant digit (200,
 * 20, 2 ms): within a factor 2.5 of both ends of every range. */
static const struct {
	const char *name;
	uint64_t lo_ms, hi_ms, pick_ms;
} purposes[] = {
	{"power", 100, 500, 200},
	{"tuning", 10, 50, 20},
	{"locks", 1, 5, 2},
};

uint64_t dpmu_mon_purpose_interval(const char *purpose)
{
	for (size_t i = 0; purpose && i < sizeof purposes / sizeof purposes[0]; i++)
		if (strcasecmp(purposes[i].name, purpose) == 0)
			return purposes[i].pick_ms * UINT64_C(1000000);
	return 0;
}
