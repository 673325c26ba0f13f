/*
 * The external frame is another path to the very state the system registers
 * reach: PMCR, enables, counters, types, overflow, PMSWINC. Writes through
 * one view read back through the other, and counting follows external
 * writes. Sources: Arm ARM DDI0487 (each PMU register's "architecturally
 * mapped to External register" statement, PMCR, PMSWINC), reference sections
 * 1-3, seed 001 section 2.
 */
#include "conformance.h"

#include "dynpmu/ext32.h"

#define PMCR_EL0 DPMU_SYSREG(3, 3, 9, 12, 0)
#define PMCNTENSET_EL0 DPMU_SYSREG(3, 3, 9, 12, 1)
#define PMCNTENCLR_EL0 DPMU_SYSREG(3, 3, 9, 12, 2)
#define PMOVSCLR_EL0 DPMU_SYSREG(3, 3, 9, 12, 3)
#define PMOVSSET_EL0 DPMU_SYSREG(3, 3, 9, 14, 3)
#define PMINTENSET_EL1 DPMU_SYSREG(3, 0, 9, 14, 1)
#define PMCCNTR_EL0 DPMU_SYSREG(3, 3, 9, 13, 0)
#define PMCCFILTR_EL0 DPMU_SYSREG(3, 3, 14, 15, 7)
#define PMEVCNTR_EL0(n) DPMU_SYSREG(3, 3, 14, 8 + ((n) >> 3), (n) & 7)
#define PMEVTYPER_EL0(n) DPMU_SYSREG(3, 3, 14, 12 + ((n) >> 3), (n) & 7)

#define CLUSTERPMCR_EL1 DPMU_SYSREG(3, 0, 15, 5, 0)
#define CLUSTERPMCNTENSET_EL1 DPMU_SYSREG(3, 0, 15, 5, 1)
#define CLUSTERPMSELR_EL1 DPMU_SYSREG(3, 0, 15, 5, 5)
#define CLUSTERPMXEVTYPER_EL1 DPMU_SYSREG(3, 0, 15, 6, 1)
#define CLUSTERPMXEVCNTR_EL1 DPMU_SYSREG(3, 0, 15, 6, 2)
#define CLUSTERPMCCNTR_EL1 DPMU_SYSREG(3, 0, 15, 6, 0)

#define PMCR_E (1u << 0)
#define PMCR_P (1u << 1)
#define PMCR_C (1u << 2)
#define PMCR_D (1u << 3)

static int setup(void **state)
{
	struct dpmu_model *m = conf_model(NULL);
	conf_unlock_all(m); /* these rules are about the registers */
	*state = m;
	return 0;
}

static int teardown(void **state)
{
	dpmu_model_destroy(*state);
	return 0;
}

/* Reference section 2: PMCR bits [31:11] (N, IDCODE, IMP) are RAZ/WI in the
 * external view; PMCFGR and PMIIDR carry them instead. */
static void PMCR_high_bits_RAZ_WI_in_external_view(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCR) >> 11, 0);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCR, 0xfffff800u);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCR), 0);
	/* The system-register view still reports N. */
	uint64_t pmcr = conf_rd(m, 0, PMCR_EL0);
	assert_int_equal((pmcr >> 11) & 0x1f, conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCFGR) & 0xff);
}

/* Arm ARM PMCR.P: write 1 resets every event counter but not the cycle
 * counter; P reads as 0. Through the external PMCR. */
static void PMCR_P_resets_event_counters_not_cycle_counter_externally(void **state)
{
	struct dpmu_model *m = *state;
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0), 100);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(1), 200);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCCNTR, 300);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCR, PMCR_P);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0)), 0);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(1)), 0);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCCNTR), 300);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCR) & PMCR_P, 0);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCR, PMCR_C);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCCNTR), 0);
}

/* Arm ARM: PMEVCNTR<n>_EL0 is mapped to the external PMEVCNTR<n>; a write
 * through either view reads back through the other. */
static void PMEVCNTR_same_state_in_both_views(void **state)
{
	struct dpmu_model *m = *state;
	conf_wr(m, 0, PMEVCNTR_EL0(2), 0x1234);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(2)), 0x1234);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(3), 0xabcd);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR_EL0(3)), 0xabcd);
}

/* Reference section 2: the word at +4 is the upper half of a 64-bit counter,
 * 0 (and ignoring writes) for a 32-bit one (no PMUv3p5 on Armv8.2). */
static void PMEVCNTR_high_word_reads_zero_for_32bit_counter(void **state)
{
	struct dpmu_model *m = *state;
	unsigned cl, idx;
	const struct dpmu_core_type *t = dpmu_profile_core(dpmu_model_profile(m), 0, &cl, &idx);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0), 0xffffffffu);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0) + 4, 0x5);
	if (t->pmuv3p5) {
		assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0) + 4), 5);
		assert_int_equal(conf_rd(m, 0, PMEVCNTR_EL0(0)), 0x5ffffffffull);
	} else {
		assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0) + 4), 0);
		assert_int_equal(conf_rd(m, 0, PMEVCNTR_EL0(0)), 0xffffffffu);
	}
}

/* Arm ARM PMCCNTR: 64 bits, the external view in two words. */
static void PMCCNTR_64bit_in_two_words_both_views(void **state)
{
	struct dpmu_model *m = *state;
	conf_wr(m, 0, PMCCNTR_EL0, 0x0000000712345678ull);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCCNTR), 0x12345678);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCCNTR + 4), 0x7);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCCNTR + 4, 0x9);
	assert_int_equal(conf_rd(m, 0, PMCCNTR_EL0), 0x0000000912345678ull);
}

/* Arm ARM: PMEVTYPER<n> and PMCCFILTR are the same registers in both views. */
static void PMEVTYPER_and_PMCCFILTR_same_state_in_both_views(void **state)
{
	struct dpmu_model *m = *state;
	uint16_t ev = conf_core_event(m);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVTYPER(1), (1u << 31) | ev);
	assert_int_equal(conf_rd(m, 0, PMEVTYPER_EL0(1)), (1u << 31) | ev);
	conf_wr(m, 0, PMEVTYPER_EL0(4), (1u << 30) | ev);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVTYPER(4)), (1u << 30) | ev);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCCFILTR, 1u << 30);
	assert_int_equal(conf_rd(m, 0, PMCCFILTR_EL0), 1u << 30);
}

/* Arm ARM PMCNTENSET/PMCNTENCLR: one enable mask, both views; bits of
 * unimplemented counters RAZ/WI. */
static void PMCNTEN_same_mask_in_both_views(void **state)
{
	struct dpmu_model *m = *state;
	unsigned n = conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCFGR) & 0xff;
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET, 0xffffffffu);
	uint32_t all = (uint32_t)((1u << n) - 1) | (1u << 31);
	assert_int_equal(conf_rd(m, 0, PMCNTENSET_EL0), all);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCNTENCLR), all);
	conf_wr(m, 0, PMCNTENCLR_EL0, 0x1);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET), all & ~1u);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCNTENCLR, 1u << 31);
	assert_int_equal(conf_rd(m, 0, PMCNTENSET_EL0), all & ~1u & ~(1u << 31));
}

/* Arm ARM PMOVSSET/PMOVSCLR and PMINTENSET: same state, both views. */
static void PMOVS_and_PMINTEN_same_state_in_both_views(void **state)
{
	struct dpmu_model *m = *state;
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMOVSSET, 0x5);
	assert_int_equal(conf_rd(m, 0, PMOVSSET_EL0), 0x5);
	conf_wr(m, 0, PMOVSCLR_EL0, 0x1);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMOVSCLR), 0x4);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMOVSCLR, 0x4);
	assert_int_equal(conf_rd(m, 0, PMOVSSET_EL0), 0);
	conf_wr(m, 0, PMINTENSET_EL1, 0x2);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMINTENSET), 0x2);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMINTENCLR, 0x2);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMINTENSET), 0);
}

/* Arm ARM: PMCR.E/PMCNTENSET/PMEVTYPER written externally govern counting
 * exactly as the system registers do. */
static void Counting_follows_external_programming(void **state)
{
	struct dpmu_model *m = *state;
	uint16_t ev = conf_core_event(m);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVTYPER(0), ev);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET, 0x1);
	dpmu_model_core_event(m, 0, ev, 5);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0)), 0); /* E = 0 */
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCR, PMCR_E);
	assert_int_equal(conf_rd(m, 0, PMCR_EL0) & PMCR_E, PMCR_E);
	dpmu_model_core_event(m, 0, ev, 5);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0)), 5);
	/* Filtering EL1 (P = 1) externally stops it at EL1. */
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVTYPER(0), (1u << 31) | ev);
	dpmu_model_core_event(m, 0, ev, 5);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR_EL0(0)), 5);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCNTENCLR, 0x1);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVTYPER(0), ev);
	dpmu_model_core_event(m, 0, ev, 5);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR_EL0(0)), 5);
}

/* Arm ARM PMCR.D: the cycle counter counts every 64th cycle, set
 * externally. */
static void PMCR_D_written_externally_divides_cycle_counter(void **state)
{
	struct dpmu_model *m = *state;
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET, 1u << 31);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCR, PMCR_E | PMCR_D);
	dpmu_model_core_cycles(m, 0, 640);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCCNTR), 10);
}

/* Arm ARM PMSWINC: write-only; a write of bit n increments counter n when it
 * counts SW_INCR (0x00) and is enabled; reads as zero externally. */
static void PMSWINC_external_write_increments_SW_INCR_counters(void **state)
{
	struct dpmu_model *m = *state;
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVTYPER(0), DPMU_EV_SW_INCR);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVTYPER(1), conf_core_event(m));
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET, 0x3);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCR, PMCR_E);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSWINC, 0x3);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSWINC, 0x1);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR_EL0(0)), 2);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR_EL0(1)), 0);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMSWINC), 0);
}

/* Arm ARM: event counters at or above PMCR.N are RAZ/WI. */
static void Unimplemented_counters_RAZ_WI_externally(void **state)
{
	struct dpmu_model *m = *state;
	unsigned n = conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCFGR) & 0xff;
	for (unsigned i = n; i < 31; i++) {
		conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(i), 0x77);
		conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVTYPER(i), 0x8);
		assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(i)), 0);
		assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVTYPER(i)), 0);
	}
}

/* Arm ARM: overflow seen externally: PMOVSSET and the interrupt line follow a
 * counter programmed through the frame. */
static void Overflow_of_externally_programmed_counter_sets_PMOVSSET(void **state)
{
	struct dpmu_model *m = *state;
	uint16_t ev = conf_core_event(m);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVTYPER(0), ev);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0), 0xfffffffeu);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET, 0x1);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMINTENSET, 0x1);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCR, PMCR_E);
	dpmu_model_core_event(m, 0, ev, 3);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMOVSSET), 0x1);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0)), 1);
	assert_true(dpmu_model_core_irq(m, 0));
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMOVSCLR, 0x1);
	assert_false(dpmu_model_core_irq(m, 0));
}

/* Reference section 3 / seed 001: the cluster frame reaches the cluster PMU
 * state that CLUSTERPM* system registers reach. */
static void Cluster_frame_same_state_as_cluster_sysregs(void **state)
{
	struct dpmu_model *m = *state;
	uint16_t ev = conf_cluster_event(m);
	conf_wr(m, 0, CLUSTERPMSELR_EL1, 1);
	conf_wr(m, 0, CLUSTERPMXEVCNTR_EL1, 0x4242);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMEVCNTR(1)), 0x4242);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMEVTYPER(2), ev);
	conf_wr(m, 0, CLUSTERPMSELR_EL1, 2);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMXEVTYPER_EL1) & 0xffff, ev);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMCNTENSET, 0x4);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCNTENSET_EL1) & 0x4, 0x4);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMCR, PMCR_E);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCR_EL1) & PMCR_E, PMCR_E);
	dpmu_model_cluster_event(m, 0, ev, 7);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMEVCNTR(2)), 7);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMCCNTR, 11);
	assert_int_equal(conf_rd(m, 0, CLUSTERPMCCNTR_EL1), 11);
}

/* The cluster PMU has no filters: its PMCCFILTR is RAZ/WI and PMEVTYPER
 * keeps only the event number (docs/model.md). */
static void Cluster_frame_has_no_filter_bits(void **state)
{
	struct dpmu_model *m = *state;
	uint16_t ev = conf_cluster_event(m);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMCCFILTR, 0xffffffffu);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMCCFILTR), 0);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMEVTYPER(0), (1u << 31) | ev);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMEVTYPER(0)), ev);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(PMCR_high_bits_RAZ_WI_in_external_view),
		T(PMCR_P_resets_event_counters_not_cycle_counter_externally),
		T(PMEVCNTR_same_state_in_both_views),
		T(PMEVCNTR_high_word_reads_zero_for_32bit_counter),
		T(PMCCNTR_64bit_in_two_words_both_views),
		T(PMEVTYPER_and_PMCCFILTR_same_state_in_both_views),
		T(PMCNTEN_same_mask_in_both_views),
		T(PMOVS_and_PMINTEN_same_state_in_both_views),
		T(Counting_follows_external_programming),
		T(PMCR_D_written_externally_divides_cycle_counter),
		T(PMSWINC_external_write_increments_SW_INCR_counters),
		T(Unimplemented_counters_RAZ_WI_externally),
		T(Overflow_of_externally_programmed_counter_sets_PMOVSSET),
		T(Cluster_frame_same_state_as_cluster_sysregs),
		T(Cluster_frame_has_no_filter_bits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
