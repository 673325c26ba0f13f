/*
 * Translated blocks' summaries: the steps an execution visits, planned
 * for a core's L1I line, the class-event totals held until the delivery of
 * the core that ran it, the dependence summary, and the clean template
 * (docs/frontend.md; the block path that runs them is block_run.c).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "uarch/retire.h"
#include "uarch/ublock.h"

/* Whether instruction i of a block may start a new fetch line of 2^shift
 * bytes. */
static bool new_fetch_line(const struct dpmu_insn *insns, uint32_t i, uint32_t shift)
{
	if (i == 0)
		return true;
	const struct dpmu_insn *prev = &insns[i - 1];
	return insns[i].pc != prev->pc + prev->isize || (insns[i].pc >> shift) != (prev->pc >> shift);
}

static uint32_t step_op(const struct dpmu_insn *in)
{
	return in->flags & DPMU_IC_STREX	? STEP_OTHER
	       : in->kind == DPMU_INSN_LOAD   ? STEP_LOAD
	       : in->kind == DPMU_INSN_STORE  ? STEP_STORE
	       : in->kind == DPMU_INSN_BRANCH ? STEP_BRANCH
	       : in->exec != DPMU_EX_SIMPLE   ? STEP_EXEC
					      : STEP_NONE;
}

/* How the last instruction of a block of n runs after the steps. */
static uint8_t tail_of(const struct dpmu_insn *insns, uint32_t n, uint32_t shift)
{
	if (step_op(&insns[n - 1]) != STEP_BRANCH)
		return 0;
	/* a one-instruction block's fetch is instruction 0's */
	return TAIL_BRANCH | (n > 1 && new_fetch_line(insns, n - 1, shift) ? TAIL_FETCH : 0) |
	       (insns[n - 1].br_kind == DPMU_BR_COND ? TAIL_COND : 0);
}

/* Whether instruction i of a block reads or changes the machine's state
 * beyond its issue and class events, other than instruction 0's fetch and
 * the tail; 0 if not, else its step | STEP_SOME. */
static uint32_t step_of(const struct dpmu_insn *insns, uint32_t i, uint32_t n, uint32_t shift)
{
	const struct dpmu_insn *in = &insns[i];
	if (i + 1 == n && tail_of(insns, n, shift))
		return 0;
	bool f = i > 0 && new_fetch_line(insns, i, shift);
	uint32_t op = step_op(in);
	if (f || op != STEP_NONE)
		return i | (f ? STEP_FETCH : 0) | op << STEP_OP_SHIFT | STEP_SOME;
	return 0;
}

/* The steps, tail and first_op of b for an L1I line of 2^shift bytes. A
 * block run by cores of other line sizes in turn is planned again each
 * time (the shipped profiles have one line size). */
static void ublock_plan(struct dpmu_ublock *b, uint32_t shift)
{
	const struct dpmu_insn *insns = b->insn; /* a run writes only addr and taken */
	const uint32_t n = b->n;
	b->line_shift = shift;
	b->lean_key = 0; /* the steps change */
	b->tail = tail_of(insns, n, shift);
	b->copy_branch = b->tail ? NULL : b->branch;
	b->first_op = step_of(insns, 0, n, shift) != 0;
	b->nstep = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t st = step_of(insns, i, n, shift);
		if (st)
			b->step[b->nstep++] = st & ~STEP_SOME;
	}
	b->step[b->nstep] = STEP_END;
	/* no steps: instructions 1 to n-2 are in instruction 0's line, and
	 * without TAIL_FETCH so is the tail */
	b->plain_shift = b->nstep == 0 && (b->tail & (TAIL_COND | TAIL_FETCH)) == TAIL_COND
				 ? shift
				 : UINT32_MAX;
	b->tail_hook = b->tail && (b->insn[n - 1].br_kind == DPMU_BR_CALL ||
				   (b->insn[n - 1].flags & DPMU_IC_REG_BRANCH));
	b->head_blk = insns[0].pc >> shift;
}

__attribute__((noinline, cold)) void dpmu_ublock_replan(struct dpmu_ublock *b, uint32_t shift)
{
	ublock_plan(b, shift);
}

/* The dependence summary of a block (timing.h), if it can have one:
 * idep[i], what instruction i's sources are at its issue, and reg[r], what
 * register r is at the block's end (reg_bit(r) alone: untouched). */
static bool block_deps(const struct dpmu_insn *insns, uint32_t n, struct dpmu_udep *idep,
		       struct dpmu_udep reg[DPMU_REG_COUNT])
{
	if (n > DPMU_UDEP_MAX)
		return false;
	for (unsigned r = 0; r < DPMU_REG_COUNT; r++)
		reg[r] = (struct dpmu_udep){reg_bit((uint8_t)r), 0};
	for (uint32_t i = 0; i < n; i++) {
		const struct dpmu_insn *in = &insns[i];
		uint32_t op = step_op(in);
		if (op == STEP_OTHER || (op == STEP_BRANCH && i + 1 < n) ||
		    (in->kind == DPMU_INSN_LOAD && insn_no_regs(in)))
			return false;
		for (unsigned k = 0; k < 3; k++)
			if (in->src[k] >= DPMU_REG_COUNT || in->dst[k] >= DPMU_REG_COUNT)
				return false;
		struct dpmu_udep d = {0, 0};
		for (unsigned k = 0; k < 3; k++) {
			d.entry |= reg[in->src[k]].entry;
			d.load |= reg[in->src[k]].load;
		}
		idep[i] = d;
		/* a load's value, or one with an execution latency: its own
		 * (its start waited for d); any other's, and a base written
		 * back: the latest of its sources' */
		const uint8_t wb = insn_wb_reg(in);
		const struct dpmu_udep a = d;
		if (insn_makes_value(in))
			d = (struct dpmu_udep){0, 1ull << i};
		for (unsigned k = 0; k < 3 && in->dst[k]; k++)
			reg[in->dst[k]] = in->dst[k] == wb ? a : d;
	}
	return true;
}

int dpmu_ublock_create(const struct dpmu_insn *insns, uint32_t n, struct dpmu_ublock **out,
		       struct dpmu_err *err)
{
	*out = NULL;
	if (!insns || n == 0 || n >= STEP_SOME)
		return dpmu_err_set(err, DPMU_EINVAL, "block summary of %u instructions", n);
	uint64_t tot[DPMU_UEV_COUNT + DPMU_IEV_COUNT] = {0};
	uint32_t nev = 0;
	for (uint32_t i = 0; i < n; i++)
		class_events(tot, tot + DPMU_UEV_COUNT, &insns[i]);
	/* INST_RETIRED waits for the delivery with the class events, and so
	 * do the counts every load or store step makes once (the steps are
	 * the same for any line size) */
	tot[DPMU_UEV_INST_RETIRED] = n;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t op = step_op(&insns[i]);
		if (op == STEP_LOAD || op == STEP_STORE)
			for (unsigned e = 0; e < DPMU_MEM_SUMMED; e++)
				tot[dpmu_mem_summed[op == STEP_STORE][e]]++;
	}
	for (unsigned e = 0; e < DPMU_UEV_COUNT + DPMU_IEV_COUNT; e++)
		nev += tot[e] != 0;
	struct dpmu_udep dep[DPMU_REG_COUNT], idep[DPMU_UDEP_MAX];
	const bool dsum = block_deps(insns, n, idep, dep);
	uint32_t nw = 0;
	for (unsigned r = 1; dsum && r < DPMU_REG_COUNT; r++)
		nw += (dep[r].entry != reg_bit((uint8_t)r) || dep[r].load) &&
		      (dep[r].entry || dep[r].load);
	const uint32_t nd = dsum ? n : 0;
	struct dpmu_ublock *b =
		calloc(1, sizeof *b + n * sizeof *b->imask + nd * sizeof *b->idep +
				  nw * sizeof *b->wdep + n * sizeof *b->insn + nev * sizeof *b->ev +
				  (n + 1) * sizeof *b->step +
				  nd * sizeof *b->lean_load + nw * sizeof *b->left +
				  2 * (nd + nw) * sizeof *b->entry_a);
	if (!b)
		return dpmu_err_set(err, DPMU_ENOMEM, "out of memory for a block summary");
	b->n = n;
	/* the 16-byte masks first, where calloc's alignment holds */
	b->imask = (struct dpmu_iregm *)(b + 1);
	b->idep = (struct dpmu_udep *)(b->imask + n);
	b->wdep = (struct dpmu_uwdep *)(b->idep + nd);
	b->dsum = dsum;
	if (dsum) {
		memcpy(b->idep, idep, n * sizeof *idep);
		/* those that name a load first (nwl of them): when no register
		 * pending at entry is named, only they can be left pending */
		for (unsigned pass = 0; pass < 2; pass++) {
			for (unsigned r = 1; r < DPMU_REG_COUNT; r++) {
				if (dep[r].entry == reg_bit((uint8_t)r) && !dep[r].load)
					continue; /* not written, or its own value */
				if (!dep[r].entry && !dep[r].load) {
					if (pass)
						b->fixed |= reg_bit((uint8_t)r);
				} else if ((dep[r].load != 0) == !pass) {
					const uint64_t l = dep[r].load;
					b->wdep[b->nw++] = (struct dpmu_uwdep){
						dep[r], reg_bit((uint8_t)r), (uint8_t)r,
						l && !(l & (l - 1)) ? (uint8_t)__builtin_ctzll(l)
							: DPMU_UWDEP_MANY};
					b->wmask |= reg_bit((uint8_t)r);
					b->win |= dep[r].entry;
				}
			}
			if (!pass)
				b->nwl = b->nw;
		}
	}
	dpmu_u128 loaded = 0, written = 0;
	b->noload = dsum;
	for (uint32_t i = 0; i < n; i++) {
		const struct dpmu_insn *in = &insns[i];
		const struct dpmu_iregm m = b->imask[i] = insn_masks(in);
		b->reads |= m.src & ~written;
		b->walk |= (m.src & loaded) != 0;
		written |= m.dst;
		if (in->kind == DPMU_INSN_LOAD) {
			/* a base written back is computed, not loaded */
			const dpmu_u128 wb = reg_bit(insn_wb_reg(in));
			b->noload = false;
			b->walk |= insn_no_regs(in);
			loaded = (loaded | (m.dst & ~wb)) & ~wb;
			b->computed = (b->computed & ~(m.dst & ~wb)) | wb;
		} else if (in->exec != DPMU_EX_SIMPLE) {
			/* its value has a time, as a load's */
			b->noload = false;
			loaded |= m.dst;
			b->computed &= ~m.dst;
		} else {
			loaded &= ~m.dst;
			b->computed |= m.dst;
		}
	}
	b->touch = b->reads | b->computed;
	b->insn = (struct dpmu_insn *)(b->wdep + nw);
	memcpy(b->insn, insns, n * sizeof *insns);
	b->branch = insns[n - 1].kind == DPMU_INSN_BRANCH ? &b->insn[n - 1] : NULL;
	b->tail_pc = insns[n - 1].pc;
	b->fall = insns[n - 1].pc + insns[n - 1].isize;
	b->ev = (struct dpmu_ublock_ev *)(b->insn + n);
	b->step = (uint32_t *)(b->ev + nev);
	b->lean_load = b->step + n + 1;
	b->left = (struct dpmu_ulean_left *)(b->lean_load + nd);
	b->entry_a = (uint32_t *)(b->left + nw);
	b->entry_b = b->entry_a + nd;
	b->went_a = b->entry_b + nd;
	b->went_b = b->went_a + nw;
	for (unsigned e = 0; e < DPMU_UEV_COUNT + DPMU_IEV_COUNT; e++)
		if (tot[e])
			b->ev[b->nev++] = (struct dpmu_ublock_ev){
				.off = (uint32_t)(e < DPMU_UEV_COUNT
							  ? offsetof(struct dpmu_ucore, pend) +
								    e * sizeof(uint64_t)
							  : offsetof(struct dpmu_ucore, ipend) +
								    (e - DPMU_UEV_COUNT) *
									    sizeof(uint64_t)),
				.n = (uint32_t)tot[e]};
	ublock_plan(b, UBLOCK_LINE_SHIFT);
	*out = b;
	return 0;
}

/* Add `runs` executions' class events of b to its owner's counts (as the
 * runs would have, one by one) and forget them. */
static void block_fold(struct dpmu_ublock *b)
{
	char *base = (char *)b->owner;
	const uint64_t k = b->runs;
	for (uint32_t e = 0; e < b->nev; e++)
		*(uint64_t *)(base + b->ev[e].off) += k * b->ev[e].n;
	b->runs = 0;
	b->owner = NULL;
}

/* Every block a core holds, before its counts are read. */
static void core_fold(struct dpmu_ucore *c)
{
	for (uint32_t k = 0; k < c->nowned; k++)
		block_fold(c->owned[k]);
	c->nowned = 0;
}

/* Order b's entries for c's fold_need set: those it holds first. Rare: a
 * block is ordered again only when the core that runs it changes its
 * delivery list, or another core with another list runs it. */
static __attribute__((noinline)) void block_order(struct dpmu_ublock *b,
						  const struct dpmu_ucore *c)
{
	uint32_t k = 0;
	for (uint32_t e = 0; e < b->nev; e++)
		if (fold_has(c->fold_need, fold_index(b->ev[e].off))) {
			struct dpmu_ublock_ev t = b->ev[k];
			b->ev[k++] = b->ev[e];
			b->ev[e] = t;
		}
	b->nfold = k;
	memcpy(b->fold_key, c->fold_need, sizeof b->fold_key);
}

/* core_fold at a delivery, after the list is brought up to date: only the
 * entries the delivery reads (fold_need); the others it would drop. A
 * block run since the last delivery stays on the list with no runs (most
 * run again in the next batch: its next run then need not adopt it); one
 * that was not leaves it. */
void dpmu_ucore_fold_live(struct dpmu_ucore *c)
{
	char *base = (char *)c;
	uint32_t kept = 0;
	for (uint32_t j = 0; j < c->nowned; j++) {
		struct dpmu_ublock *b = c->owned[j];
		const uint64_t k = b->runs;
		if (!k) {
			b->owner = NULL;
			continue;
		}
		if (b->fold_key[0] != c->fold_need[0] || b->fold_key[1] != c->fold_need[1])
			block_order(b, c);
		const struct dpmu_ublock_ev *ev = b->ev;
		for (uint32_t e = 0, n = b->nfold; e < n; e++)
			*(uint64_t *)(base + ev[e].off) += k * ev[e].n;
		b->runs = 0;
		b->slot = kept;
		c->owned[kept++] = b;
	}
	c->nowned = kept;
}

/* Fold b's counts into its owner and take it off the owner's list. */
static void block_release(struct dpmu_ublock *b)
{
	struct dpmu_ucore *o = b->owner;
	uint32_t s = b->slot;
	block_fold(b);
	struct dpmu_ublock *last = o->owned[--o->nowned];
	o->owned[s] = last;
	last->slot = s;
}

/* The engine that held b is going: its counts go nowhere. */
void dpmu_ublock_detach(struct dpmu_ublock *b)
{
	b->owner = NULL;
	b->runs = 0;
}

/* b's executions on c are counted in b from now (b had none on c). */
__attribute__((noinline)) void dpmu_ublock_adopt(struct dpmu_ucore *c, struct dpmu_ublock *b)
{
	if (b->owner)
		block_release(b); /* run by another core since its delivery */
	if (c->nowned == DPMU_UCORE_OWNED)
		core_fold(c);
	b->owner = c;
	b->slot = c->nowned;
	c->owned[c->nowned++] = b;
}

void dpmu_ublock_destroy(struct dpmu_ublock *b)
{
	if (!b)
		return;
	/* Counts not yet delivered still belong to the core that ran it. */
	if (b->owner)
		block_release(b);
	free(b);
}

/* ---- the template of a clean execution
 *
 * A block with a dependence summary has no steps but loads, stores and new
 * fetch lines (block_deps). In a clean execution (RUN_CLEAN) that waits for
 * no reorder window, while every load hits the L1D and nothing stalls,
 * each load starts at its dispatch slot or when the values its address
 * needs are ready, all at fixed times after the block's start: its
 * template. block_steps then works out no value until something departs
 * from it (a miss, a stall: lean_fill gives the values so far), and the
 * end takes the written values' times from it (lean_end). */

/* b's template for c's core type (the same arithmetic as block_steps's
 * loads: dep_load_value of an L1D hit, dep_exec_value of an instruction
 * with an execution latency, no reorder-window entry when it completes
 * within rob_span of its dispatch). */
__attribute__((noinline, cold)) void dpmu_ublock_lean_template(struct dpmu_ublock *b,
							  const struct dpmu_ucore *c)
{
	const uint64_t cpi = c->cpi_milli, l1 = c->tm.l1_milli, span = c->tm.rob_span;
	uint64_t off[DPMU_UDEP_MAX];
	b->nleft = 0;
	b->left_mask = 0;
	bool ok = true;
	for (uint32_t i = 0; i < b->n; i++) {
		const struct dpmu_insn *in = &b->insn[i];
		if (!insn_makes_value(in))
			continue;
		const uint64_t s = i * cpi;
		uint64_t start = s;
		for (uint64_t l = b->idep[i].load; l; l &= l - 1)
			if (off[__builtin_ctzll(l)] > start)
				start = off[__builtin_ctzll(l)];
		off[i] = start + (in->kind == DPMU_INSN_LOAD ? l1 : c->tm.exe_milli[in->exec]);
		ok &= off[i] - s <= span && off[i] < DPMU_UREG_EXEC;
		b->lean_load[i] = (uint32_t)off[i];
	}
	/* a written value's time, DPMU_UREG_EXEC if it is a computed one's:
	 * of two values ready at once ureg_later takes the computed one */
	for (uint32_t k = 0; k < b->nwl; k++) {
		uint64_t r = 0;
		uint32_t x = 0;
		for (uint64_t l = b->wdep[k].d.load; l; l &= l - 1) {
			const unsigned j = (unsigned)__builtin_ctzll(l);
			const uint32_t xj = b->insn[j].exec != DPMU_EX_SIMPLE ? DPMU_UREG_EXEC : 0;
			if (off[j] > r || (off[j] == r && xj > x)) {
				r = off[j];
				x = xj;
			}
		}
		/* the end is at n x cpi or later (a stall): one ready by
		 * then is never left pending */
		if (r > b->n * cpi) {
			b->left[b->nleft++] = (struct dpmu_ulean_left){(uint32_t)r, x, b->wdep[k].reg};
			b->left_mask |= b->wdep[k].bit;
		}
	}
	b->lean_ok = ok;
	b->lean_type = c->type;
}

/* The same arithmetic with register e pending at entry, ready at T: a
 * load's start is the latest of its dispatch slot, T (if it reads e's
 * value) and the values of the loads it reads, each of the form
 * max(t0 + a, T + b); it is ready an L1D latency later (dep_load_value of
 * an L1D hit). A load that completes within rob_span of its dispatch takes
 * no reorder-window entry (rob_push): for those after T, while T is at
 * most entry_thr after t0. */
__attribute__((noinline, cold)) void dpmu_ublock_entry_template(struct dpmu_ublock *b,
							   const struct dpmu_ucore *c, uint8_t e)
{
	const uint64_t cpi = c->cpi_milli, l1 = c->tm.l1_milli, span = c->tm.rob_span;
	const uint64_t none = UINT64_MAX;
	const dpmu_u128 eb = reg_bit(e);
	uint64_t a[DPMU_UDEP_MAX], bt[DPMU_UDEP_MAX];
	/* none with an execution latency (its value's fields follow its
	 * sources'); an L1D latency, so that a value after T through a load
	 * is later than T itself */
	bool ok = l1 > 0;
	for (uint32_t i = 0; i < b->n; i++)
		ok &= b->insn[i].exec == DPMU_EX_SIMPLE;
	uint64_t thr = UINT64_MAX;
	for (uint32_t i = 0; ok && i < b->n; i++) {
		if (b->insn[i].kind != DPMU_INSN_LOAD)
			continue;
		const uint64_t slot = i * cpi;
		uint64_t sa = slot, sb = b->idep[i].entry & eb ? 0 : none;
		for (uint64_t l = b->idep[i].load; l; l &= l - 1) {
			const unsigned j = (unsigned)__builtin_ctzll(l);
			if (a[j] > sa)
				sa = a[j];
			if (bt[j] != none && (sb == none || bt[j] > sb))
				sb = bt[j];
		}
		a[i] = sa + l1;
		bt[i] = sb == none ? none : sb + l1;
		ok &= a[i] - slot <= span && a[i] < DPMU_UENTRY_SELF;
		if (bt[i] != none) {
			ok &= bt[i] < DPMU_UENTRY_SELF && bt[i] <= span + slot;
			if (bt[i] <= span + slot && span + slot - bt[i] < thr)
				thr = span + slot - bt[i];
		}
		b->entry_a[i] = (uint32_t)a[i];
		b->entry_b[i] = bt[i] == none ? DPMU_UENTRY_NONE : (uint32_t)bt[i];
	}
	for (uint32_t k = 0; ok && k < b->nw; k++) {
		const struct dpmu_uwdep *w = &b->wdep[k];
		uint64_t wa = none, wb = none;
		for (uint64_t l = w->d.load; l; l &= l - 1) {
			const unsigned j = (unsigned)__builtin_ctzll(l);
			if (wa == none || a[j] > wa)
				wa = a[j];
			if (bt[j] != none && (wb == none || bt[j] > wb))
				wb = bt[j];
		}
		b->went_a[k] = wa == none ? DPMU_UENTRY_NONE : (uint32_t)wa;
		b->went_b[k] = wb != none ? (uint32_t)wb
				: w->d.entry & eb ? DPMU_UENTRY_SELF : DPMU_UENTRY_NONE;
	}
	b->entry_ok = ok;
	b->entry_thr = thr;
	b->entry_reg = e;
	b->entry_type = c->type;
}
