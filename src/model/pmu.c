/* Placeholder until the core PMU registers land. */
#include "model/model_internal.h"

struct dpmu_access dpmu_pmu_sysreg(struct dpmu_model *m, struct dpmu_core *c, uint32_t enc,
				   bool write, uint64_t *value)
{
	(void)m; (void)c; (void)enc; (void)write; (void)value;
	return dpmu_access_notmine();
}
void dpmu_pmu_reset(struct dpmu_core *c) { dpmu_bank_reset(&c->pmu); }
void dpmu_pmu_refresh(struct dpmu_core *c) { dpmu_bank_update_active(&c->pmu); }
