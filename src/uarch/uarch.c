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

#include "uarch/retire.h"
#include "uarch/ublock.h"

/* BUS_CYCLES (Arm ARM D17): the core's bus clock, delivered with time. */
#define EV_BUS_CYCLES 0x1Du

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
	c->wx_x = UINT64_MAX; /* no sampling watch */
	c->wi_floor = INT64_MIN;
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
	if ((rc = timing_init(c, who, err)) != 0)
		return rc;
	/* the type and the L1I line a clean template is for (ublock.h
	 * lean_key); in order none is (UINT64_MAX: no block's key) */
	c->lean_key = c->tm.window ? (uint64_t)(uintptr_t)t | (uint64_t)c->l1i.set.shift << 56
				   : UINT64_MAX;
	return 0;
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
			dpmu_ublock_detach(u->cores[i].owned[k]);
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
	for (unsigned i = 0; i < u->ncores; i++) {
		struct dpmu_ucore *c = &u->cores[i];
		c->batch_left = insns;
		/* (flushed: the counter needs batch - wi_floor more) */
		if (c->wi_floor != INT64_MIN)
			c->wi_floor += (int64_t)insns - (int64_t)u->batch;
	}
	u->batch = insns;
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

/* The count of watch w not yet delivered. INST_RETIRED's: every
 * instruction retired since the last delivery (a block's are in its
 * totals, not in pend[], until the delivery folds them). */
static uint64_t watch_pending(const struct dpmu_uarch *u, const struct dpmu_ucore *c,
			      const struct dpmu_uwatch *w)
{
	if (w->clock)
		return dpmu_ucore_cycles(c) - c->cycles_delivered;
	if (w->insns)
		return u->batch - c->batch_left;
	uint64_t n = 0;
	for (unsigned k = 0; k < w->nlive; k++) {
		const struct dpmu_live *l = &c->live[w->live[k]];
		n += (*l->p + *l->a + *l->b) & l->to_model;
	}
	return n;
}

/* Whether a watched counter would overflow with what is pending. */
static bool watch_hit(const struct dpmu_uarch *u, const struct dpmu_ucore *c)
{
	for (unsigned i = 0; i < c->nwatch; i++)
		if (watch_pending(u, c, &c->watch[i]) >= c->watch[i].left)
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
		/* one per instruction retired, when the model counts it */
		w->insns = ev[i] == DPMU_EV_INST_RETIRED && w->nlive == 1 &&
			   c->live[w->live[0]].to_model;
		/* an event the engine never produces cannot overflow a counter */
		if (w->clock || w->nlive)
			c->nwatch++;
	}
	c->watch_stale = false;
}

static void deliver_core(struct dpmu_uarch *u, struct dpmu_ucore *c)
{
	/* The list first: the blocks' class events are folded for it. */
	if (!c->live_ok || c->live_gen != dpmu_model_core_live_gen(u->model, c->id))
		core_lists(u, c);
	/* The class events of the blocks run since the last delivery. */
	if (c->nowned)
		dpmu_ucore_fold_live(c);
	if (c->nwatch) {
		c->watch_fired |= watch_hit(u, c);
		c->watch_stale = true; /* the counters move now */
	}
	/* (after the watch: its INST_RETIRED is the batch so far) */
	if (c->wi_floor != INT64_MIN)
		c->wi_floor += u->batch - c->batch_left;
	c->batch_left = u->batch;
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
		if (c->watch_fired || watch_hit(u, c)) {
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
	/* the clock's watches, or INST_RETIRED's: a block then has one
	 * overflow at most, found from one of the two */
	uint64_t left = UINT64_MAX, ileft = UINT64_MAX;
	bool clock = false, insns = false;
	for (unsigned i = 0; i < c->nwatch; i++) {
		const struct dpmu_uwatch *w = &c->watch[i];
		clock |= w->clock;
		insns |= w->insns;
		if ((!w->clock && !w->insns) || (clock && insns)) {
			c->sample_on = false;
			c->wx_x = UINT64_MAX;
			c->wi_floor = INT64_MIN;
			return false;
		}
		uint64_t *l = w->clock ? &left : &ileft;
		if (w->left < *l)
			*l = w->left;
	}
	/* the clock's cycles reach cycles_delivered + left exactly when
	 * work_milli + 1000 x stall_cycles reaches 1000 times that */
	uint64_t at = c->cycles_delivered + left;
	c->wx_x = left == UINT64_MAX || at < left || at > UINT64_MAX / 1000 ? UINT64_MAX : at * 1000;
	c->wx_armed = c->wx_x;
	/* INST_RETIRED: ileft more from the last delivery on */
	c->wi_floor = ileft > (uint64_t)INT64_MAX ? INT64_MIN : (int64_t)u->batch - (int64_t)ileft;
	c->wx_hit = false;
	c->sample_on = true;
	return true;
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
