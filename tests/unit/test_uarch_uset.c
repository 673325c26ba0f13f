/*
 * The engine's set-associative array (src/uarch/cache.c, the inline helpers
 * of uarch_internal.h): lookups (through the hints and by the inline
 * 16-way search), fills, invalidations and victims checked
 * step by step against a plain model of the same array (a linear search of
 * the set, LRU by age, bit-PLRU by MRU bits), for several geometries, so
 * the hint, the per-way fingerprints and the PLRU marks are never seen to
 * change an answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "uarch/uarch_internal.h"

/* The plain model. */
struct ref {
	uint32_t sets, ways;
	enum dpmu_replacement repl;
	uint64_t tag[256];
	bool valid[256];
	uint64_t age[256], clock;
	uint64_t mru[64];
};

static uint32_t ref_set(const struct ref *r, uint64_t blk)
{
	return (uint32_t)(blk % r->sets);
}

static int ref_find(const struct ref *r, uint64_t blk)
{
	uint32_t base = ref_set(r, blk) * r->ways;
	for (uint32_t w = 0; w < r->ways; w++)
		if (r->valid[base + w] && r->tag[base + w] == blk)
			return (int)(base + w);
	return -1;
}

static void ref_touch(struct ref *r, int slot)
{
	uint32_t set = (uint32_t)slot / r->ways;
	if (r->repl == DPMU_REPL_LRU) {
		r->age[slot] = ++r->clock;
	} else {
		uint64_t all = r->ways == 64 ? ~0ull : (1ull << r->ways) - 1;
		uint64_t bit = 1ull << ((uint32_t)slot - set * r->ways);
		uint64_t m = r->mru[set] | bit;
		r->mru[set] = m == all ? bit : m;
	}
}

/* An invalid way first; else the oldest (LRU) or the first way whose MRU
 * bit is clear (PLRU: the mask is never full). */
static int ref_victim(const struct ref *r, uint64_t blk)
{
	uint32_t set = ref_set(r, blk), base = set * r->ways;
	for (uint32_t w = 0; w < r->ways; w++)
		if (!r->valid[base + w])
			return (int)(base + w);
	uint32_t best = 0;
	for (uint32_t w = 1; w < r->ways; w++)
		if (r->repl == DPMU_REPL_LRU && r->age[base + w] < r->age[base + best])
			best = w;
	if (r->repl == DPMU_REPL_PLRU)
		while (best + 1 < r->ways && ((r->mru[set] >> best) & 1))
			best++;
	return (int)(base + best);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Random accesses, invalidations (one step in `drop_in`), victims asked
 * for and not filled, and lookups of a block no address has, over a pool
 * of blocks of few sets that includes blocks whose fingerprints collide.
 * With `hot`, half the accesses go to the pool's first blocks, fewer than
 * a set holds, so victims are chosen among ways used in every order:
 * long unused, used since the last victim, refilled, invalidated. */
/* run_model's variants of the array under test */
#define RUN_SCALAR 1u   /* the LRU scan of hosts without the vector one */
#define RUN_HINT_ONE 2u /* a one-slot hint (dpmu_uset_hint_one, the cluster arrays') */

static void run_model(uint32_t sets, uint32_t ways, enum dpmu_replacement repl, unsigned drop_in,
		      bool hot, unsigned variant)
{
	struct dpmu_uset s;
	struct dpmu_err err;
	assert_int_equal(dpmu_uset_init(&s, "test", (uint64_t)sets * ways * 64, ways, 64, repl, 7,
					 &err),
			 0);
	if (variant & RUN_SCALAR)
		s.lru_vector = false;
	if (variant & RUN_HINT_ONE)
		dpmu_uset_hint_one(&s);
	struct ref r = { .sets = sets, .ways = ways, .repl = repl };
	assert_true(sets * ways <= 256 && sets <= 64);

	/* Blocks of sets 0 and 1, twice as many per set as there are ways,
	 * in pairs that share their set and their slot of the first hint
	 * (`far` apart: a wide set's second hint tells them apart), then two
	 * more of set 1 with the fingerprint of the pool's first. */
	uint64_t pool[160];
	unsigned n = 0;
	const uint64_t far = (uint64_t)(s.hint_mask + 1) * sets;
	for (uint64_t k = 0; n < 2 * 2 * ways && n < 156; k++) {
		uint64_t b = k * sets + (k & 1) % sets;
		pool[n++] = b;
		if (n < 2 * 2 * ways && n < 156)
			pool[n++] = b + far;
	}
	unsigned twins = 0;
	for (uint64_t k = 1; twins < 2; k++) {
		uint64_t b = k * sets + (pool[0] % sets);
		if (b != pool[0] && dpmu_uset_fp(b) == dpmu_uset_fp(pool[0])) {
			pool[n++] = b;
			twins++;
		}
	}

	uint64_t x = 0x9e3779b97f4a7c15ull ^ ((uint64_t)ways << 32) ^ sets ^ repl ^
		     ((uint64_t)drop_in << 40) ^ ((uint64_t)hot << 48);
	unsigned hot_n = ways > 2 ? ways / 2 : 1;
	for (unsigned step = 0; step < 20000; step++) {
		uint64_t blk = pool[rnd(&x) % n];
		if (hot && rnd(&x) % 2)
			blk = pool[rnd(&x) % hot_n];
		unsigned op = (unsigned)(rnd(&x) % 16);
		if (op == 2) {
			/* A victim nobody fills: it stays the victim. */
			assert_int_equal(dpmu_uset_victim(&s, blk), ref_victim(&r, blk));
			continue;
		}
		if (rnd(&x) % drop_in == 0) {
			/* Invalidate a way of the block's set. */
			uint32_t slot = ref_set(&r, blk) * ways + (uint32_t)(rnd(&x) % ways);
			if (r.valid[slot]) {
				assert_true(s.state[slot] != DPMU_LINE_I);
				dpmu_uset_drop(&s, (int)slot);
				r.valid[slot] = false;
			}
			assert_int_equal(s.tag[slot] == DPMU_TAG_NONE, !r.valid[slot]);
			continue;
		}
		if (op == 1) {
			/* A prefetcher's wrapped block number: never found. */
			assert_int_equal(dpmu_uset_find(&s, DPMU_TAG_NONE), -1);
			assert_int_equal(dpmu_uset_search16(&s, DPMU_TAG_NONE), -1);
			continue;
		}
		int f = dpmu_uset_find(&s, blk);
		assert_int_equal(f, ref_find(&r, blk));
		assert_int_equal(dpmu_uset_search16(&s, blk), f);
		if (f < 0) {
			f = dpmu_uset_victim(&s, blk);
			assert_int_equal(f, ref_victim(&r, blk));
			dpmu_uset_put(&s, f, blk, DPMU_LINE_E);
			r.tag[f] = blk;
			r.valid[f] = true;
		}
		dpmu_uset_touch(&s, f);
		ref_touch(&r, f);
		if (repl == DPMU_REPL_PLRU) {
			uint32_t set = (uint32_t)f / ways;
			assert_int_equal(s.mru[set], r.mru[set]);
			for (uint32_t w = 0; w < ways; w++)
				assert_int_equal(s.mark[set * ways + w], (r.mru[set] >> w) & 1);
		}
	}
	dpmu_uset_free(&s);
}

static void run_against_model(uint32_t sets, uint32_t ways, enum dpmu_replacement repl)
{
	run_model(sets, ways, repl, 16, false, 0);
	run_model(sets, ways, repl, 16, false, RUN_HINT_ONE);
}

static void lru_arrays_match_the_model(void **state)
{
	(void)state;
	run_against_model(4, 8, DPMU_REPL_LRU);
	run_against_model(3, 5, DPMU_REPL_LRU);  /* sets and ways not powers of two */
	run_against_model(1, 48, DPMU_REPL_LRU); /* a fully-associative TLB */
	run_against_model(2, 16, DPMU_REPL_LRU);
	run_against_model(3, 20, DPMU_REPL_LRU); /* a wide search past the last set's ways */
	run_against_model(1, 32, DPMU_REPL_LRU); /* the fewest ways with a second hint */
}

/* Every LRU victim of a fully-associative 48-way TLB and of 4-way sets,
 * with invalidations rare and frequent, and with a hot subset of blocks:
 * the victim is the model's (an invalid way first, else the way used
 * longest ago) at every miss. Sets of 32 ways or more take the vector
 * scan on a host that has it, so they run with the scalar one too; 37 and
 * 63 ways leave stamps past the last whole vector, 40 and 64 do not. */
static void lru_victims_match_the_model(void **state)
{
	(void)state;
	static const uint32_t geo[][2] = { { 1, 48 }, { 8, 4 },  { 1, 4 },  { 3, 4 },
					   { 1, 37 }, { 2, 40 }, { 1, 63 }, { 1, 64 } };
	static const unsigned drop_in[] = { 64, 16, 3 };
	for (unsigned g = 0; g < sizeof geo / sizeof geo[0]; g++)
		for (unsigned d = 0; d < sizeof drop_in / sizeof drop_in[0]; d++)
			for (unsigned v = 0; v < 4; v++)
				run_model(geo[g][0], geo[g][1], DPMU_REPL_LRU, drop_in[d], v & 1,
					  v >> 1 ? RUN_SCALAR : 0);
}

static void plru_arrays_match_the_model(void **state)
{
	(void)state;
	run_against_model(4, 8, DPMU_REPL_PLRU);
	run_against_model(3, 12, DPMU_REPL_PLRU);
	run_against_model(2, 16, DPMU_REPL_PLRU);
	run_against_model(1, 64, DPMU_REPL_PLRU); /* every bit of the MRU mask */
	run_against_model(5, 24, DPMU_REPL_PLRU); /* a wide search of 1.5 vectors */
	run_against_model(8, 1, DPMU_REPL_PLRU);  /* direct-mapped */
}

static int fill(struct dpmu_uset *s, uint64_t blk)
{
	int f = dpmu_uset_victim(s, blk);
	dpmu_uset_put(s, f, blk, 1);
	dpmu_uset_touch(s, f);
	return f;
}

/* A lookup as mem.c's L1 TLB lookup makes it: the first hint, then the
 * search that the second hint answers first and learns from. */
static int tlb_find(struct dpmu_uset *s, uint64_t blk)
{
	uint32_t h = s->hint[blk & s->hint_mask];
	if (s->tag[h] == blk && s->state[h])
		return (int)h;
	return dpmu_uset_search_learn(s, blk);
}

/* A 48-way TLB's two pages of one slot of the first hint: the second hint
 * learns where the search found each, then answers for the one the first
 * hint lost, without the set (a way whose fingerprint is spoilt is found
 * only through it); an answer it keeps for a way since invalidated or
 * refilled with another page is refused. An array gets a second hint only
 * when asked (dpmu_uset_hint_two: the engine asks for its wide L1 TLBs). */
static void second_hint_answers_for_the_first(void **state)
{
	(void)state;
	struct dpmu_uset s, wide;
	struct dpmu_err err;
	assert_int_equal(dpmu_uset_init(&wide, "l3", 48 * 64 * 64, 48, 64, DPMU_REPL_LRU, 3, &err),
			 0);
	assert_null(wide.hint2);
	assert_null(wide.held2);
	dpmu_uset_free(&wide);
	assert_int_equal(dpmu_uset_init(&s, "tlb", 48 * 4096, 48, 4096, DPMU_REPL_LRU, 3, &err), 0);
	assert_int_equal(dpmu_uset_hint_two(&s, "tlb", &err), 0);
	assert_non_null(s.hint2);
	assert_non_null(s.held2);

	for (uint64_t p = 0; p < 5; p++)
		fill(&s, 0x1000 + p); /* a and b in ways other than 0 */
	const uint64_t a = 0x2000;
	uint64_t b = a + s.hint_mask + 1;
	while (dpmu_uset_hint2_slot(&s, b) == dpmu_uset_hint2_slot(&s, a))
		b += s.hint_mask + 1;
	int sa = fill(&s, a), sb = fill(&s, b);
	assert_true(sa > 0 && sb > 0 && sa != sb);
	assert_int_equal(s.hint[a & s.hint_mask], sb); /* b took a's slot */

	/* Found by the search: the second hint learns them. */
	assert_int_equal(tlb_find(&s, a), sa);
	assert_int_equal(s.hint2[dpmu_uset_hint2_slot(&s, a)], sa);
	dpmu_uset_touch(&s, sa);
	assert_int_equal(tlb_find(&s, b), sb);
	assert_int_equal(s.hint2[dpmu_uset_hint2_slot(&s, b)], sb);
	dpmu_uset_touch(&s, sb);

	/* The set's search can no longer see a: only the second hint does. */
	uint8_t keep = s.fp[sa];
	s.fp[sa] = (uint8_t)~keep;
	assert_int_equal(dpmu_uset_search(&s, a), -1);
	assert_int_equal(dpmu_uset_search_learn(&s, a), sa);
	assert_int_equal(tlb_find(&s, a), sa);
	s.fp[sa] = keep;

	/* a's way invalidated, then refilled with another page: the second
	 * hint still points there and is not believed. */
	dpmu_uset_drop(&s, sa);
	assert_int_equal(tlb_find(&s, a), -1);
	dpmu_uset_put(&s, sa, 0x3000, 1);
	dpmu_uset_touch(&s, sa);
	assert_int_equal(tlb_find(&s, a), -1);
	assert_int_equal(tlb_find(&s, 0x3000), sa);
	assert_int_equal(tlb_find(&s, b), sb);
	dpmu_uset_free(&s);
}

/* Blocks of one byte would let an address's block number equal the tag of
 * an invalid slot: refused with a message naming the array. */
static void one_byte_blocks_are_refused(void **state)
{
	(void)state;
	struct dpmu_uset s;
	struct dpmu_err err;
	assert_int_equal(dpmu_uset_init(&s, "tiny", 64, 4, 1, DPMU_REPL_LRU, 1, &err), DPMU_EINVAL);
	assert_non_null(strstr(dpmu_errmsg(&err), "tiny"));
	assert_int_equal(dpmu_uset_init(&s, "pair", 64, 4, 2, DPMU_REPL_LRU, 1, &err), 0);
	dpmu_uset_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lru_arrays_match_the_model),
		cmocka_unit_test(lru_victims_match_the_model),
		cmocka_unit_test(plru_arrays_match_the_model),
		cmocka_unit_test(second_hint_answers_for_the_first),
		cmocka_unit_test(one_byte_blocks_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
