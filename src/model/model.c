/*
 * The model's topology, the execution and debug state of each core, and
 * event delivery into the core PMU, AMU and cluster PMU.
 */
#include <stdlib.h>
#include <string.h>

#include "model/model_internal.h"

static void evset_fill(struct dpmu_evset *s, const uint16_t *events, size_t n)
{
	memset(s, 0, sizeof *s);
	for (size_t i = 0; i < n; i++)
		s->bits[events[i] >> 6] |= 1ull << (events[i] & 63);
}

/* Cold reset of a core's power domain: monitors to their reset values, the OS
 * lock set (OSLSR_EL1.OSLK resets to 1), the OS double lock clear. The
 * software lock (PMLSR.SLK) lives in the debug power domain and keeps its
 * value; only an External debug reset (model creation) sets it. */
static void core_cold_reset(struct dpmu_model *m, struct dpmu_core *c)
{
	dpmu_pmu_reset(c);
	dpmu_amu_reset(c, &m->profile);
	dpmu_etm_reset(c);
	c->oslock = true;
	c->doublelock = false;
}

/* What EL3 firmware does on every core's power-up before the OS runs, as
 * Trusted Firmware does on DynamIQ systems: grant EL1/EL2 write access to the
 * cluster PMU (ACTLR_EL3/EL2.CLUSTERPMUEN, reset value 0). The PMU and AMU
 * registers themselves stay at their reset values; enabling the AMU counters
 * (writable only at EL3, Arm ARM D24.6) is left to the software driving the
 * model at EL3. docs/model.md, "Firmware state". */
static void firmware_boot(struct dpmu_core *c)
{
	c->actlr_el2 = c->actlr_el3 = 1u << 12;
}

int dpmu_model_create(const struct dpmu_profile *profile, struct dpmu_model **out,
		      struct dpmu_err *err)
{
	*out = NULL;
	if (profile->nclusters == 0 || profile->nclusters > DPMU_MAX_CLUSTERS)
		return dpmu_err_set(err, DPMU_EINVAL, "profile '%s': %u clusters (1 to %d)",
				    profile->name, profile->nclusters, DPMU_MAX_CLUSTERS);
	struct dpmu_model *m = calloc(1, sizeof *m);
	if (!m)
		return dpmu_err_set(err, DPMU_ENOMEM, "out of memory creating the model");
	m->profile = *profile;
	const struct dpmu_profile *p = &m->profile;

	for (unsigned t = 0; t < p->n_core_types; t++)
		evset_fill(&m->core_events[t], p->core_types[t].events, p->core_types[t].n_events);

	unsigned core = 0;
	for (unsigned ci = 0; ci < p->nclusters; ci++) {
		const struct dpmu_cluster_params *cp = &p->clusters[ci];
		struct dpmu_cluster *cl = &m->clusters[ci];
		if (cp->ncores == 0 || cp->ncores > DPMU_MAX_CORES_PER_CLUSTER) {
			dpmu_err_set(err, DPMU_EINVAL, "profile '%s': cluster %u has %u cores (1 to %d)",
				     p->name, ci, cp->ncores, DPMU_MAX_CORES_PER_CLUSTER);
			free(m);
			return DPMU_EINVAL;
		}
		cl->id = ci;
		cl->first_core = core;
		cl->ncores = cp->ncores;
		cl->params = cp;
		evset_fill(&m->cluster_events[ci], cp->events, cp->n_events);
		cl->implemented = &m->cluster_events[ci];
		cl->extauth = true;
		cl->pmlsr_slk = true;
		dpmu_bank_init(&cl->pmu, cp->pmu_counters, cp->counters64, false, false);
		cl->pmu.irq_gen = &m->irq_gen;
		dpmu_clusterpmu_reset(cl);

		for (unsigned k = 0; k < cp->ncores; k++, core++) {
			struct dpmu_core *c = &m->cores[core];
			unsigned t = cp->core_type[k];
			if (t >= p->n_core_types) {
				dpmu_err_set(err, DPMU_EINVAL,
					     "profile '%s': cluster %u core %u has core type %u of %u",
					     p->name, ci, k, t, p->n_core_types);
				free(m);
				return DPMU_EINVAL;
			}
			c->id = core;
			c->cluster = ci;
			c->index = k;
			c->type = &p->core_types[t];
			c->implemented = &m->core_events[t];
			c->mpidr = dpmu_profile_mpidr(p, core);
			c->powered = true;
			c->extauth = true;
			c->el = 1;
			c->sec = DPMU_NONSECURE;
			dpmu_bank_init(&c->pmu, c->type->pmu_counters, c->type->pmuv3p5,
				       c->type->pmuv3p5, true);
			c->pmu.irq_gen = &m->irq_gen;
			core_cold_reset(m, c);
			c->pmlsr_slk = true; /* External debug reset: PMLSR.SLK = 1 */
			c->etm.slk = true;   /* and TRCLSR.SLK = 1 */
			/* The register console's starting state: OS lock clear. */
			c->oslock = false;
			firmware_boot(c);
			dpmu_pmu_refresh(c);
		}
	}
	m->ncores = core;
	m->nclusters = p->nclusters;
	*out = m;
	return 0;
}

void dpmu_model_destroy(struct dpmu_model *m)
{
	free(m);
}

const struct dpmu_profile *dpmu_model_profile(const struct dpmu_model *m)
{
	return &m->profile;
}

unsigned dpmu_model_ncores(const struct dpmu_model *m)
{
	return m->ncores;
}

unsigned dpmu_model_nclusters(const struct dpmu_model *m)
{
	return m->nclusters;
}

unsigned dpmu_model_core_cluster(const struct dpmu_model *m, unsigned core)
{
	return core < m->ncores ? m->cores[core].cluster : 0;
}

static struct dpmu_core *core_arg(struct dpmu_model *m, unsigned core, struct dpmu_err *err)
{
	if (core >= m->ncores) {
		dpmu_err_set(err, DPMU_EINVAL, "no cpu%u: the profile has cpu0-cpu%u", core,
			     m->ncores - 1);
		return NULL;
	}
	return &m->cores[core];
}

static struct dpmu_cluster *cluster_arg(struct dpmu_model *m, unsigned cl, struct dpmu_err *err)
{
	if (cl >= m->nclusters) {
		dpmu_err_set(err, DPMU_EINVAL, "no cluster%u: the profile has cluster0-cluster%u",
			     cl, m->nclusters - 1);
		return NULL;
	}
	return &m->clusters[cl];
}

int dpmu_model_set_el(struct dpmu_model *m, unsigned core, unsigned el, enum dpmu_security sec,
		      struct dpmu_err *err)
{
	struct dpmu_core *c = core_arg(m, core, err);
	if (!c)
		return DPMU_EINVAL;
	if (el > 3)
		return dpmu_err_set(err, DPMU_EINVAL, "EL%u does not exist (EL0 to EL3)", el);
	if (el == 3 && sec != DPMU_SECURE)
		return dpmu_err_set(err, DPMU_EINVAL, "EL3 is always Secure");
	if (el == 2 && sec == DPMU_SECURE)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "Secure EL2 needs FEAT_SEL2, which %s (Armv8.2) does not have",
				    c->type->name);
	c->el = el;
	c->sec = sec;
	dpmu_pmu_refresh(c);
	return 0;
}

void dpmu_model_get_el(const struct dpmu_model *m, unsigned core, unsigned *el,
		       enum dpmu_security *sec)
{
	const struct dpmu_core *c = &m->cores[core < m->ncores ? core : 0];
	*el = c->el;
	*sec = c->sec;
}

int dpmu_model_set_power(struct dpmu_model *m, unsigned core, bool on, struct dpmu_err *err)
{
	struct dpmu_core *c = core_arg(m, core, err);
	if (!c)
		return DPMU_EINVAL;
	if (on && !c->powered) {
		core_cold_reset(m, c);
		firmware_boot(c);
		dpmu_pmu_refresh(c);
	}
	if (c->powered != on)
		c->live_gen++; /* a core that is off counts nothing */
	c->powered = on;
	return 0;
}

bool dpmu_model_powered(const struct dpmu_model *m, unsigned core)
{
	return core < m->ncores && m->cores[core].powered;
}

int dpmu_model_set_oslock(struct dpmu_model *m, unsigned core, bool locked, struct dpmu_err *err)
{
	struct dpmu_core *c = core_arg(m, core, err);
	if (!c)
		return DPMU_EINVAL;
	c->oslock = locked;
	return 0;
}

int dpmu_model_set_doublelock(struct dpmu_model *m, unsigned core, bool locked,
			      struct dpmu_err *err)
{
	struct dpmu_core *c = core_arg(m, core, err);
	if (!c)
		return DPMU_EINVAL;
	c->doublelock = locked;
	return 0;
}

int dpmu_model_set_extauth(struct dpmu_model *m, unsigned core, bool allow, struct dpmu_err *err)
{
	struct dpmu_core *c = core_arg(m, core, err);
	if (!c)
		return DPMU_EINVAL;
	c->extauth = allow;
	return 0;
}

int dpmu_model_set_wfi(struct dpmu_model *m, unsigned core, bool wfi, struct dpmu_err *err)
{
	struct dpmu_core *c = core_arg(m, core, err);
	if (!c)
		return DPMU_EINVAL;
	if (c->wfi != wfi)
		c->live_gen++; /* a clock-gated core counts nothing */
	c->wfi = wfi;
	return 0;
}

int dpmu_model_cluster_set_oslock(struct dpmu_model *m, unsigned cluster, bool locked,
				  struct dpmu_err *err)
{
	struct dpmu_cluster *cl = cluster_arg(m, cluster, err);
	if (!cl)
		return DPMU_EINVAL;
	cl->oslock = locked;
	return 0;
}

int dpmu_model_cluster_set_doublelock(struct dpmu_model *m, unsigned cluster, bool locked,
				      struct dpmu_err *err)
{
	struct dpmu_cluster *cl = cluster_arg(m, cluster, err);
	if (!cl)
		return DPMU_EINVAL;
	cl->doublelock = locked;
	return 0;
}

int dpmu_model_cluster_set_extauth(struct dpmu_model *m, unsigned cluster, bool allow,
				   struct dpmu_err *err)
{
	struct dpmu_cluster *cl = cluster_arg(m, cluster, err);
	if (!cl)
		return DPMU_EINVAL;
	cl->extauth = allow;
	return 0;
}

/* ---- event delivery ---------------------------------------------------
 *
 * Delivery does not test whether the core or cluster implements an event:
 * a counter is active only when its event is implemented (`allowed`, kept by
 * dpmu_pmu_refresh and dpmu_clusterpmu_refresh), so the bank counts nothing
 * else either way. */

/* A core counts nothing while powered down or clock-gated in WFI/WFE. */
static inline bool core_running(const struct dpmu_core *c)
{
	return c->powered && !c->wfi;
}

void dpmu_model_core_cycles(struct dpmu_model *m, unsigned core, uint64_t k)
{
	if (core >= m->ncores || k == 0)
		return;
	struct dpmu_core *c = &m->cores[core];
	if (!core_running(c))
		return;
	dpmu_bank_count(&c->pmu, DPMU_EV_CPU_CYCLES, k);
	dpmu_bank_cycles(&c->pmu, k, c->cc_allowed);
	dpmu_amu_cycles(c, &m->profile, k);
	if (c->etm_run.active)
		dpmu_etm_extin(c, DPMU_EV_CPU_CYCLES, k);
}

/* n > 0 occurrences of an event on a core (dpmu_model_core_event). */
static inline void core_event(struct dpmu_model *m, struct dpmu_core *c, uint16_t event,
			      uint64_t n)
{
	/* Cycles are time, not an occurrence: route them through the clock. */
	if (event == DPMU_EV_CPU_CYCLES) {
		dpmu_model_core_cycles(m, c->id, n);
		return;
	}
	/* SW_INCR happens only through PMSWINC; CHAIN only through overflow. */
	if (event == DPMU_EV_SW_INCR || event == DPMU_EV_CHAIN || !core_running(c))
		return;
	dpmu_bank_count(&c->pmu, event, n);
	if (c->amu.cnten0 | c->amu.cnten1) /* no AMU counter enabled: nothing to count */
		dpmu_amu_event(c, event, n);
	if (c->etm_run.active)
		dpmu_etm_extin(c, event, n);
}

void dpmu_model_core_event(struct dpmu_model *m, unsigned core, uint16_t event, uint64_t n)
{
	if (core < m->ncores && n != 0)
		core_event(m, &m->cores[core], event, n);
}

void dpmu_model_core_events(struct dpmu_model *m, unsigned core, const uint16_t *events,
			    const uint64_t *n, size_t count)
{
	if (core >= m->ncores)
		return;
	struct dpmu_core *c = &m->cores[core];
	if (!core_running(c))
		return; /* nothing counts, not even CPU_CYCLES (the clock stops) */
	/* core_event for each, with what no delivery changes read once. */
	struct dpmu_bank *b = &c->pmu;
	bool amu = (c->amu.cnten0 | c->amu.cnten1) != 0;
	for (size_t i = 0; i < count; i++) {
		uint16_t event = events[i];
		uint64_t k = n[i];
		if (k == 0 || event == DPMU_EV_SW_INCR || event == DPMU_EV_CHAIN)
			continue;
		if (event == DPMU_EV_CPU_CYCLES) {
			dpmu_model_core_cycles(m, core, k);
			continue;
		}
		dpmu_bank_count(b, event, k);
		if (amu)
			dpmu_amu_event(c, event, k);
		if (c->etm_run.active)
			dpmu_etm_extin(c, event, k);
	}
}

void dpmu_model_cluster_event(struct dpmu_model *m, unsigned cluster, uint16_t event, uint64_t n)
{
	if (cluster >= m->nclusters || n == 0 || event == DPMU_EV_CHAIN)
		return;
	struct dpmu_cluster *cl = &m->clusters[cluster];
	dpmu_bank_count(&cl->pmu, event, n);
}

void dpmu_model_cluster_cycles(struct dpmu_model *m, unsigned cluster, uint64_t k)
{
	if (cluster >= m->nclusters || k == 0)
		return;
	struct dpmu_cluster *cl = &m->clusters[cluster];
	dpmu_bank_count(&cl->pmu, DPMU_EV_CPU_CYCLES, k);
	dpmu_bank_cycles(&cl->pmu, k, true);
}

bool dpmu_model_core_event_live(const struct dpmu_model *m, unsigned core, uint16_t event)
{
	if (core >= m->ncores)
		return false;
	const struct dpmu_core *c = &m->cores[core];
	/* The same decisions as dpmu_model_core_event, in the same order. */
	if (!core_running(c) || event == DPMU_EV_SW_INCR || event == DPMU_EV_CHAIN)
		return false;
	if (event == DPMU_EV_CPU_CYCLES)
		return true; /* the clock: the AMU's constant clock always moves */
	return dpmu_bank_counts(&c->pmu, event) || dpmu_amu_counts(c, event) ||
	       dpmu_etm_extin_live(c, event);
}

bool dpmu_model_cluster_event_live(const struct dpmu_model *m, unsigned cluster,
				   uint16_t event)
{
	if (cluster >= m->nclusters || event == DPMU_EV_CHAIN)
		return false;
	const struct dpmu_cluster *cl = &m->clusters[cluster];
	return dpmu_bank_counts(&cl->pmu, event);
}

uint64_t dpmu_model_core_live_gen(const struct dpmu_model *m, unsigned core)
{
	return core < m->ncores ? m->cores[core].live_gen : 0;
}

uint64_t dpmu_model_cluster_live_gen(const struct dpmu_model *m, unsigned cluster)
{
	return cluster < m->nclusters ? m->clusters[cluster].live_gen : 0;
}

bool dpmu_model_core_irq(const struct dpmu_model *m, unsigned core)
{
	return core < m->ncores && dpmu_bank_irq(&m->cores[core].pmu);
}

unsigned dpmu_model_core_overflow_watch(const struct dpmu_model *m, unsigned core,
					 uint16_t *event, uint64_t *left, unsigned cap)
{
	if (core >= m->ncores || !core_running(&m->cores[core]))
		return 0;
	const struct dpmu_core *c = &m->cores[core];
	return dpmu_bank_overflow_watch(&c->pmu, c->cc_allowed, event, left, cap);
}

bool dpmu_model_cluster_irq(const struct dpmu_model *m, unsigned cluster)
{
	return cluster < m->nclusters && dpmu_bank_irq(&m->clusters[cluster].pmu);
}

uint64_t dpmu_model_irq_gen(const struct dpmu_model *m)
{
	return m->irq_gen;
}
