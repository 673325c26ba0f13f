/*
 * The block path's executions by a block's template (ublock.h,
 * dpmu_ublock_lean_template, dpmu_ublock_entry_template): out of order,
 * while every load hits the L1D and nothing stalls, each value of the
 * block is ready at a time the template gives, so the steps do only their
 * accesses and the end writes the values that outlive the block. A miss,
 * a stall or a rare step departs to block_steps (block_run.c), which goes
 * on from there with the values so far.
 */
#include "uarch/block_path.h"

/* The values of b's loads before instruction `upto` of an execution that
 * started at t0 and kept to the template so far. */
void dpmu_block_lean_fill(const struct dpmu_ublock *b, struct dpmu_ureg *lv,
						uint32_t upto, uint64_t t0)
{
	for (uint32_t i = 0; i < upto; i++)
		if (insn_makes_value(&b->insn[i]))
			lv[i] = (struct dpmu_ureg){
				t0 + b->lean_load[i], 0,
				b->insn[i].exec != DPMU_EX_SIMPLE ? DPMU_UREG_EXEC : 0};
}

/* The values of b's loads before instruction `upto` of an execution that
 * started at t0 with register e pending, ready at T, and kept to its entry
 * template so far. */
void dpmu_block_entry_fill(const struct dpmu_ublock *b, struct dpmu_ureg *lv,
						 uint32_t upto, uint64_t t0, uint64_t T)
{
	for (uint32_t i = 0; i < upto; i++) {
		if (b->insn[i].kind != DPMU_INSN_LOAD)
			continue;
		const uint64_t ra = t0 + b->entry_a[i];
		const uint64_t rb = b->entry_b[i] == DPMU_UENTRY_NONE ? 0 : T + b->entry_b[i];
		lv[i] = (struct dpmu_ureg){ra > rb ? ra : rb, 0, 0};
	}
}

/* The end of an execution that kept to the template (deps_end_loads with
 * the values' times from it): only the values it may leave pending are
 * looked at (b->left); when it ends at its last dispatch slot, nothing
 * having stalled it, they all are. */
static inline __attribute__((always_inline)) void lean_end(struct dpmu_ucore *c,
							   const struct dpmu_ublock *b, uint64_t t0)
{
	const uint64_t now = core_now(c, 0);
	dpmu_u128 p = c->dep_pend & ~(b->fixed | b->wmask);
	const struct dpmu_ulean_left *l = b->left, *end = l + b->nleft;
	if (now == t0 + (uint64_t)b->n * c->cpi_milli) {
		for (; l < end; l++)
			c->tm.reg[l->reg] = (struct dpmu_ureg){t0 + l->off, 0, l->exec};
		c->dep_pend = p | b->left_mask;
		return;
	}
	for (; l < end; l++) {
		const uint64_t r = t0 + l->off;
		if (r <= now)
			continue;
		c->tm.reg[l->reg] = (struct dpmu_ureg){r, 0, l->exec};
		p |= reg_bit(l->reg);
	}
	c->dep_pend = p;
}

/* The end of a clean execution that kept to its template but for its
 * mispredicted tail, resolving at `resolve` (block_steps's): when the
 * latest of the values its sources name is ready (dep_latest of the
 * template's values: no register pending at entry is read), then the
 * template's end. */
static __attribute__((noinline)) void lean_mispredicted(struct dpmu_ucore *c,
							 const struct dpmu_ublock *b, uint64_t t0,
							 uint64_t resolve)
{
	struct dpmu_ureg v = c->tm.reg[0];
	for (uint64_t l = b->idep[b->n - 1].load; l; l &= l - 1) {
		const unsigned j = (unsigned)__builtin_ctzll(l);
		const struct dpmu_ureg x = {t0 + b->lean_load[j], 0,
					    b->insn[j].exec != DPMU_EX_SIMPLE ? DPMU_UREG_EXEC : 0};
		if (ureg_later(&x, &v))
			v = x;
	}
	dep_resolve(c, &v, resolve);
	lean_end(c, b, t0);
}

/* The end of an execution that kept to its entry template (the deps_end of
 * block_run.c with the values from it): ev, the value of the pending
 * register at entry. */
static inline __attribute__((always_inline)) void entry_end(struct dpmu_ucore *c,
							    const struct dpmu_ublock *b, uint64_t t0,
							    const struct dpmu_ureg *ev)
{
	const uint64_t now = core_now(c, 0), T = ev->ready;
	dpmu_u128 p = c->dep_pend & ~(b->fixed | b->wmask);
	for (uint32_t k = 0; k < b->nw; k++) {
		const uint32_t wa = b->went_a[k], wb = b->went_b[k];
		struct dpmu_ureg v = {wa == DPMU_UENTRY_NONE ? 0 : t0 + wa, 0, 0};
		if (wb == DPMU_UENTRY_SELF) {
			if (!ureg_later(&v, ev))
				v = *ev;
		} else if (wb != DPMU_UENTRY_NONE && T + wb > v.ready) {
			v.ready = T + wb;
		}
		if (v.ready <= now)
			continue;
		const struct dpmu_uwdep *w = &b->wdep[k];
		c->tm.reg[w->reg] = v;
		p |= w->bit;
	}
	c->dep_pend = p;
}

/* The end of an execution that kept to its entry template but for its
 * mispredicted tail (block_steps's dpmu_block_deps_end, the values from it). */
static __attribute__((noinline)) void entry_mispredicted(struct dpmu_ucore *c,
							  const struct dpmu_ublock *b, uint64_t t0,
							  uint64_t T, uint64_t resolve)
{
	struct dpmu_ureg lv[DPMU_UDEP_MAX];
	dpmu_block_entry_fill(b, lv, b->n, t0, T);
	dpmu_block_deps_end(c, b, c->dep_pend, lv, true, resolve);
}

/* Sampling (run_block_sampled) after an execution that kept to its
 * template: its instructions took a dispatch slot each from t0 on, and
 * its last ends on the block's clock (its tail's stall too). The first
 * whose clock reaches wx_x is what block_steps's looks find
 * (watch_hit_at), from the same clocks. */
static inline __attribute__((always_inline)) void lean_watch(struct dpmu_ucore *c, uint32_t n,
							     uint64_t t0, uint32_t cpi)
{
	const uint64_t x = c->wx_x;
	if (__builtin_expect(c->work_milli + 1000 * c->stall_cycles < x, 1))
		return;
	uint64_t j = n - 1;
	/* instruction k < n - 1 ends at t0 + (k + 1) x cpi: the first there */
	if (t0 + (uint64_t)(n - 1) * cpi >= x)
		j = x > t0 ? (x - t0 + cpi - 1) / cpi - 1 : 0;
	c->wx_hit = true;
	c->wx_j = (uint32_t)j;
	c->wx_x = UINT64_MAX;
}

/* An execution by b's template: clean (RUN_CLEAN, dpmu_ublock_lean_template)
 * or, with `entry`, one that reads one register pending at its entry, e
 * (RUN_DEPS, dpmu_ublock_entry_template), while every load hits the L1D,
 * no store waits and no fetch stalls. Then its loads' values are the
 * template's, and its written values are looked at only at its end
 * (lean_end, entry_end). What departs from the template (a miss, a stall,
 * a step block_steps does for itself) goes on in dpmu_block_departed; an
 * execution the template does not hold for (the reorder window may fill,
 * the entry value is too late, a first fetch stall comes after an access)
 * is block_steps's from its start. */
static inline __attribute__((always_inline)) void lean_steps(struct dpmu_uarch *u,
							     struct dpmu_ucore *c,
							     struct dpmu_ublock *b,
							     const uint64_t *addr, uint64_t next_pc,
							     const bool entry, uint8_t e,
							     const bool watch)
{
	const uint32_t n = b->n;
	const uint64_t work0 = c->work_milli;
	const struct dpmu_ureg ev = entry ? c->tm.reg[e] : (struct dpmu_ureg){0, 0, 0};
	if (entry) {
		if (b->line_shift != c->l1i.set.shift)
			dpmu_ublock_replan(b, c->l1i.set.shift);
		if (b->entry_type != c->type || b->entry_reg != e)
			dpmu_ublock_entry_template(b, c, e);
		if (!b->entry_ok || c->rob_limit - c->dep_seq - 1 < n ||
		    ev.ready - (work0 + 1000 * c->stall_cycles) > b->entry_thr) {
			dpmu_block_deps(u, c, b, addr, next_pc, watch);
			return;
		}
	} else {
		if (b->lean_key != c->lean_key) {
			/* (the caller's block_timing said RUN_CLEAN) */
			if (b->line_shift != c->l1i.set.shift)
				dpmu_ublock_replan(b, c->l1i.set.shift);
			if (b->lean_type != c->type)
				dpmu_ublock_lean_template(b, c);
			b->lean_key = b->lean_ok ? c->lean_key : 0;
		}
		if (b->lean_key != c->lean_key || c->rob_limit - c->dep_seq - 1 < n) {
			dpmu_block_clean(u, c, b, addr, next_pc, watch);
			return;
		}
	}
	const uint32_t cpi = c->cpi_milli;
	struct dpmu_insn *insn = b->insn;
	/* a departure: built only then, so that the steps keep few values */
	struct lean_depart dp;
#define LEAN_DEPART(st_, where_, be_, bw_, fe_, t0_)                                          \
	dp = (struct lean_depart){st_, where_, be_, bw_, fe_, work0, c->dep_seq, t0_,          \
				  entry ? e : 0, ev.ready}
	uint64_t fe = fetch_line(u, c, insn[0].pc);
	if (fe) {
		if (b->first_op) {
			/* added after the access: block_steps's order */
			LEAN_DEPART(b->step, LEAN_AT_ACCESS, 0, 0, fe, work0 + 1000 * c->stall_cycles);
			goto depart;
		}
		front_stall(c, fe);
	}
	const uint64_t t0 = work0 + 1000 * c->stall_cycles;
	const uint64_t work1 = work0 + cpi;
	for (const uint32_t *step = b->step; *step != STEP_END; step++) {
		const uint32_t st = *step, i = st & STEP_INDEX, op = STEP_OP(st);
		struct dpmu_insn *in = &insn[i];
		if (st & STEP_FETCH) {
			c->work_milli = work0 + (uint64_t)i * cpi;
			fe = fetch_line(u, c, in->pc);
			if (fe) {
				LEAN_DEPART(step, LEAN_AT_ACCESS, 0, 0, fe, t0);
				goto depart;
			}
		}
		const uint64_t wi = work1 + (uint64_t)i * cpi;
		uint32_t bw = 0;
		if (op == STEP_LOAD) {
			in->addr = addr[i];
			const uint32_t be = dpmu_mem_op(u, c, in, false, &bw, true, wi);
			if (be) {
				LEAN_DEPART(step, LEAN_AFTER_LOAD, be, bw, 0, t0);
				goto depart;
			}
		} else if (op == STEP_STORE) {
			in->addr = addr[i];
			dpmu_mem_op(u, c, in, true, &bw, true, wi);
			if (bw) {
				LEAN_DEPART(step, LEAN_AFTER_STORE, 0, bw, 0, t0);
				goto depart;
			}
		} else if (op != STEP_NONE && op != STEP_EXEC) {
			LEAN_DEPART(step, LEAN_AT_ACCESS, 0, 0, 0, t0);
			goto depart;
		}
	}
#undef LEAN_DEPART
	bool mispredicted = false;
	uint64_t resolve = 0;
	if (b->tail) {
		fe = 0;
		if (b->tail & TAIL_FETCH) {
			c->work_milli = work0 + (uint64_t)(n - 1) * cpi;
			fe = fetch_line(u, c, b->tail_pc);
		}
		const uint64_t mp = c->pend[DPMU_UEV_BR_MIS_PRED], fe0 = fe;
		if (b->tail & TAIL_COND) {
			fe += cond_tail(c, b, next_pc);
		} else {
			struct dpmu_insn *t = &insn[n - 1];
			dpmu_insn_branch_to(t, next_pc);
			fe += branch_op(c, t);
		}
		mispredicted = c->pend[DPMU_UEV_BR_MIS_PRED] != mp;
		if (mispredicted)
			resolve = work0 + (uint64_t)n * cpi + 1000 * (c->stall_cycles + fe0);
		if (fe)
			front_stall(c, fe);
	}
	c->work_milli = work0 + (uint64_t)n * cpi;
	c->dep_seq += n;
	if (entry && mispredicted)
		entry_mispredicted(c, b, t0, ev.ready, resolve);
	else if (entry)
		entry_end(c, b, t0, &ev);
	else if (mispredicted)
		lean_mispredicted(c, b, t0, resolve);
	else
		lean_end(c, b, t0);
	if (watch)
		lean_watch(c, n, t0, cpi);
	block_ran(u, c, b);
	if (watch && (c->wx_hit || b->tail_hook))
		dpmu_block_sampled_hooks(u, c, b, next_pc);
	return;
depart:
	if (entry)
		dpmu_block_departed_deps(u, c, b, addr, next_pc, &dp, watch);
	else
		dpmu_block_departed(u, c, b, addr, next_pc, &dp, watch);
}

void dpmu_block_lean(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
		     const uint64_t *addr, uint64_t next_pc)
{
	lean_steps(u, c, b, addr, next_pc, false, 0, false);
}

void dpmu_block_entry(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
		      const uint64_t *addr, uint64_t next_pc, uint8_t e)
{
	lean_steps(u, c, b, addr, next_pc, true, e, false);
}

void dpmu_block_lean_watched(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
			     const uint64_t *addr, uint64_t next_pc)
{
	lean_steps(u, c, b, addr, next_pc, false, 0, true);
}

void dpmu_block_entry_watched(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
			      const uint64_t *addr, uint64_t next_pc, uint8_t e)
{
	lean_steps(u, c, b, addr, next_pc, true, e, true);
}

