/* Placeholder until the system-register dispatch lands. */
#include "model/model_internal.h"

struct dpmu_access dpmu_model_sysreg_read(struct dpmu_model *m, unsigned core, uint32_t enc,
					  uint64_t *value)
{
	(void)m; (void)core; (void)enc; (void)value;
	return dpmu_access_undef();
}
struct dpmu_access dpmu_model_sysreg_write(struct dpmu_model *m, unsigned core, uint32_t enc,
					   uint64_t value)
{
	(void)m; (void)core; (void)enc; (void)value;
	return dpmu_access_undef();
}
