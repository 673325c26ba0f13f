/*
 * A set-associative array of blocks with a replacement policy: the L1, L2
 * and L3 caches, the TLBs and the snoop filter are all one of these.
 * Flat arrays, no allocation after init, a mask for the set index when the
 * set count is a power of two.
 */
#include <stdlib.h>
#include <string.h>

#include "uarch/uarch_internal.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* The vector scan of LRU stamps: x86-64 hosts with AVX2, found at run
 * time (the build targets the base x86-64, without it). */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DPMU_LRU_AVX2 1
#endif

/* Ways from which an LRU set's victim is the vector scan's when the host
 * has it: a 48-way TLB's victim costs 192 host instructions instead of
 * 276 (zstd, callgrind), but a 16-way snoop filter's, most of them an
 * invalid way, 57 instead of 38 (docs/benchmarks.md). */
#define DPMU_LRU_VECTOR_WAYS 32

#ifdef DPMU_LRU_AVX2
/* The lanes' minimum of two vectors of stamps. Stamps count uses from 0
 * and stay below 2^63, so the signed 64-bit compare of AVX2 orders them. */
__attribute__((target("avx2"))) static inline __m256i min_epu63(__m256i a, __m256i b)
{
	return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(a, b));
}

/* dpmu_uset_victim of the LRU set at slot `base`, of `ways` >=
 * DPMU_LRU_VECTOR_WAYS ways: the first invalid way, else the first way of
 * the lowest stamp, 32 states or eight stamps to a step (two chains, for
 * the compares' latency). It returns the slot, so its caller's call is a
 * tail call and the caller stays a leaf for the other policies. */
__attribute__((target("avx2"))) static int lru_victim_avx2(const struct dpmu_uset *s,
							   uint32_t base)
{
	const uint8_t *state = s->state + base;
	const uint64_t *st = s->stamp + base;
	const uint32_t ways = s->ways;
	uint32_t w = 0;
	for (; w + 32 <= ways; w += 32) {
		__m256i z = _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(state + w)),
					      _mm256_setzero_si256());
		uint32_t bits = (uint32_t)_mm256_movemask_epi8(z);
		if (bits)
			return (int)(base + w + (uint32_t)__builtin_ctz(bits));
	}
	for (; w + 16 <= ways; w += 16) {
		__m128i z = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(state + w)),
					   _mm_setzero_si128());
		uint32_t bits = (uint32_t)_mm_movemask_epi8(z);
		if (bits)
			return (int)(base + w + (uint32_t)__builtin_ctz(bits));
	}
	for (; w < ways; w++)
		if (!state[w])
			return (int)(base + w);

	const uint32_t v8 = ways & ~7u, v4 = ways & ~3u;
	__m256i m0 = _mm256_loadu_si256((const __m256i *)st);
	__m256i m1 = _mm256_loadu_si256((const __m256i *)(st + 4));
	for (w = 8; w < v8; w += 8) {
		m0 = min_epu63(m0, _mm256_loadu_si256((const __m256i *)(st + w)));
		m1 = min_epu63(m1, _mm256_loadu_si256((const __m256i *)(st + w + 4)));
	}
	if (v4 > v8)
		m0 = min_epu63(m0, _mm256_loadu_si256((const __m256i *)(st + v8)));
	m0 = min_epu63(m0, m1);
	/* With the other half, then the other of each pair: every lane
	 * holds the minimum. */
	m0 = min_epu63(m0, _mm256_permute4x64_epi64(m0, 0x4e));
	m0 = min_epu63(m0, _mm256_shuffle_epi32(m0, 0x4e));
	uint64_t min = (uint64_t)_mm_cvtsi128_si64(_mm256_castsi256_si128(m0));
	for (w = v4; w < ways; w++)
		if (st[w] < min)
			min = st[w];
	/* The first way holding it. */
	m0 = _mm256_set1_epi64x((long long)min);
	for (w = 0; w < v8; w += 8) {
		__m256i e0 = _mm256_cmpeq_epi64(m0, _mm256_loadu_si256((const __m256i *)(st + w)));
		__m256i e1 =
			_mm256_cmpeq_epi64(m0, _mm256_loadu_si256((const __m256i *)(st + w + 4)));
		uint32_t bits = (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(e0)) |
				(uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(e1)) << 4;
		if (bits)
			return (int)(base + w + (uint32_t)__builtin_ctz(bits));
	}
	while (st[w] != min)
		w++;
	return (int)(base + w);
}
#endif

static bool lru_avx2(void)
{
#ifdef DPMU_LRU_AVX2
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
#else
	return false;
#endif
}

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static uint32_t log2u(uint64_t x)
{
	return (uint32_t)(63 - __builtin_clzll(x));
}

/* Slots up to which a hint grows beyond one per block (16 KiB of slot
 * numbers, within a host's L1): a TLB's 48 entries get 1024, an L1's 1024
 * lines 4096; an L2 or L3 keeps one per block. */
#define DPMU_USET_HINT_SMALL 4096u

int dpmu_uset_init(struct dpmu_uset *s, const char *what, uint64_t size, uint32_t ways,
		   uint32_t block, enum dpmu_replacement repl, uint64_t seed, struct dpmu_err *err)
{
	memset(s, 0, sizeof *s);
	if (!is_pow2(block) || block < 2)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "%s: block size %u is not a power of two of at least 2 bytes",
				    what, block);
	if (ways == 0 || ways > 64)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: %u ways (1 to 64)", what, ways);
	if (size == 0 || size % ((uint64_t)ways * block) != 0)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "%s: size %llu is not a multiple of ways (%u) x block (%u)",
				    what, (unsigned long long)size, ways, block);
	if (repl != DPMU_REPL_LRU && repl != DPMU_REPL_PLRU && repl != DPMU_REPL_RANDOM)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: replacement policy %d unknown", what,
				    (int)repl);
	uint64_t sets = size / ((uint64_t)ways * block);
	if (sets > (1u << 24))
		return dpmu_err_set(err, DPMU_EINVAL, "%s: %llu sets (at most 2^24)", what,
				    (unsigned long long)sets);
	s->sets = (uint32_t)sets;
	s->ways = ways;
	s->shift = log2u(block);
	s->above_block = ~((uint64_t)block - 1);
	s->pow2 = is_pow2(sets);
	s->set_mask = s->pow2 ? s->sets - 1 : 0;
	s->repl = repl;
	/* A fixed, per-array seed: the same input gives the same victims. */
	s->rng = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
	if (!s->rng)
		s->rng = 1;
	size_t n = (size_t)sets * ways;
	s->tag = calloc(n, sizeof *s->tag);
	s->state = calloc(n, sizeof *s->state);
	s->stamp = calloc(n, sizeof *s->stamp);
	s->mru = calloc(s->sets, sizeof *s->mru);
	if (repl == DPMU_REPL_PLRU)
		s->mark = calloc(n, sizeof *s->mark);
	if (repl == DPMU_REPL_LRU)
		s->run = calloc(s->sets, sizeof *s->run);
	/* + 16: a search reads whole 8- or 16-byte words, past the last set
	 * too. */
	s->fp = malloc(n + 16);
	s->way_shift = is_pow2(ways) ? (int)log2u(ways) : -1;
	s->all_ways = ways == 64 ? ~0ull : (1ull << ways) - 1;
	s->lru_vector = repl == DPMU_REPL_LRU && ways >= DPMU_LRU_VECTOR_WAYS && lru_avx2();
	/* The hint has a slot for every block, up to sixteen for a small
	 * array: two blocks the array holds whose slots coincide (pages or
	 * lines a multiple of the hint's reach apart) send a hit to the
	 * search, which on a fully-associative TLB reads every way. */
	uint64_t hn = 1;
	while (hn < n || (hn < 16 * (uint64_t)n && hn < DPMU_USET_HINT_SMALL))
		hn <<= 1;
	s->hint_mask = (uint32_t)(hn - 1);
	s->hint = calloc(hn, sizeof *s->hint);
	if (!s->tag || !s->state || !s->stamp || !s->mru || !s->hint || !s->fp ||
	    (repl == DPMU_REPL_PLRU && !s->mark) || (repl == DPMU_REPL_LRU && !s->run)) {
		dpmu_uset_free(s);
		return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory for %zu blocks", what, n);
	}
	for (size_t i = 0; i < n; i++)
		s->tag[i] = DPMU_TAG_NONE;
	memset(s->fp, dpmu_uset_fp(DPMU_TAG_NONE), n + 16);
	return 0;
}

void dpmu_uset_hint_one(struct dpmu_uset *s)
{
	uint32_t *h = realloc(s->hint, sizeof *s->hint);
	if (h)
		s->hint = h; /* else the old array serves: its first slot is the hint */
	s->hint[0] = 0;
	s->hint_mask = 0;
}

int dpmu_uset_hint_two(struct dpmu_uset *s, const char *what, struct dpmu_err *err)
{
	size_t hn = (size_t)s->hint_mask + 1;
	s->hint2 = calloc(hn, sizeof *s->hint2);
	s->held2 = calloc(hn, sizeof *s->held2);
	if (s->hint2 && s->held2)
		return 0;
	free(s->hint2);
	free(s->held2);
	s->hint2 = NULL;
	s->held2 = NULL;
	return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory for its second hint", what);
}

void dpmu_uset_free(struct dpmu_uset *s)
{
	free(s->tag);
	free(s->state);
	free(s->stamp);
	free(s->mru);
	free(s->mark);
	free(s->run);
	free(s->fp);
	free(s->hint);
	free(s->hint2);
	free(s->held2);
	s->hint2 = NULL;
	s->held2 = NULL;
	s->mru = NULL;
	s->mark = NULL;
	s->run = NULL;
	s->fp = NULL;
	s->hint = NULL;
	s->tag = NULL;
	s->state = NULL;
	s->stamp = NULL;
}

static inline uint32_t set_of(const struct dpmu_uset *s, uint32_t slot)
{
	return s->way_shift >= 0 ? slot >> s->way_shift : slot / s->ways;
}

void dpmu_uset_mark(struct dpmu_uset *s, uint32_t slot)
{
	/* Bit-PLRU (MRU bits, one mask per set): mark the way; when every
	 * way is marked, clear all marks but this one. Works for any way
	 * count, unlike tree PLRU. mark[] mirrors the bits per slot, so a
	 * hit on a marked way needs neither its set nor its bit. */
	uint32_t set = set_of(s, slot);
	uint32_t base = set * s->ways;
	uint64_t bit = 1ull << (slot - base);
	uint64_t m = s->mru[set] | bit;
	if (m == s->all_ways) {
		m = bit;
		memset(s->mark + base, 0, s->ways);
	}
	s->mru[set] = m;
	s->mark[slot] = 1;
}

static uint64_t xorshift64(uint64_t *st)
{
	uint64_t x = *st;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *st = x;
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* Bytes of v that are zero get their high bit set (and, above a zero
 * byte, possibly a 0x01 byte too: callers check what a flag points at). */
static inline uint64_t zero_bytes(uint64_t v)
{
	return (v - ONES) & ~v & HIGHS;
}

/* Eight bytes of p as a word whose byte i is p[i]. */
static inline uint64_t load8(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

#ifdef __SSE2__
/* The search of a set of 16 ways or more, 16 fingerprints to an SSE2
 * compare (the x86-64 base): every way's match in one mask, so a block the
 * set lacks (most fingerprints match no way) costs three compares for 48
 * ways and no tag. */
static int search_wide(const struct dpmu_uset *s, uint64_t blk, uint32_t base)
{
	const uint32_t ways = s->ways;
	const __m128i pat = _mm_set1_epi8((char)dpmu_uset_fp(blk));
	uint64_t m = 0;
	for (uint32_t w = 0; w < ways; w += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(s->fp + base + w));
		m |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, pat)) << w;
	}
	for (m &= s->all_ways; m; m &= m - 1) {
		uint32_t slot = base + (uint32_t)__builtin_ctzll(m);
		if (s->tag[slot] == blk && s->state[slot])
			return (int)slot;
	}
	return -1;
}
#endif

/* The search of a set of more than eight ways. Not inline in search():
 * the registers its loops need would cost the one-word sets a prologue. */
__attribute__((noinline)) static int search_long(const struct dpmu_uset *s, uint64_t blk,
						 uint32_t base)
{
	const uint32_t ways = s->ways;
#ifdef __SSE2__
	if (ways >= 16)
		return search_wide(s, blk, base);
#endif
	const uint8_t *fp = s->fp + base;
	const uint64_t pat = ONES * dpmu_uset_fp(blk);
	for (uint32_t w = 0; w < ways; w += 8) {
		/* A zero byte where a way's fingerprint matches. */
		uint64_t z = zero_bytes(load8(fp + w) ^ pat);
		if (!z)
			continue;
		if (ways - w < 8) /* bytes past the set's last way */
			z &= (1ull << (8 * (ways - w))) - 1;
		for (; z; z &= z - 1) {
			uint32_t slot = base + w + ((uint32_t)__builtin_ctzll(z) >> 3);
			if (s->tag[slot] == blk && s->state[slot])
				return (int)slot;
		}
	}
	return -1;
}

static int search(const struct dpmu_uset *s, uint64_t blk)
{
	const uint32_t ways = s->ways;
	const uint32_t base = dpmu_uset_index(s, blk) * ways;
	if (ways > 8)
		return search_long(s, blk, base);
	/* One word (the L2s, the L2 TLB and the L1Is of the shipped
	 * profiles). */
	uint64_t z = zero_bytes(load8(s->fp + base) ^ (ONES * dpmu_uset_fp(blk)));
	if (ways < 8) /* bytes past the set's last way */
		z &= (1ull << (8 * ways)) - 1;
	for (; z; z &= z - 1) {
		uint32_t slot = base + ((uint32_t)__builtin_ctzll(z) >> 3);
		if (s->tag[slot] == blk && s->state[slot])
			return (int)slot;
	}
	return -1;
}

int dpmu_uset_search(const struct dpmu_uset *s, uint64_t blk)
{
	return search(s, blk);
}

int dpmu_uset_search_learn(struct dpmu_uset *s, uint64_t blk)
{
	uint32_t *h2 = &s->hint2[dpmu_uset_hint2_slot(s, blk)];
	if (s->tag[*h2] == blk && s->state[*h2])
		return (int)*h2;
	int slot = search(s, blk);
	if (slot >= 0)
		*h2 = (uint32_t)slot;
	return slot;
}

/* Index of the first zero byte of p[0..n), or -1: eight at a time with
 * the has-zero-byte trick (the lowest flagged byte is the first zero). */
static int first_zero_byte(const uint8_t *p, uint32_t n)
{
	uint32_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; i + 8 <= n; i += 8) {
		uint64_t v;
		memcpy(&v, p + i, 8);
		uint64_t z = zero_bytes(v);
		if (z)
			return (int)(i + ((uint32_t)__builtin_ctzll(z) >> 3));
	}
#endif
	for (; i < n; i++)
		if (!p[i])
			return (int)i;
	return -1;
}

/* The oldest way of a full LRU set (the first of equals, though valid
 * ways' stamps differ): the next of its run when that is still right, else
 * a scan that also finds the run of the ways after it. */
static uint32_t lru_victim(struct dpmu_uset *s, uint32_t set)
{
	const uint64_t *st = s->stamp + (size_t)set * s->ways;
	struct dpmu_lru_run *r = &s->run[set];
	uint8_t i = r->next;
	if (i && i < r->n && st[r->way[i - 1]] != r->stamp[i - 1] &&
	    st[r->way[i]] == r->stamp[i]) {
		r->next++;
		return r->way[i];
	}
	uint64_t o[DPMU_LRU_RUN];
	uint32_t b[DPMU_LRU_RUN] = { 0 };
	for (unsigned k = 0; k < DPMU_LRU_RUN; k++)
		o[k] = UINT64_MAX; /* no stamp is that large */
	uint64_t cut = UINT64_MAX; /* o[DPMU_LRU_RUN - 1], kept in a register */
	for (uint32_t w = 0; w < s->ways; w++) {
		uint64_t t = st[w];
		if (t >= cut)
			continue; /* not among the oldest (or a later equal) */
		unsigned k = DPMU_LRU_RUN - 1;
		for (; k > 0 && t < o[k - 1]; k--) {
			o[k] = o[k - 1];
			b[k] = b[k - 1];
		}
		o[k] = t;
		b[k] = w;
		cut = o[DPMU_LRU_RUN - 1];
	}
	r->n = (uint8_t)(s->ways < DPMU_LRU_RUN ? s->ways : DPMU_LRU_RUN);
	for (unsigned k = 0; k < r->n; k++) {
		r->way[k] = b[k];
		r->stamp[k] = o[k];
	}
	r->next = 1;
	return b[0];
}

int dpmu_uset_victim(struct dpmu_uset *s, uint64_t blk)
{
	uint32_t set = dpmu_uset_index(s, blk);
	uint32_t base = set * s->ways;
#ifdef DPMU_LRU_AVX2
	if (s->lru_vector)
		return lru_victim_avx2(s, base);
#endif
	int inv = first_zero_byte(s->state + base, s->ways);
	if (inv >= 0)
		return (int)base + inv;
	switch (s->repl) {
	case DPMU_REPL_RANDOM:
		return (int)(base + xorshift64(&s->rng) % s->ways);
	case DPMU_REPL_PLRU: {
		/* The first way not recently used: with two ways or more
		 * the mask is never full; one way (direct-mapped) is always
		 * marked and is the victim. */
		uint64_t free_ways = ~s->mru[set] & s->all_ways;
		return (int)(base + (free_ways ? (uint32_t)__builtin_ctzll(free_ways) : 0));
	}
	case DPMU_REPL_LRU:
	default:
		return (int)(base + lru_victim(s, set));
	}
}
