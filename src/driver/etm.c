/*
 * The trace unit (ETMv4) of a CPU, programmed through its external frame
 * as a debugger or a CoreSight driver does (IHI 0064, "Programming the
 * trace unit"): unlock the frame (TRCLAR) and the trace unit's OS lock
 * (TRCOSLAR), disable it (TRCPRGCTLR.EN = 0) and wait for TRCSTATR.IDLE,
 * write the configuration, enable it and wait for IDLE to clear. The
 * configuration registers may only be written while the trace unit is
 * idle; writes made otherwise are UNPREDICTABLE, so the driver never makes
 * them.
 */
#include "driver/drv_internal.h"
#include "dynpmu/etm.h"

static int wr(struct dpmu_drv *d, unsigned cpu, uint32_t off, uint32_t v, struct dpmu_err *err)
{
	struct dpmu_drv_frame f = { DPMU_REGIO_FRAME_ETM, cpu };
	return dpmu_drv_extwrite(d, f, off, v, err);
}

static int rd(struct dpmu_drv *d, unsigned cpu, uint32_t off, uint32_t *v, struct dpmu_err *err)
{
	struct dpmu_drv_frame f = { DPMU_REGIO_FRAME_ETM, cpu };
	return dpmu_drv_extread(d, f, off, v, err);
}

static int wr64(struct dpmu_drv *d, unsigned cpu, uint32_t off, uint64_t v, struct dpmu_err *err)
{
	int rc = wr(d, cpu, off, (uint32_t)v, err);
	return rc ? rc : wr(d, cpu, off + 4, (uint32_t)(v >> 32), err);
}

/* Poll TRCSTATR until IDLE reads `idle`. */
static int wait_idle(struct dpmu_drv *d, unsigned cpu, bool idle, struct dpmu_err *err)
{
	for (unsigned poll = 1;; poll++) {
		uint32_t st;
		int rc = rd(d, cpu, DPMU_TRCSTATR, &st, err);
		if (rc)
			return rc;
		if (((st & DPMU_TRCSTATR_IDLE) != 0) == idle)
			return 0;
		if (poll >= d->max_polls)
			return dpmu_err_set(err, DPMU_ESTATE,
					    "TRCSTATR in the etm%u frame: IDLE still reads %d after %u polls "
					    "(the trace unit did not %s)",
					    cpu, !idle, poll, idle ? "stop" : "start");
		if (d->wait)
			d->wait(d->wait_ctx, poll);
	}
}

static int unlock(struct dpmu_drv *d, unsigned cpu, struct dpmu_err *err)
{
	if (cpu >= d->ncpus)
		return dpmu_err_set(err, DPMU_EINVAL, "no etm%u frame: the system has etm0-etm%u", cpu,
				    d->ncpus - 1);
	int rc = wr(d, cpu, DPMU_TRCLAR, DPMU_TRCLAR_KEY, err);
	if (!rc)
		rc = wr(d, cpu, DPMU_TRCOSLAR, 0, err);
	return rc;
}

int dpmu_drv_etm_start(struct dpmu_drv *d, unsigned cpu, const struct dpmu_drv_etm_config *c,
		       struct dpmu_err *err)
{
	int rc = unlock(d, cpu, err);
	if (!rc)
		rc = wr(d, cpu, DPMU_TRCPRGCTLR, 0, err);
	if (!rc)
		rc = wait_idle(d, cpu, true, err);
	const struct {
		uint32_t off, v;
	} w[] = {
		{ DPMU_TRCCONFIGR, c->configr },   { DPMU_TRCTRACEIDR, c->traceidr },
		{ DPMU_TRCSYNCPR, c->syncpr },     { DPMU_TRCTSCTLR, c->tsctlr },
		{ DPMU_TRCCCCTLR, c->ccctlr },
		{ DPMU_TRCEVENTCTL0R, 0 },         { DPMU_TRCEVENTCTL1R, 0 },
		{ DPMU_TRCEXTINSELR, c->extinselr }, { DPMU_TRCVICTLR, c->victlr },
		{ DPMU_TRCVIIECTLR, c->viiectlr }, { DPMU_TRCVISSCTLR, c->vissctlr },
	};
	for (size_t i = 0; !rc && i < sizeof w / sizeof w[0]; i++)
		rc = wr(d, cpu, w[i].off, w[i].v, err);
	for (unsigned i = 0; !rc && i < DPMU_ETM_COUNTERS; i++) {
		rc = wr(d, cpu, DPMU_TRCCNTRLDVR(i), c->cntrldvr[i], err);
		if (!rc)
			rc = wr(d, cpu, DPMU_TRCCNTCTLR(i), c->cntctlr[i], err);
		if (!rc)
			rc = wr(d, cpu, DPMU_TRCCNTVR(i), c->cntvr[i], err);
	}
	for (unsigned n = 2; !rc && n < 16; n++)
		rc = wr(d, cpu, DPMU_TRCRSCTLR(n), c->rsctlr[n], err);
	for (unsigned i = 0; !rc && i < 2 * DPMU_ETM_AC_PAIRS; i++) {
		rc = wr64(d, cpu, DPMU_TRCACVR(i), c->acvr[i], err);
		if (!rc)
			rc = wr64(d, cpu, DPMU_TRCACATR(i), c->acatr[i], err);
	}
	if (!rc)
		rc = wr(d, cpu, DPMU_TRCPRGCTLR, DPMU_TRCPRGCTLR_EN, err);
	if (!rc)
		rc = wait_idle(d, cpu, false, err);
	return rc;
}

int dpmu_drv_etm_stop(struct dpmu_drv *d, unsigned cpu, struct dpmu_err *err)
{
	int rc = unlock(d, cpu, err);
	if (!rc)
		rc = wr(d, cpu, DPMU_TRCPRGCTLR, 0, err);
	if (!rc)
		rc = wait_idle(d, cpu, true, err);
	return rc;
}

int dpmu_drv_etm_read(struct dpmu_drv *d, unsigned cpu, uint32_t offset, uint32_t *value,
		      struct dpmu_err *err)
{
	*value = 0;
	if (cpu >= d->ncpus)
		return dpmu_err_set(err, DPMU_EINVAL, "no etm%u frame: the system has etm0-etm%u", cpu,
				    d->ncpus - 1);
	return rd(d, cpu, offset, value, err);
}
