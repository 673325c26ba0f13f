/*
 * What EL3 firmware does for the monitor on the simulated cluster: select
 * the AMU group-1 events and enable the AMU counters. AMCNTENSET0/1 and
 * AMEVTYPER1<n> are writable only at the highest implemented EL (Arm ARM
 * D24.6), so the driver's calls run with the core at EL3 Secure and the core
 * goes back to where it was. The backends are the only layer that may move a
 * core between exception levels: they own the model.
 */
#include "dynpmu/backend.h"
#include "dynpmu/model.h"
#include "dynpmu/uarch.h"

int dpmu_backend_amu_firmware(struct dpmu_drv *drv, struct dpmu_model *model,
			      struct dpmu_uarch *uarch, unsigned cpu, const uint16_t *events,
			      unsigned count, struct dpmu_err *err)
{
	const struct dpmu_drv_cpuinfo *ci = dpmu_drv_cpuinfo(drv, cpu);
	if (!ci || !ci->amu)
		return dpmu_err_set(err, DPMU_ENOTSUP, "cpu%u has no Activity Monitors", cpu);
	if (count > ci->amu_cg1nc)
		return dpmu_err_set(err, DPMU_EBUSY,
				    "cpu%u: %u AMU group-1 events, it has %u group-1 counters", cpu,
				    count, ci->amu_cg1nc);
	/* Events pending in the engine belong to the level the core runs at. */
	dpmu_uarch_flush_core(uarch, cpu);
	unsigned el;
	enum dpmu_security sec;
	dpmu_model_get_el(model, cpu, &el, &sec);
	int rc = dpmu_model_set_el(model, cpu, 3, DPMU_SECURE, err);
	for (unsigned i = 0; !rc && i < count; i++)
		rc = dpmu_drv_amu_select(drv, cpu, i, events[i], err);
	uint32_t g0 = ci->amu_cg0nc >= 32 ? ~0u : (1u << ci->amu_cg0nc) - 1;
	if (!rc && g0)
		rc = dpmu_drv_amu_enable(drv, cpu, 0, g0, true, err);
	if (!rc && count)
		rc = dpmu_drv_amu_enable(drv, cpu, 1, (1u << count) - 1, true, err);
	struct dpmu_err e2;
	int rc2 = dpmu_model_set_el(model, cpu, el, sec, &e2);
	if (!rc && rc2) {
		rc = rc2;
		if (err)
			*err = e2;
	}
	return rc;
}
