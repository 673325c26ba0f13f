/*
 * latency chase|gather [KIB] [LOADS]: the memory latency ladder, as
 * lmbench's lat_mem_rd measures it, and its independent counterpart.
 *
 * Both walk the 64-byte lines of a KIB-kibibyte buffer (default 16) in one
 * random cycle through all of them (Sattolo's algorithm), LOADS loads in
 * all (default 200000), so no stride prefetcher can run ahead.
 *
 * chase: each line holds the address of the next; every load's address is
 * the previous load's value (p = *p, eight per loop iteration), so the
 * loads serialise and cycles per load is the load-to-use latency of the
 * level the footprint fits in: the L1D, the L2, the L3, DRAM.
 *
 * gather: the same lines in the same order, their numbers read from a
 * sequential array: no load's address depends on another's value, so an
 * out-of-order core overlaps the misses up to its miss buffers and
 * reorder window, and an in-order one up to its first use of a value.
 *
 * Cycles per load is (CPU_CYCLES(2 x LOADS) - CPU_CYCLES(LOADS)) / LOADS:
 * the difference takes out the set-up. chase prints the number of the
 * line it ends on, gather the sum of the line numbers it read.
 */
#define _POSIX_C_SOURCE 200809L
#include "workload.h"

#define DPMU_LATENCY_LINE 64
#define DPMU_LATENCY_DEFAULT_KIB 16
#define DPMU_LATENCY_DEFAULT_LOADS 200000

static const struct dpmu_wl_variant variants[] = {
	{"chase", "dependent loads: each address is the previous load's value"},
	{"gather", "independent loads of the same lines, addresses from an index array"},
};

struct dpmu_line {
	struct dpmu_line *next;
	uint64_t value;
	char pad[DPMU_LATENCY_LINE - 16];
};

_Static_assert(sizeof(struct dpmu_line) == DPMU_LATENCY_LINE, "one line per node");

/* Eight dependent loads per iteration; loads is a multiple of 8. */
static __attribute__((noinline)) struct dpmu_line *latency_chase(struct dpmu_line *p,
								  uint64_t loads)
{
	for (uint64_t i = 0; i < loads; i += 8) {
		p = p->next;
		p = p->next;
		p = p->next;
		p = p->next;
		p = p->next;
		p = p->next;
		p = p->next;
		p = p->next;
	}
	return p;
}

/* The same lines, their numbers from the order array: the loads of the
 * lines depend only on the (sequential) index loads. */
static __attribute__((noinline)) uint64_t latency_gather(const struct dpmu_line *lines,
							 const uint32_t *order, uint64_t n,
							 uint64_t loads)
{
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	uint64_t k = 0;
	for (uint64_t i = 0; i < loads; i += 4) {
		s0 += lines[order[k]].value;
		s1 += lines[order[k + 1]].value;
		s2 += lines[order[k + 2]].value;
		s3 += lines[order[k + 3]].value;
		k += 4;
		if (k >= n)
			k = 0;
	}
	return s0 + s1 + s2 + s3;
}

int main(int argc, char **argv)
{
	const char *args = "[KIB] [LOADS]   (footprint in KiB, default 16; loads, default 200000, "
			   "a multiple of 8)";
	size_t nv = sizeof variants / sizeof variants[0];
	size_t v = dpmu_wl_variant(argc, argv, args, variants, nv);
	uint64_t kib = dpmu_wl_size(argc, argv, 2, "KIB", DPMU_LATENCY_DEFAULT_KIB, 1,
				    UINT64_C(1) << 22);
	uint64_t loads = dpmu_wl_size(argc, argv, 3, "LOADS", DPMU_LATENCY_DEFAULT_LOADS, 8,
				      UINT64_C(1) << 36);
	dpmu_wl_max_args(argc, argv, 4, args);
	if (loads % 8) {
		fprintf(stderr, "%s: LOADS '%s' is not a multiple of 8\n", argv[0], argv[3]);
		return DPMU_WL_EXIT_USAGE;
	}
	/* a multiple of 16 lines: the gather's unrolled loop wraps at the
	 * cycle's end */
	uint64_t n = kib * 1024 / DPMU_LATENCY_LINE;
	struct dpmu_line *lines = dpmu_wl_alloc(argv[0], n * sizeof *lines);
	uint32_t *order = dpmu_wl_alloc(argv[0], n * sizeof *order);
	/* Sattolo: a random permutation that is a single cycle */
	for (uint64_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	struct dpmu_wl_rng r;
	dpmu_wl_rng_seed(&r, 0x1a7e9c1u);
	for (uint64_t i = n - 1; i > 0; i--) {
		uint64_t j = dpmu_wl_rng_below(&r, i);
		uint32_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	/* the cycle in walk order: order[k] is the k-th line visited */
	for (uint64_t k = 0; k < n; k++) {
		struct dpmu_line *l = &lines[order[k]];
		l->next = &lines[order[(k + 1) % n]];
		l->value = order[k];
	}

	uint64_t h = 0;
	if (v == 0) {
		DPMU_REGION_BEGIN("latency_chase");
		struct dpmu_line *p = latency_chase(&lines[order[0]], loads);
		DPMU_REGION_END("latency_chase");
		h = (uint64_t)(p - lines);
	} else {
		DPMU_REGION_BEGIN("latency_gather");
		h = latency_gather(lines, order, n, loads);
		DPMU_REGION_END("latency_gather");
	}
	dpmu_wl_report("latency", variants[v].name, kib, h);
	free(lines);
	free(order);
	return 0;
}
