/*
 * The engine's events and their delivery: instruction-class events, the
 * stall invariant, both DSU numberings, batching (reads after a flush are
 * exact; overflow-interrupt skid bounded by the batch; what is pending
 * counts on what is programmed at delivery, docs/events.md), the
 * observer's choice of events, simulated time, idle time and the DSU clock,
 * determinism, and input validation.
 * Counts are read back through the model's system registers where the
 * rule is about what software sees.
 */
#include "unit/uarch_fixture.h"

enum { L1D_CACHE = 0x04, INST_RETIRED = 0x08, EXC_TAKEN = 0x09, EXC_RETURN = 0x0A,
       PC_WRITE_RETIRED = 0x0C, CPU_CYCLES = 0x11, MEM_ACCESS = 0x13, INST_SPEC = 0x1B,
       BUS_CYCLES = 0x1D, STALL_FRONTEND = 0x23, STALL_BACKEND = 0x24,
       MEM_ACCESS_RD = 0x66, MEM_ACCESS_WR = 0x67, UNALIGNED_LDST_SPEC = 0x6A,
       LDREX_SPEC = 0x6C, STREX_PASS_SPEC = 0x6D, STREX_FAIL_SPEC = 0x6E, STREX_SPEC = 0x6F,
       LD_SPEC = 0x70, ST_SPEC = 0x71, LDST_SPEC = 0x72, DP_SPEC = 0x73, ASE_SPEC = 0x74,
       VFP_SPEC = 0x75, CRYPTO_SPEC = 0x77, ISB_SPEC = 0x7C, DSB_SPEC = 0x7D,
       DMB_SPEC = 0x7E };

#define PMINTENSET_EL1 DPMU_SYSREG(3, 0, 9, 14, 1)
#define CLUSTERPMCR DPMU_SYSREG(3, 0, 15, 5, 0)
#define CLUSTERPMCNTENSET DPMU_SYSREG(3, 0, 15, 5, 1)
#define CLUSTERPMSELR DPMU_SYSREG(3, 0, 15, 5, 5)
#define CLUSTERPMCCNTR DPMU_SYSREG(3, 0, 15, 6, 0)
#define CLUSTERPMXEVTYPER DPMU_SYSREG(3, 0, 15, 6, 1)
#define CLUSTERPMXEVCNTR DPMU_SYSREG(3, 0, 15, 6, 2)



static struct dpmu_insn other(uint64_t pc, uint32_t flags)
{
	return (struct dpmu_insn){ .pc = pc, .flags = flags, .kind = DPMU_INSN_OTHER, .isize = 4 };
}

/* A mixed trace: loads and stores over 4 MiB, random branches, code over
 * 256 KiB. Deterministic (xorshift from a fixed seed). */
static void mixed(struct fx *f, unsigned core, unsigned n, uint64_t seed)
{
	uint64_t x = seed | 1;
	for (unsigned i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t pc = 0x400000 + ((x >> 40) % 65536) * 4;
		struct dpmu_insn in;
		switch (x % 5) {
		case 0:
			in = ld(pc, 0x8000000 + (x >> 20) % (4u << 20));
			break;
		case 1:
			in = st(pc, 0x8000000 + (x >> 24) % (4u << 20));
			break;
		case 2:
			in = (struct dpmu_insn){ .pc = pc, .addr = pc + 64, .kind = DPMU_INSN_BRANCH,
						 .br_kind = DPMU_BR_COND, .taken = (x >> 33) & 1,
						 .isize = 4 };
			break;
		default:
			in = other(pc, 0);
			break;
		}
		dpmu_uarch_retire(f->u, core, &in, 1);
	}
}

/* ---- tests ------------------------------------------------------------------ */

/* Each instruction class feeds its *_SPEC event exactly once (Arm ARM D17,
 * common microarchitectural events); a flagless "other" instruction counts
 * as integer data processing (docs/events.md, DP_SPEC). */
static void instruction_classes_feed_their_spec_events(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct dpmu_insn t[] = {
		other(0x1000, 0),
		other(0x1004, DPMU_IC_DP),
		other(0x1008, DPMU_IC_ASE),
		other(0x100c, DPMU_IC_VFP),
		other(0x1010, DPMU_IC_CRYPTO | DPMU_IC_ASE),
		other(0x1014, DPMU_IC_ISB),
		other(0x1018, DPMU_IC_DSB),
		other(0x101c, DPMU_IC_DMB),
		other(0x1020, DPMU_IC_SVC),
		other(0x1024, DPMU_IC_ERET),
		ld(0x1028, 0x20000),
		st(0x102c, 0x20008),
		ld(0x1030, 0x20013), /* 8 bytes at ...13: unaligned */
		ld(0x1034, 0x20100),
		st(0x1038, 0x20100),
		st(0x103c, 0x20100),
	};
	t[13].flags = DPMU_IC_LDREX;
	t[14].flags = DPMU_IC_STREX;
	t[15].flags = DPMU_IC_STREX | DPMU_IC_STREX_FAIL;
	dpmu_uarch_retire(f->u, 0, t, sizeof t / sizeof t[0]);
	dpmu_uarch_flush(f->u);
	uint64_t *c = f->core[0];
	assert_int_equal(c[INST_RETIRED], 16);
	assert_int_equal(c[INST_SPEC], 16);
	assert_int_equal(c[DP_SPEC], 2);
	assert_int_equal(c[ASE_SPEC], 2);
	assert_int_equal(c[VFP_SPEC], 1);
	assert_int_equal(c[CRYPTO_SPEC], 1);
	assert_int_equal(c[ISB_SPEC], 1);
	assert_int_equal(c[DSB_SPEC], 1);
	assert_int_equal(c[DMB_SPEC], 1);
	assert_int_equal(c[EXC_TAKEN], 1);
	assert_int_equal(c[EXC_RETURN], 1);
	assert_int_equal(c[PC_WRITE_RETIRED], 1); /* the ERET */
	assert_int_equal(c[LD_SPEC], 3);
	assert_int_equal(c[ST_SPEC], 3);
	assert_int_equal(c[LDST_SPEC], 6);
	assert_int_equal(c[MEM_ACCESS], 6);
	assert_int_equal(c[MEM_ACCESS_RD], 3);
	assert_int_equal(c[MEM_ACCESS_WR], 3);
	assert_int_equal(c[UNALIGNED_LDST_SPEC], 1);
	assert_int_equal(c[LDREX_SPEC], 1);
	assert_int_equal(c[STREX_SPEC], 2);
	assert_int_equal(c[STREX_PASS_SPEC], 1);
	assert_int_equal(c[STREX_FAIL_SPEC], 1);
	/* The unaligned load crosses no line: one L1D access per access. */
	assert_int_equal(c[L1D_CACHE], 6);
	fx_free(f);
}

/* An access that crosses a line boundary looks up both lines. */
static void line_crossing_access_looks_up_both_lines(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct dpmu_insn in = ld(0x1000, 0x3003c); /* bytes 0x3c..0x43 */
	dpmu_uarch_retire(f->u, 0, &in, 1);
	dpmu_uarch_flush(f->u);
	assert_int_equal(f->core[0][L1D_CACHE], 2);
	assert_int_equal(f->core[0][MEM_ACCESS], 1);
	fx_free(f);
}

/* Stall cycles are cycles in which nothing issued for that reason, so
 * STALL_FRONTEND + STALL_BACKEND <= CPU_CYCLES on every core (Arm ARM D17:
 * STALL_FRONTEND, STALL_BACKEND), read back through PMEVCNTR. */
static void stall_cycles_never_exceed_cpu_cycles(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	const uint16_t ev[] = { CPU_CYCLES, STALL_FRONTEND, STALL_BACKEND, INST_RETIRED };
	for (unsigned core = 0; core < 8; core++)
		program(f, core, ev, 4);
	for (unsigned round = 0; round < 4; round++)
		for (unsigned core = 0; core < 8; core++)
			mixed(f, core, 5000, 1234 + core * 77 + round);
	dpmu_uarch_flush(f->u);
	for (unsigned core = 0; core < 8; core++) {
		uint64_t cyc = counter(f, core, 0), fe = counter(f, core, 1),
			 be = counter(f, core, 2);
		print_message("cpu%u: %llu cycles, %llu frontend, %llu backend stall\n", core,
			      (unsigned long long)cyc, (unsigned long long)fe,
			      (unsigned long long)be);
		assert_true(fe > 0 && be > 0);
		assert_true(fe + be <= cyc);
		assert_int_equal(counter(f, core, 3), 20000);
		assert_int_equal(cyc, dpmu_uarch_core_cycles(f->u, core) & 0xffffffffu);
	}
	fx_free(f);
}

/* The AMU's fourth architected group-0 counter, STALL_BACKEND_MEM (0x4005,
 * AMEVCNTR03; reference section 4), counts the memory part of the back-end
 * stall: never more than STALL_BACKEND, and something on a miss-heavy run.
 * The AMU enables are writable only at EL3 (Arm ARM D24.6): set them there. */
#define AMCNTENSET0_EL0 DPMU_SYSREG(3, 3, 13, 2, 5)
#define AMEVCNTR03_EL0 DPMU_SYSREG(3, 3, 13, 4, 3)

static void amu_stall_backend_mem_counts_memory_stalls(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct dpmu_err err;
	const uint16_t ev[] = { STALL_BACKEND };
	program(f, 0, ev, 1);
	assert_int_equal(dpmu_model_set_el(f->m, 0, 3, DPMU_SECURE, &err), 0);
	wr(f, 0, AMCNTENSET0_EL0, 0xf);
	assert_int_equal(dpmu_model_set_el(f->m, 0, 1, DPMU_NONSECURE, &err), 0);
	sweep(f, 0, 0x10000000, 8u << 20, false);
	uint64_t mem = rd(f, 0, AMEVCNTR03_EL0), be = counter(f, 0, 0);
	print_message("STALL_BACKEND %llu, STALL_BACKEND_MEM %llu\n", (unsigned long long)be,
		      (unsigned long long)mem);
	assert_true(mem > 0);
	assert_true(mem <= be);
	fx_free(f);
}

/* Both DSU numberings receive the cluster events: the same run counts the
 * same in the classic codes (L3D_CACHE 0x2B, L3D_CACHE_REFILL 0x2A,
 * BUS_ACCESS 0x19) and in the DSU-120 ones (L3_ACCESS 0x4000, L3_REFILL
 * 0x4003, BUS_ACCESS 0x4030), read through CLUSTERPMSELR/XEVCNTR. */
static void both_dsu_numberings_receive_cluster_events(void **state)
{
	(void)state;
	const char *profiles[] = { DPMU_PROFILE_DEFAULT, "a75x4-a55x4-dsu120" };
	const uint16_t codes[2][6] = { { 0x2B, 0x2A, 0x19, 0x1D, 0xC0, 0xA0 },
				       { 0x4000, 0x4003, 0x4030, 0x4033, 0x4022, 0x4006 } };
	uint64_t got[2][6], cc[2];
	for (unsigned pi = 0; pi < 2; pi++) {
		struct fx *f = fx_load(profiles[pi]);
		fx_start(f);
		for (unsigned i = 0; i < 6; i++) {
			wr(f, 0, CLUSTERPMSELR, i);
			wr(f, 0, CLUSTERPMXEVTYPER, codes[pi][i]);
		}
		wr(f, 0, CLUSTERPMCNTENSET, 0x8000003fu);
		wr(f, 0, CLUSTERPMCR, 1 | 2 | 4);
		/* 4 MiB sweep on cpu0, then cpu1 reads the last lines cpu0
		 * wrote, still dirty in cpu0's L2: snoops. */
		sweep(f, 0, 0x10000000, 4u << 20, true);
		sweep(f, 1, 0x10000000 + (4u << 20) - 4096, 4096, false);
		for (unsigned i = 0; i < 6; i++) {
			wr(f, 0, CLUSTERPMSELR, i);
			got[pi][i] = rd(f, 0, CLUSTERPMXEVCNTR);
		}
		cc[pi] = rd(f, 0, CLUSTERPMCCNTR);
		/* The DSU clock is the furthest core's time at the DSU frequency. */
		uint64_t want = 0;
		for (unsigned k = 0; k < 2; k++) {
			uint64_t d = (uint64_t)((double)dpmu_uarch_core_cycles(f->u, k) *
						(double)f->p->clusters[0].freq_hz /
						(double)f->p->core_types[0].freq_hz);
			want = d > want ? d : want;
		}
		assert_true(cc[pi] + 1 >= want && cc[pi] <= want + 1);
		fx_free(f);
	}
	for (unsigned i = 0; i < 6; i++) {
		print_message("cluster event %u: classic 0x%x = %llu, DSU-120 0x%x = %llu\n", i,
			      codes[0][i], (unsigned long long)got[0][i], codes[1][i],
			      (unsigned long long)got[1][i]);
		assert_true(got[0][i] > 0);
		assert_int_equal(got[0][i], got[1][i]);
	}
	assert_int_equal(cc[0], cc[1]);
	/* BUS_CYCLES follows the DSU clock. */
	assert_int_equal(got[0][3], cc[0]);
}

/* Batching: counts are held back at most `batch` instructions, so an
 * overflow interrupt is seen at most that late; after a flush every count
 * is exact (docs/events.md, "Delivery and skid"). */
static void overflow_interrupt_skid_is_bounded_by_batch(void **state)
{
	(void)state;
	const uint32_t batches[] = { 1, 16, 256 };
	for (unsigned b = 0; b < 3; b++) {
		struct fx *f = fx_new();
		assert_int_equal(dpmu_uarch_set_batch(f->u, batches[b], NULL), 0);
		const uint16_t ev[] = { INST_RETIRED };
		program(f, 0, ev, 1);
		wr(f, 0, PMEVCNTR(0), 0xffffffffu - 99); /* overflows at the 100th */
		wr(f, 0, PMINTENSET_EL1, 1);
		unsigned seen = 0;
		for (unsigned i = 1; i <= 1000 && !seen; i++) {
			struct dpmu_insn in = other(0x1000 + (i % 16) * 4, 0);
			dpmu_uarch_retire(f->u, 0, &in, 1);
			if (dpmu_model_core_irq(f->m, 0))
				seen = i;
		}
		print_message("batch %u: overflow at instruction 100 seen at %u\n", batches[b], seen);
		assert_true(seen >= 100);
		assert_true(seen - 100 < batches[b]);
		dpmu_uarch_flush(f->u);
		assert_int_equal(counter(f, 0, 0), seen - 100);
		fx_free(f);
	}
}

/* Reads after a flush are exact: the model's counters equal what the
 * engine delivered, on every core. */
static void reads_after_flush_are_exact(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	const uint16_t ev[] = { INST_RETIRED, L1D_CACHE, 0x03, 0x17, BUS_CYCLES, 0x2B };
	program(f, 4, ev, 6);
	mixed(f, 4, 3333, 99);
	uint64_t before = counter(f, 4, 0);
	dpmu_uarch_flush(f->u);
	assert_true(before <= 3333);
	assert_int_equal(counter(f, 4, 0), 3333);
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(counter(f, 4, i), f->core[4][ev[i]] & 0xffffffffu);
	fx_free(f);
}

/* The same input gives the same counts, also with random replacement. */
static void same_input_gives_same_counts(void **state)
{
	(void)state;
	static struct fx *runs[2];
	for (int r = 0; r < 2; r++) {
		struct fx *f = fx_load(DPMU_PROFILE_DEFAULT);
		for (unsigned t = 0; t < f->p->n_core_types; t++)
			f->p->core_types[t].l2.replacement = DPMU_REPL_RANDOM;
		f->p->clusters[0].l3.replacement = DPMU_REPL_RANDOM;
		fx_start(f);
		for (unsigned round = 0; round < 3; round++)
			for (unsigned core = 0; core < 8; core++)
				mixed(f, core, 4000, 5 + core + round * 8);
		dpmu_uarch_flush(f->u);
		runs[r] = f;
	}
	assert_memory_equal(runs[0]->core, runs[1]->core, sizeof runs[0]->core);
	assert_memory_equal(runs[0]->cl, runs[1]->cl, sizeof runs[0]->cl);
	assert_int_equal(dpmu_uarch_time_ns(runs[0]->u), dpmu_uarch_time_ns(runs[1]->u));
	fx_free(runs[0]);
	fx_free(runs[1]);
}

/* Simulated time: CPU_CYCLES is the core clock; the system time is the
 * furthest core's; BUS_CYCLES runs at the DSU clock. */
static void time_and_bus_cycles_follow_the_clocks(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	mixed(f, 0, 10000, 3);
	mixed(f, 5, 2000, 4);
	dpmu_uarch_flush(f->u);
	uint64_t c0 = dpmu_uarch_core_cycles(f->u, 0), c5 = dpmu_uarch_core_cycles(f->u, 5);
	assert_int_equal(f->core[0][CPU_CYCLES], c0);
	assert_int_equal(f->core[5][CPU_CYCLES], c5);
	double f0 = (double)f->p->core_types[0].freq_hz, f5 = (double)f->p->core_types[1].freq_hz;
	double fd = (double)f->p->clusters[0].freq_hz;
	uint64_t ns = dpmu_uarch_time_ns(f->u);
	double want = c0 / f0 * 1e9 > c5 / f5 * 1e9 ? c0 / f0 * 1e9 : c5 / f5 * 1e9;
	assert_true(ns + 1 >= (uint64_t)want && ns <= (uint64_t)want + 1);
	assert_true(f->core[0][BUS_CYCLES] + 1 >= (uint64_t)(c0 * fd / f0));
	assert_true(f->core[0][BUS_CYCLES] <= (uint64_t)(c0 * fd / f0) + 1);
	/* The cluster clock is the furthest core's time. */
	uint64_t dsu = f->cl[0][cl_slot(CPU_CYCLES)];
	double wd = c0 * fd / f0 > c5 * fd / f5 ? c0 * fd / f0 : c5 * fd / f5;
	assert_true(dsu + 1 >= (uint64_t)wd && dsu <= (uint64_t)wd + 1);
	fx_free(f);
}

/* Idle time (docs/events.md "Idle time"): a core that idles 1 ms moves the
 * system's time and the DSU clock on by 1 ms, and its own CPU_CYCLES and
 * BUS_CYCLES by nothing. */
static void idle_time_moves_the_clocks_but_not_the_cores_cycles(void **state)
{
	(void)state;
	struct fx *a = fx_new(), *b = fx_new();
	struct fx *both[2] = { a, b };
	for (unsigned k = 0; k < 2; k++) {
		mixed(both[k], 0, 10000, 3);
		if (k == 1)
			dpmu_uarch_core_idle(b->u, 0, 1000000);
		/* after the idle time, no memory traffic, whose DRAM timing the
		 * later clock may change */
		for (unsigned i = 0; i < 1000; i++) {
			struct dpmu_insn in = other(0x400000 + 4 * (i % 64), 0);
			dpmu_uarch_retire(both[k]->u, 0, &in, 1);
		}
		dpmu_uarch_flush(both[k]->u);
	}
	assert_int_equal(dpmu_uarch_core_cycles(a->u, 0), dpmu_uarch_core_cycles(b->u, 0));
	assert_int_equal(a->core[0][CPU_CYCLES], b->core[0][CPU_CYCLES]);
	assert_int_equal(a->core[0][BUS_CYCLES], b->core[0][BUS_CYCLES]);
	assert_int_equal(dpmu_uarch_time_ns(b->u), dpmu_uarch_time_ns(a->u) + 1000000);
	uint64_t dsu_a = a->cl[0][cl_slot(CPU_CYCLES)], dsu_b = b->cl[0][cl_slot(CPU_CYCLES)];
	uint64_t ms = a->p->clusters[0].freq_hz / 1000; /* DSU cycles in 1 ms */
	assert_true(dsu_b >= dsu_a + ms - 1 && dsu_b <= dsu_a + ms + 1);
	fx_free(a);
	fx_free(b);
}

/* Implementation-defined events come from the core type's own catalog:
 * the Cortex-A55 splits predictions and stalls by cause (BR_COND_PRED 0xC9,
 * BR_COND_MIS_PRED 0xCC, STALL_FRONTEND_CACHE/TLB 0xE1/0xE2,
 * STALL_BACKEND_LD/ST 0xE7/0xE8), and the splits add up to the architected
 * totals; the Cortex-A75 numbers 0xC0-0xEF differently and gets none. */
static void a55_split_events_add_up_to_the_totals(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	for (unsigned core = 0; core < 8; core += 4)
		mixed(f, core, 20000, 42);
	dpmu_uarch_flush(f->u);
	uint64_t *a55 = f->core[4], *a75 = f->core[0];
	uint64_t cond = 0;
	/* mixed(): one in five instructions is a conditional branch. */
	cond = a55[0x21];
	assert_true(cond > 0);
	assert_int_equal(a55[0xC9], cond);
	assert_int_equal(a55[0xCC], a55[0x10]);
	uint64_t pen = f->p->core_types[1].pipeline.mispredict_penalty;
	assert_int_equal(a55[0xE1] + a55[0xE2] + pen * a55[0x10], a55[STALL_FRONTEND]);
	assert_int_equal(a55[0xE7] + a55[0xE8], a55[STALL_BACKEND]);
	assert_int_equal(a55[0xE9] + a55[0xEA], a55[0xE7]);
	for (unsigned code = 0xC0; code <= 0xEF; code++)
		assert_int_equal(a75[code], 0);
	fx_free(f);
}

/* What is pending at delivery counts on what is programmed then
 * (docs/events.md, "Delivery and skid"): counters set up after the events
 * happened, or started by PMCR.E / CLUSTERPMCR.E then, count them when they
 * are delivered, exactly as counters set up before; counters stopped before
 * the delivery count none of them. Core PMU (an event the engine counts,
 * derived ones, a Cortex-A55 implementation-defined one, BUS_CYCLES, the
 * cycle counter), an AMU counter and a cluster PMU counter. */
#define PMCNTENCLR_EL0 DPMU_SYSREG(3, 3, 9, 12, 2)
#define PMCCNTR_EL0 DPMU_SYSREG(3, 3, 9, 13, 0)
#define AMCNTENCLR0_EL0 DPMU_SYSREG(3, 3, 13, 2, 4)
#define AMEVCNTR02_EL0 DPMU_SYSREG(3, 3, 13, 4, 2)
#define CLUSTERPMCNTENCLR DPMU_SYSREG(3, 0, 15, 5, 2)

enum pending_when { SET_BEFORE, SET_AFTER, STARTED_AFTER, STOPPED_AFTER };

static const uint16_t pending_ev[6] = { INST_RETIRED, L1D_CACHE, MEM_ACCESS, 0xC9 /* BR_COND_PRED */,
					STALL_BACKEND, BUS_CYCLES };

static void amu_enable(struct fx *f, unsigned core, uint32_t enc)
{
	struct dpmu_err err;
	assert_int_equal(dpmu_model_set_el(f->m, core, 3, DPMU_SECURE, &err), 0);
	wr(f, core, enc, 1u << 2); /* group-0 counter 2: INST_RETIRED */
	assert_int_equal(dpmu_model_set_el(f->m, core, 1, DPMU_NONSECURE, &err), 0);
}

/* Everything but the global enables, then those (when `start`). */
static void pending_program(struct fx *f, bool start)
{
	for (unsigned i = 0; i < 6; i++)
		wr(f, 4, PMEVTYPER(i), pending_ev[i]);
	wr(f, 4, PMCNTENSET_EL0, 0x3fu | (1u << 31));
	wr(f, 0, CLUSTERPMSELR, 0);
	wr(f, 0, CLUSTERPMXEVTYPER, 0x2B); /* L3D_CACHE */
	wr(f, 0, CLUSTERPMCNTENSET, 1);
	if (start) {
		wr(f, 4, PMCR_EL0, 1);
		wr(f, 0, CLUSTERPMCR, 1);
		amu_enable(f, 4, AMCNTENSET0_EL0);
	}
}

/* The 6 event counters, the cycle counter, AMEVCNTR02, cluster counter 0. */
static void pending_read(struct fx *f, uint64_t v[9])
{
	for (unsigned i = 0; i < 6; i++)
		v[i] = counter(f, 4, i);
	v[6] = rd(f, 4, PMCCNTR_EL0);
	v[7] = rd(f, 4, AMEVCNTR02_EL0);
	wr(f, 0, CLUSTERPMSELR, 0);
	v[8] = rd(f, 0, CLUSTERPMXEVCNTR);
}

/* What the counters gained from 200 instructions left pending while the
 * programming changed. A first delivered run makes the engine settle on
 * what counts before the change. */
static void pending_run(enum pending_when when, uint64_t got[9])
{
	struct fx *f = fx_new();
	if (when == STARTED_AFTER)
		pending_program(f, false);
	if (when == STOPPED_AFTER)
		pending_program(f, true);
	mixed(f, 4, 1000, 3);
	dpmu_uarch_flush(f->u);
	if (when == SET_BEFORE)
		pending_program(f, true);
	uint64_t base[9];
	pending_read(f, base);
	/* Fewer instructions than a batch: all of it is still pending. */
	uint64_t seen = f->core[4][INST_RETIRED];
	mixed(f, 4, 200, 17);
	assert_int_equal(f->core[4][INST_RETIRED], seen);
	if (when == SET_AFTER)
		pending_program(f, true);
	if (when == STARTED_AFTER) {
		wr(f, 4, PMCR_EL0, 1);
		wr(f, 0, CLUSTERPMCR, 1);
		amu_enable(f, 4, AMCNTENSET0_EL0);
	}
	if (when == STOPPED_AFTER) {
		wr(f, 4, PMCNTENCLR_EL0, 0x3fu | (1u << 31));
		wr(f, 0, CLUSTERPMCNTENCLR, 1);
		amu_enable(f, 4, AMCNTENCLR0_EL0);
	}
	dpmu_uarch_flush(f->u);
	assert_int_equal(f->core[4][INST_RETIRED], seen + 200);
	pending_read(f, got);
	for (unsigned i = 0; i < 9; i++)
		got[i] -= base[i];
	fx_free(f);
}

static void counters_programmed_while_events_are_pending_count_them(void **state)
{
	(void)state;
	uint64_t before[9], after[9], started[9], stopped[9];
	pending_run(SET_BEFORE, before);
	pending_run(SET_AFTER, after);
	pending_run(STARTED_AFTER, started);
	pending_run(STOPPED_AFTER, stopped);
	for (unsigned i = 0; i < 9; i++) {
		print_message("counter %u: set before %llu, set after %llu, started after %llu, "
			      "stopped after %llu\n",
			      i, (unsigned long long)before[i], (unsigned long long)after[i],
			      (unsigned long long)started[i], (unsigned long long)stopped[i]);
		assert_true(before[i] > 0);
		assert_int_equal(after[i], before[i]);
		assert_int_equal(started[i], before[i]);
		assert_int_equal(stopped[i], 0);
	}
	assert_int_equal(before[0], 200);
	assert_int_equal(before[7], 200);
}

/* The observer sees exactly the (cluster, index, event) its wants function
 * names, whatever the model counts; the model counts the same whatever the
 * observer wants; registering again asks again. */
static unsigned wants_asked[2];

static bool wants_few(void *ctx, bool cluster, unsigned index, uint16_t event)
{
	(void)ctx;
	wants_asked[cluster]++;
	if (cluster)
		return index == 0 && event == 0x2B;
	return index == 4 && (event == INST_RETIRED || event == L1D_CACHE || event == 0xC9 ||
			      event == CPU_CYCLES);
}

static bool wanted(bool cluster, unsigned index, unsigned slot)
{
	if (cluster)
		return slot == cl_slot(0x2B) && index == 0;
	return wants_few(NULL, false, index, (uint16_t)slot);
}

static void observer_gets_only_the_events_it_wants(void **state)
{
	(void)state;
	struct fx *all = fx_new(), *few = fx_new();
	dpmu_uarch_set_observer(few->u, observe, wants_few, few);
	const uint16_t ev[] = { INST_RETIRED, STALL_BACKEND };
	program(all, 4, ev, 2);
	program(few, 4, ev, 2);
	wants_asked[0] = wants_asked[1] = 0;
	for (unsigned core = 0; core < 8; core += 4) {
		mixed(all, core, 3000, 23 + core);
		mixed(few, core, 3000, 23 + core);
	}
	dpmu_uarch_flush(all->u);
	dpmu_uarch_flush(few->u);
	assert_true(wants_asked[0] > 0 && wants_asked[1] > 0);
	for (unsigned core = 0; core < 8; core++)
		for (unsigned code = 0; code < 256; code++)
			assert_int_equal(few->core[core][code],
					 wanted(false, core, code) ? all->core[core][code] : 0);
	for (unsigned slot = 0; slot < 512; slot++)
		assert_int_equal(few->cl[0][slot], wanted(true, 0, slot) ? all->cl[0][slot] : 0);
	/* Wanted though nothing counts it; counted though not wanted. */
	assert_true(few->core[4][L1D_CACHE] > 0);
	assert_true(few->core[4][0xC9] > 0);
	assert_int_equal(few->core[4][STALL_BACKEND], 0);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(counter(few, 4, i), counter(all, 4, i));
		assert_true(counter(few, 4, i) > 0);
	}
	/* NULL: every event again, from the next delivery on. */
	dpmu_uarch_set_observer(few->u, observe, NULL, few);
	mixed(few, 4, 1000, 5);
	dpmu_uarch_flush(few->u);
	assert_true(few->core[4][STALL_BACKEND] > 0);
	fx_free(all);
	fx_free(few);
}

/* Bad input gets a clear message, never a crash. */
static void bad_input_is_refused_with_a_message(void **state)
{
	(void)state;
	struct fx *f = fx_load(DPMU_PROFILE_DEFAULT);
	struct dpmu_err err;
	struct dpmu_uarch *u = (struct dpmu_uarch *)1;
	assert_int_equal(dpmu_model_create(f->p, &f->m, &err), 0);

	assert_int_equal(dpmu_uarch_create(NULL, f->p, &u, &err), DPMU_EINVAL);
	assert_null(u);
	assert_non_null(strstr(err.msg, "model"));

	f->p->core_types[1].l1d.size = 1000;
	assert_int_equal(dpmu_uarch_create(f->m, f->p, &u, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "Cortex-A55"));
	assert_non_null(strstr(err.msg, "l1d"));
	assert_non_null(strstr(err.msg, "1000"));
	f->p->core_types[1].l1d.size = 32768;

	f->p->core_types[0].bp.entries = 1000;
	assert_int_equal(dpmu_uarch_create(f->m, f->p, &u, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "1000"));
	f->p->core_types[0].bp.entries = 8192;

	f->p->core_types[0].l2.line = 128;
	assert_int_equal(dpmu_uarch_create(f->m, f->p, &u, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "line"));
	f->p->core_types[0].l2.line = 64;

	f->p->clusters[0].ncores = 4; /* the model has 8 */
	f->p->clusters[0].ncores = 8;
	assert_int_equal(dpmu_uarch_create(f->m, f->p, &f->u, &err), 0);
	dpmu_uarch_set_observer(f->u, observe, NULL, f);
	assert_string_equal(dpmu_uarch_errmsg(f->u), "no error");
	struct dpmu_insn in = other(0, 0);
	dpmu_uarch_retire(f->u, 99, &in, 1);
	assert_non_null(strstr(dpmu_uarch_errmsg(f->u), "cpu99"));
	dpmu_uarch_retire(f->u, 0, NULL, 5);
	assert_non_null(strstr(dpmu_uarch_errmsg(f->u), "NULL"));
	dpmu_uarch_retire(f->u, 0, NULL, 0);
	assert_int_equal(dpmu_uarch_set_batch(f->u, 0, &err), DPMU_ERANGE);
	assert_non_null(strstr(err.msg, "batch"));
	/* A branch of an unknown kind, a load of size 0 at the top of the
	 * address space: handled, not a crash. */
	struct dpmu_insn odd[] = {
		{ .pc = 8, .kind = DPMU_INSN_BRANCH, .br_kind = 77 },
		{ .pc = 12, .addr = UINT64_MAX - 2, .size = 0, .kind = DPMU_INSN_LOAD },
		{ .pc = 16, .addr = UINT64_MAX - 2, .size = 64, .kind = DPMU_INSN_STORE },
		{ .pc = 20, .kind = 200 },
	};
	dpmu_uarch_retire(f->u, 0, odd, 4);
	dpmu_uarch_flush(f->u);
	assert_int_equal(f->core[0][INST_RETIRED], 4);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(instruction_classes_feed_their_spec_events),
		cmocka_unit_test(line_crossing_access_looks_up_both_lines),
		cmocka_unit_test(stall_cycles_never_exceed_cpu_cycles),
		cmocka_unit_test(amu_stall_backend_mem_counts_memory_stalls),
		cmocka_unit_test(both_dsu_numberings_receive_cluster_events),
		cmocka_unit_test(overflow_interrupt_skid_is_bounded_by_batch),
		cmocka_unit_test(reads_after_flush_are_exact),
		cmocka_unit_test(same_input_gives_same_counts),
		cmocka_unit_test(time_and_bus_cycles_follow_the_clocks),
		cmocka_unit_test(idle_time_moves_the_clocks_but_not_the_cores_cycles),
		cmocka_unit_test(a55_split_events_add_up_to_the_totals),
		cmocka_unit_test(counters_programmed_while_events_are_pending_count_them),
		cmocka_unit_test(observer_gets_only_the_events_it_wants),
		cmocka_unit_test(bad_input_is_refused_with_a_message),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
