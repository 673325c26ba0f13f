/*
 * The trace unit's packet encoder and sink against a real decoder: trace
 * made by dpmu_etm_encoder_* from a known instruction sequence must decode
 * with OpenCSD (through dpmu_etm_decode) to exactly the instructions that
 * were traced, in order; a gap shows as Trace On; a wrapped sink decodes
 * from its first sync to the end; corrupt trace is an error, not a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dynpmu/etm.h"
#include "dynpmu/etmdecode.h"
#include "dynpmu/model.h"

/* A64 code at 0x1000:
 *   0x1000 add x0, x0, #1      loop
 *   0x1004 subs x1, x1, #1
 *   0x1008 b.ne 0x1000
 *   0x100c bl 0x1020
 *   0x1010 b 0x1010
 *   ...
 *   0x1020 nop
 *   0x1024 ret */
#define BASE 0x1000u
static const uint32_t code[] = {
	0x91000400, 0xF1000421, 0x54FFFFC1, 0x94000005, 0x14000000, 0xD503201F, 0xD503201F,
	0xD503201F, 0xD503201F, 0xD65F03C0,
};

struct run {
	struct dpmu_etm_insn *in;
	size_t n, cap;
};

static void push(struct run *r, uint64_t pc, uint64_t next, enum dpmu_etm_branch b, bool taken)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 256;
		r->in = realloc(r->in, r->cap * sizeof *r->in);
		assert_non_null(r->in);
	}
	r->in[r->n++] = (struct dpmu_etm_insn){ pc, next, b, taken };
}

/* The program's execution: `iters` loop iterations, the call, the return,
 * the final branch to itself (taken once). */
static struct run execute(unsigned iters)
{
	struct run r = { 0 };
	for (unsigned i = 0; i < iters; i++) {
		bool last = i + 1 == iters;
		push(&r, 0x1000, 0x1004, DPMU_ETM_NOT_BRANCH, false);
		push(&r, 0x1004, 0x1008, DPMU_ETM_NOT_BRANCH, false);
		push(&r, 0x1008, last ? 0x100c : 0x1000, DPMU_ETM_DIRECT, !last);
	}
	push(&r, 0x100c, 0x1020, DPMU_ETM_DIRECT, true);
	push(&r, 0x1020, 0x1024, DPMU_ETM_NOT_BRANCH, false);
	push(&r, 0x1024, 0x1010, DPMU_ETM_INDIRECT, true);
	push(&r, 0x1010, 0x1010, DPMU_ETM_DIRECT, true);
	return r;
}

struct decoded {
	uint64_t *pc;
	size_t n, cap;
	uint64_t cycles[64];     /* the Cycle Count elements, in order */
	unsigned ncycles;
	unsigned trace_on;
	unsigned timestamps;
	uint64_t last_ts;
};

static int on_elem(void *ctx, const struct dpmu_etm_elem *el)
{
	struct decoded *d = ctx;
	if (el->kind == DPMU_ETM_ELEM_TRACE_ON)
		d->trace_on++;
	if (el->kind == DPMU_ETM_ELEM_CYCLES && d->ncycles < 64)
		d->cycles[d->ncycles++] = el->start;
	if (el->kind == DPMU_ETM_ELEM_TIMESTAMP) {
		d->timestamps++;
		d->last_ts = el->start;
	}
	if (el->kind != DPMU_ETM_ELEM_RANGE)
		return 0;
	assert_int_equal((el->end - el->start) / 4, el->ninsns);
	for (uint64_t a = el->start; a < el->end; a += 4) {
		if (d->n == d->cap) {
			d->cap = d->cap ? 2 * d->cap : 256;
			d->pc = realloc(d->pc, d->cap * sizeof *d->pc);
			assert_non_null(d->pc);
		}
		d->pc[d->n++] = a;
	}
	return 0;
}

static struct dpmu_etm_decode_regs regs_for(uint32_t configr)
{
	struct dpmu_etm_decode_regs r = { .configr = configr, .traceidr = 0x10 };
	for (unsigned i = 0; i < 14; i++)
		r.idr[i] = dpmu_etm_idr(&dpmu_etm_default, i);
	return r;
}

static int decode_sink(const struct dpmu_etm_sink *s, uint32_t configr, struct decoded *d,
		       struct dpmu_err *err)
{
	size_t n = dpmu_etm_sink_fill(s);
	uint8_t *raw = malloc(n ? n : 1);
	assert_non_null(raw);
	dpmu_etm_sink_copy(s, raw);
	struct dpmu_etm_image img = { BASE, (const uint8_t *)code, sizeof code };
	struct dpmu_etm_decode_regs regs = regs_for(configr);
	int rc = dpmu_etm_decode("test", raw, n, &regs, &img, 1, on_elem, d, err);
	free(raw);
	return rc;
}

/* Trace all of a run into a new sink of `size` bytes. */
static void encode_run(const struct run *r, struct dpmu_etm_sink *s, size_t size,
		       uint32_t configr, uint32_t syncpr)
{
	assert_int_equal(dpmu_etm_sink_init(s, size, NULL), 0);
	struct dpmu_etm_encoder e;
	dpmu_etm_encoder_init(&e, s, configr, syncpr, 0);
	for (size_t i = 0; i < r->n; i++)
		dpmu_etm_encoder_insn(&e, &r->in[i], 0);
}

/* The decoded instructions are exactly want[0..n), in order. */
static void assert_decoded(const struct decoded *d, const struct dpmu_etm_insn *want, size_t n)
{
	assert_int_equal(d->n, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(d->pc[i], want[i].pc);
}

static void release(struct decoded *d, struct run *r, struct dpmu_etm_sink *s)
{
	free(d->pc);
	free(r->in);
	dpmu_etm_sink_free(s);
}

/* Every traced instruction, in order, is what the decoder reports. */
static void trace_decodes_to_the_executed_instructions(void **state)
{
	(void)state;
	struct run r = execute(50);
	struct dpmu_etm_sink s;
	assert_int_equal(dpmu_etm_sink_init(&s, 1 << 16, NULL), 0);
	struct dpmu_etm_encoder e;
	uint32_t configr = DPMU_TRCCONFIGR_TS | DPMU_TRCCONFIGR_CID;
	dpmu_etm_encoder_init(&e, &s, configr, 0, 0);
	for (size_t i = 0; i < r.n; i++)
		dpmu_etm_encoder_insn(&e, &r.in[i], 1000 + i);
	dpmu_etm_encoder_timestamp(&e, 5000);
	struct decoded d = { 0 };
	struct dpmu_err err;
	assert_int_equal(decode_sink(&s, configr, &d, &err), 0);
	assert_decoded(&d, r.in, r.n);
	assert_int_equal(d.timestamps, 2);
	assert_int_equal(d.last_ts, 5000);
	release(&d, &r, &s);
}

/* With TRCCONFIGR.CCI each branch's Cycle Count packet says how many
 * cycles passed since the last count: 3 + k cycles for iteration k, and
 * the decoder's counts are exactly those; a count over 12 bits (the
 * counter's size) is "unknown". */
static void cycle_counts_decode_to_the_cycles_between_branches(void **state)
{
	(void)state;
	struct run r = execute(12);
	struct dpmu_etm_sink s;
	assert_int_equal(dpmu_etm_sink_init(&s, 1 << 16, NULL), 0);
	struct dpmu_etm_encoder e;
	uint32_t configr = DPMU_TRCCONFIGR_CCI;
	dpmu_etm_encoder_init(&e, &s, configr, 0, 0 /* below CCITMIN: 4 */);
	uint64_t now = 100;
	unsigned iter = 0;
	for (size_t i = 0; i < r.n; i++) {
		dpmu_etm_encoder_cycles(&e, now);
		dpmu_etm_encoder_insn(&e, &r.in[i], 0);
		if (r.in[i].branch != DPMU_ETM_NOT_BRANCH)
			now += iter++ == 11 ? 5000 : 3 + iter; /* 4, 5, ... 14, then too many */
	}
	dpmu_etm_encoder_cycles(&e, now);
	struct decoded d = { 0 };
	struct dpmu_err err;
	assert_int_equal(decode_sink(&s, configr, &d, &err), 0);
	assert_decoded(&d, r.in, r.n);
	/* iterations 1-11 count 4..14 cycles; the 12th's 5000 are unknown */
	assert_true(d.ncycles >= 12);
	for (unsigned k = 0; k < 11; k++)
		assert_int_equal(d.cycles[k], 4 + k);
	assert_int_equal(d.cycles[11], 0);
	release(&d, &r, &s);
}

/* Instructions ViewInst leaves out are not in the trace; the restart after
 * the gap is a Trace On, and what is traced decodes exactly. The gap ends
 * on a P0 element so that the traced part before it is complete. */
static void a_gap_is_trace_on_and_the_rest_is_exact(void **state)
{
	(void)state;
	struct run r = execute(40);
	struct dpmu_etm_sink s;
	assert_int_equal(dpmu_etm_sink_init(&s, 1 << 16, NULL), 0);
	struct dpmu_etm_encoder e;
	dpmu_etm_encoder_init(&e, &s, 0, 0, 0);
	size_t want = 0;
	struct dpmu_etm_insn *traced = calloc(r.n, sizeof *traced);
	for (size_t i = 0; i < r.n; i++) {
		/* iterations 10-19 are not traced */
		bool off = i >= 30 && i < 60;
		if (off) {
			dpmu_etm_encoder_gap(&e);
			continue;
		}
		dpmu_etm_encoder_insn(&e, &r.in[i], 0);
		traced[want++] = r.in[i];
	}
	struct decoded d = { 0 };
	struct dpmu_err err;
	assert_int_equal(decode_sink(&s, 0, &d, &err), 0);
	assert_decoded(&d, traced, want);
	assert_true(d.trace_on >= 1);
	free(traced);
	release(&d, &r, &s);
}

/* A sink smaller than the trace wraps and says so; the periodic syncs let
 * the decoder start in what is left, and what it decodes is the end of the
 * execution, contiguous. */
static void a_wrapped_sink_decodes_from_its_first_sync(void **state)
{
	(void)state;
	struct run r = execute(5000);
	struct dpmu_etm_sink s;
	encode_run(&r, &s, 4096, 0, 8);        /* sync every 256 bytes */
	assert_true(s.wrapped);
	assert_int_equal(dpmu_etm_sink_fill(&s), 4096);
	struct decoded d = { 0 };
	struct dpmu_err err;
	assert_int_equal(decode_sink(&s, 0, &d, &err), 0);
	assert_true(d.n > 1000 && d.n < r.n);
	assert_decoded(&d, r.in + (r.n - d.n), d.n);
	release(&d, &r, &s);
}

/* Corrupt or truncated trace: an error naming the input, or a shorter
 * decode; never a crash, never an instruction outside the image. */
static void corrupt_trace_is_refused_or_cut_short(void **state)
{
	(void)state;
	struct run r = execute(30);
	struct dpmu_etm_sink s;
	encode_run(&r, &s, 1 << 16, 0, 0);
	srand(7);
	for (int trial = 0; trial < 200; trial++) {
		size_t n = dpmu_etm_sink_fill(&s);
		uint8_t *raw = malloc(n);
		dpmu_etm_sink_copy(&s, raw);
		size_t cut = (size_t)rand() % n;
		raw[(size_t)rand() % n] = (uint8_t)rand();
		struct dpmu_etm_image img = { BASE, (const uint8_t *)code, sizeof code };
		struct dpmu_etm_decode_regs regs = regs_for(0);
		struct decoded d = { 0 };
		struct dpmu_err err;
		int rc = dpmu_etm_decode("corrupt.bin", raw, cut, &regs, &img, 1, on_elem, &d, &err);
		if (rc)
			assert_non_null(strstr(dpmu_errmsg(&err), "corrupt.bin: "));
		for (size_t i = 0; i < d.n; i++)
			assert_true(d.pc[i] >= BASE && d.pc[i] < BASE + sizeof code);
		free(d.pc);
		free(raw);
	}
	struct decoded none = { 0 };
	release(&none, &r, &s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(trace_decodes_to_the_executed_instructions),
		cmocka_unit_test(cycle_counts_decode_to_the_cycles_between_branches),
		cmocka_unit_test(a_gap_is_trace_on_and_the_rest_is_exact),
		cmocka_unit_test(a_wrapped_sink_decodes_from_its_first_sync),
		cmocka_unit_test(corrupt_trace_is_refused_or_cut_short),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
