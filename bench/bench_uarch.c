/*
 * Accesses per second through the engine (src/uarch): loads that hit the
 * L1D, loads that miss L1D and hit L2, loads that miss the L3, on one core
 * and on four cores interleaved. The default profile with prefetchers off
 * (so each mix is served by the level it names). One JSON object per
 * measurement; the hit/refill ratios printed with it show the mix did what
 * it says. Usage: bench_uarch [accesses per measurement, default 4000000] [mix]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "dynpmu/arch.h"
#include "dynpmu/model.h"
#include "dynpmu/uarch.h"

struct tally {
	uint64_t l1d, l1d_refill, l2d_refill, l3d_refill;
};

static void observe(void *ctx, bool cluster, unsigned index, uint16_t event, uint64_t n)
{
	struct tally *t = ctx;
	(void)index;
	if (cluster)
		return;
	switch (event) {
	case 0x04: t->l1d += n; break;
	case 0x03: t->l1d_refill += n; break;
	case 0x17: t->l2d_refill += n; break;
	case 0x2A: t->l3d_refill += n; break;
	default: break;
	}
}

#define CHUNK 256

static int run(const struct dpmu_profile *p, const char *mix, uint64_t span, unsigned ncores,
	       uint64_t accesses)
{
	struct dpmu_err err;
	struct dpmu_model *m = NULL;
	struct dpmu_uarch *u = NULL;
	if (dpmu_model_create(p, &m, &err) || dpmu_uarch_create(m, p, &u, &err)) {
		fprintf(stderr, "bench_uarch: %s\n", dpmu_errmsg(&err));
		dpmu_model_destroy(m);
		return 1;
	}
	struct tally t = { 0 };
	dpmu_uarch_set_observer(u, observe, NULL, &t);
	struct dpmu_insn buf[CHUNK];
	uint64_t pos[4] = { 0 };
	/* Warm the caches with one pass of each core's region. */
	for (int phase = 0; phase < 2; phase++) {
		uint64_t todo = phase == 0 ? (span / 64) * ncores : accesses;
		if (phase == 1) {
			dpmu_uarch_flush(u);
			memset(&t, 0, sizeof t);
		}
		double t0 = bench_now();
		uint64_t done = 0;
		while (done < todo) {
			for (unsigned c = 0; c < ncores && done < todo; c++) {
				unsigned n = 0;
				for (; n < CHUNK && done < todo; n++, done++) {
					uint64_t a = 0x10000000ull * (c + 1) + pos[c];
					pos[c] = (pos[c] + 64) % span;
					buf[n] = (struct dpmu_insn){ .pc = 0x1000, .addr = a, .size = 8,
								     .kind = DPMU_INSN_LOAD,
								     .isize = 4 };
				}
				dpmu_uarch_retire(u, c, buf, n);
			}
		}
		dpmu_uarch_flush(u);
		double dt = bench_now() - t0;
		if (phase == 1)
			printf("{\"bench\":\"uarch\",\"mix\":\"%s\",\"cores\":%u,\"accesses\":%llu,"
			       "\"seconds\":%.4f,\"accesses_per_sec\":%.0f,\"ns_per_access\":%.2f,"
			       "\"l1d_miss_ratio\":%.3f,\"l2d_refills_per_access\":%.3f,"
			       "\"l3d_refills_per_access\":%.3f}\n",
			       mix, ncores, (unsigned long long)accesses, dt, accesses / dt,
			       dt * 1e9 / accesses, t.l1d ? (double)t.l1d_refill / t.l1d : 0.0,
			       (double)t.l2d_refill / accesses, (double)t.l3d_refill / accesses);
	}
	dpmu_uarch_destroy(u);
	dpmu_model_destroy(m);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t accesses = bench_count_arg(argc, argv, "bench_uarch", "accesses", 4000000);
	struct dpmu_err err;
	struct dpmu_profile *p = NULL;
	if (dpmu_profile_load(DPMU_PROFILE_DEFAULT, &p, &err)) {
		fprintf(stderr, "bench_uarch: %s\n", dpmu_errmsg(&err));
		return 1;
	}
	for (unsigned t = 0; t < p->n_core_types; t++) {
		p->core_types[t].l1i.prefetch = DPMU_PREFETCH_NONE;
		p->core_types[t].l1d.prefetch = DPMU_PREFETCH_NONE;
		p->core_types[t].l2.prefetch = DPMU_PREFETCH_NONE;
	}
	for (unsigned c = 0; c < p->nclusters; c++)
		p->clusters[c].l3.prefetch = DPMU_PREFETCH_NONE;
	/* Spans per core (cpu0-3 are Cortex-A75: 64 KiB L1D, 256 KiB L2; the
	 * cluster's L3 is 2 MiB). */
	const struct {
		const char *mix;
		uint64_t span;
	} mixes[] = {
		{ "l1_hit", 16u << 10 },
		{ "l2_hit", 128u << 10 },
		{ "l3_miss", 64u << 20 },
	};
	int rc = 0;
	const char *only = argc > 2 ? argv[2] : NULL;
	for (unsigned i = 0; i < 3 && !rc; i++)
		for (unsigned nc = 1; nc <= 4 && !rc; nc += 3)
			rc = only && strcmp(only, mixes[i].mix) ? 0 : run(p, mixes[i].mix, mixes[i].span, nc, accesses);
	dpmu_profile_free(p);
	return rc;
}
