/*
 * stream triad|copy|scale|add [N] [PASSES]: the four STREAM kernels over
 * three arrays of N doubles (default 262144: 2 MiB each, 6 MiB in all).
 *
 * Each array is eight times the Cortex-A75 L2 (256 KiB) and the three
 * together three times the 2 MiB L3, so nothing survives from one pass to
 * the next: every 64-byte line of every array is refilled in L1D, L2 and L3
 * each pass (triad: about 3 * N / 8 L1D_CACHE_REFILL per pass, read and
 * write-allocate), the destination's dirty lines are written back
 * (L1D_CACHE_WB, L2D_CACHE_WB, cluster L3D_CACHE_WB) and the traffic
 * reaches the bus (BUS_ACCESS, cluster BUS_ACCESS_RD/WR). The accesses are
 * unit-stride, so the stride prefetchers of the default profile can fetch
 * ahead: the refills stay, the stall cycles per line shrink. The kernel is
 * a bandwidth probe and the baseline the other case studies are read
 * against (seed 003 section 6.1's BUS_ACCESS).
 *
 * The values are small integers, so the results are exact and the
 * checksum is the same on every host.
 */
#define _POSIX_C_SOURCE 200809L
#include "workload.h"

#define DPMU_STREAM_DEFAULT_N 262144
#define DPMU_STREAM_DEFAULT_PASSES 3
#define DPMU_STREAM_SCALAR 3.0

static const struct dpmu_wl_variant variants[] = {
	{"triad", "a[i] = b[i] + s * c[i]   (2 loads, 1 store)"},
	{"copy", "c[i] = a[i]               (1 load, 1 store)"},
	{"scale", "b[i] = s * c[i]           (1 load, 1 store)"},
	{"add", "c[i] = a[i] + b[i]        (2 loads, 1 store)"},
};

static void stream_triad(size_t n, double *restrict a, const double *restrict b,
			 const double *restrict c)
{
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] + DPMU_STREAM_SCALAR * c[i];
}

static void stream_copy(size_t n, double *restrict c, const double *restrict a)
{
	for (size_t i = 0; i < n; i++)
		c[i] = a[i];
}

static void stream_scale(size_t n, double *restrict b, const double *restrict c)
{
	for (size_t i = 0; i < n; i++)
		b[i] = DPMU_STREAM_SCALAR * c[i];
}

static void stream_add(size_t n, double *restrict c, const double *restrict a,
		       const double *restrict b)
{
	for (size_t i = 0; i < n; i++)
		c[i] = a[i] + b[i];
}

int main(int argc, char **argv)
{
	const char *args = "[N] [PASSES]   (N doubles per array, default 262144; default 3 passes)";
	size_t nv = sizeof variants / sizeof variants[0];
	size_t v = dpmu_wl_variant(argc, argv, args, variants, nv);
	size_t n = (size_t)dpmu_wl_size(argc, argv, 2, "N", DPMU_STREAM_DEFAULT_N, 1,
					UINT64_C(1) << 26);
	uint64_t passes = dpmu_wl_size(argc, argv, 3, "PASSES", DPMU_STREAM_DEFAULT_PASSES, 1,
				       1000);
	dpmu_wl_max_args(argc, argv, 4, args);

	double *a = dpmu_wl_alloc(argv[0], n * sizeof *a);
	double *b = dpmu_wl_alloc(argv[0], n * sizeof *b);
	double *c = dpmu_wl_alloc(argv[0], n * sizeof *c);
	for (size_t i = 0; i < n; i++) {
		a[i] = (double)(i & 1023);
		b[i] = (double)((i * 7) & 1023);
		c[i] = (double)((i * 13) & 1023);
	}

	const double *dst = a;
	static const char *const regions[] = {"stream_triad", "stream_copy", "stream_scale",
					      "stream_add"};
	DPMU_REGION_BEGIN(regions[v]);
	for (uint64_t p = 0; p < passes; p++) {
		switch (v) {
		case 0:
			stream_triad(n, a, b, c);
			dst = a;
			break;
		case 1:
			stream_copy(n, c, a);
			dst = c;
			break;
		case 2:
			stream_scale(n, b, c);
			dst = b;
			break;
		default:
			stream_add(n, c, a, b);
			dst = c;
			break;
		}
	}
	DPMU_REGION_END(regions[v]);

	uint64_t h = 0;
	for (size_t i = 0; i < n; i++)
		h = dpmu_wl_mix(h, (uint64_t)dst[i]);
	dpmu_wl_report("stream", variants[v].name, n, h);
	free(a);
	free(b);
	free(c);
	return 0;
}
