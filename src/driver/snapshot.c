/*
 * The snapshot sequence of seed 001 section 4.1 over an EXT32 frame (core or
 * cluster): PMSSRR chooses which counters restart from zero after a capture,
 * PMSSCR.SS = 1 captures, SS reads 1 until the capture completes, and the
 * values are read from PMEVCNTSVR<n> / PMCCNTSVR.
 */
#include "driver/drv_internal.h"
#include "dynpmu/ext32.h"

/* Writes to a software-locked frame are ignored (SoftwareLockStatus makes
 * the frame read-only, reference section 2): say so instead of losing the
 * write. */
static int check_unlocked(struct dpmu_drv *d, struct dpmu_drv_frame f, const char *reg,
			  struct dpmu_err *err)
{
	uint32_t lsr;
	int rc = dpmu_drv_extread(d, f, DPMU_EXT_PMLSR, &lsr, err);
	if (rc)
		return rc;
	if (lsr & DPMU_EXT_PMLSR_SLK)
		return dpmu_err_set(err, DPMU_ESTATE,
				    "%s in the %s%u frame: the frame is software-locked (PMLSR.SLK = 1), "
				    "writes are ignored; write 0xC5ACCE55 to PMLAR first",
				    reg, dpmu_drv_frame_kind(f), f.index);
	return 0;
}

int dpmu_drv_frame_unlock(struct dpmu_drv *d, struct dpmu_drv_frame f, bool unlock,
			  struct dpmu_err *err)
{
	return dpmu_drv_extwrite(d, f, DPMU_EXT_PMLAR, unlock ? DPMU_EXT_PMLAR_KEY : 0, err);
}

int dpmu_drv_snapshot_reset_mask(struct dpmu_drv *d, struct dpmu_drv_frame f, uint32_t mask,
				 struct dpmu_err *err)
{
	int rc = check_unlocked(d, f, "PMSSRR", err);
	return rc ? rc : dpmu_drv_extwrite(d, f, DPMU_EXT_PMSSRR, mask, err);
}

int dpmu_drv_snapshot_trigger(struct dpmu_drv *d, struct dpmu_drv_frame f, struct dpmu_err *err)
{
	int rc = check_unlocked(d, f, "PMSSCR", err);
	return rc ? rc : dpmu_drv_extwrite(d, f, DPMU_EXT_PMSSCR, DPMU_EXT_PMSSCR_SS, err);
}

static int read64(struct dpmu_drv *d, struct dpmu_drv_frame f, uint32_t off, uint64_t *v,
		  struct dpmu_err *err)
{
	uint32_t lo, hi;
	int rc;
	if ((rc = dpmu_drv_extread(d, f, off, &lo, err)) ||
	    (rc = dpmu_drv_extread(d, f, off + 4, &hi, err)))
		return rc;
	*v = ((uint64_t)hi << 32) | lo;
	return 0;
}

int dpmu_drv_snapshot_collect_mask(struct dpmu_drv *d, struct dpmu_drv_frame f, uint32_t mask,
				   struct dpmu_drv_snapshot *out, struct dpmu_err *err)
{
	uint32_t sscr = 0, cfgr;
	int rc;
	*out = (struct dpmu_drv_snapshot){ 0 };
	for (unsigned poll = 1;; poll++) {
		if ((rc = dpmu_drv_extread(d, f, DPMU_EXT_PMSSCR, &sscr, err)))
			return rc;
		out->polls = poll;
		if (!(sscr & DPMU_EXT_PMSSCR_SS))
			break;
		if (poll >= d->max_polls)
			return dpmu_err_set(err, DPMU_ETIMEDOUT,
					    "PMSSCR in the %s%u frame: SS still reads 1 after %u polls "
					    "(the capture did not complete)",
					    dpmu_drv_frame_kind(f), f.index, poll);
		if (d->wait)
			d->wait(d->wait_ctx, poll);
	}
	if ((rc = dpmu_drv_extread(d, f, DPMU_EXT_PMCFGR, &cfgr, err)))
		return rc;
	unsigned n = cfgr & DPMU_EXT_PMCFGR_N_MASK;
	out->n = n > DPMU_DRV_MAX_COUNTERS ? DPMU_DRV_MAX_COUNTERS : n;
	for (unsigned i = 0; i < out->n; i++)
		if ((mask >> i & 1) && (rc = read64(d, f, DPMU_EXT_PMEVCNTSVR(i), &out->ev[i], err)))
			return rc;
	return mask & DPMU_DRV_CYCLE_BIT ? read64(d, f, DPMU_EXT_PMCCNTSVR, &out->cc, err) : 0;
}

int dpmu_drv_snapshot_collect(struct dpmu_drv *d, struct dpmu_drv_frame f,
			      struct dpmu_drv_snapshot *out, struct dpmu_err *err)
{
	return dpmu_drv_snapshot_collect_mask(d, f, UINT32_MAX, out, err);
}

int dpmu_drv_snapshot(struct dpmu_drv *d, struct dpmu_drv_frame f, struct dpmu_drv_snapshot *out,
		      struct dpmu_err *err)
{
	*out = (struct dpmu_drv_snapshot){ 0 };
	int rc = dpmu_drv_snapshot_trigger(d, f, err);
	return rc ? rc : dpmu_drv_snapshot_collect(d, f, out, err);
}
