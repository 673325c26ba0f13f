/*
 * regio over the model: maps the model's access outcomes onto the regio
 * codes (DPMU_ACCESS_TRAP/UNDEF -> DPMU_REGIO_TRAP/UNDEF, a refused external
 * access -> DPMU_REGIO_ERROR) and calls the backend's before_access hook so
 * pending simulated events are in the counters before they are read.
 */
#include "dynpmu/regio_model.h"

static void before(struct dpmu_regio_model *rm)
{
	rm->accesses++;
	if (rm->before_access)
		rm->before_access(rm->before_ctx);
}

static int map_access(struct dpmu_access a, unsigned *el)
{
	if (el)
		*el = a.el;
	switch (a.kind) {
	case DPMU_ACCESS_OK:
		return DPMU_REGIO_OK;
	case DPMU_ACCESS_TRAP:
		return DPMU_REGIO_TRAP;
	default:
		return DPMU_REGIO_UNDEF;
	}
}

static int rm_sysread(void *ctx, unsigned cpu, uint32_t enc, uint64_t *value, unsigned *el)
{
	struct dpmu_regio_model *rm = ctx;
	*value = 0;
	/* A CPU that does not exist executes nothing: report it as a bus-level
	 * failure rather than inventing a trap. */
	if (cpu >= rm->io.ncpus)
		return DPMU_REGIO_ERROR;
	before(rm);
	return map_access(dpmu_model_sysreg_read(rm->model, cpu, enc, value), el);
}

static int rm_syswrite(void *ctx, unsigned cpu, uint32_t enc, uint64_t value, unsigned *el)
{
	struct dpmu_regio_model *rm = ctx;
	if (cpu >= rm->io.ncpus)
		return DPMU_REGIO_ERROR;
	before(rm);
	return map_access(dpmu_model_sysreg_write(rm->model, cpu, enc, value), el);
}

static bool frame_of(const struct dpmu_regio_model *rm, enum dpmu_regio_frame_kind kind,
		     unsigned index, struct dpmu_frame *f)
{
	if (kind == DPMU_REGIO_FRAME_CORE || kind == DPMU_REGIO_FRAME_ETM) {
		*f = (struct dpmu_frame){ kind == DPMU_REGIO_FRAME_CORE ? DPMU_FRAME_CORE
									 : DPMU_FRAME_ETM, index };
		return index < rm->io.ncpus;
	}
	*f = (struct dpmu_frame){ DPMU_FRAME_CLUSTER, index };
	return kind == DPMU_REGIO_FRAME_CLUSTER && index < rm->io.nclusters;
}

static int rm_extread(void *ctx, enum dpmu_regio_frame_kind kind, unsigned index,
		      uint32_t offset, uint32_t *value)
{
	struct dpmu_regio_model *rm = ctx;
	struct dpmu_frame f;
	*value = 0;
	if (!frame_of(rm, kind, index, &f))
		return DPMU_REGIO_ERROR;
	before(rm);
	return dpmu_model_ext_read(rm->model, f, offset, rm->ext_secure, value) == 0
		       ? DPMU_REGIO_OK
		       : DPMU_REGIO_ERROR;
}

static int rm_extwrite(void *ctx, enum dpmu_regio_frame_kind kind, unsigned index,
		       uint32_t offset, uint32_t value)
{
	struct dpmu_regio_model *rm = ctx;
	struct dpmu_frame f;
	if (!frame_of(rm, kind, index, &f))
		return DPMU_REGIO_ERROR;
	before(rm);
	return dpmu_model_ext_write(rm->model, f, offset, rm->ext_secure, value) == 0
		       ? DPMU_REGIO_OK
		       : DPMU_REGIO_ERROR;
}

static const struct dpmu_regio_ops model_ops = {
	.sysread = rm_sysread,
	.syswrite = rm_syswrite,
	.extread = rm_extread,
	.extwrite = rm_extwrite,
};

void dpmu_regio_model_init(struct dpmu_regio_model *rm, struct dpmu_model *m,
			   void (*before_access)(void *ctx), void *ctx)
{
	rm->io.ops = &model_ops;
	rm->io.ctx = rm;
	rm->io.ncpus = dpmu_model_ncores(m);
	rm->io.nclusters = dpmu_model_nclusters(m);
	rm->model = m;
	rm->before_access = before_access;
	rm->before_ctx = ctx;
	rm->ext_secure = false;
	rm->accesses = 0;
}
