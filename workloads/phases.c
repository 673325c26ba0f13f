/*
 * phases phased|steady|threads|twins [INSNS_M]: a program whose behaviour changes, for
 * the monitor's anomaly watch (docs/monitor.md; seed 003 section 7.2).
 *
 * phased runs four phases of 2, 1/4, 1 and 2 times INSNS_M million
 * instructions (about as long each in time):
 *   1. cache-friendly: sums over a 16 KiB array (in the L1D);
 *   2. L2 thrash: dependent random loads over 1 MiB (past the L2, inside
 *      the L3: each load refills the L2, CPI rises, memory stalls dominate);
 *   3. branchy: a data-dependent coin-toss branch over an L1-resident
 *      array (the misprediction refills dominate; little memory stall);
 *   4. cache-friendly again.
 * steady runs phase 1 for the same number of instructions. threads runs
 * phased on a second thread while the first runs phase 1 as long as steady:
 * on one core (dynpmu monitor --cpus 0) the threads take turns, and only
 * the second one's CPI changes (the monitor's per-thread baselines). twins
 * runs phased on both threads at once: on two cores of a cluster (--cpus
 * 0,1) both diagnose together, and their cluster PMU is one. Each prints a
 * checksum.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>

#include "workload.h"

#define DPMU_PHASES_DEFAULT_M 4
#define SMALL (16u << 10)
#define BIG (1u << 20)

static const struct dpmu_wl_variant variants[] = {
	{"phased", "cache-friendly, L2 thrash, branchy, cache-friendly"},
	{"steady", "cache-friendly throughout"},
	{"threads", "phased on a second thread, cache-friendly on the first meanwhile"},
	{"twins", "phased on two threads at once"},
};

#if defined(__clang__)
#define DPMU_PHASES_OPAQUE __attribute__((noinline))
#else
#define DPMU_PHASES_OPAQUE __attribute__((noipa))
#endif

DPMU_PHASES_OPAQUE uint64_t dpmu_phase_friendly(const uint64_t *a, size_t n, uint64_t insns);
DPMU_PHASES_OPAQUE uint64_t dpmu_phase_thrash(const uint32_t *next, uint64_t insns);
DPMU_PHASES_OPAQUE uint64_t dpmu_phase_branchy(const uint8_t *d, size_t n, uint64_t insns);

/* About 4 instructions an element. */
uint64_t dpmu_phase_friendly(const uint64_t *a, size_t n, uint64_t insns)
{
	uint64_t sum = 0;
	for (uint64_t done = 0; done < insns; done += 4 * n)
		for (size_t i = 0; i < n; i++)
			sum += a[i] ^ i;
	return sum;
}

/* A pointer chase through a random cycle: about 4 instructions a load. */
uint64_t dpmu_phase_thrash(const uint32_t *next, uint64_t insns)
{
	uint32_t p = 0;
	uint64_t sum = 0;
	for (uint64_t done = 0; done < insns; done += 4) {
		p = next[p];
		sum += p;
	}
	return sum;
}

/* About 6 instructions an element, half its branches mispredicted. */
uint64_t dpmu_phase_branchy(const uint8_t *d, size_t n, uint64_t insns)
{
	uint64_t sum = 0;
	for (uint64_t done = 0; done < insns; done += 6 * n)
		for (size_t i = 0; i < n; i++) {
			uint64_t x = d[i];
			if (x >= 128) {
				sum += x;
				__asm__ __volatile__("" : "+r"(sum));
			}
		}
	return sum;
}

/* The four phases over the arrays a (SMALL), d (SMALL) and a chase of BIG. */
struct dpmu_phases_work {
	const uint64_t *a;
	const uint8_t *d;
	const uint32_t *next;
	uint64_t per, h;
};

static void *dpmu_phases_run(void *arg)
{
	struct dpmu_phases_work *w = arg;
	size_t n = SMALL / sizeof(uint64_t);
	/* instruction budgets that give the phases similar times */
	w->h = dpmu_wl_mix(w->h, dpmu_phase_friendly(w->a, n, 2 * w->per));
	w->h = dpmu_wl_mix(w->h, dpmu_phase_thrash(w->next, w->per / 4));
	w->h = dpmu_wl_mix(w->h, dpmu_phase_branchy(w->d, SMALL, w->per));
	w->h = dpmu_wl_mix(w->h, dpmu_phase_friendly(w->a, n, 2 * w->per));
	return NULL;
}

int main(int argc, char **argv)
{
	const char *args = "[INSNS_M]";
	size_t v = dpmu_wl_variant(argc, argv, args, variants, 4);
	uint64_t m = dpmu_wl_size(argc, argv, 2, "INSNS_M", DPMU_PHASES_DEFAULT_M, 1, 1000);
	dpmu_wl_max_args(argc, argv, 3, args);
	uint64_t per = m * 1000000u;
	struct dpmu_wl_rng r;
	dpmu_wl_rng_seed(&r, 42);
	size_t n = SMALL / sizeof(uint64_t);
	uint64_t *a = dpmu_wl_alloc(argv[0], SMALL);
	uint8_t *d = dpmu_wl_alloc(argv[0], SMALL);
	/* The set-up is kept short (a few intervals of the monitor's
	 * learning): one random number for every 8 bytes, none for the
	 * chase. */
	for (size_t i = 0; i < n; i++)
		a[i] = dpmu_wl_rng_next(&r);
	for (size_t i = 0; i < SMALL; i += sizeof(uint64_t)) {
		uint64_t x = dpmu_wl_rng_next(&r);
		memcpy(d + i, &x, sizeof x);
	}
	uint64_t h = 0;
	if (v == 1) {
		h = dpmu_wl_mix(h, dpmu_phase_friendly(a, n, 5 * per + per / 4));
	} else {
		/* one cycle through all BIG / 64 lines, a new line every step:
		 * line x leads to (A x + C) mod lines, a full-period congruential
		 * map (Hull-Dobell: C odd, A - 1 a multiple of 4, lines a power
		 * of two), whose steps have no constant stride for a prefetcher
		 * to follow; each line's successor is found without the others,
		 * so the set-up has no chain of dependent multiplies */
		const uint32_t lines = BIG / 64, A = 0x5bd1e995u, C = 12345u;
		uint32_t *next = dpmu_wl_alloc(argv[0], BIG);
		for (uint32_t x = 0; x < lines; x++)
			next[x * 16u] = ((A * x + C) & (lines - 1)) * 16u;
		struct dpmu_phases_work w = { .a = a, .d = d, .next = next, .per = per };
		if (v == 0) {
			dpmu_phases_run(&w);
		} else {
			/* the first thread's sums over its own array, so that the
			 * second's phases are all that changes */
			uint64_t *own = dpmu_wl_alloc(argv[0], SMALL);
			memcpy(own, a, SMALL);
			pthread_t t;
			if (pthread_create(&t, NULL, dpmu_phases_run, &w) != 0) {
				fprintf(stderr, "%s: pthread_create failed\n", argv[0]);
				return 1;
			}
			/* threads: as many instructions as steady, about as long
			 * as the second thread's phases; twins: the phases too */
			uint64_t mine;
			if (v == 2) {
				mine = dpmu_phase_friendly(own, n, 5 * per + per / 4);
			} else {
				struct dpmu_phases_work w2 = { .a = own, .d = d, .next = next, .per = per };
				dpmu_phases_run(&w2);
				mine = w2.h;
			}
			pthread_join(t, NULL);
			free(own);
			h = dpmu_wl_mix(h, mine);
		}
		h = dpmu_wl_mix(h, w.h);
		free(next);
	}
	dpmu_wl_report("phases", variants[v].name, m, h);
	free(a);
	free(d);
	return 0;
}
