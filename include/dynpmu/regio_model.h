/*
 * The register-access interface (regio.h) implemented over the model
 * (model.h): the one place that knows both the driver's view and the model
 * (DESIGN.md "Layers and folders"). System-register accesses become
 * dpmu_model_sysreg_read/write on that core at its current EL; external
 * accesses become dpmu_model_ext_read/write on the core or cluster frame.
 *
 * The adapter lives in caller-owned storage and allocates nothing (io.ctx
 * points back at it, so do not copy it after init):
 *
 *     struct dpmu_regio_model rm;
 *     dpmu_regio_model_init(&rm, model, flush_engine, engine);
 *     dpmu_drv_create(&rm.io, &drv, &err);
 */
#ifndef DYNPMU_REGIO_MODEL_H
#define DYNPMU_REGIO_MODEL_H

#include <stdbool.h>

#include "dynpmu/model.h"
#include "dynpmu/regio.h"

struct dpmu_regio_model {
	struct dpmu_regio io;           /* hand &io to the driver */
	struct dpmu_model *model;
	/* Called before every access, so a simulation backend can deliver the
	 * engine's pending events first and every read is exact. May be NULL. */
	void (*before_access)(void *ctx);
	void *before_ctx;
	/* External accesses are Non-secure unless this is set (a Secure
	 * debugger always passes AllowExternalPMUAccess). */
	bool ext_secure;
	/* Accesses made through this adapter (reads + writes), for tests and
	 * benchmarks of driver sequences. */
	unsigned long accesses;
};

/* Fill rm for model m (ncpus / nclusters from the model). before_access and
 * ctx may be NULL. */
void dpmu_regio_model_init(struct dpmu_regio_model *rm, struct dpmu_model *m,
			   void (*before_access)(void *ctx), void *ctx);

#endif
