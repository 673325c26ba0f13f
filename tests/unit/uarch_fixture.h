/*
 * Shared fixture of the engine's unit tests (tests/unit/test_uarch_*.c): a
 * profile made LRU and prefetch-free (the validation profile, so counts
 * are exact), a model and an engine, an observer recording every event the
 * model receives, simple load/store/sweep helpers, and counters programmed
 * and read through the core PMU's system registers.
 */
#ifndef DPMU_TEST_UARCH_FIXTURE_H
#define DPMU_TEST_UARCH_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dynpmu/arch.h"
#include "dynpmu/model.h"
#include "dynpmu/uarch.h"

struct fx {
	struct dpmu_profile *p;
	struct dpmu_model *m;
	struct dpmu_uarch *u;
	uint64_t core[DPMU_MAX_CORES][256];   /* delivered core events by code */
	uint64_t cl[DPMU_MAX_CLUSTERS][512];  /* cluster events: low byte, 0x4000 range */
};

static inline unsigned cl_slot(uint16_t code)
{
	return (code & 0xff) | ((code & 0x4000) ? 0x100 : 0);
}

static inline void observe(void *ctx, bool cluster, unsigned index, uint16_t event, uint64_t n)
{
	struct fx *f = ctx;
	if (cluster)
		f->cl[index][cl_slot(event)] += n;
	else if (event < 256)
		f->core[index][event] += n;
}

static inline void lru_noprefetch(struct dpmu_profile *p)
{
	for (unsigned t = 0; t < p->n_core_types; t++) {
		struct dpmu_core_type *ct = &p->core_types[t];
		struct dpmu_cache_params *cs[] = { &ct->l1i, &ct->l1d, &ct->l2 };
		for (unsigned i = 0; i < 3; i++) {
			cs[i]->replacement = DPMU_REPL_LRU;
			cs[i]->prefetch = DPMU_PREFETCH_NONE;
		}
	}
	for (unsigned c = 0; c < p->nclusters; c++) {
		p->clusters[c].l3.replacement = DPMU_REPL_LRU;
		p->clusters[c].l3.prefetch = DPMU_PREFETCH_NONE;
	}
}

static inline struct fx *fx_load(const char *name)
{
	struct fx *f = calloc(1, sizeof *f);
	struct dpmu_err err;
	assert_non_null(f);
	if (dpmu_profile_load(name, &f->p, &err) != 0)
		fail_msg("profile: %s", dpmu_errmsg(&err));
	lru_noprefetch(f->p);
	return f;
}

static inline void fx_start(struct fx *f)
{
	struct dpmu_err err;
	if (dpmu_model_create(f->p, &f->m, &err) != 0)
		fail_msg("model: %s", dpmu_errmsg(&err));
	if (dpmu_uarch_create(f->m, f->p, &f->u, &err) != 0)
		fail_msg("engine: %s", dpmu_errmsg(&err));
	dpmu_uarch_set_observer(f->u, observe, NULL, f);
}

static inline struct fx *fx_new(void)
{
	struct fx *f = fx_load(DPMU_PROFILE_DEFAULT);
	fx_start(f);
	return f;
}

static inline void fx_free(struct fx *f)
{
	dpmu_uarch_destroy(f->u);
	dpmu_model_destroy(f->m);
	dpmu_profile_free(f->p);
	free(f);
}

static inline struct dpmu_insn ld(uint64_t pc, uint64_t addr)
{
	return (struct dpmu_insn){ .pc = pc, .addr = addr, .size = 8, .kind = DPMU_INSN_LOAD,
				   .isize = 4 };
}

static inline struct dpmu_insn st(uint64_t pc, uint64_t addr)
{
	return (struct dpmu_insn){ .pc = pc, .addr = addr, .size = 8, .kind = DPMU_INSN_STORE,
				   .isize = 4 };
}

/* Loads of one line each over [base, base + bytes), one pass. */
static inline void sweep(struct fx *f, unsigned core, uint64_t base, uint64_t bytes, bool write)
{
	for (uint64_t a = base; a < base + bytes; a += 64) {
		struct dpmu_insn in = write ? st(0x1000, a) : ld(0x1000, a);
		dpmu_uarch_retire(f->u, core, &in, 1);
	}
	dpmu_uarch_flush(f->u);
}

/* Core-PMU counter 0..5 through the system registers (reference section 1). */
#define PMCR_EL0 DPMU_SYSREG(3, 3, 9, 12, 0)
#define PMCNTENSET_EL0 DPMU_SYSREG(3, 3, 9, 12, 1)
#define PMEVTYPER(n) DPMU_SYSREG(3, 3, 14, 12 + ((n) >> 3), (n) & 7)
#define PMEVCNTR(n) DPMU_SYSREG(3, 3, 14, 8 + ((n) >> 3), (n) & 7)

static inline void program(struct fx *f, unsigned core, const uint16_t *events, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct dpmu_access a = dpmu_model_sysreg_write(f->m, core, PMEVTYPER(i), events[i]);
		assert_int_equal(a.kind, DPMU_ACCESS_OK);
	}
	assert_int_equal(dpmu_model_sysreg_write(f->m, core, PMCNTENSET_EL0, (1u << n) - 1).kind,
			 DPMU_ACCESS_OK);
	assert_int_equal(dpmu_model_sysreg_write(f->m, core, PMCR_EL0, 1 | 2).kind,
			 DPMU_ACCESS_OK);
}

/* MSR and MRS on the model, as software on the core would make them. */
static inline void wr(struct fx *f, unsigned core, uint32_t enc, uint64_t v)
{
	struct dpmu_access a = dpmu_model_sysreg_write(f->m, core, enc, v);
	if (a.kind != DPMU_ACCESS_OK)
		fail_msg("MSR 0x%x: access kind %d", enc, a.kind);
}

static inline uint64_t rd(struct fx *f, unsigned core, uint32_t enc)
{
	uint64_t v = 0;
	struct dpmu_access a = dpmu_model_sysreg_read(f->m, core, enc, &v);
	if (a.kind != DPMU_ACCESS_OK)
		fail_msg("MRS 0x%x: access kind %d", enc, a.kind);
	return v;
}

static inline uint64_t counter(struct fx *f, unsigned core, unsigned i)
{
	uint64_t v = 0;
	assert_int_equal(dpmu_model_sysreg_read(f->m, core, PMEVCNTR(i), &v).kind, DPMU_ACCESS_OK);
	return v;
}

#endif
