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
#include <string.h>

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
	/* a cycle-count threshold below TRCIDR3.CCITMIN is raised to it */
	uint32_t idr3 = 0, ccctlr = c->ccctlr;
	if (!rc && (c->configr & DPMU_TRCCONFIGR_CCI))
		rc = rd(d, cpu, DPMU_TRCIDR(3), &idr3, err);
	if ((idr3 & 0xFFFu) > ccctlr)
		ccctlr = idr3 & 0xFFFu;
	const struct {
		uint32_t off, v;
	} w[] = {
		{ DPMU_TRCCONFIGR, c->configr },   { DPMU_TRCTRACEIDR, c->traceidr },
		{ DPMU_TRCSYNCPR, c->syncpr },     { DPMU_TRCTSCTLR, c->tsctlr },
		{ DPMU_TRCCCCTLR, ccctlr },
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

int dpmu_drv_etm_ids(struct dpmu_drv *d, unsigned cpu, uint32_t idr[14], struct dpmu_err *err)
{
	int rc = unlock(d, cpu, err);
	for (unsigned i = 0; !rc && i < 14; i++)
		rc = rd(d, cpu, DPMU_TRCIDR(i), &idr[i], err);
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

/* The resources of dynpmu's capture (docs/trace-unit.md, "How the trace
 * unit is programmed"): counter 0 counts the trigger's event down from
 * N + 1 (RS2: external input SEL0); ViewInst is counter 0 at zero (RS3) or,
 * with a window, counter 0 at zero and counter 1 not (pair 2: RS4, RS5
 * inverted), counter 1 counting INST_RETIRED (SEL1) once counter 0 is at
 * zero (pair 3: RS6, RS7); range comparator 0 includes [start, end). */
void dpmu_drv_etm_window_config(const struct dpmu_drv_etm_window *w, struct dpmu_drv_etm_config *c)
{
	enum { EXTIN = DPMU_ETM_RS_EXTIN << 16, COUNTER = DPMU_ETM_RS_COUNTER << 16 };
	memset(c, 0, sizeof *c);
	c->configr = DPMU_TRCCONFIGR_TS | DPMU_TRCCONFIGR_CID | (w->cycles ? DPMU_TRCCONFIGR_CCI : 0);
	c->ccctlr = 0;                        /* the smallest threshold: dpmu_drv_etm_start */
	c->traceidr = DPMU_DRV_ETM_TRACE_ID(w->cpu);
	c->syncpr = 12;                       /* an A-sync every 4 KiB: a wrapped sink decodes */
	/* INST_RETIRED only with a window: counting it costs the trace unit a
	 * look at every block */
	c->extinselr = w->trigger_event | (w->window ? DPMU_ETM_INST_RETIRED << 8 : 0);
	c->rsctlr[2] = EXTIN | 1u;
	c->rsctlr[3] = COUNTER | 1u;
	c->rsctlr[4] = COUNTER | 1u;
	c->rsctlr[5] = COUNTER | 2u | DPMU_TRCRSCTLR_INV;
	c->rsctlr[6] = EXTIN | 2u;
	c->rsctlr[7] = COUNTER | 1u;
	c->cntctlr[0] = 2;                    /* CNTEVENT: RS2 */
	c->cntvr[0] = w->trigger ? w->trigger_count + 1 : 0;
	c->cntctlr[1] = w->window ? DPMU_ETM_EVENT_PAIR | 3 : 0; /* pair 3, or FALSE */
	c->cntvr[1] = w->window;
	c->victlr = (w->window ? DPMU_ETM_EVENT_PAIR | 2 : 3) | DPMU_TRCVICTLR_SSSTATUS |
		    DPMU_TRCVICTLR_EXLEVEL_S(0) | DPMU_TRCVICTLR_EXLEVEL_S(1) |
		    DPMU_TRCVICTLR_EXLEVEL_S(3) | DPMU_TRCVICTLR_EXLEVEL_NS(1) |
		    DPMU_TRCVICTLR_EXLEVEL_NS(2);
	if (w->range_end > w->range_start) {
		/* the range comparator is inclusive: its last instruction */
		c->acvr[0] = w->range_start;
		c->acvr[1] = w->range_end - 4;
		c->viiectlr = 1;              /* INCLUDE: range comparator 0 */
	}
}
