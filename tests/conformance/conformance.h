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

#endif
