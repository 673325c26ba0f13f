/*
 * matmul naive|blocked [N]: C = A * B for N x N doubles (seed 003 section 6.1,
 * "adjust the block size to fit the L1 cache").
 *
 * naive walks B down a column in the inner loop: consecutive loads are N * 8
 * bytes apart, so each one touches a new line, and with N a power of two the
 * column falls into a handful of L1D sets. B (N * N * 8 bytes, 128 KiB at the
 * default N = 128) is larger than either core's L1D (64 KiB Cortex-A75,
 * 32 KiB Cortex-A55), so it is refilled from L2 for every row of C.
 *
 * blocked runs the same multiply-adds tile by tile: a 32 x 32 tile of B is
 * 8 KiB and stays in L1D while every row of A uses it, together with the
 * 32-element strips of A and C a row needs (three tiles are 24 KiB, inside
 * even the 32 KiB L1D), four columns of C at a time. L1D_CACHE_REFILL falls
 * by about two orders of magnitude; naive's one serial chain of FP adds
 * (an add's latency per multiply-add) becomes four independent ones.
 *
 * The elements are small integers, so every product and partial sum is an
 * exact double and both variants give bit-identical C whatever order or
 * fused multiply-add the compiler picks: the checksums must match.
 */
#define _POSIX_C_SOURCE 200809L
#include "workload.h"

#define DPMU_MATMUL_TILE 32
#define DPMU_MATMUL_DEFAULT_N 128
#define DPMU_MATMUL_MAX_N 1024

static const struct dpmu_wl_variant variants[] = {
	{"naive", "i-j-k loops, inner loop strides down a column of B"},
	{"blocked", "the same dot products over 32 x 32 tiles of B that stay in L1D"},
};

static void matmul_naive(size_t n, const double *a, const double *b, double *c)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			double sum = 0.0;
			for (size_t k = 0; k < n; k++)
				sum += a[i * n + k] * b[k * n + j];
			c[i * n + j] = sum;
		}
}

static size_t min_size(size_t x, size_t y)
{
	return x < y ? x : y;
}

/*
 * The same dot products as naive, cut into tiles over k and j: for one tile
 * of B (t x t doubles, 8 KiB) every row i of A runs its t-long partial dot
 * products against the tile's t columns, so the tile is loaded once and
 * reused n times from L1D. Within a tile, four columns of C at a time
 * (unroll and jam): each element of A is loaded once for four products,
 * and the four sums are independent chains of FP adds where naive has
 * one, each still summed in increasing k like naive's.
 */
static void matmul_blocked(size_t n, const double *a, const double *b, double *c)
{
	const size_t t = DPMU_MATMUL_TILE;
	/* C starts at zero (dpmu_wl_alloc) and accumulates tile by tile, in
	 * increasing k like naive. */
	for (size_t kk = 0; kk < n; kk += t) {
		size_t ke = min_size(kk + t, n);
		for (size_t jj = 0; jj < n; jj += t) {
			size_t je = min_size(jj + t, n);
			for (size_t i = 0; i < n; i++) {
				const double *ai = a + i * n;
				double *ci = c + i * n;
				size_t j = jj;
				for (; j + 4 <= je; j += 4) {
					double s0 = ci[j], s1 = ci[j + 1], s2 = ci[j + 2], s3 = ci[j + 3];
					for (size_t k = kk; k < ke; k++) {
						const double x = ai[k];
						const double *bk = b + k * n + j;
						s0 += x * bk[0];
						s1 += x * bk[1];
						s2 += x * bk[2];
						s3 += x * bk[3];
					}
					ci[j] = s0;
					ci[j + 1] = s1;
					ci[j + 2] = s2;
					ci[j + 3] = s3;
				}
				for (; j < je; j++) {
					double sum = ci[j];
					for (size_t k = kk; k < ke; k++)
						sum += ai[k] * b[k * n + j];
					ci[j] = sum;
				}
			}
		}
	}
}

int main(int argc, char **argv)
{
	const char *args = "[N]   (N x N doubles, default 128)";
	size_t nv = sizeof variants / sizeof variants[0];
	size_t v = dpmu_wl_variant(argc, argv, args, variants, nv);
	size_t n = (size_t)dpmu_wl_size(argc, argv, 2, "N", DPMU_MATMUL_DEFAULT_N, 1,
					DPMU_MATMUL_MAX_N);
	dpmu_wl_max_args(argc, argv, 3, args);

	double *a = dpmu_wl_alloc(argv[0], n * n * sizeof *a);
	double *b = dpmu_wl_alloc(argv[0], n * n * sizeof *b);
	double *c = dpmu_wl_alloc(argv[0], n * n * sizeof *c);
	struct dpmu_wl_rng r;
	dpmu_wl_rng_seed(&r, 0x6d61746d756cull);
	/* Values 0..15: a sum of N <= 1024 products stays below 2^18, exact. */
	for (size_t i = 0; i < n * n; i++) {
		a[i] = (double)dpmu_wl_rng_below(&r, 16);
		b[i] = (double)dpmu_wl_rng_below(&r, 16);
	}

	if (v == 0) {
		DPMU_REGION_BEGIN("matmul_naive");
		matmul_naive(n, a, b, c);
		DPMU_REGION_END("matmul_naive");
	} else {
		DPMU_REGION_BEGIN("matmul_blocked");
		matmul_blocked(n, a, b, c);
		DPMU_REGION_END("matmul_blocked");
	}

	uint64_t h = 0;
	for (size_t i = 0; i < n * n; i++)
		h = dpmu_wl_mix(h, (uint64_t)c[i]);
	dpmu_wl_report("matmul", variants[v].name, n, h);
	free(a);
	free(b);
	free(c);
	return 0;
}
