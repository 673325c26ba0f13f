/* Placeholder until the external view lands: every access refused. */
#include "model/model_internal.h"

int dpmu_model_ext_read(struct dpmu_model *m, struct dpmu_frame f, uint32_t offset, bool secure,
			uint32_t *value)
{
	(void)m; (void)f; (void)offset; (void)secure; *value = 0;
	return DPMU_EIO;
}
int dpmu_model_ext_write(struct dpmu_model *m, struct dpmu_frame f, uint32_t offset, bool secure,
			 uint32_t value)
{
	(void)m; (void)f; (void)offset; (void)secure; (void)value;
	return DPMU_EIO;
}
uint32_t dpmu_model_edprsr_read(struct dpmu_model *m, struct dpmu_frame f) { (void)m; (void)f; return 0; }
