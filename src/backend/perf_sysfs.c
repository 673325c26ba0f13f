/*
 * Discovery of the perf backend from sysfs (Documentation/ABI/testing/
 * sysfs-bus-event_source-devices-*): the PMUs under
 * ROOT/bus/event_source/devices with their `type`, `cpus` / `cpumask` /
 * `associated_cpus`, `format/` and `events/`, and each cpu's MIDR_EL1
 * under ROOT/devices/system/cpu. ROOT is "/sys" or the tests' fake tree
 * (DPMU_SYSFS_ROOT), so everything here runs without the hardware.
 *
 * What a core is comes from the built-in profiles (data/profiles): a core
 * type is matched by MIDR_EL1's implementer [31:24] and part number
 * [15:4] (Arm ARM D19.2 MIDR_EL1), never by a table of its own here.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dynpmu/perf.h"

/* Which PMUs are which, by the names Linux's drivers register: arm_pmu
 * (drivers/perf/arm_pmuv3.c: "armv8_pmuv3", "armv8_cortex_a75", ...;
 * "_N" added when several PMUs probe) and arm_dsu_pmu ("arm_dsu_N"). */
static const struct {
	const char *prefix;
	enum dpmu_perf_pmu_kind kind;
} pmu_names[] = {
	{"armv8_", DPMU_PERF_PMU_CORE},
	{"armv9_", DPMU_PERF_PMU_CORE},
	{"arm_dsu_", DPMU_PERF_PMU_DSU},
};

/* MIDR_EL1 fields that name a core type: Implementer and PartNum. */
#define MIDR_TYPE_MASK 0xff00fff0u

const char *dpmu_perf_sysfs_root(void)
{
	const char *r = getenv(DPMU_PERF_SYSFS_ENV);
	return r && *r ? r : "/sys";
}

/* The first line of a sysfs file, trailing white space removed. */
static int read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)cap, f))
		buf[0] = '\0';
	fclose(f);
	size_t n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

/* A cpu list as the kernel writes it (cpulist_parse): "0-3,6". */
static int parse_cpulist(const char *s, uint64_t *mask)
{
	uint64_t m = 0;
	while (*s) {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;
		if (end == s)
			return -1;
		if (*end == '-') {
			const char *q = end + 1;
			b = strtoul(q, &end, 10);
			if (end == q || b < a)
				return -1;
		}
		if (b >= DPMU_MAX_CORES)
			return -1;
		for (unsigned long c = a; c <= b; c++)
			m |= UINT64_C(1) << c;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	*mask = m;
	return 0;
}

/* A format/ file: "config:0-15", "config1:0". */
static void parse_field(const char *text, struct dpmu_perf_field *f)
{
	memset(f, 0, sizeof *f);
	unsigned word = 0;
	const char *p;
	if (strncmp(text, "config1:", 8) == 0) {
		word = 1;
		p = text + 8;
	} else if (strncmp(text, "config2:", 8) == 0) {
		word = 2;
		p = text + 8;
	} else if (strncmp(text, "config:", 7) == 0) {
		p = text + 7;
	} else {
		return;
	}
	unsigned lo, hi;
	int n = sscanf(p, "%u-%u", &lo, &hi);
	if (n < 1)
		return;
	if (n == 1)
		hi = lo;
	if (hi < lo || hi > 63)
		return;
	f->present = true;
	f->word = word;
	f->lo = lo;
	f->hi = hi;
}

/* events/NAME holds "event=0x08" (maybe with other terms after a ','). */
static int read_aliases(const char *dir, struct dpmu_perf_pmu *pmu)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0; /* a PMU without events/ advertises none */
	struct dirent *e;
	size_t cap = 0;
	int rc = 0;
	while (!rc && (e = readdir(d)) != NULL) {
		/* NAME.scale, NAME.unit are not events */
		if (e->d_name[0] == '.' || strchr(e->d_name, '.') ||
		    strlen(e->d_name) >= DPMU_NAME_MAX)
			continue;
		char path[1024], text[128];
		int w = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (w < 0 || (size_t)w >= sizeof path || read_line(path, text, sizeof text))
			continue;
		const char *ev = strstr(text, "event=");
		if (!ev)
			continue;
		char *end;
		unsigned long code = strtoul(ev + 6, &end, 0);
		if (end == ev + 6 || code > 0xffff)
			continue;
		if (pmu->naliases == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct dpmu_perf_alias *a = realloc(pmu->aliases, ncap * sizeof *a);
			if (!a) {
				rc = DPMU_ENOMEM;
				break;
			}
			pmu->aliases = a;
			cap = ncap;
		}
		struct dpmu_perf_alias *a = &pmu->aliases[pmu->naliases++];
		snprintf(a->name, sizeof a->name, "%.*s", DPMU_NAME_MAX - 1, e->d_name);
		a->event = (uint16_t)code;
	}
	closedir(d);
	return rc;
}

static int pmu_order(const void *a, const void *b)
{
	const struct dpmu_perf_pmu *x = a, *y = b;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	/* lowest cpu first: clusters and types then follow cpu numbering */
	unsigned cx = x->cpus ? (unsigned)__builtin_ctzll(x->cpus) : 64;
	unsigned cy = y->cpus ? (unsigned)__builtin_ctzll(y->cpus) : 64;
	return cx != cy ? (cx < cy ? -1 : 1) : strcmp(x->name, y->name);
}

static int read_pmu(struct dpmu_perf_system *sys, const char *devs, const char *name,
		    enum dpmu_perf_pmu_kind kind, struct dpmu_err *err)
{
	if (sys->npmus == DPMU_PERF_MAX_PMUS)
		return dpmu_err_set(err, DPMU_ERANGE, "%s: more than %d Arm PMUs", devs,
				    DPMU_PERF_MAX_PMUS);
	struct dpmu_perf_pmu *pmu = &sys->pmus[sys->npmus];
	memset(pmu, 0, sizeof *pmu);
	snprintf(pmu->name, sizeof pmu->name, "%s", name);
	pmu->kind = kind;
	pmu->open_cpu = -1;
	char path[1024], text[512];
	snprintf(path, sizeof path, "%s/%s/type", devs, name);
	char *end;
	if (read_line(path, text, sizeof text) ||
	    (pmu->type = (uint32_t)strtoul(text, &end, 10), end == text || *end))
		return dpmu_err_set(err, DPMU_EIO, "%s: missing or not a number", path);
	/* core PMUs list their cpus in `cpus`; the DSU its cluster in
	 * `associated_cpus` and the cpu to open on in `cpumask` */
	snprintf(path, sizeof path, "%s/%s/%s", devs, name,
		 kind == DPMU_PERF_PMU_CORE ? "cpus" : "associated_cpus");
	if (read_line(path, text, sizeof text) || parse_cpulist(text, &pmu->cpus) || !pmu->cpus)
		return dpmu_err_set(err, DPMU_EIO, "%s: missing or not a cpu list (e.g. 0-3)", path);
	if (kind == DPMU_PERF_PMU_DSU) {
		uint64_t m;
		snprintf(path, sizeof path, "%s/%s/cpumask", devs, name);
		if (read_line(path, text, sizeof text) || parse_cpulist(text, &m) || !m)
			return dpmu_err_set(err, DPMU_EIO, "%s: missing or not a cpu", path);
		pmu->open_cpu = __builtin_ctzll(m);
	}
	snprintf(path, sizeof path, "%s/%s/format/event", devs, name);
	if (read_line(path, text, sizeof text) == 0)
		parse_field(text, &pmu->event);
	if (!pmu->event.present)
		return dpmu_err_set(err, DPMU_EIO,
				    "%s: missing or not a field (the Arm PMU drivers write "
				    "config:0-15)",
				    path);
	snprintf(path, sizeof path, "%s/%s/format/long", devs, name);
	if (read_line(path, text, sizeof text) == 0)
		parse_field(text, &pmu->long_bit);
	snprintf(path, sizeof path, "%s/%s/events", devs, name);
	if (read_aliases(path, pmu))
		return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory", path);
	sys->npmus++;
	return 0;
}

void dpmu_perf_system_free(struct dpmu_perf_system *sys)
{
	if (!sys)
		return;
	for (unsigned i = 0; i < sys->npmus; i++)
		free(sys->pmus[i].aliases);
	free(sys);
}

int dpmu_perf_discover(const char *root, struct dpmu_perf_system **out, struct dpmu_err *err)
{
	*out = NULL;
	if (!root)
		root = dpmu_perf_sysfs_root();
	struct dpmu_perf_system *sys = calloc(1, sizeof *sys);
	if (!sys)
		return dpmu_err_set(err, DPMU_ENOMEM, "perf: out of memory");
	snprintf(sys->root, sizeof sys->root, "%s", root);
	char path[1024], text[512];
	snprintf(path, sizeof path, "%s/devices/system/cpu/online", root);
	if (read_line(path, text, sizeof text) || parse_cpulist(text, &sys->online) || !sys->online) {
		dpmu_perf_system_free(sys);
		return dpmu_err_set(err, DPMU_ENOENT,
				    "%s: missing or not a cpu list (dynpmu handles cpus 0 to %d)",
				    path, DPMU_MAX_CORES - 1);
	}
	for (unsigned c = 0; c < DPMU_MAX_CORES; c++) {
		sys->core_pmu[c] = -1;
		snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%u/regs/identification/midr_el1",
			 root, c);
		if ((sys->online >> c & 1) && read_line(path, text, sizeof text) == 0)
			sys->midr[c] = (uint32_t)strtoull(text, NULL, 16);
	}
	char devs[768];
	snprintf(devs, sizeof devs, "%s/bus/event_source/devices", root);
	DIR *d = opendir(devs);
	if (!d) {
		dpmu_perf_system_free(sys);
		return dpmu_err_set(err, DPMU_ENOENT,
				    "%s: %s (is this Linux with perf events, CONFIG_PERF_EVENTS?)",
				    devs, strerror(errno));
	}
	struct dirent *e;
	int rc = 0;
	size_t used = 0;
	while (!rc && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		bool ours = false;
		for (size_t k = 0; !rc && !ours && k < sizeof pmu_names / sizeof pmu_names[0]; k++)
			if (strncmp(e->d_name, pmu_names[k].prefix, strlen(pmu_names[k].prefix)) == 0) {
				ours = true;
				rc = read_pmu(sys, devs, e->d_name, pmu_names[k].kind, err);
			}
		if (!ours && used + strlen(e->d_name) + 2 < sizeof sys->others) {
			int w = snprintf(sys->others + used, sizeof sys->others - used, "%s%s",
					 used ? ", " : "", e->d_name);
			used += w > 0 ? (size_t)w : 0;
		}
	}
	closedir(d);
	if (rc) {
		dpmu_perf_system_free(sys);
		return rc;
	}
	qsort(sys->pmus, sys->npmus, sizeof sys->pmus[0], pmu_order);
	for (unsigned i = 0; i < sys->npmus; i++)
		for (unsigned c = 0; sys->pmus[i].kind == DPMU_PERF_PMU_CORE && c < DPMU_MAX_CORES; c++)
			if ((sys->pmus[i].cpus >> c & 1) && sys->core_pmu[c] < 0)
				sys->core_pmu[c] = (int)i;
	*out = sys;
	return 0;
}

const struct dpmu_perf_pmu *dpmu_perf_dsu_of(const struct dpmu_perf_system *sys, unsigned cpu)
{
	for (unsigned i = 0; cpu < 64 && i < sys->npmus; i++)
		if (sys->pmus[i].kind == DPMU_PERF_PMU_DSU && (sys->pmus[i].cpus >> cpu & 1))
			return &sys->pmus[i];
	return NULL;
}

bool dpmu_perf_advertises(const struct dpmu_perf_pmu *pmu, uint16_t code)
{
	for (size_t i = 0; i < pmu->naliases; i++)
		if (pmu->aliases[i].event == code)
			return true;
	return false;
}

bool dpmu_perf_available(void)
{
	struct dpmu_perf_system *sys = NULL;
	struct dpmu_err e;
	bool yes = false;
	if (dpmu_perf_discover(NULL, &sys, &e) == 0)
		for (unsigned i = 0; i < sys->npmus; i++)
			yes = yes || sys->pmus[i].kind == DPMU_PERF_PMU_CORE;
	dpmu_perf_system_free(sys);
	return yes;
}

/* ---- the profile ---------------------------------------------------------------- */

/* The built-in core type with this MIDR's implementer and part number. */
static bool known_type(uint32_t midr, struct dpmu_core_type *out)
{
	for (const char *const *n = dpmu_profile_builtin_names; midr && *n; n++) {
		struct dpmu_profile *p = NULL;
		struct dpmu_err ignore;
		if (dpmu_profile_load(*n, &p, &ignore))
			continue;
		bool found = false;
		for (unsigned t = 0; !found && t < p->n_core_types; t++)
			if ((p->core_types[t].midr & MIDR_TYPE_MASK) == (midr & MIDR_TYPE_MASK)) {
				*out = p->core_types[t];
				found = true;
			}
		dpmu_profile_free(p);
		if (found)
			return true;
	}
	return false;
}

/* cpufreq's cpuinfo_max_freq (kHz), or 0: the unit's clock for metrics. */
static uint64_t max_freq_hz(const struct dpmu_perf_system *sys, unsigned cpu)
{
	char path[1024], text[64];
	snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%u/cpufreq/cpuinfo_max_freq",
		 sys->root, cpu);
	if (read_line(path, text, sizeof text))
		return 0;
	return strtoull(text, NULL, 10) * 1000u;
}

/* The core type of a core PMU (or, pmu NULL, of cpus without one). */
static void make_type(const struct dpmu_perf_system *sys, const struct dpmu_perf_pmu *pmu,
		      unsigned first_cpu, struct dpmu_core_type *t)
{
	memset(t, 0, sizeof *t);
	uint32_t midr = sys->midr[first_cpu];
	if (!pmu || !known_type(midr, t)) {
		memset(t, 0, sizeof *t);
		snprintf(t->name, sizeof t->name, "%s", pmu ? pmu->name : "no core PMU");
		snprintf(t->catalog, sizeof t->catalog, "armv8-pmuv3");
	}
	t->midr = midr;
	t->freq_hz = max_freq_hz(sys, first_cpu);
	/* Linux keeps the AMU to itself: nothing of it is reachable here */
	t->amu_group0 = t->amu_group1 = 0;
	t->amu_n_selectable = 0;
	/* implemented = what the kernel advertises (its PMCEID reading) */
	t->n_events = 0;
	for (size_t i = 0; pmu && i < pmu->naliases && t->n_events < DPMU_MAX_EVENTS; i++)
		t->events[t->n_events++] = pmu->aliases[i].event;
}

int dpmu_perf_profile(const struct dpmu_perf_system *sys, struct dpmu_profile **out,
		      struct dpmu_err *err)
{
	*out = NULL;
	struct dpmu_profile *p = calloc(1, sizeof *p);
	if (!p)
		return dpmu_err_set(err, DPMU_ENOMEM, "perf: out of memory");
	snprintf(p->name, sizeof p->name, "perf");
	snprintf(p->description, sizeof p->description,
		 "this machine, from %.200s/bus/event_source/devices", sys->root);
	/* core types: one per core PMU, then one for cpus without any */
	int type_of[DPMU_MAX_CORES];
	int pmu_type[DPMU_PERF_MAX_PMUS];
	int none_type = -1;
	for (unsigned i = 0; i < DPMU_PERF_MAX_PMUS; i++)
		pmu_type[i] = -1;
	for (unsigned c = 0; c < DPMU_MAX_CORES; c++) {
		type_of[c] = -1;
		if (!(sys->online >> c & 1))
			continue;
		int pi = sys->core_pmu[c];
		int *slot = pi >= 0 ? &pmu_type[pi] : &none_type;
		if (*slot < 0) {
			/* made from its first cpu (the PMUs come in cpu order) */
			if (p->n_core_types == DPMU_MAX_CORE_TYPES) {
				dpmu_profile_free(p);
				return dpmu_err_set(err, DPMU_ERANGE,
						    "perf: more than %d core types (core PMUs)",
						    DPMU_MAX_CORE_TYPES);
			}
			make_type(sys, pi >= 0 ? &sys->pmus[pi] : NULL, c,
				  &p->core_types[p->n_core_types]);
			*slot = (int)p->n_core_types++;
		}
		type_of[c] = *slot;
	}
	/* clusters: each DSU's cpus, in cpu order; the rest by eight */
	uint64_t left = sys->online;
	unsigned next = 0;
	while (left) {
		unsigned first = (unsigned)__builtin_ctzll(left);
		const struct dpmu_perf_pmu *dsu = dpmu_perf_dsu_of(sys, first);
		uint64_t members = 0;
		if (dsu) {
			members = dsu->cpus & sys->online;
		} else {
			for (unsigned c = first; c < DPMU_MAX_CORES && __builtin_popcountll(members) < 8;
			     c++) {
				if (!(left >> c & 1) || dpmu_perf_dsu_of(sys, c))
					break;
				members |= UINT64_C(1) << c;
			}
		}
		unsigned n = (unsigned)__builtin_popcountll(members);
		/* dynpmu numbers cores cluster by cluster (dpmu_profile_core):
		 * the kernel's cpu numbers must follow that order */
		if (first != next || members != (((UINT64_C(1) << n) - 1) << first) ||
		    n > DPMU_MAX_CORES_PER_CLUSTER || p->nclusters == DPMU_MAX_CLUSTERS) {
			dpmu_profile_free(p);
			return dpmu_err_set(err, DPMU_ENOTSUP,
					    "perf: cpu%u%s%s: dynpmu numbers cores cluster by cluster, "
					    "at most %d clusters of %d consecutive online cpus from "
					    "cpu0; this machine's numbering is not supported",
					    first, dsu ? " of " : "", dsu ? dsu->name : "",
					    DPMU_MAX_CLUSTERS, DPMU_MAX_CORES_PER_CLUSTER);
		}
		struct dpmu_cluster_params *cp = &p->clusters[p->nclusters++];
		cp->ncores = n;
		for (unsigned k = 0; k < n; k++)
			cp->core_type[k] = (unsigned)type_of[first + k];
		/* Linux's arm_dsu_pmu uses the classic DSU numbering (its event
		 * list, reference section 3) */
		cp->numbering = DPMU_DSU_CLASSIC;
		snprintf(cp->catalog, sizeof cp->catalog, "dsu");
		if (dsu)
			for (size_t i = 0; i < dsu->naliases && cp->n_events < DPMU_MAX_EVENTS; i++)
				cp->events[cp->n_events++] = dsu->aliases[i].event;
		left &= ~members;
		next = first + n;
	}
	*out = p;
	return 0;
}
