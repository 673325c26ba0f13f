/*
 * State of the microarchitectural engine, shared by the files of src/uarch.
 *
 *   events.c   the happenings the engine counts and their event numbers
 *              (core PMU; DSU classic and DSU-120 numberings)
 *   cache.c    a set-associative array: lookup, fill, victim choice
 *              (lru | plru | random); also used for TLBs and the snoop filter
 *   bpred.c    branch direction (bimodal | gshare), BTB, return stack
 *   mem.c      the hierarchy: L1I/L1D/L2 per core, L3 + snoop filter per
 *              cluster, MESI coherence, bus and DRAM
 *   timing.h   dependence timing (inline)
 *   retire.h   one retired instruction, inline for the retire loop and the
 *              block path
 *   uarch.c    create/destroy, the retire loop, batched delivery
 *   ublock.h/c translated blocks' summaries: steps, held class events,
 *              dependence summary, clean template
 *   block_run.c  the block path: a summary's execution on a core
 *   trace.c    the trace unit's view of retired instructions
 */
#ifndef DPMU_UARCH_INTERNAL_H
#define DPMU_UARCH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dynpmu/uarch.h"

/* ---- happenings (events.c) ------------------------------------------------ */

/* Core-PMU events the engine derives: X(NAME, code). The code is the
 * architected / Cortex-A75/A55 number (reference section 5, Arm ARM D17). */
#define DPMU_UEV_LIST(X)                                                        \
	X(L1I_CACHE_REFILL, 0x01) X(L1I_TLB_REFILL, 0x02)                        \
	X(L1D_CACHE_REFILL, 0x03) X(L1D_CACHE, 0x04) X(L1D_TLB_REFILL, 0x05)     \
	X(LD_RETIRED, 0x06) X(ST_RETIRED, 0x07) X(INST_RETIRED, 0x08)            \
	X(EXC_TAKEN, 0x09) X(EXC_RETURN, 0x0A) X(PC_WRITE_RETIRED, 0x0C)         \
	X(BR_IMMED_RETIRED, 0x0D) X(BR_RETURN_RETIRED, 0x0E)                     \
	X(UNALIGNED_LDST_RETIRED, 0x0F) X(BR_MIS_PRED, 0x10) X(BR_PRED, 0x12)    \
	X(MEM_ACCESS, 0x13) X(L1I_CACHE, 0x14) X(L1D_CACHE_WB, 0x15)             \
	X(L2D_CACHE, 0x16) X(L2D_CACHE_REFILL, 0x17) X(L2D_CACHE_WB, 0x18)       \
	X(BUS_ACCESS, 0x19) X(INST_SPEC, 0x1B) X(L1D_CACHE_ALLOCATE, 0x1F)       \
	X(L2D_CACHE_ALLOCATE, 0x20) X(BR_RETIRED, 0x21)                          \
	X(BR_MIS_PRED_RETIRED, 0x22) X(STALL_FRONTEND, 0x23)                     \
	X(STALL_BACKEND, 0x24) X(L1D_TLB, 0x25) X(L1I_TLB, 0x26)                 \
	X(L3D_CACHE_ALLOCATE, 0x29) X(L3D_CACHE_REFILL, 0x2A) X(L3D_CACHE, 0x2B) \
	X(L2D_TLB_REFILL, 0x2D) X(L2I_TLB_REFILL, 0x2E) X(L2D_TLB, 0x2F)         \
	X(L2I_TLB, 0x30)                                                         \
	X(DTLB_WALK, 0x34) X(ITLB_WALK, 0x35) X(LL_CACHE_RD, 0x36)               \
	X(LL_CACHE_MISS_RD, 0x37)                                                \
	X(L1D_CACHE_RD, 0x40) X(L1D_CACHE_WR, 0x41)                              \
	X(L1D_CACHE_REFILL_RD, 0x42) X(L1D_CACHE_REFILL_WR, 0x43)                \
	X(L1D_CACHE_REFILL_INNER, 0x44) X(L1D_CACHE_REFILL_OUTER, 0x45)          \
	X(L1D_CACHE_WB_VICTIM, 0x46) X(L1D_CACHE_WB_CLEAN, 0x47)                 \
	X(L1D_CACHE_INVAL, 0x48)                                                 \
	X(L1D_TLB_REFILL_RD, 0x4C) X(L1D_TLB_REFILL_WR, 0x4D)                    \
	X(L1D_TLB_RD, 0x4E) X(L1D_TLB_WR, 0x4F)                                  \
	X(L2D_CACHE_RD, 0x50) X(L2D_CACHE_WR, 0x51)                              \
	X(L2D_CACHE_REFILL_RD, 0x52) X(L2D_CACHE_REFILL_WR, 0x53)                \
	X(L2D_CACHE_WB_VICTIM, 0x56) X(L2D_CACHE_WB_CLEAN, 0x57)                 \
	X(L2D_CACHE_INVAL, 0x58)                                                 \
	X(L2D_TLB_REFILL_RD, 0x5C) X(L2D_TLB_REFILL_WR, 0x5D)                    \
	X(L2D_TLB_RD, 0x5E) X(L2D_TLB_WR, 0x5F)                                  \
	X(BUS_ACCESS_RD, 0x60) X(BUS_ACCESS_WR, 0x61)                            \
	X(MEM_ACCESS_RD, 0x66) X(MEM_ACCESS_WR, 0x67)                            \
	X(UNALIGNED_LD_SPEC, 0x68) X(UNALIGNED_ST_SPEC, 0x69)                    \
	X(UNALIGNED_LDST_SPEC, 0x6A) X(LDREX_SPEC, 0x6C)                         \
	X(STREX_PASS_SPEC, 0x6D) X(STREX_FAIL_SPEC, 0x6E) X(STREX_SPEC, 0x6F)    \
	X(LD_SPEC, 0x70) X(ST_SPEC, 0x71) X(LDST_SPEC, 0x72) X(DP_SPEC, 0x73)    \
	X(ASE_SPEC, 0x74) X(VFP_SPEC, 0x75) X(PC_WRITE_SPEC, 0x76)               \
	X(CRYPTO_SPEC, 0x77) X(BR_IMMED_SPEC, 0x78) X(BR_RETURN_SPEC, 0x79)      \
	X(BR_INDIRECT_SPEC, 0x7A) X(ISB_SPEC, 0x7C) X(DSB_SPEC, 0x7D)            \
	X(DMB_SPEC, 0x7E) X(EXC_SVC, 0x82)                                       \
	X(L3D_CACHE_RD, 0xA0) X(L3D_CACHE_REFILL_RD, 0xA2)                      \
	X(STALL_BACKEND_MEM, 0x4005)

#define DPMU_UEV_ENUM(name, code) DPMU_UEV_##name,
enum dpmu_uev { DPMU_UEV_LIST(DPMU_UEV_ENUM) DPMU_UEV_COUNT };
#undef DPMU_UEV_ENUM

/* Implementation-defined core events, found by name in the core type's
 * catalog (their numbers differ between Cortex-A75 and Cortex-A55: 0xC0 is
 * LF_STALL on one and L3D_CACHE_REFILL_PREFETCH on the other). */
#define DPMU_IEV_LIST(X)                                                        \
	X(L1D_CACHE_REFILL_PREFETCH) X(L2D_CACHE_REFILL_PREFETCH)                \
	X(L3D_CACHE_REFILL_PREFETCH) X(BR_COND_PRED) X(BR_COND_MIS_PRED)         \
	X(BR_INDIRECT_ADDR_PRED) X(BR_INDIRECT_MIS_PRED)                         \
	X(BR_INDIRECT_ADDR_MIS_PRED) X(BR_RETURN_ADDR_PRED)                      \
	X(BR_RETURN_ADDR_MIS_PRED) X(STALL_FRONTEND_CACHE) X(STALL_FRONTEND_TLB) \
	X(STALL_BACKEND_LD) X(STALL_BACKEND_LD_CACHE) X(STALL_BACKEND_LD_TLB)    \
	X(STALL_BACKEND_ST) X(STALL_BACKEND_ST_STB)

#define DPMU_IEV_ENUM(name) DPMU_IEV_##name,
enum dpmu_iev { DPMU_IEV_LIST(DPMU_IEV_ENUM) DPMU_IEV_COUNT };
#undef DPMU_IEV_ENUM

/* Codes of the implementation-defined events in a core catalog
 * (DPMU_UEV_NONE where the catalog has no such event). */
void dpmu_iev_codes(const char *catalog, uint16_t codes[DPMU_IEV_COUNT]);

/* Cluster-PMU happenings, numbered per DSU numbering in events.c. */
enum dpmu_cev {
	DPMU_CEV_L3_ACCESS,        /* every request from a core's L2 to the L3 */
	DPMU_CEV_L3_ACCESS_RD,
	DPMU_CEV_L3_ACCESS_WR,
	DPMU_CEV_L3_HIT,           /* lookups that found the line */
	DPMU_CEV_L3_MISS,          /* lookups that did not */
	DPMU_CEV_L3_MISS_RD,
	DPMU_CEV_L3_MISS_WR,
	DPMU_CEV_L3_REFILL,        /* lines fetched from beyond the cluster */
	DPMU_CEV_L3_REFILL_RD,
	DPMU_CEV_L3_REFILL_WR,
	DPMU_CEV_L3_ALLOCATE,      /* allocation without refill (L2 write-back) */
	DPMU_CEV_L3_WB,            /* L3 victim written back to memory */
	DPMU_CEV_L3_EVICT,         /* L3 victims, clean or dirty */
	DPMU_CEV_BUS_ACCESS,       /* beats on the DSU master interface */
	DPMU_CEV_BUS_ACCESS_RD,
	DPMU_CEV_BUS_ACCESS_WR,
	DPMU_CEV_MEM_READ,         /* line fills requested from memory */
	DPMU_CEV_MEM_WRITE,        /* write-backs sent to memory */
	DPMU_CEV_SF_ACCESS,        /* snoop-filter lookups */
	DPMU_CEV_SF_HIT,           /* ... that found another core holding the line */
	DPMU_CEV_SF_NO_SNOOP,      /* ... that needed no core to be snooped */
	DPMU_CEV_SNOOP_REQ,        /* snoop requests sent to cores */
	DPMU_CEV_SNOOP_DATA,       /* snoops that returned data (core to core) */
	DPMU_CEV_SNOOP_INVAL,      /* snoops that invalidated a core's copy */
	DPMU_CEV_SF_EVICT,         /* snoop-filter capacity back-invalidations */
	DPMU_CEV_BUS_CYCLES,       /* DSU clock cycles (delivered with the clock) */
	DPMU_CEV_COUNT
};

#define DPMU_UEV_NONE 0xffffu

/* Events that are sums of others (LD_RETIRED = LD_SPEC, L1D_CACHE =
 * L1D_CACHE_RD + L1D_CACHE_WR, ...) are not counted on the hot path but
 * computed at delivery, and only when something counts them. Returns how
 * many events `e` sums (0: the engine counts it itself) and stores them in
 * src; the summed events are never derived themselves, so a delivery adds
 * pend[] of the sources to pend[e] (which the engine leaves 0). */
unsigned dpmu_uev_sources(enum dpmu_uev e, enum dpmu_uev src[2]);
const char *dpmu_uev_name(enum dpmu_uev e);
uint16_t dpmu_uev_code(enum dpmu_uev e);
/* Code of a cluster happening in a numbering, resolved against the cluster's
 * catalog when it is available; DPMU_UEV_NONE when the numbering has none. */
void dpmu_cev_codes(const struct dpmu_cluster_params *cp, uint16_t codes[DPMU_CEV_COUNT]);
/* The table row, for docs and tests. */
const char *dpmu_cev_name(enum dpmu_cev e, enum dpmu_dsu_numbering num);

/* ---- set-associative arrays (cache.c) -------------------------------------- */

/* MESI line states (L1D, L2); L1I, TLB and snoop-filter entries use only
 * INVALID and a non-zero "valid" value. */
enum { DPMU_LINE_I = 0, DPMU_LINE_S = 1, DPMU_LINE_E = 2, DPMU_LINE_M = 3 };

/* LRU: the oldest ways of a set in order, as its last full scan found
 * them. Stamps only grow, so while each victim taken from the run has
 * been refilled (its stamp changed) the next untouched one is the oldest
 * way of the set: the next victims need no scan. */
#define DPMU_LRU_RUN 4
struct dpmu_lru_run {
	uint32_t way[DPMU_LRU_RUN];
	uint64_t stamp[DPMU_LRU_RUN];
	uint8_t n, next;           /* ways in the run; the next to hand out */
};

struct dpmu_uset {
	/* The fields the inline lookups (dpmu_mem_op, dpmu_mem_fetch,
	 * dpmu_uset_find and dpmu_uset_reuse) read, first and in one cache
	 * line; the rest serves searches, fills and victims. */
	uint32_t *hint;            /* [hint_mask + 1]: slot a block was last seen in */
	uint64_t *tag;             /* [sets * ways]: block number; DPMU_TAG_NONE when invalid */
	uint8_t *state;            /* [sets * ways] */
	uint8_t *mark;             /* PLRU only, [sets * ways]: the way's bit in mru (else NULL) */
	uint32_t hint_mask;
	uint32_t shift;            /* log2 of the block (line or page) size */
	uint64_t above_block;      /* ~(block size - 1): the address bits above an offset */
	uint64_t *stamp;           /* [sets * ways]: LRU time */
	uint64_t clock;
	enum dpmu_replacement repl;
	uint32_t sets, ways;
	uint32_t set_mask;         /* sets - 1 when sets is a power of two */
	bool pow2;
	int way_shift;             /* log2(ways) when ways is a power of two, else -1 */
	uint64_t all_ways;         /* mask of every way of a set (PLRU) */
	uint8_t *fp;               /* [sets * ways + 8]: dpmu_uset_fp of each slot's tag */
	uint64_t *mru;             /* [sets]: PLRU most-recently-used way bits */
	struct dpmu_lru_run *run;  /* LRU only, [sets] (else NULL) */
	bool lru_vector;           /* LRU: victims by the vector scan (cache.c), not the run */
	uint64_t rng;              /* xorshift64 state (random replacement) */
	/* A wide L1 TLB's (dpmu_uset_hint_two), else NULL: a second hint,
	 * [hint_mask + 1], on a hash of the whole block number, that
	 * dpmu_uset_search_learn asks before it reads the set. Blocks the
	 * first hint's low bits confuse (pages 4 MiB apart for a 1024-slot
	 * TLB hint) rarely share a slot here too. It learns a block's slot
	 * where a search had to read the set for it and where a TLB fill puts
	 * it (mem.c), not at every touch or victim. */
	uint32_t *hint2;
	/* With hint2: how many valid blocks take each of its slots. Kept by
	 * the TLB fill (mem.c), the only change of a TLB's entries, and read
	 * only by the TLB lookups there: a page whose slot counts none is not
	 * in the TLB, a miss known without the search. */
	uint32_t *held2;
};

/* Ways from which a TLB set's search (a call and up to four 16-byte
 * compares, then tags) is worth a second hint and its slot counts: two
 * more words per slot of the first hint, 8 KiB for a 48-way TLB's 1024. */
#define DPMU_USET_HINT2_WAYS 32

/* The tag of an invalid slot. Blocks are at least 2 bytes, so no block
 * number of an address equals it: a slot whose tag matches such a number
 * is valid (a prefetcher's computed block can still wrap to it, so
 * dpmu_uset_find checks the state too). */
#define DPMU_TAG_NONE UINT64_MAX

int dpmu_uset_init(struct dpmu_uset *s, const char *what, uint64_t size, uint32_t ways,
		   uint32_t block, enum dpmu_replacement repl, uint64_t seed, struct dpmu_err *err);
void dpmu_uset_free(struct dpmu_uset *s);
/* For an array looked up only by set search (mem.c's cluster arrays, far
 * larger than a host cache: cl_find): a hint of one slot, still checked
 * wherever a generic lookup reads it, instead of one word per block that
 * nothing reads. */
void dpmu_uset_hint_one(struct dpmu_uset *s);
/* For an L1 TLB of DPMU_USET_HINT2_WAYS ways or more, which mem.c's TLB
 * code keeps: the second hint and its slot counts (hint2, held2). */
int dpmu_uset_hint_two(struct dpmu_uset *s, const char *what, struct dpmu_err *err);

static inline uint32_t dpmu_uset_index(const struct dpmu_uset *s, uint64_t blk)
{
	return s->pow2 ? (uint32_t)(blk & s->set_mask) : (uint32_t)(blk % s->sets);
}

/* One byte of a block number's hash, kept per slot: a set is searched
 * eight fingerprints at a time, and only the ways whose fingerprint
 * matches compare their tag. The high byte of a multiplicative hash,
 * because the blocks of one set share their low (index) bits. */
static inline uint8_t dpmu_uset_fp(uint64_t blk)
{
	return (uint8_t)((blk * 0x9e3779b97f4a7c15ull) >> 56);
}

/* The second hint's slot of `blk`: bits 32 up of its multiplicative hash,
 * which depend on every bit of a page number of a 48-bit address (the
 * fingerprint takes the top byte of the same product). */
static inline uint32_t dpmu_uset_hint2_slot(const struct dpmu_uset *s, uint64_t blk)
{
	return (uint32_t)((blk * 0x9e3779b97f4a7c15ull) >> 32) & s->hint_mask;
}

/* The slot of `blk` in its set, or -1: the search of the set
 * (dpmu_uset_find without the hint). */
int dpmu_uset_search(const struct dpmu_uset *s, uint64_t blk);
/* The same for an array with a second hint (dpmu_uset_hint_two): the
 * second hint's slot when it holds the block, else the search, which the
 * second hint then learns. A block is in at most one way, so the answer
 * is the same. */
int dpmu_uset_search_learn(struct dpmu_uset *s, uint64_t blk);

/* dpmu_uset_search inline for a set of 16 ways (the DSU L3 and the snoop
 * filter of the shipped profiles: a hot caller saves the call and the
 * loop over words); other geometries call it. The same answer: the first
 * way whose fingerprint and tag match and whose state is valid. */
static inline int dpmu_uset_search16(const struct dpmu_uset *s, uint64_t blk)
{
	if (s->ways != 16)
		return dpmu_uset_search(s, blk);
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	const uint32_t base = dpmu_uset_index(s, blk) * 16;
	const uint64_t pat = ones * dpmu_uset_fp(blk);
	uint64_t w[2];
	__builtin_memcpy(w, s->fp + base, sizeof w);
	for (unsigned h = 0; h < 2; h++) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		uint64_t v = __builtin_bswap64(w[h]) ^ pat; /* byte i is way i */
#else
		uint64_t v = w[h] ^ pat;
#endif
		/* A high bit in each byte that is zero, where a way's
		 * fingerprint matches (and maybe above one: checked). */
		for (uint64_t z = (v - ones) & ~v & highs; z; z &= z - 1) {
			uint32_t slot = base + 8 * h + ((uint32_t)__builtin_ctzll(z) >> 3);
			if (s->tag[slot] == blk && s->state[slot])
				return (int)slot;
		}
	}
	return -1;
}

/* Slot of block `blk` (a block number, address >> shift), or -1. A
 * direct-mapped hint of where each block was last touched answers most
 * lookups without searching the set; it is checked, so never wrong. */
static inline int dpmu_uset_find(const struct dpmu_uset *s, uint64_t blk)
{
	uint32_t h = s->hint[blk & s->hint_mask];
	if (s->tag[h] == blk && s->state[h])
		return (int)h;
	return dpmu_uset_search(s, blk);
}

/* Ask the host's memory for the lines of the set of `blk` that a search
 * and a hit read (fingerprints, states, PLRU marks, tags: the first and
 * the last way's, all of them up to 16 ways), without waiting for them:
 * for an array far larger than the host's caches, looked up after other
 * work that needs none of it. Changes nothing. */
static inline void dpmu_uset_prefetch(const struct dpmu_uset *s, uint64_t blk)
{
	size_t base = (size_t)dpmu_uset_index(s, blk) * s->ways;
	__builtin_prefetch(s->fp + base);
	__builtin_prefetch(s->state + base);
	if (s->mark)
		__builtin_prefetch(s->mark + base);
	__builtin_prefetch(s->tag + base);
	__builtin_prefetch(s->tag + base + s->ways - 1);
}

/* Put block `blk` in `slot` with (valid) state `st`. */
static inline void dpmu_uset_put(struct dpmu_uset *s, int slot, uint64_t blk, uint8_t st)
{
	s->tag[slot] = blk;
	s->fp[slot] = dpmu_uset_fp(blk);
	s->state[slot] = st;
}

/* PLRU: set the MRU bit of `slot` (it was clear). */
void dpmu_uset_mark(struct dpmu_uset *s, uint32_t slot);

/* A hit on `slot` found through its hint (so the hint already points at
 * it): only the replacement state learns it. PLRU is tested first, the
 * caches' policy in the shipped profiles. */
static inline void dpmu_uset_reuse(struct dpmu_uset *s, uint32_t slot)
{
	if (s->mark) {
		if (!s->mark[slot]) /* a marked way stays marked */
			dpmu_uset_mark(s, slot);
	} else if (s->repl == DPMU_REPL_LRU) {
		s->stamp[slot] = ++s->clock;
	}
}

/* A hit or fill of `slot`: the replacement state and the hint learn it. */
static inline void dpmu_uset_touch(struct dpmu_uset *s, int slot)
{
	s->hint[s->tag[slot] & s->hint_mask] = (uint32_t)slot;
	dpmu_uset_reuse(s, (uint32_t)slot);
}

/* Invalidate `slot` (its tag becomes DPMU_TAG_NONE). */
static inline void dpmu_uset_drop(struct dpmu_uset *s, int slot)
{
	s->state[slot] = DPMU_LINE_I;
	s->tag[slot] = DPMU_TAG_NONE;
	s->fp[slot] = dpmu_uset_fp(DPMU_TAG_NONE);
}

/* The slot a new block of this set goes to: an invalid way, else the
 * victim the replacement policy picks. The caller evicts what is there. */
int dpmu_uset_victim(struct dpmu_uset *s, uint64_t blk);

/* ---- branch prediction (bpred.c) ----------------------------------------- */

struct dpmu_bpred {
	/* dpmu_bpred_cond's fields first (every conditional branch) */
	uint8_t *pht;              /* 2-bit counters */
	uint32_t pht_mask;
	uint32_t ghist;            /* global history, xor-ed into the index (gshare) */
	uint32_t hist_mask;        /* 0 for bimodal: its history stays 0 */
	enum dpmu_bp_kind kind;
	uint32_t btb_mask;
	uint32_t ras_n, ras_top, ras_depth;
	uint64_t *btb_tag, *btb_target;
	uint64_t *ras;
};

int dpmu_bpred_init(struct dpmu_bpred *b, const struct dpmu_bp_params *p, struct dpmu_err *err);
void dpmu_bpred_free(struct dpmu_bpred *b);
/* dpmu_bpred_branch for calls, returns and indirect branches. */
bool dpmu_bpred_other(struct dpmu_bpred *b, const struct dpmu_insn *in);

/* A retired conditional branch at pc, taken t (0 or 1): true when its
 * direction was mispredicted; trains the predictor. */
static inline bool dpmu_bpred_cond(struct dpmu_bpred *b, uint64_t pc, uint32_t t)
{
	/* Next state of a 2-bit saturating counter, by 2 x counter + taken:
	 * 0 -> 0|1, 1 -> 0|2, 2 -> 1|3, 3 -> 2|3. */
	static const uint8_t next[8] = { 0, 1, 0, 2, 1, 3, 2, 3 };
	/* bimodal: PC; gshare: PC xor global history (which stays 0 for
	 * bimodal, so one index serves both). */
	uint32_t g = b->ghist; /* read once: the byte store below may alias it */
	uint32_t idx = ((uint32_t)(pc >> 2) ^ g) & b->pht_mask;
	uint32_t ctr = b->pht[idx];
	b->ghist = ((g << 1) | t) & b->hist_mask;
	b->pht[idx] = next[ctr * 2 + t];
	return (ctr >> 1) != t; /* predicted taken from 2 up */
}

/* One retired branch; returns true when it was mispredicted (direction,
 * target or return address), and trains the predictor. Conditional and
 * unconditional direct branches are inline. */
static inline bool dpmu_bpred_branch(struct dpmu_bpred *b, const struct dpmu_insn *in)
{
	if (in->br_kind == DPMU_BR_COND)
		return dpmu_bpred_cond(b, in->pc, in->taken != 0);
	if (in->br_kind == DPMU_BR_UNCOND)
		return false; /* the target is in the encoding */
	return dpmu_bpred_other(b, in);
}

/* ---- the hierarchy (mem.c) ------------------------------------------------ */

/* Stride-prefetcher table (per cache that prefetches). */
#define DPMU_PF_ENTRIES 64
struct dpmu_pf_entry {
	uint64_t pc, last;         /* pc + 1 (0: empty); the last block it touched */
	int64_t stride;
	uint8_t conf;
};

/* Train the stride table `pf` with an access of `pc` to block `blk`;
 * returns the block to prefetch, or 0. An entry per PC (a new PC takes the
 * entry over); a stride seen twice in a row is trusted. */
static inline uint64_t dpmu_stride_train(struct dpmu_pf_entry *pf, uint64_t pc, uint64_t blk)
{
	struct dpmu_pf_entry *e = &pf[(pc >> 2) & (DPMU_PF_ENTRIES - 1)];
	if (e->pc != pc + 1) {
		e->pc = pc + 1;
		e->last = blk;
		e->stride = 0;
		e->conf = 0;
		return 0;
	}
	int64_t st = (int64_t)(blk - e->last);
	if (st == 0)
		return 0;
	if (st == e->stride) {
		if (e->conf < 3)
			e->conf++;
	} else {
		e->stride = st;
		e->conf = 0;
	}
	e->last = blk;
	return e->conf >= 1 ? blk + (uint64_t)st : 0;
}

struct dpmu_ucache {
	struct dpmu_uset set;
	struct dpmu_pf_entry *pf;  /* stride table, or NULL (read by every L1D hit) */
	uint32_t latency;
	enum dpmu_prefetch prefetch;
};

/* One entry of a core's delivery list: the count is *p + *a + *b, p the
 * pending count of the event, a and b those of the events a derived event
 * sums (else the array's zero slot); the model takes count & to_model (all
 * ones or 0), the observer the count if to_obs. A list belongs to one core
 * and points into its arrays. */
struct dpmu_live {
	const uint64_t *p, *a, *b;
	uint64_t to_model;
	bool to_obs;
};

/* Block summaries a core holds with counts not yet added. A batch of the
 * default 256 instructions usually runs far fewer distinct blocks; a core
 * that fills the list adds its held counts to the pending ones early (the
 * same counts at the same delivery). */
/* ---- dependence timing (timing.h) ------------------------------------------- */

__extension__ typedef unsigned __int128 dpmu_u128;

/* A register's value: when it is ready (milli-cycles of the core's clock,
 * work_milli + 1000 x stall_cycles) and, for a wait on it, how the load
 * it came from spent its time, from the end: `mem` milli-cycles beyond
 * the L1D (a miss buffer, the L2, L3, DRAM), before them the L1D's
 * latency, before that `tlb` of translation. */
struct dpmu_ureg {
	uint64_t ready;
	uint32_t mem, tlb;
};

/* An instruction that completes later than every older one: the reorder
 * window's oldest incomplete instructions retire when it does. */
struct dpmu_urob {
	uint64_t seq, ret;
	uint32_t mem, tlb;
};

struct dpmu_utiming {
	uint32_t window;             /* reorder window; 0: in order */
	uint32_t nmb;                /* miss buffers */
	uint32_t l1_milli;           /* L1D load-to-use latency x 1000 */
	uint32_t exe_milli[DPMU_EX_COUNT]; /* execution latency by class x 1000 */
	uint32_t rob_mask;           /* ring size - 1 */
	uint32_t rob_head, rob_n;
	uint64_t rob_last;           /* the latest completion pushed */
	uint64_t rob_span;           /* window x dispatch slot (rob_push) */
	bool l1_short;               /* an L1D hit completes within rob_span */
	struct dpmu_urob *rob;       /* ring of rob_mask + 1 (NULL in order) */
	uint64_t mb[DPMU_MISS_BUFFERS_MAX]; /* when each miss buffer frees */
	/* waits in milli-cycles not yet counted as whole stall cycles */
	uint64_t rem_tlb, rem_l1, rem_mem, rem_core;
	struct dpmu_ureg reg[DPMU_REG_COUNT]; /* reg[0]: "none", always ready */
};

#define DPMU_UCORE_OWNED 128

/* pend[] and ipend[] entries, as bits of a core's fold_need set */
#define DPMU_FOLD_ENTRIES (DPMU_UEV_COUNT + 1 + DPMU_IEV_COUNT + 1)
#define DPMU_FOLD_WORDS 2
_Static_assert(DPMU_FOLD_ENTRIES <= 64 * DPMU_FOLD_WORDS, "fold_need holds every entry");

static inline void fold_set(uint64_t *set, unsigned i)
{
	set[i / 64] |= UINT64_C(1) << (i % 64);
}

static inline bool fold_has(const uint64_t *set, unsigned i)
{
	return set[i / 64] >> (i % 64) & 1;
}

#define DPMU_UWATCH_MAX 32     /* a core PMU's counters, the cycle counter among them */
#define DPMU_UWATCH_SOURCES 4  /* delivery-list entries of one event */

struct dpmu_ucore {
	/* What the block path and the inline fetch, data and branch paths
	 * touch on every block comes first and together (the clock, the
	 * batch bound, the last fetch line and pages, the L1I, L1D, L1 DTLB
	 * and predictor), so that it shares a few cache lines; colder state
	 * (the L2, the ITLB and L2 TLB, delivery) follows. */
	unsigned id, cluster;
	uint64_t work_milli;       /* fractional work cycles */
	uint64_t stall_cycles;     /* frontend + backend stall cycles */
	uint32_t cpi_milli;        /* max(base CPI, 1 / issue width) */
	uint32_t batch_left;       /* instructions until the next delivery (1 to the batch) */
	uint64_t lean_key;         /* a block's lean_key when its clean template holds here */
	union {
		struct {
			/* Sampling on the block path (dpmu_uarch_watch_arm):
			 * every block goes to run_block_sampled, which finds
			 * the instruction whose clock reaches wx_x (1000 x the
			 * cycle the counter overflows at, on the clock
			 * work_milli + 1000 x stall_cycles; UINT64_MAX: none) */
			bool sample_on;
			/* The core's trace unit is active
			 * (dpmu_model_etm_watch): every run it retires is
			 * given to it first (trace.c). */
			bool trace_on;
		};
		uint16_t observed; /* either: one test on every block */
	};
	uint32_t page_shift;
	uint32_t tlb_stall;        /* the translation part of the last access's wait */
	uint64_t last_fetch_blk;   /* I-side: fetch line of the previous instruction */
	uint64_t last_ivpn;        /* page of the last L1I lookup + 1 (0: none) */
	uint64_t last_dvpn;        /* page of the last data access + 1 (0: none) */
	int l1d_mru;               /* L1D slot of the last data access, or -1 */
	uint32_t dram_wait;        /* cycles this access waited for DRAM bandwidth */
	const struct dpmu_core_type *type;
	struct dpmu_ucache l1i, l1d;
	struct dpmu_uset dtlb;
	struct dpmu_bpred bp;
	/* What the block path tests on every block: the registers whose
	 * value may not be ready (bit DPMU_REG_*), the instructions the core
	 * has dispatched, and the first of them that would find the reorder
	 * window full (UINT64_MAX: none). The rest: struct dpmu_utiming. */
	dpmu_u128 dep_pend;
	uint64_t dep_seq, rob_limit;

	/* batched delivery; pend[DPMU_UEV_COUNT] and ipend[DPMU_IEV_COUNT] stay
	 * 0 (what a delivery-list entry sums when it has fewer sources) */
	uint64_t pend[DPMU_UEV_COUNT + 1];
	uint64_t ipend[DPMU_IEV_COUNT + 1];
	uint16_t icode[DPMU_IEV_COUNT];
	uint64_t cycles_delivered;
	uint64_t bus_delivered;    /* BUS_CYCLES delivered (DSU clock) */
	/* The core's time in DSU cycles (dsu_cycles) when work_milli +
	 * stall_cycles was dsu_key; dsu_seen is that sum when the cluster's
	 * delivery last took the core's time into the cluster's. */
	uint64_t dsu_key, dsu_cycles, dsu_seen;
	/* The same for the core's time in nanoseconds (dpmu_uarch_time_ns,
	 * asked every few hundred instructions of every core). Idle time
	 * (below) sets ns_key and dsu_seen to DPMU_UCORE_KEY_STALE, a sum the
	 * clock never reaches, so both are worked out again. */
	uint64_t ns_key, ns;
	/* Simulated time the core spent idle (dpmu_uarch_core_idle): its
	 * time, and the cluster's and the memory's clocks it sets, run on
	 * through it; its cycle counter, as a core's in WFI, does not. */
	uint64_t idle_ns;

	/* The delivery list, in pend then ipend order: the events the model
	 * counts or the observer wants, their numbers in live_code. Valid
	 * while live_ok and the model's live generation is live_gen. */
	struct dpmu_live live[DPMU_UEV_COUNT + DPMU_IEV_COUNT];
	uint16_t live_code[DPMU_UEV_COUNT + DPMU_IEV_COUNT];
	unsigned nlive;
	/* The entries that go to the observer, by index in live (a handful
	 * of the entries: the delivery visits only these for it) */
	uint8_t obs_live[DPMU_UEV_COUNT + DPMU_IEV_COUNT];
	unsigned nobs;
	_Static_assert(DPMU_UEV_COUNT + DPMU_IEV_COUNT <= 256, "obs_live indexes live in a byte");
	bool all_model;            /* every entry goes to the model */
	bool cyc_obs;              /* the observer wants the core clock (CPU_CYCLES) */
	bool bus_model, bus_obs;   /* BUS_CYCLES goes to the model / the observer */
	bool bus_stale;            /* bus_delivered lags: BUS_CYCLES went nowhere */
	bool live_ok;
	uint64_t live_gen;
	uint64_t flush_work, flush_stall; /* the clock at the last full flush */

	/* Precise overflow (dpmu_uarch_retire_watched): the counters whose
	 * overflow interrupts, as the model gave them at the last refresh,
	 * each with the delivery-list entries of its event (none: the clock,
	 * CPU_CYCLES) and how many more of it overflow the counter. Stale
	 * after every delivery and at every call (a register write between
	 * calls may have moved a counter). fired: a delivery took a watched
	 * count to its overflow. insns: the event is INST_RETIRED, counted
	 * here (the block path's instruction watch, wi_floor). */
	struct dpmu_uwatch {
		uint8_t live[DPMU_UWATCH_SOURCES];
		uint8_t nlive;
		bool clock, insns;
		uint64_t left;
	} watch[DPMU_UWATCH_MAX];
	unsigned nwatch;
	bool watch_stale, watch_fired;
	uint64_t wx_x, wx_armed; /* wx_x is UINT64_MAX after a hit, until the hooks */
	/* Sampling INST_RETIRED on the block path: the batch less the
	 * instructions the counter still needs to overflow (those since the
	 * last delivery, the batch less batch_left, are not in it yet); each
	 * delivery adds those it delivers. A block of n overflows it when
	 * batch_left - n is at most wi_floor, its instruction batch_left -
	 * wi_floor - 1 (INT64_MIN: none, or after a hit until the hooks
	 * re-arm it). One compare on every block. */
	int64_t wi_floor;
	bool wx_hit;       /* this block's instruction wx_j reached wx_x */
	uint32_t wx_j;

	/* Block summaries this core ran since its last delivery whose class
	 * events are not yet in pend[] (each keeps its run count): they are
	 * added at delivery, run count x totals, since nothing reads pend[]
	 * before. A full list is added early; a block another core runs, or
	 * one destroyed, is added at once. A block run in the batch before
	 * the last delivery stays on the list with no runs until the next
	 * (its runs then need no adoption). */
	struct dpmu_ublock *owned[DPMU_UCORE_OWNED];
	uint32_t nowned;

	/* The pend[] and ipend[] entries the delivery list reads (its entries' sources)
	 * and INST_RETIRED (the idle test's): at a delivery, blocks' class
	 * events are added only to these, since any other is dropped there.
	 * A set of bits by entry: pend[i] is bit i, ipend[i] bit
	 * DPMU_UEV_COUNT + 1 + i. The set itself names the ordering a block
	 * keeps for it (never all zero once the list is built, which a
	 * delivery does before it folds: INST_RETIRED is in it; a new block's
	 * is). */
	uint64_t fold_need[DPMU_FOLD_WORDS];

	struct dpmu_utiming tm;

	/* The levels an L1 miss or a page walk reaches (mem.c) */
	struct dpmu_ucache l2;
	struct dpmu_uset itlb, l2tlb;
	uint32_t mem_latency;      /* L3 miss to data: bus + DRAM, core cycles */
	uint32_t beats;            /* bus beats per line */
};

#define DPMU_DRAM_EPOCHS 256
#define DPMU_DRAM_EPOCH_PS 1000000ull   /* 1 us bandwidth accounting epochs */

struct dpmu_ucluster {
	unsigned id, first_core, ncores;
	const struct dpmu_cluster_params *params;
	struct dpmu_ucache l3;
	struct dpmu_uset sf;       /* snoop filter (sf.sets == 0: none, broadcast) */
	uint32_t *sf_mask;         /* [sf entries]: cores of the cluster holding the line */
	uint32_t snoop_latency;    /* core cycles */
	uint16_t codes[DPMU_CEV_COUNT];
	uint64_t pend[DPMU_CEV_COUNT];
	uint64_t dsu_delivered;    /* DSU cycles delivered */
	/* The delivery lists, as the core's: indices into pend[] */
	uint8_t live[DPMU_CEV_COUNT], olive[DPMU_CEV_COUNT];
	unsigned nlive, nolive;
	bool cyc_obs;              /* the observer wants the DSU clock (CPU_CYCLES) */
	bool bc_model, bc_obs;     /* the BUS_CYCLES event goes to the model / observer */
	bool live_ok;
	uint64_t live_gen;
};

struct dpmu_uarch {
	struct dpmu_model *model;
	struct dpmu_profile profile;          /* private copy */
	unsigned ncores, nclusters;
	struct dpmu_ucore cores[DPMU_MAX_CORES];
	struct dpmu_ucluster clusters[DPMU_MAX_CLUSTERS];
	uint32_t batch;
	uint32_t bus_width;

	/* DRAM bandwidth: bytes moved per epoch, in a ring of epochs */
	uint64_t dram_epoch[DPMU_DRAM_EPOCHS];
	uint64_t dram_bytes[DPMU_DRAM_EPOCHS];
	uint64_t dram_epoch_cap;   /* bytes one epoch can carry */

	bool flushed;              /* a full flush has been made (flush_work valid) */
	struct dpmu_uarch_sample_hooks hooks; /* sampling on the block path */
	void *hooks_ctx;
	dpmu_uarch_observer_fn observer;
	dpmu_uarch_wants_fn observer_wants;
	void *observer_ctx;
	struct dpmu_err err;
};

/* Data access of `size` bytes at `addr` (within one line); returns the load-
 * to-use latency in core cycles (the L1D latency on a hit). */
uint32_t dpmu_mem_data(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc, uint64_t addr,
		       bool write, bool full_line);
/* dpmu_mem_fetch for every fetch but the ones its inline part serves. */
uint32_t dpmu_mem_fetch_slow(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc);
/* dpmu_mem_op for every access but the ones its inline part serves. */
uint32_t dpmu_mem_op_slow(struct dpmu_uarch *u, struct dpmu_ucore *c, const struct dpmu_insn *in,
			  bool write, uint32_t *bw_wait);
/* dpmu_mem_op of an access within one line whose UNALIGNED_* event (if
 * any) is counted, in a page other than the previous access's whose L1
 * DTLB entry the hint did not find: the L1 DTLB's search, and on a hit
 * the inline L1D part. */
uint32_t dpmu_mem_op_page(struct dpmu_uarch *u, struct dpmu_ucore *c, const struct dpmu_insn *in,
			  bool write, uint32_t *bw_wait);
/* dpmu_mem_op of an access within one line whose UNALIGNED_* event (if
 * any) is counted, in the page of the previous access (c->last_dvpn),
 * whose L1D line the hint did not find in a state the inline part serves. */
uint32_t dpmu_mem_op_line(struct dpmu_uarch *u, struct dpmu_ucore *c, const struct dpmu_insn *in,
			  bool write, uint32_t *bw_wait);
/* The stride prefetcher's L1D prefetch of block `pf` (pc: the trainer). */
void dpmu_mem_l1d_prefetch(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc, uint64_t pf);

/* The counts every data access within one line makes once, by write: the
 * block path keeps them in its summary, one of each per load or store step
 * (dpmu_ublock_create), added at delivery with the class events. An access
 * of a summed step that dpmu_mem_op's inline part does not serve counts
 * them in mem.c as any access does, so one of each is taken back
 * (dpmu_mem_op_out): the pending counts are only read at a delivery, after
 * the fold, and so are the same. The inline parts are always inlined:
 * `summed` and `write` are constants there, and a call would cost more
 * than the counts. */
#define DPMU_MEM_SUMMED 2
static const uint8_t dpmu_mem_summed[2][DPMU_MEM_SUMMED] = {
	{DPMU_UEV_LD_SPEC, DPMU_UEV_L1D_TLB_RD},
	{DPMU_UEV_ST_SPEC, DPMU_UEV_L1D_TLB_WR},
};
_Static_assert(DPMU_UEV_COUNT <= 256, "dpmu_mem_summed holds an event in a byte");

/* A call out of the inline part: dpmu_mem_op_slow, _page or _line, which
 * read the work clock and count an access's dpmu_mem_summed counts. For a
 * summed step the block path has not stored its clock (it stores it only
 * where something reads it: here, clk) and holds those counts already, so
 * one of each is taken back. The per-instruction path (not summed) has
 * stored its clock. Always inlined, so `op` is a direct call. */
typedef uint32_t dpmu_mem_op_fn(struct dpmu_uarch *u, struct dpmu_ucore *c,
				const struct dpmu_insn *in, bool write, uint32_t *bw_wait);
static inline __attribute__((always_inline)) uint32_t
dpmu_mem_op_out(dpmu_mem_op_fn *op, struct dpmu_uarch *u, struct dpmu_ucore *c,
		const struct dpmu_insn *in, bool write, uint32_t *bw_wait, bool summed, uint64_t clk)
{
	if (summed)
		c->work_milli = clk;
	uint32_t r = op(u, c, in, write, bw_wait);
	if (summed)
		for (unsigned e = 0; e < DPMU_MEM_SUMMED; e++)
			c->pend[dpmu_mem_summed[write][e]]--;
	return r;
}

/* dpmu_mem_op's L1D part: an access within one line whose UNALIGNED_*
 * event (if any) is counted, in the page of the previous access
 * (c->last_dvpn: its L1 DTLB lookup is made, not yet counted). The L1D
 * line its hint finds in a state that needs no change beyond E -> M is
 * served here, as dpmu_mem_data would; anything else goes to
 * dpmu_mem_op_line. A store reports what a prefetch waited for DRAM
 * bandwidth as dpmu_mem_data does, also on an M line, except the accesses
 * this inline part has always served (aligned to a power-of-two size, in
 * a page whose L1 DTLB entry the hint finds), which never reported it on
 * an M line: their counts stay as they were. `page`: the call of
 * dpmu_mem_op_page, which serves none of those. `a` is in->addr. For a
 * summed step (the block path) at work clock clk, or not. */
static inline __attribute__((always_inline)) uint32_t
dpmu_mem_op_l1d_in(struct dpmu_uarch *u, struct dpmu_ucore *c, const struct dpmu_insn *in,
		   uint64_t a, bool write, uint32_t *bw_wait, bool page, bool summed, uint64_t clk)
{
	struct dpmu_uset *s = &c->l1d.set;
	uint64_t blk = a >> s->shift;
	uint32_t h = s->hint[blk & s->hint_mask];
	/* An address's block: a matching tag is a valid line. */
	if (s->tag[h] != blk)
		return dpmu_mem_op_out(dpmu_mem_op_line, u, c, in, write, bw_wait, summed, clk);
	uint8_t st = write ? s->state[h] : DPMU_LINE_E;
	if (st < DPMU_LINE_E)
		return dpmu_mem_op_out(dpmu_mem_op_line, u, c, in, write, bw_wait, summed, clk);
	if (write) {
		s->state[h] = DPMU_LINE_M; /* E -> M stays in the L1D (the L2 owns it) */
		c->pend[DPMU_UEV_L1D_CACHE_WR]++;
	} else {
		c->pend[DPMU_UEV_L1D_CACHE_RD]++;
	}
	if (!summed)
		for (unsigned e = 0; e < DPMU_MEM_SUMMED; e++)
			c->pend[dpmu_mem_summed[write][e]]++;
	/* The line of the previous access is its set's most recently used:
	 * touching it again changes nothing. */
	if ((int)h != c->l1d_mru) {
		c->l1d_mru = (int)h;
		dpmu_uset_reuse(s, h);
	}
	/* A summed load's wait is not read (its step reads the return) */
	if (write || !summed)
		*bw_wait = 0;
	if (c->l1d.pf) {
		uint64_t pf = dpmu_stride_train(c->l1d.pf, in->pc, blk);
		if (pf) {
			c->dram_wait = 0;
			if (summed)
				c->work_milli = clk; /* the prefetch reads the clock */
			dpmu_mem_l1d_prefetch(u, c, in->pc, pf);
			/* What the prefetch waited for DRAM bandwidth is the
			 * store's wait where dpmu_mem_data would see it: when
			 * the store changed the line's state (E -> M), or when
			 * the access went to dpmu_mem_op_slow before (the test
			 * of dpmu_mem_op made again here, off the common
			 * path). */
			if (write && (st != DPMU_LINE_M || page ||
				      ((a | s->above_block) & ((uint64_t)in->size - 1))))
				*bw_wait = c->dram_wait;
		}
	}
	return 0;
}

static inline uint32_t dpmu_mem_op_l1d(struct dpmu_uarch *u, struct dpmu_ucore *c,
				       const struct dpmu_insn *in, uint64_t a, bool write,
				       uint32_t *bw_wait, bool page)
{
	return dpmu_mem_op_l1d_in(u, c, in, a, write, bw_wait, page, false, 0);
}

/* A load or store instruction: translation and data access for each line
 * it touches. Returns the cycles a load waits beyond an L1D hit; *bw_wait
 * is what it waited for DRAM bandwidth (stores stall only for that), and
 * c->tlb_stall the translation part of a non-zero return.
 *
 * Inline here, the common case: an access within one line (aligned to
 * its size or not), in the page of the previous access or one whose L1
 * DTLB entry its hint finds, that hits the L1D line its hint finds in a
 * state that needs no change beyond E -> M (a store to a line the core
 * holds exclusive). It counts and changes exactly what dpmu_mem_op_slow,
 * dpmu_mem_dtlb and dpmu_mem_data would; other accesses within one line
 * go to dpmu_mem_op_page or dpmu_mem_op_line, the rest to
 * dpmu_mem_op_slow. `summed`: a step of a block summary, which holds the
 * access's dpmu_mem_summed counts (not made here), at work clock clk (not
 * stored in c unless read); else clk is not used. */
static inline __attribute__((always_inline)) uint32_t
dpmu_mem_op(struct dpmu_uarch *u, struct dpmu_ucore *c, const struct dpmu_insn *in, bool write,
	    uint32_t *bw_wait, bool summed, uint64_t clk)
{
	struct dpmu_uset *s = &c->l1d.set;
	uint64_t a = in->addr;
	uint64_t m = (uint64_t)in->size - 1;
	/* (a & (size - 1)) == 0 and size <= line in one test, the usual
	 * case. For a power of two that is "aligned", so not UNALIGNED_*;
	 * for any size it keeps the access in one line: the offset's set
	 * bits are clear in size - 1, so offset + size - 1 =
	 * offset | (size - 1) carries into no line bit. */
	if ((a | s->above_block) & m) {
		/* Otherwise the inline part serves what stays in one line:
		 * its first and last bytes share the bits above the offset.
		 * A line-crossing access, one that wraps the address space
		 * and size 0 (one byte) at a line's first byte (a + m is the
		 * byte before) differ there and take the slow path. */
		if (((a + m) ^ a) & s->above_block)
			return dpmu_mem_op_out(dpmu_mem_op_slow, u, c, in, write, bw_wait, summed, clk);
		/* Within a line, a power-of-two size here is not a multiple
		 * of its size: UNALIGNED_* as dpmu_mem_op_slow counts it
		 * (size 0 is a byte, never unaligned; nor is a size that is
		 * not a power of two). Counted now: the paths below that
		 * leave the inline part do not count it. */
		if (in->size && !(in->size & m))
			c->pend[write ? DPMU_UEV_UNALIGNED_ST_SPEC : DPMU_UEV_UNALIGNED_LD_SPEC]++;
	}
	uint64_t vpn = a >> c->page_shift;
	if (vpn + 1 != c->last_dvpn) {
		/* Another page: the L1 DTLB hit dpmu_mem_dtlb would find first
		 * (its search starts with the same checked hint), touched the
		 * same way; committed now, it is the same-page case for
		 * dpmu_mem_op_line if the L1D misses. */
		struct dpmu_uset *t = &c->dtlb;
		uint32_t th = t->hint[vpn & t->hint_mask];
		if (t->tag[th] != vpn) /* an address's page: a match is valid */
			return dpmu_mem_op_out(dpmu_mem_op_page, u, c, in, write, bw_wait, summed, clk);
		c->last_dvpn = vpn + 1;
		t->stamp[th] = ++t->clock; /* TLBs are LRU (tlb_init, docs/events.md) */
	}
	return dpmu_mem_op_l1d_in(u, c, in, a, write, bw_wait, false, summed, clk);
}

/* Data-side translation of `addr`: returns the extra cycles (L2 TLB, walk). */
uint32_t dpmu_mem_dtlb(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t addr, bool write);
/* Instruction fetch of the line holding `pc`; returns the cycles beyond
 * an L1I hit (ITLB and refill), which stall the front end, and sets
 * c->tlb_stall to the ITLB part. Inline: a line in the page of the
 * previous fetch (its ITLB entry is the most recent: looking it up again
 * changes nothing) that the L1I hint finds. */
static inline uint32_t dpmu_mem_fetch(struct dpmu_uarch *u, struct dpmu_ucore *c, uint64_t pc)
{
	struct dpmu_uset *s = &c->l1i.set;
	uint64_t blk = pc >> s->shift;
	uint32_t h = s->hint[blk & s->hint_mask];
	/* An address's block: a matching tag is a valid line. */
	if ((pc >> c->page_shift) + 1 != c->last_ivpn || s->tag[h] != blk)
		return dpmu_mem_fetch_slow(u, c, pc);
	c->pend[DPMU_UEV_L1I_TLB]++;
	c->pend[DPMU_UEV_L1I_CACHE]++;
	dpmu_uset_reuse(s, h);
	c->tlb_stall = 0;
	return 0;
}

#define DPMU_UCORE_KEY_STALE UINT64_MAX

/* A core's clock: work cycles (whole ones) + stall cycles. */
static inline uint64_t dpmu_ucore_cycles(const struct dpmu_ucore *c)
{
	return c->work_milli / 1000 + c->stall_cycles;
}

/* Simulated time of a core in picoseconds, idle time included. */
uint64_t dpmu_uarch_core_ps(const struct dpmu_ucore *c);

/* trace.c: the trace unit's view of retirement. dpmu_uarch_trace_init
 * registers the engine as the model's trace-unit watcher. A run of n
 * instructions of core c: from a block (its last instruction's outcome is
 * next_pc's, dpmu_insn_branch_to) or retired one by one (block false: each
 * branch's taken and addr are filled in). */
void dpmu_uarch_trace_init(struct dpmu_uarch *u);
void dpmu_uarch_trace_run(struct dpmu_uarch *u, struct dpmu_ucore *c, const struct dpmu_insn *in,
			  size_t n, bool block, uint64_t next_pc);

#endif
