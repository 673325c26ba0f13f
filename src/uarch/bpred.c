/*
 * Branch prediction: a direction predictor of 2-bit saturating counters
 * (bimodal: indexed by PC; gshare: PC xor global history), a direct-mapped
 * BTB for register-indirect targets, and a return stack for RET.
 *
 * Direct branches (B, B.cond, CBZ, TBZ, BL) have their target in the
 * encoding, so only their direction can be wrong; a BTB miss on them is a
 * fetch bubble, not a misprediction (docs/events.md, BR_MIS_PRED).
 */
#include <stdlib.h>
#include <string.h>

#include "uarch/uarch_internal.h"

static bool pow2_or_zero(uint32_t x)
{
	return !(x & (x - 1));
}

int dpmu_bpred_init(struct dpmu_bpred *b, const struct dpmu_bp_params *p, struct dpmu_err *err)
{
	memset(b, 0, sizeof *b);
	if (p->kind != DPMU_BP_BIMODAL && p->kind != DPMU_BP_GSHARE)
		return dpmu_err_set(err, DPMU_EINVAL, "branch predictor kind %d unknown",
				    (int)p->kind);
	if (p->entries == 0 || !pow2_or_zero(p->entries))
		return dpmu_err_set(err, DPMU_EINVAL,
				    "branch predictor: %u entries (a power of two, at least 1)",
				    p->entries);
	if (!pow2_or_zero(p->btb_entries))
		return dpmu_err_set(err, DPMU_EINVAL,
				    "branch predictor: %u BTB entries (a power of two or 0)",
				    p->btb_entries);
	if (p->history_bits > 31)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "branch predictor: %u history bits (at most 31)", p->history_bits);
	if (p->ras_entries > 4096)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "branch predictor: %u return-stack entries (at most 4096)",
				    p->ras_entries);
	b->kind = p->kind;
	b->pht_mask = p->entries - 1;
	/* Only gshare looks at the history: bimodal keeps none. */
	b->hist_mask = p->kind == DPMU_BP_GSHARE && p->history_bits
			       ? (uint32_t)((1ull << p->history_bits) - 1)
			       : 0;
	b->pht = malloc(p->entries);
	if (p->btb_entries) {
		b->btb_mask = p->btb_entries - 1;
		b->btb_tag = calloc(p->btb_entries, sizeof *b->btb_tag);
		b->btb_target = calloc(p->btb_entries, sizeof *b->btb_target);
	}
	b->ras_n = p->ras_entries;
	if (p->ras_entries)
		b->ras = calloc(p->ras_entries, sizeof *b->ras);
	if (!b->pht || (p->btb_entries && (!b->btb_tag || !b->btb_target)) ||
	    (p->ras_entries && !b->ras)) {
		dpmu_bpred_free(b);
		return dpmu_err_set(err, DPMU_ENOMEM, "out of memory for the branch predictor");
	}
	/* Counters start weakly not-taken. */
	memset(b->pht, 1, p->entries);
	return 0;
}

void dpmu_bpred_free(struct dpmu_bpred *b)
{
	free(b->pht);
	free(b->btb_tag);
	free(b->btb_target);
	free(b->ras);
	memset(b, 0, sizeof *b);
}

/* Target of an indirect branch from the BTB: right or not, then learn it. */
static bool btb_predict(struct dpmu_bpred *b, uint64_t pc, uint64_t target)
{
	if (!b->btb_tag)
		return false;
	uint32_t i = (uint32_t)(pc >> 2) & b->btb_mask;
	bool ok = b->btb_tag[i] == pc + 1 && b->btb_target[i] == target;
	b->btb_tag[i] = pc + 1; /* +1: tag 0 means empty, pc 0 is valid */
	b->btb_target[i] = target;
	return ok;
}

/* The return stack is a ring of ras_n entries (any count, not only powers
 * of two); the oldest entry is overwritten when it is full. */
static void ras_push(struct dpmu_bpred *b, uint64_t ret)
{
	if (!b->ras_n)
		return;
	b->ras[b->ras_top] = ret;
	b->ras_top = b->ras_top + 1 == b->ras_n ? 0 : b->ras_top + 1;
	if (b->ras_depth < b->ras_n)
		b->ras_depth++;
}

static bool ras_pop(struct dpmu_bpred *b, uint64_t target)
{
	if (!b->ras_depth)
		return false;
	b->ras_top = b->ras_top ? b->ras_top - 1 : b->ras_n - 1;
	b->ras_depth--;
	return b->ras[b->ras_top] == target;
}

bool dpmu_bpred_other(struct dpmu_bpred *b, const struct dpmu_insn *in)
{
	uint64_t pc = in->pc;
	switch (in->br_kind) {
	case DPMU_BR_COND:
	case DPMU_BR_UNCOND:
		return dpmu_bpred_branch(b, in);
	case DPMU_BR_CALL: {
		ras_push(b, pc + (in->isize ? in->isize : 4));
		/* BL unless the encoding says BLR (a trace's `call` is BL). */
		bool indirect = in->flags & DPMU_IC_REG_BRANCH;
		return indirect ? !btb_predict(b, pc, in->addr) : false;
	}
	case DPMU_BR_RET:
		if (b->ras_n)
			return !ras_pop(b, in->addr);
		return !btb_predict(b, pc, in->addr);
	case DPMU_BR_IND:
	default:
		return !btb_predict(b, pc, in->addr);
	}
}
