/*
 * Driver error messages: every trap, UNDEFINED access and refused external
 * access names the register, the cpu or frame, and the rule (driver.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dynpmu/driver.h"
#include "dynpmu/regio_model.h"

static struct dpmu_model *model;
static struct dpmu_regio_model rm;
static struct dpmu_drv *drv;
static struct dpmu_err err;

static int setup(void **state)
{
	(void)state;
	struct dpmu_profile *p = NULL;
	if (dpmu_profile_load(DPMU_PROFILE_DEFAULT, &p, &err) || dpmu_model_create(p, &model, &err))
		return -1;
	dpmu_profile_free(p);
	dpmu_regio_model_init(&rm, model, NULL, NULL);
	return dpmu_drv_create(&rm.io, &drv, &err);
}

static int teardown(void **state)
{
	(void)state;
	dpmu_drv_destroy(drv);
	dpmu_model_destroy(model);
	return 0;
}

static void set_el(unsigned cpu, unsigned el)
{
	assert_int_equal(dpmu_model_set_el(model, cpu, el, el == 3 ? DPMU_SECURE : DPMU_NONSECURE, &err), 0);
}

/* The example message of include/dynpmu/driver.h, word for word: a trap
 * names the register, the cpu and the PMUSERENR bits that would open it. */
static void el0_cycle_counter_read_traps_to_el1(void **state)
{
	(void)state;
	uint64_t v = 1;
	set_el(2, 0);
	assert_int_equal(dpmu_drv_pmu_read(drv, 2, DPMU_DRV_CYCLE, &v, &err), DPMU_ESTATE);
	assert_string_equal(err.msg, "PMCCNTR_EL0 on cpu2: trapped to EL1 (EL0 access needs "
				     "PMUSERENR_EL0.EN or .CR)");
	assert_int_equal(v, 0);
	assert_int_equal(dpmu_drv_pmu_read(drv, 2, 4, &v, &err), DPMU_ESTATE);
	assert_string_equal(err.msg, "PMEVCNTR4_EL0 on cpu2: trapped to EL1 (EL0 access needs "
				     "PMUSERENR_EL0.EN or .ER)");
	assert_int_equal(dpmu_drv_pmu_swinc(drv, 2, 1, &err), DPMU_ESTATE);
	assert_string_equal(err.msg, "write of PMSWINC_EL0 on cpu2: trapped to EL1 (EL0 access "
				     "needs PMUSERENR_EL0.EN or .SW)");
	set_el(2, 1);
	/* with CR granted, EL0 reads the cycle counter */
	assert_int_equal(dpmu_drv_pmu_userenr(drv, 2, 0x4, &err), 0);
	set_el(2, 0);
	assert_int_equal(dpmu_drv_pmu_read(drv, 2, DPMU_DRV_CYCLE, &v, &err), 0);
	set_el(2, 1);
	assert_int_equal(dpmu_drv_pmu_userenr(drv, 2, 0, &err), 0);
}

static void el1_register_at_el0_is_undefined(void **state)
{
	(void)state;
	set_el(1, 0);
	assert_int_equal(dpmu_drv_pmu_irq_enable(drv, 1, 1, true, &err), DPMU_ESTATE);
	assert_string_equal(err.msg, "write of PMINTENSET_EL1 on cpu1: UNDEFINED (EL1 registers "
				     "are UNDEFINED at EL0)");
	assert_int_equal(dpmu_drv_cluster_enable(drv, 0, true, &err), 0); /* via cpu0, at EL1 */
	assert_int_equal(dpmu_drv_cluster_set_cpu(drv, 0, 1, &err), 0);
	uint64_t v;
	assert_int_equal(dpmu_drv_cluster_read(drv, 0, 0, &v, &err), DPMU_ESTATE);
	assert_non_null(strstr(err.msg, "CLUSTERPMSELR_EL1 on cpu1: UNDEFINED"));
	assert_int_equal(dpmu_drv_cluster_set_cpu(drv, 0, 0, &err), 0);
	set_el(1, 1);
}

static void amu_el0_access_names_amuserenr(void **state)
{
	(void)state;
	uint64_t v;
	set_el(3, 0);
	assert_int_equal(dpmu_drv_amu_read(drv, 3, 0, 1, &v, &err), DPMU_ESTATE);
	assert_string_equal(err.msg, "AMEVCNTR01_EL0 on cpu3: trapped to EL1 (EL0 access needs "
				     "AMUSERENR_EL0.EN)");
	set_el(3, 1);
}

/* The external access rule (reference section 2): the message names the
 * register, its offset, the frame and the rule. */
static void refused_external_access_names_frame_and_rule(void **state)
{
	(void)state;
	struct dpmu_drv_snapshot s;
	assert_int_equal(dpmu_model_cluster_set_extauth(model, 0, false, &err), 0);
	assert_int_equal(dpmu_drv_frame_unlock(drv, DPMU_DRV_CLUSTER_FRAME(0), true, &err), 0);
	assert_int_equal(dpmu_drv_snapshot(drv, DPMU_DRV_CLUSTER_FRAME(0), &s, &err), DPMU_EIO);
	assert_non_null(strstr(err.msg, "write of PMSSCR (offset 0xe30) in the cluster0 frame: "
					"external access refused"));
	assert_non_null(strstr(err.msg, "authentication"));
	assert_int_equal(dpmu_model_cluster_set_extauth(model, 0, true, &err), 0);

	uint32_t v;
	assert_int_equal(dpmu_model_set_oslock(model, 5, true, &err), 0);
	assert_int_equal(dpmu_drv_extread(drv, DPMU_DRV_CORE_FRAME(5), 0x018, &v, &err), DPMU_EIO);
	assert_non_null(strstr(err.msg, "PMEVCNTR3 (offset 0x018) in the cpu5 frame"));
	assert_int_equal(dpmu_model_set_oslock(model, 5, false, &err), 0);
}

/* A software-locked frame ignores writes: the driver refuses rather than
 * losing the snapshot trigger. */
static void locked_frame_is_reported(void **state)
{
	(void)state;
	struct dpmu_drv_snapshot s;
	assert_int_equal(dpmu_drv_frame_unlock(drv, DPMU_DRV_CORE_FRAME(4), false, &err), 0);
	assert_int_equal(dpmu_drv_snapshot(drv, DPMU_DRV_CORE_FRAME(4), &s, &err), DPMU_ESTATE);
	assert_string_equal(err.msg, "PMSSCR in the cpu4 frame: the frame is software-locked "
				     "(PMLSR.SLK = 1), writes are ignored; write 0xC5ACCE55 to PMLAR first");
}

/* Bad arguments touch no register. */
static void bad_arguments_touch_no_register(void **state)
{
	(void)state;
	unsigned long before = rm.accesses;
	uint64_t v;
	uint32_t x;
	assert_int_equal(dpmu_drv_pmu_read(drv, 8, 0, &v, &err), DPMU_EINVAL);
	assert_string_equal(err.msg, "no cpu8: the system has cpu0-cpu7");
	assert_int_equal(dpmu_drv_pmu_program(drv, 0, 6, 0x08, DPMU_DRV_EL01, &err), DPMU_ERANGE);
	assert_string_equal(err.msg, "counter 6 on cpu0: PMCR_EL0.N is 6 (event counters 0-5)");
	assert_int_equal(dpmu_drv_pmu_start(drv, 0, 0x40, &err), DPMU_ERANGE);
	assert_non_null(strstr(err.msg, "bits 0x00000040 name no counter"));
	assert_int_equal(dpmu_drv_extread(drv, DPMU_DRV_CORE_FRAME(0), 0x1001, &x, &err), DPMU_EINVAL);
	assert_int_equal(dpmu_drv_extread(drv, DPMU_DRV_CLUSTER_FRAME(1), 0, &x, &err), DPMU_EINVAL);
	assert_string_equal(err.msg, "no cluster1 frame: the system has cluster0-cluster0");
	assert_int_equal(dpmu_drv_extread(drv, DPMU_DRV_CORE_FRAME(8), 0, &x, &err), DPMU_EINVAL);
	assert_string_equal(err.msg, "no cpu8 frame: the system has cpu0-cpu7");
	/* a frame kind that is neither is named as such, not as a missing cluster */
	struct dpmu_drv_frame odd = {(enum dpmu_regio_frame_kind)7, 0};
	assert_int_equal(dpmu_drv_extread(drv, odd, 0, &x, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "frame kind 7"));
	assert_int_equal(dpmu_drv_amu_read(drv, 0, 2, 0, &v, &err), DPMU_EINVAL);
	assert_int_equal(dpmu_drv_pmu_userenr(drv, 0, 0x10, &err), DPMU_EINVAL);
	assert_int_equal(rm.accesses, before);
}

/* An incomplete regio is refused at create. */
static void incomplete_regio_is_refused(void **state)
{
	(void)state;
	struct dpmu_regio_ops ops = { 0 };
	struct dpmu_regio io = { &ops, NULL, 1, 1 };
	struct dpmu_drv *d = (struct dpmu_drv *)1;
	assert_int_equal(dpmu_drv_create(&io, &d, &err), DPMU_EINVAL);
	assert_null(d);
	assert_non_null(strstr(err.msg, "incomplete"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(el0_cycle_counter_read_traps_to_el1),
		cmocka_unit_test(el1_register_at_el0_is_undefined),
		cmocka_unit_test(amu_el0_access_names_amuserenr),
		cmocka_unit_test(refused_external_access_names_frame_and_rule),
		cmocka_unit_test(locked_frame_is_reported),
		cmocka_unit_test(bad_arguments_touch_no_register),
		cmocka_unit_test(incomplete_regio_is_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
