/*
 * The perf backend's discovery against fake sysfs trees: tests/sysfs/
 * biglittle (4x Cortex-A55 + 4x Cortex-A75 behind one DSU, as Linux shows
 * them) and trees made here for the error cases; and a monitor session
 * over kernel-scheduled counters (dpmu_mon_counting) with a fake kernel,
 * for perf's scaling and -I deltas without perf_event_open.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "dynpmu/monitor.h"
#include "dynpmu/perf.h"

#ifndef DPMU_SOURCE_DIR
#error "DPMU_SOURCE_DIR must name the source tree"
#endif
#define BIGLITTLE DPMU_SOURCE_DIR "/tests/sysfs/biglittle"

static const struct dpmu_perf_pmu *pmu_named(const struct dpmu_perf_system *sys, const char *n)
{
	for (unsigned i = 0; i < sys->npmus; i++)
		if (strcmp(sys->pmus[i].name, n) == 0)
			return &sys->pmus[i];
	return NULL;
}

/* A tree's system and the profile made of it, both found. */
struct found {
	struct dpmu_perf_system *sys;
	struct dpmu_profile *p;
};

static struct found found_in(const char *root)
{
	struct found f = {NULL, NULL};
	struct dpmu_err err;
	if (dpmu_perf_discover(root, &f.sys, &err) != 0)
		fail_msg("discovery of %s: %s", root, dpmu_errmsg(&err));
	if (dpmu_perf_profile(f.sys, &f.p, &err) != 0)
		fail_msg("profile of %s: %s", root, dpmu_errmsg(&err));
	return f;
}

static void found_free(struct found *f)
{
	dpmu_profile_free(f->p);
	dpmu_perf_system_free(f->sys);
}

static void discovers_core_pmus_and_the_dsu(void **state)
{
	(void)state;
	struct dpmu_perf_system *sys = NULL;
	struct dpmu_err err;
	assert_int_equal(dpmu_perf_discover(BIGLITTLE, &sys, &err), 0);
	assert_int_equal(sys->npmus, 3);
	assert_int_equal(sys->online, 0xff);
	const struct dpmu_perf_pmu *a55 = pmu_named(sys, "armv8_cortex_a55");
	const struct dpmu_perf_pmu *a75 = pmu_named(sys, "armv8_cortex_a75");
	const struct dpmu_perf_pmu *dsu = pmu_named(sys, "arm_dsu_0");
	assert_non_null(a55);
	assert_non_null(a75);
	assert_non_null(dsu);
	assert_int_equal(a55->kind, DPMU_PERF_PMU_CORE);
	assert_int_equal(a55->type, 8);
	assert_int_equal(a55->cpus, 0x0f);
	assert_int_equal(a75->type, 9);
	assert_int_equal(a75->cpus, 0xf0);
	/* format/: event=config:0-15, long=config1:0 */
	assert_true(a75->event.present);
	assert_int_equal(a75->event.word, 0);
	assert_int_equal(a75->event.lo, 0);
	assert_int_equal(a75->event.hi, 15);
	assert_true(a75->long_bit.present);
	assert_int_equal(a75->long_bit.word, 1);
	assert_int_equal(a75->long_bit.lo, 0);
	assert_int_equal(a75->long_bit.hi, 0);
	/* the DSU: its cluster, and the one cpu its events open on */
	assert_int_equal(dsu->kind, DPMU_PERF_PMU_DSU);
	assert_int_equal(dsu->cpus, 0xff);
	assert_int_equal(dsu->open_cpu, 0);
	assert_int_equal(dsu->event.hi, 31);
	assert_false(dsu->long_bit.present);
	/* events/ aliases */
	assert_true(dpmu_perf_advertises(a55, 0x08));
	assert_true(dpmu_perf_advertises(a55, 0x06));  /* ld_retired: the A55's */
	assert_false(dpmu_perf_advertises(a75, 0x06));
	assert_true(dpmu_perf_advertises(dsu, 0x2b));
	/* cpus map to their PMUs; the DSU covers all */
	assert_ptr_equal(&sys->pmus[sys->core_pmu[2]], a55);
	assert_ptr_equal(&sys->pmus[sys->core_pmu[6]], a75);
	assert_ptr_equal(dpmu_perf_dsu_of(sys, 7), dsu);
	assert_int_equal(sys->midr[5], 0x413fd0a1u);
	/* the PMUs dynpmu does not use are named for messages */
	assert_non_null(strstr(sys->others, "software"));
	dpmu_perf_system_free(sys);
}

static void midr_names_the_core_types_from_the_profiles(void **state)
{
	(void)state;
	struct found f = found_in(BIGLITTLE);
	struct dpmu_profile *p = f.p;
	struct dpmu_err err;
	/* variant and revision differ from the profiles' r0p0: the type is
	 * Implementer and PartNum */
	assert_int_equal(p->n_core_types, 2);
	assert_string_equal(p->core_types[0].name, "Cortex-A55");
	assert_string_equal(p->core_types[0].catalog, "cortex-a55");
	assert_string_equal(p->core_types[1].name, "Cortex-A75");
	assert_int_equal(p->core_types[1].midr, 0x413fd0a1u);
	/* the AMU is not reachable through Linux: none */
	assert_int_equal(p->core_types[1].amu_group0, 0);
	/* implemented = advertised in events/ */
	assert_true(dpmu_core_type_implements(&p->core_types[1], 0x24));
	assert_false(dpmu_core_type_implements(&p->core_types[0], 0x24));
	/* one DynamIQ cluster of eight, cpus in order */
	assert_int_equal(p->nclusters, 1);
	assert_int_equal(p->clusters[0].ncores, 8);
	assert_int_equal(p->clusters[0].core_type[3], 0);
	assert_int_equal(p->clusters[0].core_type[4], 1);
	assert_string_equal(p->clusters[0].catalog, "dsu");
	assert_true(dpmu_cluster_implements(&p->clusters[0], 0x2a));
	unsigned cl, idx;
	assert_string_equal(dpmu_profile_core(p, 5, &cl, &idx)->name, "Cortex-A75");
	/* the event syntax resolves on it: per type, the cluster, software */
	struct dpmu_mon_events ev;
	assert_int_equal(dpmu_mon_events_parse("instructions,l3d_cache,task-clock:u,sw/faults/",
					       p, 0, &ev, &err),
			 0);
	assert_int_equal(ev.ev[0].code[0], 0x08);
	assert_int_equal(ev.ev[0].code[1], 0x08);
	assert_int_equal(ev.ev[1].target, DPMU_MON_CLUSTER);
	assert_int_equal(ev.ev[1].cluster_code[0], 0x2b);
	assert_int_equal(ev.ev[2].target, DPMU_MON_SOFTWARE);
	assert_string_equal(ev.ev[2].name, "task-clock:u");
	assert_int_equal(ev.ev[2].code[0], DPMU_MON_SW_TASK_CLOCK);
	assert_int_equal(ev.ev[3].els, DPMU_DRV_EL01);
	assert_string_equal(ev.ev[3].name, "page-faults");
	assert_int_equal(dpmu_mon_events_parse("task-clok", p, 0, &ev, &err), DPMU_ENOENT);
	assert_non_null(strstr(err.msg, "did you mean task-clock?"));
	found_free(&f);
}

/* ---- trees made here ---------------------------------------------------------- */

static void put(const char *root, const char *rel, const char *text)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	/* mkdir -p of the file's directory */
	for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", text);
	fclose(f);
}

static char *tree(void)
{
	char *t = strdup("/tmp/dpmu_sysfs_XXXXXX");
	assert_non_null(mkdtemp(t));
	return t;
}

static void rm_tree(char *t)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", t);
	assert_int_equal(system(cmd), 0);
	free(t);
}

static void qemu_virt_is_one_unknown_type_without_dsu(void **state)
{
	(void)state;
	/* QEMU's -cpu max (no profile has its MIDR), armv8_pmuv3, no DSU */
	char *t = tree();
	put(t, "devices/system/cpu/online", "0-1");
	put(t, "devices/system/cpu/cpu0/regs/identification/midr_el1", "0x00000000000f0510");
	put(t, "devices/system/cpu/cpu1/regs/identification/midr_el1", "0x00000000000f0510");
	put(t, "bus/event_source/devices/armv8_pmuv3/type", "8");
	put(t, "bus/event_source/devices/armv8_pmuv3/cpus", "0-1");
	put(t, "bus/event_source/devices/armv8_pmuv3/format/event", "config:0-15");
	put(t, "bus/event_source/devices/armv8_pmuv3/events/inst_retired", "event=0x0008");
	put(t, "bus/event_source/devices/software/type", "1");
	struct found f = found_in(t);
	struct dpmu_perf_system *sys = f.sys;
	struct dpmu_profile *p = f.p;
	struct dpmu_err err;
	assert_int_equal(p->n_core_types, 1);
	assert_string_equal(p->core_types[0].name, "armv8_pmuv3");
	assert_string_equal(p->core_types[0].catalog, "armv8-pmuv3");
	assert_int_equal(p->nclusters, 1);
	assert_int_equal(p->clusters[0].ncores, 2);
	assert_null(dpmu_perf_dsu_of(sys, 0));
	struct dpmu_mon_events ev;
	assert_int_equal(dpmu_mon_events_parse("inst_retired,cycles", p, 0, &ev, &err), 0);
	assert_int_equal(ev.ev[1].code[0], 0x11);
	found_free(&f);
	rm_tree(t);
}

static void a_machine_without_arm_pmus_has_cpus_only(void **state)
{
	(void)state;
	char *t = tree();
	put(t, "devices/system/cpu/online", "0-2");
	put(t, "bus/event_source/devices/software/type", "1");
	struct dpmu_perf_system *sys = NULL;
	struct dpmu_profile *p = NULL;
	struct dpmu_err err;
	assert_int_equal(dpmu_perf_discover(t, &sys, &err), 0);
	assert_int_equal(sys->npmus, 0);
	assert_int_equal(sys->core_pmu[0], -1);
	assert_int_equal(dpmu_perf_profile(sys, &p, &err), 0);
	assert_string_equal(p->core_types[0].name, "no core PMU");
	assert_int_equal(dpmu_profile_ncores(p), 3);
	dpmu_profile_free(p);
	dpmu_perf_system_free(sys);
	rm_tree(t);
}

static void bad_trees_name_the_file(void **state)
{
	(void)state;
	struct dpmu_perf_system *sys = NULL;
	struct dpmu_err err;
	assert_int_equal(dpmu_perf_discover("/nonexistent/sysfs", &sys, &err), DPMU_ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/sysfs/devices/system/cpu/online"));
	/* a core PMU without format/event */
	char *t = tree();
	put(t, "devices/system/cpu/online", "0-1");
	put(t, "bus/event_source/devices/armv8_pmuv3_0/type", "8");
	put(t, "bus/event_source/devices/armv8_pmuv3_0/cpus", "0-1");
	assert_int_equal(dpmu_perf_discover(t, &sys, &err), DPMU_EIO);
	assert_non_null(strstr(err.msg, "armv8_pmuv3_0/format/event"));
	/* a cpus file that is no cpu list */
	put(t, "bus/event_source/devices/armv8_pmuv3_0/format/event", "config:0-15");
	put(t, "bus/event_source/devices/armv8_pmuv3_0/cpus", "zero");
	assert_int_equal(dpmu_perf_discover(t, &sys, &err), DPMU_EIO);
	assert_non_null(strstr(err.msg, "armv8_pmuv3_0/cpus"));
	rm_tree(t);
	/* clusters whose cpus interleave cannot be numbered cluster by cluster */
	t = tree();
	put(t, "devices/system/cpu/online", "0-3");
	put(t, "bus/event_source/devices/arm_dsu_0/type", "10");
	put(t, "bus/event_source/devices/arm_dsu_0/cpumask", "0");
	put(t, "bus/event_source/devices/arm_dsu_0/associated_cpus", "0,2");
	put(t, "bus/event_source/devices/arm_dsu_0/format/event", "config:0-31");
	put(t, "bus/event_source/devices/arm_dsu_1/type", "11");
	put(t, "bus/event_source/devices/arm_dsu_1/cpumask", "1");
	put(t, "bus/event_source/devices/arm_dsu_1/associated_cpus", "1,3");
	put(t, "bus/event_source/devices/arm_dsu_1/format/event", "config:0-31");
	struct dpmu_profile *p = NULL;
	assert_int_equal(dpmu_perf_discover(t, &sys, &err), 0);
	assert_int_equal(dpmu_perf_profile(sys, &p, &err), DPMU_ENOTSUP);
	assert_non_null(strstr(err.msg, "arm_dsu_0"));
	assert_null(p);
	dpmu_perf_system_free(sys);
	rm_tree(t);
}

/* ---- a session over a fake kernel -------------------------------------------- */

/* Each event: counts 1000 per read on every unit; event 1 runs half the
 * time it is enabled (the kernel multiplexed it). */
struct fake_kernel {
	unsigned opened, reads, enabled_calls;
	uint64_t t;
};

static int fk_open(void *ctx, const struct dpmu_mon_event *ev, unsigned i, unsigned unit,
		   uint32_t code, bool long_counter, struct dpmu_err *err)
{
	(void)ev;
	(void)i;
	(void)code;
	(void)long_counter;
	(void)err;
	struct fake_kernel *k = ctx;
	if (ev->target == DPMU_MON_CORE && unit >= 4 && code == 0x06)
		return DPMU_ENOTSUP; /* the A75 PMU does not count LD_RETIRED */
	k->opened++;
	return 0;
}

static int fk_enable(void *ctx, bool on, struct dpmu_err *err)
{
	(void)on;
	(void)err;
	((struct fake_kernel *)ctx)->enabled_calls++;
	return 0;
}

static int fk_read(void *ctx, unsigned i, unsigned unit, uint64_t *value, uint64_t *enabled,
		   uint64_t *running, struct dpmu_err *err)
{
	(void)unit;
	(void)err;
	struct fake_kernel *k = ctx;
	k->reads++;
	*enabled = k->t;
	*running = i == 1 ? k->t / 2 : k->t;
	*value = k->t / 1000 * 1000;
	return 0;
}

struct intervals {
	unsigned n;
	struct dpmu_mon_count c[8];
};

static int on_interval(void *ctx, const struct dpmu_mon_session *s, uint64_t t0, uint64_t t1,
		       struct dpmu_err *err)
{
	(void)t0;
	(void)t1;
	(void)err;
	struct intervals *iv = ctx;
	if (iv->n < 8)
		assert_int_equal(dpmu_mon_interval_count(s, 1, 4, &iv->c[iv->n++]), 0);
	return 0;
}

static void counting_session_scales_as_perf(void **state)
{
	(void)state;
	struct found f = found_in(BIGLITTLE);
	struct dpmu_profile *p = f.p;
	struct dpmu_err err;
	struct dpmu_mon_events ev;
	assert_int_equal(dpmu_mon_events_parse("inst_retired,l1d_cache,ld_retired,l3d_cache,cs",
					       p, 0, &ev, &err),
			 0);
	struct fake_kernel k = {0};
	struct dpmu_mon_counting c = {"fake", &k, fk_open, fk_enable, fk_read};
	struct intervals iv = {0};
	struct dpmu_mon_options o = {.interval_ns = 1000000, .on_interval = on_interval, .ctx = &iv};
	struct dpmu_mon_session *s = NULL;
	/* cpu0 (A55) and cpu4 (A75): one cluster */
	assert_int_equal(dpmu_mon_session_create_counting(&c, p, &ev, 0x11, &o, &s, &err), 0);
	/* per core: inst, l1d, cs on both, ld_retired on the A55 only; the DSU once */
	assert_int_equal(k.opened, 3 + 4 + 1);
	assert_int_equal(dpmu_mon_start(s, 0, &err), 0);
	k.t = 1000000;
	assert_int_equal(dpmu_mon_poll(s, 1000000, &err), 0);
	k.t = 2000000;
	assert_int_equal(dpmu_mon_stop(s, 2000000, &err), 0);
	assert_int_equal(k.enabled_calls, 2);
	struct dpmu_mon_count cnt;
	assert_int_equal(dpmu_mon_count_on(s, 1, 4, &cnt), 0);
	assert_true(cnt.supported);
	assert_int_equal(cnt.value, 2000000);
	assert_int_equal(cnt.enabled_ns, 2000000);
	assert_int_equal(cnt.running_ns, 1000000);
	/* value x enabled / running */
	assert_int_equal(dpmu_mon_scaled(&cnt), 4000000);
	assert_int_equal(dpmu_mon_count_on(s, 2, 4, &cnt), 0);
	assert_false(cnt.supported); /* <not supported> on the A75 */
	assert_int_equal(dpmu_mon_count_on(s, 2, 0, &cnt), 0);
	assert_true(cnt.supported);
	assert_int_equal(dpmu_mon_count_on(s, 3, 0, &cnt), 0); /* cluster0 */
	assert_true(cnt.supported);
	/* two -I intervals, each its own delta of value, enabled, running */
	assert_int_equal(iv.n, 2);
	assert_int_equal(iv.c[1].value, 1000000);
	assert_int_equal(iv.c[1].enabled_ns, 1000000);
	assert_int_equal(iv.c[1].running_ns, 500000);
	dpmu_mon_session_destroy(s);
	/* the AMU is Linux's own */
	assert_int_equal(dpmu_mon_events_parse("amu/cpu_cycles/", p, 0, &ev, &err) == 0 ||
				 err.code == DPMU_ENOENT,
			 1);
	found_free(&f);
}

static void the_simulation_refuses_software_events(void **state)
{
	(void)state;
	struct dpmu_profile *p = NULL;
	struct dpmu_err err;
	assert_int_equal(dpmu_profile_load("a75x4-a55x4", &p, &err), 0);
	struct dpmu_mon_events ev;
	assert_int_equal(dpmu_mon_events_parse("task-clock", p, 1, &ev, &err), 0);
	struct dpmu_mon_session *s = NULL;
	/* any non-NULL driver pointer: the check comes before it is used */
	assert_int_equal(dpmu_mon_session_create((struct dpmu_drv *)(void *)p, p, &ev, 1, &s, &err),
			 DPMU_ENOTSUP);
	assert_non_null(strstr(err.msg, "--backend perf"));
	dpmu_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(discovers_core_pmus_and_the_dsu),
		cmocka_unit_test(midr_names_the_core_types_from_the_profiles),
		cmocka_unit_test(qemu_virt_is_one_unknown_type_without_dsu),
		cmocka_unit_test(a_machine_without_arm_pmus_has_cpus_only),
		cmocka_unit_test(bad_trees_name_the_file),
		cmocka_unit_test(counting_session_scales_as_perf),
		cmocka_unit_test(the_simulation_refuses_software_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
