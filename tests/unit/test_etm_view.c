/*
 * The trace unit at work (src/model/etm_run.c), programmed through its
 * frame as a debugger would: ViewInst follows TRCVICTLR's EVENT resource,
 * counters decrement on PMU events as external inputs (TRCEXTINSELR) and
 * reach zero, INST_RETIRED counts exactly with each instruction, include
 * and exclude ranges, start/stop comparators and the exception-level
 * filter decide which instructions are traced, a traced block is traced to
 * its end, and an SVC's exception packet decodes with OpenCSD.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conformance/conformance.h"
#include "dynpmu/etm.h"
#include "dynpmu/etmdecode.h"

#define ETM ((struct dpmu_frame){ DPMU_FRAME_ETM, 0 })
#define EXTIN (DPMU_ETM_RS_EXTIN << 16)
#define COUNTER (DPMU_ETM_RS_COUNTER << 16)
#define RANGE (DPMU_ETM_RS_RANGE << 16)
enum { L1D_CACHE_REFILL = 0x03, INST_RETIRED = 0x08 };

struct fx {
	struct dpmu_model *m;
	struct dpmu_etm_sink sink;
	unsigned watched, active;
};

static void on_watch(void *ctx, unsigned core, bool active)
{
	struct fx *f = ctx;
	assert_int_equal(core, 0);
	f->watched++;
	f->active = active;
}

static struct fx *fx_new(void)
{
	struct fx *f = calloc(1, sizeof *f);
	assert_non_null(f);
	f->m = conf_model(NULL);
	struct dpmu_err err;
	assert_int_equal(dpmu_etm_sink_init(&f->sink, 1 << 16, &err), 0);
	dpmu_model_etm_watch(f->m, on_watch, NULL, NULL, f);
	conf_xwr(f->m, ETM, DPMU_TRCLAR, DPMU_TRCLAR_KEY);
	conf_xwr(f->m, ETM, DPMU_TRCOSLAR, 0);
	/* EL0 non-secure only, as dynpmu trace record programs it */
	conf_xwr(f->m, ETM, DPMU_TRCVICTLR,
		 DPMU_TRCVICTLR_SSSTATUS | DPMU_TRCVICTLR_EXLEVEL_NS(1) |
			 DPMU_TRCVICTLR_EXLEVEL_NS(2) | 1u /* EVENT: TRUE */);
	assert_int_equal(dpmu_model_set_el(f->m, 0, 0, DPMU_NONSECURE, &err), 0);
	return f;
}

static void fx_free(struct fx *f)
{
	dpmu_model_etm_watch(f->m, NULL, NULL, NULL, NULL);
	dpmu_model_destroy(f->m);
	dpmu_etm_sink_free(&f->sink);
	free(f);
}

static void start(struct fx *f)
{
	struct dpmu_err err;
	assert_int_equal(dpmu_model_etm_attach(f->m, 0, &f->sink, &err), 0);
	conf_xwr(f->m, ETM, DPMU_TRCPRGCTLR, DPMU_TRCPRGCTLR_EN);
}

/* n instructions from pc, each a not-taken conditional branch (so that
 * each is a block of its own) or, with plain, no branch. */
static void feed(struct fx *f, uint64_t pc, unsigned n, bool plain)
{
	struct dpmu_etm_insn in[64];
	assert_true(n <= 64);
	for (unsigned i = 0; i < n; i++)
		in[i] = (struct dpmu_etm_insn){ pc + 4 * i, pc + 4 * i + 4,
						plain ? DPMU_ETM_NOT_BRANCH : DPMU_ETM_DIRECT, false };
	dpmu_model_etm_insns(f->m, 0, in, n);
}

static struct dpmu_etm_status status(struct fx *f)
{
	struct dpmu_etm_status st;
	assert_int_equal(dpmu_model_etm_status(f->m, 0, &st), 0);
	return st;
}

static void active_needs_enable_and_a_sink(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	conf_xwr(f->m, ETM, DPMU_TRCPRGCTLR, DPMU_TRCPRGCTLR_EN);
	assert_false(dpmu_model_etm_active(f->m, 0)); /* no sink: nowhere to trace */
	assert_int_equal(f->watched, 0);
	struct dpmu_err err;
	assert_int_equal(dpmu_model_etm_attach(f->m, 0, &f->sink, &err), 0);
	assert_true(dpmu_model_etm_active(f->m, 0));
	assert_int_equal(f->active, 1);
	conf_xwr(f->m, ETM, DPMU_TRCPRGCTLR, 0);
	assert_false(dpmu_model_etm_active(f->m, 0));
	assert_int_equal(f->watched, 2);
	assert_int_equal(f->active, 0);
	fx_free(f);
}

/* Counter 0 from 5 on L1D_CACHE_REFILL (SEL0), ViewInst = counter 0 at
 * zero: nothing is traced until five refills were delivered. */
static void a_pmu_event_counts_the_counter_to_zero(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	conf_xwr(f->m, ETM, DPMU_TRCEXTINSELR, L1D_CACHE_REFILL);
	conf_xwr(f->m, ETM, DPMU_TRCRSCTLR(2), EXTIN | 1);
	conf_xwr(f->m, ETM, DPMU_TRCRSCTLR(3), COUNTER | 1);
	conf_xwr(f->m, ETM, DPMU_TRCCNTCTLR(0), 2);
	conf_xwr(f->m, ETM, DPMU_TRCCNTVR(0), 5);
	conf_xwr(f->m, ETM, DPMU_TRCVICTLR, DPMU_TRCVICTLR_SSSTATUS | 3);
	/* no PMU counter counts refills: only the trace unit makes them live */
	assert_false(dpmu_model_core_event_live(f->m, 0, L1D_CACHE_REFILL));
	start(f);
	assert_true(dpmu_model_core_event_live(f->m, 0, L1D_CACHE_REFILL));
	feed(f, 0x1000, 10, false);
	assert_int_equal(status(f).traced, 0);
	dpmu_model_core_event(f->m, 0, L1D_CACHE_REFILL, 3);
	assert_int_equal(conf_xrd(f->m, ETM, DPMU_TRCCNTVR(0)), 2);
	feed(f, 0x1000, 10, false);
	assert_int_equal(status(f).traced, 0);
	dpmu_model_core_event(f->m, 0, L1D_CACHE_REFILL, 7); /* stops at zero */
	assert_int_equal(conf_xrd(f->m, ETM, DPMU_TRCCNTVR(0)), 0);
	feed(f, 0x1000, 4, false);
	struct dpmu_etm_status st = status(f);
	assert_int_equal(st.traced, 4);
	assert_int_equal(st.first, 20);
	assert_int_equal(st.event_at, 20);
	assert_int_equal(st.seen, 24);
	assert_true(f->sink.written > 0);
	fx_free(f);
}

/* The window: counter 1 from 7 on INST_RETIRED once counter 0 is at zero
 * (pair 3), ViewInst = counter 0 at zero and counter 1 not (pair 2). */
static void program_window(struct fx *f, unsigned window)
{
	conf_xwr(f->m, ETM, DPMU_TRCEXTINSELR, L1D_CACHE_REFILL | INST_RETIRED << 8);
	conf_xwr(f->m, ETM, DPMU_TRCRSCTLR(4), COUNTER | 1);
	conf_xwr(f->m, ETM, DPMU_TRCRSCTLR(5), COUNTER | 2 | DPMU_TRCRSCTLR_INV);
	conf_xwr(f->m, ETM, DPMU_TRCRSCTLR(6), EXTIN | 2);
	conf_xwr(f->m, ETM, DPMU_TRCRSCTLR(7), COUNTER | 1);
	conf_xwr(f->m, ETM, DPMU_TRCCNTCTLR(1), DPMU_ETM_EVENT_PAIR | 3);
	conf_xwr(f->m, ETM, DPMU_TRCCNTVR(1), window);
	conf_xwr(f->m, ETM, DPMU_TRCVICTLR, DPMU_TRCVICTLR_SSSTATUS | DPMU_ETM_EVENT_PAIR | 2);
}

static void inst_retired_closes_the_window_exactly(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	program_window(f, 7);
	start(f);
	feed(f, 0x1000, 3, false);
	assert_int_equal(conf_xrd(f->m, ETM, DPMU_TRCCNTVR(1)), 4);
	/* INST_RETIRED comes with each instruction: the engine's delivery of
	 * it is not counted a second time */
	assert_false(dpmu_model_core_event_live(f->m, 0, INST_RETIRED));
	dpmu_model_core_event(f->m, 0, INST_RETIRED, 100);
	assert_int_equal(conf_xrd(f->m, ETM, DPMU_TRCCNTVR(1)), 4);
	feed(f, 0x100c, 17, false);
	struct dpmu_etm_status st = status(f);
	assert_int_equal(st.traced, 7);
	assert_int_equal(st.first, 0);
	assert_int_equal(st.last, 6);
	assert_int_equal(conf_xrd(f->m, ETM, DPMU_TRCCNTVR(1)), 0);
	fx_free(f);
}

/* A block is traced to its P0 element: a window that closes inside a run
 * of plain instructions keeps tracing to the branch that ends it. */
static void a_traced_block_is_traced_to_its_end(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	program_window(f, 3);
	start(f);
	feed(f, 0x1000, 10, true);          /* no branch: one block so far */
	assert_int_equal(status(f).traced, 10);
	feed(f, 0x1028, 1, false);          /* its branch ends it */
	feed(f, 0x102c, 5, false);
	struct dpmu_etm_status st = status(f);
	assert_int_equal(st.traced, 11);
	assert_int_equal(st.last, 10);
	fx_free(f);
}

static void ranges_start_stop_and_the_el_filter(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	/* include [0x1010, 0x101c], exclude [0x1014, 0x1014] */
	conf_xwr(f->m, ETM, DPMU_TRCACVR(0), 0x1010);
	conf_xwr(f->m, ETM, DPMU_TRCACVR(2), 0x1014);
	conf_xwr(f->m, ETM, DPMU_TRCACVR(3), 0x1014);
	conf_xwr(f->m, ETM, DPMU_TRCACVR(1), 0x101c);
	conf_xwr(f->m, ETM, DPMU_TRCVIIECTLR, 1u | 2u << 16);
	start(f);
	feed(f, 0x1000, 16, false);         /* 0x1000 .. 0x103c */
	struct dpmu_etm_status st = status(f);
	assert_int_equal(st.traced, 3);     /* 0x1010, 0x1018, 0x101c */
	assert_int_equal(st.first, 4);
	assert_int_equal(st.last, 7);
	/* at EL1 the filter excludes everything */
	struct dpmu_err err;
	assert_int_equal(dpmu_model_set_el(f->m, 0, 1, DPMU_NONSECURE, &err), 0);
	feed(f, 0x1010, 1, false);
	assert_int_equal(status(f).traced, 3);
	conf_xwr(f->m, ETM, DPMU_TRCPRGCTLR, 0);
	assert_int_equal(dpmu_model_set_el(f->m, 0, 0, DPMU_NONSECURE, &err), 0);
	/* start at 0x1008, stop at 0x1010 (both traced), no range */
	conf_xwr(f->m, ETM, DPMU_TRCVIIECTLR, 0);
	conf_xwr(f->m, ETM, DPMU_TRCACVR(4), 0x1008);
	conf_xwr(f->m, ETM, DPMU_TRCACVR(5), 0x1010);
	conf_xwr(f->m, ETM, DPMU_TRCVISSCTLR, 1u << 4 | 1u << (16 + 5));
	conf_xwr(f->m, ETM, DPMU_TRCVICTLR, 1u); /* SSSTATUS 0: stopped at enable */
	conf_xwr(f->m, ETM, DPMU_TRCPRGCTLR, DPMU_TRCPRGCTLR_EN);
	feed(f, 0x1000, 16, false);
	st = status(f);
	assert_int_equal(st.traced, 3);     /* 0x1008, 0x100c, 0x1010 */
	assert_int_equal(st.first, 2);
	assert_int_equal(st.last, 4);
	/* the same in one block: the stop inside it ends the trace at the
	 * block's branch, and nothing after is traced */
	conf_xwr(f->m, ETM, DPMU_TRCPRGCTLR, 0);
	conf_xwr(f->m, ETM, DPMU_TRCPRGCTLR, DPMU_TRCPRGCTLR_EN);
	feed(f, 0x1000, 16, true);          /* 0x1000 .. 0x103c, no branch */
	feed(f, 0x1040, 1, false);          /* the block's branch */
	feed(f, 0x1000, 8, false);          /* later blocks, 0x1008 not among the starts: */
	st = status(f);                     /* 0x1008 starts again (a start comparator) */
	assert_int_equal(st.first, 2);
	assert_int_equal(st.traced, 15 + 3); /* 0x1008 .. 0x1040, then 0x1008 .. 0x1010 */
	fx_free(f);
}

/* A translated block given by its first address and last instruction
 * (dpmu_model_etm_block) leaves the trace unit as one by one would: the
 * same trace bytes and counts, the window's end included. */
static void a_block_at_once_is_the_same_as_one_by_one(void **state)
{
	(void)state;
	struct fx *one = fx_new(), *blk = fx_new();
	program_window(one, 20);
	program_window(blk, 20);
	start(one);
	start(blk);
	struct dpmu_etm_insn in[8];
	for (unsigned rep = 0; rep < 6; rep++) {
		uint64_t b = 0x3000 + 0x40 * (rep % 2);
		for (unsigned i = 0; i < 8; i++)
			in[i] = (struct dpmu_etm_insn){ b + 4 * i, b + 4 * i + 4, DPMU_ETM_NOT_BRANCH,
							false };
		in[7] = (struct dpmu_etm_insn){ b + 28, 0x3040 - 0x40 * (rep % 2), DPMU_ETM_DIRECT,
						true };
		dpmu_model_etm_insns(one->m, 0, in, 8);
		if (!dpmu_model_etm_block(blk->m, 0, in[0].pc, &in[7], 8))
			dpmu_model_etm_insns(blk->m, 0, in, 8); /* the window closes inside */
	}
	struct dpmu_etm_status a = status(one), b = status(blk);
	assert_int_equal(a.traced, 24); /* 20, then the rest of the third block */
	assert_int_equal(b.traced, a.traced);
	assert_int_equal(b.last, a.last);
	assert_int_equal(b.seen, a.seen);
	assert_int_equal(one->sink.written, blk->sink.written);
	assert_memory_equal(one->sink.buf, blk->sink.buf, one->sink.written);
	fx_free(one);
	fx_free(blk);
}

/* 0x2000 nop; 0x2004 nop; 0x2008 svc #0; 0x200c b 0x2000 */
static const uint32_t svc_code[] = { 0xD503201F, 0xD503201F, 0xD4000001, 0x17FFFFFD };

struct svc_decode {
	uint64_t pcs[64];
	unsigned n, exceptions;
	bool bad_exception;
};

static int collect(void *ctx, const struct dpmu_etm_elem *el)
{
	struct svc_decode *d = ctx;
	for (uint64_t a = el->start; el->kind == DPMU_ETM_ELEM_RANGE && a < el->end; a += 4)
		if (d->n < 64)
			d->pcs[d->n++] = a;
	if (el->kind == DPMU_ETM_ELEM_EXCEPTION) {
		d->exceptions++;
		/* a Call (2), returning after the SVC */
		d->bad_exception |= el->start != 0x200c || el->end != 2;
	}
	return 0;
}

static void an_svc_decodes_as_an_exception(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	start(f);
	struct dpmu_etm_insn in[12];
	for (unsigned k = 0; k < 3; k++) {
		uint64_t b = 0x2000;
		in[4 * k + 0] = (struct dpmu_etm_insn){ b, b + 4, DPMU_ETM_NOT_BRANCH, false };
		in[4 * k + 1] = (struct dpmu_etm_insn){ b + 4, b + 8, DPMU_ETM_NOT_BRANCH, false };
		in[4 * k + 2] = (struct dpmu_etm_insn){ b + 8, b + 12, DPMU_ETM_EXCEPTION, false };
		in[4 * k + 3] = (struct dpmu_etm_insn){ b + 12, b, DPMU_ETM_DIRECT, true };
	}
	dpmu_model_etm_insns(f->m, 0, in, 12);
	uint8_t raw[4096];
	size_t len = dpmu_etm_sink_fill(&f->sink);
	assert_true(len <= sizeof raw);
	dpmu_etm_sink_copy(&f->sink, raw);
	struct dpmu_etm_decode_regs regs = { .traceidr = 0x10 };
	for (unsigned i = 0; i < 14; i++)
		regs.idr[i] = dpmu_etm_idr(&dpmu_etm_default, i);
	uint8_t img[sizeof svc_code];
	memcpy(img, svc_code, sizeof img); /* little-endian host, as A64 code */
	struct dpmu_etm_image image = { 0x2000, img, sizeof img };
	struct svc_decode d = { .n = 0 };
	struct dpmu_err err;
	assert_int_equal(dpmu_etm_decode("svc", raw, len, &regs, &image, 1, collect, &d, &err), 0);
	assert_int_equal(d.n, 12);
	for (unsigned i = 0; i < 12; i++)
		assert_int_equal(d.pcs[i], in[i].pc);
	assert_int_equal(d.exceptions, 3);
	assert_false(d.bad_exception);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(active_needs_enable_and_a_sink),
		cmocka_unit_test(a_pmu_event_counts_the_counter_to_zero),
		cmocka_unit_test(inst_retired_closes_the_window_exactly),
		cmocka_unit_test(a_traced_block_is_traced_to_its_end),
		cmocka_unit_test(ranges_start_stop_and_the_el_filter),
		cmocka_unit_test(a_block_at_once_is_the_same_as_one_by_one),
		cmocka_unit_test(an_svc_decodes_as_an_exception),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
