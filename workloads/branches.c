/*
 * branches branchy|branchless [N] [REPS]: sum the bytes >= 128 of N seeded
 * random bytes, REPS times (seed 003 section 6.2, "change the condition in
 * the hot loop into a branchless implementation").
 *
 * The bytes are uniform, so the direction of `if (x >= 128)` is a coin toss
 * no history-based predictor can learn: branchy mispredicts about half of
 * those branches (BR_MIS_PRED, BR_MIS_PRED_RETIRED), paying the pipeline
 * refill each time (CPU_CYCLES, STALL_FRONTEND). branchless turns the test
 * into a mask (cset, neg, and) so the only conditional branch left is the
 * loop's back edge, which is predicted: BR_RETIRED drops by about N * REPS
 * and BR_MIS_PRED to a handful. Both compute the same sum.
 *
 * The compiler would if-convert the branchy loop by itself (GCC -O2 emits
 * csel), which would erase the case study. The empty volatile asm in the
 * taken arm is a statement that cannot be executed conditionally, so the
 * branch stays; the kernels are out of line so the integration test can check
 * both shapes in the disassembly (workloads/CMakeLists.txt also builds this
 * file with -fno-if-conversion -fno-tree-vectorize).
 */
#define _POSIX_C_SOURCE 200809L
#include "workload.h"

#define DPMU_BRANCHES_DEFAULT_N 200000
#define DPMU_BRANCHES_DEFAULT_REPS 4

static const struct dpmu_wl_variant variants[] = {
	{"branchy", "if (x >= 128) sum += x: a data-dependent, unpredictable branch"},
	{"branchless", "sum += x & -(x >= 128): the same sum with no data branch"},
};

/* Out of line and opaque: GCC would otherwise prove branchless pure and run
 * it once for all REPS identical calls (clang has no noipa; the memory
 * barrier between the passes in main stops it there). */
#if defined(__clang__)
#define DPMU_BRANCHES_OPAQUE __attribute__((noinline))
#else
#define DPMU_BRANCHES_OPAQUE __attribute__((noipa))
#endif

DPMU_BRANCHES_OPAQUE uint64_t dpmu_branches_branchy(const uint8_t *d, size_t n);
DPMU_BRANCHES_OPAQUE uint64_t dpmu_branches_branchless(const uint8_t *d, size_t n);

uint64_t dpmu_branches_branchy(const uint8_t *d, size_t n)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = d[i];
		if (x >= 128) {
			sum += x;
			__asm__ __volatile__("" : "+r"(sum));
		}
	}
	return sum;
}

uint64_t dpmu_branches_branchless(const uint8_t *d, size_t n)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = d[i];
		sum += x & (0 - (uint64_t)(x >= 128));
	}
	return sum;
}

int main(int argc, char **argv)
{
	const char *args = "[N] [REPS]   (N random bytes, default 200000; REPS passes, default 4)";
	size_t nv = sizeof variants / sizeof variants[0];
	size_t v = dpmu_wl_variant(argc, argv, args, variants, nv);
	size_t n = (size_t)dpmu_wl_size(argc, argv, 2, "N", DPMU_BRANCHES_DEFAULT_N, 1,
					UINT64_C(1) << 28);
	uint64_t reps = dpmu_wl_size(argc, argv, 3, "REPS", DPMU_BRANCHES_DEFAULT_REPS, 1,
				     1000);
	dpmu_wl_max_args(argc, argv, 4, args);

	uint8_t *d = dpmu_wl_alloc(argv[0], n);
	struct dpmu_wl_rng r;
	dpmu_wl_rng_seed(&r, 0x6272616e6368ull);
	for (size_t i = 0; i < n; i++)
		d[i] = (uint8_t)(dpmu_wl_rng_next(&r) >> 56);

	uint64_t h = 0;
	if (v == 0) {
		DPMU_REGION_BEGIN("branches_branchy");
		for (uint64_t k = 0; k < reps; k++) {
			h = dpmu_wl_mix(h, dpmu_branches_branchy(d, n));
			__asm__ __volatile__("" : : : "memory");
		}
		DPMU_REGION_END("branches_branchy");
	} else {
		DPMU_REGION_BEGIN("branches_branchless");
		for (uint64_t k = 0; k < reps; k++) {
			h = dpmu_wl_mix(h, dpmu_branches_branchless(d, n));
			__asm__ __volatile__("" : : : "memory");
		}
		DPMU_REGION_END("branches_branchless");
	}
	dpmu_wl_report("branches", variants[v].name, n, h);
	free(d);
	return 0;
}
