/*
 * The engine: builds the per-core and per-cluster structures from the
 * profile, runs retired instructions through them, keeps simulated time
 * and hands the counts to the model in batches.
 *
 * Timing (docs/events.md, "Timing"): an instruction costs the core's base
 * CPI (never less than 1 / issue width) in cycles in which operations issue;
 * on top of that come stall cycles in which nothing issues: front-end stalls
 * (I-side refills beyond the L1I hit latency, ITLB misses, mispredicts) and
 * back-end waits for loads' values, which follow the registers an
 * instruction reads (timing.h). So STALL_FRONTEND + STALL_BACKEND <=
 * CPU_CYCLES always holds.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "uarch/timing.h"
#include "uarch/uarch_internal.h"

#define EV(c, name) ((c)->pend[DPMU_UEV_##name]++)

/* BUS_CYCLES (Arm ARM D17): the core's bus clock, delivered with time. */
#define EV_BUS_CYCLES 0x1Du

/* Translated blocks' held-back class events (the end of this file). */
static void core_fold(struct dpmu_ucore *c);
static void core_fold_live(struct dpmu_ucore *c);
static void block_detach(struct dpmu_ublock *b);

static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t d)
{
	uint64_t p;
	if (!d)
		return 0;
	/* Most products fit in 64 bits: the same quotient without a 128-bit
	 * division (every delivery converts a core's time to DSU cycles). */
	if (!__builtin_mul_overflow(a, b, &p))
		return p / d;
	return (uint64_t)((dpmu_u128)a * b / d);
}

static int cache_init(struct dpmu_ucache *ch, const char *who, const char *level,
		      const struct dpmu_cache_params *p, uint64_t seed, struct dpmu_err *err)
{
	char what[256];
	snprintf(what, sizeof what, "%s %s", who, level);
	memset(ch, 0, sizeof *ch);
	int rc = dpmu_uset_init(&ch->set, what, p->size, p->ways, p->line, p->replacement, seed,
				err);
	if (rc)
		return rc;
	if (p->prefetch != DPMU_PREFETCH_NONE && p->prefetch != DPMU_PREFETCH_NEXT_LINE &&
	    p->prefetch != DPMU_PREFETCH_STRIDE)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: prefetcher %d unknown", what,
				    (int)p->prefetch);
	ch->latency = p->latency;
	ch->prefetch = p->prefetch;
	if (p->prefetch == DPMU_PREFETCH_STRIDE) {
		ch->pf = calloc(DPMU_PF_ENTRIES, sizeof *ch->pf);
		if (!ch->pf)
			return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory", what);
	}
	return 0;
}

static void cache_free(struct dpmu_ucache *ch)
{
	dpmu_uset_free(&ch->set);
	free(ch->pf);
	ch->pf = NULL;
}

/* l1: an L1 TLB, looked up through mem.c's tlb_lookup, which keeps a wide
 * one's second hint. */
static int tlb_init(struct dpmu_uset *t, const char *who, const char *level,
		    const struct dpmu_tlb_params *p, uint32_t page, uint64_t seed, bool l1,
		    struct dpmu_err *err)
{
	char what[256];
	snprintf(what, sizeof what, "%s %s", who, level);
	if (p->entries == 0)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: 0 entries (at least 1)", what);
	uint32_t ways = p->ways ? p->ways : p->entries;
	if (ways > 64 && ways == p->entries)
		ways = 64; /* a large fully-associative TLB: 64-way is as good */
	int rc = dpmu_uset_init(t, what, (uint64_t)p->entries * page, ways, page, DPMU_REPL_LRU,
				seed, err);
	if (!rc && l1 && ways >= DPMU_USET_HINT2_WAYS && (rc = dpmu_uset_hint_two(t, what, err)))
		dpmu_uset_free(t);
	return rc;
}

static int core_init(struct dpmu_uarch *u, struct dpmu_ucore *c, unsigned id, unsigned cl,
		     const struct dpmu_core_type *t, const struct dpmu_cluster_params *cp,
		     struct dpmu_err *err)
{
	char who[192];
	snprintf(who, sizeof who, "profile '%s' cpu%u (%s)", u->profile.name, id, t->name);
	memset(c, 0, sizeof *c);
	c->id = id;
	c->cluster = cl;
	c->batch_left = u->batch;
	c->type = t;
	c->last_fetch_blk = UINT64_MAX;
	c->l1d_mru = -1;
	if (t->freq_hz == 0)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: core frequency is 0", who);
	if (t->pipeline.issue_width == 0)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: pipeline issue width is 0", who);
	if (t->l1i.line != cp->l3.line || t->l1d.line != cp->l3.line || t->l2.line != cp->l3.line)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "%s: line sizes L1I %u, L1D %u, L2 %u, L3 %u differ (the engine "
				    "models one line size per cluster)",
				    who, t->l1i.line, t->l1d.line, t->l2.line, cp->l3.line);
	if (t->page_size < 1024 || (t->page_size & (t->page_size - 1)))
		return dpmu_err_set(err, DPMU_EINVAL, "%s: page size %u (a power of two, >= 1024)",
				    who, t->page_size);
	uint64_t seed = (uint64_t)id << 8;
	int rc;
	if ((rc = cache_init(&c->l1i, who, "l1i", &t->l1i, seed + 1, err)) ||
	    (rc = cache_init(&c->l1d, who, "l1d", &t->l1d, seed + 2, err)) ||
	    (rc = cache_init(&c->l2, who, "l2", &t->l2, seed + 3, err)) ||
	    (rc = tlb_init(&c->itlb, who, "l1i TLB", &t->l1itlb, t->page_size, seed + 4, true,
			   err)) ||
	    (rc = tlb_init(&c->dtlb, who, "l1d TLB", &t->l1dtlb, t->page_size, seed + 5, true,
			   err)) ||
	    (rc = tlb_init(&c->l2tlb, who, "l2 TLB", &t->l2tlb, t->page_size, seed + 6, false,
			   err)))
		return rc;
	if ((rc = dpmu_bpred_init(&c->bp, &t->bp, err)) != 0) {
		char msg[DPMU_ERRMSG_MAX];
		snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
		return dpmu_err_set(err, rc, "%s: %s", who, msg);
	}
	c->page_shift = (uint32_t)__builtin_ctz(t->page_size);
	dpmu_iev_codes(t->catalog, c->icode);
	uint32_t w = t->pipeline.issue_width;
	uint32_t floor_cpi = (1000 + w - 1) / w;
	c->cpi_milli = t->pipeline.base_cpi_milli > floor_cpi ? t->pipeline.base_cpi_milli
							      : floor_cpi;
	c->mem_latency = u->profile.bus_latency +
			 (uint32_t)muldiv(u->profile.dram_latency, t->freq_hz, 1000000000ull);
	uint32_t bw = u->bus_width ? u->bus_width : t->l1d.line;
	c->beats = (t->l1d.line + bw - 1) / bw;
	return timing_init(c, who, err);
}

static void core_free(struct dpmu_ucore *c)
{
	cache_free(&c->l1i);
	cache_free(&c->l1d);
	cache_free(&c->l2);
	dpmu_uset_free(&c->itlb);
	dpmu_uset_free(&c->dtlb);
	dpmu_uset_free(&c->l2tlb);
	dpmu_bpred_free(&c->bp);
	free(c->tm.rob);
	c->tm.rob = NULL;
}

/* Snoop-filter geometry (the profile gives only its entry count): 16-way
 * where the count allows, fewer ways otherwise. */
static uint32_t sf_ways(uint32_t entries)
{
	for (uint32_t w = 16; w > 1; w >>= 1)
		if (entries % w == 0)
			return w;
	return 1;
}

static int cluster_init(struct dpmu_uarch *u, struct dpmu_ucluster *cl, unsigned id,
			unsigned first, const struct dpmu_cluster_params *cp, struct dpmu_err *err)
{
	char who[192];
	snprintf(who, sizeof who, "profile '%s' cluster%u", u->profile.name, id);
	memset(cl, 0, sizeof *cl);
	cl->id = id;
	cl->first_core = first;
	cl->ncores = cp->ncores;
	cl->params = cp;
	cl->snoop_latency = cp->snoop_latency;
	if (cp->freq_hz == 0)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: DSU frequency is 0", who);
	if (cp->numbering != DPMU_DSU_CLASSIC && cp->numbering != DPMU_DSU_120)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: DSU event numbering %d unknown", who,
				    (int)cp->numbering);
	int rc = cache_init(&cl->l3, who, "l3", &cp->l3, 0x1000u + id, err);
	if (rc)
		return rc;
	if (cp->l3.prefetch == DPMU_PREFETCH_STRIDE)
		cl->l3.prefetch = DPMU_PREFETCH_NEXT_LINE; /* no PC at the DSU */
	dpmu_uset_hint_one(&cl->l3.set);
	if (cp->snoop_filter_entries) {
		char what[256];
		snprintf(what, sizeof what, "%s snoop filter", who);
		uint32_t e = cp->snoop_filter_entries;
		rc = dpmu_uset_init(&cl->sf, what, (uint64_t)e * cp->l3.line, sf_ways(e),
				    cp->l3.line, DPMU_REPL_LRU, 0x2000u + id, err);
		if (rc)
			return rc;
		dpmu_uset_hint_one(&cl->sf);
		cl->sf_mask = calloc(e, sizeof *cl->sf_mask);
		if (!cl->sf_mask)
			return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory", what);
	}
	dpmu_cev_codes(cp, cl->codes);
	return 0;
}

static void cluster_free(struct dpmu_ucluster *cl)
{
	cache_free(&cl->l3);
	dpmu_uset_free(&cl->sf);
	free(cl->sf_mask);
	cl->sf_mask = NULL;
}

int dpmu_uarch_create(struct dpmu_model *model, const struct dpmu_profile *profile,
		      struct dpmu_uarch **out, struct dpmu_err *err)
{
	if (!out)
		return dpmu_err_set(err, DPMU_EINVAL, "dpmu_uarch_create: out is NULL");
	*out = NULL;
	if (!model || !profile)
		return dpmu_err_set(err, DPMU_EINVAL, "dpmu_uarch_create: %s is NULL",
				    model ? "profile" : "model");
	if (profile->nclusters == 0 || profile->nclusters > DPMU_MAX_CLUSTERS)
		return dpmu_err_set(err, DPMU_EINVAL, "profile '%s': %u clusters (1 to %d)",
				    profile->name, profile->nclusters, DPMU_MAX_CLUSTERS);
	struct dpmu_uarch *u = calloc(1, sizeof *u);
	if (!u)
		return dpmu_err_set(err, DPMU_ENOMEM, "out of memory creating the engine");
	u->model = model;
	u->profile = *profile;
	u->batch = DPMU_UARCH_BATCH_DEFAULT;
	u->bus_width = profile->bus_width;
	/* Bytes one bandwidth epoch can carry. */
	u->dram_epoch_cap = muldiv(profile->dram_bandwidth, DPMU_DRAM_EPOCH_PS, 1000000000000ull);
	if (profile->dram_bandwidth && !u->dram_epoch_cap)
		u->dram_epoch_cap = 1;
	const struct dpmu_profile *p = &u->profile;
	int rc = 0;
	unsigned core = 0;
	for (unsigned ci = 0; ci < p->nclusters && !rc; ci++) {
		const struct dpmu_cluster_params *cp = &p->clusters[ci];
		if (cp->ncores == 0 || cp->ncores > DPMU_MAX_CORES_PER_CLUSTER) {
			rc = dpmu_err_set(err, DPMU_EINVAL,
					  "profile '%s': cluster %u has %u cores (1 to %d)", p->name,
					  ci, cp->ncores, DPMU_MAX_CORES_PER_CLUSTER);
			break;
		}
		u->nclusters = ci + 1;
		rc = cluster_init(u, &u->clusters[ci], ci, core, cp, err);
		for (unsigned k = 0; k < cp->ncores && !rc; k++, core++) {
			unsigned t = cp->core_type[k];
			if (t >= p->n_core_types) {
				rc = dpmu_err_set(err, DPMU_EINVAL,
						  "profile '%s': cluster %u core %u has core type %u of %u",
						  p->name, ci, k, t, p->n_core_types);
				break;
			}
			u->ncores = core + 1;
			rc = core_init(u, &u->cores[core], core, ci, &p->core_types[t], cp, err);
		}
	}
	if (!rc && core != dpmu_model_ncores(model))
		rc = dpmu_err_set(err, DPMU_EINVAL,
				  "profile '%s' has %u cores but the model has %u: create both "
				  "from the same profile",
				  p->name, core, dpmu_model_ncores(model));
	if (rc) {
		dpmu_uarch_destroy(u);
		return rc;
	}
	dpmu_err_clear(&u->err);
	dpmu_uarch_trace_init(u);
	*out = u;
	return 0;
}

void dpmu_uarch_destroy(struct dpmu_uarch *u)
{
	if (!u)
		return;
	dpmu_model_etm_watch(u->model, NULL, NULL, NULL, NULL);
	/* Blocks that outlive the engine must not add their counts to it. */
	for (unsigned i = 0; i < u->ncores; i++)
		for (uint32_t k = 0; k < u->cores[i].nowned; k++)
			block_detach(u->cores[i].owned[k]);
	for (unsigned i = 0; i < u->ncores; i++)
		core_free(&u->cores[i]);
	for (unsigned i = 0; i < u->nclusters; i++)
		cluster_free(&u->clusters[i]);
	free(u);
}

int dpmu_uarch_set_batch(struct dpmu_uarch *u, uint32_t insns, struct dpmu_err *err)
{
	if (insns == 0 || insns > DPMU_UARCH_BATCH_MAX)
		return dpmu_err_set(err, DPMU_ERANGE, "batch of %u instructions (1 to %u)", insns,
				    DPMU_UARCH_BATCH_MAX);
	dpmu_uarch_flush(u);
	u->batch = insns;
	for (unsigned i = 0; i < u->ncores; i++)
		u->cores[i].batch_left = insns;
	return 0;
}

void dpmu_uarch_set_observer(struct dpmu_uarch *u, dpmu_uarch_observer_fn fn,
			     dpmu_uarch_wants_fn wants, void *ctx)
{
	u->observer = fn;
	u->observer_wants = wants;
	u->observer_ctx = ctx;
	/* The delivery lists name what the observer wants: build them again. */
	for (unsigned i = 0; i < u->ncores; i++)
		u->cores[i].live_ok = false;
	for (unsigned i = 0; i < u->nclusters; i++)
		u->clusters[i].live_ok = false;
}

const char *dpmu_uarch_errmsg(const struct dpmu_uarch *u)
{
	return u ? dpmu_errmsg(&u->err) : "no engine";
}

/* ---- delivery ---------------------------------------------------------------- */

/* DSU clock cycles that have passed for a core: its time at the DSU clock.
 * Remembered for the core's current time, since every delivery to the
 * cluster asks it of every core and most have not moved. */
static uint64_t core_dsu_cycles(const struct dpmu_uarch *u, struct dpmu_ucore *c)
{
	/* Keyed on the sum of the clock's two parts, which only grow: the sum
	 * is unchanged exactly when both are, and no division finds it so. */
	uint64_t key = c->work_milli + c->stall_cycles;
	if (key != c->dsu_key) {
		c->dsu_key = key;
		c->dsu_cycles = muldiv(dpmu_ucore_cycles(c), u->clusters[c->cluster].params->freq_hz,
				       c->type->freq_hz);
	}
	return c->dsu_cycles;
}

static bool observer_wants(const struct dpmu_uarch *u, bool cluster, unsigned index,
			   uint16_t event)
{
	return u->observer &&
	       (!u->observer_wants || u->observer_wants(u->observer_ctx, cluster, index, event));
}

static inline void fold_set(uint64_t *set, unsigned i)
{
	set[i / 64] |= UINT64_C(1) << (i % 64);
}

static inline bool fold_has(const uint64_t *set, unsigned i)
{
	return set[i / 64] >> (i % 64) & 1;
}

/* The core's delivery list for the model's current configuration, in the
 * order a scan of every pending count would deliver them. Rare (after a
 * configuration change): kept out of the delivery path's code. */
__attribute__((noinline, cold)) static void core_lists(struct dpmu_uarch *u, struct dpmu_ucore *c)
{
	c->live_gen = dpmu_model_core_live_gen(u->model, c->id);
	c->live_ok = true;
	c->nlive = 0;
	c->nobs = 0;
	memset(c->fold_need, 0, sizeof c->fold_need);
	fold_set(c->fold_need, DPMU_UEV_INST_RETIRED);
	c->all_model = true;
	for (unsigned e = 0; e < DPMU_UEV_COUNT + DPMU_IEV_COUNT; e++) {
		struct dpmu_live l;
		uint16_t code;
		if (e < DPMU_UEV_COUNT) {
			enum dpmu_uev src[2] = { DPMU_UEV_COUNT, DPMU_UEV_COUNT };
			dpmu_uev_sources((enum dpmu_uev)e, src);
			code = dpmu_uev_code((enum dpmu_uev)e);
			l = (struct dpmu_live){ &c->pend[e], &c->pend[src[0]], &c->pend[src[1]], 0,
						false };
		} else {
			unsigned i = e - DPMU_UEV_COUNT;
			code = c->icode[i];
			if (code == DPMU_UEV_NONE)
				continue;
			l = (struct dpmu_live){ &c->ipend[i], &c->ipend[DPMU_IEV_COUNT],
						&c->ipend[DPMU_IEV_COUNT], 0, false };
		}
		l.to_model = dpmu_model_core_event_live(u->model, c->id, code) ? ~0ull : 0;
		l.to_obs = observer_wants(u, false, c->id, code);
		if (!l.to_model && !l.to_obs)
			continue;
		if (l.to_obs)
			c->obs_live[c->nobs++] = (uint8_t)c->nlive;
		const uint64_t *src[3] = { l.p, l.a, l.b };
		for (unsigned s = 0; s < 3; s++)
			fold_set(c->fold_need, src[s] >= c->ipend
						       ? DPMU_UEV_COUNT + 1 + (unsigned)(src[s] - c->ipend)
						       : (unsigned)(src[s] - c->pend));
		c->all_model &= l.to_model != 0;
		c->live_code[c->nlive] = code;
		c->live[c->nlive++] = l;
	}
	c->cyc_obs = observer_wants(u, false, c->id, DPMU_EV_CPU_CYCLES);
	c->bus_model = dpmu_model_core_event_live(u->model, c->id, EV_BUS_CYCLES);
	c->bus_obs = observer_wants(u, false, c->id, EV_BUS_CYCLES);
}

__attribute__((noinline, cold)) static void cluster_lists(struct dpmu_uarch *u,
							   struct dpmu_ucluster *cl)
{
	cl->live_gen = dpmu_model_cluster_live_gen(u->model, cl->id);
	cl->live_ok = true;
	cl->nlive = cl->nolive = 0;
	for (unsigned e = 0; e < DPMU_CEV_COUNT; e++) {
		uint16_t code = cl->codes[e];
		if (code == DPMU_UEV_NONE)
			continue;
		if (dpmu_model_cluster_event_live(u->model, cl->id, code))
			cl->live[cl->nlive++] = (uint8_t)e;
		if (observer_wants(u, true, cl->id, code))
			cl->olive[cl->nolive++] = (uint8_t)e;
	}
	cl->cyc_obs = observer_wants(u, true, cl->id, DPMU_EV_CPU_CYCLES);
	uint16_t bc = cl->codes[DPMU_CEV_BUS_CYCLES];
	cl->bc_model = bc != DPMU_UEV_NONE && dpmu_model_cluster_event_live(u->model, cl->id, bc);
	cl->bc_obs = bc != DPMU_UEV_NONE && observer_wants(u, true, cl->id, bc);
}

/* Whether n counts are all zero: one OR pass the compiler vectorises. */
static inline bool none_pending(const uint64_t *p, unsigned n)
{
	uint64_t any = 0;
	for (unsigned i = 0; i < n; i++)
		any |= p[i];
	return any == 0;
}

static void deliver_cluster(struct dpmu_uarch *u, struct dpmu_ucluster *cl)
{
	/* The DSU clock runs with simulated time: the cluster's time is the
	 * furthest any of its cores has got. A core whose clock has not moved
	 * since this loop last read it (dsu_seen) cannot move it: its time
	 * then was at most the t of that delivery, which dsu_delivered is (or
	 * t was dsu_delivered already). Only the cores that ran are converted
	 * and compared; most of a cluster's cores are idle. */
	uint64_t t = cl->dsu_delivered;
	struct dpmu_ucore *c = &u->cores[cl->first_core], *end = c + cl->ncores;
	for (; c < end; c++) {
		uint64_t key = c->work_milli + c->stall_cycles;
		if (key == c->dsu_seen)
			continue;
		c->dsu_seen = key;
		/* the DSU's clock runs on while the core idles (a single
		 * thread's core never does: no division for it) */
		uint64_t d = core_dsu_cycles(u, c);
		if (c->idle_ns)
			d += muldiv(c->idle_ns, cl->params->freq_hz, 1000000000ull);
		if (d > t)
			t = d;
	}
	uint64_t k = t - cl->dsu_delivered;
	if (!k && none_pending(cl->pend, DPMU_CEV_COUNT))
		return;
	if (!cl->live_ok || cl->live_gen != dpmu_model_cluster_live_gen(u->model, cl->id))
		cluster_lists(u, cl);
	/* Only what the model counts and what the observer wants: any other
	 * count would change nothing, and is dropped with the rest. */
	for (unsigned i = 0; i < cl->nlive; i++) {
		uint64_t n = cl->pend[cl->live[i]];
		if (n)
			dpmu_model_cluster_event(u->model, cl->id, cl->codes[cl->live[i]], n);
	}
	for (unsigned i = 0; i < cl->nolive; i++) {
		uint64_t n = cl->pend[cl->olive[i]];
		if (n)
			u->observer(u->observer_ctx, true, cl->id, cl->codes[cl->olive[i]], n);
	}
	memset(cl->pend, 0, sizeof cl->pend);
	if (!k)
		return;
	cl->dsu_delivered = t;
	dpmu_model_cluster_cycles(u->model, cl->id, k);
	if (cl->cyc_obs)
		u->observer(u->observer_ctx, true, cl->id, DPMU_EV_CPU_CYCLES, k);
	uint16_t bc = cl->codes[DPMU_CEV_BUS_CYCLES];
	if (cl->bc_model)
		dpmu_model_cluster_event(u->model, cl->id, bc, k);
	if (cl->bc_obs)
		u->observer(u->observer_ctx, true, cl->id, bc, k);
}

/* ---- precise overflow ----------------------------------------------------------- */

/* The count of watch w not yet delivered. */
static uint64_t watch_pending(const struct dpmu_ucore *c, const struct dpmu_uwatch *w)
{
	if (w->clock)
		return dpmu_ucore_cycles(c) - c->cycles_delivered;
	uint64_t n = 0;
	for (unsigned k = 0; k < w->nlive; k++) {
		const struct dpmu_live *l = &c->live[w->live[k]];
		n += (*l->p + *l->a + *l->b) & l->to_model;
	}
	return n;
}

/* Whether a watched counter would overflow with what is pending. */
static bool watch_hit(const struct dpmu_ucore *c)
{
	for (unsigned i = 0; i < c->nwatch; i++)
		if (watch_pending(c, &c->watch[i]) >= c->watch[i].left)
			return true;
	return false;
}

/* The watch from the model's counters as they are now (the delivery list
 * made current first: the watch names its entries). */
__attribute__((noinline)) static void watch_refresh(struct dpmu_uarch *u, struct dpmu_ucore *c)
{
	if (!c->live_ok || c->live_gen != dpmu_model_core_live_gen(u->model, c->id))
		core_lists(u, c);
	uint16_t ev[DPMU_UWATCH_MAX];
	uint64_t left[DPMU_UWATCH_MAX];
	unsigned n = dpmu_model_core_overflow_watch(u->model, c->id, ev, left, DPMU_UWATCH_MAX);
	c->nwatch = 0;
	for (unsigned i = 0; i < n; i++) {
		struct dpmu_uwatch *w = &c->watch[c->nwatch];
		*w = (struct dpmu_uwatch){ .clock = ev[i] == DPMU_EV_CPU_CYCLES, .left = left[i] };
		for (unsigned j = 0; !w->clock && j < c->nlive; j++)
			if (c->live_code[j] == ev[i] && w->nlive < DPMU_UWATCH_SOURCES)
				w->live[w->nlive++] = (uint8_t)j;
		/* an event the engine never produces cannot overflow a counter */
		if (w->clock || w->nlive)
			c->nwatch++;
	}
	c->watch_stale = false;
}

static void deliver_core(struct dpmu_uarch *u, struct dpmu_ucore *c)
{
	c->batch_left = u->batch;
	/* The list first: the blocks' class events are folded for it. */
	if (!c->live_ok || c->live_gen != dpmu_model_core_live_gen(u->model, c->id))
		core_lists(u, c);
	/* The class events of the blocks run since the last delivery. */
	if (c->nowned)
		core_fold_live(c);
	if (c->nwatch) {
		c->watch_fired |= watch_hit(c);
		c->watch_stale = true; /* the counters move now */
	}
	uint64_t now = dpmu_ucore_cycles(c);
	uint64_t k = now - c->cycles_delivered;
	/* A flush of every core (each monitor tick) finds most cores idle:
	 * nothing to deliver, not even the clocks. A core that retired
	 * anything has INST_RETIRED pending, so no scan is needed then. */
	bool idle = c->pend[DPMU_UEV_INST_RETIRED] == 0 && none_pending(c->pend, DPMU_UEV_COUNT) &&
		    none_pending(c->ipend, DPMU_IEV_COUNT);
	if (idle && !k)
		return;
	/* Only what the model counts and what the observer wants, derived
	 * events summed from their sources here: any other count would change
	 * nothing, and is dropped with the rest. */
	if (!idle) {
		uint64_t n[DPMU_UEV_COUNT + DPMU_IEV_COUNT], to_model[DPMU_UEV_COUNT + DPMU_IEV_COUNT];
		for (unsigned i = 0; i < c->nlive; i++) {
			const struct dpmu_live *l = &c->live[i];
			n[i] = *l->p + *l->a + *l->b;
		}
		/* What the model takes: 0 for what only the observer wants. */
		const uint64_t *mn = n;
		if (!c->all_model) {
			for (unsigned i = 0; i < c->nlive; i++)
				to_model[i] = n[i] & c->live[i].to_model;
			mn = to_model;
		}
		dpmu_model_core_events(u->model, c->id, c->live_code, mn, c->nlive);
		for (unsigned j = 0; j < c->nobs; j++) {
			unsigned i = c->obs_live[j];
			if (n[i])
				u->observer(u->observer_ctx, false, c->id, c->live_code[i], n[i]);
		}
		memset(c->pend, 0, sizeof c->pend);
		memset(c->ipend, 0, sizeof c->ipend);
	}
	if (!k)
		return;
	uint64_t before = c->cycles_delivered;
	c->cycles_delivered = now;
	dpmu_model_core_cycles(u->model, c->id, k);
	if (c->cyc_obs)
		u->observer(u->observer_ctx, false, c->id, DPMU_EV_CPU_CYCLES, k);
	/* BUS_CYCLES: the core's bus to the DSU runs at the DSU clock; the
	 * count is the DSU cycles since the last delivery. While nothing
	 * takes it, the engine does not keep that time up to date, and
	 * works out where it was when something takes it again. */
	if (!c->bus_model && !c->bus_obs) {
		c->bus_stale = true;
		return;
	}
	if (c->bus_stale) {
		c->bus_delivered =
			muldiv(before, u->clusters[c->cluster].params->freq_hz, c->type->freq_hz);
		c->bus_stale = false;
	}
	uint64_t bus = core_dsu_cycles(u, c);
	if (bus > c->bus_delivered) {
		uint64_t b = bus - c->bus_delivered;
		c->bus_delivered = bus;
		if (c->bus_model)
			dpmu_model_core_event(u->model, c->id, EV_BUS_CYCLES, b);
		if (c->bus_obs)
			u->observer(u->observer_ctx, false, c->id, EV_BUS_CYCLES, b);
	}
}

void dpmu_uarch_flush_core(struct dpmu_uarch *u, unsigned core)
{
	if (!u || core >= u->ncores)
		return;
	deliver_core(u, &u->cores[core]);
	deliver_cluster(u, &u->clusters[u->cores[core].cluster]);
}

void dpmu_uarch_flush(struct dpmu_uarch *u)
{
	if (!u)
		return;
	/* The driver flushes before every register access, dozens of times
	 * in a row while nothing runs. After a full flush nothing is pending;
	 * what becomes pending comes from retired instructions, each of which
	 * moves its core's clock (it costs at least one milli-cycle of work,
	 * docs/events.md "Timing"). So with no clock moved since the last
	 * full flush, this one would deliver nothing. */
	bool quiet = u->flushed;
	for (unsigned i = 0; quiet && i < u->ncores; i++) {
		const struct dpmu_ucore *c = &u->cores[i];
		quiet = c->work_milli == c->flush_work && c->stall_cycles == c->flush_stall;
	}
	if (quiet)
		return;
	for (unsigned i = 0; i < u->ncores; i++) {
		struct dpmu_ucore *c = &u->cores[i];
		deliver_core(u, c);
		c->flush_work = c->work_milli;
		c->flush_stall = c->stall_cycles;
	}
	for (unsigned i = 0; i < u->nclusters; i++)
		deliver_cluster(u, &u->clusters[i]);
	u->flushed = true;
}

/* ---- the retire loop ---------------------------------------------------------- */

/* Class flags that make an instruction something other than integer DP. */
#define NON_DP_FLAGS                                                                   \
	(DPMU_IC_ASE | DPMU_IC_VFP | DPMU_IC_CRYPTO | DPMU_IC_ISB | DPMU_IC_DSB |       \
	 DPMU_IC_DMB | DPMU_IC_SVC | DPMU_IC_ERET | DPMU_IC_LDREX | DPMU_IC_STREX)

static inline bool branch_direct(const struct dpmu_insn *in)
{
	return in->br_kind == DPMU_BR_COND || in->br_kind == DPMU_BR_UNCOND ||
	       (in->br_kind == DPMU_BR_CALL && !(in->flags & DPMU_IC_REG_BRANCH));
}

/* The events a branch's kind alone decides (the outcome and the
 * prediction are the dynamic rest, branch_op). */
static void branch_static(uint64_t *pend, uint64_t *ipend, const struct dpmu_insn *in)
{
	pend[DPMU_UEV_BR_RETIRED]++;
	if (branch_direct(in))
		pend[DPMU_UEV_BR_IMMED_RETIRED]++;
	else
		pend[DPMU_UEV_BR_INDIRECT_SPEC]++;
	if (in->br_kind == DPMU_BR_RET)
		pend[DPMU_UEV_BR_RETURN_RETIRED]++;
	/* every branch but a conditional one writes the PC */
	if (in->br_kind != DPMU_BR_COND)
		pend[DPMU_UEV_PC_WRITE_RETIRED]++;
	/* The Cortex-A55's split of predictions by kind (its catalog). */
	if (in->br_kind == DPMU_BR_COND)
		ipend[DPMU_IEV_BR_COND_PRED]++;
	else if (in->br_kind == DPMU_BR_RET)
		ipend[DPMU_IEV_BR_RETURN_ADDR_PRED]++;
	else if (!branch_direct(in))
		ipend[DPMU_IEV_BR_INDIRECT_ADDR_PRED]++;
}

/* The events an instruction's encoding alone decides (everything but a
 * store-exclusive's outcome and a branch's outcome and prediction), added
 * to pend[] and ipend[]. The same for every execution, so a block's are
 * gathered once (dpmu_ublock_create). */
static void class_events(uint64_t *pend, uint64_t *ipend, const struct dpmu_insn *in)
{
	uint32_t f = in->flags;
	if (in->kind == DPMU_INSN_BRANCH)
		branch_static(pend, ipend, in);
	else if (in->kind != DPMU_INSN_LOAD && in->kind != DPMU_INSN_STORE &&
		 ((f & DPMU_IC_DP) || !(f & NON_DP_FLAGS)))
		pend[DPMU_UEV_DP_SPEC]++;
	if (!(f & NON_DP_FLAGS))
		return;
	if (f & DPMU_IC_ASE)
		pend[DPMU_UEV_ASE_SPEC]++;
	if (f & DPMU_IC_VFP)
		pend[DPMU_UEV_VFP_SPEC]++;
	if (f & DPMU_IC_CRYPTO)
		pend[DPMU_UEV_CRYPTO_SPEC]++;
	if (f & DPMU_IC_ISB)
		pend[DPMU_UEV_ISB_SPEC]++;
	if (f & DPMU_IC_DSB)
		pend[DPMU_UEV_DSB_SPEC]++;
	if (f & DPMU_IC_DMB)
		pend[DPMU_UEV_DMB_SPEC]++;
	if (f & DPMU_IC_LDREX)
		pend[DPMU_UEV_LDREX_SPEC]++;
	if (f & DPMU_IC_SVC) {
		pend[DPMU_UEV_EXC_TAKEN]++;
		pend[DPMU_UEV_EXC_SVC]++;
	}
	if (f & DPMU_IC_ERET) {
		pend[DPMU_UEV_EXC_RETURN]++;
		if (in->kind != DPMU_INSN_BRANCH) {
			/* An exception return writes the PC (Arm ARM D17,
			 * PC_WRITE_RETIRED). */
			pend[DPMU_UEV_PC_WRITE_RETIRED]++;
		}
	}
}

/* A store-exclusive's outcome: known only when it has executed. */
static inline void strex_event(struct dpmu_ucore *c, const struct dpmu_insn *in)
{
	if (in->flags & DPMU_IC_STREX_FAIL)
		EV(c, STREX_FAIL_SPEC);
	else
		EV(c, STREX_PASS_SPEC);
}

#define IEV(c, name) ((c)->ipend[DPMU_IEV_##name]++)

/* A branch's outcome and prediction (its kind's events: branch_static);
 * returns the front-end stall of a misprediction. */
static inline uint32_t branch_op(struct dpmu_ucore *c, const struct dpmu_insn *in)
{
	if (in->br_kind == DPMU_BR_COND && in->taken)
		EV(c, PC_WRITE_RETIRED);
	if (!dpmu_bpred_branch(&c->bp, in))
		return 0;
	if (in->br_kind == DPMU_BR_COND) {
		IEV(c, BR_COND_MIS_PRED);
	} else if (in->br_kind == DPMU_BR_RET) {
		IEV(c, BR_RETURN_ADDR_MIS_PRED);
	} else if (!branch_direct(in)) {
		IEV(c, BR_INDIRECT_MIS_PRED);
		IEV(c, BR_INDIRECT_ADDR_MIS_PRED);
	}
	EV(c, BR_MIS_PRED);
	return c->type->pipeline.mispredict_penalty;
}

/* The L1I (and ITLB) is looked up when the fetch leaves the line of the
 * previous instruction; returns the front-end stall. */
static inline uint64_t fetch_line(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc)
{
	uint64_t fblk = pc >> c->l1i.set.shift;
	if (fblk == c->last_fetch_blk)
		return 0;
	c->last_fetch_blk = fblk;
	uint32_t f = dpmu_mem_fetch(u, c, pc);
	c->ipend[DPMU_IEV_STALL_FRONTEND_TLB] += c->tlb_stall;
	c->ipend[DPMU_IEV_STALL_FRONTEND_CACHE] += f - c->tlb_stall;
	return f;
}

/* A store's wait for DRAM bandwidth: a full store buffer stalls, the wait
 * is not overlapped. */
static inline void store_stall(struct dpmu_ucore *c, uint32_t bw)
{
	c->pend[DPMU_UEV_STALL_BACKEND] += bw;
	c->pend[DPMU_UEV_STALL_BACKEND_MEM] += bw;
	c->ipend[DPMU_IEV_STALL_BACKEND_ST] += bw;
	c->ipend[DPMU_IEV_STALL_BACKEND_ST_STB] += bw;
	c->stall_cycles += bw;
}

static inline void front_stall(struct dpmu_ucore *c, uint64_t fe)
{
	c->pend[DPMU_UEV_STALL_FRONTEND] += fe;
	c->stall_cycles += fe;
}

/* Everything of one retired instruction but its class events: the fetch
 * when it leaves the previous instruction's line, the wait for its
 * sources or the reorder window (timing.h), its issue on the work clock,
 * its memory access or branch, the stalls they cause, and when its
 * results are ready. The order is the timing's: the fetch reads the
 * clock before the issue, the access after it. `m`: insn_masks(in).
 * `summed`: a load or store of a block summary, which holds the access's
 * dpmu_mem_summed counts. */
static inline __attribute__((always_inline)) void
insn_dynamic(struct dpmu_uarch *u, struct dpmu_ucore *c, const struct dpmu_insn *in,
	     struct dpmu_iregm m, uint32_t cpi, bool fetch, bool strex, bool summed)
{
	uint64_t fe = 0;
	uint32_t bw = 0, be = 0;
	bool mispredict = false;

	/* `fetch` false: the fetch cannot have left the previous line. */
	if (fetch)
		fe = fetch_line(u, c, in->pc);
	const struct dpmu_ureg *src;
	uint64_t s = core_now(c, fe);
	s += dep_issue(c, in, m.src | m.dst, s, &src);
	/* Memory timing reads the core's clock: it includes this
	 * instruction's issue. */
	c->work_milli += cpi;

	switch (in->kind) {
	case DPMU_INSN_LOAD:
		be = dpmu_mem_op(u, c, in, false, &bw, summed, c->work_milli);
		break;
	case DPMU_INSN_STORE:
		dpmu_mem_op(u, c, in, true, &bw, summed, c->work_milli);
		if (bw)
			store_stall(c, bw);
		break;
	case DPMU_INSN_BRANCH: {
		uint64_t mp = c->pend[DPMU_UEV_BR_MIS_PRED];
		fe += branch_op(c, in);
		mispredict = c->pend[DPMU_UEV_BR_MIS_PRED] != mp;
		break;
	}
	default:
		break;
	}
	if (strex)
		strex_event(c, in);

	if (mispredict)
		dep_resolve(c, src, s + cpi);
	if (fe)
		front_stall(c, fe);
	if (in->kind == DPMU_INSN_LOAD)
		dep_load(c, in, m, src, s, be, c->tlb_stall);
	else if ((m.src | m.dst) & c->dep_pend)
		dep_other(c, in, m, src, s);
}

/* insn_dynamic of an instruction in its predecessor's fetch line that
 * neither accesses memory nor branches: its dependences only, the work
 * when none is pending. */
static inline __attribute__((always_inline)) void
insn_plain(struct dpmu_ucore *c, const struct dpmu_insn *in, struct dpmu_iregm m, uint32_t cpi)
{
	const dpmu_u128 touch = m.src | m.dst;
	if (__builtin_expect(c->dep_seq + 1 < c->rob_limit && !(touch & c->dep_pend), 1)) {
		c->dep_seq++;
		c->work_milli += cpi;
		return;
	}
	const struct dpmu_ureg *src;
	uint64_t s = core_now(c, 0);
	s += dep_issue(c, in, m.src | m.dst, s, &src);
	c->work_milli += cpi;
	if (touch & c->dep_pend)
		dep_other(c, in, m, src, s);
}

/* A run of instructions on one core with no delivery point inside. */
static void retire_run(struct dpmu_uarch *u, struct dpmu_ucore *c, const struct dpmu_insn *insns,
		       size_t n)
{
	const uint32_t cpi = c->cpi_milli;
	for (size_t i = 0; i < n; i++) {
		const struct dpmu_insn *in = &insns[i];
		insn_dynamic(u, c, in, insn_masks(in), cpi, true, in->flags & DPMU_IC_STREX, false);
		class_events(c->pend, c->ipend, in);
	}
}

/* After m instructions of a run: INST_RETIRED is added per run (nothing
 * reads it before delivery), and the batch bound is checked. */
static void retired(struct dpmu_uarch *u, struct dpmu_ucore *c, size_t m)
{
	c->pend[DPMU_UEV_INST_RETIRED] += m;
	c->batch_left -= (uint32_t)m;
	if (!c->batch_left)
		dpmu_uarch_flush_core(u, c->id);
}

void dpmu_uarch_retire(struct dpmu_uarch *u, unsigned core, const struct dpmu_insn *insns,
		       size_t n)
{
	if (!u)
		return;
	if (core >= u->ncores) {
		dpmu_err_set(&u->err, DPMU_EINVAL,
			     "retire on cpu%u: the profile has cpu0-cpu%u; %zu instructions dropped",
			     core, u->ncores - 1, n);
		return;
	}
	if (!insns && n) {
		dpmu_err_set(&u->err, DPMU_EINVAL, "retire on cpu%u: NULL instructions", core);
		return;
	}
	struct dpmu_ucore *c = &u->cores[core];
	if (__builtin_expect(c->trace_on, 0))
		dpmu_uarch_trace_run(u, c, insns, n, false, 0);
	while (n) {
		/* Up to the next delivery point at once: the batch bound is
		 * checked per run, not per instruction. */
		uint32_t room = c->batch_left;
		size_t m = n < room ? n : room;
		retire_run(u, c, insns, m);
		insns += m;
		n -= m;
		retired(u, c, m);
	}
}

size_t dpmu_uarch_retire_watched(struct dpmu_uarch *u, unsigned core, const struct dpmu_insn *insns,
				 size_t n, bool *overflow)
{
	*overflow = false;
	if (!u || core >= u->ncores || !insns) {
		dpmu_uarch_retire(u, core, insns, n); /* its checks and messages */
		return n;
	}
	struct dpmu_ucore *c = &u->cores[core];
	/* the counters may have been written since the last call */
	c->watch_stale = true;
	if (__builtin_expect(c->trace_on, 0))
		dpmu_uarch_trace_run(u, c, insns, n, false, 0);
	for (size_t i = 0; i < n; i++) {
		if (c->watch_stale)
			watch_refresh(u, c);
		if (!c->nwatch) {
			/* nothing can interrupt before the next delivery's
			 * refresh: the rest up to it at once */
			size_t m = n - i < c->batch_left ? n - i : c->batch_left;
			retire_run(u, c, insns + i, m);
			retired(u, c, (uint32_t)m);
			i += m - 1;
			continue;
		}
		c->watch_fired = false;
		retire_run(u, c, insns + i, 1);
		retired(u, c, 1);
		if (c->watch_fired || watch_hit(c)) {
			dpmu_uarch_flush_core(u, core);
			c->watch_fired = false;
			*overflow = true;
			return i + 1;
		}
	}
	return n;
}

void dpmu_uarch_set_sample_hooks(struct dpmu_uarch *u, const struct dpmu_uarch_sample_hooks *h,
				 void *ctx)
{
	if (!u)
		return;
	u->hooks = h ? *h : (struct dpmu_uarch_sample_hooks){0};
	u->hooks_ctx = ctx;
}

bool dpmu_uarch_watch_arm(struct dpmu_uarch *u, unsigned core)
{
	if (!u || core >= u->ncores)
		return false;
	struct dpmu_ucore *c = &u->cores[core];
	watch_refresh(u, c);
	uint64_t left = UINT64_MAX;
	for (unsigned i = 0; i < c->nwatch; i++) {
		if (!c->watch[i].clock) {
			c->sample_on = false;
			c->wx_x = UINT64_MAX;
			return false;
		}
		if (c->watch[i].left < left)
			left = c->watch[i].left;
	}
	/* the clock's cycles reach cycles_delivered + left exactly when
	 * work_milli + 1000 x stall_cycles reaches 1000 times that */
	uint64_t at = c->cycles_delivered + left;
	c->wx_x = left == UINT64_MAX || at < left || at > UINT64_MAX / 1000 ? UINT64_MAX : at * 1000;
	c->wx_armed = c->wx_x;
	c->wx_hit = false;
	c->sample_on = true;
	return true;
}

/* Sampling on the block path: where in a block the clock first reaches
 * wx_x, the clock after instruction i being what the per-instruction path
 * has there. Between two looks the instructions take a dispatch slot
 * each on the base the earlier look saw (the block path's timing: waits
 * and stalls happen at its steps, each looked at). */
struct wlook {
	uint64_t base;  /* the clock after instruction k is base + (k + 1) x cpi */
	uint32_t from;  /* the last instruction looked at (UINT32_MAX: none) */
};

static inline uint64_t core_clk(const struct dpmu_ucore *c)
{
	return c->work_milli + 1000 * c->stall_cycles;
}

/* A look that found the clock at or past wx_x: the first instruction
 * there, the segment since the last look first. No later look finds
 * another (wx_x is put out of reach until the hooks have run). */
static __attribute__((noinline, cold)) void watch_hit_at(struct dpmu_ucore *c,
							  const struct wlook *w, uint32_t i,
							  uint32_t cpi)
{
	const uint64_t x = c->wx_x;
	const uint32_t k0 = w->from + 1; /* 0 after none */
	uint32_t j = i;
	/* instruction i - 1 ends at base + i x cpi: in the segment only if so */
	if (k0 < i && w->base + (uint64_t)i * cpi >= x) {
		/* the first k >= k0 with base + (k + 1) x cpi >= x */
		uint64_t need = x > w->base ? x - w->base : 0;
		uint64_t k = need ? (need + cpi - 1) / cpi - 1 : 0;
		j = k < k0 ? k0 : (uint32_t)k;
	}
	c->wx_hit = true;
	c->wx_j = j;
	c->wx_x = UINT64_MAX;
}

/* A look at instruction i, whose clock ends at base_now + (i + 1) x cpi. */
static inline void watch_at(struct dpmu_ucore *c, struct wlook *w, uint32_t i, uint64_t base_now,
			    uint32_t cpi)
{
	if (__builtin_expect(base_now + (uint64_t)(i + 1) * cpi >= c->wx_x, 0)) {
		watch_hit_at(c, w, i, cpi);
		return;
	}
	w->base = base_now;
	w->from = i;
}

/* The per-instruction paths (walk, split): the clock is there after each. */
static inline void watch_insn(struct dpmu_ucore *c, uint32_t i)
{
	if (c->sample_on && core_clk(c) >= c->wx_x) {
		c->wx_hit = true;
		c->wx_j = i;
		c->wx_x = UINT64_MAX;
	}
}


/* ---- translated blocks ----------------------------------------------------------- *
 *
 * Most instructions of a block do the same thing every time it runs: they
 * issue (work cycles) and count their class events. Only a few read the
 * machine's state: the first (its fetch line may differ from where the
 * core fetched last), the first of each new fetch line, loads, stores,
 * branches and store-exclusives (their outcome). A block's summary lists
 * the class-event totals and those instructions (its steps), so an
 * execution adds the totals and visits the steps, with the work clock set
 * to what the per-instruction loop would have at each: the same events,
 * the same timing. */

/* A summary's steps mark the fetch-line changes of one L1I line size,
 * planned for the line of the core that runs it (ublock_plan): an
 * instruction in the previous one's line finds the fetch where it is. At
 * creation, the smallest line a profile may have (docs/profiles.md). */
#define UBLOCK_LINE_SHIFT 4u

struct dpmu_ublock_ev {
	uint32_t off;        /* byte offset of its pend[] or ipend[] entry in a core */
	uint32_t n;
};

/* fold_need's index of the pend[] or ipend[] entry at byte offset off of
 * a core. */
static inline unsigned fold_index(uint32_t off)
{
	const uint32_t ip = (uint32_t)offsetof(struct dpmu_ucore, ipend);
	return off >= ip ? DPMU_UEV_COUNT + 1 + (off - ip) / 8
			 : (off - (uint32_t)offsetof(struct dpmu_ucore, pend)) / 8;
}

/* A step: an instruction index, whether its fetch line may differ from
 * the previous instruction's, and what else it does, decided once when the
 * summary is built so an execution tests nothing of the instruction: only
 * the fetch (STEP_NONE), a load, a store, a branch, or anything else
 * (a store-exclusive: the per-instruction code). STEP_SOME only while a
 * summary is built: "a step". */
#define STEP_FETCH (1u << 31)
#define STEP_OP_SHIFT 28
#define STEP_OP(st) (((st) >> STEP_OP_SHIFT) & 7u)
enum { STEP_NONE, STEP_LOAD, STEP_STORE, STEP_BRANCH, STEP_OTHER };
#define STEP_SOME (1u << 27)
#define STEP_INDEX (STEP_SOME - 1)
/* After the last step: no step has op 7, so it is none (the loop over the
 * steps then needs neither their number nor their end in a register). */
#define STEP_END UINT32_MAX

struct dpmu_ublock {
	uint32_t n;          /* instructions */
	uint32_t nev;        /* entries of ev[] */
	uint32_t nstep;      /* entries of step[] (room for n), then STEP_END */
	uint32_t line_shift; /* log2 of the L1I line the steps are planned for */
	struct dpmu_ublock_ev *ev;
	uint32_t *step;      /* STEP_* flags | instruction index, ascending */
	struct dpmu_insn *insn; /* the instructions; an execution's fields are
				 * written in before it retires */
	struct dpmu_insn *branch; /* the last instruction if a branch, else NULL */
	/* Every execution starts with the fetch of instruction 0, and most
	 * end in a branch: both are done outside the steps. first_op:
	 * instruction 0 is a step too (its access follows the fetch); tail
	 * (TAIL_* bits, 0: none): the last instruction is a branch run after
	 * the steps (TAIL_FETCH: its fetch line may differ from the previous
	 * instruction's; TAIL_COND: conditional, whose outcome next_pc
	 * gives); tail_pc and fall: its address and fall-through. A last
	 * branch that is not the tail (a store-exclusive's class) is a step
	 * that reads its outcome from the copy: copy_branch, else NULL. */
	bool first_op;
	uint8_t tail;
	/* plain: no steps, and a conditional tail in the line of instruction
	 * 0, head_blk (its L1I block for line_shift); most blocks are */
	bool plain;
	/* sampling: its last instruction is a call or a register branch,
	 * which the backend's call stacks follow (run_block_sampled) */
	bool tail_hook;
	uint64_t head_blk;
	uint64_t tail_pc, fall;
	struct dpmu_insn *copy_branch;
	/* Executions on `owner` whose class events are not yet in its pend[]
	 * (owner NULL: none); the block is owner->owned[slot]. */
	struct dpmu_ucore *owner;
	uint32_t runs, slot;
	/* ev[] ordered for the fold_need set fold_key (all zero: none yet):
	 * its first nfold entries are those the set holds (core_fold_live) */
	uint64_t fold_key[DPMU_FOLD_WORDS];
	uint32_t nfold;
	/* Dependences (timing.h): `reads`, the registers the block reads
	 * before it writes them (its values from before it); `computed`,
	 * those it leaves written by other instructions than loads; each
	 * instruction's registers (imask). walk: an instruction reads what
	 * an earlier load of the block wrote, or a load has no register
	 * operands. An execution that reads nothing pending and has no walk
	 * waits for nothing: the steps time it, and its computed values are
	 * ready. */
	dpmu_u128 reads, computed;
	struct dpmu_iregm *imask;
	bool walk;
	/* The dependence summary (timing.h), when dsum: idep[i], what
	 * instruction i's sources are at its issue; wdep[nw], the registers
	 * the block leaves written with a value that depends on something,
	 * `fixed` the others (ready at their issue). Not for a block of more
	 * than DPMU_UDEP_MAX instructions, with a load without register
	 * operands or with a step that times itself (step_rare). */
	bool dsum;
	bool noload; /* a summary, and no load (run_block_noload) */
	uint32_t nw, nwl; /* nwl: the first of wdep[] name a load */
	dpmu_u128 fixed, wmask, win; /* win: the registers wdep[] names */
	struct dpmu_udep *idep;
	struct dpmu_uwdep *wdep;
	/* The template of a clean execution (lean_template) for core type
	 * lean_type (NULL: none yet): when every load hits the L1D and
	 * nothing stalls, load i's value is ready lean_load[i] milli-cycles
	 * after the block's start and the value of wdep[k] (k < nwl)
	 * lean_w[k] after it; lean_ok: no load then takes a reorder-window
	 * entry. */
	const struct dpmu_core_type *lean_type;
	bool lean_ok;
	uint32_t *lean_load, *lean_w;
};

/* Whether instruction i of a block may start a new fetch line of 2^shift
 * bytes. */
static bool new_fetch_line(const struct dpmu_insn *insns, uint32_t i, uint32_t shift)
{
	if (i == 0)
		return true;
	const struct dpmu_insn *prev = &insns[i - 1];
	return insns[i].pc != prev->pc + prev->isize || (insns[i].pc >> shift) != (prev->pc >> shift);
}

enum { TAIL_BRANCH = 1, TAIL_FETCH = 2, TAIL_COND = 4 };

static uint32_t step_op(const struct dpmu_insn *in)
{
	return in->flags & DPMU_IC_STREX	? STEP_OTHER
	       : in->kind == DPMU_INSN_LOAD   ? STEP_LOAD
	       : in->kind == DPMU_INSN_STORE  ? STEP_STORE
	       : in->kind == DPMU_INSN_BRANCH ? STEP_BRANCH
					      : STEP_NONE;
}

/* How the last instruction of a block of n runs after the steps. */
static uint8_t tail_of(const struct dpmu_insn *insns, uint32_t n, uint32_t shift)
{
	if (step_op(&insns[n - 1]) != STEP_BRANCH)
		return 0;
	/* a one-instruction block's fetch is instruction 0's */
	return TAIL_BRANCH | (n > 1 && new_fetch_line(insns, n - 1, shift) ? TAIL_FETCH : 0) |
	       (insns[n - 1].br_kind == DPMU_BR_COND ? TAIL_COND : 0);
}

/* Whether instruction i of a block reads or changes the machine's state
 * beyond its issue and class events, other than instruction 0's fetch and
 * the tail; 0 if not, else its step | STEP_SOME. */
static uint32_t step_of(const struct dpmu_insn *insns, uint32_t i, uint32_t n, uint32_t shift)
{
	const struct dpmu_insn *in = &insns[i];
	if (i + 1 == n && tail_of(insns, n, shift))
		return 0;
	bool f = i > 0 && new_fetch_line(insns, i, shift);
	uint32_t op = step_op(in);
	if (f || op != STEP_NONE)
		return i | (f ? STEP_FETCH : 0) | op << STEP_OP_SHIFT | STEP_SOME;
	return 0;
}

/* The steps, tail and first_op of b for an L1I line of 2^shift bytes. A
 * block run by cores of other line sizes in turn is planned again each
 * time (the shipped profiles have one line size). */
static void ublock_plan(struct dpmu_ublock *b, uint32_t shift)
{
	const struct dpmu_insn *insns = b->insn; /* a run writes only addr and taken */
	const uint32_t n = b->n;
	b->line_shift = shift;
	b->tail = tail_of(insns, n, shift);
	b->copy_branch = b->tail ? NULL : b->branch;
	b->first_op = step_of(insns, 0, n, shift) != 0;
	b->nstep = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t st = step_of(insns, i, n, shift);
		if (st)
			b->step[b->nstep++] = st & ~STEP_SOME;
	}
	b->step[b->nstep] = STEP_END;
	/* no steps: instructions 1 to n-2 are in instruction 0's line, and
	 * without TAIL_FETCH so is the tail */
	b->plain = b->nstep == 0 && (b->tail & (TAIL_COND | TAIL_FETCH)) == TAIL_COND;
	b->tail_hook = b->tail && (b->insn[n - 1].br_kind == DPMU_BR_CALL ||
				   (b->insn[n - 1].flags & DPMU_IC_REG_BRANCH));
	b->head_blk = insns[0].pc >> shift;
}

static __attribute__((noinline, cold)) void ublock_replan(struct dpmu_ublock *b, uint32_t shift)
{
	ublock_plan(b, shift);
}

/* The dependence summary of a block (timing.h), if it can have one:
 * idep[i], what instruction i's sources are at its issue, and reg[r], what
 * register r is at the block's end (reg_bit(r) alone: untouched). */
static bool block_deps(const struct dpmu_insn *insns, uint32_t n, struct dpmu_udep *idep,
		       struct dpmu_udep reg[DPMU_REG_COUNT])
{
	if (n > DPMU_UDEP_MAX)
		return false;
	for (unsigned r = 0; r < DPMU_REG_COUNT; r++)
		reg[r] = (struct dpmu_udep){reg_bit((uint8_t)r), 0};
	for (uint32_t i = 0; i < n; i++) {
		const struct dpmu_insn *in = &insns[i];
		uint32_t op = step_op(in);
		if (op == STEP_OTHER || (op == STEP_BRANCH && i + 1 < n) ||
		    (in->kind == DPMU_INSN_LOAD && insn_no_regs(in)))
			return false;
		for (unsigned k = 0; k < 3; k++)
			if (in->src[k] >= DPMU_REG_COUNT || in->dst[k] >= DPMU_REG_COUNT)
				return false;
		struct dpmu_udep d = {0, 0};
		for (unsigned k = 0; k < 3; k++) {
			d.entry |= reg[in->src[k]].entry;
			d.load |= reg[in->src[k]].load;
		}
		idep[i] = d;
		/* a load's value: its own (its start waited for d); any
		 * other's: the latest of its sources' */
		if (in->kind == DPMU_INSN_LOAD)
			d = (struct dpmu_udep){0, 1ull << i};
		for (unsigned k = 0; k < 3 && in->dst[k]; k++)
			reg[in->dst[k]] = d;
	}
	return true;
}

int dpmu_ublock_create(const struct dpmu_insn *insns, uint32_t n, struct dpmu_ublock **out,
		       struct dpmu_err *err)
{
	*out = NULL;
	if (!insns || n == 0 || n >= STEP_SOME)
		return dpmu_err_set(err, DPMU_EINVAL, "block summary of %u instructions", n);
	uint64_t tot[DPMU_UEV_COUNT + DPMU_IEV_COUNT] = {0};
	uint32_t nev = 0;
	for (uint32_t i = 0; i < n; i++)
		class_events(tot, tot + DPMU_UEV_COUNT, &insns[i]);
	/* INST_RETIRED waits for the delivery with the class events, and so
	 * do the counts every load or store step makes once (the steps are
	 * the same for any line size) */
	tot[DPMU_UEV_INST_RETIRED] = n;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t op = step_op(&insns[i]);
		if (op == STEP_LOAD || op == STEP_STORE)
			for (unsigned e = 0; e < DPMU_MEM_SUMMED; e++)
				tot[dpmu_mem_summed[op == STEP_STORE][e]]++;
	}
	for (unsigned e = 0; e < DPMU_UEV_COUNT + DPMU_IEV_COUNT; e++)
		nev += tot[e] != 0;
	struct dpmu_udep dep[DPMU_REG_COUNT], idep[DPMU_UDEP_MAX];
	const bool dsum = block_deps(insns, n, idep, dep);
	uint32_t nw = 0;
	for (unsigned r = 1; dsum && r < DPMU_REG_COUNT; r++)
		nw += (dep[r].entry != reg_bit((uint8_t)r) || dep[r].load) &&
		      (dep[r].entry || dep[r].load);
	const uint32_t nd = dsum ? n : 0;
	struct dpmu_ublock *b =
		calloc(1, sizeof *b + n * sizeof *b->imask + nd * sizeof *b->idep +
				  nw * sizeof *b->wdep + n * sizeof *b->insn + nev * sizeof *b->ev +
				  (n + 1) * sizeof *b->step +
				  (nd + nw) * sizeof *b->lean_load);
	if (!b)
		return dpmu_err_set(err, DPMU_ENOMEM, "out of memory for a block summary");
	b->n = n;
	/* the 16-byte masks first, where calloc's alignment holds */
	b->imask = (struct dpmu_iregm *)(b + 1);
	b->idep = (struct dpmu_udep *)(b->imask + n);
	b->wdep = (struct dpmu_uwdep *)(b->idep + nd);
	b->dsum = dsum;
	if (dsum) {
		memcpy(b->idep, idep, n * sizeof *idep);
		/* those that name a load first (nwl of them): when no register
		 * pending at entry is named, only they can be left pending */
		for (unsigned pass = 0; pass < 2; pass++) {
			for (unsigned r = 1; r < DPMU_REG_COUNT; r++) {
				if (dep[r].entry == reg_bit((uint8_t)r) && !dep[r].load)
					continue; /* not written, or its own value */
				if (!dep[r].entry && !dep[r].load) {
					if (pass)
						b->fixed |= reg_bit((uint8_t)r);
				} else if ((dep[r].load != 0) == !pass) {
					const uint64_t l = dep[r].load;
					b->wdep[b->nw++] = (struct dpmu_uwdep){
						dep[r], reg_bit((uint8_t)r), (uint8_t)r,
						l && !(l & (l - 1)) ? (uint8_t)__builtin_ctzll(l)
							: DPMU_UWDEP_MANY};
					b->wmask |= reg_bit((uint8_t)r);
					b->win |= dep[r].entry;
				}
			}
			if (!pass)
				b->nwl = b->nw;
		}
	}
	dpmu_u128 loaded = 0, written = 0;
	b->noload = dsum;
	for (uint32_t i = 0; i < n; i++) {
		const struct dpmu_insn *in = &insns[i];
		const struct dpmu_iregm m = b->imask[i] = insn_masks(in);
		b->reads |= m.src & ~written;
		b->walk |= (m.src & loaded) != 0;
		written |= m.dst;
		if (in->kind == DPMU_INSN_LOAD) {
			b->noload = false;
			b->walk |= insn_no_regs(in);
			loaded |= m.dst;
			b->computed &= ~m.dst;
		} else {
			loaded &= ~m.dst;
			b->computed |= m.dst;
		}
	}
	b->insn = (struct dpmu_insn *)(b->wdep + nw);
	memcpy(b->insn, insns, n * sizeof *insns);
	b->branch = insns[n - 1].kind == DPMU_INSN_BRANCH ? &b->insn[n - 1] : NULL;
	b->tail_pc = insns[n - 1].pc;
	b->fall = insns[n - 1].pc + insns[n - 1].isize;
	b->ev = (struct dpmu_ublock_ev *)(b->insn + n);
	b->step = (uint32_t *)(b->ev + nev);
	b->lean_load = b->step + n + 1;
	b->lean_w = b->lean_load + nd;
	for (unsigned e = 0; e < DPMU_UEV_COUNT + DPMU_IEV_COUNT; e++)
		if (tot[e])
			b->ev[b->nev++] = (struct dpmu_ublock_ev){
				.off = (uint32_t)(e < DPMU_UEV_COUNT
							  ? offsetof(struct dpmu_ucore, pend) +
								    e * sizeof(uint64_t)
							  : offsetof(struct dpmu_ucore, ipend) +
								    (e - DPMU_UEV_COUNT) *
									    sizeof(uint64_t)),
				.n = (uint32_t)tot[e]};
	ublock_plan(b, UBLOCK_LINE_SHIFT);
	*out = b;
	return 0;
}

/* Add `runs` executions' class events of b to its owner's counts (as the
 * runs would have, one by one) and forget them. */
static void block_fold(struct dpmu_ublock *b)
{
	char *base = (char *)b->owner;
	const uint64_t k = b->runs;
	for (uint32_t e = 0; e < b->nev; e++)
		*(uint64_t *)(base + b->ev[e].off) += k * b->ev[e].n;
	b->runs = 0;
	b->owner = NULL;
}

/* Every block a core holds, before its counts are read. */
static void core_fold(struct dpmu_ucore *c)
{
	for (uint32_t k = 0; k < c->nowned; k++)
		block_fold(c->owned[k]);
	c->nowned = 0;
}

/* Order b's entries for c's fold_need set: those it holds first. Rare: a
 * block is ordered again only when the core that runs it changes its
 * delivery list, or another core with another list runs it. */
static __attribute__((noinline)) void block_order(struct dpmu_ublock *b,
						  const struct dpmu_ucore *c)
{
	uint32_t k = 0;
	for (uint32_t e = 0; e < b->nev; e++)
		if (fold_has(c->fold_need, fold_index(b->ev[e].off))) {
			struct dpmu_ublock_ev t = b->ev[k];
			b->ev[k++] = b->ev[e];
			b->ev[e] = t;
		}
	b->nfold = k;
	memcpy(b->fold_key, c->fold_need, sizeof b->fold_key);
}

/* core_fold at a delivery, after the list is brought up to date: only the
 * entries the delivery reads (fold_need); the others it would drop. A
 * block run since the last delivery stays on the list with no runs (most
 * run again in the next batch: its next run then need not adopt it); one
 * that was not leaves it. */
static void core_fold_live(struct dpmu_ucore *c)
{
	char *base = (char *)c;
	uint32_t kept = 0;
	for (uint32_t j = 0; j < c->nowned; j++) {
		struct dpmu_ublock *b = c->owned[j];
		const uint64_t k = b->runs;
		if (!k) {
			b->owner = NULL;
			continue;
		}
		if (b->fold_key[0] != c->fold_need[0] || b->fold_key[1] != c->fold_need[1])
			block_order(b, c);
		const struct dpmu_ublock_ev *ev = b->ev;
		for (uint32_t e = 0, n = b->nfold; e < n; e++)
			*(uint64_t *)(base + ev[e].off) += k * ev[e].n;
		b->runs = 0;
		b->slot = kept;
		c->owned[kept++] = b;
	}
	c->nowned = kept;
}

/* Fold b's counts into its owner and take it off the owner's list. */
static void block_release(struct dpmu_ublock *b)
{
	struct dpmu_ucore *o = b->owner;
	uint32_t s = b->slot;
	block_fold(b);
	struct dpmu_ublock *last = o->owned[--o->nowned];
	o->owned[s] = last;
	last->slot = s;
}

/* The engine that held b is going: its counts go nowhere. */
static void block_detach(struct dpmu_ublock *b)
{
	b->owner = NULL;
	b->runs = 0;
}

/* b's executions on c are counted in b from now (b had none on c). */
static __attribute__((noinline)) void block_adopt(struct dpmu_ucore *c, struct dpmu_ublock *b)
{
	if (b->owner)
		block_release(b); /* run by another core since its delivery */
	if (c->nowned == DPMU_UCORE_OWNED)
		core_fold(c);
	b->owner = c;
	b->slot = c->nowned;
	c->owned[c->nowned++] = b;
}

void dpmu_ublock_destroy(struct dpmu_ublock *b)
{
	if (!b)
		return;
	/* Counts not yet delivered still belong to the core that ran it. */
	if (b->owner)
		block_release(b);
	free(b);
}

/* Input the per-instruction path reports: one by one (out of line, so
 * the common path stays small). */
static __attribute__((noinline)) void run_block_slow(struct dpmu_uarch *u, unsigned core,
						     struct dpmu_ublock *b, const uint64_t *addr)
{
	for (uint32_t i = 0; i < b->n; i++)
		if (b->insn[i].kind == DPMU_INSN_LOAD || b->insn[i].kind == DPMU_INSN_STORE)
			b->insn[i].addr = addr[i];
	dpmu_uarch_retire(u, core, b->insn, b->n);
}

/* A branch inside a block (not its tail) or a store-exclusive, with the
 * work clock past its issue; returns its front-end stall. Out of line:
 * rare, and the step loop keeps fewer registers live without it. */
static __attribute__((noinline)) uint64_t step_rare(struct dpmu_uarch *u, struct dpmu_ucore *c,
						    struct dpmu_insn *in, uint32_t op,
						    uint64_t addr, uint32_t cpi, struct dpmu_iregm m)
{
	if (op == STEP_BRANCH)
		return branch_op(c, in);
	if (in->kind == DPMU_INSN_LOAD || in->kind == DPMU_INSN_STORE)
		in->addr = addr;
	c->work_milli -= cpi; /* insn_dynamic issues it */
	c->dep_seq--;         /* and dispatches it */
	/* It waits for nothing (block_timing), and its results are ready at
	 * its issue (the block's end settles dep_pend): the timing sees
	 * nothing pending, as the block's own earlier writes of what was
	 * pending are not in dep_pend yet. */
	const dpmu_u128 pend = c->dep_pend;
	c->dep_pend = 0;
	insn_dynamic(u, c, in, m, cpi, false, true, false);
	c->dep_pend = pend;
	return 0;
}

/* A block with a delivery point inside: its instructions up to each
 * delivery point with their class events, so each delivery gets what it
 * would one by one (the class events of a part of the block are not in
 * the summary's totals); without dpmu_uarch_retire's checks and copies. */
/* The end of a sampled block (run_block_sampled): the overflow found in
 * it, then the call or return it ended with. wx_x is the counters' again
 * (the sample's tick re-arms it anyway). */
static __attribute__((noinline, cold)) void sampled_hooks(struct dpmu_uarch *u, struct dpmu_ucore *c,
						     struct dpmu_ublock *b, uint64_t next_pc)
{
	if (c->wx_hit) {
		c->wx_hit = false;
		c->wx_x = c->wx_armed;
		if (u->hooks.overflow)
			u->hooks.overflow(u->hooks_ctx, c->id, &b->insn[c->wx_j]);
	}
	if (b->tail_hook && u->hooks.branch)
		u->hooks.branch(u->hooks_ctx, c->id, &b->insn[b->n - 1], next_pc);
}

static __attribute__((noinline)) void run_block_split(struct dpmu_uarch *u, struct dpmu_ucore *c,
						      struct dpmu_ublock *b, const uint64_t *addr,
						      uint64_t next_pc)
{
	const uint32_t cpi = c->cpi_milli;
	const uint32_t n = b->n;
	for (uint32_t lo = 0; lo < n;) {
		uint32_t hi = n - lo <= c->batch_left ? n : lo + c->batch_left;
		for (uint32_t i = lo; i < hi; i++) {
			struct dpmu_insn *in = &b->insn[i];
			if (in->kind == DPMU_INSN_LOAD || in->kind == DPMU_INSN_STORE)
				in->addr = addr[i];
			/* insn_dynamic checks the fetch line of each */
			insn_dynamic(u, c, in, b->imask[i], cpi, true, in->flags & DPMU_IC_STREX,
				     false);
			class_events(c->pend, c->ipend, in);
			watch_insn(c, i);
		}
		retired(u, c, hi - lo);
		lo = hi;
	}
	if (c->sample_on && (c->wx_hit || b->tail_hook))
		sampled_hooks(u, c, b, next_pc);
}

/* The class events of a whole execution of b on c wait for the delivery
 * (block_fold); the batch bound is checked as retired() does. */
static inline void block_ran(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b)
{
	if (b->owner != c)
		block_adopt(c, b);
	b->runs++;
	/* retired() but INST_RETIRED, which is in the block's totals */
	c->batch_left -= b->n;
	if (!c->batch_left)
		dpmu_uarch_flush_core(u, c->id);
}

/* A block with no delivery point inside whose instructions wait for one
 * another or for what is pending (needs_walk): each instruction timed as
 * the per-instruction path does, the class events and the summed access
 * counts from the summary. */
static __attribute__((noinline)) void run_block_walk(struct dpmu_uarch *u, struct dpmu_ucore *c,
						     struct dpmu_ublock *b, const uint64_t *addr,
						     uint64_t next_pc)
{
	if (b->line_shift != c->l1i.set.shift)
		ublock_replan(b, c->l1i.set.shift);
	if (b->branch)
		dpmu_insn_branch_to(b->branch, next_pc);
	const uint32_t cpi = c->cpi_milli;
	const uint32_t n = b->n;
	/* Instruction 0, the steps and the tail as the per-instruction path
	 * times them; the others stay in their predecessor's fetch line and
	 * neither access memory nor branch: only their dependences. */
	const uint32_t *step = b->step;
	const uint32_t tail = b->tail ? n - 1 : n;
	for (uint32_t i = 0; i < n; i++) {
		struct dpmu_insn *in = &b->insn[i];
		const bool is_step = *step != STEP_END && (*step & STEP_INDEX) == i;
		if (!is_step && i != 0 && i != tail) {
			insn_plain(c, in, b->imask[i], cpi);
			watch_insn(c, i);
			continue;
		}
		step += is_step;
		bool strex = in->flags & DPMU_IC_STREX;
		if (in->kind == DPMU_INSN_LOAD || in->kind == DPMU_INSN_STORE)
			in->addr = addr[i];
		if ((in->kind == DPMU_INSN_LOAD || in->kind == DPMU_INSN_STORE) && !strex)
			insn_dynamic(u, c, in, b->imask[i], cpi, true, false, true);
		else
			insn_dynamic(u, c, in, b->imask[i], cpi, true, strex, false);
		watch_insn(c, i);
	}
	block_ran(u, c, b);
	if (c->sample_on && (c->wx_hit || b->tail_hook))
		sampled_hooks(u, c, b, next_pc);
}

/* Whether b reads a register of c that is still pending; those found
 * ready by now are settled here (p: the pending ones it reads). */
static __attribute__((noinline)) bool pending_after_all(struct dpmu_ucore *c, dpmu_u128 p)
{
	const uint64_t now = core_now(c, 0);
	for (; p; p &= p - 1) {
		uint64_t lo = (uint64_t)p;
		unsigned r = lo ? (unsigned)__builtin_ctzll(lo)
				: 64 + (unsigned)__builtin_ctzll((uint64_t)(p >> 64));
		if (c->tm.reg[r].ready > now)
			return true;
		c->dep_pend &= ~reg_bit((uint8_t)r);
	}
	return false;
}

static inline bool reads_pending(struct dpmu_ucore *c, const struct dpmu_ublock *b)
{
	/* the search out of line: without it the block path's dispatch
	 * keeps no frame, and most blocks read nothing pending */
	const dpmu_u128 p = c->dep_pend & b->reads;
	return p && pending_after_all(c, p);
}

/* How an execution of b on c is timed (run_block_steps): RUN_DEPS from
 * the dependence summary, RUN_CLEAN the same when no register the block
 * reads is pending (only its own loads' values are waited for). */
enum { RUN_STEPS, RUN_DEPS, RUN_CLEAN, RUN_WALK };

static inline int block_timing(struct dpmu_ucore *c, const struct dpmu_ublock *b)
{
	/* the reorder window may fill within the block (a load of the
	 * block may start it) */
	if (c->tm.window && b->n > c->tm.window)
		return RUN_WALK;
	if (c->tm.window && b->dsum) {
		/* settled first: the summary then looks only at what is
		 * still pending */
		const bool p = reads_pending(c, b);
		return p ? RUN_DEPS : b->walk ? RUN_CLEAN : RUN_STEPS;
	}
	/* in order, every instruction that waits is timed */
	return b->walk || reads_pending(c, b) ? RUN_WALK : RUN_STEPS;
}

/* The end of a RUN_DEPS execution whose written values are its loads'
 * alone (no register pending at entry that they name): the registers the
 * block wrote hold their values (lv: dep_latest's); those ready by now
 * are not pending (their time is past), nor is any other it wrote. */
static inline __attribute__((always_inline)) void
deps_end_loads(struct dpmu_ucore *c, const struct dpmu_ublock *b, const struct dpmu_ureg *lv)
{
	const uint64_t now = core_now(c, 0);
	dpmu_u128 p = c->dep_pend & ~(b->fixed | b->wmask);
	const struct dpmu_uwdep *w = b->wdep, *end = w + b->nwl;
	for (; w < end; w++) {
		const struct dpmu_ureg *v;
		if (w->one != DPMU_UWDEP_MANY) {
			v = &lv[w->one];
		} else {
			uint64_t l = w->d.load;
			v = &lv[__builtin_ctzll(l)];
			for (l &= l - 1; l; l &= l - 1)
				if (ureg_later(&lv[__builtin_ctzll(l)], v))
					v = &lv[__builtin_ctzll(l)];
		}
		if (v->ready <= now)
			continue;
		struct dpmu_ureg *r = &c->tm.reg[w->reg];
		r->ready = v->ready;
		r->mem = v->mem;
		r->tlb = v->tlb;
		p |= w->bit;
	}
	c->dep_pend = p;
}

/* The end of any other RUN_DEPS execution: a mispredicted tail resolves
 * at `resolve` when its sources are ready; the written registers' values
 * name the registers pending at entry (pend) too. Those few (most often
 * one) are copied first: the writes below change them, and each written
 * value then looks at them, not at every register it names. */
static __attribute__((noinline)) void deps_end(struct dpmu_ucore *c, const struct dpmu_ublock *b,
					       dpmu_u128 pend, const struct dpmu_ureg *lv,
					       bool mispredicted, uint64_t resolve)
{
	if (mispredicted)
		dep_resolve(c, dep_latest(c, pend, &b->idep[b->n - 1], lv), resolve);
	dpmu_u128 q = pend & b->win;
	if (!q) {
		deps_end_loads(c, b, lv);
		return;
	}
	struct dpmu_ureg ev[DPMU_REG_COUNT];
	dpmu_u128 eb[DPMU_REG_COUNT];
	unsigned m = 0;
	for (; q; q &= q - 1, m++) {
		uint64_t lo = (uint64_t)q;
		unsigned k = lo ? (unsigned)__builtin_ctzll(lo)
				: 64 + (unsigned)__builtin_ctzll((uint64_t)(q >> 64));
		eb[m] = reg_bit((uint8_t)k);
		ev[m] = c->tm.reg[k];
	}
	const uint64_t now = core_now(c, 0);
	dpmu_u128 p = c->dep_pend & ~(b->fixed | b->wmask);
	const struct dpmu_uwdep *w = b->wdep, *end = w + b->nw;
	for (; w < end; w++) {
		const struct dpmu_ureg *v = &c->tm.reg[0];
		for (unsigned j = 0; j < m; j++)
			if ((w->d.entry & eb[j]) && ureg_later(&ev[j], v))
				v = &ev[j];
		for (uint64_t l = w->d.load; l; l &= l - 1)
			if (ureg_later(&lv[__builtin_ctzll(l)], v))
				v = &lv[__builtin_ctzll(l)];
		if (v->ready <= now)
			continue;
		struct dpmu_ureg *r = &c->tm.reg[w->reg];
		r->ready = v->ready;
		r->mem = v->mem;
		r->tlb = v->tlb;
		p |= w->bit;
	}
	c->dep_pend = p;
}

/* The end of a RUN_DEPS execution of a block without loads whose tail
 * was predicted: each value it writes is ready when the latest of the
 * registers pending at its entry that it names is (q: those); most often
 * one register is, whose value those that name it then hold. */
static inline __attribute__((always_inline)) void deps_end_noload(struct dpmu_ucore *c,
								  const struct dpmu_ublock *b,
								  dpmu_u128 pend0, dpmu_u128 q)
{
	if (q & (q - 1)) {
		deps_end(c, b, pend0, NULL, false, 0); /* (no load: lv is not read) */
		return;
	}
	dpmu_u128 p = c->dep_pend & ~(b->fixed | b->wmask);
	if (q) {
		const uint64_t lo = (uint64_t)q;
		const struct dpmu_ureg ev = c->tm.reg[lo ? __builtin_ctzll(lo)
						       : 64 + __builtin_ctzll((uint64_t)(q >> 64))];
		if (ev.ready > core_now(c, 0))
			for (const struct dpmu_uwdep *w = b->wdep, *end = w + b->nw; w < end; w++)
				if (w->d.entry & q) {
					c->tm.reg[w->reg] = ev;
					p |= w->bit;
				}
	}
	c->dep_pend = p;
}

/* ---- the template of a clean execution
 *
 * A block with a dependence summary has no steps but loads, stores and new
 * fetch lines (block_deps). In a clean execution (RUN_CLEAN) that waits for
 * no reorder window, while every load hits the L1D and nothing stalls,
 * each load starts at its dispatch slot or when the values its address
 * needs are ready, all at fixed times after the block's start: its
 * template. block_steps then works out no value until something departs
 * from it (a miss, a stall: lean_fill gives the values so far), and the
 * end takes the written values' times from it (lean_end). */

/* b's template for c's core type (the same arithmetic as block_steps's
 * loads: dep_load_value of an L1D hit, no reorder-window entry when it
 * completes within rob_span of its dispatch). */
static __attribute__((noinline, cold)) void lean_template(struct dpmu_ublock *b,
							  const struct dpmu_ucore *c)
{
	const uint64_t cpi = c->cpi_milli, l1 = c->tm.l1_milli, span = c->tm.rob_span;
	uint64_t off[DPMU_UDEP_MAX];
	bool ok = true;
	for (uint32_t i = 0; i < b->n; i++) {
		if (b->insn[i].kind != DPMU_INSN_LOAD)
			continue;
		const uint64_t s = i * cpi;
		uint64_t start = s;
		for (uint64_t l = b->idep[i].load; l; l &= l - 1)
			if (off[__builtin_ctzll(l)] > start)
				start = off[__builtin_ctzll(l)];
		off[i] = start + l1;
		ok &= off[i] - s <= span && off[i] <= UINT32_MAX;
		b->lean_load[i] = (uint32_t)off[i];
	}
	for (uint32_t k = 0; k < b->nwl; k++) {
		uint64_t r = 0;
		for (uint64_t l = b->wdep[k].d.load; l; l &= l - 1)
			if (off[__builtin_ctzll(l)] > r)
				r = off[__builtin_ctzll(l)];
		b->lean_w[k] = (uint32_t)r;
	}
	b->lean_ok = ok;
	b->lean_type = c->type;
}

/* The values of b's loads before instruction `upto` of an execution that
 * started at t0 and kept to the template so far. */
static __attribute__((noinline)) void lean_fill(const struct dpmu_ublock *b, struct dpmu_ureg *lv,
						uint32_t upto, uint64_t t0)
{
	for (uint32_t i = 0; i < upto; i++)
		if (b->insn[i].kind == DPMU_INSN_LOAD)
			lv[i] = (struct dpmu_ureg){t0 + b->lean_load[i], 0, 0};
}

/* The end of an execution that kept to the template (deps_end_loads with
 * the values' times from it). */
static inline __attribute__((always_inline)) void lean_end(struct dpmu_ucore *c,
							   const struct dpmu_ublock *b, uint64_t t0)
{
	const uint64_t now = core_now(c, 0);
	dpmu_u128 p = c->dep_pend & ~(b->fixed | b->wmask);
	for (uint32_t k = 0; k < b->nwl; k++) {
		const uint64_t r = t0 + b->lean_w[k];
		if (r <= now)
			continue;
		const struct dpmu_uwdep *w = &b->wdep[k];
		c->tm.reg[w->reg] = (struct dpmu_ureg){r, 0, 0};
		p |= w->bit;
	}
	c->dep_pend = p;
}

/* The block path on core c, below dpmu_uarch_run_block_on: a block with
 * no delivery point inside (one with one goes to run_block_split). Its
 * own function, given the core and not its index: inside one function
 * with the index, gcc derives &u->cores[core] again wherever it needs the
 * pointer (it costs no register), in a way that depends on the size of
 * struct dpmu_ucore. */
static __attribute__((noinline)) void run_block_steps(struct dpmu_uarch *u,
						       struct dpmu_ucore *c,
						       struct dpmu_ublock *b,
						       const uint64_t *addr, uint64_t next_pc);
static __attribute__((noinline)) void run_block_sampled(struct dpmu_uarch *u,
							 struct dpmu_ucore *c,
							 struct dpmu_ublock *b,
							 const uint64_t *addr, uint64_t next_pc);

/* A block's conditional tail, its outcome from next_pc: branch_op of a
 * conditional branch (dpmu_insn_branch_to) without the copy's writes;
 * returns its front-end stall. & and not &&: both sides are cheap, and a
 * branch costs more. */
static inline __attribute__((always_inline)) uint64_t
cond_tail(struct dpmu_ucore *c, const struct dpmu_ublock *b, uint64_t next_pc)
{
	uint32_t t = (next_pc != 0) & (next_pc != b->fall);
	c->pend[DPMU_UEV_PC_WRITE_RETIRED] += t;
	if (!dpmu_bpred_cond(&c->bp, b->tail_pc, t))
		return 0;
	IEV(c, BR_COND_MIS_PRED);
	EV(c, BR_MIS_PRED);
	return c->type->pipeline.mispredict_penalty;
}

/* Most blocks are plain (no steps, a conditional tail in the first line)
 * and run where the last fetch left off, owned by the core that runs
 * them, with no delivery point at their end: then all the block path
 * does is the tail's prediction and the clock (fetch_line would return 0
 * for the block's one fetch: its line is the last one fetched). Each
 * instruction takes a dispatch slot, the tail's front stall (*fe) comes
 * last. False, having done nothing, for any other block. */
static inline __attribute__((always_inline)) bool
plain_run(struct dpmu_ucore *c, struct dpmu_ublock *b, uint64_t next_pc, uint64_t *fe)
{
	const uint32_t n = b->n;
	if (!(b->plain && n < c->batch_left && b->owner == c && b->line_shift == c->l1i.set.shift &&
	      b->head_blk == c->last_fetch_blk && !(c->dep_pend & b->reads) &&
	      c->dep_seq + n < c->rob_limit))
		return false;
	c->dep_pend &= ~b->computed;
	*fe = cond_tail(c, b, next_pc);
	if (*fe)
		front_stall(c, *fe);
	c->work_milli += (uint64_t)n * c->cpi_milli;
	c->dep_seq += n;
	b->runs++;
	c->batch_left -= n;
	return true;
}

/* dpmu_uarch_run_block on core c. Exported for the qemu backend's
 * decoder, which holds each vCPU's core handle and skips
 * dpmu_uarch_run_block's checks (4 % of its host instructions on LZ77).
 * A plain block runs here (plain_run), with no call, so with no frame;
 * the others go on to run_block_steps, a tail call. */
/* A block on a traced or sampling core (dpmu_uarch_run_block_on): the
 * trace unit first, then the sampled path or the usual one. Out of line:
 * with the call to the trace unit inline, dpmu_uarch_run_block_on keeps a
 * frame for the values it needs after the call, on every block. Not
 * `cold`: gcc would then take run_block_sampled, called only from here,
 * for cold too, and build record's whole block path for size. */
static __attribute__((noinline)) void run_block_observed(struct dpmu_uarch *u,
							struct dpmu_ucore *c,
							struct dpmu_ublock *b,
							const uint64_t *addr, uint64_t next_pc)
{
	if (c->trace_on)
		dpmu_uarch_trace_run(u, c, b->insn, b->n, true, next_pc);
	if (c->sample_on) {
		run_block_sampled(u, c, b, addr, next_pc);
		return;
	}
	uint64_t fe;
	if (plain_run(c, b, next_pc, &fe))
		return;
	run_block_steps(u, c, b, addr, next_pc);
}

void dpmu_uarch_run_block_on(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
			     const uint64_t *addr, uint64_t next_pc)
{
	/* a traced core's blocks go to its trace unit first; a sampling
	 * core's have their own path */
	if (__builtin_expect(c->sample_on | c->trace_on, 0)) {
		run_block_observed(u, c, b, addr, next_pc);
		return;
	}
	uint64_t fe;
	if (plain_run(c, b, next_pc, &fe))
		return;
	run_block_steps(u, c, b, addr, next_pc);
}

/* Out of order, the instructions of a block run by its steps up to index
 * `upto` that find the reorder window full (from *rob_at, the first that
 * may: rob_limit's): each waits as dep_issue has it, at its issue with
 * `fe` of fetch stall not yet counted, and the block's clock (*work0,
 * *work1) moves on by the wait. Then *rob_at is the next that may. */
static __attribute__((noinline)) void rob_steps(struct dpmu_ucore *c, uint64_t upto, uint64_t seq0,
						uint64_t *work0, uint64_t *work1, uint64_t *rob_at,
						uint64_t fe, struct wlook *look)
{
	const uint32_t cpi = c->cpi_milli;
	while (*rob_at <= upto) {
		const uint64_t k = *rob_at;
		c->dep_seq = seq0 + k + 1;
		c->work_milli = *work0 + k * cpi;
		const uint64_t w = rob_wait(c, core_now(c, fe));
		*work0 += w;
		*work1 += w;
		/* sampling: the wait is instruction k's */
		if (look)
			watch_at(c, look, (uint32_t)k, *work0 + 1000 * c->stall_cycles, cpi);
		/* past instruction k: rob_wait let every older entry go */
		*rob_at = c->rob_limit - seq0 - 1;
	}
}

/* An execution of b on c by its steps. Without `deps` no instruction
 * waits (block_timing): only the loads' values matter, which nothing in
 * the block reads, and their place in the reorder window. With `deps`
 * (out of order) the loads start when their sources are ready, a
 * mispredicted tail resolves when its are, and the registers the block
 * writes get their values, all from the dependence summary. */
static inline __attribute__((always_inline)) void
block_steps(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
	    const uint64_t *addr, uint64_t next_pc, const bool deps, const bool clean,
	    const bool watch, const bool lean, const bool noload)
{
	if (b->line_shift != c->l1i.set.shift)
		ublock_replan(b, c->l1i.set.shift);
	const uint32_t cpi = c->cpi_milli;
	uint64_t work0 = c->work_milli;
	const uint64_t seq0 = c->dep_seq;
	/* the first instruction that may find the reorder window full (out
	 * of order; past the block when none): rob_steps */
	uint64_t rob_at = c->rob_limit - seq0 - 1;
	/* deps: the registers pending at entry, the block's loads' values;
	 * clean: none the block reads is (block_timing), so no value the
	 * summary names is an entry register's (they are all read) */
	const dpmu_u128 pend0 = clean ? 0 : c->dep_pend;
	struct dpmu_ureg lv[DPMU_UDEP_MAX];
	/* instruction i issues at work1 + i * cpi: one add fewer a step */
	uint64_t work1 = work0 + cpi;
	/* locals: the stores into the core's counts below may alias b */
	const uint32_t *step = b->step;
	struct dpmu_insn *insn = b->insn;
	/* insn_dynamic by step kind: the same work in the same order (the
	 * fetch, the issue, the access or branch, then the stalls). A fetch
	 * stall is added after the instruction's access, which reads the
	 * clock; without an access (no first_op) it can be added at once, as
	 * nothing else between reads the stall cycles. */
	c->work_milli = work0;
	uint64_t fe = fetch_line(u, c, insn[0].pc);
	if (fe && !b->first_op) {
		front_stall(c, fe);
		fe = 0;
	}
	/* watch (sampling): the looks at the steps (run_block_sampled) */
	struct wlook look = {work0 + 1000 * c->stall_cycles, UINT32_MAX}, *const lk = watch ? &look : NULL;
	/* lean (a clean execution): keeping to b's template (tpl) from t0, the
	 * start, while no window wait, miss or stall departs from it */
	bool tpl = false;
	const uint64_t t0 = work0 + 1000 * c->stall_cycles;
	if (lean) {
		if (b->lean_type != c->type)
			lean_template(b, c);
		tpl = b->lean_ok && rob_at >= b->n && !fe;
	}
	for (uint32_t st; (st = *step) != STEP_END; step++) {
		uint32_t i = st & STEP_INDEX;
		struct dpmu_insn *in = &insn[i];
		/* a wait for the window before the fetch, or at the issue */
		if (rob_at < i)
			rob_steps(c, i - 1, seq0, &work0, &work1, &rob_at, 0, lk);
		if (st & STEP_FETCH) {
			c->work_milli = work0 + (uint64_t)i * cpi;
			fe = fetch_line(u, c, in->pc);
		}
		if (rob_at == i)
			rob_steps(c, i, seq0, &work0, &work1, &rob_at, fe, lk);
		/* the issue: stored only where read (the access's paths out
		 * of line, or the rare steps) */
		const uint64_t wi = work1 + (uint64_t)i * cpi;
		const uint32_t op = STEP_OP(st);
		if (!noload && op == STEP_LOAD) {
			uint32_t bw;
			in->addr = addr[i];
			uint32_t be = dpmu_mem_op(u, c, in, false, &bw, true, wi);
			if (lean && tpl) {
				if (!(be | fe))
					continue;
				tpl = false;
				lean_fill(b, lv, i, t0);
			}
			uint64_t s = wi - cpi + 1000 * (c->stall_cycles + fe);
			c->dep_seq = seq0 + i + 1;
			if (deps) {
				const struct dpmu_udep *d = &b->idep[i];
				if (!((clean ? 0 : d->entry & pend0) | d->load | be) &&
				    c->tm.l1_short) {
					/* an L1D hit that waited for nothing:
					 * dep_load_value's, and no reorder-window
					 * entry (rob_push) */
					lv[i].ready = s + c->tm.l1_milli;
					lv[i].mem = lv[i].tlb = 0;
				} else {
					const struct dpmu_ureg *a = dep_latest(c, pend0, d, lv);
					struct dpmu_ureg v = dep_load_value(c, a, s, be, c->tlb_stall);
					dep_load_retires(c, s, v);
					lv[i].ready = v.ready;
					lv[i].mem = v.mem;
					lv[i].tlb = v.tlb;
				}
			} else {
				dep_load(c, in, b->imask[i], &c->tm.reg[0], s, be, c->tlb_stall);
			}
		} else if (op == STEP_STORE) {
			uint32_t bw = 0;
			in->addr = addr[i];
			dpmu_mem_op(u, c, in, true, &bw, true, wi);
			if (bw) {
				if (lean && tpl) {
					tpl = false;
					lean_fill(b, lv, i, t0);
				}
				store_stall(c, bw);
			}
		} else if (op != STEP_NONE) {
			/* A last branch that is not the tail reads its outcome
			 * from the block's copy, as the per-instruction path
			 * does: written here, where it is read, so that the
			 * blocks without one test nothing. */
			if (in == b->copy_branch)
				dpmu_insn_branch_to(in, next_pc);
			c->work_milli = wi;
			c->dep_seq = seq0 + i + 1;
			fe += step_rare(u, c, in, op, addr[i], cpi, b->imask[i]);
		}
		if (fe) {
			if (lean && tpl) {
				tpl = false;
				lean_fill(b, lv, i, t0);
			}
			front_stall(c, fe);
			fe = 0;
		}
		if (watch)
			watch_at(c, lk, i, work0 + 1000 * c->stall_cycles, cpi);
	}
	/* Read again after the steps: fewer values live across them */
	const uint32_t n = b->n;
	bool mispredicted = false;
	uint64_t resolve = 0;
	if (rob_at < n - 1)
		rob_steps(c, n - 2, seq0, &work0, &work1, &rob_at, 0, lk);
	if (b->tail) {
		/* The branch reads no clock but its fetch may. */
		if (b->tail & TAIL_FETCH) {
			c->work_milli = work0 + (uint64_t)(n - 1) * cpi;
			fe = fetch_line(u, c, b->tail_pc);
		}
		if (rob_at == n - 1)
			rob_steps(c, n - 1, seq0, &work0, &work1, &rob_at, fe, lk);
		uint64_t mp = c->pend[DPMU_UEV_BR_MIS_PRED];
		/* deps: it resolves a dispatch slot after its issue */
		if (deps)
			resolve = work0 + (uint64_t)n * cpi + 1000 * (c->stall_cycles + fe);
		if (b->tail & TAIL_COND) {
			fe += cond_tail(c, b, next_pc);
		} else {
			struct dpmu_insn *in = &b->insn[n - 1];
			dpmu_insn_branch_to(in, next_pc);
			fe += branch_op(c, in);
		}
		mispredicted = deps && c->pend[DPMU_UEV_BR_MIS_PRED] != mp;
		if (fe)
			front_stall(c, fe);
	} else if (rob_at == n - 1) {
		rob_steps(c, n - 1, seq0, &work0, &work1, &rob_at, 0, lk);
	}
	c->work_milli = work0 + (uint64_t)n * cpi;
	c->dep_seq = seq0 + n;
	if (lean && tpl && !mispredicted) {
		lean_end(c, b, t0);
	} else if (deps) {
		if (lean && tpl)
			lean_fill(b, lv, n, t0);
		if (noload && !mispredicted)
			deps_end_noload(c, b, pend0, pend0 & b->win);
		else if (mispredicted || (!clean && (pend0 & b->win)))
			/* (no load: the summary names no load's value) */
			deps_end(c, b, pend0, noload ? NULL : lv, mispredicted, resolve);
		else
			deps_end_loads(c, b, lv);
	} else
		c->dep_pend &= ~b->computed;
	/* the last instruction ends on the block's clock */
	if (watch)
		watch_at(c, lk, n - 1, core_clk(c) - (uint64_t)n * cpi, cpi);
	block_ran(u, c, b);
	if (watch && (c->wx_hit || b->tail_hook))
		sampled_hooks(u, c, b, next_pc);
}

static __attribute__((noinline)) void run_block_deps(struct dpmu_uarch *u, struct dpmu_ucore *c,
						      struct dpmu_ublock *b, const uint64_t *addr,
						      uint64_t next_pc)
{
	block_steps(u, c, b, addr, next_pc, true, false, false, false, false);
}

static __attribute__((noinline)) void run_block_clean(struct dpmu_uarch *u, struct dpmu_ucore *c,
						       struct dpmu_ublock *b, const uint64_t *addr,
						       uint64_t next_pc)
{
	block_steps(u, c, b, addr, next_pc, true, true, false, true, false);
}

/* RUN_DEPS of a block without loads (b->noload) that waits for no
 * reorder window (the plain path's test): out of order nothing in it
 * waits (only loads and a mispredicted tail do) */
static __attribute__((noinline)) void run_block_noload(struct dpmu_uarch *u,
						       struct dpmu_ucore *c,
						       struct dpmu_ublock *b,
						       const uint64_t *addr, uint64_t next_pc)
{
	block_steps(u, c, b, addr, next_pc, true, false, false, false, true);
}

static __attribute__((noinline)) void run_block_nodeps(struct dpmu_uarch *u,
							struct dpmu_ucore *c,
							struct dpmu_ublock *b,
							const uint64_t *addr, uint64_t next_pc)
{
	block_steps(u, c, b, addr, next_pc, false, false, false, false, false);
}

static __attribute__((noinline)) void run_block_deps_w(struct dpmu_uarch *u, struct dpmu_ucore *c,
							struct dpmu_ublock *b, const uint64_t *addr,
							uint64_t next_pc)
{
	block_steps(u, c, b, addr, next_pc, true, false, true, false, false);
}

static __attribute__((noinline)) void run_block_clean_w(struct dpmu_uarch *u,
							 struct dpmu_ucore *c,
							 struct dpmu_ublock *b,
							 const uint64_t *addr, uint64_t next_pc)
{
	block_steps(u, c, b, addr, next_pc, true, true, true, false, false);
}

static __attribute__((noinline)) void run_block_nodeps_w(struct dpmu_uarch *u,
							  struct dpmu_ucore *c,
							  struct dpmu_ublock *b,
							  const uint64_t *addr, uint64_t next_pc)
{
	block_steps(u, c, b, addr, next_pc, false, false, true, false, false);
}

/* The block path below dpmu_uarch_run_block_on: a delivery point inside
 * (run_block_split), else the timing block_timing chooses; `watch`, the
 * variants that look for a sampled overflow (run_block_sampled). Each
 * path its own function: the callers keep no frame, their calls are
 * jumps. */
static inline __attribute__((always_inline)) void
block_dispatch(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
	       const uint64_t *addr, uint64_t next_pc, const bool watch)
{
	if (b->n > c->batch_left) {
		if (b->branch)
			dpmu_insn_branch_to(b->branch, next_pc);
		run_block_split(u, c, b, addr, next_pc);
		return;
	}
	switch (block_timing(c, b)) {
	case RUN_WALK:
		run_block_walk(u, c, b, addr, next_pc);
		return;
	case RUN_DEPS:
		if (watch)
			run_block_deps_w(u, c, b, addr, next_pc);
		else if (b->noload && c->dep_seq + b->n < c->rob_limit)
			run_block_noload(u, c, b, addr, next_pc);
		else
			run_block_deps(u, c, b, addr, next_pc);
		return;
	case RUN_CLEAN:
		if (watch)
			run_block_clean_w(u, c, b, addr, next_pc);
		else
			run_block_clean(u, c, b, addr, next_pc);
		return;
	default:
		if (watch)
			run_block_nodeps_w(u, c, b, addr, next_pc);
		else
			run_block_nodeps(u, c, b, addr, next_pc);
	}
}

/* Every block on a core that samples on the block path (dpmu_uarch_watch_arm):
 * run as the others are, with the instruction whose clock reaches the
 * watched overflow found on the way, then the hooks. */
static __attribute__((noinline)) void run_block_sampled(struct dpmu_uarch *u,
							 struct dpmu_ucore *c,
							 struct dpmu_ublock *b,
							 const uint64_t *addr, uint64_t next_pc)
{
	uint64_t fe = 0;
	if (plain_run(c, b, next_pc, &fe)) {
		/* instruction i < n - 1 ends at clk0 + i x cpi, the last at the
		 * end (a plain block's tail is conditional: no tail hook) */
		uint64_t end = core_clk(c);
		if (__builtin_expect(end >= c->wx_x, 0)) {
			const uint32_t n = b->n, cpi = c->cpi_milli;
			uint64_t clk0 = end - 1000 * fe - (uint64_t)(n - 1) * cpi, x = c->wx_x;
			uint64_t j = x > clk0 ? (x - clk0 + cpi - 1) / cpi : 0;
			c->wx_hit = true;
			c->wx_j = j < n - 1 ? (uint32_t)j : n - 1;
			sampled_hooks(u, c, b, next_pc);
		}
		return;
	}
	/* each path runs the hooks at its end (sampled_hooks) */
	block_dispatch(u, c, b, addr, next_pc, true);
}

static __attribute__((noinline)) void run_block_steps(struct dpmu_uarch *u,
						       struct dpmu_ucore *c,
						       struct dpmu_ublock *b,
						       const uint64_t *addr, uint64_t next_pc)
{
	block_dispatch(u, c, b, addr, next_pc, false);
}

void dpmu_uarch_run_block(struct dpmu_uarch *u, unsigned core, struct dpmu_ublock *b,
			  const uint64_t *addr, uint64_t next_pc)
{
	if (!u)
		return;
	if (!b || !addr) {
		dpmu_err_set(&u->err, DPMU_EINVAL, "run of a block on cpu%u: no %s", core,
			     b ? "addresses" : "block summary");
		return;
	}
	if (core >= u->ncores) {
		/* the paths that read the branch's outcome from the block */
		if (b->branch)
			dpmu_insn_branch_to(b->branch, next_pc);
		run_block_slow(u, core, b, addr);
		return;
	}
	dpmu_uarch_run_block_on(u, &u->cores[core], b, addr, next_pc);
}

struct dpmu_ucore *dpmu_uarch_core(struct dpmu_uarch *u, unsigned core)
{
	return u && core < u->ncores ? &u->cores[core] : NULL;
}

uint64_t dpmu_uarch_core_cycles(const struct dpmu_uarch *u, unsigned core)
{
	return u && core < u->ncores ? dpmu_ucore_cycles(&u->cores[core]) : 0;
}

void dpmu_uarch_core_idle(struct dpmu_uarch *u, unsigned core, uint64_t ns)
{
	if (!u || core >= u->ncores || !ns)
		return;
	struct dpmu_ucore *c = &u->cores[core];
	c->idle_ns += ns;
	/* the time worked out for the clock as it stands is stale */
	c->ns_key = c->dsu_seen = DPMU_UCORE_KEY_STALE;
}

uint64_t dpmu_uarch_time_ns(struct dpmu_uarch *u)
{
	uint64_t t = 0;
	for (unsigned i = 0; u && i < u->ncores; i++) {
		struct dpmu_ucore *c = &u->cores[i];
		/* Most cores have not moved since the last query: keyed as
		 * core_dsu_cycles is, on the clock's two parts' sum. */
		uint64_t key = c->work_milli + c->stall_cycles;
		if (key != c->ns_key) {
			c->ns_key = key;
			c->ns = muldiv(dpmu_ucore_cycles(c), 1000000000ull, c->type->freq_hz) +
				c->idle_ns;
		}
		if (c->ns > t)
			t = c->ns;
	}
	return t;
}
