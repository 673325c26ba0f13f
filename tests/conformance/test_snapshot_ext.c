/*
 * Snapshots through the external frames: PMSSCR.SS captures every counter
 * into PMEVCNTSVR<n>/PMCCNTSVR, reads 1 until the capture completes (the
 * profile's snapshot_latency, in cycles of the frame's own clock), PMSSRR
 * selects which counters reset after the capture. Sources: seed 001 sections
 * 2.2 (PMSSCR), 2.3 (PMSSRR), 4.1 (periodic sampling); reference section 2
 * (snapshots); Arm ARM PMCFGR.SS (the IMPLEMENTATION DEFINED locations).
 */
#include "conformance.h"

#include "dynpmu/ext32.h"

#define PMCR_E (1u << 0)
#define PMEVCNTR_EL0(n) DPMU_SYSREG(3, 3, 14, 8 + ((n) >> 3), (n) & 7)
#define LATENCY 10

static void set_latency(struct dpmu_profile *p, unsigned latency)
{
	p->snapshot_latency = latency;
}

/* The default profile with snapshot_latency forced to `latency` cycles. */
static struct dpmu_model *model_with_latency(uint32_t latency)
{
	struct dpmu_model *m = conf_model_edited(set_latency, latency);
	conf_unlock_all(m);
	return m;
}

/* Latency 0: a capture completes within the PMSSCR write. */
static int setup(void **state)
{
	*state = model_with_latency(0);
	return 0;
}

static int setup_slow(void **state)
{
	*state = model_with_latency(LATENCY);
	return 0;
}

static int teardown(void **state)
{
	dpmu_model_destroy(*state);
	return 0;
}

static unsigned counters(struct dpmu_model *m, struct dpmu_frame f)
{
	return conf_xrd(m, f, DPMU_EXT_PMCFGR) & 0xff;
}

/* Distinct values in every counter of a frame: 1000 + 111 n, cycle 77777. */
static void load_counters(struct dpmu_model *m, struct dpmu_frame f)
{
	for (unsigned i = 0; i < counters(m, f); i++)
		conf_xwr(m, f, DPMU_EXT_PMEVCNTR(i), 1000 + 111 * i);
	conf_xwr(m, f, DPMU_EXT_PMCCNTR, 77777);
	conf_xwr(m, f, DPMU_EXT_PMCCNTR + 4, 3);
}

static void expect_captured(struct dpmu_model *m, struct dpmu_frame f)
{
	for (unsigned i = 0; i < counters(m, f); i++) {
		assert_int_equal(conf_xrd(m, f, DPMU_EXT_PMEVCNTSVR(i)), 1000 + 111 * i);
		assert_int_equal(conf_xrd(m, f, DPMU_EXT_PMEVCNTSVR(i) + 4), 0);
	}
	assert_int_equal(conf_xrd(m, f, DPMU_EXT_PMCCNTSVR), 77777);
	assert_int_equal(conf_xrd(m, f, DPMU_EXT_PMCCNTSVR + 4), 3);
}

/* Seed 001 section 2.2: writing PMSSCR.SS = 1 captures the current value of
 * every counter (every event counter and the cycle counter). */
static void PMSSCR_SS_captures_every_counter(void **state)
{
	struct dpmu_model *m = *state;
	load_counters(m, CONF_CORE(0));
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS);
	expect_captured(m, CONF_CORE(0));
	/* PMSSRR = 0: the counters keep their values. */
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0)), 1000);
	/* Other frames are not captured. */
	assert_int_equal(conf_xrd(m, CONF_CORE(1), DPMU_EXT_PMCCNTSVR), 0);
}

/* Seed 001 section 2.2: the same on the cluster PMU frame. */
static void Cluster_PMSSCR_SS_captures_every_counter(void **state)
{
	struct dpmu_model *m = *state;
	load_counters(m, CONF_CLUSTER(0));
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS);
	expect_captured(m, CONF_CLUSTER(0));
}

/* The snapshot is of counting counters: values delivered after the capture
 * are not in it (the live counter moves on). */
static void Snapshot_holds_value_at_capture_while_counting_goes_on(void **state)
{
	struct dpmu_model *m = *state;
	uint16_t ev = conf_core_event(m);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVTYPER(0), ev);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET, 0x1);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCR, PMCR_E);
	dpmu_model_core_event(m, 0, ev, 40);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS);
	dpmu_model_core_event(m, 0, ev, 2);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTSVR(0)), 40);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR_EL0(0)), 42);
}

/* Profile latency 0 (model.h): the capture completes within the write, so SS
 * reads 0 straight after. */
static void PMSSCR_SS_with_zero_latency_completes_within_the_write(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(dpmu_model_profile(m)->snapshot_latency, 0);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMSSCR), 0);
}

/* Seed 001 section 2.2: SS reads 1 while the capture is in progress and is
 * cleared by hardware on completion; the SVR registers show the capture
 * once complete. The latency is in core cycles for a core frame. */
static void PMSSCR_SS_reads_1_until_capture_completes(void **state)
{
	struct dpmu_model *m = *state;
	load_counters(m, CONF_CORE(0));
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMSSCR), 1);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTSVR(0)), 0);
	dpmu_model_core_cycles(m, 0, LATENCY - 1);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMSSCR), 1);
	/* Other cores' and the DSU's clocks do not advance it. */
	dpmu_model_core_cycles(m, 1, 100);
	dpmu_model_cluster_cycles(m, 0, 100);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMSSCR), 1);
	dpmu_model_core_cycles(m, 0, 1);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMSSCR), 0);
	expect_captured(m, CONF_CORE(0));
}

/* Seed 001 section 2.2 on the cluster frame: the latency runs on the DSU
 * clock (cluster cycles), not the cores'. */
static void Cluster_PMSSCR_SS_latency_counts_cluster_cycles(void **state)
{
	struct dpmu_model *m = *state;
	load_counters(m, CONF_CLUSTER(0));
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMSSCR), 1);
	dpmu_model_core_cycles(m, 0, 1000);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMSSCR), 1);
	dpmu_model_cluster_cycles(m, 0, LATENCY);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMSSCR), 0);
	expect_captured(m, CONF_CLUSTER(0));
}

/* docs/model.md: a request while a capture is in progress is ignored; the
 * capture in progress completes with the values it latched. */
static void PMSSCR_SS_write_while_busy_is_ignored(void **state)
{
	struct dpmu_model *m = *state;
	load_counters(m, CONF_CORE(0));
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS);
	dpmu_model_core_cycles(m, 0, LATENCY / 2);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0), 5);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS);
	dpmu_model_core_cycles(m, 0, LATENCY - LATENCY / 2);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMSSCR), 0);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTSVR(0)), 1000);
}

/* Seed 001 section 2.2: PMSSCR bits [31:1] are RES0; writing 0 to SS does
 * nothing. */
static void PMSSCR_RES0_bits_and_SS_write_0_do_nothing(void **state)
{
	struct dpmu_model *m = *state;
	load_counters(m, CONF_CORE(0));
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSSCR, 0xfffffffeu);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMSSCR), 0);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTSVR(0)), 0);
}

/* Seed 001 section 2.3: RP<n> = 1 resets counter n after the capture, RP<n>
 * = 0 keeps it counting from its value; the other counters keep counting. */
static void PMSSRR_resets_only_selected_counters(void **state)
{
	struct dpmu_model *m = *state;
	uint16_t ev = conf_core_event(m);
	unsigned n = counters(m, CONF_CORE(0));
	for (unsigned i = 0; i < n; i++)
		conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVTYPER(i), ev);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET, (1u << n) - 1);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCR, PMCR_E);
	dpmu_model_core_event(m, 0, ev, 100);
	/* The seed's example (section 4.1): reset counters 0-2. */
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSSRR, 0x7);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS);
	dpmu_model_core_event(m, 0, ev, 3);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTSVR(i)), 100);
		assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(i)),
				 i < 3 ? 3 : 103);
	}
}

/* Seed 001 section 4.1: with RP = 1 each snapshot is one interval's delta. */
static void PMSSRR_RP1_snapshots_are_interval_deltas(void **state)
{
	struct dpmu_model *m = *state;
	uint16_t ev = conf_core_event(m);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVTYPER(0), ev);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET, 0x1);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCR, PMCR_E);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSSRR, 0x1);
	static const uint64_t interval[] = { 17, 5, 250 };
	for (unsigned k = 0; k < 3; k++) {
		dpmu_model_core_event(m, 0, ev, interval[k]);
		conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS);
		assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTSVR(0)), interval[k]);
	}
}

/* Seed 001 section 2.3: bits of unimplemented counters are RAZ/WI (RP0-RP5
 * for six counters, RES above). */
static void PMSSRR_unimplemented_bits_RAZ_WI(void **state)
{
	struct dpmu_model *m = *state;
	for (unsigned f = 0; f < 2; f++) {
		struct dpmu_frame fr = f ? CONF_CLUSTER(0) : CONF_CORE(0);
		unsigned n = counters(m, fr);
		conf_xwr(m, fr, DPMU_EXT_PMSSRR, 0xffffffffu);
		assert_int_equal(conf_xrd(m, fr, DPMU_EXT_PMSSRR), (1u << n) - 1);
		conf_xwr(m, fr, DPMU_EXT_PMSSRR, 0);
		assert_int_equal(conf_xrd(m, fr, DPMU_EXT_PMSSRR), 0);
	}
}

/* Seed 001 section 2.3 on the cluster frame: selected cluster counters
 * reset, the others keep counting. */
static void Cluster_PMSSRR_resets_only_selected_counters(void **state)
{
	struct dpmu_model *m = *state;
	uint16_t ev = conf_cluster_event(m);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMEVTYPER(0), ev);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMEVTYPER(1), ev);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMCNTENSET, 0x3);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMCR, PMCR_E);
	dpmu_model_cluster_event(m, 0, ev, 9);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMSSRR, 0x2);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS);
	dpmu_model_cluster_event(m, 0, ev, 1);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMEVCNTSVR(0)), 9);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMEVCNTSVR(1)), 9);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMEVCNTR(0)), 10);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMEVCNTR(1)), 1);
}

/* The snapshot registers are read-only; counters beyond N read 0. */
static void Snapshot_registers_are_read_only(void **state)
{
	struct dpmu_model *m = *state;
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVCNTSVR(0), 99);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCCNTSVR, 99);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTSVR(0)), 0);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCCNTSVR), 0);
	unsigned n = counters(m, CONF_CORE(0));
	load_counters(m, CONF_CORE(0));
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTSVR(n)), 0);
}

/* The software lock and the access rule cover the snapshot controls too
 * (seed 001 section 2.2, access conditions 1-4). */
static void Snapshot_controls_obey_the_access_rule(void **state)
{
	struct dpmu_model *m = *state;
	load_counters(m, CONF_CORE(0));
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMLAR, 0);       /* lock */
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCCNTSVR), 0);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMLAR, DPMU_EXT_PMLAR_KEY);
	assert_int_equal(dpmu_model_set_oslock(m, 0, true, NULL), 0);
	assert_int_equal(dpmu_model_ext_write(m, CONF_CORE(0), DPMU_EXT_PMSSCR, false,
					      DPMU_EXT_PMSSCR_SS),
			 DPMU_EIO);
	assert_int_equal(dpmu_model_set_oslock(m, 0, false, NULL), 0);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCCNTSVR), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define S(f) cmocka_unit_test_setup_teardown(f, setup_slow, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(PMSSCR_SS_captures_every_counter),
		T(Cluster_PMSSCR_SS_captures_every_counter),
		T(Snapshot_holds_value_at_capture_while_counting_goes_on),
		T(PMSSCR_SS_with_zero_latency_completes_within_the_write),
		S(PMSSCR_SS_reads_1_until_capture_completes),
		S(Cluster_PMSSCR_SS_latency_counts_cluster_cycles),
		S(PMSSCR_SS_write_while_busy_is_ignored),
		T(PMSSCR_RES0_bits_and_SS_write_0_do_nothing),
		T(PMSSRR_resets_only_selected_counters),
		T(PMSSRR_RP1_snapshots_are_interval_deltas),
		T(PMSSRR_unimplemented_bits_RAZ_WI),
		T(Cluster_PMSSRR_resets_only_selected_counters),
		T(Snapshot_registers_are_read_only),
		T(Snapshot_controls_obey_the_access_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
