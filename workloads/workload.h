/*
 * Shared helpers of the case-study workloads (docs/workloads.md): argument
 * parsing with clear messages, a seeded generator, and the checksum line.
 *
 * Every workload is `NAME VARIANT [SIZE ...]`. It prints one line
 *
 *     NAME VARIANT size=N checksum=0x...
 *
 * so the work cannot be optimised away and a test can compare variants that
 * compute the same result. Bad arguments print a usage message naming the
 * argument and exit 2; nothing here depends on the simulated cluster, so the
 * programs also run natively (the markers then compile to nothing).
 */
#ifndef DPMU_WORKLOAD_H
#define DPMU_WORKLOAD_H

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynpmu/marker.h"

#define DPMU_WL_EXIT_USAGE 2

/* One variant of a workload: its name on the command line and its kernel. */
struct dpmu_wl_variant {
	const char *name;
	const char *what;
};

static inline void dpmu_wl_usage(const char *prog, const char *args,
				 const struct dpmu_wl_variant *v, size_t nv)
{
	fprintf(stderr, "usage: %s VARIANT %s\nvariants:\n", prog, args);
	for (size_t i = 0; i < nv; i++)
		fprintf(stderr, "  %-12s %s\n", v[i].name, v[i].what);
}

/* The index of argv[1] among the variants, or exit 2 with a message. */
static inline size_t dpmu_wl_variant(int argc, char **argv, const char *args,
				     const struct dpmu_wl_variant *v, size_t nv)
{
	if (argc < 2) {
		fprintf(stderr, "%s: missing VARIANT\n", argv[0]);
		dpmu_wl_usage(argv[0], args, v, nv);
		exit(DPMU_WL_EXIT_USAGE);
	}
	for (size_t i = 0; i < nv; i++)
		if (strcmp(argv[1], v[i].name) == 0)
			return i;
	fprintf(stderr, "%s: unknown variant '%s'\n", argv[0], argv[1]);
	dpmu_wl_usage(argv[0], args, v, nv);
	exit(DPMU_WL_EXIT_USAGE);
}

/*
 * argv[idx] as an unsigned integer in [lo, hi], or def when absent. A value
 * that is not a plain decimal number or is out of range exits 2 with a
 * message naming the argument, its text and the accepted range.
 */
static inline uint64_t dpmu_wl_size(int argc, char **argv, int idx, const char *what,
				    uint64_t def, uint64_t lo, uint64_t hi)
{
	if (argc <= idx)
		return def;
	const char *s = argv[idx];
	char *end = NULL;
	errno = 0;
	unsigned long long v = (s[0] >= '0' && s[0] <= '9') ? strtoull(s, &end, 10) : 0;
	if (end == NULL || *end != '\0' || errno != 0 || v < lo || v > hi) {
		fprintf(stderr, "%s: %s '%s' is not a number from %" PRIu64 " to %" PRIu64 "\n",
			argv[0], what, s, lo, hi);
		exit(DPMU_WL_EXIT_USAGE);
	}
	return (uint64_t)v;
}

/* Too many arguments is a mistake worth saying, not ignoring. */
static inline void dpmu_wl_max_args(int argc, char **argv, int max, const char *args)
{
	if (argc > max) {
		fprintf(stderr, "%s: unexpected argument '%s'\nusage: %s VARIANT %s\n", argv[0],
			argv[max], argv[0], args);
		exit(DPMU_WL_EXIT_USAGE);
	}
}

/* xorshift64*: small, fast and the same sequence on every host and run. */
struct dpmu_wl_rng {
	uint64_t s;
};

static inline void dpmu_wl_rng_seed(struct dpmu_wl_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ull;
}

static inline uint64_t dpmu_wl_rng_next(struct dpmu_wl_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

/* A value in [0, n) (n > 0); the tiny modulo bias does not matter here. */
static inline uint64_t dpmu_wl_rng_below(struct dpmu_wl_rng *r, uint64_t n)
{
	return (dpmu_wl_rng_next(r) >> 11) % n;
}

/* Fold one value into a running checksum (order-sensitive, 64-bit). */
static inline uint64_t dpmu_wl_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static inline void dpmu_wl_report(const char *name, const char *variant, uint64_t size,
				  uint64_t checksum)
{
	printf("%s %s size=%" PRIu64 " checksum=0x%016" PRIx64 "\n", name, variant, size,
	       checksum);
}

/* Memory for a kernel: aligned to a cache line (64 bytes on every core of the
 * default profile) so line-level effects do not depend on malloc's layout. */
static inline void *dpmu_wl_alloc(const char *prog, size_t bytes)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) {
		fprintf(stderr, "%s: cannot allocate %zu bytes\n", prog, bytes);
		exit(1);
	}
	memset(p, 0, bytes);
	return p;
}

#endif
