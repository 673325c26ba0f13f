/* Placeholder until the cluster PMU lands. */
#include "model/model_internal.h"

struct dpmu_access dpmu_clusterpmu_sysreg(struct dpmu_model *m, struct dpmu_core *c,
					  uint32_t enc, bool write, uint64_t *value)
{
	(void)m; (void)c; (void)enc; (void)write; (void)value;
	return dpmu_access_notmine();
}
void dpmu_clusterpmu_reset(struct dpmu_cluster *cl) { dpmu_bank_reset(&cl->pmu); }
void dpmu_clusterpmu_refresh(struct dpmu_cluster *cl) { dpmu_bank_update_active(&cl->pmu); }
