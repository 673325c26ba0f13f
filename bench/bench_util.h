/* Timing helpers shared by the benchmarks (each bench_*.c prints JSON). */
#ifndef DPMU_BENCH_UTIL_H
#define DPMU_BENCH_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
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

/* The benchmark's size from argv[1] (what: its unit, for the message), or
 * dflt without one. Anything but a positive decimal or 0x count ends the
 * run with a message and exit status 2: a typo must not measure a run of
 * 0 or of the default and print it as asked for. */
static inline uint64_t bench_count_arg(int argc, char **argv, const char *name,
				       const char *what, uint64_t dflt)
{
	if (argc < 2)
		return dflt;
	const char *s = argv[1];
	char *end = (char *)s;
	unsigned long long v = 0;
	errno = 0;
	/* strtoull would take leading blanks and a minus sign (wrapping it) */
	if (s[0] >= '0' && s[0] <= '9')
		v = strtoull(s, &end, 0);
	if (end == s || *end || errno || v == 0) {
		fprintf(stderr, "%s: '%s' is not a positive count of %s (the first argument)\n", name,
			s, what);
		exit(2);
	}
	return v;
}

#endif
