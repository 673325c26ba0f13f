/*
 * SYNTHETIC activity for the demo (see synth.h): per core, a phase chosen by
 * (interval + core) selects rates per thousand cycles; the cluster sees the
 * sum of the cores' L2 refills as L3 traffic. Deterministic: same output on
 * every run.
 */
#include <stddef.h>
#include <string.h>

#include "synth.h"

/* Rates per 1000 core cycles (instructions) and per 1000 instructions. */
struct phase {
	const char *name;
	unsigned ipc_milli;        /* instructions per 1000 cycles */
	unsigned ld_st_pm;         /* L1D_CACHE per 1000 instructions */
	unsigned l1d_refill_pm;    /* L1D_CACHE_REFILL per 1000 L1D_CACHE */
	unsigned l2_refill_pm;     /* L2D_CACHE_REFILL per 1000 L1D refills */
	unsigned br_pm;            /* BR_RETIRED per 1000 instructions */
	unsigned br_mis_pm;        /* BR_MIS_PRED per 1000 branches */
	unsigned stall_be_pm;      /* STALL_BACKEND per 1000 cycles */
	unsigned l3_miss_pm;       /* L3 refills per 1000 L3 accesses */
};

static const struct phase phases[] = {
	{ "compute", 2400, 300, 20, 100, 120, 15, 80, 120 },
	{ "memory-bound", 600, 450, 180, 500, 60, 10, 620, 550 },
	{ "branchy", 1100, 250, 40, 150, 220, 90, 180, 250 },
	{ "streaming", 1500, 500, 120, 700, 40, 5, 350, 450 },
};
#define NPHASES (sizeof phases / sizeof phases[0])

static const struct phase *phase_of(unsigned interval, unsigned core)
{
	return &phases[(interval + core) % NPHASES];
}

const char *dpmu_synth_phase(unsigned interval, unsigned core)
{
	return phase_of(interval, core)->name;
}

/* Deliver an event by catalog name when the target's catalog has it (the
 * two DSU numberings name L3 traffic differently). */
static void deliver(struct dpmu_model *m, bool cluster, unsigned idx,
		    const struct dpmu_event_catalog *cat, const char *name, uint64_t n)
{
	const struct dpmu_event_desc *e = dpmu_catalog_find_name(cat, name);
	if (!e || n == 0)
		return;
	if (cluster)
		dpmu_model_cluster_event(m, idx, e->code, n);
	else
		dpmu_model_core_event(m, idx, e->code, n);
}

void dpmu_synth_run(struct dpmu_model *m, unsigned interval, uint64_t ns)
{
	const struct dpmu_profile *p = dpmu_model_profile(m);
	struct dpmu_err err;
	uint64_t l3_access[DPMU_MAX_CLUSTERS] = { 0 }, l3_miss[DPMU_MAX_CLUSTERS] = { 0 };

	for (unsigned core = 0; core < dpmu_model_ncores(m); core++) {
		unsigned cl, idx;
		const struct dpmu_core_type *t = dpmu_profile_core(p, core, &cl, &idx);
		const struct dpmu_event_catalog *cat = dpmu_catalog_get(t->catalog, &err);
		const struct phase *ph = phase_of(interval, core);
		uint64_t cycles = t->freq_hz / 1000u * ns / 1000000u;
		/* A little per-core jitter so rows differ within a phase. */
		cycles -= cycles / 100u * ((core * 7u + interval * 3u) % 5u);
		uint64_t inst = cycles * ph->ipc_milli / 1000u;
		uint64_t l1d = inst * ph->ld_st_pm / 1000u;
		uint64_t l1d_refill = l1d * ph->l1d_refill_pm / 1000u;
		uint64_t l2_refill = l1d_refill * ph->l2_refill_pm / 1000u;
		uint64_t br = inst * ph->br_pm / 1000u;

		dpmu_model_core_cycles(m, core, cycles);
		if (!cat)
			continue;
		deliver(m, false, core, cat, "INST_RETIRED", inst);
		deliver(m, false, core, cat, "INST_SPEC", inst + inst / 8u);
		deliver(m, false, core, cat, "L1D_CACHE", l1d);
		deliver(m, false, core, cat, "L1D_CACHE_REFILL", l1d_refill);
		deliver(m, false, core, cat, "L2D_CACHE", l1d_refill);
		deliver(m, false, core, cat, "L2D_CACHE_REFILL", l2_refill);
		deliver(m, false, core, cat, "BR_RETIRED", br);
		deliver(m, false, core, cat, "BR_MIS_PRED", br * ph->br_mis_pm / 1000u);
		deliver(m, false, core, cat, "STALL_BACKEND", cycles * ph->stall_be_pm / 1000u);
		deliver(m, false, core, cat, "STALL_FRONTEND", cycles * (1000u - ph->stall_be_pm) / 8000u);
		l3_access[cl] += l2_refill;
		l3_miss[cl] += l2_refill * ph->l3_miss_pm / 1000u;
	}

	for (unsigned cl = 0; cl < dpmu_model_nclusters(m); cl++) {
		const struct dpmu_cluster_params *cp = &p->clusters[cl];
		const struct dpmu_event_catalog *cat = dpmu_catalog_get(cp->catalog, &err);
		uint64_t dsu_cycles = cp->freq_hz / 1000u * ns / 1000000u;
		dpmu_model_cluster_cycles(m, cl, dsu_cycles);
		if (!cat)
			continue;
		uint64_t acc = l3_access[cl], miss = l3_miss[cl];
		/* classic DSU numbering (reference section 3) */
		deliver(m, true, cl, cat, "L3D_CACHE", acc);
		deliver(m, true, cl, cat, "L3D_CACHE_REFILL", miss);
		deliver(m, true, cl, cat, "L3D_CACHE_ALLOCATE", miss);
		deliver(m, true, cl, cat, "L3D_CACHE_WB", miss / 3u);
		deliver(m, true, cl, cat, "BUS_ACCESS", miss + miss / 3u);
		deliver(m, true, cl, cat, "BUS_CYCLES", dsu_cycles);
		/* the seed's DSU-120 numbering */
		deliver(m, true, cl, cat, "L3_ACCESS", acc);
		deliver(m, true, cl, cat, "L3_MISS", miss);
		deliver(m, true, cl, cat, "SNOOP_REQ", acc / 4u);
		deliver(m, true, cl, cat, "DATA_TRANSFER", acc / 10u);
	}
}
