/*
 * The engine's memory hierarchy: caches per level, write-backs, coherence
 * between cores, prefetch, and the latency a pointer chase sees at each
 * working-set size. On the default profile made LRU and prefetch-free
 * (the validation profile), so the counts below are exact.
 */
#include "unit/uarch_fixture.h"

/* ---- tests ----------------------------------------------------------------- */

enum { L1D_CACHE_REFILL = 0x03, L1D_CACHE = 0x04, L1D_CACHE_WB = 0x15, L2D_CACHE = 0x16,
       L2D_CACHE_REFILL = 0x17, L2D_CACHE_WB = 0x18, L1D_CACHE_ALLOCATE = 0x1F,
       STALL_BACKEND = 0x24, L3D_CACHE_REFILL = 0x2A, L3D_CACHE = 0x2B,
       LL_CACHE_RD = 0x36, LL_CACHE_MISS_RD = 0x37, L1D_CACHE_INVAL = 0x48,
       L2D_CACHE_INVAL = 0x58, L1D_CACHE_WB_VICTIM = 0x46, L1D_CACHE_WB_CLEAN = 0x47,
       L2D_CACHE_WB_CLEAN = 0x57, CPU_CYCLES = 0x11 };

/* A cold sequential sweep refills the L1D once per line; read back through
 * PMEVTYPER/PMEVCNTR as software would (Arm ARM D17: L1D_CACHE_REFILL). */
static void cold_sweep_refills_L1D_once_per_line(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	const uint16_t ev[] = { L1D_CACHE_REFILL, L1D_CACHE, L2D_CACHE_REFILL };
	program(f, 0, ev, 3);
	/* 16 KiB with 8-byte loads: 8 loads per 64-byte line. */
	for (uint64_t a = 0x100000; a < 0x100000 + 16384; a += 8) {
		struct dpmu_insn in = ld(0x1000, a);
		dpmu_uarch_retire(f->u, 0, &in, 1);
	}
	dpmu_uarch_flush(f->u);
	assert_int_equal(counter(f, 0, 0), 256);
	assert_int_equal(counter(f, 0, 1), 2048);
	/* The L2 is unified: the loop's one code line refills it too. */
	assert_int_equal(counter(f, 0, 2), 256 + 1);
	assert_int_equal(f->core[0][L1D_CACHE_REFILL], 256);
	fx_free(f);
}

/* A working set that fits the L1D, swept again and again, refills no more. */
static void L1D_resident_working_set_refills_no_more(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	for (int pass = 0; pass < 10; pass++)
		sweep(f, 0, 0x200000, 32768, false);
	assert_int_equal(f->core[0][L1D_CACHE_REFILL], 512);
	assert_int_equal(f->core[0][L1D_CACHE], 5120);
	assert_int_equal(f->core[0][L2D_CACHE_REFILL], 512 + 1); /* + the code line */
	fx_free(f);
}

/* 128 KiB: bigger than the A75's 64 KiB L1D, smaller than its 256 KiB L2:
 * every pass misses L1D (LRU on a cyclic sweep) and hits L2. */
static void L2_sized_working_set_hits_L2(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	const uint64_t lines = 131072 / 64;
	sweep(f, 0, 0x400000, 131072, false);
	uint64_t r1 = f->core[0][L1D_CACHE_REFILL], r2 = f->core[0][L2D_CACHE_REFILL];
	assert_int_equal(r1, lines);
	assert_int_equal(r2, lines + 1); /* the unified L2 also refilled the code line */
	for (int pass = 0; pass < 3; pass++)
		sweep(f, 0, 0x400000, 131072, false);
	assert_int_equal(f->core[0][L1D_CACHE_REFILL] - r1, 3 * lines);
	assert_int_equal(f->core[0][L2D_CACHE_REFILL] - r2, 0);
	assert_int_equal(f->core[0][L2D_CACHE], 4 * lines + 1);
	fx_free(f);
}

/* 1 MiB: bigger than the L2, half the 2 MiB L3: later passes miss L2, hit L3. */
static void L3_sized_working_set_hits_L3(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	const uint64_t lines = (1u << 20) / 64;
	sweep(f, 0, 0x1000000, 1u << 20, false);
	/* + 1: the code line of the loop, fetched through L2 and L3 too. */
	assert_int_equal(f->core[0][L3D_CACHE_REFILL], lines + 1);
	assert_int_equal(f->core[0][LL_CACHE_MISS_RD], lines + 1);
	for (int pass = 0; pass < 2; pass++)
		sweep(f, 0, 0x1000000, 1u << 20, false);
	assert_int_equal(f->core[0][L2D_CACHE_REFILL], 3 * lines + 1);
	assert_int_equal(f->core[0][L3D_CACHE], 3 * lines + 1);
	assert_int_equal(f->core[0][LL_CACHE_RD], 3 * lines + 1);
	assert_int_equal(f->core[0][L3D_CACHE_REFILL], lines + 1);
	/* The DSU saw the same: classic L3D_CACHE / L3D_CACHE_REFILL. */
	assert_int_equal(f->cl[0][cl_slot(0x2B)], 3 * lines + 1);
	assert_int_equal(f->cl[0][cl_slot(0x2A)], lines + 1);
	/* Bus beats: 64-byte lines over a 16-byte bus. */
	assert_int_equal(f->cl[0][cl_slot(0x19)], (lines + 1) * 64 / f->p->bus_width);
	fx_free(f);
}

/* 8 MiB, four times the L3: every pass refills the L3 for every line. */
static void beyond_L3_working_set_misses_L3(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	const uint64_t lines = (8u << 20) / 64;
	sweep(f, 0, 0x10000000, 8u << 20, false);
	sweep(f, 0, 0x10000000, 8u << 20, false);
	assert_int_equal(f->core[0][L3D_CACHE_REFILL], 2 * lines + 1); /* + code line */
	fx_free(f);
}

/* Write-back: dirty lines leave the L1D as victims (L1D_CACHE_WB_VICTIM)
 * once the store sweep is bigger than the L1D. */
static void dirty_victims_are_written_back(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	const uint64_t l1_lines = f->p->core_types[0].l1d.size / 64;
	sweep(f, 0, 0x800000, 2 * l1_lines * 64, true);
	assert_int_equal(f->core[0][L1D_CACHE_REFILL], 2 * l1_lines);
	assert_int_equal(f->core[0][L1D_CACHE_WB], l1_lines);
	assert_int_equal(f->core[0][L1D_CACHE_WB_VICTIM], l1_lines);
	assert_int_equal(f->core[0][L2D_CACHE_WB], 0); /* all still fit the L2 */
	fx_free(f);
}

/* A load takes a line no other core holds exclusive (E); a store to it
 * then makes it dirty in the L1D without asking the L2 or the cluster
 * (MESI: E -> M), so evicting it is a write-back. Without the store the
 * victim is clean: no write-back. */
static void store_to_exclusive_line_makes_it_dirty(void **state)
{
	(void)state;
	for (int store = 0; store < 2; store++) {
		struct fx *f = fx_new();
		const uint64_t x = 0xB00000;
		struct dpmu_insn in = ld(0x1000, x);
		dpmu_uarch_retire(f->u, 0, &in, 1);
		if (store) {
			in = st(0x1004, x + 8);
			dpmu_uarch_retire(f->u, 0, &in, 1);
		}
		dpmu_uarch_flush(f->u);
		uint64_t l2 = f->core[0][L2D_CACHE];
		assert_int_equal(f->cl[0][cl_slot(0xC0)], 0); /* SCU_SNP_ACCESS: no snoop */
		/* 16 more lines of its L1D set (64 sets of 64 bytes: 4 KiB
		 * apart): LRU evicts it. */
		const struct dpmu_cache_params *l1 = &f->p->core_types[0].l1d;
		uint64_t set_stride = l1->size / l1->ways;
		for (uint64_t k = 1; k <= l1->ways; k++) {
			in = ld(0x1008, x + k * set_stride);
			dpmu_uarch_retire(f->u, 0, &in, 1);
		}
		dpmu_uarch_flush(f->u);
		assert_int_equal(f->core[0][L1D_CACHE_WB], store ? 1 : 0);
		assert_int_equal(f->core[0][L1D_CACHE_WB_VICTIM], store ? 1 : 0);
		/* The store itself was an L1D hit: no L2 access until then. */
		assert_int_equal(f->core[0][L1D_CACHE_REFILL], 1 + l1->ways);
		assert_true(f->core[0][L2D_CACHE] >= l2 + l1->ways);
		fx_free(f);
	}
}

/* A store of a whole line allocates it without a refill (L1D_CACHE_ALLOCATE). */
static void full_line_store_allocates_without_refill(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct dpmu_insn in = st(0x1000, 0x900000);
	in.size = 64;
	dpmu_uarch_retire(f->u, 0, &in, 1);
	dpmu_uarch_flush(f->u);
	assert_int_equal(f->core[0][L1D_CACHE_ALLOCATE], 1);
	assert_int_equal(f->core[0][L1D_CACHE_REFILL], 0);
	assert_int_equal(f->core[0][L3D_CACHE_REFILL], 1); /* the code line only */
	fx_free(f);
}

/* A line written alternately by two cores: each change of owner invalidates
 * the other core's copy and costs one snoop (MESI; seed 001 section 4.2). */
static void ping_pong_line_counts_one_snoop_per_ownership_change(void **state)
{
	(void)state;
	const char *profiles[] = { DPMU_PROFILE_DEFAULT, "a75x4-a55x4-dsu120" };
	for (unsigned pi = 0; pi < 2; pi++) {
		struct fx *f = fx_load(profiles[pi]);
		fx_start(f);
		const unsigned writes = 100;
		for (unsigned i = 0; i < writes; i++) {
			struct dpmu_insn in = st(0x1000, 0xA00000);
			dpmu_uarch_retire(f->u, i & 1, &in, 1);
		}
		dpmu_uarch_flush(f->u);
		uint64_t inval = f->core[0][L1D_CACHE_INVAL] + f->core[1][L1D_CACHE_INVAL];
		uint64_t inval2 = f->core[0][L2D_CACHE_INVAL] + f->core[1][L2D_CACHE_INVAL];
		assert_int_equal(inval, writes - 1);
		assert_int_equal(inval2, writes - 1);
		/* The loser's copy was dirty: a coherency write-back each time. */
		assert_int_equal(f->core[0][L2D_CACHE_WB_CLEAN] + f->core[1][L2D_CACHE_WB_CLEAN],
				 writes - 1);
		if (pi == 0) {
			assert_int_equal(f->cl[0][cl_slot(0xC0)], writes - 1); /* SCU_SNP_ACCESS */
		} else {
			assert_int_equal(f->cl[0][cl_slot(0x4022)], writes - 1); /* SNOOP_REQ */
			assert_int_equal(f->cl[0][cl_slot(0x4023)], writes - 1); /* DATA_TRANSFER */
			assert_int_equal(f->cl[0][cl_slot(0x4024)], writes - 1); /* SNOOP_INVAL */
		}
		fx_free(f);
	}
}

/* A line only read by several cores is shared: no invalidations. */
static void shared_reads_do_not_invalidate(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	for (unsigned i = 0; i < 40; i++) {
		struct dpmu_insn in = ld(0x1000, 0xB00000);
		dpmu_uarch_retire(f->u, i % 4, &in, 1);
	}
	dpmu_uarch_flush(f->u);
	for (unsigned c = 0; c < 4; c++) {
		assert_int_equal(f->core[c][L1D_CACHE_INVAL], 0);
		assert_int_equal(f->core[c][L1D_CACHE_REFILL], 1);
	}
	fx_free(f);
}

/* A write to a line three cores read invalidates each reader's copy: the
 * snoop filter gathered all three as holders of one entry (seed 001
 * section 4.2: snoops go only to the cores the filter names). */
static void write_after_shared_reads_invalidates_each_reader(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	for (unsigned c = 0; c < 3; c++) {
		struct dpmu_insn in = ld(0x1000, 0xC00000);
		dpmu_uarch_retire(f->u, c, &in, 1);
	}
	struct dpmu_insn w = st(0x1000, 0xC00000);
	dpmu_uarch_retire(f->u, 3, &w, 1);
	dpmu_uarch_flush(f->u);
	for (unsigned c = 0; c < 3; c++) {
		assert_int_equal(f->core[c][L1D_CACHE_INVAL], 1);
		assert_int_equal(f->core[c][L2D_CACHE_INVAL], 1);
	}
	assert_int_equal(f->core[3][L1D_CACHE_INVAL], 0);
	/* One snoop for the second read (the first reader held the line
	 * exclusive; the third finds it shared and in the L3), three for
	 * the write. */
	assert_int_equal(f->cl[0][cl_slot(0xC0)], 1 + 3); /* SCU_SNP_ACCESS */
	fx_free(f);
}

/* A snoop filter of one 16-way set on one core: every L2 refill puts a new
 * line in it (the filter holds what the L2 holds), so once full each refill
 * evicts an entry, and each eviction back-invalidates that line in the L2
 * (seed 001 section 4.2: the filter is inclusive of the cores' L2s). */
static void full_snoop_filter_evicts_and_back_invalidates(void **state)
{
	(void)state;
	struct fx *f = fx_load(DPMU_PROFILE_DEFAULT);
	f->p->clusters[0].snoop_filter_entries = 16;
	fx_start(f);
	for (int pass = 0; pass < 2; pass++)
		sweep(f, 0, 0xD00000, 64 * 64, false);
	uint64_t refills = f->core[0][L2D_CACHE_REFILL];
	uint64_t evicts = f->cl[0][cl_slot(0xC1)]; /* SCU_SNP_EVICT */
	assert_true(refills > 2 * 64); /* the code line comes back too */
	assert_int_equal(evicts, refills - 16);
	assert_int_equal(f->core[0][L2D_CACHE_INVAL], evicts);
	fx_free(f);
}

/* An L2 next-line prefetcher on a cold sweep: each demand miss of line 2i
 * prefetches line 2i + 1, which the next load finds in the L2. A prefetch
 * is an L2 access and refill of its own. */
static void L2_next_line_prefetch_halves_demand_misses(void **state)
{
	(void)state;
	struct fx *f = fx_load(DPMU_PROFILE_DEFAULT);
	f->p->core_types[0].l2.prefetch = DPMU_PREFETCH_NEXT_LINE;
	fx_start(f);
	const uint64_t n = 256;
	sweep(f, 0, 0xE00000, n * 64, false);
	/* + the code line and, prefetched with it, the line after it */
	assert_int_equal(f->core[0][L2D_CACHE], n + n / 2 + 2);
	assert_int_equal(f->core[0][L2D_CACHE_REFILL], n + 2);
	assert_int_equal(f->core[0][L1D_CACHE_REFILL], n);
	fx_free(f);
}

/* A next-line prefetcher turns a sweep's demand misses into prefetch hits:
 * fewer back-end stall cycles for the same loads. */
static void next_line_prefetch_reduces_backend_stalls(void **state)
{
	(void)state;
	uint64_t stalls[2];
	for (int pf = 0; pf < 2; pf++) {
		struct fx *f = fx_load(DPMU_PROFILE_DEFAULT);
		if (pf)
			f->p->core_types[0].l1d.prefetch = DPMU_PREFETCH_NEXT_LINE;
		fx_start(f);
		sweep(f, 0, 0x2000000, 1u << 20, false);
		stalls[pf] = f->core[0][STALL_BACKEND];
		fx_free(f);
	}
	/* Next-line prefetch on a miss: every other line of a sweep arrives
	 * before it is used. */
	assert_true(stalls[1] * 10 < stalls[0] * 6);
}

/* Random replacement comes from a seeded generator: the same input gives
 * the same counts (DESIGN.md: determinism). */
static void random_replacement_is_deterministic(void **state)
{
	(void)state;
	uint64_t got[2][3];
	for (int run = 0; run < 2; run++) {
		struct fx *f = fx_load(DPMU_PROFILE_DEFAULT);
		f->p->core_types[0].l1d.replacement = DPMU_REPL_RANDOM;
		f->p->core_types[0].l2.replacement = DPMU_REPL_RANDOM;
		fx_start(f);
		for (int pass = 0; pass < 3; pass++)
			sweep(f, 0, 0x3000000, 96 * 1024, false);
		got[run][0] = f->core[0][L1D_CACHE_REFILL];
		got[run][1] = f->core[0][L2D_CACHE_REFILL];
		got[run][2] = f->core[0][CPU_CYCLES];
		fx_free(f);
	}
	assert_memory_equal(got[0], got[1], sizeof got[0]);
	/* Random is not LRU: some lines of a 1.5x-L1D sweep survive. */
	assert_true(got[0][0] < 3 * 96 * 1024 / 64);
}

/* Pointer chase: cycles per load against working-set size has its plateaus
 * at the profile's load-to-use latencies (each load's address is the
 * previous load's value, x0; the TLB taken out of the picture with a huge
 * page). */
static double chase(struct fx *f, uint64_t bytes)
{
	uint64_t n = bytes / 64;
	uint64_t *perm = malloc(n * sizeof *perm);
	assert_non_null(perm);
	for (uint64_t i = 0; i < n; i++)
		perm[i] = i;
	uint64_t x = 88172645463325252ull;
	for (uint64_t i = n - 1; i > 0; i--) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t j = x % (i + 1), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	uint64_t base = 0x40000000;
	struct dpmu_insn in = ld(0x1000, 0);
	in.src[0] = in.dst[0] = DPMU_REG_X(0);
	for (int pass = 0; pass < 3; pass++) {
		if (pass == 2) {
			dpmu_uarch_flush(f->u);
			memset(f->core[0], 0, sizeof f->core[0]);
		}
		for (uint64_t i = 0; i < n; i++) {
			in.addr = base + perm[i] * 64;
			dpmu_uarch_retire(f->u, 0, &in, 1);
		}
	}
	dpmu_uarch_flush(f->u);
	free(perm);
	return (double)f->core[0][CPU_CYCLES] / (double)n;
}

static void pointer_chase_plateaus_at_cache_latencies(void **state)
{
	(void)state;
	struct fx *f = fx_load(DPMU_PROFILE_DEFAULT);
	struct dpmu_core_type *t = &f->p->core_types[0];
	
	t->page_size = 1u << 30;
	fx_start(f);
	const struct dpmu_cluster_params *cp = &f->p->clusters[0];
	
	double mem = cp->l3.latency + f->p->bus_latency +
		     f->p->dram_latency * (double)t->freq_hz / 1e9;
	struct {
		uint64_t bytes;
		double expect;
	} pts[] = {
		{ t->l1d.size / 4, t->l1d.latency },
		{ t->l1d.size / 2, t->l1d.latency },
		{ t->l2.size / 2, t->l2.latency },
		{ cp->l3.size / 2, cp->l3.latency },
		{ cp->l3.size * 4, mem },
	};
	for (unsigned i = 0; i < sizeof pts / sizeof pts[0]; i++) {
		double got = chase(f, pts[i].bytes);
		print_message("chase %8llu KiB: %7.2f cycles/load (expected %7.2f)\n",
			      (unsigned long long)(pts[i].bytes >> 10), got, pts[i].expect);
		assert_true(got > pts[i].expect - 1.0 && got < pts[i].expect + 1.0);
	}
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cold_sweep_refills_L1D_once_per_line),
		cmocka_unit_test(L1D_resident_working_set_refills_no_more),
		cmocka_unit_test(L2_sized_working_set_hits_L2),
		cmocka_unit_test(L3_sized_working_set_hits_L3),
		cmocka_unit_test(beyond_L3_working_set_misses_L3),
		cmocka_unit_test(dirty_victims_are_written_back),
		cmocka_unit_test(store_to_exclusive_line_makes_it_dirty),
		cmocka_unit_test(full_line_store_allocates_without_refill),
		cmocka_unit_test(ping_pong_line_counts_one_snoop_per_ownership_change),
		cmocka_unit_test(shared_reads_do_not_invalidate),
		cmocka_unit_test(write_after_shared_reads_invalidates_each_reader),
		cmocka_unit_test(full_snoop_filter_evicts_and_back_invalidates),
		cmocka_unit_test(L2_next_line_prefetch_halves_demand_misses),
		cmocka_unit_test(next_line_prefetch_reduces_backend_stalls),
		cmocka_unit_test(random_replacement_is_deterministic),
		cmocka_unit_test(pointer_chase_plateaus_at_cache_latencies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
