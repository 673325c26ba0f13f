/*
 * What the simulated backends (sim.c, qemu.c) do alike around the monitor:
 * the workload's cores run at EL0 Non-secure, as a user program under perf
 * stat; the monitor's accesses run at EL1, as a kernel driver's would.
 * Pending engine events are delivered before each switch, so each is
 * counted at the level its instruction ran at.
 */
#include "dynpmu/backend.h"
#include "dynpmu/model.h"
#include "dynpmu/uarch.h"

int dpmu_backend_set_el(struct dpmu_model *model, struct dpmu_uarch *uarch, uint64_t cores,
			unsigned el, struct dpmu_err *err)
{
	dpmu_uarch_flush(uarch);
	unsigned n = dpmu_model_ncores(model);
	for (unsigned c = 0; c < n && c < 64; c++) {
		if (!(cores >> c & 1))
			continue;
		int rc = dpmu_model_set_el(model, c, el, DPMU_NONSECURE, err);
		if (rc)
			return rc;
	}
	return 0;
}

int dpmu_backend_tick_el1(struct dpmu_model *model, struct dpmu_uarch *uarch, uint64_t cores,
			  dpmu_backend_tick_fn tick, void *ctx, struct dpmu_err *err)
{
	int rc = dpmu_backend_set_el(model, uarch, cores, 1, err);
	if (!rc)
		rc = tick(ctx, dpmu_uarch_time_ns(uarch), err);
	if (!rc)
		rc = dpmu_backend_set_el(model, uarch, cores, 0, err);
	return rc;
}

int dpmu_backend_end_el1(struct dpmu_model *model, struct dpmu_uarch *uarch, uint64_t cores,
			 int rc, struct dpmu_err *err)
{
	struct dpmu_err e2;
	int rc2 = dpmu_backend_set_el(model, uarch, cores, 1, &e2);
	if (!rc && rc2) {
		rc = rc2;
		if (err)
			*err = e2;
	}
	return rc;
}

bool dpmu_backend_irq_pending(const struct dpmu_model *model, uint64_t cores)
{
	unsigned n = dpmu_model_ncores(model);
	uint64_t clusters = 0;
	for (unsigned c = 0; c < n && c < 64; c++) {
		if (!(cores >> c & 1))
			continue;
		if (dpmu_model_core_irq(model, c))
			return true;
		clusters |= UINT64_C(1) << dpmu_model_core_cluster(model, c);
	}
	for (unsigned k = 0; k < dpmu_model_nclusters(model) && k < 64; k++)
		if ((clusters >> k & 1) && dpmu_model_cluster_irq(model, k))
			return true;
	return false;
}

bool dpmu_backend_irq_pending_cached(struct dpmu_backend_irq_cache *cache,
				     const struct dpmu_model *model, uint64_t cores)
{
	uint64_t gen = dpmu_model_irq_gen(model);
	if (!cache->known || gen != cache->gen) {
		cache->pending = dpmu_backend_irq_pending(model, cores);
		cache->gen = gen;
		cache->known = true;
	}
	return cache->pending;
}
