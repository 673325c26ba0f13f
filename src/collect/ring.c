/*
 * Single-producer single-consumer ring of 64-byte records. Publication is
 * batched: the producer writes up to `batch` slots, each with its position
 * stamped last in seq, then release-stores head once; the consumer
 * acquire-loads head, issues what the coherency rule owes, copies the slots
 * (pop) or reads them where they are (peek, then release), checks each stamp,
 * and release-stores tail so the producer may reuse them.
 * Seed 002 "AICore -> AICPU path" is the pattern; head plays COND's part.
 */
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/platform/platform.h"
#include "collect/ring.h"

/* Slots ahead to prefetch; a few lines' worth of cross-core latency. */
#ifndef DPMU_RING_PREFETCH
#define DPMU_RING_PREFETCH 8
#endif

/* A ring placed in caller-supplied memory (dpmu_ring_init_in) keeps its
 * slots right after the header and leaves the pointer NULL: the memory may
 * be mapped at a different address in the producer's process than in the
 * consumer's, so nothing inside it may hold an address. */
static inline struct dpmu_record *ring_slots(struct dpmu_ring *r)
{
	return r->slots ? r->slots : (struct dpmu_record *)(void *)(r + 1);
}

static int ring_check(size_t slots, unsigned batch, enum dpmu_ring_mode mode,
		      struct dpmu_err *err)
{
	if (slots < 2 || (slots & (slots - 1)) || slots > ((size_t)1 << 30))
		return dpmu_err_set(err, DPMU_EINVAL,
				    "ring of %zu slots: need a power of two in 2..2^30", slots);
	if (batch < 1 || batch > slots)
		return dpmu_err_set(err, DPMU_EINVAL, "ring batch %u: need 1..%zu (the slot count)",
				    batch, slots);
	if (mode != DPMU_RING_LOSSLESS && mode != DPMU_RING_LOSSY)
		return dpmu_err_set(err, DPMU_EINVAL, "ring mode %d: need lossless or lossy",
				    (int)mode);
	return 0;
}

/* The initial state of a ring whose memory is zeroed and slots placed. */
static void ring_setup(struct dpmu_ring *r, uint32_t producer, size_t slots, unsigned batch,
		       enum dpmu_ring_mode mode, const struct dpmu_coh_rule *rule)
{
	r->mask = slots - 1;
	r->batch = batch;
	r->mode = mode;
	r->producer = producer;
	if (rule)
		r->rule = *rule;
	else
		r->rule.reason = "release/acquire only";
	atomic_init(&r->prod.head, 0);
	atomic_init(&r->prod.cond, 0);
	atomic_init(&r->prod.produced, 0);
	atomic_init(&r->prod.dropped, 0);
	atomic_init(&r->cons.tail, 0);
	atomic_init(&r->cons.collected, 0);
	atomic_init(&r->cons.mismatched, 0);
	atomic_init(&r->req.request, 0);
}

int dpmu_ring_create(struct dpmu_ring **out, uint32_t producer, size_t slots, unsigned batch,
		     enum dpmu_ring_mode mode, const struct dpmu_coh_rule *rule,
		     struct dpmu_err *err)
{
	if (!out)
		return dpmu_err_set(err, DPMU_EINVAL, "dpmu_ring_create: out is NULL");
	*out = NULL;
	int rc = ring_check(slots, batch, mode, err);
	if (rc)
		return rc;
	struct dpmu_ring *r = aligned_alloc(DPMU_COLLECT_LINE, sizeof *r);
	if (!r)
		return dpmu_err_set(err, DPMU_ENOMEM, "ring: out of memory");
	memset(r, 0, sizeof *r);
	r->slots = aligned_alloc(DPMU_COLLECT_LINE, slots * sizeof(struct dpmu_record));
	if (!r->slots) {
		free(r);
		return dpmu_err_set(err, DPMU_ENOMEM, "ring of %zu slots: out of memory", slots);
	}
	memset(r->slots, 0, slots * sizeof(struct dpmu_record));
	ring_setup(r, producer, slots, batch, mode, rule);
	*out = r;
	return 0;
}

void dpmu_ring_destroy(struct dpmu_ring *r)
{
	if (!r || !r->slots)
		return; /* an inline ring's memory belongs to its caller */
	free(r->slots);
	free(r);
}

size_t dpmu_ring_bytes_in(size_t slots)
{
	return sizeof(struct dpmu_ring) + slots * sizeof(struct dpmu_record);
}

/* dpmu_ring_init_in and dpmu_ring_init_in_zeroed: zero_slots says whether
 * the slots still need zeroing. They do unless the caller knows them zero:
 * the consumer reads a slot only after head covers it, but its stamp check
 * (seq against the position) catches a record whose bytes are not visible
 * yet only if the slot does not already hold that stamp, and memory that
 * held a ring before holds exactly the stamps of its first round. */
static int ring_init_in(const char *fn, void *mem, size_t bytes, uint32_t producer,
			size_t slots, unsigned batch, enum dpmu_ring_mode mode,
			const struct dpmu_coh_rule *rule, struct dpmu_ring **out, bool zero_slots,
			struct dpmu_err *err)
{
	if (!mem || !out)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: mem or out is NULL", fn);
	*out = NULL;
	if ((uintptr_t)mem % DPMU_COLLECT_LINE)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: memory at %p is not %d-byte aligned", fn,
				    mem, DPMU_COLLECT_LINE);
	int rc = ring_check(slots, batch, mode, err);
	if (rc)
		return rc;
	if (bytes < dpmu_ring_bytes_in(slots))
		return dpmu_err_set(err, DPMU_EINVAL,
				    "ring of %zu slots needs %zu bytes; %zu given", slots,
				    dpmu_ring_bytes_in(slots), bytes);
	struct dpmu_ring *r = mem;
	memset(r, 0, zero_slots ? dpmu_ring_bytes_in(slots) : sizeof *r);
	r->slots = NULL; /* inline: ring_slots() */
	ring_setup(r, producer, slots, batch, mode, rule);
	*out = r;
	return 0;
}

int dpmu_ring_init_in(void *mem, size_t bytes, uint32_t producer, size_t slots, unsigned batch,
		      enum dpmu_ring_mode mode, const struct dpmu_coh_rule *rule,
		      struct dpmu_ring **out, struct dpmu_err *err)
{
	return ring_init_in("dpmu_ring_init_in", mem, bytes, producer, slots, batch, mode, rule,
			    out, true, err);
}

int dpmu_ring_init_in_zeroed(void *mem, size_t bytes, uint32_t producer, size_t slots,
			     unsigned batch, enum dpmu_ring_mode mode,
			     const struct dpmu_coh_rule *rule, struct dpmu_ring **out,
			     struct dpmu_err *err)
{
	return ring_init_in("dpmu_ring_init_in_zeroed", mem, bytes, producer, slots, batch, mode,
			    rule, out, false, err);
}

/* Apply a cache operation (clean or invalidate) to the slots of positions
 * [from, to), handling the wrap as two ranges. */
static void ring_maintain(struct dpmu_ring *r, uint64_t from, uint64_t to,
			  size_t (*op)(const void *addr, size_t len))
{
	size_t n = (size_t)(to - from), cap = (size_t)r->mask + 1;
	size_t i = (size_t)(from & r->mask);
	size_t first = n < cap - i ? n : cap - i;
	op(&ring_slots(r)[i], first * sizeof(struct dpmu_record));
	op(&ring_slots(r)[0], (n - first) * sizeof(struct dpmu_record));
}

/* A lossless producer waiting for room: re-check at once a few times, then
 * yield, then sleep briefly. Sleeping matters where producers outnumber
 * cores: a producer that only yields keeps taking the CPU the collector
 * needs to make the room it waits for. */
static void ring_wait(unsigned waits)
{
	if (waits < 16)
		return;
	if (waits < 64) {
		sched_yield();
		return;
	}
	struct timespec ts = {0, 20000};
	nanosleep(&ts, NULL);
}

/* Producer: make everything staged visible with one release of head. */
static void ring_publish(struct dpmu_ring *r)
{
	struct dpmu_ring_prod_priv *pp = &r->pp;
	if (pp->pos != pp->pub && (r->rule.writer & DPMU_COH_WRITER_CLEAN)) {
		/* A non-coherent writer pushes its lines out and commits them
		 * before the signal (seed 002 "dcci ...; dsb ... before FIN"). */
		ring_maintain(r, pp->pub, pp->pos, dpmu_cache_flush_range);
		dpmu_wmb();
	}
	atomic_store_explicit(&r->prod.produced, pp->produced, memory_order_relaxed);
	atomic_store_explicit(&r->prod.dropped, pp->dropped, memory_order_relaxed);
	atomic_store_explicit(&r->prod.head, pp->pos, memory_order_release);
	pp->pub = pp->pos;
}

/* Producer: answer a retirement request (seed 002 "Unified COND nonce",
 * steps 3 and 4): complete every preceding write, then publish the nonce
 * once; from then on the producer takes no more records. */
static int ring_answer(struct dpmu_ring *r, uint64_t req)
{
	if (req != r->pp.echoed) {
		ring_publish(r);
		atomic_store_explicit(&r->prod.cond, req, memory_order_release);
		r->pp.echoed = req;
	}
	return DPMU_ESTATE;
}

int dpmu_ring_claim(struct dpmu_ring *r, struct dpmu_record **slot)
{
	struct dpmu_ring_prod_priv *pp = &r->pp;
	*slot = NULL;
	/* The request line is written once per run, so this load stays in the
	 * producer's cache; relaxed is enough because the request carries no
	 * payload of its own. */
	uint64_t req = atomic_load_explicit(&r->req.request, memory_order_relaxed);
	if (req)
		return ring_answer(r, req);
	uint64_t pos = pp->pos;
	unsigned waits = 0;
	if (pos - pp->cached_tail > r->mask) {
		/* Full as far as we know: publish what is staged so the consumer
		 * can make room, then look at its tail again. */
		ring_publish(r);
		pp->cached_tail = atomic_load_explicit(&r->cons.tail, memory_order_acquire);
		while (pos - pp->cached_tail > r->mask) {
			if (r->mode == DPMU_RING_LOSSY) {
				pp->produced++;
				pp->dropped++;
				atomic_store_explicit(&r->prod.produced, pp->produced, memory_order_relaxed);
				atomic_store_explicit(&r->prod.dropped, pp->dropped, memory_order_relaxed);
				return DPMU_EBUSY;
			}
			req = atomic_load_explicit(&r->req.request, memory_order_relaxed);
			if (req)
				return ring_answer(r, req);
			ring_wait(++waits);
			pp->cached_tail = atomic_load_explicit(&r->cons.tail, memory_order_acquire);
		}
	}
	/* Ask for ownership of a line a few slots ahead: the consumer's read of
	 * it left a copy in its cache, and the write would otherwise stall on
	 * that invalidation. */
	dpmu_prefetch_write(&ring_slots(r)[(pos + DPMU_RING_PREFETCH) & r->mask]);
	*slot = &ring_slots(r)[pos & r->mask];
	return 0;
}

void dpmu_ring_commit(struct dpmu_ring *r)
{
	struct dpmu_ring_prod_priv *pp = &r->pp;
	struct dpmu_record *s = &ring_slots(r)[pp->pos & r->mask];
	s->producer = r->producer;
	/* The stamp is written last (seed 002: "store task_id (last)"). */
	atomic_signal_fence(memory_order_release);
	s->seq = pp->pos + 1;
	pp->pos++;
	pp->produced++;
	if (pp->pos - pp->pub >= r->batch)
		ring_publish(r);
}

int dpmu_ring_push(struct dpmu_ring *r, const struct dpmu_record *rec)
{
	struct dpmu_record *s;
	int rc = dpmu_ring_claim(r, &s);
	if (rc)
		return rc;
	s->time = rec->time;
	s->kind = rec->kind;
	memcpy(s->val, rec->val, sizeof s->val);
	dpmu_ring_commit(r);
	return 0;
}

int dpmu_ring_flush(struct dpmu_ring *r)
{
	uint64_t req = atomic_load_explicit(&r->req.request, memory_order_relaxed);
	if (req)
		return ring_answer(r, req);
	ring_publish(r);
	return 0;
}

int dpmu_ring_poll(struct dpmu_ring *r)
{
	uint64_t req = atomic_load_explicit(&r->req.request, memory_order_relaxed);
	if (!req)
		return 0;
	ring_answer(r, req);
	return 1;
}

/* Consumer: positions published and not yet consumed, after what the
 * hand-off owes; 0 when there are none. */
static uint64_t ring_avail(struct dpmu_ring *r)
{
	struct dpmu_ring_cons_priv *cp = &r->cp;
	uint64_t t = cp->tail;
	if (cp->cached_head == t) {
		uint64_t h = atomic_load_explicit(&r->prod.head, memory_order_acquire);
		if (h == t)
			return 0;
		cp->cached_head = h;
		/* What this hand-off owes beyond acquire (seed 002 decision steps 3
		 * and 5): the barrier first and explicitly, then the invalidate. */
		if (r->rule.reader & DPMU_COH_READER_RMB)
			dpmu_rmb();
		if (r->rule.reader & DPMU_COH_READER_INVALIDATE)
			ring_maintain(r, t, h, dpmu_cache_invalidate_range);
	}
	return cp->cached_head - t;
}

/* Consumer: ask early for the slot of position pos, which comes from the
 * producer's cache, but only once it is published: a slot past head is one
 * the producer is filling or about to fill, and a read of it would take
 * the line from the producer mid-fill, whose next store then waits for the
 * line to come back (a ping-pong once per record while the consumer keeps
 * up). */
static inline void ring_prefetch_read(struct dpmu_ring *r, uint64_t pos)
{
	if (pos < r->cp.cached_head)
		__builtin_prefetch(&ring_slots(r)[pos & r->mask], 0);
}

/* Consumer: publish the counters, then the tail. */
static void ring_consumed(struct dpmu_ring *r)
{
	struct dpmu_ring_cons_priv *cp = &r->cp;
	atomic_store_explicit(&r->cons.collected, cp->collected, memory_order_relaxed);
	atomic_store_explicit(&r->cons.mismatched, cp->mismatched, memory_order_relaxed);
	/* Release: our slot reads happen before the producer's reuse. */
	atomic_store_explicit(&r->cons.tail, cp->tail, memory_order_release);
}

size_t dpmu_ring_peek(struct dpmu_ring *r, const struct dpmu_record **recs, size_t max)
{
	struct dpmu_ring_cons_priv *cp = &r->cp;
	*recs = NULL;
	for (;;) {
		uint64_t n = ring_avail(r);
		if (!n || !max)
			return 0;
		uint64_t t = cp->tail;
		size_t i = (size_t)(t & r->mask), cap = (size_t)r->mask + 1;
		if (n > cap - i)
			n = cap - i;
		if (n > max)
			n = max;
		const struct dpmu_record *s = &ring_slots(r)[i];
		/* The producer leaves these slots alone until release moves the
		 * tail past them, so the stamp checked here is the record read. */
		size_t k = 0;
		while (k < n) {
			ring_prefetch_read(r, t + k + DPMU_RING_PREFETCH);
			if (s[k].seq != t + k + 1)
				break;
			k++;
		}
		if (k) {
			*recs = s;
			return k;
		}
		cp->mismatched++; /* a stale or torn line: never pass it on */
		cp->tail = t + 1;
		ring_consumed(r);
	}
}

void dpmu_ring_release(struct dpmu_ring *r, size_t n)
{
	struct dpmu_ring_cons_priv *cp = &r->cp;
	/* never past what peek can have handed out: the producer would
	 * overwrite unread slots */
	if (n > cp->cached_head - cp->tail)
		n = (size_t)(cp->cached_head - cp->tail);
	if (!n)
		return;
	cp->tail += n;
	cp->collected += n;
	ring_consumed(r);
}

size_t dpmu_ring_discard(struct dpmu_ring *r)
{
	struct dpmu_ring_cons_priv *cp = &r->cp;
	uint64_t n = ring_avail(r);
	if (!n)
		return 0;
	cp->tail += n;
	cp->collected += n;
	ring_consumed(r);
	return (size_t)n;
}

size_t dpmu_ring_pop(struct dpmu_ring *r, struct dpmu_record *out, size_t max)
{
	struct dpmu_ring_cons_priv *cp = &r->cp;
	uint64_t t = cp->tail;
	uint64_t n = ring_avail(r);
	if (!n)
		return 0;
	if (n > max)
		n = max;
	size_t k = 0;
	for (uint64_t i = 0; i < n; i++) {
		ring_prefetch_read(r, t + i + DPMU_RING_PREFETCH);
		out[k] = ring_slots(r)[(t + i) & r->mask];
		if (out[k].seq == t + i + 1)
			k++;
		else
			cp->mismatched++; /* a stale or torn line: never pass it on */
	}
	cp->tail = t + n;
	cp->collected += k;
	ring_consumed(r);
	return k;
}

uint64_t dpmu_ring_retire_request(struct dpmu_ring *r)
{
	/* Seed 002 "Unified COND nonce" step 2: the nonce is chosen against this
	 * producer's own retained COND, so an echo left from an earlier run can
	 * never satisfy this one. */
	uint64_t seen = atomic_load_explicit(&r->prod.cond, memory_order_acquire);
	uint64_t nonce = seen == DPMU_COLLECT_NONCE_A ? DPMU_COLLECT_NONCE_B : DPMU_COLLECT_NONCE_A;
	atomic_store_explicit(&r->req.request, nonce, memory_order_release);
	return nonce;
}

int dpmu_ring_retire_acked(struct dpmu_ring *r, uint64_t nonce)
{
	/* Acquire: everything the producer published before its echo is
	 * visible once the echo is (step 4: only the matching value counts). */
	return atomic_load_explicit(&r->prod.cond, memory_order_acquire) == nonce;
}

void dpmu_ring_retire_reset(struct dpmu_ring *r)
{
	atomic_store_explicit(&r->req.request, 0, memory_order_release);
}

uint64_t dpmu_ring_cond(struct dpmu_ring *r)
{
	return atomic_load_explicit(&r->prod.cond, memory_order_acquire);
}

void dpmu_ring_stats(struct dpmu_ring *r, struct dpmu_ring_stats *st)
{
	/* Consumer counters first: they never run ahead of what was produced,
	 * so in_flight stays non-negative while both sides are live. */
	st->collected = atomic_load_explicit(&r->cons.collected, memory_order_acquire);
	st->mismatched = atomic_load_explicit(&r->cons.mismatched, memory_order_acquire);
	st->produced = atomic_load_explicit(&r->prod.produced, memory_order_relaxed);
	st->dropped = atomic_load_explicit(&r->prod.dropped, memory_order_relaxed);
	uint64_t done = st->collected + st->dropped + st->mismatched;
	st->in_flight = st->produced > done ? st->produced - done : 0;
}
