/*
 * Shared fixture of the monitor's unit tests (tests/unit/test_monitor_*.c):
 * a built-in profile's model, the regio adapter onto it and the driver
 * over that, so the monitor reaches the counters the way it does in stat.
 */
#ifndef DPMU_TEST_MONITOR_FIXTURE_H
#define DPMU_TEST_MONITOR_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dynpmu/driver.h"
#include "dynpmu/model.h"
#include "dynpmu/monitor.h"
#include "dynpmu/regio_model.h"

struct fixture {
	struct dpmu_profile *p;
	struct dpmu_model *m;
	struct dpmu_regio_model rm;
	struct dpmu_drv *drv;
	struct dpmu_mon_events ev;
	struct dpmu_err err;
};

static inline struct fixture *open_profile(const char *name)
{
	static struct fixture f;
	memset(&f, 0, sizeof f);
	assert_int_equal(dpmu_profile_load(name, &f.p, &f.err), 0);
	assert_int_equal(dpmu_model_create(f.p, &f.m, &f.err), 0);
	dpmu_regio_model_init(&f.rm, f.m, NULL, NULL);
	assert_int_equal(dpmu_drv_create(&f.rm.io, &f.drv, &f.err), 0);
	return &f;
}

static inline struct fixture *open_default(void)
{
	return open_profile("a75x4-a55x4");
}

static inline void close_fixture(struct fixture *f)
{
	dpmu_drv_destroy(f->drv);
	dpmu_model_destroy(f->m);
	dpmu_profile_free(f->p);
}

#define CPU0 (UINT64_C(1) << 0)

#endif
