/*
 * A PMUv3 counter bank: the counting, overflow, chaining and snapshot rules
 * shared by the core PMU and the DSU cluster PMU (reference sections 1-3).
 */
#include <string.h>

#include "model/model_internal.h"

#define LOW32 0xffffffffull

void dpmu_bank_init(struct dpmu_bank *b, unsigned n, bool ev64, bool has_lp, bool has_lc)
{
	memset(b, 0, sizeof *b);
	b->n = n > DPMU_BANK_MAX ? DPMU_BANK_MAX : n;
	b->ev64 = ev64;
	b->has_lp = has_lp;
	b->has_lc = has_lc;
	b->pmcr_rw = DPMU_PMCR_E | DPMU_PMCR_D | DPMU_PMCR_X | DPMU_PMCR_DP;
	if (has_lc)
		b->pmcr_rw |= DPMU_PMCR_LC;
	if (has_lp)
		b->pmcr_rw |= DPMU_PMCR_LP;
}

void dpmu_bank_reset(struct dpmu_bank *b)
{
	struct dpmu_bank fresh;
	dpmu_bank_init(&fresh, b->n, b->ev64, b->has_lp, b->has_lc);
	fresh.pmcr_rw = b->pmcr_rw;
	fresh.irq_gen = b->irq_gen;
	*b = fresh;
	dpmu_bank_irq_changed(b);
}

static void index_active(struct dpmu_bank *b)
{
	memset(b->by_low, 0, sizeof b->by_low);
	uint32_t act = b->active & ~(1u << DPMU_CC);
	while (act) {
		unsigned i = (unsigned)__builtin_ctz(act);
		act &= act - 1;
		b->by_low[b->ev[i] & 0xff] |= 1u << i;
	}
}

bool dpmu_bank_update_active(struct dpmu_bank *b)
{
	uint32_t old = b->active;
	b->active = (b->pmcr & DPMU_PMCR_E) ? (b->allowed & b->cnten & dpmu_bank_mask(b)) : 0;
	bool changed = b->active != old;
	/* A counter that stays active may have a new event number. */
	uint32_t act = b->active & ~(1u << DPMU_CC);
	while (act) {
		unsigned i = (unsigned)__builtin_ctz(act);
		act &= act - 1;
		changed |= b->live_ev[i] != b->ev[i];
		b->live_ev[i] = b->ev[i];
	}
	index_active(b);
	return changed;
}

void dpmu_bank_write_pmcr(struct dpmu_bank *b, uint32_t value)
{
	b->pmcr = value & b->pmcr_rw;
	dpmu_bank_irq_changed(b); /* PMCR.E gates the line */
	/* P and C are write-only actions: reset, then read as zero. */
	if (value & DPMU_PMCR_P)
		for (unsigned i = 0; i < b->n; i++)
			b->evcnt[i] = 0;
	if (value & DPMU_PMCR_C) {
		b->ccnt = 0;
		b->divider = 0;
	}
}

void dpmu_bank_write_evtyper(struct dpmu_bank *b, unsigned i, uint32_t value)
{
	if (i >= b->n)
		return;
	b->evtyper[i] = value;
	b->ev[i] = (uint16_t)(value & DPMU_EVTYPER_EVT);
}

uint64_t dpmu_bank_read_evcnt(const struct dpmu_bank *b, unsigned i)
{
	if (i >= b->n)
		return 0;
	return b->ev64 ? b->evcnt[i] : (b->evcnt[i] & LOW32);
}

void dpmu_bank_write_evcnt(struct dpmu_bank *b, unsigned i, uint64_t value)
{
	if (i >= b->n)
		return;
	b->evcnt[i] = b->ev64 ? value : (value & LOW32);
}

/* Overflows when n is added to a counter whose overflow boundary is 2^32:
 * how many times bits [31:0] wrap. Exact for any n (batched delivery). */
static uint64_t wraps32(uint64_t cnt, uint64_t n)
{
	return (n >> 32) + (((cnt & LOW32) + (n & LOW32)) >> 32);
}

void dpmu_bank_add(struct dpmu_bank *b, unsigned i, uint64_t n)
{
	uint64_t old = b->evcnt[i];
	uint64_t w;
	bool lp = b->ev64 && (b->pmcr & DPMU_PMCR_LP);

	if (lp) {
		/* PMUv3p5, LP = 1: overflow at bit 63 -> 64. */
		b->evcnt[i] = old + n;
		w = b->evcnt[i] < old;
	} else {
		/* 32-bit counter, or 64-bit with LP = 0: overflow when bits
		 * [31:0] wrap (Arm ARM, PMUOverflowCondition). */
		w = wraps32(old, n);
		b->evcnt[i] = b->ev64 ? old + n : ((old + n) & LOW32);
	}
	if (!w)
		return;
	if (!(b->ovs >> i & 1)) {
		b->ovs |= 1u << i;
		dpmu_bank_irq_changed(b);
	}
	/* CHAIN (0x1E) on the odd counter 2k+1 counts overflows of counter 2k.
	 * An even counter overflowing at 64 bits (PMCR.LP = 1) generates no
	 * CHAIN event (Arm ARM AArch64.IncrementEventCounter). */
	if (!lp && (i & 1) == 0 && i + 1 < b->n && b->ev[i + 1] == DPMU_EV_CHAIN &&
	    (b->active >> (i + 1) & 1))
		dpmu_bank_add(b, i + 1, w);
}

bool dpmu_bank_counts(const struct dpmu_bank *b, uint16_t event)
{
	uint32_t act = b->by_low[event & 0xff];
	while (act) {
		unsigned i = (unsigned)__builtin_ctz(act);
		act &= act - 1;
		if (b->ev[i] == event)
			return true;
	}
	return false;
}

void dpmu_bank_swinc(struct dpmu_bank *b, uint32_t mask)
{
	uint32_t act = b->active & mask & ~(1u << DPMU_CC);
	while (act) {
		unsigned i = (unsigned)__builtin_ctz(act);
		act &= act - 1;
		if (b->ev[i] == DPMU_EV_SW_INCR)
			dpmu_bank_add(b, i, 1);
	}
}

static void snapshot_complete(struct dpmu_bank *b)
{
	memcpy(b->evsvr, b->pend_ev, sizeof b->evsvr);
	b->ccsvr = b->pend_cc;
	b->snap_busy = false;
	b->snap_remaining = 0;
}

void dpmu_bank_cycles(struct dpmu_bank *b, uint64_t k, bool cc_allowed)
{
	if (b->snap_busy) {
		if (k >= b->snap_remaining)
			snapshot_complete(b);
		else
			b->snap_remaining -= k;
	}
	if (!(b->active >> DPMU_CC & 1) || !cc_allowed || k == 0)
		return;

	uint64_t ticks = k;
	/* PMCR.D: one tick every 64 cycles; ignored when LC = 1. */
	if ((b->pmcr & (DPMU_PMCR_D | DPMU_PMCR_LC)) == DPMU_PMCR_D) {
		uint64_t total = b->divider + k; /* divider < 64: no overflow for k < 2^64 - 64 */
		ticks = total / 64;
		b->divider = (unsigned)(total % 64);
	}
	if (ticks == 0)
		return;

	uint64_t old = b->ccnt;
	b->ccnt = old + ticks;
	bool ovf;
	if (!b->has_lc || (b->pmcr & DPMU_PMCR_LC))
		ovf = b->ccnt < old;          /* 64-bit overflow */
	else
		ovf = wraps32(old, ticks) != 0; /* LC = 0: bits [31:0] wrap */
	if (ovf && !(b->ovs >> DPMU_CC & 1)) {
		b->ovs |= 1u << DPMU_CC;
		dpmu_bank_irq_changed(b);
	}
}

void dpmu_bank_snapshot(struct dpmu_bank *b, uint64_t latency)
{
	for (unsigned i = 0; i < b->n; i++) {
		b->pend_ev[i] = dpmu_bank_read_evcnt(b, i);
		/* PMSSRR.RP<n>: reset counter n after the capture. */
		if (b->ssrr >> i & 1)
			b->evcnt[i] = 0;
	}
	b->pend_cc = b->ccnt;
	if (b->ssrr >> DPMU_CC & 1) {
		b->ccnt = 0;
		b->divider = 0;
	}
	b->snap_busy = true;
	b->snap_remaining = latency;
	if (latency == 0)
		snapshot_complete(b);
}

unsigned dpmu_bank_overflow_watch(const struct dpmu_bank *b, bool cc_allowed, uint16_t *event,
				  uint64_t *left, unsigned cap)
{
	unsigned k = 0;
	if (!(b->pmcr & DPMU_PMCR_E))
		return 0; /* no interrupt without PMCR.E (dpmu_bank_irq) */
	bool lp = b->ev64 && (b->pmcr & DPMU_PMCR_LP);
	uint32_t w = b->active & b->inten;
	for (unsigned i = 0; i < b->n && k < cap; i++) {
		/* CHAIN counts overflows, not an event of the stream */
		if (!(w >> i & 1) || b->ev[i] == DPMU_EV_CHAIN || b->ev[i] == DPMU_EV_SW_INCR)
			continue;
		uint64_t v = b->evcnt[i];
		event[k] = b->ev[i];
		left[k++] = lp ? (v ? 0 - v : UINT64_MAX) : (UINT64_C(1) << 32) - (v & LOW32);
	}
	if (k < cap && (w >> DPMU_CC & 1) && cc_allowed) {
		bool c64 = !b->has_lc || (b->pmcr & DPMU_PMCR_LC);
		uint64_t v = b->ccnt, ticks = c64 ? (v ? 0 - v : UINT64_MAX)
						  : (UINT64_C(1) << 32) - (v & LOW32);
		/* PMCR.D: a tick every 64 cycles (not with LC = 1) */
		if ((b->pmcr & (DPMU_PMCR_D | DPMU_PMCR_LC)) == DPMU_PMCR_D)
			ticks = ticks > UINT64_MAX / 64 ? UINT64_MAX : ticks * 64 - b->divider;
		event[k] = DPMU_EV_CPU_CYCLES;
		left[k++] = ticks;
	}
	return k;
}

bool dpmu_bank_irq(const struct dpmu_bank *b)
{
	return (b->pmcr & DPMU_PMCR_E) && (b->ovs & b->inten & dpmu_bank_mask(b));
}
