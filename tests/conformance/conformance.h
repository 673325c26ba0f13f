/*
 * Shared helpers for the conformance suite: one test per architectural rule,
 * named after the rule, with a comment citing where the rule comes from
 * (Arm ARM pseudocode name, reference section, seed section).
 */
#ifndef DPMU_CONFORMANCE_H
#define DPMU_CONFORMANCE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dynpmu/arch.h"
#include "dynpmu/ext32.h"
#include "dynpmu/model.h"

/* A model of a built-in profile (the default when name is NULL). */
static inline struct dpmu_model *conf_model(const char *name)
{
	struct dpmu_err err;
	struct dpmu_profile *p = NULL;
	if (dpmu_profile_load(name ? name : DPMU_PROFILE_DEFAULT, &p, &err) != 0)
		fail_msg("profile: %s", dpmu_errmsg(&err));
	struct dpmu_model *m = NULL;
	if (dpmu_model_create(p, &m, &err) != 0)
		fail_msg("model: %s", dpmu_errmsg(&err));
	dpmu_profile_free(p);
	return m;
}

/* The default profile changed by `edit` (with `arg`) before the model is
 * built: a PMUv3p5 core type, a snapshot latency, ... */
static inline struct dpmu_model *conf_model_edited(void (*edit)(struct dpmu_profile *, unsigned),
						   unsigned arg)
{
	struct dpmu_err err;
	struct dpmu_profile *p = NULL;
	if (dpmu_profile_load(DPMU_PROFILE_DEFAULT, &p, &err) != 0)
		fail_msg("profile: %s", dpmu_errmsg(&err));
	edit(p, arg);
	struct dpmu_model *m = NULL;
	if (dpmu_model_create(p, &m, &err) != 0)
		fail_msg("model: %s", dpmu_errmsg(&err));
	dpmu_profile_free(p);
	return m;
}

static inline void conf_edit_pmuv3p5(struct dpmu_profile *p, unsigned unused)
{
	(void)unused;
	for (unsigned t = 0; t < p->n_core_types; t++)
		p->core_types[t].pmuv3p5 = true;
}

/* The default profile with every core type turned into PMUv3p5 (64-bit
 * event counters, PMCR.LP). */
static inline struct dpmu_model *conf_model_p5(void)
{
	return conf_model_edited(conf_edit_pmuv3p5, 0);
}

/* MRS that must succeed. */
static inline uint64_t conf_rd(struct dpmu_model *m, unsigned core, uint32_t enc)
{
	uint64_t v = 0xdeadbeefdeadbeefull;
	struct dpmu_access a = dpmu_model_sysreg_read(m, core, enc, &v);
	if (a.kind != DPMU_ACCESS_OK)
		fail_msg("MRS 0x%x on cpu%u: kind %d el %u", enc, core, a.kind, a.el);
	return v;
}

/* MSR that must succeed. */
static inline void conf_wr(struct dpmu_model *m, unsigned core, uint32_t enc, uint64_t v)
{
	struct dpmu_access a = dpmu_model_sysreg_write(m, core, enc, v);
	if (a.kind != DPMU_ACCESS_OK)
		fail_msg("MSR 0x%x on cpu%u: kind %d el %u", enc, core, a.kind, a.el);
}

#define CONF_CORE(i) ((struct dpmu_frame){ DPMU_FRAME_CORE, (i) })
#define CONF_CLUSTER(i) ((struct dpmu_frame){ DPMU_FRAME_CLUSTER, (i) })

/* External read/write that must succeed (non-secure). */
static inline uint32_t conf_xrd(struct dpmu_model *m, struct dpmu_frame f, uint32_t off)
{
	uint32_t v = 0xdeadbeef;
	if (dpmu_model_ext_read(m, f, off, false, &v) != 0)
		fail_msg("external read of frame %d/%u offset 0x%x refused", f.kind, f.index, off);
	return v;
}

static inline void conf_xwr(struct dpmu_model *m, struct dpmu_frame f, uint32_t off, uint32_t v)
{
	if (dpmu_model_ext_write(m, f, off, false, v) != 0)
		fail_msg("external write of frame %d/%u offset 0x%x refused", f.kind, f.index, off);
}

/* Unlock every external frame (PMLAR key, reference section 2): for rules
 * about the registers rather than the software lock. */
static inline void conf_unlock_all(struct dpmu_model *m)
{
	for (unsigned c = 0; c < dpmu_model_ncores(m); c++)
		conf_xwr(m, CONF_CORE(c), DPMU_EXT_PMLAR, DPMU_EXT_PMLAR_KEY);
	for (unsigned cl = 0; cl < dpmu_model_nclusters(m); cl++)
		conf_xwr(m, CONF_CLUSTER(cl), DPMU_EXT_PMLAR, DPMU_EXT_PMLAR_KEY);
}

/* An event core 0 implements and counts as an occurrence: INST_RETIRED
 * where it exists, else any but the clocks, SW_INCR and CHAIN. */
static inline uint16_t conf_core_event(struct dpmu_model *m)
{
	unsigned cl, idx;
	const struct dpmu_core_type *t = dpmu_profile_core(dpmu_model_profile(m), 0, &cl, &idx);
	if (dpmu_core_type_implements(t, DPMU_EV_INST_RETIRED))
		return DPMU_EV_INST_RETIRED;
	for (size_t i = 0; i < t->n_events; i++)
		if (t->events[i] != DPMU_EV_SW_INCR && t->events[i] != DPMU_EV_CHAIN &&
		    t->events[i] != DPMU_EV_CPU_CYCLES)
			return t->events[i];
	fail_msg("core 0 implements no countable event");
	return 0;
}

/* An event cluster 0 implements, other than its clock, SW_INCR and CHAIN. */
static inline uint16_t conf_cluster_event(struct dpmu_model *m)
{
	const struct dpmu_cluster_params *cp = &dpmu_model_profile(m)->clusters[0];
	for (size_t i = 0; i < cp->n_events; i++)
		if (cp->events[i] != DPMU_EV_CHAIN && cp->events[i] != DPMU_EV_CPU_CYCLES &&
		    cp->events[i] != DPMU_EV_SW_INCR)
			return cp->events[i];
	fail_msg("cluster 0 implements no countable event");
	return 0;
}

#endif
