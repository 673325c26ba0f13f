/*
 * DSU cluster PMU through the CLUSTERPM*_EL1 system registers of one CPU of
 * the cluster (reference section 3). Event counters are reached only
 * through CLUSTERPMSELR_EL1 + CLUSTERPMXEVTYPER/XEVCNTR_EL1.
 */
#include "driver/drv_internal.h"

static int via(struct dpmu_drv *d, unsigned cluster, unsigned *cpu, struct dpmu_err *err)
{
	int rc = dpmu_drv_check_cluster(d, cluster, err);
	if (rc)
		return rc;
	*cpu = d->clusters[cluster].cpu;
	return 0;
}

static int check_counter(struct dpmu_drv *d, unsigned cluster, unsigned i, bool cycle_ok,
			 unsigned *cpu, struct dpmu_err *err)
{
	int rc = via(d, cluster, cpu, err);
	return rc ? rc
		  : dpmu_drv_check_index(d->clusters[cluster].pmu_n, i, cycle_ok, "cluster", cluster,
					 "CLUSTERPMCR_EL1", err);
}

static int check_mask(struct dpmu_drv *d, unsigned cluster, uint32_t mask, unsigned *cpu,
		      struct dpmu_err *err)
{
	int rc = via(d, cluster, cpu, err);
	return rc ? rc
		  : dpmu_drv_check_mask(d->clusters[cluster].pmu_n, mask, "cluster", cluster,
					"CLUSTERPMCR_EL1", err);
}

int dpmu_drv_cluster_reset(struct dpmu_drv *d, unsigned cluster, struct dpmu_err *err)
{
	unsigned cpu;
	int rc = via(d, cluster, &cpu, err);
	if (rc)
		return rc;
	const uint64_t all = 0xffffffffu;
	if ((rc = dpmu_drv_wr(d, cpu, R_CLUSTERPMCR_EL1, DPMU_DRV_PMCR_P | DPMU_DRV_PMCR_C, err)) ||
	    (rc = dpmu_drv_wr(d, cpu, R_CLUSTERPMCNTENCLR_EL1, all, err)) ||
	    (rc = dpmu_drv_wr(d, cpu, R_CLUSTERPMINTENCLR_EL1, all, err)) ||
	    (rc = dpmu_drv_wr(d, cpu, R_CLUSTERPMOVSCLR_EL1, all, err)))
		return rc;
	return 0;
}

int dpmu_drv_cluster_enable(struct dpmu_drv *d, unsigned cluster, bool on, struct dpmu_err *err)
{
	unsigned cpu;
	uint64_t v;
	int rc = via(d, cluster, &cpu, err);
	if (rc || (rc = dpmu_drv_rd(d, cpu, R_CLUSTERPMCR_EL1, &v, err)))
		return rc;
	v = on ? v | DPMU_DRV_PMCR_E : v & ~(uint64_t)DPMU_DRV_PMCR_E;
	return dpmu_drv_wr(d, cpu, R_CLUSTERPMCR_EL1, v & ~(uint64_t)(DPMU_DRV_PMCR_P | DPMU_DRV_PMCR_C),
			   err);
}

int dpmu_drv_cluster_program(struct dpmu_drv *d, unsigned cluster, unsigned i, uint16_t event,
			     struct dpmu_err *err)
{
	unsigned cpu;
	int rc = check_counter(d, cluster, i, false, &cpu, err);
	if (rc || (rc = dpmu_drv_wr(d, cpu, R_CLUSTERPMSELR_EL1, i, err)))
		return rc;
	return dpmu_drv_wr(d, cpu, R_CLUSTERPMXEVTYPER_EL1, event, err);
}

int dpmu_drv_cluster_start(struct dpmu_drv *d, unsigned cluster, uint32_t mask, struct dpmu_err *err)
{
	unsigned cpu;
	int rc = check_mask(d, cluster, mask, &cpu, err);
	return rc ? rc : dpmu_drv_wr(d, cpu, R_CLUSTERPMCNTENSET_EL1, mask, err);
}

int dpmu_drv_cluster_stop(struct dpmu_drv *d, unsigned cluster, uint32_t mask, struct dpmu_err *err)
{
	unsigned cpu;
	int rc = check_mask(d, cluster, mask, &cpu, err);
	return rc ? rc : dpmu_drv_wr(d, cpu, R_CLUSTERPMCNTENCLR_EL1, mask, err);
}

int dpmu_drv_cluster_read(struct dpmu_drv *d, unsigned cluster, unsigned i, uint64_t *value,
			  struct dpmu_err *err)
{
	unsigned cpu;
	*value = 0;
	int rc = check_counter(d, cluster, i, true, &cpu, err);
	if (rc)
		return rc;
	if (i == DPMU_DRV_CYCLE)
		return dpmu_drv_rd(d, cpu, R_CLUSTERPMCCNTR_EL1, value, err);
	if ((rc = dpmu_drv_wr(d, cpu, R_CLUSTERPMSELR_EL1, i, err)))
		return rc;
	return dpmu_drv_rd(d, cpu, R_CLUSTERPMXEVCNTR_EL1, value, err);
}

int dpmu_drv_cluster_write(struct dpmu_drv *d, unsigned cluster, unsigned i, uint64_t value,
			   struct dpmu_err *err)
{
	unsigned cpu;
	int rc = check_counter(d, cluster, i, true, &cpu, err);
	if (rc)
		return rc;
	if (i == DPMU_DRV_CYCLE)
		return dpmu_drv_wr(d, cpu, R_CLUSTERPMCCNTR_EL1, value, err);
	if ((rc = dpmu_drv_wr(d, cpu, R_CLUSTERPMSELR_EL1, i, err)))
		return rc;
	return dpmu_drv_wr(d, cpu, R_CLUSTERPMXEVCNTR_EL1, value, err);
}

int dpmu_drv_cluster_overflow(struct dpmu_drv *d, unsigned cluster, uint32_t *mask,
			      struct dpmu_err *err)
{
	unsigned cpu;
	uint64_t v = 0;
	int rc = via(d, cluster, &cpu, err);
	if (!rc)
		rc = dpmu_drv_rd(d, cpu, R_CLUSTERPMOVSSET_EL1, &v, err);
	*mask = (uint32_t)v;
	return rc;
}

int dpmu_drv_cluster_overflow_clear(struct dpmu_drv *d, unsigned cluster, uint32_t mask,
				    struct dpmu_err *err)
{
	unsigned cpu;
	int rc = check_mask(d, cluster, mask, &cpu, err);
	return rc ? rc : dpmu_drv_wr(d, cpu, R_CLUSTERPMOVSCLR_EL1, mask, err);
}

int dpmu_drv_cluster_irq_enable(struct dpmu_drv *d, unsigned cluster, uint32_t mask, bool on,
				struct dpmu_err *err)
{
	unsigned cpu;
	int rc = check_mask(d, cluster, mask, &cpu, err);
	return rc ? rc
		  : dpmu_drv_wr(d, cpu, on ? R_CLUSTERPMINTENSET_EL1 : R_CLUSTERPMINTENCLR_EL1, mask,
				err);
}

static int check_pair(struct dpmu_drv *d, unsigned cluster, unsigned even, unsigned *cpu,
		      struct dpmu_err *err)
{
	if (even & 1)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "counter %u on cluster%u: a chained pair starts at an even counter "
				    "(CHAIN counts on the odd one)",
				    even, cluster);
	return check_counter(d, cluster, even + 1, false, cpu, err);
}

int dpmu_drv_cluster_chain(struct dpmu_drv *d, unsigned cluster, unsigned even, uint16_t event,
			   struct dpmu_err *err)
{
	unsigned cpu;
	int rc = check_pair(d, cluster, even, &cpu, err);
	if (rc)
		return rc;
	/* The classic DSU does not implement CHAIN (its event list has no
	 * 0x1E); a profile that does advertises it in CLUSTERPMCEID1. */
	if (dpmu_drv_cluster_event(d, cluster, EV_CHAIN) != DPMU_DRV_EVENT_YES)
		return dpmu_err_set(err, DPMU_ENOTSUP,
				    "cluster%u: CLUSTERPMCEID1_EL1 does not advertise CHAIN (0x1E): this "
				    "cluster PMU cannot chain counters; read a 32-bit counter often "
				    "enough, or use a profile with 64-bit cluster counters",
				    cluster);
	if ((rc = dpmu_drv_cluster_program(d, cluster, even + 1, EV_CHAIN, err)))
		return rc;
	return dpmu_drv_cluster_program(d, cluster, even, event, err);
}

int dpmu_drv_cluster_read_pair(struct dpmu_drv *d, unsigned cluster, unsigned even, uint64_t *value,
			       struct dpmu_err *err)
{
	unsigned cpu;
	*value = 0;
	int rc = check_pair(d, cluster, even, &cpu, err);
	return rc ? rc : dpmu_drv_read_pair(d, cluster, even, dpmu_drv_cluster_read, value, err);
}
