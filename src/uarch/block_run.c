/*
 * The block path: an execution of a translated block's summary (ublock.h)
 * on a core, with the same events and timing as retiring its instructions
 * one by one (uarch.c), by the summary's steps and, out of order, its
 * dependence summary (timing.h).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "uarch/block_path.h"

/* Sampling on the block path: where in a block the clock first reaches
 * wx_x, the clock after instruction i being what the per-instruction path
 * has there. Between two looks the instructions take a dispatch slot
 * each on the base the earlier look saw (the block path's timing: waits
 * and stalls happen at its steps, each looked at). */
struct wlook {
	uint64_t base;  /* the clock after instruction k is base + (k + 1) x cpi */
	uint32_t from;  /* the last instruction looked at (UINT32_MAX: none) */
};

static inline uint64_t core_clk(const struct dpmu_ucore *c)
{
	return c->work_milli + 1000 * c->stall_cycles;
}

/* A look that found the clock at or past wx_x: the first instruction
 * there, the segment since the last look first. No later look finds
 * another (wx_x is put out of reach until the hooks have run). */
static __attribute__((noinline, cold)) void watch_hit_at(struct dpmu_ucore *c,
							  const struct wlook *w, uint32_t i,
							  uint32_t cpi)
{
	const uint64_t x = c->wx_x;
	const uint32_t k0 = w->from + 1; /* 0 after none */
	uint32_t j = i;
	/* instruction i - 1 ends at base + i x cpi: in the segment only if so */
	if (k0 < i && w->base + (uint64_t)i * cpi >= x) {
		/* the first k >= k0 with base + (k + 1) x cpi >= x */
		uint64_t need = x > w->base ? x - w->base : 0;
		uint64_t k = need ? (need + cpi - 1) / cpi - 1 : 0;
		j = k < k0 ? k0 : (uint32_t)k;
	}
	c->wx_hit = true;
	c->wx_j = j;
	c->wx_x = UINT64_MAX;
}

/* A look at instruction i, whose clock ends at base_now + (i + 1) x cpi. */
static inline void watch_at(struct dpmu_ucore *c, struct wlook *w, uint32_t i, uint64_t base_now,
			    uint32_t cpi)
{
	if (__builtin_expect(base_now + (uint64_t)(i + 1) * cpi >= c->wx_x, 0)) {
		watch_hit_at(c, w, i, cpi);
		return;
	}
	w->base = base_now;
	w->from = i;
}

/* The per-instruction paths (walk, split): the clock is there after each. */
static inline void watch_insn(struct dpmu_ucore *c, uint32_t i)
{
	if (c->sample_on && core_clk(c) >= c->wx_x) {
		c->wx_hit = true;
		c->wx_j = i;
		c->wx_x = UINT64_MAX;
	}
}

/* Input the per-instruction path reports: one by one (out of line, so
 * the common path stays small). */
static __attribute__((noinline)) void run_block_slow(struct dpmu_uarch *u, unsigned core,
						     struct dpmu_ublock *b, const uint64_t *addr)
{
	for (uint32_t i = 0; i < b->n; i++)
		if (b->insn[i].kind == DPMU_INSN_LOAD || b->insn[i].kind == DPMU_INSN_STORE)
			b->insn[i].addr = addr[i];
	dpmu_uarch_retire(u, core, b->insn, b->n);
}

/* A branch inside a block (not its tail) or a store-exclusive, with the
 * work clock past its issue; returns its front-end stall. Out of line:
 * rare, and the step loop keeps fewer registers live without it. */
static __attribute__((noinline)) uint64_t step_rare(struct dpmu_uarch *u, struct dpmu_ucore *c,
						    struct dpmu_insn *in, uint32_t op,
						    uint64_t addr, uint32_t cpi, struct dpmu_iregm m)
{
	if (op == STEP_BRANCH)
		return branch_op(c, in);
	if (in->kind == DPMU_INSN_LOAD || in->kind == DPMU_INSN_STORE)
		in->addr = addr;
	c->work_milli -= cpi; /* insn_dynamic issues it */
	c->dep_seq--;         /* and dispatches it */
	/* It waits for nothing (block_timing), and its results are ready at
	 * its issue (the block's end settles dep_pend): the timing sees
	 * nothing pending, as the block's own earlier writes of what was
	 * pending are not in dep_pend yet. */
	const dpmu_u128 pend = c->dep_pend;
	c->dep_pend = 0;
	insn_dynamic(u, c, in, m, cpi, false, true, false);
	c->dep_pend = pend;
	return 0;
}

/* A block with a delivery point inside: its instructions up to each
 * delivery point with their class events, so each delivery gets what it
 * would one by one (the class events of a part of the block are not in
 * the summary's totals); without dpmu_uarch_retire's checks and copies. */
/* The end of a sampled block (run_block_sampled): the overflow found in
 * it, then the call or return it ended with. wx_x is the counters' again
 * (the sample's tick re-arms it anyway). */
void dpmu_block_sampled_hooks(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
			      uint64_t next_pc)
{
	if (c->wx_hit) {
		c->wx_hit = false;
		c->wx_x = c->wx_armed;
		if (u->hooks.overflow)
			u->hooks.overflow(u->hooks_ctx, c->id, &b->insn[c->wx_j]);
	}
	if (b->tail_hook && u->hooks.branch)
		u->hooks.branch(u->hooks_ctx, c->id, &b->insn[b->n - 1], next_pc);
}

static __attribute__((noinline)) void run_block_split(struct dpmu_uarch *u, struct dpmu_ucore *c,
						      struct dpmu_ublock *b, const uint64_t *addr,
						      uint64_t next_pc)
{
	const uint32_t cpi = c->cpi_milli;
	const uint32_t n = b->n;
	for (uint32_t lo = 0; lo < n;) {
		uint32_t hi = n - lo <= c->batch_left ? n : lo + c->batch_left;
		for (uint32_t i = lo; i < hi; i++) {
			struct dpmu_insn *in = &b->insn[i];
			if (in->kind == DPMU_INSN_LOAD || in->kind == DPMU_INSN_STORE)
				in->addr = addr[i];
			/* insn_dynamic checks the fetch line of each */
			insn_dynamic(u, c, in, b->imask[i], cpi, true, in->flags & DPMU_IC_STREX,
				     false);
			class_events(c->pend, c->ipend, in);
			watch_insn(c, i);
		}
		retired(u, c, hi - lo);
		lo = hi;
	}
	if (c->sample_on && (c->wx_hit || b->tail_hook))
		dpmu_block_sampled_hooks(u, c, b, next_pc);
}

/* A block with no delivery point inside whose instructions wait for one
 * another or for what is pending (needs_walk): each instruction timed as
 * the per-instruction path does, the class events and the summed access
 * counts from the summary. */
static __attribute__((noinline)) void run_block_walk(struct dpmu_uarch *u, struct dpmu_ucore *c,
						     struct dpmu_ublock *b, const uint64_t *addr,
						     uint64_t next_pc)
{
	if (b->line_shift != c->l1i.set.shift)
		dpmu_ublock_replan(b, c->l1i.set.shift);
	if (b->branch)
		dpmu_insn_branch_to(b->branch, next_pc);
	const uint32_t cpi = c->cpi_milli;
	const uint32_t n = b->n;
	/* Instruction 0, the steps and the tail as the per-instruction path
	 * times them; the others stay in their predecessor's fetch line and
	 * neither access memory nor branch: only their dependences. */
	const uint32_t *step = b->step;
	const uint32_t tail = b->tail ? n - 1 : n;
	for (uint32_t i = 0; i < n; i++) {
		struct dpmu_insn *in = &b->insn[i];
		const bool is_step = *step != STEP_END && (*step & STEP_INDEX) == i;
		if (!is_step && i != 0 && i != tail) {
			insn_plain(c, in, b->imask[i], cpi);
			watch_insn(c, i);
			continue;
		}
		step += is_step;
		bool strex = in->flags & DPMU_IC_STREX;
		if (in->kind == DPMU_INSN_LOAD || in->kind == DPMU_INSN_STORE)
			in->addr = addr[i];
		if ((in->kind == DPMU_INSN_LOAD || in->kind == DPMU_INSN_STORE) && !strex)
			insn_dynamic(u, c, in, b->imask[i], cpi, true, false, true);
		else
			insn_dynamic(u, c, in, b->imask[i], cpi, true, strex, false);
		watch_insn(c, i);
	}
	block_ran(u, c, b);
	if (c->sample_on && (c->wx_hit || b->tail_hook))
		dpmu_block_sampled_hooks(u, c, b, next_pc);
}

/* Of the registers p of c marked pending, those still pending; those
 * found ready by now are settled here. */
static inline __attribute__((always_inline)) dpmu_u128 pending_of(struct dpmu_ucore *c,
								   dpmu_u128 p)
{
	const uint64_t now = core_now(c, 0);
	dpmu_u128 q = p;
	for (; p; p &= p - 1) {
		const unsigned r = u128_ctz(p);
		if (c->tm.reg[r].ready <= now) {
			c->dep_pend &= ~reg_bit((uint8_t)r);
			q &= ~reg_bit((uint8_t)r);
		}
	}
	return q;
}

/* How an execution of b on c is timed (run_block_steps): RUN_DEPS from
 * the dependence summary, RUN_CLEAN the same when no register the block
 * reads is pending (only its own loads' values are waited for). */
enum { RUN_STEPS, RUN_DEPS, RUN_CLEAN, RUN_WALK };

/* `pend`: b reads a register of c still pending (the others it reads
 * settled: pending_of). */
static inline int block_timing(const struct dpmu_ucore *c, const struct dpmu_ublock *b,
			       bool pend)
{
	/* the reorder window may fill within the block (a load of the
	 * block may start it) */
	if (c->tm.window && b->n > c->tm.window)
		return RUN_WALK;
	/* out of order, a block that reads nothing pending is clean: with
	 * or without a load whose value the block reads, its template
	 * (dpmu_block_lean) times it while it keeps to it */
	if (c->tm.window && b->dsum)
		return pend ? RUN_DEPS : RUN_CLEAN;
	/* in order, every instruction that waits is timed */
	return b->walk || pend ? RUN_WALK : RUN_STEPS;
}

/* A block's end: the register w names holds value v, pending (in *p)
 * unless v is ready by now. Field by field, as dep_latest says why. */
static inline __attribute__((always_inline)) void deps_end_write(struct dpmu_ucore *c,
								 const struct dpmu_uwdep *w,
								 const struct dpmu_ureg *v,
								 uint64_t now, dpmu_u128 *p)
{
	if (v->ready <= now)
		return;
	struct dpmu_ureg *r = &c->tm.reg[w->reg];
	r->ready = v->ready;
	r->mem = v->mem;
	r->tlb = v->tlb;
	*p |= w->bit;
}

/* The end of a RUN_DEPS execution whose written values are its loads'
 * alone (no register pending at entry that they name): the registers the
 * block wrote hold their values (lv: dep_latest's); those ready by now
 * are not pending (their time is past), nor is any other it wrote. */
static inline __attribute__((always_inline)) void
deps_end_loads(struct dpmu_ucore *c, const struct dpmu_ublock *b, const struct dpmu_ureg *lv)
{
	const uint64_t now = core_now(c, 0);
	dpmu_u128 p = c->dep_pend & ~(b->fixed | b->wmask);
	const struct dpmu_uwdep *w = b->wdep, *end = w + b->nwl;
	for (; w < end; w++) {
		const struct dpmu_ureg *v;
		if (w->one != DPMU_UWDEP_MANY) {
			v = &lv[w->one];
		} else {
			uint64_t l = w->d.load;
			v = &lv[__builtin_ctzll(l)];
			for (l &= l - 1; l; l &= l - 1)
				if (ureg_later(&lv[__builtin_ctzll(l)], v))
					v = &lv[__builtin_ctzll(l)];
		}
		deps_end_write(c, w, v, now, &p);
	}
	c->dep_pend = p;
}

/* The end of any other RUN_DEPS execution: a mispredicted tail resolves
 * at `resolve` when its sources are ready; the written registers' values
 * name the registers pending at entry (pend) too. Those few (most often
 * one) are copied first: the writes below change them, and each written
 * value then looks at them, not at every register it names. */
void dpmu_block_deps_end(struct dpmu_ucore *c, const struct dpmu_ublock *b, dpmu_u128 pend,
			 const struct dpmu_ureg *lv, bool mispredicted, uint64_t resolve)
{
	if (mispredicted)
		dep_resolve(c, dep_latest(c, pend, &b->idep[b->n - 1], lv), resolve);
	dpmu_u128 q = pend & b->win;
	if (!q) {
		deps_end_loads(c, b, lv);
		return;
	}
	/* by register: only q's entries are written and read */
	struct dpmu_ureg ev[DPMU_REG_COUNT];
	for (dpmu_u128 e = q; e; e &= e - 1) {
		const unsigned k = u128_ctz(e);
		ev[k] = c->tm.reg[k];
	}
	const uint64_t now = core_now(c, 0);
	dpmu_u128 p = c->dep_pend & ~(b->fixed | b->wmask);
	const struct dpmu_uwdep *w = b->wdep, *end = w + b->nw;
	for (; w < end; w++) {
		const struct dpmu_ureg *v = &c->tm.reg[0];
		for (dpmu_u128 e = w->d.entry & q; e; e &= e - 1)
			if (ureg_later(&ev[u128_ctz(e)], v))
				v = &ev[u128_ctz(e)];
		for (uint64_t l = w->d.load; l; l &= l - 1)
			if (ureg_later(&lv[__builtin_ctzll(l)], v))
				v = &lv[__builtin_ctzll(l)];
		deps_end_write(c, w, v, now, &p);
	}
	c->dep_pend = p;
}

/* The end of a RUN_DEPS execution of a block without loads whose tail
 * was predicted: each value it writes is ready when the latest of the
 * registers pending at its entry that it names is (q: those); most often
 * one register is, whose value those that name it then hold. */
static inline __attribute__((always_inline)) void deps_end_noload(struct dpmu_ucore *c,
								  const struct dpmu_ublock *b,
								  dpmu_u128 pend0, dpmu_u128 q)
{
	if (q & (q - 1)) {
		dpmu_block_deps_end(c, b, pend0, NULL, false, 0); /* (no load: lv is not read) */
		return;
	}
	dpmu_u128 p = c->dep_pend & ~(b->fixed | b->wmask);
	if (q) {
		const struct dpmu_ureg ev = c->tm.reg[u128_ctz(q)];
		if (ev.ready > core_now(c, 0))
			for (const struct dpmu_uwdep *w = b->wdep, *end = w + b->nw; w < end; w++)
				if (w->d.entry & q) {
					c->tm.reg[w->reg] = ev;
					p |= w->bit;
				}
	}
	c->dep_pend = p;
}

/* The block path on core c, below dpmu_uarch_run_block_on: a block with
 * no delivery point inside (one with one goes to run_block_split). Its
 * own function, given the core and not its index: inside one function
 * with the index, gcc derives &u->cores[core] again wherever it needs the
 * pointer (it costs no register), in a way that depends on the size of
 * struct dpmu_ucore. */
static __attribute__((noinline)) void run_block_steps(struct dpmu_uarch *u,
						       struct dpmu_ucore *c,
						       struct dpmu_ublock *b,
						       const uint64_t *addr, uint64_t next_pc);
static __attribute__((noinline)) void run_block_sampled(struct dpmu_uarch *u,
							 struct dpmu_ucore *c,
							 struct dpmu_ublock *b,
							 const uint64_t *addr, uint64_t next_pc);

/* Most blocks are plain (no steps, a conditional tail in the first line)
 * and run where the last fetch left off, owned by the core that runs
 * them, with no delivery point at their end, the reorder window not
 * reached within them: then all the block path does is the tail's
 * prediction, the clock and, if the block reads a register still
 * pending, the values it writes (fetch_line would return 0 for the
 * block's one fetch: its line is the last one fetched). */
static inline __attribute__((always_inline)) bool plain_gate(const struct dpmu_ucore *c,
							     const struct dpmu_ublock *b)
{
	const uint32_t n = b->n;
	return b->plain_shift == c->l1i.set.shift && n < c->batch_left && b->owner == c &&
	       b->head_blk == c->last_fetch_blk &&
	       c->dep_seq + n < c->rob_limit;
}

/* A plain block that reads nothing pending: each instruction takes a
 * dispatch slot, the tail's front stall (*fe) comes last; what it
 * computes is ready (`settle`: some of it was marked pending). */
static inline __attribute__((always_inline)) void
plain_end(struct dpmu_ucore *c, struct dpmu_ublock *b, uint64_t next_pc, uint64_t *fe,
	  const bool settle)
{
	const uint32_t n = b->n;
	if (settle)
		c->dep_pend &= ~b->computed;
	*fe = cond_tail(c, b, next_pc);
	if (*fe)
		front_stall(c, *fe);
	c->work_milli += (uint64_t)n * c->cpi_milli;
	c->dep_seq += n;
	b->runs++;
	c->batch_left -= n;
}

/* plain_gate and plain_end; false, having done nothing, for any other
 * block. */
static inline __attribute__((always_inline)) bool
plain_run(struct dpmu_ucore *c, struct dpmu_ublock *b, uint64_t next_pc, uint64_t *fe)
{
	if (!plain_gate(c, b) || (c->dep_pend & b->reads))
		return false;
	plain_end(c, b, next_pc, fe, true);
	return true;
}

/* A plain block (plain_gate) that reads a register pending at its entry.
 * Out of order, none of its instructions waits (only loads, those with an
 * execution latency and a mispredicted branch do, and it has no step):
 * the tail resolves, if mispredicted, when its sources are ready, and the
 * registers it writes get their values (block_steps of a RUN_DEPS
 * execution without steps, without its set-up). In order, or without a
 * dependence summary, the steps' path. */
static __attribute__((noinline)) void run_plain_pending(struct dpmu_uarch *u,
							 struct dpmu_ucore *c,
							 struct dpmu_ublock *b,
							 const uint64_t *addr, uint64_t next_pc)
{
	uint64_t fe;
	if (!pending_of(c, c->dep_pend & b->reads)) {
		plain_end(c, b, next_pc, &fe, true);
		return;
	}
	const uint32_t n = b->n;
	if (!c->tm.window || n > c->tm.window || !b->dsum || !b->noload) {
		run_block_steps(u, c, b, addr, next_pc);
		return;
	}
	const dpmu_u128 pend0 = c->dep_pend;
	const uint64_t end = c->work_milli + (uint64_t)n * c->cpi_milli;
	const uint64_t mp = c->pend[DPMU_UEV_BR_MIS_PRED];
	fe = cond_tail(c, b, next_pc);
	const bool mispredicted = c->pend[DPMU_UEV_BR_MIS_PRED] != mp;
	/* it resolves a dispatch slot after its issue (block_steps) */
	const uint64_t resolve = end + 1000 * c->stall_cycles;
	if (fe)
		front_stall(c, fe);
	c->work_milli = end;
	c->dep_seq += n;
	if (mispredicted)
		dpmu_block_deps_end(c, b, pend0, NULL, true, resolve);
	else
		deps_end_noload(c, b, pend0, pend0 & b->win);
	b->runs++;
	c->batch_left -= n;
}

/* dpmu_uarch_run_block on core c. Exported for the qemu backend's
 * decoder, which holds each vCPU's core handle and skips
 * dpmu_uarch_run_block's checks (4 % of its host instructions on LZ77).
 * A plain block that reads nothing pending runs here (plain_end), with
 * no call, so with no frame; the others go on to run_plain_pending or
 * run_block_steps, a tail call. */
static inline __attribute__((always_inline)) void run_block_unsampled(struct dpmu_uarch *u,
								      struct dpmu_ucore *c,
								      struct dpmu_ublock *b,
								      const uint64_t *addr,
								      uint64_t next_pc)
{
	if (!plain_gate(c, b)) {
		run_block_steps(u, c, b, addr, next_pc);
		return;
	}
	uint64_t fe;
	if (!(c->dep_pend & b->touch)) {
		plain_end(c, b, next_pc, &fe, false);
		return;
	}
	if (c->dep_pend & b->reads) {
		run_plain_pending(u, c, b, addr, next_pc);
		return;
	}
	plain_end(c, b, next_pc, &fe, true);
}

/* A block on a traced core (dpmu_uarch_run_block_on): the trace unit
 * first, then the sampled path or the usual one. Out of line: with the
 * call to the trace unit inline, dpmu_uarch_run_block_on keeps a frame for
 * the values it needs after the call, on every block. Not `cold`: gcc
 * would then take run_block_sampled, called from here, for cold too, and
 * build record's whole block path for size. */
static __attribute__((noinline)) void run_block_traced(struct dpmu_uarch *u,
						      struct dpmu_ucore *c,
						      struct dpmu_ublock *b,
						      const uint64_t *addr, uint64_t next_pc)
{
	dpmu_uarch_trace_run(u, c, b->insn, b->n, true, next_pc);
	if (c->sample_on) {
		run_block_sampled(u, c, b, addr, next_pc);
		return;
	}
	run_block_unsampled(u, c, b, addr, next_pc);
}

void dpmu_uarch_run_block_on(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
			     const uint64_t *addr, uint64_t next_pc)
{
	/* a traced core's blocks go to its trace unit first; a sampling
	 * core's have their own path (each a jump: no frame here) */
	if (__builtin_expect(c->observed != 0, 0)) {
		if (c->trace_on)
			run_block_traced(u, c, b, addr, next_pc);
		else
			run_block_sampled(u, c, b, addr, next_pc);
		return;
	}
	run_block_unsampled(u, c, b, addr, next_pc);
}

/* Out of order, the instructions of a block run by its steps up to index
 * `upto` that find the reorder window full (from *rob_at, the first that
 * may: rob_limit's): each waits as dep_issue has it, at its issue with
 * `fe` of fetch stall not yet counted, and the block's clock (*work0,
 * *work1) moves on by the wait. Then *rob_at is the next that may. */
static __attribute__((noinline)) void rob_steps(struct dpmu_ucore *c, uint64_t upto, uint64_t seq0,
						uint64_t *work0, uint64_t *work1, uint64_t *rob_at,
						uint64_t fe, struct wlook *look)
{
	const uint32_t cpi = c->cpi_milli;
	while (*rob_at <= upto) {
		const uint64_t k = *rob_at;
		c->dep_seq = seq0 + k + 1;
		c->work_milli = *work0 + k * cpi;
		const uint64_t w = rob_wait(c, core_now(c, fe));
		*work0 += w;
		*work1 += w;
		/* sampling: the wait is instruction k's */
		if (look)
			watch_at(c, look, (uint32_t)k, *work0 + 1000 * c->stall_cycles, cpi);
		/* past instruction k: rob_wait let every older entry go */
		*rob_at = c->rob_limit - seq0 - 1;
	}
}

/* An execution of b on c by its steps. Without `deps` no instruction
 * waits (block_timing): only the loads' values matter, which nothing in
 * the block reads, and their place in the reorder window. With `deps`
 * (out of order) the loads start when their sources are ready, a
 * mispredicted tail resolves when its are, and the registers the block
 * writes get their values, all from the dependence summary. The other
 * flags, each fixed by the caller: `clean`, nothing the block reads is
 * pending (RUN_CLEAN); `watch`, sampling's looks at the clock; `noload`
 * (deps, a block without loads), no load steps and deps_end_noload's end.
 * dp (clean only): the execution kept to its template until dp says, and
 * goes on from there. */
static inline __attribute__((always_inline)) void
block_steps(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
	    const uint64_t *addr, uint64_t next_pc, const bool deps, const bool clean,
	    const bool watch, const bool noload, const struct lean_depart *dp)
{
	if (!dp && b->line_shift != c->l1i.set.shift)
		dpmu_ublock_replan(b, c->l1i.set.shift);
	const uint32_t cpi = c->cpi_milli;
	uint64_t work0 = dp ? dp->work0 : c->work_milli;
	const uint64_t seq0 = dp ? dp->seq0 : c->dep_seq;
	/* the first instruction that may find the reorder window full (out
	 * of order; past the block when none): rob_steps */
	uint64_t rob_at = c->rob_limit - seq0 - 1;
	/* deps: the registers pending at entry, the block's loads' values;
	 * clean: none the block reads is (block_timing), so no value the
	 * summary names is an entry register's (they are all read) */
	const dpmu_u128 pend0 = clean ? 0 : c->dep_pend;
	struct dpmu_ureg lv[DPMU_UDEP_MAX];
	/* instruction i issues at work1 + i * cpi: one add fewer a step */
	uint64_t work1 = work0 + cpi;
	/* locals: the stores into the core's counts below may alias b */
	const uint32_t *step = b->step;
	struct dpmu_insn *insn = b->insn;
	uint64_t fe;
	/* watch (sampling): the looks at the steps (run_block_sampled) */
	struct wlook look, *const lk = watch ? &look : NULL;
	uint32_t st, i, op, be = 0, bw = 0;
	struct dpmu_insn *in;
	uint64_t wi;
	if (dp) {
		step = dp->step;
		st = *step;
		i = st & STEP_INDEX;
		in = &insn[i];
		wi = work1 + (uint64_t)i * cpi;
		op = STEP_OP(st);
		fe = dp->fe;
		be = dp->be;
		bw = dp->bw;
		/* the looks before the departure each saw t0: what they
		 * would have found, the next look finds (watch_hit_at) */
		look = (struct wlook){dp->t0, UINT32_MAX};
		if (clean)
			dpmu_block_lean_fill(b, lv, i, dp->t0);
		else
			dpmu_block_entry_fill(b, lv, i, dp->t0, dp->T);
		if (dp->where == LEAN_AFTER_LOAD)
			goto after_load;
		if (dp->where == LEAN_AFTER_STORE)
			goto after_store;
		goto at_access;
	}
	/* insn_dynamic by step kind: the same work in the same order (the
	 * fetch, the issue, the access or branch, then the stalls). A fetch
	 * stall is added after the instruction's access, which reads the
	 * clock; without an access (no first_op) it can be added at once, as
	 * nothing else between reads the stall cycles. */
	c->work_milli = work0;
	fe = fetch_line(u, c, insn[0].pc);
	if (fe && !b->first_op) {
		front_stall(c, fe);
		fe = 0;
	}
	look = (struct wlook){work0 + 1000 * c->stall_cycles, UINT32_MAX};
	for (; (st = *step) != STEP_END; step++) {
		i = st & STEP_INDEX;
		in = &insn[i];
		/* a wait for the window before the fetch, or at the issue */
		if (rob_at < i)
			rob_steps(c, i - 1, seq0, &work0, &work1, &rob_at, 0, lk);
		if (st & STEP_FETCH) {
			c->work_milli = work0 + (uint64_t)i * cpi;
			fe = fetch_line(u, c, in->pc);
		}
		if (rob_at == i)
			rob_steps(c, i, seq0, &work0, &work1, &rob_at, fe, lk);
		/* the issue: stored only where read (the access's paths out
		 * of line, or the rare steps) */
		wi = work1 + (uint64_t)i * cpi;
		op = STEP_OP(st);
	at_access:
		if (!noload && op == STEP_LOAD) {
			in->addr = addr[i];
			be = dpmu_mem_op(u, c, in, false, &bw, true, wi);
		after_load:;
			uint64_t s = wi - cpi + 1000 * (c->stall_cycles + fe);
			c->dep_seq = seq0 + i + 1;
			if (deps) {
				const struct dpmu_udep *d = &b->idep[i];
				if (!((clean ? 0 : d->entry & pend0) | d->load | be) &&
				    c->tm.l1_short) {
					/* an L1D hit that waited for nothing:
					 * dep_load_value's, and no reorder-window
					 * entry (rob_push) */
					lv[i].ready = s + c->tm.l1_milli;
					lv[i].mem = lv[i].tlb = 0;
				} else {
					const struct dpmu_ureg *a = dep_latest(c, pend0, d, lv);
					struct dpmu_ureg v = dep_load_value(c, a, s, be, c->tlb_stall);
					dep_load_retires(c, s, v);
					lv[i].ready = v.ready;
					lv[i].mem = v.mem;
					lv[i].tlb = v.tlb;
				}
			} else {
				dep_load(c, in, b->imask[i], &c->tm.reg[0], s, be, c->tlb_stall);
			}
		} else if (op == STEP_EXEC) {
			/* an execution latency: the value's time (a load's
			 * arithmetic without the access) */
			const uint64_t s = wi - cpi + 1000 * (c->stall_cycles + fe);
			c->dep_seq = seq0 + i + 1;
			if (deps) {
				const struct dpmu_ureg v =
					dep_exec_value(c, in, dep_latest(c, pend0, &b->idep[i], lv), s);
				dep_load_retires(c, s, v);
				lv[i] = v;
			} else {
				dep_exec(c, in, b->imask[i], &c->tm.reg[0], s);
			}
		} else if (op == STEP_STORE) {
			bw = 0;
			in->addr = addr[i];
			dpmu_mem_op(u, c, in, true, &bw, true, wi);
		after_store:
			if (bw)
				store_stall(c, bw);
		} else if (op != STEP_NONE) {
			/* A last branch that is not the tail reads its outcome
			 * from the block's copy, as the per-instruction path
			 * does: written here, where it is read, so that the
			 * blocks without one test nothing. */
			if (in == b->copy_branch)
				dpmu_insn_branch_to(in, next_pc);
			c->work_milli = wi;
			c->dep_seq = seq0 + i + 1;
			fe += step_rare(u, c, in, op, addr[i], cpi, b->imask[i]);
		}
		if (fe) {
			front_stall(c, fe);
			fe = 0;
		}
		if (watch)
			watch_at(c, lk, i, work0 + 1000 * c->stall_cycles, cpi);
	}
	/* Read again after the steps: fewer values live across them */
	const uint32_t n = b->n;
	bool mispredicted = false;
	uint64_t resolve = 0;
	if (rob_at < n - 1)
		rob_steps(c, n - 2, seq0, &work0, &work1, &rob_at, 0, lk);
	if (b->tail) {
		/* The branch reads no clock but its fetch may. */
		if (b->tail & TAIL_FETCH) {
			c->work_milli = work0 + (uint64_t)(n - 1) * cpi;
			fe = fetch_line(u, c, b->tail_pc);
		}
		if (rob_at == n - 1)
			rob_steps(c, n - 1, seq0, &work0, &work1, &rob_at, fe, lk);
		const uint64_t mp = c->pend[DPMU_UEV_BR_MIS_PRED], fe0 = fe;
		if (b->tail & TAIL_COND) {
			fe += cond_tail(c, b, next_pc);
		} else {
			struct dpmu_insn *t = &b->insn[n - 1];
			dpmu_insn_branch_to(t, next_pc);
			fe += branch_op(c, t);
		}
		mispredicted = deps && c->pend[DPMU_UEV_BR_MIS_PRED] != mp;
		/* it resolves a dispatch slot after its issue (the prediction
		 * moved no clock) */
		if (mispredicted)
			resolve = work0 + (uint64_t)n * cpi + 1000 * (c->stall_cycles + fe0);
		if (fe)
			front_stall(c, fe);
	} else if (rob_at == n - 1) {
		rob_steps(c, n - 1, seq0, &work0, &work1, &rob_at, 0, lk);
	}
	c->work_milli = work0 + (uint64_t)n * cpi;
	c->dep_seq = seq0 + n;
	if (deps) {
		if (noload && !mispredicted)
			deps_end_noload(c, b, pend0, pend0 & b->win);
		else if (mispredicted || (!clean && (pend0 & b->win)))
			/* (no load: the summary names no load's value) */
			dpmu_block_deps_end(c, b, pend0, noload ? NULL : lv, mispredicted, resolve);
		else
			deps_end_loads(c, b, lv);
	} else
		c->dep_pend &= ~b->computed;
	/* the last instruction ends on the block's clock */
	if (watch)
		watch_at(c, lk, n - 1, core_clk(c) - (uint64_t)n * cpi, cpi);
	block_ran(u, c, b);
	if (watch && (c->wx_hit || b->tail_hook))
		dpmu_block_sampled_hooks(u, c, b, next_pc);
}

/* block_steps's variants, each its own function (their callers keep no
 * frame, block_dispatch): its flags fixed. RUN_DEPS of a block without
 * loads (b->noload) that waits for no reorder window (the plain path's
 * test) has its own: out of order nothing in it waits (only loads and a
 * mispredicted tail do). */
#define BLOCK_STEPS_VARIANT(name, deps, clean, watch, noload)                              \
	static __attribute__((noinline)) void name(struct dpmu_uarch *u, struct dpmu_ucore *c, \
						   struct dpmu_ublock *b, const uint64_t *addr, \
						   uint64_t next_pc)                            \
	{                                                                                   \
		block_steps(u, c, b, addr, next_pc, deps, clean, watch, noload, NULL);       \
	}
/*                   name               deps   clean  watch  noload */
BLOCK_STEPS_VARIANT(run_block_deps,     true,  false, false, false)
BLOCK_STEPS_VARIANT(run_block_clean,    true,  true,  false, false)
BLOCK_STEPS_VARIANT(run_block_noload,   true,  false, false, true)
BLOCK_STEPS_VARIANT(run_block_nodeps,   false, false, false, false)
BLOCK_STEPS_VARIANT(run_block_deps_w,   true,  false, true,  false)
BLOCK_STEPS_VARIANT(run_block_clean_w,  true,  true,  true,  false)
BLOCK_STEPS_VARIANT(run_block_noload_w, true,  false, true,  true)
BLOCK_STEPS_VARIANT(run_block_nodeps_w, false, false, true,  false)

/* What block_lean.c goes back to when its template does not hold. */
void dpmu_block_clean(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
		      const uint64_t *addr, uint64_t next_pc, bool watch)
{
	if (watch)
		run_block_clean_w(u, c, b, addr, next_pc);
	else
		run_block_clean(u, c, b, addr, next_pc);
}

void dpmu_block_deps(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
		     const uint64_t *addr, uint64_t next_pc, bool watch)
{
	if (watch)
		run_block_deps_w(u, c, b, addr, next_pc);
	else
		run_block_deps(u, c, b, addr, next_pc);
}

/* An execution that departed from its template (lean_steps): clean, or
 * with a register pending at entry. */
void dpmu_block_departed(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
			 const uint64_t *addr, uint64_t next_pc, const struct lean_depart *dp,
			 bool watch)
{
	if (watch)
		block_steps(u, c, b, addr, next_pc, true, true, true, false, dp);
	else
		block_steps(u, c, b, addr, next_pc, true, true, false, false, dp);
}

void dpmu_block_departed_deps(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
			      const uint64_t *addr, uint64_t next_pc,
			      const struct lean_depart *dp, bool watch)
{
	if (watch)
		block_steps(u, c, b, addr, next_pc, true, false, true, false, dp);
	else
		block_steps(u, c, b, addr, next_pc, true, false, false, false, dp);
}

/* An execution of b by the timing block_timing chose; `watch`, the
 * variants that look for a sampled overflow (run_block_sampled). Each
 * path its own function: the callers keep no frame, their calls are
 * jumps. */
static inline __attribute__((always_inline)) void
block_go(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b, const uint64_t *addr,
	 uint64_t next_pc, const bool watch, int how)
{
	switch (how) {
	case RUN_WALK:
		run_block_walk(u, c, b, addr, next_pc);
		return;
	case RUN_DEPS:
		if (b->noload && c->dep_seq + b->n < c->rob_limit) {
			if (watch)
				run_block_noload_w(u, c, b, addr, next_pc);
			else
				run_block_noload(u, c, b, addr, next_pc);
		} else if (watch) {
			run_block_deps_w(u, c, b, addr, next_pc);
		} else {
			run_block_deps(u, c, b, addr, next_pc);
		}
		return;
	case RUN_CLEAN:
		if (watch)
			dpmu_block_lean_watched(u, c, b, addr, next_pc);
		else
			dpmu_block_lean(u, c, b, addr, next_pc);
		return;
	default:
		if (watch)
			run_block_nodeps_w(u, c, b, addr, next_pc);
		else
			run_block_nodeps(u, c, b, addr, next_pc);
	}
}

/* A block that reads registers marked pending: those ready by now are
 * settled first (the summary then looks only at what is still pending).
 * Its own function, so that block_dispatch, which most blocks take
 * without one, keeps no frame. */
#define BLOCK_SETTLE_VARIANT(name, watch)                                                   \
	static __attribute__((noinline)) void name(struct dpmu_uarch *u, struct dpmu_ucore *c, \
						   struct dpmu_ublock *b, const uint64_t *addr, \
						   uint64_t next_pc)                            \
	{                                                                                   \
		const dpmu_u128 q = pending_of(c, c->dep_pend & b->reads);                 \
		if (q && !(q & (q - 1)) && c->tm.window && b->dsum && !b->noload &&        \
		    b->n <= c->tm.window) {                                                  \
			if (watch)                                                          \
				dpmu_block_entry_watched(u, c, b, addr, next_pc,            \
							 (uint8_t)u128_ctz(q));             \
			else                                                                \
				dpmu_block_entry(u, c, b, addr, next_pc, (uint8_t)u128_ctz(q)); \
			return;                                                             \
		}                                                                           \
		block_go(u, c, b, addr, next_pc, watch, block_timing(c, b, q != 0));        \
	}
BLOCK_SETTLE_VARIANT(run_block_settle, false)
BLOCK_SETTLE_VARIANT(run_block_settle_w, true)

/* The block path below dpmu_uarch_run_block_on: a delivery point inside
 * (run_block_split), else block_go, after run_block_settle's look at the
 * registers pending if the block reads any. */
static inline __attribute__((always_inline)) void
block_dispatch(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
	       const uint64_t *addr, uint64_t next_pc, const bool watch)
{
	if (b->n > c->batch_left) {
		if (b->branch)
			dpmu_insn_branch_to(b->branch, next_pc);
		run_block_split(u, c, b, addr, next_pc);
		return;
	}
	if (c->dep_pend & b->reads) {
		if (watch)
			run_block_settle_w(u, c, b, addr, next_pc);
		else
			run_block_settle(u, c, b, addr, next_pc);
		return;
	}
	/* block_timing's RUN_CLEAN, known from an earlier execution here */
	block_go(u, c, b, addr, next_pc, watch,
		 b->lean_key == c->lean_key ? RUN_CLEAN : block_timing(c, b, false));
}

/* A plain block (plain_run) whose clock reached the watched overflow:
 * instruction i < n - 1 ended at clk0 + i x cpi, the last at the end (a
 * plain block's tail is conditional: no tail hook); fe, its tail's stall. */
static __attribute__((noinline, cold)) void plain_sampled(struct dpmu_uarch *u,
							   struct dpmu_ucore *c,
							   struct dpmu_ublock *b, uint64_t next_pc,
							   uint64_t fe)
{
	const uint32_t n = b->n, cpi = c->cpi_milli;
	uint64_t clk0 = core_clk(c) - 1000 * fe - (uint64_t)(n - 1) * cpi, x = c->wx_x;
	uint64_t j = x > clk0 ? (x - clk0 + cpi - 1) / cpi : 0;
	c->wx_hit = true;
	c->wx_j = j < n - 1 ? (uint32_t)j : n - 1;
	dpmu_block_sampled_hooks(u, c, b, next_pc);
}

/* A block of a core sampling INST_RETIRED (wi_floor) that overflows the
 * counter at instruction batch_left - wi_floor - 1. It runs as any other
 * (the clock is not watched then), the hooks at its end. */
static __attribute__((noinline, cold)) void sampled_insns(struct dpmu_uarch *u,
							   struct dpmu_ucore *c,
							   struct dpmu_ublock *b,
							   const uint64_t *addr, uint64_t next_pc)
{
	const int64_t j = (int64_t)c->batch_left - c->wi_floor - 1;
	c->wx_hit = true;
	c->wx_j = j > 0 ? (uint32_t)j : 0;
	c->wi_floor = INT64_MIN; /* until the sample re-arms it */
	uint64_t fe = 0;
	if (plain_run(c, b, next_pc, &fe)) {
		dpmu_block_sampled_hooks(u, c, b, next_pc);
		return;
	}
	block_dispatch(u, c, b, addr, next_pc, true);
}

/* Every block on a core that samples on the block path (dpmu_uarch_watch_arm):
 * run as the others are, with the instruction whose clock reaches the
 * watched overflow found on the way (or, sampling INST_RETIRED, the one
 * that overflows it, known before), then the hooks. Each path a jump:
 * no frame. */
static __attribute__((noinline)) void run_block_sampled(struct dpmu_uarch *u,
							 struct dpmu_ucore *c,
							 struct dpmu_ublock *b,
							 const uint64_t *addr, uint64_t next_pc)
{
	if (__builtin_expect((int64_t)c->batch_left - (int64_t)b->n <= c->wi_floor, 0)) {
		sampled_insns(u, c, b, addr, next_pc);
		return;
	}
	uint64_t fe = 0;
	if (plain_run(c, b, next_pc, &fe)) {
		if (__builtin_expect(core_clk(c) >= c->wx_x, 0))
			plain_sampled(u, c, b, next_pc, fe);
		return;
	}
	/* each path runs the hooks at its end (dpmu_block_sampled_hooks) */
	block_dispatch(u, c, b, addr, next_pc, true);
}

static __attribute__((noinline)) void run_block_steps(struct dpmu_uarch *u,
						       struct dpmu_ucore *c,
						       struct dpmu_ublock *b,
						       const uint64_t *addr, uint64_t next_pc)
{
	block_dispatch(u, c, b, addr, next_pc, false);
}

void dpmu_uarch_run_block(struct dpmu_uarch *u, unsigned core, struct dpmu_ublock *b,
			  const uint64_t *addr, uint64_t next_pc)
{
	if (!u)
		return;
	if (!b || !addr) {
		dpmu_err_set(&u->err, DPMU_EINVAL, "run of a block on cpu%u: no %s", core,
			     b ? "addresses" : "block summary");
		return;
	}
	if (core >= u->ncores) {
		/* the paths that read the branch's outcome from the block */
		if (b->branch)
			dpmu_insn_branch_to(b->branch, next_pc);
		run_block_slow(u, core, b, addr);
		return;
	}
	dpmu_uarch_run_block_on(u, &u->cores[core], b, addr, next_pc);
}

