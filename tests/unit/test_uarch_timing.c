/*
 * The dependence timing (src/uarch/timing.h, docs/events.md "Timing"):
 * an in-order core stalls at the first use of a pending load, not at the
 * load; an out-of-order core overlaps independent misses up to its miss
 * buffers; the waits are back-end stalls and never exceed the cycles.
 * Translation is taken out of the picture with a 1 GiB page.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "unit/uarch_fixture.h"

#define STALL_BACKEND 0x24
#define STALL_FRONTEND 0x23
#define CPU_CYCLES 0x11

static struct fx *start(unsigned miss_buffers)
{
	struct fx *f = fx_load(DPMU_PROFILE_DEFAULT);
	for (unsigned t = 0; t < f->p->n_core_types; t++) {
		f->p->core_types[t].page_size = 1u << 30;
		if (miss_buffers)
			f->p->core_types[t].pipeline.miss_buffers = miss_buffers;
	}
	fx_start(f);
	return f;
}

static struct dpmu_insn alu(uint64_t pc, uint8_t src, uint8_t dst)
{
	return (struct dpmu_insn){ .pc = pc, .kind = DPMU_INSN_OTHER, .flags = DPMU_IC_DP,
				   .isize = 4, .src = { src }, .dst = { dst } };
}

/* start(miss_buffers) with the code at 0x10000-0x10fff fetched on `core`
 * (its lines in the L1I) and the counts so far dropped. */
static struct fx *warmed(unsigned core, unsigned miss_buffers)
{
	struct fx *f = start(miss_buffers);
	struct dpmu_insn warm[1024];
	for (unsigned i = 0; i < 1024; i++)
		warm[i] = alu(0x10000 + 4ull * i, 0, 0);
	dpmu_uarch_retire(f->u, core, warm, 1024);
	dpmu_uarch_flush(f->u);
	memset(f->core, 0, sizeof f->core);
	return f;
}

/* A load of a line no cache holds into `dst` (base x20, ready), `gap`
 * independent instructions, then one that reads dst; returns the core's
 * STALL_BACKEND and checks the stalls against CPU_CYCLES. The code stays
 * in one 4 KiB page fetched before. */
static uint64_t first_use(unsigned core, unsigned gap)
{
	struct fx *f = warmed(core, 0);
	struct dpmu_insn in = ld(0x10000, 0x80000000);
	in.src[0] = DPMU_REG_X(20);
	in.dst[0] = DPMU_REG_X(1);
	dpmu_uarch_retire(f->u, core, &in, 1);
	for (unsigned i = 0; i < gap; i++) {
		struct dpmu_insn a = alu(0x10004 + 4ull * (i % 1000), DPMU_REG_X(2), DPMU_REG_X(3));
		dpmu_uarch_retire(f->u, core, &a, 1);
	}
	struct dpmu_insn use = alu(0x10fa4, DPMU_REG_X(1), DPMU_REG_X(4));
	dpmu_uarch_retire(f->u, core, &use, 1);
	dpmu_uarch_flush(f->u);
	uint64_t be = f->core[core][STALL_BACKEND];
	assert_true(be + f->core[core][STALL_FRONTEND] <= f->core[core][CPU_CYCLES]);
	fx_free(f);
	return be;
}

static void in_order_stalls_at_first_use(void **state)
{
	(void)state;
	struct fx *f = start(0);
	const struct dpmu_core_type *a55 = &f->p->core_types[1];
	assert_int_equal(a55->pipeline.reorder_window, 0);
	double cpi = a55->pipeline.base_cpi_milli / 1000.0;
	fx_free(f);
	/* cpu4 is a Cortex-A55: the wait shrinks by the work done between */
	uint64_t s0 = first_use(4, 0), s100 = first_use(4, 100), s1000 = first_use(4, 1000);
	print_message("A55 first use after 0 / 100 / 1000 instructions: %llu / %llu / %llu "
		      "stall cycles\n",
		      (unsigned long long)s0, (unsigned long long)s100, (unsigned long long)s1000);
	assert_true(s0 > 100); /* a DRAM access */
	double d = (double)(s0 - s100);
	assert_true(d > 100 * cpi - 2 && d < 100 * cpi + 2);
	assert_int_equal(s1000, 0); /* the data arrived during the work */
}

static void out_of_order_does_not_stall_without_a_full_window(void **state)
{
	(void)state;
	/* cpu0 is a Cortex-A75 (window 128): 100 instructions after the
	 * load fit the window, and nothing waits for the use */
	assert_int_equal(first_use(0, 100), 0);
}

/* n independent loads of distinct cold lines on cpu0, then enough
 * independent work to drain them (its code fetched before); CPU_CYCLES. */
static uint64_t independent_misses(unsigned miss_buffers, unsigned n)
{
	struct fx *f = warmed(0, miss_buffers);
	for (unsigned i = 0; i < n; i++) {
		struct dpmu_insn in = ld(0x10000 + 4ull * i, 0x80000000 + 4096ull * i);
		in.src[0] = DPMU_REG_X(20);
		in.dst[0] = DPMU_REG_X(i % 8);
		dpmu_uarch_retire(f->u, 0, &in, 1);
	}
	for (unsigned i = 0; i < 4000; i++) {
		struct dpmu_insn a = alu(0x10100 + 4ull * (i % 512), DPMU_REG_X(20), DPMU_REG_X(21));
		dpmu_uarch_retire(f->u, 0, &a, 1);
	}
	dpmu_uarch_flush(f->u);
	uint64_t c = f->core[0][CPU_CYCLES];
	assert_true(f->core[0][STALL_BACKEND] + f->core[0][STALL_FRONTEND] <= c);
	fx_free(f);
	return c;
}

static void misses_overlap_up_to_the_miss_buffers(void **state)
{
	(void)state;
	/* with one buffer each of 8 more misses adds a whole DRAM access;
	 * with 8 buffers the 8 more take one DRAM access together */
	double one = (double)(independent_misses(1, 16) - independent_misses(1, 8)) / 8;
	double eight = (double)(independent_misses(8, 16) - independent_misses(8, 8)) / 8;
	print_message("per extra miss: %.1f cycles with 1 miss buffer, %.1f with 8\n", one, eight);
	assert_true(one > 200);     /* about the DRAM latency, 350 */
	assert_true(eight > one / 8 * 0.8 && eight < one / 8 * 1.2);
}

/* n loads of distinct cold lines on `core`, each through x0: post-index
 * (ldr x1, [x0], #8: x0 written back with the address) or a chase (ldr
 * x0, [x0]: x0 the data), then independent work to drain them;
 * CPU_CYCLES. */
static uint64_t load_chain(unsigned core, bool writeback, unsigned n)
{
	struct fx *f = warmed(core, 0);
	for (unsigned i = 0; i < n; i++) {
		struct dpmu_insn in = ld(0x10000 + 4ull * i, 0x80000000 + 4096ull * i);
		in.src[0] = DPMU_REG_X(0);
		if (writeback) {
			in.flags = DPMU_IC_WRITEBACK;
			in.dst[0] = DPMU_REG_X(1);
			in.dst[1] = DPMU_REG_X(0);
		} else {
			in.dst[0] = DPMU_REG_X(0);
		}
		dpmu_uarch_retire(f->u, core, &in, 1);
	}
	for (unsigned i = 0; i < 4000; i++) {
		struct dpmu_insn a = alu(0x10100 + 4ull * (i % 512), DPMU_REG_X(20), DPMU_REG_X(21));
		dpmu_uarch_retire(f->u, core, &a, 1);
	}
	dpmu_uarch_flush(f->u);
	uint64_t c = f->core[core][CPU_CYCLES];
	assert_true(f->core[core][STALL_BACKEND] + f->core[core][STALL_FRONTEND] <= c);
	fx_free(f);
	return c;
}

/* A base register written back holds the address (Arm ARM C1.3.3), ready
 * with the address, not when the data arrives: post-index loads through
 * one base overlap their misses as independent loads do, where a chase
 * through the data pays each miss in turn; on both core types. */
static void a_base_written_back_is_not_the_data(void **state)
{
	(void)state;
	for (unsigned core = 0; core < 8; core += 4) {
		double post = (double)load_chain(core, true, 16);
		double chase = (double)load_chain(core, false, 16);
		print_message("cpu%u: 16 cold loads post-index %.0f cycles, chased %.0f\n", core,
			      post, chase);
		assert_true(post * 2 < chase);
	}
}

/* n instructions of class `ex` (an FP add, say) on `core`, each reading
 * and writing V0 (a chain) or writing V(i % 8) from V31 (independent),
 * then independent work to drain them; CPU_CYCLES, and *ld the A55's
 * STALL_BACKEND_LD (0xE7, a load stall) and *be STALL_BACKEND. */
static uint64_t exec_run(unsigned core, uint8_t ex, bool chain, unsigned n, uint64_t *be,
			 uint64_t *ld)
{
	struct fx *f = warmed(core, 0);
	for (unsigned i = 0; i < n; i++) {
		struct dpmu_insn in = alu(0x10000 + 4ull * (i % 1000),
					  chain ? DPMU_REG_V(0) : DPMU_REG_V(31),
					  chain ? DPMU_REG_V(0) : DPMU_REG_V(i % 8));
		in.flags = DPMU_IC_VFP;
		in.exec = ex;
		dpmu_uarch_retire(f->u, core, &in, 1);
	}
	struct dpmu_insn use = alu(0x10fa0, DPMU_REG_V(0), DPMU_REG_X(9));
	dpmu_uarch_retire(f->u, core, &use, 1);
	dpmu_uarch_flush(f->u);
	uint64_t c = f->core[core][CPU_CYCLES];
	*be = f->core[core][STALL_BACKEND];
	*ld = f->core[core][0xE7];
	assert_true(*be + f->core[core][STALL_FRONTEND] <= c);
	fx_free(f);
	return c;
}

/* An instruction with an execution latency (the profile's exec_latency)
 * has its result that long after it starts: a chain of n FP adds takes n
 * latencies on either core type, independent ones their dispatch slots.
 * The in-order A55 stalls for each link, and those stalls are back-end
 * stalls but not load stalls. */
static void a_chain_of_fp_adds_costs_its_latency(void **state)
{
	(void)state;
	struct fx *f = start(0);
	const unsigned lat[2] = {f->p->core_types[0].pipeline.exec_latency[DPMU_EX_FP],
				 f->p->core_types[1].pipeline.exec_latency[DPMU_EX_FP]};
	fx_free(f);
	for (unsigned t = 0; t < 2; t++) {
		const unsigned core = t * 4, n = 2000;
		uint64_t be, ld, be_i, ld_i;
		const double dep = (double)(exec_run(core, DPMU_EX_FP, true, 2 * n, &be, &ld) -
					    exec_run(core, DPMU_EX_FP, true, n, &be_i, &ld_i)) / n;
		const double ind = (double)(exec_run(core, DPMU_EX_FP, false, 2 * n, &be_i, &ld_i) -
					    exec_run(core, DPMU_EX_FP, false, n, &be_i, &ld_i)) / n;
		print_message("cpu%u: FP add chained %.2f cycles each, independent %.2f "
			      "(latency %u)\n", core, dep, ind, lat[t]);
		assert_true(lat[t] >= 2);
		assert_true(dep > lat[t] * 0.98 && dep < lat[t] * 1.02);
		assert_true(ind < lat[t] / 2.0);
		if (t == 1) {
			assert_true(be > n); /* the in-order core waits for each */
			assert_int_equal(ld, 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_order_stalls_at_first_use),
		cmocka_unit_test(out_of_order_does_not_stall_without_a_full_window),
		cmocka_unit_test(misses_overlap_up_to_the_miss_buffers),
		cmocka_unit_test(a_base_written_back_is_not_the_data),
		cmocka_unit_test(a_chain_of_fp_adds_costs_its_latency),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
