/*
 * The diagnosis state machine (include/dynpmu/monitor.h, "the diagnosis";
 * seed 003 section 7.2 step 2): the groups of dpmu_mon_diag_group count in
 * turn, one interval each, through the driver. What the counts mean is
 * the analysis's (src/analysis/diagnose.c); what starts and logs a
 * diagnosis is the command's. Kept here, behind the driver, so that a
 * perf_event backend's monitor runs the same sequence.
 */
#include <stdio.h>
#include <string.h>

#include "dynpmu/monitor.h"

int dpmu_mon_diagnoser_init(struct dpmu_mon_diagnoser *x, struct dpmu_drv *drv,
			    const struct dpmu_profile *p, uint64_t cores, struct dpmu_err *err)
{
	(void)err;
	memset(x, 0, sizeof *x);
	x->drv = drv;
	x->p = p;
	for (unsigned g = 0; g < DPMU_MON_DIAG_GROUPS; g++) {
		const struct dpmu_mon_diag *dg = dpmu_mon_diag_group((enum dpmu_mon_diag_group)g);
		struct dpmu_mon_events *ev = &x->ev[g];
		for (unsigned i = 0; i < DPMU_MON_DIAG_EVENTS && dg->events[i]; i++) {
			char name[96];
			snprintf(name, sizeof name, dg->target == DPMU_MON_CLUSTER ? "cluster/%s/" : "%s",
				 dg->events[i]);
			struct dpmu_mon_events one;
			struct dpmu_err e2;
			if (dpmu_mon_events_parse(name, p, cores, &one, &e2)) {
				/* not in this profile's catalogs: the group counts without it */
				for (unsigned t = 0; t < DPMU_MAX_CORE_TYPES; t++)
					one.ev[0].code[t] = DPMU_MON_NO_CODE;
				for (unsigned cl = 0; cl < DPMU_MAX_CLUSTERS; cl++)
					one.ev[0].cluster_code[cl] = DPMU_MON_NO_CODE;
			}
			ev->ev[ev->n++] = one.ev[0];
		}
	}
	return 0;
}

void dpmu_mon_diagnosis_init(struct dpmu_mon_diagnosis *d, unsigned cpu, unsigned cluster,
			     unsigned type)
{
	memset(d, 0, sizeof *d);
	d->cpu = cpu;
	d->cluster = cluster;
	d->type = type;
	d->group = -1;
}

static const struct dpmu_mon_diag *group_of(const struct dpmu_mon_diagnosis *d)
{
	return dpmu_mon_diag_group((enum dpmu_mon_diag_group)d->group);
}

static int program(struct dpmu_mon_diagnoser *x, struct dpmu_mon_diagnosis *d,
		   struct dpmu_err *err)
{
	struct dpmu_drv *drv = x->drv;
	const struct dpmu_mon_diag *g = group_of(d);
	const struct dpmu_mon_events *ev = &x->ev[d->group];
	bool cl = g->target == DPMU_MON_CLUSTER;
	unsigned unit = cl ? d->cluster : d->cpu;
	int rc = cl ? dpmu_drv_cluster_reset(drv, unit, err) : dpmu_drv_pmu_reset(drv, unit, 0, err);
	d->n = 0;
	uint32_t mask = 0;
	for (unsigned i = 0; !rc && i < ev->n && d->n < DPMU_MON_DIAG_EVENTS; i++) {
		int32_t code = cl ? ev->ev[i].cluster_code[d->cluster] : ev->ev[i].code[d->type];
		if (code < 0)
			continue; /* this core type or DSU does not implement it */
		unsigned k = d->n++;
		d->code[k] = (uint16_t)code;
		d->name[k] = g->events[i];
		rc = cl ? dpmu_drv_cluster_program(drv, unit, k, (uint16_t)code, err)
			: dpmu_drv_pmu_program(drv, unit, k, (uint16_t)code, DPMU_DRV_EL01, err);
		mask |= 1u << k;
	}
	if (!rc)
		rc = cl ? dpmu_drv_cluster_start(drv, unit, mask, err)
			: dpmu_drv_pmu_start(drv, unit, mask, err);
	if (!rc)
		rc = cl ? dpmu_drv_cluster_enable(drv, unit, true, err)
			: dpmu_drv_pmu_enable(drv, unit, true, err);
	return rc;
}

/* The group counting now stops, and a cluster PMU is free for another
 * core's diagnosis. */
static int halt(struct dpmu_mon_diagnoser *x, struct dpmu_mon_diagnosis *d, struct dpmu_err *err)
{
	if (group_of(d)->target != DPMU_MON_CLUSTER)
		return dpmu_drv_pmu_enable(x->drv, d->cpu, false, err);
	x->cluster_owner[d->cluster] = 0;
	return dpmu_drv_cluster_enable(x->drv, d->cluster, false, err);
}

/* Program group d->group, or the next that can count now: while another
 * core's diagnosis counts on the cluster's PMU, the cluster's group is
 * skipped (d->skipped_group says so). 1: no group left. */
static int next(struct dpmu_mon_diagnoser *x, struct dpmu_mon_diagnosis *d, uint64_t now,
		struct dpmu_err *err)
{
	for (; d->group < DPMU_MON_DIAG_GROUPS; d->group++) {
		const struct dpmu_mon_diag *g = group_of(d);
		if (g->target == DPMU_MON_CLUSTER) {
			unsigned owner = x->cluster_owner[d->cluster];
			if (owner && owner != d->cpu + 1) {
				d->skipped_group = g->name;
				d->skipped_owner = owner - 1;
				d->skipped++;
				continue;
			}
			x->cluster_owner[d->cluster] = d->cpu + 1;
		}
		d->group_ns = now;
		return program(x, d, err);
	}
	d->group = -1;
	return 1;
}

int dpmu_mon_diagnosis_begin(struct dpmu_mon_diagnoser *x, struct dpmu_mon_diagnosis *d,
			     unsigned anomaly, uint64_t now, struct dpmu_err *err)
{
	if (d->group >= 0)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "cpu%u: a diagnosis (anomaly %u) runs already: stop it first",
				    d->cpu, d->anomaly);
	unsigned cpu = d->cpu, cluster = d->cluster, type = d->type;
	dpmu_mon_diagnosis_init(d, cpu, cluster, type);
	d->anomaly = anomaly;
	d->start_ns = now;
	d->group = 0;
	return next(x, d, now, err);
}

int dpmu_mon_diagnosis_interval(struct dpmu_mon_diagnoser *x, struct dpmu_mon_diagnosis *d,
				uint64_t now, uint64_t insns, uint64_t cycles, struct dpmu_err *err)
{
	d->skipped_group = NULL;
	if (d->group < 0)
		return 1;
	const struct dpmu_mon_diag *g = group_of(d);
	bool cl = g->target == DPMU_MON_CLUSTER;
	uint64_t ran = now > d->group_ns ? now - d->group_ns : 1;
	for (unsigned k = 0; k < d->n && d->ncounts < DPMU_MON_DIAG_COUNTS; k++) {
		uint64_t v;
		int rc = cl ? dpmu_drv_cluster_read(x->drv, d->cluster, k, &v, err)
			    : dpmu_drv_pmu_read(x->drv, d->cpu, k, &v, err);
		if (rc)
			return rc;
		d->counts[d->ncounts++] = (struct dpmu_mon_diag_count){ d->name[k], cl, v, ran };
	}
	int rc = halt(x, d, err);
	if (rc)
		return rc;
	d->counted_ns += ran;
	d->insns += insns;
	d->cycles += cycles;
	d->counted++;
	d->group++;
	return next(x, d, now, err);
}

int dpmu_mon_diagnosis_stop(struct dpmu_mon_diagnoser *x, struct dpmu_mon_diagnosis *d,
			    struct dpmu_err *err)
{
	if (d->group < 0)
		return 0;
	int rc = halt(x, d, err);
	d->group = -1;
	return rc;
}
