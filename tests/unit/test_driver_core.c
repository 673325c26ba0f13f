/*
 * The driver against the model through the regio adapter: discovery,
 * programming, counting, chained pairs, overflow, the cluster PMU, the AMU
 * and the snapshot sequence of seed 001 section 4.1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dynpmu/driver.h"
#include "dynpmu/model.h"
#include "dynpmu/regio_model.h"

struct fx {
	struct dpmu_model *m;
	struct dpmu_regio_model rm;
	struct dpmu_drv *d;
	struct dpmu_err err;
	unsigned flushes;
};

static void count_flush(void *ctx)
{
	((struct fx *)ctx)->flushes++;
}

static struct fx *fx_new(const char *profile, uint32_t snapshot_latency)
{
	struct fx *f = calloc(1, sizeof *f);
	struct dpmu_profile *p = NULL;
	assert_non_null(f);
	assert_int_equal(dpmu_profile_load(profile, &p, &f->err), 0);
	p->snapshot_latency = snapshot_latency;
	assert_int_equal(dpmu_model_create(p, &f->m, &f->err), 0);
	dpmu_profile_free(p);
	dpmu_regio_model_init(&f->rm, f->m, count_flush, f);
	if (dpmu_drv_create(&f->rm.io, &f->d, &f->err) != 0)
		fail_msg("driver: %s", dpmu_errmsg(&f->err));
	return f;
}

static void fx_free(struct fx *f)
{
	dpmu_drv_destroy(f->d);
	dpmu_model_destroy(f->m);
	free(f);
}

#define OK(call) do { if ((call) != 0) fail_msg("%s: %s", #call, dpmu_errmsg(&f->err)); } while (0)

/* Discovery reads MIDR, MPIDR (Aff1 core, Aff2 cluster), PMCR.N, PMCEID,
 * AMCGCR and the cluster PMU's CLUSTERPMCR.N (driver.h). */
static void discovery_reads_topology_and_counters(void **state)
{
	(void)state;
	struct fx *f = fx_new(DPMU_PROFILE_DEFAULT, 0);
	assert_int_equal(dpmu_drv_ncpus(f->d), 8);
	assert_int_equal(dpmu_drv_nclusters(f->d), 1);
	const struct dpmu_drv_cpuinfo *c0 = dpmu_drv_cpuinfo(f->d, 0), *c5 = dpmu_drv_cpuinfo(f->d, 5);
	assert_int_equal(c0->midr & 0xfff0, 0xd0a0);  /* Cortex-A75 */
	assert_int_equal(c5->midr & 0xfff0, 0xd050);  /* Cortex-A55 */
	assert_int_equal(c5->core, 5);
	assert_int_equal(c5->cluster, 0);
	assert_int_equal(c0->pmu_n, 6);
	assert_int_equal(c0->pmcr_imp, 0x41);
	/* AMCGCR_EL0 reports the profile's group sizes. */
	const struct dpmu_profile *p = dpmu_model_profile(f->m);
	assert_true(c0->amu);
	assert_int_equal(c0->amu_cg0nc, p->core_types[0].amu_group0);
	assert_int_equal(c0->amu_cg1nc, p->core_types[0].amu_group1);
	assert_int_equal(c0->pmu_n, p->core_types[0].pmu_counters);
	const struct dpmu_drv_clusterinfo *k = dpmu_drv_clusterinfo(f->d, 0);
	assert_int_equal(k->ncpus, 8);
	assert_int_equal(k->pmu_n, 6);
	assert_null(dpmu_drv_cpuinfo(f->d, 8));
	assert_int_equal(dpmu_drv_cpu_event(f->d, 0, 0x08), DPMU_DRV_EVENT_YES);
	assert_int_equal(dpmu_drv_cpu_event(f->d, 0, 0x40), DPMU_DRV_EVENT_UNKNOWN);
	assert_int_equal(dpmu_drv_cluster_event(f->d, 0, 0x2b), DPMU_DRV_EVENT_YES);
	/* every access went through the adapter, and flushed first */
	assert_true(f->rm.accesses > 0);
	assert_int_equal(f->flushes, f->rm.accesses);
	fx_free(f);
}

static void program_and_count(struct fx *f, enum dpmu_drv_access how)
{
	dpmu_drv_set_access(f->d, how);
	OK(dpmu_drv_pmu_reset(f->d, 1, 0, &f->err));
	OK(dpmu_drv_pmu_program(f->d, 1, 3, 0x08, DPMU_DRV_EL01, &f->err));
	OK(dpmu_drv_pmu_program_cycles(f->d, 1, DPMU_DRV_EL01, &f->err));
	OK(dpmu_drv_pmu_start(f->d, 1, (1u << 3) | DPMU_DRV_CYCLE_BIT, &f->err));
	OK(dpmu_drv_pmu_enable(f->d, 1, true, &f->err));
	dpmu_model_core_event(f->m, 1, 0x08, 1234);
	dpmu_model_core_cycles(f->m, 1, 5000);
	uint64_t v;
	uint32_t type;
	OK(dpmu_drv_pmu_read(f->d, 1, 3, &v, &f->err));
	assert_int_equal(v, 1234);
	OK(dpmu_drv_pmu_read(f->d, 1, DPMU_DRV_CYCLE, &v, &f->err));
	assert_int_equal(v, 5000);
	OK(dpmu_drv_pmu_read_type(f->d, 1, 3, &type, &f->err));
	assert_int_equal(type & 0xffff, 0x08);
	OK(dpmu_drv_pmu_write(f->d, 1, 3, 7, &f->err));
	OK(dpmu_drv_pmu_read(f->d, 1, 3, &v, &f->err));
	assert_int_equal(v, 7);
	/* PMCR.E = 0 stops everything; the enable mask stays. */
	OK(dpmu_drv_pmu_enable(f->d, 1, false, &f->err));
	dpmu_model_core_event(f->m, 1, 0x08, 10);
	OK(dpmu_drv_pmu_read(f->d, 1, 3, &v, &f->err));
	assert_int_equal(v, 7);
	uint32_t mask;
	OK(dpmu_drv_pmu_enabled(f->d, 1, &mask, &f->err));
	assert_int_equal(mask, (1u << 3) | DPMU_DRV_CYCLE_BIT);
}

static void counters_direct_and_through_pmselr(void **state)
{
	(void)state;
	struct fx *f = fx_new(DPMU_PROFILE_DEFAULT, 0);
	program_and_count(f, DPMU_DRV_DIRECT);
	program_and_count(f, DPMU_DRV_SELECTED);
	fx_free(f);
}

/* :u counts EL0 only, :k EL1 only (PMEVTYPER.U / .P, reference section 1). */
static void el_filter_u_and_k(void **state)
{
	(void)state;
	struct fx *f = fx_new(DPMU_PROFILE_DEFAULT, 0);
	OK(dpmu_drv_pmu_reset(f->d, 2, 0, &f->err));
	OK(dpmu_drv_pmu_program(f->d, 2, 0, 0x08, DPMU_DRV_EL0, &f->err));
	OK(dpmu_drv_pmu_program(f->d, 2, 1, 0x08, DPMU_DRV_EL1, &f->err));
	OK(dpmu_drv_pmu_start(f->d, 2, 0x3, &f->err));
	OK(dpmu_drv_pmu_enable(f->d, 2, true, &f->err));
	dpmu_model_core_event(f->m, 2, 0x08, 100);           /* at EL1 */
	assert_int_equal(dpmu_model_set_el(f->m, 2, 0, DPMU_NONSECURE, &f->err), 0);
	dpmu_model_core_event(f->m, 2, 0x08, 30);
	assert_int_equal(dpmu_model_set_el(f->m, 2, 1, DPMU_NONSECURE, &f->err), 0);
	uint64_t u, k;
	OK(dpmu_drv_pmu_read(f->d, 2, 0, &u, &f->err));
	OK(dpmu_drv_pmu_read(f->d, 2, 1, &k, &f->err));
	assert_int_equal(u, 30);
	assert_int_equal(k, 100);
	fx_free(f);
}

/* CHAIN on the odd counter: the pair reads as one 64-bit counter across
 * many 32-bit wraps (reference section 1). */
static void chained_pair_counts_across_32bit_wraps(void **state)
{
	(void)state;
	struct fx *f = fx_new(DPMU_PROFILE_DEFAULT, 0);
	OK(dpmu_drv_pmu_reset(f->d, 0, 0, &f->err));
	OK(dpmu_drv_pmu_chain(f->d, 0, 2, 0x03, DPMU_DRV_EL01, &f->err));
	OK(dpmu_drv_pmu_write(f->d, 0, 2, 0xfffffff0u, &f->err));
	OK(dpmu_drv_pmu_start(f->d, 0, 0xc, &f->err));
	OK(dpmu_drv_pmu_enable(f->d, 0, true, &f->err));
	uint64_t v, total = 0xfffffff0u;
	const uint64_t steps[] = { 0x10, 1, 0x2ffffffffull, 12345, 0xffffffffull };
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		dpmu_model_core_event(f->m, 0, 0x03, steps[i]);
		total += steps[i];
		OK(dpmu_drv_pmu_read_pair(f->d, 0, 2, &v, &f->err));
		assert_int_equal(v, total);
	}
	/* Overflow of the even counter does not reach PMOVSSET for the odd
	 * one until the pair itself wraps; the even counter's bit is set. */
	uint32_t ovs;
	OK(dpmu_drv_pmu_overflow(f->d, 0, &ovs, &f->err));
	assert_true(ovs & (1u << 2));
	OK(dpmu_drv_pmu_overflow_clear(f->d, 0, ovs, &f->err));
	OK(dpmu_drv_pmu_overflow(f->d, 0, &ovs, &f->err));
	assert_int_equal(ovs, 0);
	/* An odd start is refused before any access. */
	unsigned long before = f->rm.accesses;
	assert_int_equal(dpmu_drv_pmu_chain(f->d, 0, 1, 0x03, DPMU_DRV_EL01, &f->err), DPMU_EINVAL);
	assert_int_equal(f->rm.accesses, before);
	assert_non_null(strstr(f->err.msg, "even counter"));
	fx_free(f);
}

static void overflow_raises_interrupt_when_enabled(void **state)
{
	(void)state;
	struct fx *f = fx_new(DPMU_PROFILE_DEFAULT, 0);
	OK(dpmu_drv_pmu_reset(f->d, 3, 0, &f->err));
	OK(dpmu_drv_pmu_program(f->d, 3, 0, 0x08, DPMU_DRV_EL01, &f->err));
	OK(dpmu_drv_pmu_write(f->d, 3, 0, 0xffffffffu, &f->err));
	OK(dpmu_drv_pmu_start(f->d, 3, 1, &f->err));
	OK(dpmu_drv_pmu_irq_enable(f->d, 3, 1, true, &f->err));
	OK(dpmu_drv_pmu_enable(f->d, 3, true, &f->err));
	assert_false(dpmu_model_core_irq(f->m, 3));
	dpmu_model_core_event(f->m, 3, 0x08, 1);
	assert_true(dpmu_model_core_irq(f->m, 3));
	OK(dpmu_drv_pmu_irq_enable(f->d, 3, 1, false, &f->err));
	assert_false(dpmu_model_core_irq(f->m, 3));
	fx_free(f);
}

static void software_increment(void **state)
{
	(void)state;
	struct fx *f = fx_new(DPMU_PROFILE_DEFAULT, 0);
	OK(dpmu_drv_pmu_reset(f->d, 0, 0, &f->err));
	OK(dpmu_drv_pmu_program(f->d, 0, 4, 0x00, DPMU_DRV_EL01, &f->err));
	OK(dpmu_drv_pmu_start(f->d, 0, 1u << 4, &f->err));
	OK(dpmu_drv_pmu_enable(f->d, 0, true, &f->err));
	OK(dpmu_drv_pmu_swinc(f->d, 0, 1u << 4, &f->err));
	OK(dpmu_drv_pmu_swinc(f->d, 0, 1u << 4, &f->err));
	uint64_t v;
	OK(dpmu_drv_pmu_read(f->d, 0, 4, &v, &f->err));
	assert_int_equal(v, 2);
	fx_free(f);
}

/* Cluster PMU through CLUSTERPMSELR + XEVTYPER/XEVCNTR, from any cpu of
 * the cluster (reference section 3). */
static void cluster_pmu_program_count(void **state)
{
	(void)state;
	struct fx *f = fx_new(DPMU_PROFILE_DEFAULT, 0);
	OK(dpmu_drv_cluster_reset(f->d, 0, &f->err));
	OK(dpmu_drv_cluster_program(f->d, 0, 0, 0x2b, &f->err));
	OK(dpmu_drv_cluster_program(f->d, 0, 2, 0x19, &f->err));
	OK(dpmu_drv_cluster_write(f->d, 0, 2, 0xfffffffeu, &f->err));
	OK(dpmu_drv_cluster_start(f->d, 0, 0x5 | DPMU_DRV_CYCLE_BIT, &f->err));
	OK(dpmu_drv_cluster_enable(f->d, 0, true, &f->err));
	dpmu_model_cluster_event(f->m, 0, 0x2b, 500);
	dpmu_model_cluster_event(f->m, 0, 0x19, 5);
	dpmu_model_cluster_cycles(f->m, 0, 777);
	OK(dpmu_drv_cluster_set_cpu(f->d, 0, 6, &f->err));
	uint64_t v;
	uint32_t ovs;
	OK(dpmu_drv_cluster_read(f->d, 0, 0, &v, &f->err));
	assert_int_equal(v, 500);
	OK(dpmu_drv_cluster_read(f->d, 0, DPMU_DRV_CYCLE, &v, &f->err));
	assert_int_equal(v, 777);
	OK(dpmu_drv_cluster_read(f->d, 0, 2, &v, &f->err));
	assert_int_equal(v, 3);                 /* 32-bit wrap */
	OK(dpmu_drv_cluster_overflow(f->d, 0, &ovs, &f->err));
	assert_int_equal(ovs, 1u << 2);
	assert_int_equal(dpmu_drv_cluster_read(f->d, 0, 6, &v, &f->err), DPMU_ERANGE);
	assert_non_null(strstr(f->err.msg, "CLUSTERPMCR_EL1.N is 6"));
	/* The classic DSU has no CHAIN event: the driver says so. */
	assert_int_equal(dpmu_drv_cluster_chain(f->d, 0, 2, 0x19, &f->err), DPMU_ENOTSUP);
	assert_non_null(strstr(f->err.msg, "CHAIN (0x1E)"));
	/* cpu of another cluster cannot be the access path */
	assert_int_equal(dpmu_drv_cluster_set_cpu(f->d, 0, 9, &f->err), DPMU_EINVAL);
	fx_free(f);
}

/* AMU: group 0 fixed counters; group-1 selection and enables at the
 * highest EL (the model's EL3). */
static void amu_read_and_select(void **state)
{
	(void)state;
	struct fx *f = fx_new(DPMU_PROFILE_DEFAULT, 0);
	uint16_t ev;
	OK(dpmu_drv_amu_type(f->d, 0, 0, 0, &ev, &f->err));
	assert_int_equal(ev, 0x11);
	assert_int_equal(dpmu_model_set_el(f->m, 0, 3, DPMU_SECURE, &f->err), 0);
	OK(dpmu_drv_amu_select(f->d, 0, 1, 0x16, &f->err));
	OK(dpmu_drv_amu_enable(f->d, 0, 0, 0x1, true, &f->err));
	OK(dpmu_drv_amu_enable(f->d, 0, 1, 0x2, true, &f->err));
	assert_int_equal(dpmu_model_set_el(f->m, 0, 1, DPMU_NONSECURE, &f->err), 0);
	dpmu_model_core_cycles(f->m, 0, 1000);
	dpmu_model_core_event(f->m, 0, 0x16, 42);
	uint64_t v;
	OK(dpmu_drv_amu_read(f->d, 0, 0, 0, &v, &f->err));
	assert_int_equal(v, 1000);
	OK(dpmu_drv_amu_read(f->d, 0, 1, 1, &v, &f->err));
	assert_int_equal(v, 42);
	assert_int_equal(dpmu_drv_amu_read(f->d, 0, 1, 2, &v, &f->err), DPMU_ERANGE);
	assert_non_null(strstr(f->err.msg, "CG1NC is 2"));
	fx_free(f);
}

/* Seed 001 section 4.1: PMSSRR then PMSSCR.SS = 1, poll, read the SVRs;
 * RP<n> counters restart from zero. */
static void snapshot_sequence_core_and_cluster(void **state)
{
	(void)state;
	struct fx *f = fx_new(DPMU_PROFILE_DEFAULT, 0);
	OK(dpmu_drv_pmu_reset(f->d, 0, 0, &f->err));
	OK(dpmu_drv_pmu_program(f->d, 0, 0, 0x08, DPMU_DRV_EL01, &f->err));
	OK(dpmu_drv_pmu_program(f->d, 0, 1, 0x04, DPMU_DRV_EL01, &f->err));
	OK(dpmu_drv_pmu_start(f->d, 0, 0x3 | DPMU_DRV_CYCLE_BIT, &f->err));
	OK(dpmu_drv_pmu_enable(f->d, 0, true, &f->err));
	OK(dpmu_drv_frame_unlock(f->d, DPMU_DRV_CORE_FRAME(0), true, &f->err));
	OK(dpmu_drv_snapshot_reset_mask(f->d, DPMU_DRV_CORE_FRAME(0), 0x1, &f->err));
	struct dpmu_drv_snapshot s;
	for (unsigned k = 1; k <= 3; k++) {
		dpmu_model_core_event(f->m, 0, 0x08, 100);
		dpmu_model_core_event(f->m, 0, 0x04, 10);
		dpmu_model_core_cycles(f->m, 0, 1000);
		OK(dpmu_drv_snapshot(f->d, DPMU_DRV_CORE_FRAME(0), &s, &f->err));
		assert_int_equal(s.n, 6);
		assert_int_equal(s.polls, 1);
		assert_int_equal(s.ev[0], 100);         /* delta: RP0 */
		assert_int_equal(s.ev[1], 10 * k);      /* cumulative */
		assert_int_equal(s.cc, 1000 * k);
	}
	/* cluster frame */
	OK(dpmu_drv_cluster_reset(f->d, 0, &f->err));
	OK(dpmu_drv_cluster_program(f->d, 0, 0, 0x2b, &f->err));
	OK(dpmu_drv_cluster_start(f->d, 0, 0x1, &f->err));
	OK(dpmu_drv_cluster_enable(f->d, 0, true, &f->err));
	OK(dpmu_drv_frame_unlock(f->d, DPMU_DRV_CLUSTER_FRAME(0), true, &f->err));
	OK(dpmu_drv_snapshot_reset_mask(f->d, DPMU_DRV_CLUSTER_FRAME(0), 0x7, &f->err));
	dpmu_model_cluster_event(f->m, 0, 0x2b, 64);
	OK(dpmu_drv_snapshot(f->d, DPMU_DRV_CLUSTER_FRAME(0), &s, &f->err));
	assert_int_equal(s.ev[0], 64);
	uint64_t v;
	OK(dpmu_drv_cluster_read(f->d, 0, 0, &v, &f->err));
	assert_int_equal(v, 0);
	fx_free(f);
}

struct waiter {
	struct dpmu_model *m;
	unsigned calls;
};

static void advance(void *ctx, unsigned poll)
{
	struct waiter *w = ctx;
	(void)poll;
	w->calls++;
	dpmu_model_core_cycles(w->m, 0, 10);
}

/* A capture that takes time: SS reads 1 until it completes; the driver
 * polls (bounded) and calls the wait hook in between. */
static void snapshot_polls_until_ss_clears(void **state)
{
	(void)state;
	struct fx *f = fx_new(DPMU_PROFILE_DEFAULT, 35);
	struct waiter w = { f->m, 0 };
	OK(dpmu_drv_frame_unlock(f->d, DPMU_DRV_CORE_FRAME(0), true, &f->err));
	dpmu_drv_set_wait(f->d, advance, &w);
	struct dpmu_drv_snapshot s;
	OK(dpmu_drv_snapshot(f->d, DPMU_DRV_CORE_FRAME(0), &s, &f->err));
	assert_int_equal(w.calls, 4);           /* 40 cycles >= 35 */
	assert_int_equal(s.polls, 5);
	/* No time passes without the hook: the bound ends the wait. */
	dpmu_drv_set_wait(f->d, NULL, NULL);
	dpmu_drv_set_snapshot_polls(f->d, 8);
	assert_int_equal(dpmu_drv_snapshot(f->d, DPMU_DRV_CORE_FRAME(0), &s, &f->err), DPMU_ETIMEDOUT);
	assert_string_equal(f->err.msg, "PMSSCR in the cpu0 frame: SS still reads 1 after 8 polls "
					"(the capture did not complete)");
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(discovery_reads_topology_and_counters),
		cmocka_unit_test(counters_direct_and_through_pmselr),
		cmocka_unit_test(el_filter_u_and_k),
		cmocka_unit_test(chained_pair_counts_across_32bit_wraps),
		cmocka_unit_test(overflow_raises_interrupt_when_enabled),
		cmocka_unit_test(software_increment),
		cmocka_unit_test(cluster_pmu_program_count),
		cmocka_unit_test(amu_read_and_select),
		cmocka_unit_test(snapshot_sequence_core_and_cluster),
		cmocka_unit_test(snapshot_polls_until_ss_clears),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
