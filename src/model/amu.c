/* Placeholder until the AMU lands: no AMU registers, nothing counts. */
#include "model/model_internal.h"

struct dpmu_access dpmu_amu_sysreg(struct dpmu_model *m, struct dpmu_core *c, uint32_t enc,
				   bool write, uint64_t *value)
{
	(void)m; (void)c; (void)enc; (void)write; (void)value;
	return dpmu_access_notmine();
}
void dpmu_amu_reset(struct dpmu_core *c, const struct dpmu_profile *p) { (void)c; (void)p; }
void dpmu_amu_event(struct dpmu_core *c, uint16_t event, uint64_t n) { (void)c; (void)event; (void)n; }
void dpmu_amu_cycles(struct dpmu_core *c, const struct dpmu_profile *p, uint64_t k) { (void)c; (void)p; (void)k; }
