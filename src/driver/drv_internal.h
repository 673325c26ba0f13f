/* State shared by the files of src/driver. */
#ifndef DPMU_DRV_INTERNAL_H
#define DPMU_DRV_INTERNAL_H

#include "dynpmu/driver.h"
#include "driver/drv_regs.h"

struct dpmu_drv {
	const struct dpmu_regio *io;
	unsigned ncpus, nclusters;
	struct dpmu_drv_cpuinfo *cpus;
	struct dpmu_drv_clusterinfo *clusters;
	enum dpmu_drv_access access;
	void (*wait)(void *ctx, unsigned poll);
	void *wait_ctx;
	unsigned max_polls;
};

/* MRS / MSR with the driver's messages on failure (driver.c). */
int dpmu_drv_rd(struct dpmu_drv *d, unsigned cpu, uint32_t enc, uint64_t *v,
		struct dpmu_err *err);
int dpmu_drv_wr(struct dpmu_drv *d, unsigned cpu, uint32_t enc, uint64_t v,
		struct dpmu_err *err);
/* Argument checks: a cpu / cluster that exists; a counter index below n. */
int dpmu_drv_check_cpu(const struct dpmu_drv *d, unsigned cpu, struct dpmu_err *err);
int dpmu_drv_check_cluster(const struct dpmu_drv *d, unsigned cluster, struct dpmu_err *err);
/* A chained pair (counter even + 1 counts CHAIN) as one 64-bit value, read
 * with `read` (dpmu_drv_pmu_read or dpmu_drv_cluster_read) on cpu or cluster
 * `unit`: high, low, high again (driver.c). The caller checks the pair. */
int dpmu_drv_read_pair(struct dpmu_drv *d, unsigned unit, unsigned even,
		       int (*read)(struct dpmu_drv *, unsigned, unsigned, uint64_t *,
				   struct dpmu_err *),
		       uint64_t *value, struct dpmu_err *err);
/* A counter index (DPMU_DRV_CYCLE too when cycle_ok) or a counter mask
 * against a bank of n event counters: that of `unit` ("cpu", "cluster")
 * number idx, whose N is in the register named by `pmcr`. */
int dpmu_drv_check_index(unsigned n, unsigned i, bool cycle_ok, const char *unit, unsigned idx,
			 const char *pmcr, struct dpmu_err *err);
int dpmu_drv_check_mask(unsigned n, uint32_t mask, const char *unit, unsigned idx,
			const char *pmcr, struct dpmu_err *err);
/* PMEVTYPER / PMCCFILTR filter bits for a DPMU_DRV_EL* set. */
uint32_t dpmu_drv_filter_bits(unsigned els);
/* "cpu" or "cluster": a frame's name in messages ("cpu2 frame") */
const char *dpmu_drv_frame_kind(struct dpmu_drv_frame f);

#endif
