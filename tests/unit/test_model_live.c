/*
 * Which deliveries matter to the model (include/dynpmu/model.h): the live
 * answer of dpmu_model_core_event_live / dpmu_model_cluster_event_live is
 * true exactly when delivering the event would change a counter, the live
 * generation moves whenever that answer can change, and a batch of events
 * (dpmu_model_core_events) leaves the model as the same events delivered
 * one by one.
 */
#include "conformance/conformance.h"

#define PMCR DPMU_SYSREG(3, 3, 9, 12, 0)
#define PMCNTENSET DPMU_SYSREG(3, 3, 9, 12, 1)
#define PMCNTENCLR DPMU_SYSREG(3, 3, 9, 12, 2)
#define PMOVSSET DPMU_SYSREG(3, 3, 9, 14, 3)
#define PMOVSCLR DPMU_SYSREG(3, 3, 9, 12, 3)
#define PMINTENSET DPMU_SYSREG(3, 0, 9, 14, 1)
#define PMCCNTR DPMU_SYSREG(3, 3, 9, 13, 0)
#define PMEVCNTR(n) DPMU_SYSREG(3, 3, 14, 8 + ((n) >> 3), (n) & 7)
#define PMEVTYPER(n) DPMU_SYSREG(3, 3, 14, 12 + ((n) >> 3), (n) & 7)
#define AMCNTENSET0 DPMU_SYSREG(3, 3, 13, 2, 5)
#define AMCNTENCLR0 DPMU_SYSREG(3, 3, 13, 2, 4)
#define AMEVCNTR0(n) DPMU_SYSREG(3, 3, 13, 4 + ((n) >> 3), (n) & 7)
#define CLUSTERPMCR DPMU_SYSREG(3, 0, 15, 5, 0)
#define CLUSTERPMCNTENSET DPMU_SYSREG(3, 0, 15, 5, 1)
#define CLUSTERPMSELR DPMU_SYSREG(3, 0, 15, 5, 5)
#define CLUSTERPMXEVTYPER DPMU_SYSREG(3, 0, 15, 6, 1)
#define CLUSTERPMOVSSET DPMU_SYSREG(3, 0, 15, 5, 3)
#define CLUSTERPMOVSCLR DPMU_SYSREG(3, 0, 15, 5, 4)
#define CLUSTERPMINTENSET DPMU_SYSREG(3, 0, 15, 5, 6)
#define CLUSTERPMINTENCLR DPMU_SYSREG(3, 0, 15, 5, 7)
#define PMINTENCLR DPMU_SYSREG(3, 0, 9, 14, 2)
#define PMSELR DPMU_SYSREG(3, 3, 9, 12, 5)

#define PMEVTYPER_U (1u << 30) /* do not count at EL0 */
#define E 1u
#define CC (1u << 31)

enum { SW_INCR = 0x00, L1D_CACHE_REFILL = 0x03, L1D_CACHE = 0x04, INST_RETIRED = 0x08,
       CPU_CYCLES = 0x11, BR_MIS_PRED = 0x10, CHAIN = 0x1E, L3D_CACHE = 0x2B,
       STALL_BACKEND_MEM = 0x4005 };

static bool live(struct dpmu_model *m, unsigned core, uint16_t ev)
{
	return dpmu_model_core_event_live(m, core, ev);
}

static uint64_t gen(struct dpmu_model *m, unsigned core)
{
	return dpmu_model_core_live_gen(m, core);
}

/* The AMU enables are writable at EL3 only (Arm ARM D24.6). */
static void amu_write(struct dpmu_model *m, unsigned core, uint32_t enc, uint64_t v)
{
	struct dpmu_err err;
	assert_int_equal(dpmu_model_set_el(m, core, 3, DPMU_SECURE, &err), 0);
	conf_wr(m, core, enc, v);
	assert_int_equal(dpmu_model_set_el(m, core, 1, DPMU_NONSECURE, &err), 0);
}

/* Live means: an enabled counter that may count now is programmed with the
 * event (PMCR.E, PMCNTENSET, the PMEVTYPER filter at the current EL), or an
 * enabled AMU counter watches it; never on a core that is off or in WFI,
 * never SW_INCR or CHAIN; CPU_CYCLES (the clock) always on a running core.
 * Each answer is checked against what a delivery does to the counter. */
static void an_event_is_live_exactly_when_a_counter_would_count_it(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	struct dpmu_err err;
	assert_true(live(m, 0, CPU_CYCLES));
	assert_false(live(m, 0, INST_RETIRED));
	conf_wr(m, 0, PMEVTYPER(0), INST_RETIRED);
	assert_false(live(m, 0, INST_RETIRED));
	conf_wr(m, 0, PMCNTENSET, 1);
	assert_false(live(m, 0, INST_RETIRED)); /* PMCR.E = 0 */
	conf_wr(m, 0, PMCR, E);
	assert_true(live(m, 0, INST_RETIRED));
	assert_false(live(m, 0, L1D_CACHE));
	assert_false(live(m, 1, INST_RETIRED)); /* another core's counters */
	dpmu_model_core_event(m, 0, INST_RETIRED, 5);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 5);

	/* The filter at the current EL: U = 1 does not count at EL0. */
	conf_wr(m, 0, PMEVTYPER(0), INST_RETIRED | PMEVTYPER_U);
	assert_int_equal(dpmu_model_set_el(m, 0, 0, DPMU_NONSECURE, &err), 0);
	assert_false(live(m, 0, INST_RETIRED));
	dpmu_model_core_event(m, 0, INST_RETIRED, 5);
	assert_int_equal(dpmu_model_set_el(m, 0, 1, DPMU_NONSECURE, &err), 0);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 5);
	assert_true(live(m, 0, INST_RETIRED));

	/* SW_INCR and CHAIN never come from delivery, even when programmed. */
	conf_wr(m, 0, PMEVTYPER(1), CHAIN);
	conf_wr(m, 0, PMEVTYPER(2), SW_INCR);
	conf_wr(m, 0, PMCNTENSET, 0x7);
	assert_false(live(m, 0, CHAIN));
	assert_false(live(m, 0, SW_INCR));

	/* A core that is clock-gated or off counts nothing. */
	assert_int_equal(dpmu_model_set_wfi(m, 0, true, &err), 0);
	assert_false(live(m, 0, INST_RETIRED));
	assert_false(live(m, 0, CPU_CYCLES));
	assert_int_equal(dpmu_model_set_wfi(m, 0, false, &err), 0);
	assert_true(live(m, 0, INST_RETIRED));
	assert_int_equal(dpmu_model_set_power(m, 0, false, &err), 0);
	assert_false(live(m, 0, CPU_CYCLES));
	assert_int_equal(dpmu_model_set_power(m, 0, true, &err), 0);
	assert_false(live(m, 0, INST_RETIRED)); /* power-up reset the PMU */

	/* An enabled AMU counter: group-0 counter 2 counts INST_RETIRED, 3
	 * STALL_BACKEND_MEM; its clocks (0, 1) are not events. */
	assert_false(live(m, 0, STALL_BACKEND_MEM));
	amu_write(m, 0, AMCNTENSET0, 0xf);
	assert_true(live(m, 0, INST_RETIRED));
	assert_true(live(m, 0, STALL_BACKEND_MEM));
	assert_false(live(m, 0, L1D_CACHE));
	dpmu_model_core_event(m, 0, STALL_BACKEND_MEM, 7);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(3)), 7);
	amu_write(m, 0, AMCNTENCLR0, 0x8);
	assert_false(live(m, 0, STALL_BACKEND_MEM));

	/* The cluster PMU: an enabled counter with an event the cluster
	 * implements, CLUSTERPMCR.E set. */
	assert_false(dpmu_model_cluster_event_live(m, 0, L3D_CACHE));
	conf_wr(m, 0, CLUSTERPMSELR, 0);
	conf_wr(m, 0, CLUSTERPMXEVTYPER, L3D_CACHE);
	conf_wr(m, 0, CLUSTERPMCNTENSET, 1);
	assert_false(dpmu_model_cluster_event_live(m, 0, L3D_CACHE));
	conf_wr(m, 0, CLUSTERPMCR, E);
	assert_true(dpmu_model_cluster_event_live(m, 0, L3D_CACHE));
	assert_false(dpmu_model_cluster_event_live(m, 0, CHAIN));
	assert_false(dpmu_model_cluster_event_live(m, 9, L3D_CACHE));
	assert_false(live(m, 99, CPU_CYCLES));
	dpmu_model_destroy(m);
}

/* The generation moves with every change that can change a live answer
 * (event type, enable, PMCR.E, an EL change the filter sees, AMU enable,
 * WFI, power) and never goes back to a value seen before; writes that
 * cannot change one (a counter value, PMINTENSET, PMOVSSET, an EL change
 * every filter counts in) leave it. */
static void the_live_generation_moves_when_an_answer_can_change(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	struct dpmu_err err;
	uint64_t seen[32];
	unsigned nseen = 0;
	uint64_t g = gen(m, 0);
	seen[nseen++] = g;
#define MOVES(stmt)                                                                      \
	do {                                                                             \
		stmt;                                                                    \
		uint64_t now = gen(m, 0);                                                \
		for (unsigned s_ = 0; s_ < nseen; s_++)                                  \
			assert_true(now != seen[s_]);                                    \
		seen[nseen++] = g = now;                                                 \
	} while (0)
#define STAYS(stmt)                                                                      \
	do {                                                                             \
		stmt;                                                                    \
		assert_true(gen(m, 0) == g);                                             \
	} while (0)
	STAYS(conf_wr(m, 0, PMEVTYPER(0), INST_RETIRED)); /* not enabled: nothing counts */
	STAYS(conf_wr(m, 0, PMCNTENSET, 1));              /* PMCR.E = 0 */
	MOVES(conf_wr(m, 0, PMCR, E));
	MOVES(conf_wr(m, 0, PMEVTYPER(0), L1D_CACHE));
	STAYS(conf_wr(m, 0, PMEVCNTR(0), 1234));
	STAYS(conf_wr(m, 0, PMINTENSET, 1));
	STAYS(conf_wr(m, 0, PMOVSSET, 1));
	STAYS(assert_int_equal(dpmu_model_set_el(m, 0, 0, DPMU_NONSECURE, &err), 0));
	STAYS(assert_int_equal(dpmu_model_set_el(m, 0, 1, DPMU_NONSECURE, &err), 0));
	/* Still counting at EL1: the answers are the same until EL0. */
	STAYS(conf_wr(m, 0, PMEVTYPER(0), L1D_CACHE | PMEVTYPER_U));
	MOVES(assert_int_equal(dpmu_model_set_el(m, 0, 0, DPMU_NONSECURE, &err), 0));
	MOVES(assert_int_equal(dpmu_model_set_el(m, 0, 1, DPMU_NONSECURE, &err), 0));
	MOVES(conf_wr(m, 0, PMCNTENCLR, 1));
	MOVES(conf_wr(m, 0, PMCNTENSET, 1));
	MOVES(amu_write(m, 0, AMCNTENSET0, 0x4));
	MOVES(assert_int_equal(dpmu_model_set_wfi(m, 0, true, &err), 0));
	MOVES(assert_int_equal(dpmu_model_set_wfi(m, 0, false, &err), 0));
	STAYS(assert_int_equal(dpmu_model_set_wfi(m, 0, false, &err), 0));
	MOVES(assert_int_equal(dpmu_model_set_power(m, 0, false, &err), 0));
	MOVES(assert_int_equal(dpmu_model_set_power(m, 0, true, &err), 0));
	/* Another core's and the cluster's generations are their own. */
	uint64_t g1 = gen(m, 1), gc = dpmu_model_cluster_live_gen(m, 0);
	conf_wr(m, 1, PMEVTYPER(0), INST_RETIRED);
	conf_wr(m, 1, PMCNTENSET, 1);
	conf_wr(m, 1, PMCR, E);
	assert_true(gen(m, 1) != g1);
	assert_true(gen(m, 0) == g);
	assert_true(dpmu_model_cluster_live_gen(m, 0) == gc);
	conf_wr(m, 0, CLUSTERPMSELR, 0);
	conf_wr(m, 0, CLUSTERPMXEVTYPER, L3D_CACHE);
	conf_wr(m, 0, CLUSTERPMCNTENSET, 1);
	conf_wr(m, 0, CLUSTERPMCR, E);
	assert_true(dpmu_model_cluster_live_gen(m, 0) != gc);
#undef MOVES
#undef STAYS
	dpmu_model_destroy(m);
}

/* Counters 0/1 as a chained pair (1 counts CHAIN) about to overflow,
 * counter 2 INST_RETIRED, counter 3 an event the core does not implement,
 * the cycle counter, the AMU group-0 counters, overflow interrupts on. */
static void program_for_batch(struct dpmu_model *m)
{
	conf_wr(m, 0, PMEVTYPER(0), L1D_CACHE_REFILL);
	conf_wr(m, 0, PMEVTYPER(1), CHAIN);
	conf_wr(m, 0, PMEVTYPER(2), INST_RETIRED);
	conf_wr(m, 0, PMEVTYPER(3), 0x3FF);
	conf_wr(m, 0, PMEVCNTR(0), 0xffffffffu - 10);
	conf_wr(m, 0, PMEVCNTR(1), 0xffffffffu);
	conf_wr(m, 0, PMINTENSET, 0xfu | CC);
	conf_wr(m, 0, PMCNTENSET, 0xfu | CC);
	conf_wr(m, 0, PMCR, E);
	amu_write(m, 0, AMCNTENSET0, 0xf);
}

static void a_batch_of_events_counts_as_the_events_one_by_one(void **state)
{
	(void)state;
	const uint16_t ev[] = { L1D_CACHE_REFILL, INST_RETIRED, CPU_CYCLES, SW_INCR, CHAIN,
				0x3FF, BR_MIS_PRED, L1D_CACHE_REFILL, STALL_BACKEND_MEM,
				INST_RETIRED };
	const uint64_t n[] = { 7, 100, 250, 3, 9, 11, 0, (1ull << 33) + 5, 40, 1 };
	struct dpmu_model *one = conf_model(NULL), *batch = conf_model(NULL);
	program_for_batch(one);
	program_for_batch(batch);
	for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++)
		dpmu_model_core_event(one, 0, ev[i], n[i]);
	dpmu_model_core_events(batch, 0, ev, n, sizeof ev / sizeof ev[0]);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(conf_rd(batch, 0, PMEVCNTR(i)), conf_rd(one, 0, PMEVCNTR(i)));
	assert_int_equal(conf_rd(batch, 0, PMCCNTR), conf_rd(one, 0, PMCCNTR));
	assert_int_equal(conf_rd(batch, 0, PMOVSCLR), conf_rd(one, 0, PMOVSCLR));
	assert_true(conf_rd(one, 0, PMOVSCLR) & 0x3); /* the pair overflowed */
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(conf_rd(batch, 0, AMEVCNTR0(i)), conf_rd(one, 0, AMEVCNTR0(i)));
	assert_int_equal(dpmu_model_core_irq(batch, 0), dpmu_model_core_irq(one, 0));
	/* Nothing for a core that is not there, or not running. */
	dpmu_model_core_events(batch, 99, ev, n, 1);
	struct dpmu_err err;
	assert_int_equal(dpmu_model_set_wfi(batch, 0, true, &err), 0);
	uint64_t before = conf_rd(batch, 0, PMEVCNTR(2));
	dpmu_model_core_events(batch, 0, ev, n, sizeof ev / sizeof ev[0]);
	assert_int_equal(dpmu_model_set_wfi(batch, 0, false, &err), 0);
	assert_int_equal(conf_rd(batch, 0, PMEVCNTR(2)), before);
	dpmu_model_destroy(one);
	dpmu_model_destroy(batch);
}

/* Every interrupt line of the model, one bit each (cores, then clusters). */
static uint64_t lines(struct dpmu_model *m)
{
	uint64_t v = 0;
	unsigned n = dpmu_model_ncores(m), k = dpmu_model_nclusters(m);
	for (unsigned c = 0; c < n; c++)
		v |= (uint64_t)dpmu_model_core_irq(m, c) << c;
	for (unsigned i = 0; i < k; i++)
		v |= (uint64_t)dpmu_model_cluster_irq(m, i) << (n + i);
	return v;
}

/* dpmu_model_irq_gen: a caller that keeps its last answer while the
 * generation stands must never miss a change of a line. A pseudo-random
 * walk over the writes and deliveries that can move a line (and some that
 * cannot), each checked: an unmoved generation means unmoved lines, and
 * the generation never goes back. */
static void the_interrupt_generation_moves_when_a_line_can_change(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMEVTYPER(0), INST_RETIRED);
	conf_wr(m, 0, PMCNTENSET, 0x1u | CC);
	conf_wr(m, 1, PMEVTYPER(0), INST_RETIRED);
	conf_wr(m, 1, PMCNTENSET, 0x1u);
	conf_wr(m, 0, CLUSTERPMCNTENSET, CC);
	uint64_t x = 0x9e3779b97f4a7c15ull, moved = 0, seen = 0;
	for (unsigned step = 0; step < 4000; step++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t g0 = dpmu_model_irq_gen(m), l0 = lines(m);
		unsigned core = (unsigned)(x >> 8) & 1;
		uint32_t bits = (x >> 16 & 1 ? 1u : 0) | (x >> 17 & 1 ? CC : 0);
		switch ((x >> 1) % 12) {
		case 0: conf_wr(m, core, PMOVSSET, bits); break;
		case 1: conf_wr(m, core, PMOVSCLR, bits); break;
		case 2: conf_wr(m, core, PMINTENSET, bits); break;
		case 3: conf_wr(m, core, PMINTENCLR, bits); break;
		case 4: conf_wr(m, core, PMCR, x >> 20 & 1 ? E : 0); break;
		case 5: conf_wr(m, core, PMEVCNTR(0), 0xffffffffu - (x >> 24 & 3)); break;
		case 6: dpmu_model_core_event(m, core, INST_RETIRED, x >> 28 & 3); break;
		case 7: conf_wr(m, 0, CLUSTERPMOVSSET, bits & CC); break;
		case 8: conf_wr(m, 0, CLUSTERPMOVSCLR, bits & CC); break;
		case 9: conf_wr(m, 0, x >> 18 & 1 ? CLUSTERPMINTENSET : CLUSTERPMINTENCLR, CC); break;
		case 10: conf_wr(m, 0, CLUSTERPMCR, x >> 20 & 1 ? E : 0); break;
		default: conf_wr(m, core, PMSELR, x >> 24 & 3); break;
		}
		uint64_t g1 = dpmu_model_irq_gen(m), l1 = lines(m);
		assert_true(g1 >= g0);
		if (g1 == g0)
			assert_int_equal(l1, l0);
		moved += l1 != l0;
		seen |= l1;
	}
	/* The walk asserted and released lines of both cores and the cluster. */
	assert_true(moved > 100);
	unsigned n = dpmu_model_ncores(m);
	assert_int_equal(seen & (3u | 1ull << n), 3u | 1ull << n);
	dpmu_model_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(an_event_is_live_exactly_when_a_counter_would_count_it),
		cmocka_unit_test(the_live_generation_moves_when_an_answer_can_change),
		cmocka_unit_test(a_batch_of_events_counts_as_the_events_one_by_one),
		cmocka_unit_test(the_interrupt_generation_moves_when_a_line_can_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
