/*
 * Register access interface (regio): the only way the driver reaches the
 * monitoring hardware. Three implementations: the model (src/backend,
 * the one place that knows both the model and the driver), aarch64 system
 * registers, and memory-mapped I/O (DESIGN.md "Layers and folders").
 */
#ifndef DYNPMU_REGIO_H
#define DYNPMU_REGIO_H

#include <stdbool.h>
#include <stdint.h>

/* A core's PMU frame, a cluster's PMU frame, or a core's trace unit
 * (ETMv4) frame. */
enum dpmu_regio_frame_kind {
	DPMU_REGIO_FRAME_CORE = 0,
	DPMU_REGIO_FRAME_CLUSTER = 1,
	DPMU_REGIO_FRAME_ETM = 2,
};

/* Outcome of an access. A trap or UNDEFINED MRS/MSR is not a value: the
 * driver reports which rule refused it. */
enum {
	DPMU_REGIO_OK = 0,
	DPMU_REGIO_TRAP = 1,      /* trapped to the EL in *el */
	DPMU_REGIO_UNDEF = 2,     /* UNDEFINED at the current EL */
	DPMU_REGIO_ERROR = 3,     /* external access refused (bus error) */
};

struct dpmu_regio_ops {
	/* MRS/MSR on cpu at its current EL; enc is DPMU_SYSREG(...). */
	int (*sysread)(void *ctx, unsigned cpu, uint32_t enc, uint64_t *value, unsigned *el);
	int (*syswrite)(void *ctx, unsigned cpu, uint32_t enc, uint64_t value, unsigned *el);
	/* 32-bit access to a 4 KiB EXT32 frame (core, cluster or trace unit). */
	int (*extread)(void *ctx, enum dpmu_regio_frame_kind kind, unsigned index,
		       uint32_t offset, uint32_t *value);
	int (*extwrite)(void *ctx, enum dpmu_regio_frame_kind kind, unsigned index,
			uint32_t offset, uint32_t value);
};

struct dpmu_regio {
	const struct dpmu_regio_ops *ops;
	void *ctx;
	unsigned ncpus;           /* cpu0 .. cpu(ncpus-1) */
	unsigned nclusters;
};

#endif
