/*
 * The memory hierarchy of a DynamIQ cluster: per core L1I, L1D and L2
 * (write-back, write-allocate; the L2 inclusive of both L1s), per cluster
 * the DSU's L3 (filled on a miss, not inclusive: no back-invalidation) and
 * its snoop filter, MESI coherence between the cores' L2s, the DSU's master
 * bus and DRAM with a latency and a bandwidth. docs/events.md describes
 * every modelling choice made here.
 *
 * Line states: L2 holds the MESI state of a line for the core; an L1D line is
 * S (shared, clean), E (clean, writable: the L2 owns it) or M (dirty); L1I,
 * L3, TLB and snoop-filter entries are just valid (the L3 uses M for dirty).
 */
#include <string.h>

#include "uarch/uarch_internal.h"

#define EV(c, name) ((c)->pend[DPMU_UEV_##name]++)
#define EVN(c, name, n) ((c)->pend[DPMU_UEV_##name] += (n))
#define CEV(cl, name, n) ((cl)->pend[DPMU_CEV_##name] += (n))
#define IEV(c, name, n) ((c)->ipend[DPMU_IEV_##name] += (n))

/* What an L2 request asks of the DSU. */
enum req {
	REQ_READ,     /* load refill: shared or exclusive */
	REQ_IFETCH,   /* instruction refill: shared */
	REQ_RFO,      /* store refill: read for ownership */
	REQ_CLAIM,    /* full-line store: ownership without data */
	REQ_PREFETCH, /* prefetch: as READ, never stalls */
};

static inline bool req_write(enum req r)
{
	return r == REQ_RFO || r == REQ_CLAIM;
}

static inline struct dpmu_ucluster *cluster_of(struct dpmu_uarch *u, const struct dpmu_ucore *c)
{
	return &u->clusters[c->cluster];
}

uint64_t dpmu_uarch_core_ps(const struct dpmu_ucore *c)
{
	__extension__ typedef unsigned __int128 u128;
	uint64_t f = c->type->freq_hz ? c->type->freq_hz : 1;
	return (uint64_t)((u128)dpmu_ucore_cycles(c) * 1000000000000ull / f) + c->idle_ns * 1000;
}

/* ---- DRAM bandwidth ------------------------------------------------------- */

/* Bytes moved per 1 us epoch are limited to the profile's bandwidth; a
 * transfer that finds its epoch full waits for the next epoch with room.
 * Epochs (not a single busy-until time) keep cores whose simulated clocks
 * differ from delaying each other unfairly. Returns the wait in ps. */
static uint64_t dram_transfer(struct dpmu_uarch *u, uint64_t now_ps, uint64_t bytes)
{
	if (!u->dram_epoch_cap)
		return 0;
	uint64_t e0 = now_ps / DPMU_DRAM_EPOCH_PS;
	for (uint64_t e = e0; e < e0 + DPMU_DRAM_EPOCHS; e++) {
		unsigned s = (unsigned)(e % DPMU_DRAM_EPOCHS);
		if (u->dram_epoch[s] > e)
			return 0; /* older than the window: not constrained */
		if (u->dram_epoch[s] < e) {
			u->dram_epoch[s] = e;
			u->dram_bytes[s] = 0;
		}
		if (u->dram_bytes[s] + bytes <= u->dram_epoch_cap || u->dram_bytes[s] == 0) {
			u->dram_bytes[s] += bytes;
			return e == e0 ? 0 : e * DPMU_DRAM_EPOCH_PS - now_ps;
		}
	}
	return (uint64_t)DPMU_DRAM_EPOCHS * DPMU_DRAM_EPOCH_PS;
}

static uint32_t ps_to_cycles(const struct dpmu_ucore *c, uint64_t ps)
{
	__extension__ typedef unsigned __int128 u128;
	uint64_t cyc = (uint64_t)((u128)ps * c->type->freq_hz / 1000000000000ull);
	return cyc > UINT32_MAX ? UINT32_MAX : (uint32_t)cyc;
}

/* ---- the L3 and memory ---------------------------------------------------- */

/* The cluster's arrays (the L3, the snoop filter) are far larger than a
 * host's L1 and L2 caches, and an L2 miss looks a line up in each: through
 * the hint, a found line costs two dependent host misses (the hint word,
 * then the tag it names) and a line not there (most snoop-filter lookups
 * of an L2 miss) those two before the set search's own. The set search
 * alone needs only the set's fingerprints first, whose address is known
 * from the block, so it can be asked for early. Their hints are
 * neither read nor kept (nothing outside mem.c looks these arrays up, and
 * mem.c does it only through these two functions): one slot each
 * (dpmu_uset_hint_one, at the engine's creation). A block is in at most
 * one way of a set (a line is installed only where a lookup found it
 * absent), so the search finds the slot the hint would. */
static inline int cl_find(const struct dpmu_uset *s, uint64_t blk)
{
	return dpmu_uset_search16(s, blk);
}

/* dpmu_uset_touch for a cluster array: the replacement state only. */
static inline void cl_touch(struct dpmu_uset *s, int slot)
{
	dpmu_uset_reuse(s, (uint32_t)slot);
}

/* Write a dirty L3 victim back to memory over the DSU master bus. */
static void l3_writeback_victim(struct dpmu_uarch *u, struct dpmu_ucore *c,
				struct dpmu_ucluster *cl)
{
	CEV(cl, L3_WB, 1);
	CEV(cl, MEM_WRITE, 1);
	CEV(cl, BUS_ACCESS, c->beats);
	CEV(cl, BUS_ACCESS_WR, c->beats);
	dram_transfer(u, dpmu_uarch_core_ps(c), (uint64_t)1 << cl->l3.set.shift);
}

/* Put a line into the L3 (dirty or clean), evicting as needed. */
static int l3_install(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ucluster *cl,
		      uint64_t blk, bool dirty)
{
	struct dpmu_uset *s = &cl->l3.set;
	int v = dpmu_uset_victim(s, blk);
	if (s->state[v])
		CEV(cl, L3_EVICT, 1);
	if (s->state[v] == DPMU_LINE_M)
		l3_writeback_victim(u, c, cl);
	dpmu_uset_put(s, v, blk, dirty ? DPMU_LINE_M : DPMU_LINE_S);
	cl_touch(s, v);
	return v;
}

/* Dirty data written into the L3 (an L2 victim or a snooped M line). */
static void l3_write(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ucluster *cl,
		     uint64_t blk, bool count)
{
	int s3 = cl_find(&cl->l3.set, blk);
	if (count) {
		EV(c, L3D_CACHE);
		CEV(cl, L3_ACCESS, 1);
		CEV(cl, L3_ACCESS_WR, 1);
	}
	if (s3 >= 0) {
		if (count)
			CEV(cl, L3_HIT, 1);
		cl->l3.set.state[s3] = DPMU_LINE_M;
		cl_touch(&cl->l3.set, s3);
		return;
	}
	if (count) {
		CEV(cl, L3_MISS, 1);
		CEV(cl, L3_MISS_WR, 1);
		/* A whole line arrives: allocation without refill. */
		EV(c, L3D_CACHE_ALLOCATE);
		CEV(cl, L3_ALLOCATE, 1);
	}
	l3_install(u, c, cl, blk, true);
}

/* Fetch a line from memory into the L3; returns the latency beyond the L3. */
static uint32_t l3_refill(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ucluster *cl,
			  uint64_t blk, bool read, bool count_core)
{
	if (count_core) {
		EV(c, L3D_CACHE_REFILL);
		if (read) {
			EV(c, L3D_CACHE_REFILL_RD);
		}
	}
	CEV(cl, L3_REFILL, 1);
	CEV(cl, MEM_READ, 1);
	if (read)
		CEV(cl, L3_REFILL_RD, 1);
	else
		CEV(cl, L3_REFILL_WR, 1);
	CEV(cl, BUS_ACCESS, c->beats);
	CEV(cl, BUS_ACCESS_RD, c->beats);
	uint64_t wait = dram_transfer(u, dpmu_uarch_core_ps(c), (uint64_t)1 << cl->l3.set.shift);
	l3_install(u, c, cl, blk, false);
	uint32_t w = ps_to_cycles(c, wait);
	c->dram_wait += w;
	return c->mem_latency + w;
}

/* ---- coherence: what a snoop does to a peer core -------------------------- */

static void l1_drop(struct dpmu_ucache *l1, uint64_t blk)
{
	int s = dpmu_uset_find(&l1->set, blk);
	if (s >= 0)
		dpmu_uset_drop(&l1->set, s);
}

/* A snoop finds the peer's L1D line s1: dirty data is cleaned into its L2.
 * Returns whether it was dirty. */
static bool peer_l1d_clean(struct dpmu_ucore *p, int s1)
{
	if (p->l1d.set.state[s1] != DPMU_LINE_M)
		return false;
	EV(p, L1D_CACHE_WB);
	EV(p, L1D_CACHE_WB_CLEAN);
	return true;
}

/* The peer's dirty line leaves its L2 for the DSU (coherency write-back). */
static void peer_l2_writeback(struct dpmu_ucore *p)
{
	EV(p, L2D_CACHE_WB);
	EV(p, L2D_CACHE_WB_CLEAN);
	EVN(p, BUS_ACCESS_WR, p->beats);
}

/* Snoop that invalidates the peer's copy (another core wants to write, or
 * the snoop filter evicts the line). Returns true when the peer's copy was
 * dirty: its data is written back (coherency write-back). */
static bool peer_invalidate(struct dpmu_ucore *p, uint64_t blk)
{
	int s2 = dpmu_uset_find(&p->l2.set, blk);
	bool dirty = false;
	int s1 = dpmu_uset_find(&p->l1d.set, blk);
	if (s1 >= 0) {
		dirty = peer_l1d_clean(p, s1);
		dpmu_uset_drop(&p->l1d.set, s1);
		EV(p, L1D_CACHE_INVAL);
	}
	l1_drop(&p->l1i, blk);
	if (s2 < 0)
		return dirty;
	if (p->l2.set.state[s2] == DPMU_LINE_M)
		dirty = true;
	dpmu_uset_drop(&p->l2.set, s2);
	EV(p, L2D_CACHE_INVAL);
	if (dirty)
		peer_l2_writeback(p);
	return dirty;
}

/* Snoop for a read: the peer keeps a shared copy; returns true when it
 * was dirty (MESI: the data is written back to the L3 on the way). */
static bool peer_share(struct dpmu_ucore *p, uint64_t blk)
{
	bool dirty = false;
	int s1 = dpmu_uset_find(&p->l1d.set, blk);
	if (s1 >= 0) {
		dirty = peer_l1d_clean(p, s1);
		p->l1d.set.state[s1] = DPMU_LINE_S;
	}
	int s2 = dpmu_uset_find(&p->l2.set, blk);
	if (s2 < 0)
		return dirty;
	if (p->l2.set.state[s2] == DPMU_LINE_M)
		dirty = true;
	p->l2.set.state[s2] = DPMU_LINE_S;
	if (dirty)
		peer_l2_writeback(p);
	return dirty;
}

static uint8_t l2_state(const struct dpmu_ucore *p, uint64_t blk)
{
	int s = dpmu_uset_find(&p->l2.set, blk);
	return s >= 0 ? p->l2.set.state[s] : DPMU_LINE_I;
}

/* Cores of the cluster (bit = core in cluster) other than `me` that hold
 * the line: the snoop filter says, or, without one, every peer is asked.
 * *asked is how many snoop requests finding them costs; *sf_slot is the
 * line's snoop-filter slot or -1 (what sf_add would search for again). */
static uint32_t holders(struct dpmu_uarch *u, struct dpmu_ucluster *cl, unsigned me,
			uint64_t blk, unsigned *asked, int *sf_slot)
{
	uint32_t m = 0;
	*sf_slot = -1;
	if (cl->sf.sets) {
		int s = cl_find(&cl->sf, blk);
		*sf_slot = s;
		m = s >= 0 ? cl->sf_mask[s] & ~(1u << me) : 0;
		CEV(cl, SF_ACCESS, 1);
		if (m)
			CEV(cl, SF_HIT, 1);
		*asked = 0; /* the filter answers; snoops go only to holders */
		return m;
	}
	for (unsigned k = 0; k < cl->ncores; k++)
		if (k != me && l2_state(&u->cores[cl->first_core + k], blk) != DPMU_LINE_I)
			m |= 1u << k;
	*asked = cl->ncores - 1; /* broadcast */
	return m;
}

static void sf_remove(struct dpmu_ucluster *cl, unsigned me, uint64_t blk)
{
	if (!cl->sf.sets)
		return;
	int s = cl_find(&cl->sf, blk);
	if (s < 0)
		return;
	cl->sf_mask[s] &= ~(1u << me);
	if (!cl->sf_mask[s])
		dpmu_uset_drop(&cl->sf, s);
}

/* Record that core `me` now holds the line; a full filter set evicts an
 * entry, which back-invalidates that line in every core holding it. `e` is
 * the line's slot as holders found it (-1: not there): nothing between the
 * two changes the filter, so it is not searched again. */
static void sf_add(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ucluster *cl,
		   unsigned me, uint64_t blk, int e)
{
	if (!cl->sf.sets)
		return;
	struct dpmu_uset *s = &cl->sf;
	if (e < 0) {
		e = dpmu_uset_victim(s, blk);
		if (s->state[e]) {
			uint64_t old = s->tag[e];
			uint32_t m = cl->sf_mask[e];
			CEV(cl, SF_EVICT, 1);
			for (unsigned k = 0; m; k++, m >>= 1) {
				if (!(m & 1))
					continue;
				CEV(cl, SNOOP_REQ, 1);
				CEV(cl, SNOOP_INVAL, 1);
				if (peer_invalidate(&u->cores[cl->first_core + k], old))
					l3_write(u, c, cl, old, false);
			}
		}
		dpmu_uset_put(s, e, blk, 1);
		cl->sf_mask[e] = 0;
	}
	cl->sf_mask[e] |= 1u << me;
	cl_touch(s, e);
}

/* ---- the DSU: what an L2 miss or upgrade does ------------------------------ */

/* Invalidate every other holder (a write needs the only copy). Returns true
 * when one had it dirty (its data is the newest). */
static bool claim(struct dpmu_uarch *u, struct dpmu_ucluster *cl, unsigned me, uint64_t blk,
		  uint32_t *had, int *sf_slot)
{
	unsigned asked;
	uint32_t m = holders(u, cl, me, blk, &asked, sf_slot);
	bool dirty = false;
	*had = m;
	CEV(cl, SNOOP_REQ, asked ? asked : (uint64_t)__builtin_popcount(m));
	CEV(cl, SNOOP_INVAL, (uint64_t)__builtin_popcount(m));
	if (cl->sf.sets && !m)
		CEV(cl, SF_NO_SNOOP, 1);
	for (unsigned k = 0; m; k++, m >>= 1)
		if ((m & 1) && peer_invalidate(&u->cores[cl->first_core + k], blk))
			dirty = true;
	return dirty;
}

/* An L2 miss (or upgrade) of core c for line blk. Returns the load-to-use
 * latency in core cycles of where the data came from (the profile's
 * latencies are load-to-use: the L3's, a peer's snoop, the L3's plus the
 * bus and DRAM beyond it); *state is the requester's new L2 state. */
static uint32_t dsu_request(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t blk,
			    enum req r, uint8_t *state)
{
	struct dpmu_ucluster *cl = cluster_of(u, c);
	unsigned me = c->id - cl->first_core;
	bool rd = !req_write(r);
	uint32_t lat;
	int sf_slot;

	if (r == REQ_CLAIM) {
		/* Ownership without data: no L3 data access. */
		uint32_t had;
		claim(u, cl, me, blk, &had, &sf_slot);
		*state = DPMU_LINE_M;
		sf_add(u, c, cl, me, blk, sf_slot);
		return had ? cl->snoop_latency : 0;
	}

	/* The request looks up the L3 (and the snoop filter, in parallel). */
	EV(c, L3D_CACHE);
	CEV(cl, L3_ACCESS, 1);
	if (rd) {
		EV(c, L3D_CACHE_RD);
		CEV(cl, L3_ACCESS_RD, 1);
	} else {
		CEV(cl, L3_ACCESS_WR, 1);
	}
	int s3 = cl_find(&cl->l3.set, blk);
	bool from_peer = false;
	if (s3 >= 0) {
		CEV(cl, L3_HIT, 1);
	} else {
		CEV(cl, L3_MISS, 1);
		if (rd)
			CEV(cl, L3_MISS_RD, 1);
		else
			CEV(cl, L3_MISS_WR, 1);
	}

	if (r == REQ_RFO) {
		uint32_t had;
		bool dirty = claim(u, cl, me, blk, &had, &sf_slot);
		/* The newest data is a dirty peer's; a clean peer can forward
		 * its copy when the L3 misses. */
		from_peer = dirty || (had && s3 < 0);
		*state = DPMU_LINE_M;
	} else {
		unsigned asked;
		uint32_t m = holders(u, cl, me, blk, &asked, &sf_slot);
		/* Instruction fetches take lines shared (they never write), so
		 * another core fetching the same code needs no snoop. */
		*state = (m || r == REQ_IFETCH) ? DPMU_LINE_S : DPMU_LINE_E;
		uint64_t snoops = asked;
		/* An exclusive or dirty holder must be snooped (it may have
		 * written); shared holders only when the L3 cannot serve. */
		for (unsigned k = 0; m; k++, m >>= 1) {
			if (!(m & 1))
				continue;
			struct dpmu_ucore *p = &u->cores[cl->first_core + k];
			uint8_t st = l2_state(p, blk);
			if (st == DPMU_LINE_M || st == DPMU_LINE_E || (s3 < 0 && !from_peer)) {
				if (!asked)
					snoops++;
				if (peer_share(p, blk)) {
					l3_write(u, c, cl, blk, false);
					s3 = cl_find(&cl->l3.set, blk);
				}
				from_peer = true;
			}
		}
		CEV(cl, SNOOP_REQ, snoops);
		if (cl->sf.sets && !snoops)
			CEV(cl, SF_NO_SNOOP, 1);
	}

	if (from_peer) {
		CEV(cl, SNOOP_DATA, 1);
		lat = cl->snoop_latency;
		if (s3 >= 0)
			cl_touch(&cl->l3.set, s3);
	} else if (s3 >= 0) {
		cl_touch(&cl->l3.set, s3);
		lat = cl->l3.latency;
	} else {
		if (r == REQ_PREFETCH)
			IEV(c, L3D_CACHE_REFILL_PREFETCH, 1);
		lat = cl->l3.latency + l3_refill(u, c, cl, blk, rd, true);
		/* The L3's own prefetcher: the next line from memory. */
		if (cl->l3.prefetch == DPMU_PREFETCH_NEXT_LINE &&
		    cl_find(&cl->l3.set, blk + 1) < 0)
			l3_refill(u, c, cl, blk + 1, true, false);
	}
	/* The line crosses the core-DSU interface. */
	EVN(c, BUS_ACCESS_RD, c->beats);
	sf_add(u, c, cl, me, blk, sf_slot);
	return lat;
}

/* ---- the L2 ---------------------------------------------------------------- */

/* Evict the line in L2 slot v: back-invalidate the L1s (inclusion), write
 * dirty data to the L3, tell the snoop filter. */
static void l2_evict(struct dpmu_uarch *u, struct dpmu_ucore *c, int v)
{
	struct dpmu_uset *s = &c->l2.set;
	if (!s->state[v])
		return;
	uint64_t blk = s->tag[v];
	bool dirty = s->state[v] == DPMU_LINE_M;
	/* The snoop filter (and for dirty data the L3) learns of the victim
	 * after the L1 searches: their sets are asked for first. */
	struct dpmu_ucluster *cl = cluster_of(u, c);
	if (cl->sf.sets)
		dpmu_uset_prefetch(&cl->sf, blk);
	if (dirty)
		dpmu_uset_prefetch(&cl->l3.set, blk);
	int s1 = dpmu_uset_find(&c->l1d.set, blk);
	if (s1 >= 0) {
		dirty |= c->l1d.set.state[s1] == DPMU_LINE_M;
		dpmu_uset_drop(&c->l1d.set, s1);
	}
	l1_drop(&c->l1i, blk);
	dpmu_uset_drop(s, v);
	if (dirty) {
		EV(c, L2D_CACHE_WB);
		EV(c, L2D_CACHE_WB_VICTIM);
		EVN(c, BUS_ACCESS_WR, c->beats);
		l3_write(u, c, cl, blk, true);
	}
	sf_remove(cl, c->id - cl->first_core, blk);
}

static uint32_t l2_refill(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc, uint64_t blk,
			  enum req r, uint8_t *state);

static void l2_prefetch(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc, uint64_t blk,
			bool demand_miss)
{
	uint64_t pf = 0;
	if (c->l2.prefetch == DPMU_PREFETCH_NEXT_LINE && demand_miss)
		pf = blk + 1;
	else if (c->l2.prefetch == DPMU_PREFETCH_STRIDE)
		pf = dpmu_stride_train(c->l2.pf, pc, blk);
	if (pf && dpmu_uset_find(&c->l2.set, pf) < 0) {
		/* l2_access with the miss it would search for again known. */
		uint8_t st;
		EV(c, L2D_CACHE_RD);
		l2_refill(u, c, pc, pf, REQ_PREFETCH, &st);
	}
}

/* An access to the L2 (an L1 refill, an L1I refill, a prefetch). Returns
 * the load-to-use latency (at least the L2's); *state is the line's L2
 * state. */
static uint32_t l2_access(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc, uint64_t blk,
			  enum req r, uint8_t *state)
{
	struct dpmu_uset *s = &c->l2.set;
	bool wr = req_write(r);
	if (wr)
		EV(c, L2D_CACHE_WR);
	else
		EV(c, L2D_CACHE_RD);
	int slot = dpmu_uset_find(s, blk);
	uint32_t lat = c->l2.latency;
	if (slot >= 0) {
		dpmu_uset_touch(s, slot);
		if (wr && s->state[slot] == DPMU_LINE_S) {
			uint8_t ns;
			uint32_t d = dsu_request(u, c, blk, REQ_CLAIM, &ns);
			lat = d > lat ? d : lat;
		}
		if (wr)
			s->state[slot] = DPMU_LINE_M;
		*state = s->state[slot];
		if (r != REQ_PREFETCH && c->l2.prefetch == DPMU_PREFETCH_STRIDE)
			l2_prefetch(u, c, pc, blk, false);
		return lat;
	}
	return l2_refill(u, c, pc, blk, r, state);
}

/* l2_access's miss: the line blk (not in the L2) comes from the DSU. */
static uint32_t l2_refill(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc, uint64_t blk,
			  enum req r, uint8_t *state)
{
	struct dpmu_uset *s = &c->l2.set;
	/* The DSU looks the line up in the L3 and the snoop filter: both
	 * sets on their way at once, while the events below are counted. */
	struct dpmu_ucluster *cl = cluster_of(u, c);
	if (r != REQ_CLAIM)
		dpmu_uset_prefetch(&cl->l3.set, blk);
	if (cl->sf.sets)
		dpmu_uset_prefetch(&cl->sf, blk);
	bool wr = req_write(r);
	uint32_t lat = c->l2.latency;
	if (r == REQ_PREFETCH)
		IEV(c, L2D_CACHE_REFILL_PREFETCH, 1);
	if (r == REQ_CLAIM) {
		EV(c, L2D_CACHE_ALLOCATE);
	} else {
		if (wr)
			EV(c, L2D_CACHE_REFILL_WR);
		else
			EV(c, L2D_CACHE_REFILL_RD);
	}
	uint8_t ns;
	uint32_t d = dsu_request(u, c, blk, r, &ns);
	lat = d > lat ? d : lat;
	int v = dpmu_uset_victim(s, blk);
	l2_evict(u, c, v);
	dpmu_uset_put(s, v, blk, ns);
	dpmu_uset_touch(s, v);
	*state = ns;
	if (r != REQ_PREFETCH && c->l2.prefetch != DPMU_PREFETCH_NONE)
		l2_prefetch(u, c, pc, blk, true);
	return lat;
}

/* ---- the L1s --------------------------------------------------------------- */

/* Fill an L1D slot for blk, writing back a dirty victim into the L2. */
static int l1d_fill(struct dpmu_ucore *c, uint64_t blk, uint8_t st)
{
	struct dpmu_uset *s = &c->l1d.set;
	int v = dpmu_uset_victim(s, blk);
	if (s->state[v] == DPMU_LINE_M) {
		uint64_t old = s->tag[v];
		EV(c, L1D_CACHE_WB);
		EV(c, L1D_CACHE_WB_VICTIM);
		EV(c, L2D_CACHE_WR);
		int s2 = dpmu_uset_find(&c->l2.set, old);
		if (s2 >= 0) {
			c->l2.set.state[s2] = DPMU_LINE_M;
			dpmu_uset_touch(&c->l2.set, s2);
		}
	}
	dpmu_uset_put(s, v, blk, st);
	dpmu_uset_touch(s, v);
	return v;
}

/* The L1D state a line gets from its L2 state. */
static inline uint8_t l1_state(uint8_t l2st, bool write)
{
	if (write)
		return DPMU_LINE_M;
	return l2st == DPMU_LINE_S ? DPMU_LINE_S : DPMU_LINE_E;
}

void dpmu_mem_l1d_prefetch(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc, uint64_t pf)
{
	if (dpmu_uset_find(&c->l1d.set, pf) >= 0)
		return;
	/* Prefetch refills count as refills (seed 003 section 3.2). */
	IEV(c, L1D_CACHE_REFILL_PREFETCH, 1);
	EV(c, L1D_CACHE_REFILL_RD);
	uint8_t st;
	l2_access(u, c, pc, pf, REQ_PREFETCH, &st);
	l1d_fill(c, pf, l1_state(st, false));
	c->l1d_mru = -1; /* the demand line may no longer be its set's MRU */
}

uint32_t dpmu_mem_data(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc, uint64_t addr,
		       bool write, bool full_line)
{
	struct dpmu_uset *s = &c->l1d.set;
	uint64_t blk = addr >> s->shift;
	if (write)
		EV(c, L1D_CACHE_WR);
	else
		EV(c, L1D_CACHE_RD);
	uint64_t pf = c->l1d.pf ? dpmu_stride_train(c->l1d.pf, pc, blk) : 0;
	/* The line of the previous access is the most recently used of its
	 * set: found without a search, and touching it changes nothing. */
	int slot = c->l1d_mru;
	if (slot < 0 || s->tag[slot] != blk || !s->state[slot]) {
		slot = dpmu_uset_find(s, blk);
		if (slot >= 0)
			dpmu_uset_touch(s, slot);
	}
	if (slot >= 0) {
		c->l1d_mru = slot;
		if (write && s->state[slot] != DPMU_LINE_M) {
			if (s->state[slot] == DPMU_LINE_S) {
				/* Shared: the L2 must get ownership first. */
				int s2 = dpmu_uset_find(&c->l2.set, blk);
				if (s2 >= 0 && c->l2.set.state[s2] == DPMU_LINE_S) {
					uint8_t ns;
					dsu_request(u, c, blk, REQ_CLAIM, &ns);
				}
				if (s2 >= 0)
					c->l2.set.state[s2] = DPMU_LINE_M;
			}
			s->state[slot] = DPMU_LINE_M;
		}
		if (pf)
			dpmu_mem_l1d_prefetch(u, c, pc, pf);
		return c->l1d.latency;
	}
	uint8_t st;
	uint32_t lat;
	if (write && full_line) {
		/* A store of a whole line (DC ZVA, STP pairs of a line): the L1
		 * allocates without reading the old data. */
		EV(c, L1D_CACHE_ALLOCATE);
		lat = l2_access(u, c, pc, blk, REQ_CLAIM, &st);
	} else {
		if (write)
			EV(c, L1D_CACHE_REFILL_WR);
		else
			EV(c, L1D_CACHE_REFILL_RD);
		uint64_t l3_before = c->pend[DPMU_UEV_L3D_CACHE_REFILL];
		lat = l2_access(u, c, pc, blk, write ? REQ_RFO : REQ_READ, &st);
		/* From outside the cluster, or from within it. */
		if (c->pend[DPMU_UEV_L3D_CACHE_REFILL] != l3_before)
			EV(c, L1D_CACHE_REFILL_OUTER);
		else
			EV(c, L1D_CACHE_REFILL_INNER);
	}
	c->l1d_mru = l1d_fill(c, blk, l1_state(st, write));
	if (c->l1d.prefetch == DPMU_PREFETCH_NEXT_LINE)
		pf = blk + 1;
	if (pf)
		dpmu_mem_l1d_prefetch(u, c, pc, pf);
	return lat > c->l1d.latency ? lat : c->l1d.latency;
}

/* ---- TLBs ------------------------------------------------------------------ */

static void tlb_fill(struct dpmu_uset *t, uint64_t vpn)
{
	int v = dpmu_uset_victim(t, vpn);
	if (t->hint2) {
		/* A wide L1 TLB's second hint learns the page here, so a
		 * later conflict in the first hint costs no search of its 48
		 * ways; its slot counts one more page, the victim's one less. */
		if (t->state[v])
			t->held2[dpmu_uset_hint2_slot(t, t->tag[v])]--;
		uint32_t k = dpmu_uset_hint2_slot(t, vpn);
		t->held2[k]++;
		t->hint2[k] = (uint32_t)v;
	}
	dpmu_uset_put(t, v, vpn, 1);
	dpmu_uset_touch(t, v);
}

/* The slot of page `vpn` in the L1 TLB `t` whose first hint missed, or -1:
 * none when no page the TLB holds takes the page's slot of the second
 * hint, the slot that hint names when it holds the page (the check of
 * dpmu_uset_search_learn, inline), else dpmu_uset_search_learn. */
static inline int tlb_search(struct dpmu_uset *t, uint64_t vpn)
{
	if (t->held2) {
		uint32_t k = dpmu_uset_hint2_slot(t, vpn);
		if (!t->held2[k])
			return -1;
		uint32_t h = t->hint2[k];
		if (t->tag[h] == vpn) /* a page: a match is valid */
			return (int)h;
		return dpmu_uset_search_learn(t, vpn);
	}
	return dpmu_uset_search(t, vpn);
}

static uint32_t tlb_miss(struct dpmu_ucore *c, struct dpmu_uset *l1, uint64_t vpn,
			 enum dpmu_uev refill, enum dpmu_uev l2, enum dpmu_uev l2_refill,
			 enum dpmu_uev walk);

/* A lookup in an L1 TLB (`l1`), on a miss in the L2 TLB the two sides
 * share, on a miss there a table walk; the events are the side's. *last is
 * the page of the side's previous lookup + 1: its entry is the most
 * recently used, so looking it up again changes nothing. Returns the extra
 * cycles (L2 TLB, walk). */
static inline uint32_t tlb_lookup(struct dpmu_ucore *c, struct dpmu_uset *l1, uint64_t *last,
				  uint64_t vpn, enum dpmu_uev refill, enum dpmu_uev l2,
				  enum dpmu_uev l2_refill, enum dpmu_uev walk)
{
	if (vpn + 1 == *last)
		return 0;
	*last = vpn + 1;
	uint32_t h = l1->hint[vpn & l1->hint_mask];
	int s = l1->tag[h] == vpn ? (int)h : tlb_search(l1, vpn); /* a page: a match is valid */
	if (s >= 0) {
		dpmu_uset_touch(l1, s);
		return 0;
	}
	return tlb_miss(c, l1, vpn, refill, l2, l2_refill, walk);
}

/* tlb_lookup's miss in the L1 TLB `l1`. */
static uint32_t tlb_miss(struct dpmu_ucore *c, struct dpmu_uset *l1, uint64_t vpn,
			 enum dpmu_uev refill, enum dpmu_uev l2, enum dpmu_uev l2_refill,
			 enum dpmu_uev walk)
{
	c->pend[refill]++;
	c->pend[l2]++;
	uint32_t extra = c->type->l2tlb.latency;
	int s2 = dpmu_uset_find(&c->l2tlb, vpn);
	if (s2 >= 0) {
		dpmu_uset_touch(&c->l2tlb, s2);
	} else {
		c->pend[l2_refill]++;
		c->pend[walk]++;
		extra += c->type->walk_latency;
		tlb_fill(&c->l2tlb, vpn);
	}
	tlb_fill(l1, vpn);
	return extra;
}

uint32_t dpmu_mem_dtlb(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t addr, bool write)
{
	(void)u;
	uint64_t vpn = addr >> c->page_shift;
	if (write) {
		EV(c, L1D_TLB_WR);
		return tlb_lookup(c, &c->dtlb, &c->last_dvpn, vpn, DPMU_UEV_L1D_TLB_REFILL_WR,
				  DPMU_UEV_L2D_TLB_WR, DPMU_UEV_L2D_TLB_REFILL_WR, DPMU_UEV_DTLB_WALK);
	}
	EV(c, L1D_TLB_RD);
	return tlb_lookup(c, &c->dtlb, &c->last_dvpn, vpn, DPMU_UEV_L1D_TLB_REFILL_RD,
			  DPMU_UEV_L2D_TLB_RD, DPMU_UEV_L2D_TLB_REFILL_RD, DPMU_UEV_DTLB_WALK);
}

static uint32_t itlb(struct dpmu_ucore *c, uint64_t pc)
{
	EV(c, L1I_TLB);
	return tlb_lookup(c, &c->itlb, &c->last_ivpn, pc >> c->page_shift, DPMU_UEV_L1I_TLB_REFILL,
			  DPMU_UEV_L2I_TLB, DPMU_UEV_L2I_TLB_REFILL, DPMU_UEV_ITLB_WALK);
}

/* Refill the L1I with blk through the L2; returns l2_access's latency. */
static uint32_t l1i_fill(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc, uint64_t blk)
{
	uint8_t st;
	uint32_t lat = l2_access(u, c, pc, blk, REQ_IFETCH, &st);
	struct dpmu_uset *s = &c->l1i.set;
	int v = dpmu_uset_victim(s, blk); /* instruction lines are clean: dropped */
	dpmu_uset_put(s, v, blk, DPMU_LINE_S);
	dpmu_uset_touch(s, v);
	return lat;
}

uint32_t dpmu_mem_fetch_slow(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc)
{
	uint32_t extra = itlb(c, pc);
	c->tlb_stall = extra;
	struct dpmu_uset *s = &c->l1i.set;
	uint64_t blk = pc >> s->shift;
	EV(c, L1I_CACHE);
	int slot = dpmu_uset_find(s, blk);
	if (slot >= 0) {
		dpmu_uset_touch(s, slot);
		return extra;
	}
	EV(c, L1I_CACHE_REFILL);
	uint32_t lat = l1i_fill(u, c, pc, blk);
	if (c->l1i.prefetch != DPMU_PREFETCH_NONE && dpmu_uset_find(s, blk + 1) < 0) {
		EV(c, L1I_CACHE_REFILL);
		l1i_fill(u, c, pc, blk + 1);
	}
	/* The L1I hit latency is pipelined; only what is beyond it stalls. */
	return extra + (lat > c->l1i.latency ? lat - c->l1i.latency : 0);
}

/* ---- load and store instructions -------------------------------------------- */

/* One line, a whole line stored: within one line, a size of the line's
 * is the line. */
static inline bool one_line_full(const struct dpmu_ucore *c, const struct dpmu_insn *in,
				 bool write)
{
	return write && in->size == 1ull << c->l1d.set.shift;
}

uint32_t dpmu_mem_op_page(struct dpmu_uarch *u, struct dpmu_ucore *c, const struct dpmu_insn *in,
			  bool write, uint32_t *bw_wait)
{
	/* dpmu_mem_op_slow's one-line case without UNALIGNED_*, which the
	 * inline part counted, and without the L1 DTLB hint that part
	 * checked: dpmu_mem_dtlb's search. */
	uint64_t vpn = in->addr >> c->page_shift;
	c->last_dvpn = vpn + 1;
	int ts = tlb_search(&c->dtlb, vpn);
	if (ts >= 0) {
		/* A hit changes what dpmu_mem_dtlb's would (the hint and the
		 * replacement state) and counts its lookup with the L1D
		 * access, which is then the inline part's. */
		dpmu_uset_touch(&c->dtlb, ts);
		return dpmu_mem_op_l1d(u, c, in, in->addr, write, bw_wait, true);
	}
	c->dram_wait = 0;
	uint32_t worst;
	if (write) {
		EV(c, ST_SPEC);
		EV(c, L1D_TLB_WR);
		worst = tlb_miss(c, &c->dtlb, vpn, DPMU_UEV_L1D_TLB_REFILL_WR, DPMU_UEV_L2D_TLB_WR,
				 DPMU_UEV_L2D_TLB_REFILL_WR, DPMU_UEV_DTLB_WALK);
	} else {
		EV(c, LD_SPEC);
		EV(c, L1D_TLB_RD);
		worst = tlb_miss(c, &c->dtlb, vpn, DPMU_UEV_L1D_TLB_REFILL_RD, DPMU_UEV_L2D_TLB_RD,
				 DPMU_UEV_L2D_TLB_REFILL_RD, DPMU_UEV_DTLB_WALK);
	}
	c->tlb_stall = worst;
	worst += dpmu_mem_data(u, c, in->pc, in->addr, write, one_line_full(c, in, write));
	*bw_wait = c->dram_wait;
	if (write)
		return 0; /* the store buffer hides store latency */
	return worst > c->l1d.latency ? worst - c->l1d.latency : 0;
}

uint32_t dpmu_mem_op_line(struct dpmu_uarch *u, struct dpmu_ucore *c, const struct dpmu_insn *in,
			  bool write, uint32_t *bw_wait)
{
	/* What dpmu_mem_op_slow does for it but UNALIGNED_*, which the
	 * inline part counted: the page is the previous access's, so
	 * dpmu_mem_dtlb would count the lookup and find nothing to do. */
	c->dram_wait = 0;
	c->tlb_stall = 0;
	if (write) {
		EV(c, ST_SPEC);
		EV(c, L1D_TLB_WR);
	} else {
		EV(c, LD_SPEC);
		EV(c, L1D_TLB_RD);
	}
	uint32_t lat = dpmu_mem_data(u, c, in->pc, in->addr, write, one_line_full(c, in, write));
	*bw_wait = c->dram_wait;
	if (write)
		return 0; /* the store buffer hides store latency */
	return lat > c->l1d.latency ? lat - c->l1d.latency : 0;
}

/* dpmu_mem_data for one line of an access that touches several: a hit
 * in the line the L1D hint finds, in a state that needs no change beyond
 * E -> M, as dpmu_mem_op's inline part serves it (dpmu_mem_data would
 * find the same slot and change the same state); anything else goes to
 * dpmu_mem_data. */
static inline uint32_t l1d_part(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc,
				uint64_t addr, bool write, bool full)
{
	struct dpmu_uset *s = &c->l1d.set;
	uint64_t blk = addr >> s->shift;
	uint32_t h = s->hint[blk & s->hint_mask];
	/* An address's block: a matching tag is a valid line. */
	if (s->tag[h] != blk || (write && s->state[h] < DPMU_LINE_E))
		return dpmu_mem_data(u, c, pc, addr, write, full);
	if (write) {
		EV(c, L1D_CACHE_WR);
		s->state[h] = DPMU_LINE_M; /* E -> M stays in the L1D (the L2 owns it) */
	} else {
		EV(c, L1D_CACHE_RD);
	}
	if ((int)h != c->l1d_mru) {
		c->l1d_mru = (int)h;
		dpmu_uset_reuse(s, h);
	}
	if (c->l1d.pf) {
		uint64_t pf = dpmu_stride_train(c->l1d.pf, pc, blk);
		if (pf)
			dpmu_mem_l1d_prefetch(u, c, pc, pf);
	}
	return c->l1d.latency;
}

/* A load or store: TLB and cache for each line it touches. Returns the
 * cycles a load waits beyond an L1D hit; a store's latency is hidden by
 * the store buffer, but not a lack of DRAM bandwidth: *bw_wait is what the
 * access waited for it (docs/events.md, "Timing"). */
uint32_t dpmu_mem_op_slow(struct dpmu_uarch *u, struct dpmu_ucore *c, const struct dpmu_insn *in,
			  bool write, uint32_t *bw_wait)
{
	c->dram_wait = 0;
	c->tlb_stall = 0;
	uint64_t size = in->size ? in->size : 1;
	uint64_t a = in->addr;
	if (write) {
		EV(c, ST_SPEC);
	} else {
		EV(c, LD_SPEC);
	}
	/* Unaligned: not a multiple of its (power-of-two) size. */
	if (!(size & (size - 1)) && (a & (size - 1))) {
		if (write)
			EV(c, UNALIGNED_ST_SPEC);
		else
			EV(c, UNALIGNED_LD_SPEC);
	}
	uint32_t shift = c->l1d.set.shift;
	uint64_t line = 1ull << shift;
	uint64_t end = a + size - 1;
	if (end < a)
		end = UINT64_MAX; /* wraps the address space: clip */
	uint32_t worst = 0;
	if (!((a ^ end) >> shift)) {
		/* The common case: one line. */
		worst = dpmu_mem_dtlb(u, c, a, write);
		c->tlb_stall = worst;
		worst += dpmu_mem_data(u, c, in->pc, a, write, one_line_full(c, in, write));
	} else if ((end >> shift) - (a >> shift) == 1) {
		/* Two lines, the usual crossing (zstd's unaligned reads):
		 * the loop below for two lines, each line's L1D hit served
		 * as dpmu_mem_op serves one. A whole line is stored only
		 * from a line boundary on. */
		uint64_t base = (end >> shift) << shift;
		uint32_t lat = dpmu_mem_dtlb(u, c, a, write);
		c->tlb_stall = lat;
		worst = lat + l1d_part(u, c, in->pc, a, write, write && !(a & (line - 1)));
		lat = 0;
		if (base >> c->page_shift != a >> c->page_shift) {
			lat = dpmu_mem_dtlb(u, c, base, write);
			c->tlb_stall += lat;
		}
		lat += l1d_part(u, c, in->pc, base, write, write && end - base >= line - 1);
		if (lat > worst)
			worst = lat;
	} else {
		uint64_t last_page = UINT64_MAX;
		for (uint64_t blk = a >> shift; blk <= end >> shift; blk++) {
			uint64_t base = blk << shift;
			uint64_t lo = base > a ? base : a;
			uint32_t lat = 0;
			if (lo >> c->page_shift != last_page) {
				last_page = lo >> c->page_shift;
				lat = dpmu_mem_dtlb(u, c, lo, write);
				c->tlb_stall += lat;
			}
			bool full = write && base >= a && end - base >= line - 1;
			lat += dpmu_mem_data(u, c, in->pc, lo, write, full);
			if (lat > worst)
				worst = lat;
			if (blk == UINT64_MAX >> shift)
				break;
		}
	}
	*bw_wait = c->dram_wait;
	if (write)
		return 0; /* the store buffer hides store latency */
	return worst > c->l1d.latency ? worst - c->l1d.latency : 0;
}
