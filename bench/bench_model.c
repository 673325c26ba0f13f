/*
 * Event delivery into the model: how many dpmu_model_core_event /
 * dpmu_model_core_cycles calls per second the monitoring hardware absorbs,
 * with six event counters and the cycle counter enabled on every core
 * (issue: "Benchmark the delivery path"), on 1 core and on 8 cores in turn.
 * Each delivery is one event occurrence (n = 1, the engine's worst case) or
 * a batch of 64; every fourth event is one no counter watches.
 * Prints one JSON object per measurement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"
#include "dynpmu/arch.h"
#include "dynpmu/model.h"

#define PMCR_EL0 DPMU_SYSREG(3, 3, 9, 12, 0)
#define PMCNTENSET_EL0 DPMU_SYSREG(3, 3, 9, 12, 1)
#define PMEVTYPER(n) DPMU_SYSREG(3, 3, 14, 12 + ((n) >> 3), (n) & 7)
#define PMEVCNTR(n) DPMU_SYSREG(3, 3, 14, 8 + ((n) >> 3), (n) & 7)

static const uint16_t programmed[6] = { 0x08, 0x04, 0x03, 0x10, 0x12, 0x24 };
/* What the deliveries carry: the six programmed events and two nobody counts. */
static const uint16_t stream[8] = { 0x08, 0x04, 0x03, 0x13, 0x10, 0x12, 0x24, 0x16 };

static void program(struct dpmu_model *m, unsigned core)
{
	for (unsigned i = 0; i < 6; i++)
		dpmu_model_sysreg_write(m, core, PMEVTYPER(i), programmed[i]);
	dpmu_model_sysreg_write(m, core, PMCNTENSET_EL0, 0x8000003full);
	dpmu_model_sysreg_write(m, core, PMCR_EL0, 0x7);
}

static void measure(struct dpmu_model *m, unsigned ncores, uint64_t batch, uint64_t calls)
{
	double best = 0;
	uint64_t check = 0;
	for (int rep = 0; rep < 3; rep++) {
		double t0 = bench_now();
		for (uint64_t i = 0; i < calls; i++) {
			unsigned core = (unsigned)(i % ncores);
			if ((i & 7) == 7)
				dpmu_model_core_cycles(m, core, batch);
			else
				dpmu_model_core_event(m, core, stream[i & 7], batch);
		}
		double dt = bench_now() - t0;
		if (best == 0 || dt < best)
			best = dt;
	}
	/* Read something back so the deliveries cannot be optimised away. */
	uint64_t v = 0;
	dpmu_model_sysreg_read(m, 0, PMEVCNTR(0), &v);
	check += v;
	printf("{\"bench\":\"model_delivery\",\"cores\":%u,\"batch\":%llu,\"calls\":%llu,"
	       "\"seconds\":%.4f,\"calls_per_s\":%.0f,\"events_per_s\":%.0f,\"check\":%llu}\n",
	       ncores, (unsigned long long)batch, (unsigned long long)calls, best,
	       (double)calls / best, (double)calls * (double)batch / best,
	       (unsigned long long)check);
}

int main(int argc, char **argv)
{
	uint64_t calls = bench_count_arg(argc, argv, "bench_model", "calls", 20000000ull);
	struct dpmu_err err;
	struct dpmu_profile *p = NULL;
	struct dpmu_model *m = NULL;
	if (dpmu_profile_load(DPMU_PROFILE_DEFAULT, &p, &err) != 0 ||
	    dpmu_model_create(p, &m, &err) != 0) {
		fprintf(stderr, "bench_model: %s\n", dpmu_errmsg(&err));
		return 1;
	}
	for (unsigned c = 0; c < dpmu_model_ncores(m); c++)
		program(m, c);
	measure(m, 1, 1, calls);
	measure(m, dpmu_model_ncores(m), 1, calls);
	measure(m, 1, 64, calls);
	measure(m, dpmu_model_ncores(m), 64, calls);
	dpmu_model_destroy(m);
	dpmu_profile_free(p);
	return 0;
}
