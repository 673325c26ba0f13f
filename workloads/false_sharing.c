/*
 * false_sharing shared|padded [THREADS] [ITERS]: THREADS threads each
 * increment their own counter ITERS times (seed 001 section 4.2: "unusually
 * high coherence traffic may point to false sharing of cache lines").
 *
 * shared packs the counters next to each other, so all of them sit in one
 * 64-byte line. The threads never touch each other's counter, but every
 * store needs the line in Unique state: each core's write invalidates the
 * line in the others (snoops through the DSU snoop filter), and the next
 * increment on another core misses in L1D and refills the line from the
 * core that wrote it last. Expect L1D_CACHE_REFILL and L1D_CACHE_INVAL
 * approaching one per increment, high cluster snoop counts (SCU_SNP_ACCESS;
 * SNOOP_REQ and DATA_TRANSFER in the DSU-120 numbering of seed 001 section
 * 4.2) and many cycles per increment.
 *
 * padded gives each counter a line of its own (alignment 64). After the
 * first touch each line stays Unique in its core's L1D: the refills and
 * snoops drop to a handful per thread. The result is the same, so both
 * variants print the same checksum.
 *
 * Every increment is a real load and store (the counters are volatile),
 * as it would be with a counter other threads read.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>

#include "workload.h"

#define DPMU_FS_LINE 64
#define DPMU_FS_MAX_THREADS 8
#define DPMU_FS_DEFAULT_THREADS 4
#define DPMU_FS_DEFAULT_ITERS 250000

/* Eight 8-byte counters in one line. */
struct dpmu_fs_shared {
	_Alignas(DPMU_FS_LINE) volatile uint64_t c[DPMU_FS_MAX_THREADS];
};

/* One counter per line. */
struct dpmu_fs_padded {
	_Alignas(DPMU_FS_LINE) volatile uint64_t c;
};

_Static_assert(sizeof(struct dpmu_fs_shared) == DPMU_FS_LINE, "shared: one line for all");
_Static_assert(sizeof(struct dpmu_fs_padded) == DPMU_FS_LINE, "padded: a line each");

static const struct dpmu_wl_variant variants[] = {
	{"shared", "all counters in one 64-byte line (false sharing)"},
	{"padded", "each counter in its own 64-byte line"},
};

struct dpmu_fs_worker {
	pthread_t tid;
	volatile uint64_t *counter;
	uint64_t iters;
	pthread_barrier_t *start;
	const char *region;
};

static void *fs_worker(void *arg)
{
	struct dpmu_fs_worker *w = arg;
	volatile uint64_t *c = w->counter;
	/* Start together, so the increments of different cores interleave. */
	pthread_barrier_wait(w->start);
	DPMU_REGION_BEGIN(w->region);
	for (uint64_t i = 0; i < w->iters; i++)
		*c = *c + 1;
	DPMU_REGION_END(w->region);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *args = "[THREADS] [ITERS]   (2-8 threads, default 4; default 250000 each)";
	size_t nv = sizeof variants / sizeof variants[0];
	size_t v = dpmu_wl_variant(argc, argv, args, variants, nv);
	unsigned nt = (unsigned)dpmu_wl_size(argc, argv, 2, "THREADS", DPMU_FS_DEFAULT_THREADS,
					     2, DPMU_FS_MAX_THREADS);
	uint64_t iters = dpmu_wl_size(argc, argv, 3, "ITERS", DPMU_FS_DEFAULT_ITERS, 1,
				      UINT64_C(1) << 32);
	dpmu_wl_max_args(argc, argv, 4, args);

	struct dpmu_fs_shared *shared = dpmu_wl_alloc(argv[0], sizeof *shared);
	struct dpmu_fs_padded *padded =
		dpmu_wl_alloc(argv[0], DPMU_FS_MAX_THREADS * sizeof *padded);
	struct dpmu_fs_worker w[DPMU_FS_MAX_THREADS];
	pthread_barrier_t start;
	if (pthread_barrier_init(&start, NULL, nt) != 0) {
		fprintf(stderr, "%s: cannot create a barrier for %u threads\n", argv[0], nt);
		return 1;
	}
	for (unsigned t = 0; t < nt; t++) {
		w[t].counter = v == 0 ? &shared->c[t] : &padded[t].c;
		w[t].iters = iters;
		w[t].start = &start;
		w[t].region = v == 0 ? "false_sharing_shared" : "false_sharing_padded";
		int rc = pthread_create(&w[t].tid, NULL, fs_worker, &w[t]);
		if (rc != 0) {
			fprintf(stderr, "%s: cannot start thread %u of %u: %s\n", argv[0], t + 1, nt,
				strerror(rc));
			return 1;
		}
	}
	uint64_t h = 0;
	for (unsigned t = 0; t < nt; t++) {
		pthread_join(w[t].tid, NULL);
		h = dpmu_wl_mix(h, *w[t].counter);
	}
	pthread_barrier_destroy(&start);
	dpmu_wl_report("false_sharing", variants[v].name, nt, h);
	free(shared);
	free(padded);
	return 0;
}
