/*
 * What the block path's two files share: block_run.c (the dispatch and
 * the steps, block_steps) and block_lean.c (executions by a block's
 * template, which depart to the steps on a miss or a stall).
 */
#ifndef DPMU_UARCH_BLOCK_PATH_H
#define DPMU_UARCH_BLOCK_PATH_H

#include "uarch/retire.h"
#include "uarch/ublock.h"

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

/* The class events of a whole execution of b on c wait for the delivery
 * (block_fold); the batch bound is checked as retired() does. */
static inline __attribute__((always_inline)) void block_ran(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b)
{
	if (b->owner != c)
		dpmu_ublock_adopt(c, b);
	b->runs++;
	/* retired() but INST_RETIRED, which is in the block's totals */
	c->batch_left -= b->n;
	if (!c->batch_left)
		dpmu_uarch_flush_core(u, c->id);
}

/* Where a clean execution that kept to its template (block_lean.c)
 * departed from it, for block_steps to go on from: at step *step, before
 * its access with `fe` of fetch stall (LEAN_AT_ACCESS), or after its load
 * (LEAN_AFTER_LOAD, `be` beyond the L1D) or its store (LEAN_AFTER_STORE,
 * `bw` of bandwidth wait); the execution's start: work0, seq0 and t0 (its
 * clock with the stalls). */
enum { LEAN_AT_ACCESS, LEAN_AFTER_LOAD, LEAN_AFTER_STORE };
struct lean_depart {
	const uint32_t *step;
	unsigned where;
	uint32_t be, bw;
	uint64_t fe, work0, seq0, t0;
	uint8_t e;  /* the register pending at entry (entry template), or 0 */
	uint64_t T; /* its ready time */
};

/* block_run.c: the steps (block_steps) of a clean execution, of one with
 * registers pending at entry, and each from where it departed from its
 * template, with sampling's looks at the clock when `watch`; deps_end (a
 * RUN_DEPS execution's end); the hooks at a sampled block's end (the
 * overflow found in it, the call or return it ended with). */
void dpmu_block_clean(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
		      const uint64_t *addr, uint64_t next_pc, bool watch);
void dpmu_block_deps(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
		     const uint64_t *addr, uint64_t next_pc, bool watch);
void dpmu_block_departed(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
			 const uint64_t *addr, uint64_t next_pc, const struct lean_depart *dp,
			 bool watch);
void dpmu_block_departed_deps(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
			      const uint64_t *addr, uint64_t next_pc,
			      const struct lean_depart *dp, bool watch);
__attribute__((cold)) void dpmu_block_sampled_hooks(struct dpmu_uarch *u, struct dpmu_ucore *c,
						    struct dpmu_ublock *b, uint64_t next_pc);
void dpmu_block_deps_end(struct dpmu_ucore *c, const struct dpmu_ublock *b, dpmu_u128 pend,
			 const struct dpmu_ureg *lv, bool mispredicted, uint64_t resolve);

/* block_lean.c: an execution by b's clean template, or by its entry
 * template with register e pending (lean_steps), each also with sampling's
 * look for the overflow (_watched: run_block_sampled's); the values a
 * departed execution's loads had by the template, before instruction upto. */
void dpmu_block_lean(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
		     const uint64_t *addr, uint64_t next_pc);
void dpmu_block_entry(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
		      const uint64_t *addr, uint64_t next_pc, uint8_t e);
void dpmu_block_lean_watched(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
			     const uint64_t *addr, uint64_t next_pc);
void dpmu_block_entry_watched(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
			      const uint64_t *addr, uint64_t next_pc, uint8_t e);
void dpmu_block_lean_fill(const struct dpmu_ublock *b, struct dpmu_ureg *lv, uint32_t upto,
			  uint64_t t0);
void dpmu_block_entry_fill(const struct dpmu_ublock *b, struct dpmu_ureg *lv, uint32_t upto,
			   uint64_t t0, uint64_t T);

#endif
