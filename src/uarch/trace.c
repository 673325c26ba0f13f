/*
 * The trace unit's view of retirement (include/dynpmu/model.h, "the trace
 * unit at work"): while a core's trace unit is active, every run of
 * instructions the core retires goes to it, in order, before the run's
 * events are delivered, as the instructions the ETM sees: an address, the
 * next address executed, and whether each is a branch (direct: its target
 * is in the code; indirect: in the trace) or an exception (SVC).
 */
#include "uarch/uarch_internal.h"

static void watch(void *ctx, unsigned core, bool active)
{
	struct dpmu_uarch *u = ctx;
	if (core < u->ncores)
		u->cores[core].trace_on = active;
}

static uint64_t clock_ns(void *ctx)
{
	return dpmu_uarch_time_ns(ctx);
}

static uint64_t core_cycles(void *ctx, unsigned core)
{
	return dpmu_uarch_core_cycles(ctx, core);
}

void dpmu_uarch_trace_init(struct dpmu_uarch *u)
{
	dpmu_model_etm_watch(u->model, watch, clock_ns, core_cycles, u);
	for (unsigned i = 0; i < u->ncores; i++)
		u->cores[i].trace_on = dpmu_model_etm_active(u->model, i);
}

/* What kind of P0 element an instruction is. A call without the register
 * flag is BL (docs/frontend.md); RET and BR take their target from a
 * register. */
static enum dpmu_etm_branch branch_of(const struct dpmu_insn *in)
{
	if (in->flags & DPMU_IC_SVC)
		return DPMU_ETM_EXCEPTION;
	if (in->kind != DPMU_INSN_BRANCH)
		return DPMU_ETM_NOT_BRANCH;
	if ((in->flags & DPMU_IC_REG_BRANCH) || in->br_kind == DPMU_BR_RET ||
	    in->br_kind == DPMU_BR_IND)
		return DPMU_ETM_INDIRECT;
	return DPMU_ETM_DIRECT;
}

/* in as the trace unit sees it; the last of a block takes its outcome
 * from next_pc. */
static void etm_insn(const struct dpmu_insn *x, bool block_last, uint64_t next_pc,
		     struct dpmu_etm_insn *e)
{
	uint64_t fall = x->pc + (x->isize ? x->isize : 4);
	e->pc = x->pc;
	e->branch = branch_of(x);
	e->taken = false;
	e->next = fall;
	if (e->branch != DPMU_ETM_DIRECT && e->branch != DPMU_ETM_INDIRECT)
		return;
	if (block_last) {
		uint64_t to = next_pc ? next_pc : fall;
		e->taken = to != fall || x->br_kind != DPMU_BR_COND;
		e->next = to;
	} else {
		e->taken = x->taken;
		e->next = x->taken ? x->addr : fall;
	}
}

/* Instruction by instruction, in chunks. Out of line, so that the block
 * path above keeps no frame for the chunk's buffer. */
static __attribute__((noinline)) void trace_insns(struct dpmu_uarch *u, struct dpmu_ucore *c,
						  const struct dpmu_insn *in, size_t n, bool block,
						  uint64_t next_pc)
{
	enum { CHUNK = 64 };
	struct dpmu_etm_insn buf[CHUNK];
	for (size_t done = 0; done < n;) {
		size_t k = n - done < CHUNK ? n - done : CHUNK;
		for (size_t i = 0; i < k; i++)
			etm_insn(&in[done + i], block && done + i + 1 == n, next_pc, &buf[i]);
		dpmu_model_etm_insns(u->model, c->id, buf, k);
		done += k;
	}
}

void dpmu_uarch_trace_run(struct dpmu_uarch *u, struct dpmu_ucore *c, const struct dpmu_insn *in,
			  size_t n, bool block, uint64_t next_pc)
{
	if (!n)
		return;
	if (block) {
		/* a translated block: only its last instruction can be a P0
		 * element, and the trace unit most often needs no other */
		struct dpmu_etm_insn last;
		etm_insn(&in[n - 1], true, next_pc, &last);
		if (dpmu_model_etm_block(u->model, c->id, in[0].pc, &last, n))
			return;
	}
	trace_insns(u, c, in, n, block, next_pc);
}
