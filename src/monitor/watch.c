/*
 * The anomaly watch and the diagnosis groups (include/dynpmu/monitor.h,
 * "the anomaly watch"): seed 003's automated framework, whose AMU keeps a
 * baseline of each task's CPI at almost no cost and whose PMU is
 * programmed for a diagnosis only when the CPI leaves it (sections 5.3
 * and 7.2). The statistic is the median and the MAD: a few outliers in the
 * learning intervals (a page-fault burst, the program's start) move
 * neither, where a mean and a standard deviation would follow them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dynpmu/monitor.h"

/* 1.4826 x MAD is the standard deviation of normally distributed data. */
#define MAD_TO_SIGMA 1.4826

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(const double *v, unsigned n)
{
	double s[DPMU_MON_WATCH_LEARN_MAX];
	memcpy(s, v, n * sizeof *v);
	qsort(s, n, sizeof *s, cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double mad(const double *v, unsigned n, double m)
{
	double d[DPMU_MON_WATCH_LEARN_MAX];
	for (unsigned i = 0; i < n; i++)
		d[i] = fabs(v[i] - m);
	return median(d, n);
}

int dpmu_mon_watch_init(struct dpmu_mon_watch *w, const struct dpmu_mon_watch_opts *o,
			const struct dpmu_mon_baseline *base, struct dpmu_err *err)
{
	static const struct dpmu_mon_watch_opts def = DPMU_MON_WATCH_DEFAULTS;
	memset(w, 0, sizeof *w);
	w->o = o ? *o : def;
	if (w->o.learn < 3 || w->o.learn > DPMU_MON_WATCH_LEARN_MAX)
		return dpmu_err_set(err, DPMU_EINVAL, "baseline of %u intervals: give 3 to %u",
				    w->o.learn, DPMU_MON_WATCH_LEARN_MAX);
	if (!(w->o.k > 0 && w->o.k <= 100))
		return dpmu_err_set(err, DPMU_EINVAL, "band of %g MADs: give more than 0, at most 100",
				    w->o.k);
	if (!(w->o.floor >= 0 && w->o.floor <= 10) || !(w->o.stall_floor >= 0 && w->o.stall_floor <= 1))
		return dpmu_err_set(err, DPMU_EINVAL,
				    "least band %g (CPI, 0 to 10) / %g (stall share, 0 to 1)", w->o.floor,
				    w->o.stall_floor);
	if (w->o.consecutive < 1 || w->o.consecutive > 100)
		return dpmu_err_set(err, DPMU_EINVAL, "%u intervals in a row: give 1 to 100",
				    w->o.consecutive);
	if (base) {
		if (!(base->cpi > 0) || !(base->cpi_mad >= 0) || !(base->stall >= 0) ||
		    !(base->stall_mad >= 0))
			return dpmu_err_set(err, DPMU_EINVAL,
					    "baseline CPI %g (MAD %g), stall share %g (MAD %g): CPI must "
					    "be positive, the others not negative",
					    base->cpi, base->cpi_mad, base->stall, base->stall_mad);
		w->base = *base;
		w->state = DPMU_MON_STEADY;
	}
	return 0;
}

bool dpmu_mon_watch_judges(const struct dpmu_mon_watch *w, uint64_t insns, uint64_t cycles)
{
	return insns && cycles && insns >= w->o.min_insns;
}

double dpmu_mon_watch_band(const struct dpmu_mon_watch *w)
{
	return fmax(w->o.k * MAD_TO_SIGMA * w->base.cpi_mad, w->o.floor * w->base.cpi);
}

bool dpmu_mon_watch_outside(const struct dpmu_mon_watch *w, double cpi, double stall)
{
	double hs = fmax(w->o.k * MAD_TO_SIGMA * w->base.stall_mad, w->o.stall_floor);
	return fabs(cpi - w->base.cpi) > dpmu_mon_watch_band(w) || fabs(stall - w->base.stall) > hs;
}

/* The anomaly's level: the median of its CPIs so far. */
static bool leaves_level(const struct dpmu_mon_watch *w, double cpi)
{
	if (!w->nlevel)
		return false;
	double m = median(w->level, w->nlevel);
	return fabs(cpi - m) > fmax(dpmu_mon_watch_band(w), w->o.floor * m);
}

static void level_push(struct dpmu_mon_watch *w, double cpi)
{
	if (w->nlevel == DPMU_MON_WATCH_LEVEL_MAX) {
		memmove(w->level, w->level + 1, (DPMU_MON_WATCH_LEVEL_MAX - 1) * sizeof w->level[0]);
		w->nlevel--;
	}
	w->level[w->nlevel++] = cpi;
}

enum dpmu_mon_watch_event dpmu_mon_watch_step(struct dpmu_mon_watch *w, double cpi, double stall)
{
	switch (w->state) {
	case DPMU_MON_LEARNING:
		w->learn_cpi[w->nlearn] = cpi;
		w->learn_stall[w->nlearn] = stall;
		if (++w->nlearn < w->o.learn)
			return DPMU_MON_NOTHING;
		w->base.cpi = median(w->learn_cpi, w->nlearn);
		w->base.cpi_mad = mad(w->learn_cpi, w->nlearn, w->base.cpi);
		w->base.stall = median(w->learn_stall, w->nlearn);
		w->base.stall_mad = mad(w->learn_stall, w->nlearn, w->base.stall);
		w->base.intervals = w->nlearn;
		w->state = DPMU_MON_STEADY;
		return DPMU_MON_BASELINE;
	case DPMU_MON_STEADY:
		if (!dpmu_mon_watch_outside(w, cpi, stall)) {
			w->run = 0;
			return DPMU_MON_NOTHING;
		}
		if (++w->run < w->o.consecutive)
			return DPMU_MON_NOTHING;
		w->run = 0;
		w->nlevel = 0;
		w->state = DPMU_MON_ANOMALY;
		w->anomalies++;
		return DPMU_MON_ANOMALY_START;
	case DPMU_MON_ANOMALY:
		if (!dpmu_mon_watch_outside(w, cpi, stall)) {
			w->away = 0;
			if (++w->run < w->o.consecutive)
				return DPMU_MON_NOTHING;
			w->run = 0;
			w->nlevel = 0;
			w->state = DPMU_MON_STEADY;
			return DPMU_MON_ANOMALY_END;
		}
		w->run = 0;
		/* the anomaly's level forms from the intervals after its start
		 * (the ones that started it may straddle the change) */
		if (w->nlevel < w->o.consecutive || !leaves_level(w, cpi)) {
			w->away = 0;
			level_push(w, cpi);
			return DPMU_MON_NOTHING;
		}
		/* a run of intervals away from the anomaly's level: a new one */
		if (++w->away < w->o.consecutive)
			return DPMU_MON_NOTHING;
		w->away = 0;
		w->nlevel = 0;
		w->anomalies++;
		return DPMU_MON_ANOMALY_CHANGE;
	}
	return DPMU_MON_NOTHING;
}

/* Seed 003 section 7.2 step 2: memory hierarchy (refills at each level,
 * the TLB walks, back-end stalls), front end (instruction refills,
 * mispredictions, front-end stalls), coherence (the cluster's snoops, the
 * data other cores' caches supplied, the L3 lookups they are a share of).
 * The coherence group names both DSU numberings (seed 001 section 4.2):
 * the classic DSU's SCU_SNP_ACCESS, L3D_CACHE, L3D_CACHE_REFILL and the
 * DSU-120's SNOOP_REQ, DATA_TRANSFER, L3_ACCESS; a cluster PMU counts the
 * three it implements, the others are left out of the group. */
static const struct dpmu_mon_diag groups[DPMU_MON_DIAG_GROUPS] = {
	{ "memory hierarchy", DPMU_MON_CORE,
	  { "L1D_CACHE_REFILL", "L2D_CACHE_REFILL", "L3D_CACHE_REFILL", "DTLB_WALK", "STALL_BACKEND",
	    "L1D_CACHE" } },
	{ "front end", DPMU_MON_CORE,
	  { "L1I_CACHE_REFILL", "BR_MIS_PRED_RETIRED", "BR_RETIRED", "ITLB_WALK", "STALL_FRONTEND",
	    "L1I_CACHE" } },
	{ "coherence", DPMU_MON_CLUSTER,
	  { "SCU_SNP_ACCESS", "L3D_CACHE", "L3D_CACHE_REFILL", "SNOOP_REQ", "DATA_TRANSFER",
	    "L3_ACCESS" } },
};

const struct dpmu_mon_diag *dpmu_mon_diag_group(enum dpmu_mon_diag_group g)
{
	return (unsigned)g < DPMU_MON_DIAG_GROUPS ? &groups[g] : NULL;
}
