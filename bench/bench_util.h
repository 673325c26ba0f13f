/* Timing helpers shared by the benchmarks (each bench_*.c prints JSON). */
#ifndef DPMU_BENCH_UTIL_H
#define DPMU_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* Monotonic wall time in seconds. */
static inline double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of n runs (sorts v). */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
	return v[n / 2];
}

#endif
