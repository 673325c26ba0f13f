/*
 * The trace unit at work (include/dynpmu/model.h "the trace unit at work"):
 * what TRCPRGCTLR.EN = 1 starts, from the registers of etm.c, and how each
 * instruction the engine gives it becomes trace or not (IHI 0064 chapter 7,
 * ViewInst):
 *
 *   ViewInst = EVENT resource (TRCVICTLR.EVENT)
 *              AND the exception level is not excluded (TRCVICTLR.EXLEVEL_*)
 *              AND the start/stop logic is on (TRCVISSCTLR)
 *              AND the address is in an include range, if any (TRCVIIECTLR),
 *                  and in no exclude range.
 *
 * The protocol shows instructions by blocks, each ending at a P0 element
 * (a branch or an exception): a decoder cannot place instructions after
 * the last one. So once ViewInst lets an instruction through, it lets the
 * rest of its block through too: a trace that stops, stops at a block's
 * end, and every traced instruction decodes.
 *
 * Resources: selector 0 FALSE, 1 TRUE, TRCRSCTLR2-15 with the groups of
 * etm.h (external inputs, counters at zero, single and range address
 * comparators; a group the model does not implement is FALSE). A range
 * comparator n matches lower <= address <= upper (TRCACVR2n, TRCACVR2n+1);
 * a single comparator the address itself. The start/stop logic turns on
 * at a start comparator's instruction (traced) and off after a stop
 * comparator's (traced too); its state at enable is TRCVICTLR.SSSTATUS, or
 * on when no start or stop comparator is selected.
 *
 * Counters (TRCCNTVRn) decrement on the external inputs their CNTEVENT
 * resource reads, by the number of occurrences, and stop at zero, or
 * reload from TRCCNTRLDVRn there with RLDSELF. External inputs are PMU
 * event numbers (TRCEXTINSELR): INST_RETIRED comes with each instruction
 * (exact); any other event when the engine delivers it, which is at most a
 * delivery batch after it happened (docs/model.md). CNTCHAIN, RLDEVENT,
 * the sequencer and the context comparators are not implemented.
 */
#include <stdint.h>
#include <string.h>

#include "model/model_internal.h"

/* What ViewInst must look at per instruction rather than per change. */
enum {
	PER_INSN_ADDR = 1u << 0,      /* address comparators (ranges, start/stop, resources) */
	PER_INSN_INSTRET = 1u << 1,   /* a counter counts INST_RETIRED */
};

static inline uint64_t reg(const struct dpmu_core *c, uint32_t off)
{
	return c->etm.reg[off >> 2];
}

static inline bool enabled(const struct dpmu_core *c)
{
	return reg(c, DPMU_TRCPRGCTLR) & DPMU_TRCPRGCTLR_EN;
}

/* What the resources are evaluated against: the instruction's address (if
 * known) and which external input selectors fire. */
struct rs_in {
	bool have_pc;
	uint64_t pc;
	unsigned fired;            /* bit n: TRCEXTINSELR.SELn's event occurred */
};

static bool in_range(const struct dpmu_core *c, unsigned pair, uint64_t pc)
{
	return pc >= reg(c, DPMU_TRCACVR(2 * pair)) && pc <= reg(c, DPMU_TRCACVR(2 * pair + 1));
}

static bool selector(const struct dpmu_core *c, unsigned n, const struct rs_in *x)
{
	if (n == 0)
		return false;
	if (n == 1)
		return true;
	uint64_t v = reg(c, DPMU_TRCRSCTLR(n));
	unsigned sel = DPMU_TRCRSCTLR_SELECT(v);
	bool r = false;
	switch (DPMU_TRCRSCTLR_GROUP(v)) {
	case DPMU_ETM_RS_EXTIN:
		r = (sel & x->fired & ((1u << DPMU_ETM_EXTINSEL) - 1)) != 0;
		break;
	case DPMU_ETM_RS_COUNTER:
		for (unsigned i = 0; i < DPMU_ETM_COUNTERS; i++)
			if (sel & (1u << i) && reg(c, DPMU_TRCCNTVR(i)) == 0)
				r = true;
		break;
	case DPMU_ETM_RS_SINGLE:
		for (unsigned i = 0; x->have_pc && i < 2 * DPMU_ETM_AC_PAIRS; i++)
			if (sel & (1u << i) && reg(c, DPMU_TRCACVR(i)) == x->pc)
				r = true;
		break;
	case DPMU_ETM_RS_RANGE:
		for (unsigned i = 0; x->have_pc && i < DPMU_ETM_AC_PAIRS; i++)
			if (sel & (1u << i) && in_range(c, i, x->pc))
				r = true;
		break;
	default:
		break;
	}
	return (v & DPMU_TRCRSCTLR_INV) ? !r : r;
}

/* An EVENT field: one selector, or a pair of them. */
static bool event_field(const struct dpmu_core *c, unsigned field, const struct rs_in *x)
{
	unsigned sel = DPMU_ETM_EVENT_SEL(field);
	if (!(field & DPMU_ETM_EVENT_PAIR))
		return selector(c, sel, x);
	bool r = selector(c, 2 * sel, x) && selector(c, 2 * sel + 1, x);
	bool inv = sel && (reg(c, DPMU_TRCRSCTLR(2 * sel)) & DPMU_TRCRSCTLR_PAIRINV);
	return inv ? !r : r;
}

/* The selectors an EVENT field reads. */
static unsigned field_selectors(unsigned field)
{
	unsigned sel = DPMU_ETM_EVENT_SEL(field);
	if (!(field & DPMU_ETM_EVENT_PAIR))
		return 1u << sel;
	return 3u << (2 * sel);
}

static bool uses_group(const struct dpmu_core *c, unsigned selectors, unsigned group,
		       unsigned *select)
{
	bool any = false;
	for (unsigned n = 2; n < 16; n++) {
		uint64_t v = reg(c, DPMU_TRCRSCTLR(n));
		if ((selectors & (1u << n)) && DPMU_TRCRSCTLR_GROUP(v) == group) {
			any = true;
			if (select)
				*select |= DPMU_TRCRSCTLR_SELECT(v);
		}
	}
	return any;
}

static const struct rs_in no_input = { 0 };

/* Whether counter i counts when `with` fires: the input makes its event
 * true, and it is not stopped at zero. */
static bool counts_on(const struct dpmu_core *c, unsigned i, const struct rs_in *with)
{
	unsigned field = DPMU_TRCCNTCTLR_CNTEVENT(reg(c, DPMU_TRCCNTCTLR(i)));
	if (!event_field(c, field, with) || event_field(c, field, &no_input))
		return false;
	return reg(c, DPMU_TRCCNTVR(i)) != 0 ||
	       (reg(c, DPMU_TRCCNTCTLR(i)) & DPMU_TRCCNTCTLR_RLDSELF);
}

/* What follows from the counters' values: ViewInst's EVENT, and which
 * counters INST_RETIRED decrements now. */
static void event_refresh(struct dpmu_core *c)
{
	struct dpmu_etm_run *r = &c->etm_run;
	r->event_on = event_field(c, DPMU_TRCVICTLR_EVENT(reg(c, DPMU_TRCVICTLR)), &no_input);
	if (r->event_on && r->event_at == UINT64_MAX)
		r->event_at = r->seen_n;
	r->instret_cnt = 0;
	if (r->per_insn & PER_INSN_INSTRET) {
		struct rs_in with = { .fired = r->instret_sel };
		for (unsigned i = 0; i < DPMU_ETM_COUNTERS; i++)
			if (counts_on(c, i, &with))
				r->instret_cnt |= 1u << i;
	}
}

/* Instructions until a counter INST_RETIRED decrements reaches zero (and
 * so may change ViewInst): UINT64_MAX when none counts. */
static uint64_t instret_room(const struct dpmu_core *c)
{
	uint64_t room = UINT64_MAX;
	for (unsigned i = 0; i < DPMU_ETM_COUNTERS; i++) {
		if (!(c->etm_run.instret_cnt & (1u << i)))
			continue;
		uint64_t v = reg(c, DPMU_TRCCNTVR(i));
		if ((v ? v : 1) < room)
			room = v ? v : 1; /* at zero with RLDSELF: the next one reloads */
	}
	return room;
}

/* Counter i after n occurrences of what fired: whether it changed. */
static bool count(struct dpmu_core *c, unsigned i, const struct rs_in *with, uint64_t n)
{
	if (!counts_on(c, i, with))
		return false;
	uint64_t *v = &c->etm.reg[DPMU_TRCCNTVR(i) >> 2];
	uint64_t left = n;
	while (left) {
		if (*v == 0) {
			/* RLDSELF: the decrement at zero reloads instead */
			*v = reg(c, DPMU_TRCCNTRLDVR(i));
			left--;
			if (*v == 0)
				break;
			continue;
		}
		uint64_t k = left < *v ? left : *v;
		*v -= k;
		left -= k;
		if (*v == 0 && !(reg(c, DPMU_TRCCNTCTLR(i)) & DPMU_TRCCNTCTLR_RLDSELF))
			break;
	}
	return true;
}

/* The selectors TRCEXTINSELR maps event to, as a fired mask. */
static unsigned fired_by(const struct dpmu_etm_run *r, uint16_t event)
{
	unsigned f = 0;
	for (unsigned j = 0; j < DPMU_ETM_EXTINSEL; j++)
		if ((r->extin_used & (1u << j)) && r->extin[j] == event)
			f |= 1u << j;
	return f;
}

static void inputs(struct dpmu_core *c, unsigned fired, uint64_t n)
{
	struct rs_in with = { .fired = fired };
	bool changed = false;
	for (unsigned i = 0; i < DPMU_ETM_COUNTERS; i++)
		changed |= count(c, i, &with, n);
	if (changed)
		event_refresh(c);
}

bool dpmu_etm_extin_live(const struct dpmu_core *c, uint16_t event)
{
	const struct dpmu_etm_run *r = &c->etm_run;
	return r->active && event != DPMU_ETM_INST_RETIRED && fired_by(r, event);
}

void dpmu_etm_extin(struct dpmu_core *c, uint16_t event, uint64_t n)
{
	if (!dpmu_etm_extin_live(c, event))
		return;
	inputs(c, fired_by(&c->etm_run, event), n);
}

static void set_active(struct dpmu_core *c)
{
	struct dpmu_etm_run *r = &c->etm_run;
	bool a = enabled(c) && r->sink;
	if (a == r->active)
		return;
	r->active = a;
	c->live_gen++; /* external inputs become live, or stop being */
	if (a) {
		dpmu_etm_encoder_init(&r->enc, r->sink, (uint32_t)reg(c, DPMU_TRCCONFIGR),
				      (uint32_t)reg(c, DPMU_TRCSYNCPR), (uint32_t)reg(c, DPMU_TRCCCCTLR));
		r->enc.el = c->el;
		r->enc.ns = c->sec == DPMU_NONSECURE;
		/* CONTEXTIDR_EL1 is the system's: the backend tells the thread
		 * (dpmu_model_etm_context); until then 0 */
		r->enc.context_id = 0;
	}
	if (r->watch)
		r->watch(r->watch_ctx, c->id, a);
}

void dpmu_etm_run_enable(struct dpmu_core *c, bool on)
{
	struct dpmu_etm_run *r = &c->etm_run;
	if (on) {
		uint64_t sel = reg(c, DPMU_TRCEXTINSELR);
		for (unsigned j = 0; j < DPMU_ETM_EXTINSEL; j++)
			r->extin[j] = (uint8_t)(sel >> (8 * j));
		/* the resources anything reads: ViewInst's and the counters' */
		unsigned sels = field_selectors(DPMU_TRCVICTLR_EVENT(reg(c, DPMU_TRCVICTLR)));
		for (unsigned i = 0; i < DPMU_ETM_COUNTERS; i++)
			sels |= field_selectors(DPMU_TRCCNTCTLR_CNTEVENT(reg(c, DPMU_TRCCNTCTLR(i))));
		unsigned ext = 0;
		uses_group(c, sels, DPMU_ETM_RS_EXTIN, &ext);
		r->extin_used = (uint8_t)(ext & ((1u << DPMU_ETM_EXTINSEL) - 1));
		uint64_t ss = reg(c, DPMU_TRCVISSCTLR), ie = reg(c, DPMU_TRCVIIECTLR);
		r->per_insn = 0;
		if (ss || ie || uses_group(c, sels, DPMU_ETM_RS_SINGLE, NULL) ||
		    uses_group(c, sels, DPMU_ETM_RS_RANGE, NULL))
			r->per_insn |= PER_INSN_ADDR;
		r->instret_sel = fired_by(r, DPMU_ETM_INST_RETIRED);
		if (r->instret_sel)
			r->per_insn |= PER_INSN_INSTRET;
		r->ss_on = !ss || (reg(c, DPMU_TRCVICTLR) & DPMU_TRCVICTLR_SSSTATUS);
		r->seen_n = r->traced = 0;
		r->first = r->last = r->event_at = UINT64_MAX;
		r->open = r->mid_block = false;
		event_refresh(c);
	}
	set_active(c);
}

int dpmu_model_etm_attach(struct dpmu_model *m, unsigned core, struct dpmu_etm_sink *sink,
			  struct dpmu_err *err)
{
	if (!m || core >= m->ncores)
		return dpmu_err_set(err, DPMU_ERANGE, "trace sink for cpu%u: no such core", core);
	struct dpmu_core *c = &m->cores[core];
	c->etm_run.sink = sink;
	if (c->etm_run.active && sink) {
		c->etm_run.active = false; /* restart into the new sink */
		c->live_gen++;
	}
	set_active(c);
	return 0;
}

void dpmu_model_etm_watch(struct dpmu_model *m, dpmu_etm_watch_fn fn, dpmu_etm_clock_fn clock,
			  dpmu_etm_cycles_fn cycles, void *ctx)
{
	for (unsigned i = 0; m && i < m->ncores; i++) {
		m->cores[i].etm_run.watch = fn;
		m->cores[i].etm_run.clock = clock;
		m->cores[i].etm_run.cycles = cycles;
		m->cores[i].etm_run.watch_ctx = ctx;
	}
}

/* The timestamp an encoder call may write: read from the clock only when
 * the call may make a timestamp packet (a start, or a sync that may come
 * due: at most 10 bytes, an atom and an address, before it), since reading
 * the system's time is not free and most instructions need none. */
static uint64_t stamp(const struct dpmu_etm_run *r)
{
	const struct dpmu_etm_encoder *e = &r->enc;
	bool may = e->ts && (!e->on || e->sync_due || e->since_sync + 10 >= (1ull << e->sync_log2));
	return may && r->clock ? r->clock(r->watch_ctx) : 0;
}

void dpmu_model_etm_seen(struct dpmu_model *m, unsigned core, dpmu_etm_seen_fn fn, void *ctx)
{
	if (m && core < m->ncores) {
		m->cores[core].etm_run.seen = fn;
		m->cores[core].etm_run.seen_ctx = ctx;
	}
}

bool dpmu_model_etm_active(const struct dpmu_model *m, unsigned core)
{
	return m && core < m->ncores && m->cores[core].etm_run.active;
}

/* The exception-level filter of the core's current state. */
static bool el_traced(const struct dpmu_core *c)
{
	uint64_t v = reg(c, DPMU_TRCVICTLR);
	uint32_t bit = c->sec == DPMU_NONSECURE ? DPMU_TRCVICTLR_EXLEVEL_NS(c->el)
						: DPMU_TRCVICTLR_EXLEVEL_S(c->el);
	return !(v & bit);
}

/* The start/stop logic at the instruction at pc: whether it is on for
 * it; a stop turns it off after it. Run for every instruction, inside a
 * traced block too, so that a stop there ends the trace at the block's end. */
static bool start_stop(struct dpmu_core *c, uint64_t pc)
{
	struct dpmu_etm_run *r = &c->etm_run;
	uint64_t ss = reg(c, DPMU_TRCVISSCTLR);
	bool stop_after = false;
	for (unsigned i = 0; ss && i < 2 * DPMU_ETM_AC_PAIRS; i++) {
		if (reg(c, DPMU_TRCACVR(i)) != pc)
			continue;
		if (DPMU_TRCVISSCTLR_START(ss) & (1u << i))
			r->ss_on = true;
		if (DPMU_TRCVISSCTLR_STOP(ss) & (1u << i))
			stop_after = true;
	}
	bool on = r->ss_on;
	if (stop_after)
		r->ss_on = false;
	return on;
}

/* ViewInst's address terms for the instruction at pc, with the start/stop
 * logic's state for it. */
static bool addr_terms(struct dpmu_core *c, uint64_t pc, bool on)
{
	uint64_t ie = reg(c, DPMU_TRCVIIECTLR);
	unsigned inc = DPMU_TRCVIIECTLR_INCLUDE(ie), exc = DPMU_TRCVIIECTLR_EXCLUDE(ie);
	bool included = !inc;
	for (unsigned i = 0; i < DPMU_ETM_AC_PAIRS; i++) {
		if ((inc & (1u << i)) && in_range(c, i, pc))
			included = true;
		if ((exc & (1u << i)) && in_range(c, i, pc))
			return false;
	}
	if (!on || !included)
		return false;
	/* an EVENT that reads address comparators */
	struct rs_in at = { .have_pc = true, .pc = pc };
	return event_field(c, DPMU_TRCVICTLR_EVENT(reg(c, DPMU_TRCVICTLR)), &at);
}

/* A run of instructions begins: with cycle counting, the core's cycles
 * so far time the P0 elements before it. */
static inline void run_begins(struct dpmu_core *c)
{
	struct dpmu_etm_run *r = &c->etm_run;
	r->enc.el = c->el;
	r->enc.ns = c->sec == DPMU_NONSECURE;
	if (r->enc.cci && r->cycles)
		dpmu_etm_encoder_cycles(&r->enc, r->cycles(r->watch_ctx, c->id));
}

/* ViewInst for the next instruction when no address term applies: the
 * rest of a traced block, or the EVENT resource in a traced level. */
static inline bool view_plain(const struct dpmu_etm_run *r, bool el_ok)
{
	return r->mid_block || (el_ok && r->event_on);
}

/* The instruction at index seen_n is traced (traced) or not. */
static inline void account(struct dpmu_etm_run *r, bool traced, uint64_t n)
{
	if (traced) {
		if (r->first == UINT64_MAX)
			r->first = r->seen_n;
		r->last = r->seen_n + n - 1;
		r->traced += n;
	} else if (r->open) {
		dpmu_etm_encoder_gap(&r->enc);
	}
	r->open = traced;
}

void dpmu_model_etm_insns(struct dpmu_model *m, unsigned core, const struct dpmu_etm_insn *in,
			  size_t n)
{
	if (!m || core >= m->ncores)
		return;
	struct dpmu_core *c = &m->cores[core];
	struct dpmu_etm_run *r = &c->etm_run;
	if (!r->active)
		return;
	run_begins(c);
	const bool el_ok = el_traced(c);
	size_t i = 0;
	while (i < n) {
		/* a segment in which no INST_RETIRED counter reaches zero: the
		 * counters' part of ViewInst holds throughout */
		size_t k = n - i;
		uint64_t room = instret_room(c);
		if (room < k)
			k = (size_t)room;
		for (size_t j = i; j < i + k; j++) {
			const struct dpmu_etm_insn *x = &in[j];
			bool view;
			if (r->per_insn & PER_INSN_ADDR) {
				bool on = start_stop(c, x->pc);
				view = r->mid_block || (el_ok && addr_terms(c, x->pc, on));
			} else {
				view = view_plain(r, el_ok);
			}
			account(r, view, 1);
			if (view) {
				r->mid_block = x->branch == DPMU_ETM_NOT_BRANCH;
				r->next_pc = x->next;
				dpmu_etm_encoder_insn(&r->enc, x, stamp(r));
			}
			if (r->seen)
				r->seen(r->seen_ctx, core, r->seen_n, x->pc, view);
			r->seen_n++;
		}
		/* each instruction's own INST_RETIRED counts after its ViewInst */
		if (r->instret_cnt)
			inputs(c, r->instret_sel, k);
		i += k;
	}
}

/* dpmu_model_etm_block past its common case. Out of line, so that the
 * common case keeps no frame. */
static __attribute__((noinline)) bool block_general(struct dpmu_core *c, uint64_t first_pc,
						    const struct dpmu_etm_insn *last, size_t n)
{
	struct dpmu_etm_run *r = &c->etm_run;
	/* every instruction's address matters, or a counter reaches zero
	 * inside the block: instruction by instruction */
	if ((r->per_insn & PER_INSN_ADDR) || r->seen || instret_room(c) < n)
		return false;
	run_begins(c);
	/* what the first instruction's ViewInst says holds for the block:
	 * nothing changes inside it, and a traced block is traced whole */
	bool view = view_plain(r, el_traced(c));
	account(r, view, n);
	if (view) {
		if (n > 1 && !r->enc.on) {
			/* the block's start starts the trace; its other
			 * instructions before the last are not P0 elements and
			 * write nothing */
			const struct dpmu_etm_insn first = { first_pc, first_pc + 4,
							     DPMU_ETM_NOT_BRANCH, false };
			dpmu_etm_encoder_insn(&r->enc, &first, stamp(r));
		}
		dpmu_etm_encoder_insn(&r->enc, last, stamp(r));
		r->mid_block = last->branch == DPMU_ETM_NOT_BRANCH;
		r->next_pc = last->next;
	}
	r->seen_n += n;
	if (r->instret_cnt)
		inputs(c, r->instret_sel, n);
	return true;
}

bool dpmu_model_etm_block(struct dpmu_model *m, unsigned core, uint64_t first_pc,
			  const struct dpmu_etm_insn *last, size_t n)
{
	if (!m || core >= m->ncores || n == 0)
		return false;
	struct dpmu_core *c = &m->cores[core];
	struct dpmu_etm_run *r = &c->etm_run;
	if (!r->active)
		return true;
	/* the common cases, as block_general has them: nothing per
	 * instruction and no cycle counting; then an untraced block after
	 * another changes nothing but the count, and a traced one ending in a
	 * direct branch while tracing is its atom, which writes no packet that
	 * needs the core's state (run_begins) */
	if (!(r->per_insn | r->instret_cnt) && !r->seen && !r->enc.cci) {
		bool view = r->mid_block || (r->event_on && el_traced(c));
		if (!view && !r->open) {
			r->seen_n += n;
			return true;
		}
		if (view && last->branch == DPMU_ETM_DIRECT &&
		    dpmu_etm_encoder_atom(&r->enc, last->taken)) {
			account(r, true, n);
			r->mid_block = false;
			r->next_pc = last->next;
			r->seen_n += n;
			return true;
		}
	}
	return block_general(c, first_pc, last, n);
}

void dpmu_model_etm_context(struct dpmu_model *m, unsigned core, uint32_t context_id)
{
	if (!m || core >= m->ncores)
		return;
	struct dpmu_etm_run *r = &m->cores[core].etm_run;
	if (!r->active || r->enc.context_id == context_id)
		return;
	if (r->open) {
		/* the thread left the core where its next instruction was */
		dpmu_etm_encoder_interrupt(&r->enc, r->next_pc);
		r->open = r->mid_block = false;
	}
	r->enc.context_id = context_id;
}

bool dpmu_model_etm_timestamp(struct dpmu_model *m, unsigned core, uint64_t timestamp)
{
	if (!m || core >= m->ncores || !m->cores[core].etm_run.active)
		return false;
	return dpmu_etm_encoder_timestamp(&m->cores[core].etm_run.enc, timestamp);
}

int dpmu_model_etm_status(const struct dpmu_model *m, unsigned core, struct dpmu_etm_status *out)
{
	memset(out, 0, sizeof *out);
	if (!m || core >= m->ncores)
		return DPMU_ERANGE;
	const struct dpmu_core *c = &m->cores[core];
	const struct dpmu_etm_run *r = &c->etm_run;
	out->enabled = enabled(c);
	out->active = r->active;
	out->open = r->open;
	out->seen = r->seen_n;
	out->traced = r->traced;
	out->first = r->first;
	out->last = r->last;
	out->event_at = r->event_at;
	return 0;
}
