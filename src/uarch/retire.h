/*
 * The per-instruction pieces of the engine (uarch.c's retire loop) that the
 * block path (block_run.c) shares: an instruction's class events, its
 * branch's outcome and prediction, its fetch, its stalls, the whole of one
 * retired instruction (insn_dynamic).
 * Inline, for both paths' hot loops.
 */
#ifndef DPMU_UARCH_RETIRE_H
#define DPMU_UARCH_RETIRE_H

#include "uarch/timing.h"
#include "uarch/uarch_internal.h"

#define EV(c, name) ((c)->pend[DPMU_UEV_##name]++)

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
static inline void branch_static(uint64_t *pend, uint64_t *ipend, const struct dpmu_insn *in)
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
static inline void class_events(uint64_t *pend, uint64_t *ipend, const struct dpmu_insn *in)
{
	uint32_t f = in->flags;
	if (in->kind == DPMU_INSN_BRANCH)
		branch_static(pend, ipend, in);
	else if (in->kind != DPMU_INSN_LOAD && in->kind != DPMU_INSN_STORE &&
		 ((f & DPMU_IC_DP) || !(f & NON_DP_FLAGS)))
		pend[DPMU_UEV_DP_SPEC]++;
	if (!(f & NON_DP_FLAGS))
		return;
	/* the class flags that each count one speculative-class event */
	static const struct {
		uint32_t flag;
		uint8_t ev;
	} spec[] = {
		{DPMU_IC_ASE, DPMU_UEV_ASE_SPEC},     {DPMU_IC_VFP, DPMU_UEV_VFP_SPEC},
		{DPMU_IC_CRYPTO, DPMU_UEV_CRYPTO_SPEC}, {DPMU_IC_ISB, DPMU_UEV_ISB_SPEC},
		{DPMU_IC_DSB, DPMU_UEV_DSB_SPEC},     {DPMU_IC_DMB, DPMU_UEV_DMB_SPEC},
		{DPMU_IC_LDREX, DPMU_UEV_LDREX_SPEC},
	};
	for (unsigned k = 0; k < sizeof spec / sizeof spec[0]; k++)
		if (f & spec[k].flag)
			pend[spec[k].ev]++;
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
	else if (in->exec != DPMU_EX_SIMPLE)
		dep_exec(c, in, m, src, s);
	else if ((m.src | m.dst) & c->dep_pend)
		dep_other(c, in, m, src, s);
}

/* insn_dynamic of an instruction in its predecessor's fetch line that
 * neither accesses memory nor branches and has no execution latency (the
 * block summary makes those steps): its dependences only, the work when
 * none is pending. */
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

/* After m instructions of a run: INST_RETIRED is added per run (nothing
 * reads it before delivery), and the batch bound is checked. */
static inline void retired(struct dpmu_uarch *u, struct dpmu_ucore *c, size_t m)
{
	c->pend[DPMU_UEV_INST_RETIRED] += m;
	c->batch_left -= (uint32_t)m;
	if (!c->batch_left)
		dpmu_uarch_flush_core(u, c->id);
}

#endif
