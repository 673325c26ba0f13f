/*
 * Cluster profiles: the facts about one DynamIQ system (core types, their
 * monitors and microarchitecture, the clusters and their DSU, memory) read
 * from JSON. The format is documented key by key in docs/profiles.md; every
 * limit checked here is listed there. A profile may derive from another
 * ("base"): the base's JSON tree with the profile's keys laid over it is
 * what is read (docs/profiles.md "Deriving a profile").
 */
#define _POSIX_C_SOURCE 200809L /* realpath */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arch/arch_internal.h"
#include "dynpmu/embedded.h"

const char *const dpmu_profile_builtin_names[] = {
	DPMU_PROFILE_DEFAULT,
	"a75x4-a55x4-dsu120",
	NULL,
};

#define DPMU_PROFILE_FILE_MAX (4u << 20) /* a profile is a few KiB */

static const char *const top_keys[] = {"base", "name", "description", "core_types", "clusters",
				       "timer_freq", "amu_const_freq", "snapshot_latency",
				       "memory", NULL};
static const char *const type_keys[] = {"name", "catalog", "midr", "freq", "pmu", "amu", "l1i",
					"l1d", "l2", "tlb", "branch", "pipeline", NULL};
static const char *const pmu_keys[] = {"counters", "pmuv3p5", "idcode", "events", NULL};
static const char *const amu_keys[] = {"group0", "group1", "selectable", NULL};
static const char *const cache_keys[] = {"size", "ways", "line", "latency", "replacement",
					 "prefetcher", NULL};
static const char *const tlb_keys[] = {"l1i", "l1d", "l2", "page_size", "walk_latency", NULL};
static const char *const tlb_level_keys[] = {"entries", "ways", "latency", NULL};
static const char *const branch_keys[] = {"predictor", "entries", "history_bits",
					  "btb_entries", "ras_entries", NULL};
static const char *const pipeline_keys[] = {"issue_width", "base_cpi", "mispredict_penalty",
					    "reorder_window", "miss_buffers", "exec_latency", NULL};
/* Order matches enum dpmu_exec_class from DPMU_EX_INT_MUL on. */
static const char *const exec_keys[] = {"int_mul", "int_div", "fp", "fp_div", NULL};
_Static_assert(DPMU_EX_COUNT == 5, "exec_keys names every class but DPMU_EX_SIMPLE");
static const char *const cluster_keys[] = {"cores", "freq", "pmu", "l3", "snoop_filter", NULL};
static const char *const core_entry_keys[] = {"type", "count", "freq", NULL};
static const char *const cpmu_keys[] = {"catalog", "counters", "counters64", "events", NULL};
static const char *const sf_keys[] = {"entries", "latency", NULL};
static const char *const mem_keys[] = {"bus_latency", "bus_width", "dram_latency_ns",
				       "dram_bandwidth", NULL};

/* Order matches enum dpmu_replacement / dpmu_prefetch / dpmu_bp_kind. */
static const char *const repl_names[] = {"lru", "plru", "random", NULL};
static const char *const prefetch_names[] = {"none", "next-line", "stride", NULL};
static const char *const bp_names[] = {"bimodal", "gshare", NULL};

/* Descend into member `key`, which must be an object with `keys`. Absent
 * and optional: *out = NULL. On success the path is pushed (pop with *mark). */
static int sub(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
	       const char *const *keys, const json_t **out, size_t *mark)
{
	*out = json_object_get(obj, key);
	*mark = strlen(j->path);
	if (!*out) {
		if (required)
			return dpmu_jc_fail(j, DPMU_EINVAL, "missing required key '%s'", key);
		return 0;
	}
	dpmu_jc_push_key(j, key);
	return dpmu_jc_object(j, *out, keys);
}

/* An array member with 1..max elements. */
static int array(struct dpmu_jc *j, const json_t *obj, const char *key, size_t min, size_t max,
		 const json_t **out)
{
	*out = json_object_get(obj, key);
	if (!*out)
		return dpmu_jc_fail(j, DPMU_EINVAL, "missing required key '%s'", key);
	size_t mark = dpmu_jc_push_key(j, key);
	if (!json_is_array(*out))
		return dpmu_jc_fail(j, DPMU_EINVAL, "must be an array, got %s",
				    dpmu_jc_type(*out));
	size_t n = json_array_size(*out);
	if (n < min || n > max)
		return dpmu_jc_fail(j, DPMU_ERANGE, "must have %zu to %zu entries, got %zu", min,
				    max, n);
	dpmu_jc_pop(j, mark);
	return 0;
}

/* A problem with member `key` found after reading it: the path names the
 * key. `what` takes one %llu. The path is left pushed, as on every error. */
static int fail_at(struct dpmu_jc *j, const char *key, int code, const char *what,
		   unsigned long long v)
{
	dpmu_jc_push_key(j, key);
	return dpmu_jc_fail(j, code, what, v);
}

/* A cache level. The uarch indexes sets by address bits and keeps a PLRU
 * tree per set, so lines, ways and sets are powers of two; size = ways x
 * line x sets (docs/profiles.md "Caches"). */
static int parse_cache(struct dpmu_jc *j, const json_t *o, struct dpmu_cache_params *c)
{
	uint64_t size;
	unsigned repl, pf;
	int rc;
	if ((rc = dpmu_jc_size(j, o, "size", true, 0, 256, 1ull << 30, &size)) ||
	    (rc = dpmu_jc_u32(j, o, "ways", true, 0, 1, 64, &c->ways)) ||
	    (rc = dpmu_jc_u32(j, o, "line", true, 0, 1, 4096, &c->line)) ||
	    (rc = dpmu_jc_u32(j, o, "latency", true, 0, 1, 10000, &c->latency)) ||
	    (rc = dpmu_jc_enum(j, o, "replacement", false, DPMU_REPL_LRU, repl_names, &repl)) ||
	    (rc = dpmu_jc_enum(j, o, "prefetcher", false, DPMU_PREFETCH_NONE, prefetch_names, &pf)))
		return rc;
	c->size = (uint32_t)size;
	c->replacement = (enum dpmu_replacement)repl;
	c->prefetch = (enum dpmu_prefetch)pf;
	if (!dpmu_arch_pow2(c->line) || c->line < 16)
		return fail_at(j, "line", DPMU_EINVAL,
			       "must be a power of two >= 16 bytes, got %llu", c->line);
	if (!dpmu_arch_pow2(c->ways))
		return fail_at(j, "ways", DPMU_EINVAL, "must be a power of two, got %llu", c->ways);
	uint64_t way_bytes = (uint64_t)c->ways * c->line;
	if (size % way_bytes != 0 || !dpmu_arch_pow2(size / way_bytes)) {
		dpmu_jc_push_key(j, "size");
		return dpmu_jc_fail(j, DPMU_EINVAL,
				    "must be ways x line x sets with sets a power of two: "
				    "%llu / (%u x %u) is not",
				    (unsigned long long)size, c->ways, c->line);
	}
	return 0;
}

static int parse_tlb_level(struct dpmu_jc *j, const json_t *parent, const char *key,
			   struct dpmu_tlb_params *t)
{
	const json_t *o;
	size_t m;
	int rc;
	if ((rc = sub(j, parent, key, true, tlb_level_keys, &o, &m)))
		return rc;
	if ((rc = dpmu_jc_u32(j, o, "entries", true, 0, 1, 1u << 16, &t->entries)) ||
	    (rc = dpmu_jc_u32(j, o, "ways", false, t->entries, 1, 1u << 16, &t->ways)) ||
	    (rc = dpmu_jc_u32(j, o, "latency", false, 0, 0, 10000, &t->latency)))
		return rc;
	if (t->entries % t->ways != 0 || !dpmu_arch_pow2(t->entries / t->ways)) {
		dpmu_jc_push_key(j, "ways");
		return dpmu_jc_fail(j, DPMU_EINVAL,
				    "entries / ways must be a whole power of two (sets): %u / %u is not",
				    t->entries, t->ways);
	}
	dpmu_jc_pop(j, m);
	return 0;
}

static int parse_tlb(struct dpmu_jc *j, const json_t *o, struct dpmu_core_type *t)
{
	uint64_t page;
	int rc;
	if ((rc = parse_tlb_level(j, o, "l1i", &t->l1itlb)) ||
	    (rc = parse_tlb_level(j, o, "l1d", &t->l1dtlb)) ||
	    (rc = parse_tlb_level(j, o, "l2", &t->l2tlb)) ||
	    (rc = dpmu_jc_size(j, o, "page_size", true, 0, 1, 1ull << 30, &page)) ||
	    (rc = dpmu_jc_u32(j, o, "walk_latency", true, 0, 1, 100000, &t->walk_latency)))
		return rc;
	/* The AArch64 translation granules (Arm ARM D8.2). */
	if (page != 4096 && page != 16384 && page != 65536)
		return fail_at(j, "page_size", DPMU_EINVAL,
			       "must be a translation granule (4KiB, 16KiB or 64KiB), got %llu",
			       page);
	t->page_size = (uint32_t)page;
	return 0;
}

static int parse_branch(struct dpmu_jc *j, const json_t *o, struct dpmu_bp_params *b)
{
	unsigned kind;
	int rc;
	if ((rc = dpmu_jc_enum(j, o, "predictor", true, 0, bp_names, &kind)) ||
	    (rc = dpmu_jc_u32(j, o, "entries", true, 0, 1, 1u << 24, &b->entries)) ||
	    (rc = dpmu_jc_u32(j, o, "history_bits", kind == DPMU_BP_GSHARE, 0, 0, 32,
			      &b->history_bits)) ||
	    (rc = dpmu_jc_u32(j, o, "btb_entries", true, 0, 1, 1u << 20, &b->btb_entries)) ||
	    (rc = dpmu_jc_u32(j, o, "ras_entries", true, 0, 1, 1024, &b->ras_entries)))
		return rc;
	b->kind = (enum dpmu_bp_kind)kind;
	/* Both tables are indexed by PC (and history) bits. */
	if (!dpmu_arch_pow2(b->entries))
		return fail_at(j, "entries", DPMU_EINVAL, "must be a power of two, got %llu",
			       b->entries);
	if (!dpmu_arch_pow2(b->btb_entries))
		return fail_at(j, "btb_entries", DPMU_EINVAL, "must be a power of two, got %llu",
			       b->btb_entries);
	if (b->kind == DPMU_BP_GSHARE && b->history_bits == 0)
		return fail_at(j, "history_bits", DPMU_ERANGE,
			       "must be at least 1 for a gshare predictor, got %llu", 0);
	return 0;
}

static int parse_pipeline(struct dpmu_jc *j, const json_t *o, struct dpmu_pipeline_params *p)
{
	int rc;
	if ((rc = dpmu_jc_u32(j, o, "issue_width", true, 0, 1, 16, &p->issue_width)) ||
	    (rc = dpmu_jc_milli(j, o, "base_cpi", true, 0, 0.01, 100.0, &p->base_cpi_milli)) ||
	    (rc = dpmu_jc_u32(j, o, "mispredict_penalty", true, 0, 0, 1000,
			      &p->mispredict_penalty)) ||
	    (rc = dpmu_jc_u32(j, o, "reorder_window", true, 0, 0, DPMU_REORDER_MAX,
			      &p->reorder_window)) ||
	    (rc = dpmu_jc_u32(j, o, "miss_buffers", true, 0, 1, DPMU_MISS_BUFFERS_MAX,
			      &p->miss_buffers)))
		return rc;
	/* optional: without it every result is ready at its issue */
	const json_t *e;
	size_t m;
	if ((rc = sub(j, o, "exec_latency", false, exec_keys, &e, &m)))
		return rc;
	if (!e)
		return 0;
	for (unsigned k = 0; exec_keys[k]; k++)
		if ((rc = dpmu_jc_u32(j, e, exec_keys[k], false, 0, 0, 1000,
				      &p->exec_latency[DPMU_EX_INT_MUL + k])))
			return rc;
	dpmu_jc_pop(j, m);
	return 0;
}

static const char *const pmu_kind_names[] = {"core", "amu", "cluster"};

/* One event reference: a name (case-insensitive) or a code, which must be in
 * catalog `c` and of PMU kind `kind`. */
static int event_ref(struct dpmu_jc *j, const json_t *v, const struct dpmu_event_catalog *c,
		     enum dpmu_pmu_kind kind, uint16_t *out)
{
	const struct dpmu_event_desc *d = NULL;
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		if (strncasecmp(s, "0x", 2) == 0) {
			char *end;
			errno = 0;
			unsigned long x = strtoul(s, &end, 16);
			if (*end || errno || x > 0xffff)
				return dpmu_jc_fail(j, DPMU_EINVAL, "not an event code: \"%s\"", s);
			d = dpmu_catalog_find_code(c, (uint16_t)x);
			if (!d)
				return dpmu_jc_fail(j, DPMU_ENOENT,
						    "event 0x%lx is not in catalog '%s'", x, c->name);
		} else {
			d = dpmu_catalog_find_name(c, s);
			if (!d)
				return dpmu_jc_fail(j, DPMU_ENOENT, "unknown event '%s' in catalog '%s'",
						    s, c->name);
		}
	} else if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);
		if (x < 0 || x > 0xffff)
			return dpmu_jc_fail(j, DPMU_ERANGE, "event code must be 0 to 0xffff, got %lld",
					    (long long)x);
		d = dpmu_catalog_find_code(c, (uint16_t)x);
		if (!d)
			return dpmu_jc_fail(j, DPMU_ENOENT, "event 0x%llx is not in catalog '%s'",
					    (unsigned long long)x, c->name);
	} else {
		return dpmu_jc_fail(j, DPMU_EINVAL, "must be an event name or code, got %s",
				    dpmu_jc_type(v));
	}
	if (d->pmu != kind)
		return dpmu_jc_fail(j, DPMU_EINVAL, "%s is a %s event, not a %s event", d->name,
				    pmu_kind_names[d->pmu], pmu_kind_names[kind]);
	*out = d->code;
	return 0;
}

/* A list of event references into out[0..max). Absent (or "all", when
 * allow_all) means every event of the catalog of that kind. */
static int event_list(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		      bool allow_all, const struct dpmu_event_catalog *c, enum dpmu_pmu_kind kind,
		      uint16_t *out, size_t max, size_t *n)
{
	const json_t *v = json_object_get(obj, key);
	*n = 0;
	if (!v && required)
		return dpmu_jc_fail(j, DPMU_EINVAL, "missing required key '%s'", key);
	size_t mark = dpmu_jc_push_key(j, key);
	if (!v || (allow_all && json_is_string(v) && strcmp(json_string_value(v), "all") == 0)) {
		for (size_t i = 0; i < c->count; i++) {
			if (c->events[i].pmu != kind)
				continue;
			if (*n == max)
				return dpmu_jc_fail(j, DPMU_ERANGE,
						    "catalog '%s' has more than %zu events", c->name,
						    max);
			out[(*n)++] = c->events[i].code;
		}
		dpmu_jc_pop(j, mark);
		return 0;
	}
	if (!json_is_array(v))
		return dpmu_jc_fail(j, DPMU_EINVAL, "must be %san array of event names or codes, got %s",
				    allow_all ? "\"all\" or " : "", dpmu_jc_type(v));
	if (json_array_size(v) > max)
		return dpmu_jc_fail(j, DPMU_ERANGE, "at most %zu events, got %zu", max,
				    json_array_size(v));
	for (size_t i = 0; i < json_array_size(v); i++) {
		size_t m = dpmu_jc_push_index(j, i);
		uint16_t code = 0;
		int rc = event_ref(j, json_array_get(v, i), c, kind, &code);
		if (rc)
			return rc;
		for (size_t k = 0; k < *n; k++)
			if (out[k] == code)
				return dpmu_jc_fail(j, DPMU_EINVAL, "event 0x%x listed twice", code);
		out[(*n)++] = code;
		dpmu_jc_pop(j, m);
	}
	dpmu_jc_pop(j, mark);
	return 0;
}

static int get_catalog(struct dpmu_jc *j, const json_t *o, enum dpmu_pmu_kind kind, char *name,
		       const struct dpmu_event_catalog **out)
{
	int rc = dpmu_jc_string(j, o, "catalog", true, NULL, name, DPMU_NAME_MAX);
	if (rc)
		return rc;
	size_t mark = dpmu_jc_push_key(j, "catalog");
	struct dpmu_err cerr;
	dpmu_err_clear(&cerr);
	*out = dpmu_catalog_get(name, &cerr);
	if (!*out)
		return dpmu_jc_fail(j, cerr.code ? cerr.code : DPMU_ENOENT, "%s", cerr.msg);
	bool any = false;
	for (size_t i = 0; i < (*out)->count; i++)
		any |= (*out)->events[i].pmu == kind;
	if (!any)
		return dpmu_jc_fail(j, DPMU_EINVAL, "catalog '%s' has no %s PMU events", name,
				    pmu_kind_names[kind]);
	dpmu_jc_pop(j, mark);
	return 0;
}

static int parse_amu(struct dpmu_jc *j, const json_t *o, struct dpmu_core_type *t)
{
	struct dpmu_err cerr;
	const struct dpmu_event_catalog *amu = dpmu_catalog_get("amu", &cerr);
	if (!amu)
		return dpmu_jc_fail(j, cerr.code, "%s", cerr.msg);
	size_t n0, ns;
	int rc;
	if ((rc = event_list(j, o, "group0", true, false, amu, DPMU_PMU_AMU, t->amu_group0_events,
			     DPMU_AMU_GROUP0_MAX, &n0)) ||
	    (rc = dpmu_jc_u32(j, o, "group1", false, 0, 0, DPMU_AMU_GROUP1_MAX, &t->amu_group1)) ||
	    (rc = event_list(j, o, "selectable", t->amu_group1 > 0, false, amu, DPMU_PMU_AMU,
			     t->amu_selectable, DPMU_AMU_SELECTABLE_MAX, &ns)))
		return rc;
	t->amu_group0 = (unsigned)n0;
	t->amu_n_selectable = ns;
	if (t->amu_group1 > 0 && ns == 0)
		return fail_at(j, "selectable", DPMU_EINVAL,
			       "must list at least one event when group1 has %llu counters",
			       t->amu_group1);
	return 0;
}

static int parse_core_type(struct dpmu_jc *j, const json_t *o, struct dpmu_profile *p,
			   struct dpmu_core_type *t)
{
	const json_t *s;
	size_t m;
	uint64_t midr, idcode;
	uint32_t counters;
	const struct dpmu_event_catalog *cat;
	int rc;
	if ((rc = dpmu_jc_object(j, o, type_keys)) ||
	    (rc = dpmu_jc_string(j, o, "name", true, NULL, t->name, sizeof t->name)))
		return rc;
	for (unsigned k = 0; p->core_types + k < t; k++)
		if (strcmp(p->core_types[k].name, t->name) == 0)
			return fail_at(j, "name", DPMU_EINVAL,
				       "core type name repeats core_types[%llu]", k);
	if ((rc = get_catalog(j, o, DPMU_PMU_CORE, t->catalog, &cat)) ||
	    (rc = dpmu_jc_hex(j, o, "midr", true, 0, 0xffffffffu, &midr)) ||
	    (rc = dpmu_jc_freq(j, o, "freq", false, 0, &t->freq_hz)))
		return rc;
	t->midr = (uint32_t)midr;

	if ((rc = sub(j, o, "pmu", true, pmu_keys, &s, &m)) ||
	    /* PMCR.N is 5 bits and index 31 is the cycle counter (reference section 1). */
	    (rc = dpmu_jc_u32(j, s, "counters", true, 0, 1, 31, &counters)) ||
	    (rc = dpmu_jc_bool(j, s, "pmuv3p5", false, false, &t->pmuv3p5)) ||
	    (rc = dpmu_jc_hex(j, s, "idcode", false, 0, 0xff, &idcode)) ||
	    (rc = event_list(j, s, "events", false, true, cat, DPMU_PMU_CORE, t->events,
			     DPMU_MAX_EVENTS, &t->n_events)))
		return rc;
	t->pmu_counters = counters;
	t->pmcr_idcode = (uint8_t)idcode;
	dpmu_jc_pop(j, m);

	if ((rc = sub(j, o, "amu", false, amu_keys, &s, &m)))
		return rc;
	if (s && (rc = parse_amu(j, s, t)))
		return rc;
	dpmu_jc_pop(j, m);

	static const char *const levels[] = {"l1i", "l1d", "l2"};
	struct dpmu_cache_params *caches[] = {&t->l1i, &t->l1d, &t->l2};
	for (unsigned i = 0; i < 3; i++) {
		if ((rc = sub(j, o, levels[i], true, cache_keys, &s, &m)) ||
		    (rc = parse_cache(j, s, caches[i])))
			return rc;
		dpmu_jc_pop(j, m);
	}
	if ((rc = sub(j, o, "tlb", true, tlb_keys, &s, &m)) || (rc = parse_tlb(j, s, t)))
		return rc;
	dpmu_jc_pop(j, m);
	if ((rc = sub(j, o, "branch", true, branch_keys, &s, &m)) ||
	    (rc = parse_branch(j, s, &t->bp)))
		return rc;
	dpmu_jc_pop(j, m);
	if ((rc = sub(j, o, "pipeline", true, pipeline_keys, &s, &m)) ||
	    (rc = parse_pipeline(j, s, &t->pipeline)))
		return rc;
	dpmu_jc_pop(j, m);
	return 0;
}

static int parse_cores(struct dpmu_jc *j, const json_t *o, struct dpmu_profile *p,
		       struct dpmu_cluster_params *c)
{
	const json_t *cores;
	int rc = array(j, o, "cores", 1, DPMU_MAX_CORES_PER_CLUSTER, &cores);
	if (rc)
		return rc;
	size_t m0 = dpmu_jc_push_key(j, "cores");
	for (size_t i = 0; i < json_array_size(cores); i++) {
		const json_t *e = json_array_get(cores, i);
		size_t m = dpmu_jc_push_index(j, i);
		char type[DPMU_NAME_MAX];
		uint32_t count;
		uint64_t freq;
		if ((rc = dpmu_jc_object(j, e, core_entry_keys)) ||
		    (rc = dpmu_jc_string(j, e, "type", true, NULL, type, sizeof type)) ||
		    (rc = dpmu_jc_u32(j, e, "count", false, 1, 1, DPMU_MAX_CORES_PER_CLUSTER,
				      &count)) ||
		    (rc = dpmu_jc_freq(j, e, "freq", false, 0, &freq)))
			return rc;
		unsigned t = 0;
		while (t < p->n_core_types && strcmp(p->core_types[t].name, type) != 0)
			t++;
		if (t == p->n_core_types) {
			char known[200] = "";
			size_t n = 0;
			for (unsigned k = 0; k < p->n_core_types && n < sizeof known; k++)
				n += (size_t)snprintf(known + n, sizeof known - n, "%s%s",
						      k ? ", " : "", p->core_types[k].name);
			dpmu_jc_push_key(j, "type");
			return dpmu_jc_fail(j, DPMU_ENOENT,
					    "unknown core type '%s' (core_types defines: %s)", type,
					    known);
		}
		struct dpmu_core_type *ct = &p->core_types[t];
		/* One frequency per core type: DVFS is per type in a DynamIQ
		 * cluster, and the struct keeps freq_hz with the type. */
		if (freq && ct->freq_hz && freq != ct->freq_hz)
			return fail_at(j, "freq", DPMU_EINVAL,
				       "conflicts with the frequency already given for this core type "
				       "(%llu Hz)", ct->freq_hz);
		if (freq)
			ct->freq_hz = freq;
		if (!ct->freq_hz)
			return dpmu_jc_fail(j, DPMU_EINVAL,
					    "no frequency for core type '%s': give 'freq' here or in "
					    "core_types", type);
		if (c->ncores + count > DPMU_MAX_CORES_PER_CLUSTER) {
			dpmu_jc_push_key(j, "count");
			return dpmu_jc_fail(j, DPMU_ERANGE, "at most %d cores per cluster, got %u",
					    DPMU_MAX_CORES_PER_CLUSTER, c->ncores + count);
		}
		for (uint32_t k = 0; k < count; k++)
			c->core_type[c->ncores++] = t;
		dpmu_jc_pop(j, m);
	}
	dpmu_jc_pop(j, m0);
	return 0;
}

static int parse_cluster(struct dpmu_jc *j, const json_t *o, struct dpmu_profile *p,
			 struct dpmu_cluster_params *c)
{
	const json_t *s;
	size_t m;
	uint32_t counters;
	const struct dpmu_event_catalog *cat;
	int rc;
	if ((rc = dpmu_jc_object(j, o, cluster_keys)) || (rc = parse_cores(j, o, p, c)) ||
	    (rc = dpmu_jc_freq(j, o, "freq", true, 0, &c->freq_hz)))
		return rc;

	if ((rc = sub(j, o, "pmu", true, cpmu_keys, &s, &m)) ||
	    (rc = get_catalog(j, s, DPMU_PMU_CLUSTER, c->catalog, &cat)) ||
	    /* CLUSTERPMCR.N is 5 bits like PMCR.N (reference section 3). */
	    (rc = dpmu_jc_u32(j, s, "counters", true, 0, 1, 31, &counters)) ||
	    (rc = dpmu_jc_bool(j, s, "counters64", false, false, &c->counters64)) ||
	    (rc = event_list(j, s, "events", false, true, cat, DPMU_PMU_CLUSTER, c->events,
			     DPMU_MAX_EVENTS, &c->n_events)))
		return rc;
	c->pmu_counters = counters;
	/* The seed-001 0x4000-range numbering is its own catalog. */
	c->numbering = strcmp(c->catalog, "dsu-120") == 0 ? DPMU_DSU_120 : DPMU_DSU_CLASSIC;
	dpmu_jc_pop(j, m);

	if ((rc = sub(j, o, "l3", true, cache_keys, &s, &m)) || (rc = parse_cache(j, s, &c->l3)))
		return rc;
	dpmu_jc_pop(j, m);
	if ((rc = sub(j, o, "snoop_filter", true, sf_keys, &s, &m)) ||
	    (rc = dpmu_jc_u32(j, s, "entries", true, 0, 1, 1u << 24, &c->snoop_filter_entries)) ||
	    (rc = dpmu_jc_u32(j, s, "latency", true, 0, 1, 10000, &c->snoop_latency)))
		return rc;
	dpmu_jc_pop(j, m);
	return 0;
}

/* "dir/my-prof.json" -> "my-prof" */
static void default_name(const char *source, char *buf, size_t cap)
{
	const char *base = strrchr(source, '/');
	base = base ? base + 1 : source;
	size_t len = strlen(base);
	if (len > 5 && strcmp(base + len - 5, ".json") == 0)
		len -= 5;
	if (len >= cap)
		len = cap - 1;
	memcpy(buf, base, len);
	buf[len] = '\0';
}

static int parse_root(struct dpmu_jc *j, const json_t *root, struct dpmu_profile *p)
{
	char defname[DPMU_NAME_MAX];
	const json_t *arr, *s;
	size_t m;
	uint64_t v;
	int rc;
	default_name(j->source, defname, sizeof defname);
	if ((rc = dpmu_jc_object(j, root, top_keys)) ||
	    (rc = dpmu_jc_string(j, root, "name", false, defname, p->name, sizeof p->name)) ||
	    (rc = dpmu_jc_string(j, root, "description", false, "", p->description,
				 sizeof p->description)) ||
	    (rc = dpmu_jc_freq(j, root, "timer_freq", true, 0, &p->timer_freq_hz)) ||
	    /* CNT_CYCLES counts at the system-counter frequency unless the
	     * profile says otherwise (docs/profiles.md). */
	    (rc = dpmu_jc_freq(j, root, "amu_const_freq", false, p->timer_freq_hz,
			       &p->const_freq_hz)) ||
	    (rc = dpmu_jc_u32(j, root, "snapshot_latency", false, 0, 0, 1000000,
			      &p->snapshot_latency)))
		return rc;

	if ((rc = sub(j, root, "memory", true, mem_keys, &s, &m)) ||
	    (rc = dpmu_jc_u32(j, s, "bus_latency", true, 0, 0, 100000, &p->bus_latency)) ||
	    (rc = dpmu_jc_u32(j, s, "bus_width", true, 0, 1, 256, &p->bus_width)) ||
	    (rc = dpmu_jc_u32(j, s, "dram_latency_ns", true, 0, 1, 100000, &p->dram_latency)) ||
	    (rc = dpmu_jc_rate(j, s, "dram_bandwidth", true, 0, &v)))
		return rc;
	p->dram_bandwidth = v;
	if (!dpmu_arch_pow2(p->bus_width))
		return fail_at(j, "bus_width", DPMU_EINVAL, "must be a power of two, got %llu",
			       p->bus_width);
	dpmu_jc_pop(j, m);

	if ((rc = array(j, root, "core_types", 1, DPMU_MAX_CORE_TYPES, &arr)))
		return rc;
	m = dpmu_jc_push_key(j, "core_types");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		size_t mi = dpmu_jc_push_index(j, i);
		p->n_core_types = (unsigned)i + 1;
		if ((rc = parse_core_type(j, json_array_get(arr, i), p, &p->core_types[i])))
			return rc;
		dpmu_jc_pop(j, mi);
	}
	dpmu_jc_pop(j, m);

	if ((rc = array(j, root, "clusters", 1, DPMU_MAX_CLUSTERS, &arr)))
		return rc;
	m = dpmu_jc_push_key(j, "clusters");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		size_t mi = dpmu_jc_push_index(j, i);
		p->nclusters = (unsigned)i + 1;
		if ((rc = parse_cluster(j, json_array_get(arr, i), p, &p->clusters[i])))
			return rc;
		dpmu_jc_pop(j, mi);
	}
	dpmu_jc_pop(j, m);
	return 0;
}

static bool is_path(const char *s)
{
	size_t len = strlen(s);
	return strchr(s, '/') || (len >= 5 && strcmp(s + len - 5, ".json") == 0);
}

static int read_file(const char *path, char **out, struct dpmu_err *err)
{
	*out = NULL;
	FILE *f = fopen(path, "rb");
	if (!f)
		return dpmu_err_set(err, errno == ENOENT ? DPMU_ENOENT : DPMU_EIO,
				    "%s: cannot open: %s", path, strerror(errno));
	char *buf = malloc(DPMU_PROFILE_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory", path);
	}
	size_t n = fread(buf, 1, DPMU_PROFILE_FILE_MAX + 1, f);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return dpmu_err_set(err, DPMU_EIO, "%s: read error", path);
	}
	if (n > DPMU_PROFILE_FILE_MAX) {
		free(buf);
		return dpmu_err_set(err, DPMU_EINVAL, "%s: larger than %u bytes, not a profile",
				    path, DPMU_PROFILE_FILE_MAX);
	}
	buf[n] = '\0';
	if (strlen(buf) != n) {
		free(buf);
		return dpmu_err_set(err, DPMU_EINVAL, "%s: contains a NUL byte, not a JSON file",
				    path);
	}
	*out = buf;
	return 0;
}

/* The embedded text of built-in profile `name`, or NULL with a message that
 * lists the built-ins. */
static const struct dpmu_embedded_file *builtin_find(const char *name, char *path, size_t cap,
						     struct dpmu_err *err)
{
	const struct dpmu_embedded_file *f = NULL;
	if (strlen(name) < DPMU_NAME_MAX) {
		snprintf(path, cap, "profiles/%s.json", name);
		f = dpmu_embedded_find(path);
	}
	if (f)
		return f;
	char list[200] = "";
	size_t n = 0;
	for (const char *const *b = dpmu_profile_builtin_names; *b && n < sizeof list; b++)
		n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
				      b == dpmu_profile_builtin_names ? "" : ", ", *b);
	dpmu_err_set(err, DPMU_ENOENT,
		     "no built-in profile '%s' (built-in: %s; or give the path of a .json file)",
		     name, list);
	return NULL;
}

/* ---- deriving a profile from a base ------------------------------------- */

/* A longer chain is almost surely a mistake; it also bounds the recursion. */
#define DPMU_PROFILE_BASE_DEPTH 8
#define DPMU_PROFILE_ID_MAX 1024

/* The profiles read so far, outermost first: their names in messages, and
 * what identifies each (a built-in's embedded path, a file's real path) to
 * find a cycle however the path is spelt. The names point at the callers'
 * buffers, which outlive the chain's use. */
struct base_chain {
	unsigned n;
	const char *source[DPMU_PROFILE_BASE_DEPTH + 1];
	char *id[DPMU_PROFILE_BASE_DEPTH + 1];
};

/* What identifies a profile; NULL when out of memory. */
static char *profile_id(const char *source, bool builtin)
{
	char *real = builtin ? NULL : realpath(source, NULL);
	if (real)
		return real;
	size_t len = strlen(source) + sizeof "builtin:";
	char *id = malloc(len);
	if (id)
		snprintf(id, len, "%s%s", builtin ? "builtin:" : "", source);
	return id;
}

static void chain_free(struct base_chain *c)
{
	for (unsigned i = 0; i < c->n; i++)
		free(c->id[i]);
}

/* "a.json -> b.json -> a.json" into buf: the chain, then `last`. */
static void chain_text(const struct base_chain *c, const char *last, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i <= c->n && n < cap; i++) {
		int len = snprintf(buf + n, cap - n, "%s%s", i < c->n ? c->source[i] : last,
				   i < c->n ? " -> " : "");
		if (len < 0)
			return;
		n += (size_t)len;
	}
}

static bool all_objects(const json_t *a)
{
	if (json_array_size(a) == 0)
		return false;
	for (size_t i = 0; i < json_array_size(a); i++)
		if (!json_is_object(json_array_get(a, i)))
			return false;
	return true;
}

static int merge(json_t *base, json_t *over);

/* A value of the override that the base does not have: an object is laid
 * onto an empty one, so its nulls remove keys (take the default) there too. */
static json_t *fresh(json_t *v)
{
	if (!json_is_object(v))
		return json_deep_copy(v);
	json_t *o = json_object();
	if (o && merge(o, v)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Lay one value of the override onto base's member `key`. */
static int merge_member(json_t *base, const char *key, json_t *v)
{
	json_t *b = json_object_get(base, key);
	if (json_is_null(v))
		return json_object_del(base, key) == 0 || !b ? 0 : -1;
	if (json_is_object(b) && json_is_object(v))
		return merge(b, v);
	if (json_is_array(b) && json_is_array(v) && all_objects(b) && all_objects(v)) {
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *e = json_array_get(v, i);
			int rc = i < json_array_size(b) ? merge(json_array_get(b, i), e)
							: json_array_append_new(b, fresh(e));
			if (rc)
				return rc;
		}
		return 0;
	}
	return json_object_set_new(base, key, fresh(v));
}

/* Objects merge key by key; a non-empty array of objects merges element by
 * element (by position; extra elements are added); null removes the key;
 * anything else replaces the base's value (docs/profiles.md). */
static int merge(json_t *base, json_t *over)
{
	const char *key;
	json_t *v;
	json_object_foreach(over, key, v) {
		if (merge_member(base, key, v))
			return -1;
	}
	return 0;
}

/* Find the text of the profile that `from` (read from `j->source`, a
 * built-in when from_builtin) names as its base: a built-in name, or a file
 * path, relative to the directory of the file that names it. */
static int base_text(struct dpmu_jc *j, bool from_builtin, const char *base, char **text,
		     char *source, size_t cap, bool *builtin)
{
	struct dpmu_err e;
	dpmu_err_clear(&e);
	*text = NULL;
	*builtin = !is_path(base);
	if (*builtin) {
		const struct dpmu_embedded_file *f = builtin_find(base, source, cap, &e);
		if (!f)
			return dpmu_jc_fail(j, e.code, "%s", e.msg);
		*text = strdup(f->data);
		if (!*text)
			return dpmu_jc_fail(j, DPMU_ENOMEM, "out of memory");
		return 0;
	}
	if (from_builtin)
		return dpmu_jc_fail(j, DPMU_EINVAL,
				    "a built-in profile can only derive from a built-in, not '%s'",
				    base);
	const char *slash = strrchr(j->source, '/');
	int len = base[0] == '/' || !slash
			  ? snprintf(source, cap, "%s", base)
			  : snprintf(source, cap, "%.*s/%s", (int)(slash - j->source), j->source, base);
	if (len < 0 || (size_t)len >= cap)
		return dpmu_jc_fail(j, DPMU_ERANGE, "the path '%s' is too long", base);
	int rc = read_file(source, text, &e);
	if (rc)
		return dpmu_jc_fail(j, rc, "%s", e.msg);
	return 0;
}

/* The JSON tree of the profile in `text` (read from j->source) with its base
 * chain resolved: the base's tree, less its name and description, with this
 * profile's keys laid over it and "base" removed. `chain` holds the
 * profiles that derive from this one. */
static int load_tree(struct dpmu_jc *j, const char *text, bool builtin, struct base_chain *chain,
		     json_t **out)
{
	*out = NULL;
	json_t *root;
	int rc = dpmu_jc_load(j, text, &root);
	if (rc)
		return rc;
	json_t *b = json_is_object(root) ? json_object_get(root, "base") : NULL;
	if (!b) {
		*out = root; /* parse_root checks that it is an object */
		return 0;
	}
	chain->source[chain->n] = j->source;
	chain->id[chain->n] = profile_id(j->source, builtin);
	if (!chain->id[chain->n]) {
		json_decref(root);
		return dpmu_err_set(j->err, DPMU_ENOMEM, "%s: out of memory", j->source);
	}
	chain->n++;
	size_t mark = dpmu_jc_push_key(j, "base");
	char source[DPMU_PROFILE_ID_MAX];
	char *btext = NULL;
	bool bbuiltin = false;
	json_t *tree = NULL;
	if (!json_is_string(b) || !json_string_value(b)[0]) {
		rc = dpmu_jc_fail(j, DPMU_EINVAL,
				  "must name a built-in profile or a profile file, got %s",
				  json_is_string(b) ? "an empty string" : dpmu_jc_type(b));
		goto out;
	}
	const char *name = json_string_value(b);
	if ((rc = base_text(j, builtin, name, &btext, source, sizeof source, &bbuiltin)))
		goto out;
	char *id = profile_id(source, bbuiltin);
	if (!id) {
		rc = dpmu_jc_fail(j, DPMU_ENOMEM, "out of memory");
		goto out;
	}
	bool cycle = false;
	for (unsigned i = 0; i < chain->n; i++)
		cycle = cycle || strcmp(chain->id[i], id) == 0;
	free(id);
	if (cycle) {
		char path[600];
		chain_text(chain, source, path, sizeof path);
		rc = dpmu_jc_fail(j, DPMU_EINVAL, "'%s' is already in the base chain (%s)", name,
				  path);
		goto out;
	}
	if (chain->n == DPMU_PROFILE_BASE_DEPTH) {
		rc = dpmu_jc_fail(j, DPMU_ERANGE, "more than %d profiles in the base chain",
				  DPMU_PROFILE_BASE_DEPTH);
		goto out;
	}
	/* The base's own messages name the base file. */
	struct dpmu_jc bj = {.source = source, .path = "", .err = j->err};
	if ((rc = load_tree(&bj, btext, bbuiltin, chain, &tree)))
		goto out;
	if (!json_is_object(tree)) {
		rc = dpmu_jc_fail(&bj, DPMU_EINVAL, "must be an object, got %s",
				  dpmu_jc_type(tree));
		goto out;
	}
	/* A derived profile is another profile: it names and describes itself. */
	json_object_del(tree, "name");
	json_object_del(tree, "description");
	json_object_del(root, "base");
	if (merge(tree, root)) {
		rc = dpmu_jc_fail(j, DPMU_ENOMEM, "out of memory merging with '%s'", name);
		goto out;
	}
	dpmu_jc_pop(j, mark);
	*out = tree;
	tree = NULL;
out:
	free(btext);
	json_decref(tree);
	json_decref(root);
	return rc;
}

static int parse_profile(const char *json_text, const char *source_name, bool builtin,
			 struct dpmu_profile **out, struct dpmu_err *err)
{
	*out = NULL;
	struct dpmu_jc j = {.source = source_name ? source_name : "profile", .path = "",
			    .err = err};
	if (!json_text)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: no profile text", j.source);
	struct base_chain *chain = calloc(1, sizeof *chain);
	if (!chain)
		return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory", j.source);
	json_t *root;
	int rc = load_tree(&j, json_text, builtin, chain, &root);
	chain_free(chain);
	free(chain);
	if (rc)
		return rc;
	struct dpmu_profile *p = calloc(1, sizeof *p);
	if (!p) {
		json_decref(root);
		return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory", j.source);
	}
	rc = parse_root(&j, root, p);
	json_decref(root);
	if (rc) {
		free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int dpmu_profile_parse(const char *json_text, const char *source_name,
		       struct dpmu_profile **out, struct dpmu_err *err)
{
	return parse_profile(json_text, source_name, false, out, err);
}

int dpmu_profile_load(const char *name_or_path, struct dpmu_profile **out, struct dpmu_err *err)
{
	*out = NULL;
	if (!name_or_path || !*name_or_path)
		return dpmu_err_set(err, DPMU_EINVAL, "no profile name given (default: %s)",
				    DPMU_PROFILE_DEFAULT);
	if (is_path(name_or_path)) {
		char *text;
		int rc = read_file(name_or_path, &text, err);
		if (rc)
			return rc;
		rc = parse_profile(text, name_or_path, false, out, err);
		free(text);
		return rc;
	}
	char path[DPMU_NAME_MAX + 32];
	const struct dpmu_embedded_file *f = builtin_find(name_or_path, path, sizeof path, err);
	if (!f)
		return DPMU_ENOENT;
	return parse_profile(f->data, path, true, out, err);
}

void dpmu_profile_free(struct dpmu_profile *p)
{
	free(p);
}

unsigned dpmu_profile_ncores(const struct dpmu_profile *p)
{
	unsigned n = 0;
	for (unsigned c = 0; p && c < p->nclusters && c < DPMU_MAX_CLUSTERS; c++)
		n += p->clusters[c].ncores;
	return n;
}

const struct dpmu_core_type *dpmu_profile_core(const struct dpmu_profile *p, unsigned core,
					       unsigned *cluster, unsigned *index)
{
	for (unsigned c = 0; p && c < p->nclusters && c < DPMU_MAX_CLUSTERS; c++) {
		const struct dpmu_cluster_params *cp = &p->clusters[c];
		if (core < cp->ncores) {
			if (cluster)
				*cluster = c;
			if (index)
				*index = core;
			unsigned t = cp->core_type[core];
			return t < p->n_core_types ? &p->core_types[t] : NULL;
		}
		core -= cp->ncores;
	}
	return NULL;
}

/* MPIDR_EL1 (Arm ARM D19.2): bit 31 RES1, U (bit 30) = 0 as a cluster is a
 * multiprocessor, MT (bit 24) = 1 because DynamIQ cores report affinity
 * shifted up one level: Aff0 is the thread (always 0 on these single-threaded
 * cores), Aff1 the core in the cluster, Aff2 the cluster. */
uint64_t dpmu_profile_mpidr(const struct dpmu_profile *p, unsigned core)
{
	unsigned cluster = 0, index = 0;
	if (!dpmu_profile_core(p, core, &cluster, &index))
		return 0;
	return (1ull << 31) | (1ull << 24) | ((uint64_t)cluster << 16) | ((uint64_t)index << 8);
}

bool dpmu_core_type_implements(const struct dpmu_core_type *t, uint16_t event)
{
	for (size_t i = 0; t && i < t->n_events && i < DPMU_MAX_EVENTS; i++)
		if (t->events[i] == event)
			return true;
	return false;
}

bool dpmu_cluster_implements(const struct dpmu_cluster_params *c, uint16_t event)
{
	for (size_t i = 0; c && i < c->n_events && i < DPMU_MAX_EVENTS; i++)
		if (c->events[i] == event)
			return true;
	return false;
}
