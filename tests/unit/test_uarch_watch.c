/*
 * Overflow with no skid (dpmu_uarch_retire_watched, the sampling path of
 * dynpmu record): retirement stops right after the instruction whose
 * event overflows a counter with its interrupt enabled, the interrupt line
 * is asserted then and not before, and the counts and timing are those of
 * dpmu_uarch_retire (docs/record.md).
 */
#include "unit/uarch_fixture.h"

enum { L1D_CACHE_REFILL = 0x03, INST_RETIRED = 0x08 };

#define PMINTENSET_EL1 DPMU_SYSREG(3, 0, 9, 14, 1)
#define PMCCNTR_EL0 DPMU_SYSREG(3, 3, 9, 13, 0)



/* n instructions: a load every `every`-th, each to a new line (a refill) */
static struct dpmu_insn *stream(unsigned n, unsigned every)
{
	struct dpmu_insn *v = calloc(n, sizeof *v);
	assert_non_null(v);
	for (unsigned i = 0; i < n; i++) {
		uint64_t pc = 0x1000 + (i % 32) * 4;
		v[i] = every && i % every == 0 ? ld(pc, 0x100000 + (uint64_t)i * 4096)
					       : (struct dpmu_insn){.pc = pc, .isize = 4};
	}
	return v;
}

static void stops_at_the_instruction_that_overflows_inst_retired(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	const uint16_t ev[] = {INST_RETIRED};
	program(f, 0, ev, 1);
	wr(f, 0, PMEVCNTR(0), 0xffffffffu - 99); /* overflows at the 100th */
	wr(f, 0, PMINTENSET_EL1, 1);
	struct dpmu_insn *v = stream(1000, 0);
	bool ovf = false;
	size_t m = dpmu_uarch_retire_watched(f->u, 0, v, 1000, &ovf);
	assert_true(ovf);
	assert_int_equal(m, 100);
	assert_true(dpmu_model_core_irq(f->m, 0));
	assert_int_equal(counter(f, 0, 0), 0); /* wrapped at that instruction */
	free(v);
	fx_free(f);
}

/* An event some instructions make: the stop is at the load with the
 * 10th refill, not at an instruction count. */
static void stops_at_the_load_whose_refill_overflows(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	const uint16_t ev[] = {L1D_CACHE_REFILL};
	program(f, 0, ev, 1);
	wr(f, 0, PMEVCNTR(0), 0xffffffffu - 9);
	wr(f, 0, PMINTENSET_EL1, 1);
	struct dpmu_insn *v = stream(400, 7);
	bool ovf = false;
	size_t m = dpmu_uarch_retire_watched(f->u, 0, v, 400, &ovf);
	assert_true(ovf);
	assert_int_equal(m, 9 * 7 + 1); /* the 10th load is instruction 63 */
	assert_int_equal(v[m - 1].kind, DPMU_INSN_LOAD);
	assert_true(dpmu_model_core_irq(f->m, 0));
	free(v);
	fx_free(f);
}

/* The cycle counter (64-bit, PMCR.LC): the stop is at the instruction
 * during which the clock reaches the overflow, no later. */
static void stops_at_the_instruction_whose_cycles_overflow(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	wr(f, 0, PMCR_EL0, 1 | 2 | 4 | (1u << 6)); /* E, P, C, LC */
	wr(f, 0, PMCNTENSET_EL0, 1u << 31);
	wr(f, 0, PMCCNTR_EL0, 0 - (uint64_t)500);
	wr(f, 0, PMINTENSET_EL1, 1u << 31);
	struct dpmu_insn *v = stream(5000, 5);
	bool ovf = false;
	size_t m = dpmu_uarch_retire_watched(f->u, 0, v, 5000, &ovf);
	assert_true(ovf);
	uint64_t at = dpmu_uarch_core_cycles(f->u, 0);
	assert_true(at >= 500);
	assert_true(dpmu_model_core_irq(f->m, 0));
	/* the same stream up to the instruction before: not yet there */
	struct fx *g = fx_new();
	dpmu_uarch_retire(g->u, 0, v, m - 1);
	assert_true(dpmu_uarch_core_cycles(g->u, 0) < 500);
	assert_int_equal(rd(f, 0, PMCCNTR_EL0), at - 500);
	free(v);
	fx_free(g);
	fx_free(f);
}

static void without_an_interrupt_everything_retires(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	const uint16_t ev[] = {INST_RETIRED};
	program(f, 0, ev, 1);
	wr(f, 0, PMEVCNTR(0), 0xffffffffu - 99); /* overflows, but interrupts nothing */
	struct dpmu_insn *v = stream(1000, 3);
	bool ovf = true;
	assert_int_equal(dpmu_uarch_retire_watched(f->u, 0, v, 1000, &ovf), 1000);
	assert_false(ovf);
	free(v);
	fx_free(f);
}

/* Stopping and going on changes no count and no cycle. */
static void counts_and_cycles_are_those_of_retire(void **state)
{
	(void)state;
	struct fx *a = fx_new(), *b = fx_new();
	const uint16_t ev[] = {INST_RETIRED, L1D_CACHE_REFILL};
	program(a, 0, ev, 2);
	program(b, 0, ev, 2);
	wr(a, 0, PMINTENSET_EL1, 1);
	struct dpmu_insn *v = stream(3000, 4);
	size_t done = 0;
	unsigned stops = 0;
	while (done < 3000) {
		wr(a, 0, PMEVCNTR(0), 0xffffffffu - 49); /* re-armed as a sampler would */
		bool ovf;
		done += dpmu_uarch_retire_watched(a->u, 0, v + done, 3000 - done, &ovf);
		stops += ovf;
	}
	dpmu_uarch_retire(b->u, 0, v, 3000);
	dpmu_uarch_flush(a->u);
	dpmu_uarch_flush(b->u);
	assert_int_equal(stops, 60);
	assert_int_equal(counter(a, 0, 1), counter(b, 0, 1));
	assert_int_equal(dpmu_uarch_core_cycles(a->u, 0), dpmu_uarch_core_cycles(b->u, 0));
	free(v);
	fx_free(a);
	fx_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stops_at_the_instruction_that_overflows_inst_retired),
		cmocka_unit_test(stops_at_the_load_whose_refill_overflows),
		cmocka_unit_test(stops_at_the_instruction_whose_cycles_overflow),
		cmocka_unit_test(without_an_interrupt_everything_retires),
		cmocka_unit_test(counts_and_cycles_are_those_of_retire),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
