/*
 * Dependence timing (docs/events.md "Timing"), inline for the retire loop
 * (retire.h) and the block path (block_run.c).
 *
 * The core dispatches in order at its base CPI. Each register has the
 * time its value is ready; a load's value is ready at its start plus the
 * load-to-use latency of the level that served it (the L1D's, or what
 * mem.c returns beyond it: L2, L3, a peer's cache, DRAM, translation). An
 * L1D miss holds one of the core's miss buffers until its data arrives,
 * and starts no earlier than one is free.
 *
 *   in order (reorder_window 0, Cortex-A55): an instruction whose source
 *   is not ready stalls the core until it is (the first use of a
 *   pending load).
 *   out of order (Cortex-A75): an instruction issues when its sources are
 *   ready without stalling dispatch; instructions retire in order, so
 *   the reorder window holds the instructions since the oldest that has
 *   not completed, and dispatch stalls when the window is full.
 *
 * An instruction of a class with an execution latency (the profile's
 * exec_latency: multiplies, divides, FP arithmetic) has its result ready
 * that long after it starts, its sources ready; any other's is ready at
 * its issue.
 *
 * Either way a mispredicted branch restarts fetch only when it resolves
 * (its sources ready), then after the penalty. Waits are in
 * milli-cycles on the work clock, so a dependent chain costs its
 * latencies exactly; the stall events count them in whole cycles, split
 * by where the awaited load spent its time.
 *
 * State that needs no per-instruction work when nothing is pending:
 * dep_pend (the registers that may not be ready; a register's time counts
 * only while it is pending), dep_seq and rob_limit let the block path
 * skip the timing of blocks that read none of them.
 */
#ifndef DPMU_UARCH_TIMING_H
#define DPMU_UARCH_TIMING_H

#include <stdlib.h>

#include "uarch/uarch_internal.h"

/* A register's bit (none for 0), from a table: a variable 128-bit shift
 * costs several instructions on the hot path. */
#define DPMU_RB(i) ((dpmu_u128)1 << (i))
#define DPMU_RB4(i) DPMU_RB(i), DPMU_RB(i + 1), DPMU_RB(i + 2), DPMU_RB(i + 3)
#define DPMU_RB16(i) DPMU_RB4(i), DPMU_RB4(i + 4), DPMU_RB4(i + 8), DPMU_RB4(i + 12)
static const dpmu_u128 dpmu_reg_bits[DPMU_REG_COUNT] = {
	0, DPMU_RB(1), DPMU_RB(2), DPMU_RB(3), DPMU_RB4(4), DPMU_RB4(8), DPMU_RB4(12),
	DPMU_RB16(16), DPMU_RB16(32), DPMU_RB16(48), DPMU_RB(64), DPMU_RB(65)};
_Static_assert(DPMU_REG_COUNT == 66, "dpmu_reg_bits lists every register");

static inline dpmu_u128 reg_bit(uint8_t r)
{
	return dpmu_reg_bits[r < DPMU_REG_COUNT ? r : 0];
}

/* The lowest register of a non-empty mask. */
static inline unsigned u128_ctz(dpmu_u128 m)
{
	const uint64_t lo = (uint64_t)m;
	return lo ? (unsigned)__builtin_ctzll(lo) : 64 + (unsigned)__builtin_ctzll((uint64_t)(m >> 64));
}

/* The registers an instruction reads and those it writes, as masks (a
 * block summary keeps them per instruction). */
struct dpmu_iregm {
	dpmu_u128 src, dst;
};

static inline struct dpmu_iregm insn_masks(const struct dpmu_insn *in)
{
	return (struct dpmu_iregm){
		reg_bit(in->src[0]) | reg_bit(in->src[1]) | reg_bit(in->src[2]),
		reg_bit(in->dst[0]) | reg_bit(in->dst[1]) | reg_bit(in->dst[2])};
}

/* The base register a load or store writes back (DPMU_IC_WRITEBACK), else
 * 0: the register it both reads and writes. What it writes there is the
 * address, ready when the address's registers are (the address unit's
 * result), not the data (Arm ARM C1.3.3: pre- and post-index). A load
 * whose data register is its base as well (CONSTRAINED UNPREDICTABLE, the
 * register's value UNKNOWN) is taken as writing the address there. */
static inline uint8_t insn_wb_reg(const struct dpmu_insn *in)
{
	if (!(in->flags & DPMU_IC_WRITEBACK))
		return 0;
	for (unsigned k = 0; k < 3; k++) {
		const uint8_t r = in->dst[k];
		if (r && (r == in->src[0] || r == in->src[1] || r == in->src[2]))
			return r;
	}
	return 0;
}

/* Whether an instruction's result has a time of its own: a load's, or
 * one with an execution latency class (the others' results are ready
 * when their sources are). */
static inline bool insn_makes_value(const struct dpmu_insn *in)
{
	return in->kind == DPMU_INSN_LOAD || in->exec != DPMU_EX_SIMPLE;
}

/* Input without register operands (a trace): its loads' values have no
 * known consumer, so each waits for its data at once. */
static inline bool insn_no_regs(const struct dpmu_insn *in)
{
	return !(in->src[0] | in->dst[0]);
}

static inline uint64_t core_now(const struct dpmu_ucore *c, uint64_t fe)
{
	return c->work_milli + 1000 * (c->stall_cycles + fe);
}

static inline int timing_init(struct dpmu_ucore *c, const char *who, struct dpmu_err *err)
{
	const struct dpmu_pipeline_params *p = &c->type->pipeline;
	struct dpmu_utiming *t = &c->tm;
	if (p->miss_buffers == 0 || p->miss_buffers > DPMU_MISS_BUFFERS_MAX)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: %u miss buffers (1 to %u)", who,
				    p->miss_buffers, DPMU_MISS_BUFFERS_MAX);
	if (p->reorder_window > DPMU_REORDER_MAX)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: reorder window %u (0 to %u)", who,
				    p->reorder_window, DPMU_REORDER_MAX);
	t->window = p->reorder_window;
	t->nmb = p->miss_buffers;
	t->l1_milli = c->type->l1d.latency * 1000;
	for (unsigned k = 0; k < DPMU_EX_COUNT; k++)
		t->exe_milli[k] = p->exec_latency[k] * 1000;
	t->rob_span = (uint64_t)t->window * c->cpi_milli;
	t->l1_short = t->l1_milli <= t->rob_span;
	c->rob_limit = UINT64_MAX;
	if (t->window) {
		/* at most window + 1 entries are held (rob_wait) */
		uint32_t n = 2;
		while (n < t->window + 2)
			n <<= 1;
		t->rob = calloc(n, sizeof *t->rob);
		if (!t->rob)
			return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory", who);
		t->rob_mask = n - 1;
	}
	return 0;
}

/* A value an instruction computed rather than loaded (bit 31 of its
 * tlb, far above any translation wait in milli-cycles): dep_wait counts
 * the part of a wait for it that is neither memory nor translation as the
 * core's (STALL_BACKEND alone), not the L1D's. */
#define DPMU_UREG_EXEC 0x80000000u

/* A wait of w milli-cycles for a value whose load spent its time as
 * `why` says: the clock moves on, and the stall events get their whole
 * cycles, the memory part (beyond the L1D) first from the end, then the
 * L1D's latency, then translation; what is left (a wait for the load's
 * own sources) counts with the L1D part. STALL_BACKEND_MEM (the AMU's
 * 0x4005) is the part beyond the L1D. A computed value's (DPMU_UREG_EXEC)
 * wait has no L1D part: beyond memory and translation it is the core's,
 * in STALL_BACKEND but in no load stall event. */
static inline void dep_wait(struct dpmu_ucore *c, uint64_t w, uint32_t mem, uint32_t tlb)
{
	struct dpmu_utiming *t = &c->tm;
	const bool ex = (tlb & DPMU_UREG_EXEC) != 0;
	tlb &= ~DPMU_UREG_EXEC;
	c->work_milli += w;
	uint64_t m = w < mem ? w : mem, rest = w - m;
	uint64_t l = ex ? 0 : rest < t->l1_milli ? rest : t->l1_milli;
	uint64_t x = rest - l < tlb ? rest - l : tlb;
	t->rem_mem += m;
	t->rem_tlb += x;
	if (ex)
		t->rem_core += rest - x;
	else
		t->rem_l1 += rest - x;
	uint64_t qm = t->rem_mem / 1000, qt = t->rem_tlb / 1000, ql = t->rem_l1 / 1000,
		 qc = t->rem_core / 1000;
	t->rem_mem -= qm * 1000;
	t->rem_tlb -= qt * 1000;
	t->rem_l1 -= ql * 1000;
	t->rem_core -= qc * 1000;
	uint64_t q = qm + qt + ql;
	c->pend[DPMU_UEV_STALL_BACKEND] += q + qc;
	c->pend[DPMU_UEV_STALL_BACKEND_MEM] += qm;
	c->ipend[DPMU_IEV_STALL_BACKEND_LD] += q;
	c->ipend[DPMU_IEV_STALL_BACKEND_LD_TLB] += qt;
	c->ipend[DPMU_IEV_STALL_BACKEND_LD_CACHE] += qm + ql;
}

/* Whether value a is later than b: by ready time, then (a tie between
 * two loads' values) by how they spent it. A total order, so the latest
 * of several values is the same whatever order they are compared in (the
 * block path's dependence summary compares them in another order than
 * the instructions do). */
static inline bool ureg_later(const struct dpmu_ureg *a, const struct dpmu_ureg *b)
{
	if (a->ready != b->ready)
		return a->ready > b->ready;
	return a->mem != b->mem ? a->mem > b->mem : a->tlb > b->tlb;
}

/* The latest-ready pending source of `in` (reg[0], ready at 0, when
 * none): a register's time counts only while it is pending. */
static inline const struct dpmu_ureg *dep_src(const struct dpmu_ucore *c,
					      const struct dpmu_insn *in)
{
	const struct dpmu_ureg *r = &c->tm.reg[0];
	for (unsigned k = 0; k < 3; k++) {
		const struct dpmu_ureg *b = &c->tm.reg[in->src[k]];
		if ((c->dep_pend & reg_bit(in->src[k])) && ureg_later(b, r))
			r = b;
	}
	return r;
}

/* Out of order: instruction dep_seq enters the reorder window when the
 * one `window` older has retired; returns the wait (milli-cycles) for it
 * at `now` and counts it. Entries that retired by now go. */
static inline uint64_t rob_wait(struct dpmu_ucore *c, uint64_t now)
{
	struct dpmu_utiming *t = &c->tm;
	uint64_t w = 0;
	uint32_t mem = 0, tlb = 0;
	while (t->rob_n) {
		const struct dpmu_urob *e = &t->rob[t->rob_head];
		if (e->seq + t->window <= c->dep_seq) {
			if (e->ret > now + w) {
				w = e->ret - now;
				mem = e->mem;
				tlb = e->tlb;
			}
		} else if (e->ret > now + w) {
			break;
		}
		t->rob_head = (t->rob_head + 1) & t->rob_mask;
		t->rob_n--;
	}
	c->rob_limit = t->rob_n ? t->rob[t->rob_head].seq + t->window : UINT64_MAX;
	if (w)
		dep_wait(c, w, mem, tlb);
	return w;
}

/* Out of order: instruction dep_seq, dispatched at `s`, completes at
 * `done`. The window's retirement waits for it when the instruction
 * `window` younger may find it incomplete: not when it completes within
 * rob_span of its dispatch (that one dispatches no earlier than
 * s + rob_span, each instruction taking its dispatch slot), nor when an
 * older one held in the window completes no earlier (rob_last). The
 * first kind leaves rob_last alone: a younger instruction held in the
 * window completes beyond its own s + rob_span, so later than it. */
static inline void rob_push(struct dpmu_ucore *c, uint64_t s, uint64_t done, uint32_t mem,
			    uint32_t tlb)
{
	struct dpmu_utiming *t = &c->tm;
	if (done - s <= t->rob_span || done <= t->rob_last)
		return;
	t->rob_last = done;
	/* rob_wait keeps at most `window` entries younger than the window
	 * plus the one it waits for: the ring never fills */
	uint32_t i = (t->rob_head + t->rob_n++) & t->rob_mask;
	t->rob[i] = (struct dpmu_urob){ c->dep_seq, done, mem, tlb };
	if (t->rob_n == 1)
		c->rob_limit = c->dep_seq + t->window;
}

/* Before instruction `in` (touching `touch`) issues at `now` (its fetch
 * stall included): the wait for a full reorder window (out of order) or
 * for its sources (in order). Returns the wait; *src is its latest
 * source. */
static inline uint64_t dep_issue(struct dpmu_ucore *c, const struct dpmu_insn *in,
				 dpmu_u128 touch, uint64_t now, const struct dpmu_ureg **src)
{
	c->dep_seq++;
	*src = &c->tm.reg[0];
	uint64_t w = 0;
	if (c->tm.window) {
		if (c->dep_seq >= c->rob_limit)
			w = rob_wait(c, now);
		if (touch & c->dep_pend)
			*src = dep_src(c, in);
		return w;
	}
	if (!(touch & c->dep_pend))
		return 0;
	const struct dpmu_ureg *r = dep_src(c, in);
	*src = r;
	if (r->ready > now) {
		w = r->ready - now;
		dep_wait(c, w, r->mem, r->tlb);
	}
	return w;
}

/* The registers `in` writes (mask dst) hold a value ready at `ready`,
 * later than now; its sources (mask src), when ready by `now`, are no
 * longer pending. */
static inline void dep_write(struct dpmu_ucore *c, const struct dpmu_insn *in,
			     struct dpmu_iregm m, const struct dpmu_ureg *src, uint64_t now,
			     uint64_t ready, uint32_t mem, uint32_t tlb)
{
	if (src->ready <= now)
		c->dep_pend &= ~m.src;
	for (unsigned k = 0; k < 3 && in->dst[k]; k++)
		c->tm.reg[in->dst[k]] = (struct dpmu_ureg){ ready, mem, tlb };
	c->dep_pend |= m.dst;
}

/* The registers `in` writes are ready at its issue, and so were its
 * sources: none of them is pending (what their times say no longer
 * counts). */
static inline void dep_done(struct dpmu_ucore *c, struct dpmu_iregm m)
{
	c->dep_pend &= ~(m.src | m.dst);
}

/* A load that started issuing at `s` (its dispatch slot), after its
 * sources (src), with `be` cycles beyond the L1D of which `tlb` were
 * translation: its value, with when it is ready. An L1D miss (a cache
 * part beyond the L1D) takes the miss buffer that frees first. */
static inline struct dpmu_ureg dep_load_value(struct dpmu_ucore *c, const struct dpmu_ureg *src,
					      uint64_t s, uint32_t be, uint32_t tlb)
{
	struct dpmu_utiming *t = &c->tm;
	uint64_t start = src->ready > s ? src->ready : s;
	uint32_t t_milli = (be ? (tlb < be ? tlb : be) : 0) * 1000;
	uint64_t mem = (uint64_t)be * 1000 - t_milli;
	unsigned k = 0;
	if (mem) {
		for (unsigned i = 1; i < t->nmb; i++)
			if (t->mb[i] < t->mb[k])
				k = i;
		if (t->mb[k] > start) {
			mem += t->mb[k] - start;
			start = t->mb[k];
		}
	}
	uint64_t ready = start + t->l1_milli + be * 1000ull;
	if (mem)
		t->mb[k] = ready;
	return (struct dpmu_ureg){ready, mem < UINT32_MAX ? (uint32_t)mem : UINT32_MAX, t_milli};
}

/* Out of order, the value of a load (of dep_seq, dispatched at s)
 * enters the reorder window. */
static inline void dep_load_retires(struct dpmu_ucore *c, uint64_t s, struct dpmu_ureg v)
{
	if (c->tm.window)
		rob_push(c, s, v.ready, v.mem, v.tlb);
}

/* dep_load_value, and the registers the load writes hold the value; a
 * load without register operands has no known consumer: its data is
 * waited for at once. */
static inline void dep_load(struct dpmu_ucore *c, const struct dpmu_insn *in,
			    struct dpmu_iregm rm, const struct dpmu_ureg *src, uint64_t s, uint32_t be,
			    uint32_t tlb)
{
	struct dpmu_ureg v = dep_load_value(c, src, s, be, tlb);
	if (insn_no_regs(in)) {
		uint64_t now = core_now(c, 0);
		if (v.ready > now)
			dep_wait(c, v.ready - now, v.mem, v.tlb);
		return;
	}
	const uint8_t wb = insn_wb_reg(in);
	if (__builtin_expect(wb != 0, 0)) {
		/* the base written back holds the address: ready when its
		 * sources are (read before the data's writes change them) */
		const dpmu_u128 bb = reg_bit(wb);
		if (src->ready > s) {
			c->tm.reg[wb] = *src;
			c->dep_pend |= bb;
		}
		if (src->ready <= s)
			c->dep_pend &= ~rm.src;
		for (unsigned k = 0; k < 3 && in->dst[k]; k++)
			if (in->dst[k] != wb)
				c->tm.reg[in->dst[k]] = (struct dpmu_ureg){v.ready, v.mem, v.tlb};
		c->dep_pend |= rm.dst & ~bb;
	} else {
		dep_write(c, in, rm, src, s, v.ready, v.mem, v.tlb);
	}
	dep_load_retires(c, s, v);
}

/* Any other instruction (no load, no execution latency) that started
 * issuing at `s` after its sources (src): its results are ready when it
 * issues (an out-of-order core issues it when its sources are; an
 * in-order one waited for them). */
static inline void dep_other(struct dpmu_ucore *c, const struct dpmu_insn *in,
			     struct dpmu_iregm m, const struct dpmu_ureg *src, uint64_t s)
{
	if (src->ready <= s) {
		dep_done(c, m);
		return;
	}
	dep_write(c, in, m, src, s, src->ready, src->mem, src->tlb);
	/* No reorder-window entry: a value ready after its issue comes from
	 * a load or an instruction with an execution latency (dep_load and
	 * dep_exec pushed its time, which ready does not pass). */
}

/* The value of an instruction with an execution latency (class in->exec)
 * that started issuing at `s` after its sources (src): ready that long
 * after both; what it waited for beyond that is its sources'. */
static inline struct dpmu_ureg dep_exec_value(const struct dpmu_ucore *c,
					      const struct dpmu_insn *in,
					      const struct dpmu_ureg *src, uint64_t s)
{
	const bool p = src->ready > s;
	return (struct dpmu_ureg){(p ? src->ready : s) + c->tm.exe_milli[in->exec],
				  p ? src->mem : 0, (p ? src->tlb : 0) | DPMU_UREG_EXEC};
}

/* An instruction with an execution latency: the registers it writes hold
 * its value; out of order, the value enters the reorder window (rob_push
 * keeps it only if it may hold the window up). */
static inline void dep_exec(struct dpmu_ucore *c, const struct dpmu_insn *in,
			    struct dpmu_iregm m, const struct dpmu_ureg *src, uint64_t s)
{
	const struct dpmu_ureg v = dep_exec_value(c, in, src, s);
	if (v.ready <= s) {
		dep_done(c, m);
		return;
	}
	dep_write(c, in, m, src, s, v.ready, v.mem, v.tlb);
	dep_load_retires(c, s, v);
}

/* A mispredicted branch that issued at `s`: fetch restarts when it
 * resolves, its sources ready (out of order: it did not wait for them
 * to issue): the wait, counted. */
static inline void dep_resolve(struct dpmu_ucore *c, const struct dpmu_ureg *src, uint64_t s)
{
	if (src->ready > s)
		dep_wait(c, src->ready - s, src->mem, src->tlb);
}

/* ---- a block's dependence summary (the block path of an out-of-order core)
 *
 * Out of order, only loads and instructions with an execution latency
 * (their start) and mispredicted branches (when they resolve) wait for a
 * value, and any other value is ready when the latest of its sources is.
 * So within a block each value is the latest of some registers' values at
 * the block's entry and some of the values the block's loads and
 * execution-latency instructions make (insn_makes_value; "loads" below):
 * a dependence, found once per block. An execution then looks at those
 * instructions, a mispredicted branch and the registers the block leaves
 * written, not at every instruction. */
#define DPMU_UDEP_MAX 64 /* instructions of a block with a summary */

struct dpmu_udep {
	dpmu_u128 entry; /* registers' values at the block's entry */
	uint64_t load;   /* bit i: the value instruction i of the block makes */
};

/* A register the block writes, and the dependence of its last value;
 * its bit, and `one`, the only load the value names (else
 * DPMU_UWDEP_MANY), so that a block's end finds both without a lookup. */
#define DPMU_UWDEP_MANY 0xff
struct dpmu_uwdep {
	struct dpmu_udep d;
	dpmu_u128 bit;
	uint8_t reg, one;
};

/* The latest of the values d names: of the registers pending at entry
 * (pend; the others were ready by then) and of the block's loads (lv[i]
 * for load i); reg[0] (ready at 0) when none. A pointer, not a copy: a
 * value is stored field by field, and a wider load of it just after
 * would wait for the stores to drain (no store forwarding). */
static inline const struct dpmu_ureg *dep_latest(const struct dpmu_ucore *c, dpmu_u128 pend,
						 const struct dpmu_udep *d,
						 const struct dpmu_ureg *lv)
{
	const struct dpmu_ureg *r = &c->tm.reg[0];
	for (dpmu_u128 p = d->entry & pend; p; p &= p - 1) {
		const unsigned k = u128_ctz(p);
		if (ureg_later(&c->tm.reg[k], r))
			r = &c->tm.reg[k];
	}
	for (uint64_t l = d->load; l; l &= l - 1) {
		const struct dpmu_ureg *v = &lv[__builtin_ctzll(l)];
		if (ureg_later(v, r))
			r = v;
	}
	return r;
}

#endif
