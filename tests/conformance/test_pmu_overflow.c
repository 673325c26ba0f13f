/*
 * Core PMU conformance: overflow status, CHAIN, the overflow interrupt line
 * and overflow in batched delivery (reference section 1 "Counting and
 * overflow"; Arm ARM PMOVSSET_EL0, PMINTENSET_EL1, event 0x1E CHAIN).
 */
#include "conformance.h"

#define PMCR DPMU_SYSREG(3, 3, 9, 12, 0)
#define PMCNTENSET DPMU_SYSREG(3, 3, 9, 12, 1)
#define PMOVSCLR DPMU_SYSREG(3, 3, 9, 12, 3)
#define PMOVSSET DPMU_SYSREG(3, 3, 9, 14, 3)
#define PMCCNTR DPMU_SYSREG(3, 3, 9, 13, 0)
#define PMINTENSET DPMU_SYSREG(3, 0, 9, 14, 1)
#define PMINTENCLR DPMU_SYSREG(3, 0, 9, 14, 2)
#define PMEVCNTR(n) DPMU_SYSREG(3, 3, 14, 8 + ((n) >> 3), (n) & 7)
#define PMEVTYPER(n) DPMU_SYSREG(3, 3, 14, 12 + ((n) >> 3), (n) & 7)

#define E (1u << 0)
#define LC (1u << 6)
#define LP (1u << 7)
#define CC (1u << 31)
#define INST_RETIRED 0x08
#define CHAIN 0x1e

/* Counter 0 counts INST_RETIRED from `start`; counter 1 counts `odd_ev`. */
static void setup_pair(struct dpmu_model *m, uint64_t start, unsigned odd_ev, uint32_t enable,
		       uint32_t pmcr)
{
	conf_wr(m, 0, PMEVTYPER(0), INST_RETIRED);
	conf_wr(m, 0, PMEVTYPER(1), odd_ev);
	conf_wr(m, 0, PMEVCNTR(0), start);
	conf_wr(m, 0, PMCNTENSET, enable);
	conf_wr(m, 0, PMCR, E | pmcr);
}

/* Reference section 1: overflow (bits [31:0] wrapping) sets PMOVSSET[n]. */
static void Overflow_of_a_32_bit_counter_sets_PMOVSSET(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	setup_pair(m, 0xfffffffdull, INST_RETIRED, 0x3, 0);
	dpmu_model_core_event(m, 0, INST_RETIRED, 2);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), 0);
	dpmu_model_core_event(m, 0, INST_RETIRED, 1);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), 0x1);
	assert_int_equal(conf_rd(m, 0, PMOVSCLR), 0x1);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 0);
	dpmu_model_destroy(m);
}

/* model.h "Overflow is detected at delivery ... exact however large n is";
 * reference section 1 CHAIN: the odd counter counts every 32-bit wrap of
 * the even one. 2^33 + 5 events from 0 wrap counter 0 twice. */
static void Batched_delivery_of_2pow33_plus_5_events_overflows_and_CHAIN_counts_2_wraps(
	void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	setup_pair(m, 0, CHAIN, 0x3, 0);
	dpmu_model_core_event(m, 0, INST_RETIRED, (1ull << 33) + 5);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 5);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(1)), 2);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), 0x1);
	/* From 0xfffffffb the same delivery wraps three times and lands on 0. */
	conf_wr(m, 0, PMEVCNTR(0), 0xfffffffbull);
	conf_wr(m, 0, PMEVCNTR(1), 0);
	dpmu_model_core_event(m, 0, INST_RETIRED, (1ull << 33) + 5);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 0);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(1)), 3);
	dpmu_model_destroy(m);
}

/* The pair read as a 64-bit value (seed 003 section 4.2, chained mode:
 * low | high << 32) equals the events delivered. */
static void CHAIN_pair_reads_as_one_64_bit_count(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	setup_pair(m, 0, CHAIN, 0x3, 0);
	uint64_t total = 0;
	for (uint64_t n = 1; n < (1ull << 40); n = n * 7 + 12345) {
		dpmu_model_core_event(m, 0, INST_RETIRED, n);
		total += n;
	}
	uint64_t v = conf_rd(m, 0, PMEVCNTR(0)) | conf_rd(m, 0, PMEVCNTR(1)) << 32;
	assert_int_equal(v, total);
	dpmu_model_destroy(m);
}

/* Reference section 1 / Arm ARM CHAIN: the chained odd counter counts only
 * while it is itself enabled. */
static void CHAIN_counter_that_is_disabled_does_not_count(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	setup_pair(m, 0xffffffffull, CHAIN, 0x1, 0);
	dpmu_model_core_event(m, 0, INST_RETIRED, 1);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(1)), 0);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), 0x1);
	dpmu_model_destroy(m);
}

/* Reference section 1: CHAIN is programmed on an odd counter; on an even
 * counter (no lower neighbour) it counts nothing. */
static void CHAIN_on_an_even_counter_counts_nothing(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMEVTYPER(1), INST_RETIRED);
	conf_wr(m, 0, PMEVTYPER(2), CHAIN);
	conf_wr(m, 0, PMEVCNTR(1), 0xffffffffull);
	conf_wr(m, 0, PMCNTENSET, 0x6);
	conf_wr(m, 0, PMCR, E);
	dpmu_model_core_event(m, 0, INST_RETIRED, 3);
	dpmu_model_core_event(m, 0, CHAIN, 3); /* not an event anyone delivers */
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(2)), 0);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), 0x2);
	dpmu_model_destroy(m);
}

/* Arm ARM: the chained odd counter overflows like any counter and sets its
 * own PMOVSSET bit. */
static void CHAIN_counter_overflow_sets_its_own_overflow_bit(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	setup_pair(m, 0xffffffffull, CHAIN, 0x3, 0);
	conf_wr(m, 0, PMEVCNTR(1), 0xffffffffull);
	dpmu_model_core_event(m, 0, INST_RETIRED, 1);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(1)), 0);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), 0x3);
	dpmu_model_destroy(m);
}

/* Reference section 1: PMOVSSET write-1-to-set, PMOVSCLR write-1-to-clear;
 * bits of counters >= N are RAZ/WI. */
static void PMOVSSET_sets_and_PMOVSCLR_clears_overflow_status(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	unsigned n = (unsigned)(conf_rd(m, 0, PMCR) >> 11) & 0x1f;
	conf_wr(m, 0, PMOVSSET, 0xffffffffu);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), ((1u << n) - 1) | CC);
	conf_wr(m, 0, PMOVSCLR, 0x1u | CC);
	assert_int_equal(conf_rd(m, 0, PMOVSCLR), ((1u << n) - 1) & ~1u);
	dpmu_model_destroy(m);
}

/* Reference section 1: the interrupt request is asserted while PMCR.E = 1
 * and (PMOVSSET & PMINTENSET) != 0 (level-sensitive). */
static void Interrupt_line_follows_PMCR_E_PMINTENSET_and_PMOVSSET(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	setup_pair(m, 0xffffffffull, INST_RETIRED, 0x1, 0);
	dpmu_model_core_event(m, 0, INST_RETIRED, 1);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), 0x1);
	assert_false(dpmu_model_core_irq(m, 0)); /* interrupt not enabled */
	conf_wr(m, 0, PMINTENSET, 0x2);
	assert_false(dpmu_model_core_irq(m, 0)); /* enabled for another counter */
	conf_wr(m, 0, PMINTENSET, 0x1);
	assert_int_equal(conf_rd(m, 0, PMINTENCLR), 0x3);
	assert_true(dpmu_model_core_irq(m, 0));
	conf_wr(m, 0, PMCR, 0);
	assert_false(dpmu_model_core_irq(m, 0)); /* E = 0 */
	conf_wr(m, 0, PMCR, E);
	assert_true(dpmu_model_core_irq(m, 0)); /* still pending: a level */
	conf_wr(m, 0, PMINTENCLR, 0x1);
	assert_false(dpmu_model_core_irq(m, 0));
	conf_wr(m, 0, PMINTENSET, 0x1);
	conf_wr(m, 0, PMOVSCLR, 0x1);
	assert_false(dpmu_model_core_irq(m, 0)); /* status cleared */
	conf_wr(m, 0, PMOVSSET, 0x1);
	assert_true(dpmu_model_core_irq(m, 0)); /* software-set overflow */
	dpmu_model_destroy(m);
}

/* Reference section 1: the cycle counter signals overflow when bits [31:0]
 * wrap while PMCR.LC = 0 (and keeps counting in 64 bits). */
static void Cycle_counter_overflows_at_32_bits_when_LC_is_0(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMCCNTR, 0xffffffffull);
	conf_wr(m, 0, PMCNTENSET, CC);
	conf_wr(m, 0, PMCR, E);
	dpmu_model_core_cycles(m, 0, 1);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), CC);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 0x100000000ull);
	dpmu_model_destroy(m);
}

/* Reference section 1: with PMCR.LC = 1 overflow is at 64 bits only. */
static void Cycle_counter_overflows_at_64_bits_when_LC_is_1(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMCCNTR, 0xffffffffull);
	conf_wr(m, 0, PMCNTENSET, CC);
	conf_wr(m, 0, PMCR, E | LC);
	dpmu_model_core_cycles(m, 0, 1);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), 0);
	conf_wr(m, 0, PMCCNTR, 0xffffffffffffffffull);
	dpmu_model_core_cycles(m, 0, 2);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), CC);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 1);
	dpmu_model_destroy(m);
}

/* Reference section 1: PMUv3p5 64-bit event counters signal overflow at
 * bit 31 -> 32 while PMCR.LP = 0. */
static void PMUv3p5_counter_with_LP_0_overflows_at_bit_32(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model_p5();
	setup_pair(m, 0xffffffffull, INST_RETIRED, 0x1, 0);
	dpmu_model_core_event(m, 0, INST_RETIRED, 1);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), 0x1);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 0x100000000ull);
	dpmu_model_destroy(m);
}

/* Reference section 1: with PMCR.LP = 1 they overflow at 64 bits. */
static void PMUv3p5_counter_with_LP_1_overflows_at_bit_64(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model_p5();
	setup_pair(m, 0xffffffffull, INST_RETIRED, 0x1, LP);
	dpmu_model_core_event(m, 0, INST_RETIRED, 1);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), 0);
	conf_wr(m, 0, PMEVCNTR(0), 0xfffffffffffffff0ull);
	dpmu_model_core_event(m, 0, INST_RETIRED, 0x20);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), 0x1);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 0x10);
	dpmu_model_destroy(m);
}

/* Arm ARM AArch64.IncrementEventCounter: with PMUv3p5 and PMCR.LP = 0 the
 * even counter still generates CHAIN on each wrap of bits [31:0]. */
static void PMUv3p5_CHAIN_with_LP_0_counts_32_bit_wraps(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model_p5();
	setup_pair(m, 0, CHAIN, 0x3, 0);
	dpmu_model_core_event(m, 0, INST_RETIRED, (1ull << 33) + 5);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), (1ull << 33) + 5);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(1)), 2);
	dpmu_model_destroy(m);
}

/* Arm ARM AArch64.IncrementEventCounter: an even counter that overflows at
 * 64 bits (PMCR.LP = 1) generates no CHAIN event for its odd neighbour. */
static void CHAIN_is_not_generated_when_PMCR_LP_is_1(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model_p5();
	setup_pair(m, 0xfffffffffffffffeull, CHAIN, 0x3, LP);
	dpmu_model_core_event(m, 0, INST_RETIRED, (1ull << 33) + 5);
	assert_int_equal(conf_rd(m, 0, PMOVSSET), 0x1);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(1)), 0);
	dpmu_model_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(Overflow_of_a_32_bit_counter_sets_PMOVSSET),
		cmocka_unit_test(
			Batched_delivery_of_2pow33_plus_5_events_overflows_and_CHAIN_counts_2_wraps),
		cmocka_unit_test(CHAIN_pair_reads_as_one_64_bit_count),
		cmocka_unit_test(CHAIN_counter_that_is_disabled_does_not_count),
		cmocka_unit_test(CHAIN_on_an_even_counter_counts_nothing),
		cmocka_unit_test(CHAIN_counter_overflow_sets_its_own_overflow_bit),
		cmocka_unit_test(PMOVSSET_sets_and_PMOVSCLR_clears_overflow_status),
		cmocka_unit_test(Interrupt_line_follows_PMCR_E_PMINTENSET_and_PMOVSSET),
		cmocka_unit_test(Cycle_counter_overflows_at_32_bits_when_LC_is_0),
		cmocka_unit_test(Cycle_counter_overflows_at_64_bits_when_LC_is_1),
		cmocka_unit_test(PMUv3p5_counter_with_LP_0_overflows_at_bit_32),
		cmocka_unit_test(PMUv3p5_counter_with_LP_1_overflows_at_bit_64),
		cmocka_unit_test(PMUv3p5_CHAIN_with_LP_0_counts_32_bit_wraps),
		cmocka_unit_test(CHAIN_is_not_generated_when_PMCR_LP_is_1),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
