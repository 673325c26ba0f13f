/* The decision table against every row of seed 002's writer table and its
 * "Quick decision table". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dynpmu/collect.h"

#define NCD DPMU_COH_PLATFORM_NONCOHERENT_DMA
#define CD DPMU_COH_PLATFORM_COHERENT_DMA
#define SMP DPMU_COH_PLATFORM_SMP
#define FLAG DPMU_COH_SIGNAL_FLAG
#define MMIO DPMU_COH_SIGNAL_MMIO
#define INV DPMU_COH_READER_INVALIDATE
#define RMB DPMU_COH_READER_RMB
#define CLEAN DPMU_COH_WRITER_CLEAN

static struct dpmu_coh_rule decide(int p, int w, int s)
{
	struct dpmu_coh_rule r;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	int rc = dpmu_coh_decide(p, w, s, &r, &err);
	assert_int_equal(rc, 0);
	assert_non_null(r.reason);
	assert_true(strlen(r.reason) > 20);
	assert_non_null(strstr(r.reason, "seed 002"));
	return r;
}

/* Writer table, column "a2a3: must invalidate before read?" (flag signal). */
static void test_writer_table_a2a3_invalidate_column(void **state)
{
	(void)state;
	assert_int_equal(decide(NCD, DPMU_COH_WRITER_SELF, FLAG).reader & INV, 0);
	assert_int_equal(decide(NCD, DPMU_COH_WRITER_COHERENT_CORE, FLAG).reader & INV, 0);
	assert_int_equal(decide(NCD, DPMU_COH_WRITER_ACCEL_CORE, FLAG).reader & INV, 0);
	assert_int_equal(decide(NCD, DPMU_COH_WRITER_HOST_DMA, FLAG).reader & INV, INV);
	assert_int_equal(decide(NCD, DPMU_COH_WRITER_DEVICE_DMA, FLAG).reader & INV, INV);
}

/* Writer table row "Device writes to RDMA/URMA completion records": N/A on a2a3. */
static void test_writer_table_cqe_unsupported_on_a2a3(void **state)
{
	(void)state;
	struct dpmu_coh_rule r;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	for (int s = 0; s < DPMU_COH_SIGNAL_COUNT; s++) {
		assert_int_equal(dpmu_coh_decide(NCD, DPMU_COH_WRITER_DEVICE_CQE, s, &r, &err),
				 DPMU_ENOTSUP);
		assert_int_equal(err.code, DPMU_ENOTSUP);
		assert_non_null(strstr(err.msg, "device-cqe"));
		assert_int_equal(r.reader, 0);
		assert_int_equal(r.writer, 0);
	}
	assert_int_equal(decide(CD, DPMU_COH_WRITER_DEVICE_CQE, FLAG).reader, 0);
}

/* Writer table column "a5: must invalidate before read?": never (decision step 2). */
static void test_writer_table_a5_never_invalidates(void **state)
{
	(void)state;
	for (int w = 0; w < DPMU_COH_WRITER_COUNT; w++)
		for (int s = 0; s < DPMU_COH_SIGNAL_COUNT; s++)
			assert_int_equal(decide(CD, w, s).reader & INV, 0);
}

/* A plain coherent SMP host owes no cache maintenance on the reader side. */
static void test_smp_never_invalidates(void **state)
{
	(void)state;
	for (int w = 0; w < DPMU_COH_WRITER_COUNT; w++)
		for (int s = 0; s < DPMU_COH_SIGNAL_COUNT; s++)
			assert_int_equal(decide(SMP, w, s).reader & INV, 0);
}

/* "AICore -> AICPU path": the writer's dcci is load-bearing on every platform;
 * decision step 4 says fix the writer, not the reader. */
static void test_accel_core_writer_owes_clean(void **state)
{
	(void)state;
	for (int p = 0; p < DPMU_COH_PLATFORM_COUNT; p++)
		for (int s = 0; s < DPMU_COH_SIGNAL_COUNT; s++) {
			struct dpmu_coh_rule r = decide(p, DPMU_COH_WRITER_ACCEL_CORE, s);
			assert_int_equal(r.writer, CLEAN);
			assert_int_equal(r.reader & INV, 0);
		}
}

/* Decision step 6: no clean to publish a coherent core's store. */
static void test_coherent_writers_owe_no_clean(void **state)
{
	(void)state;
	for (int p = 0; p < DPMU_COH_PLATFORM_COUNT; p++)
		for (int s = 0; s < DPMU_COH_SIGNAL_COUNT; s++) {
			assert_int_equal(decide(p, DPMU_COH_WRITER_SELF, s).writer, 0);
			assert_int_equal(decide(p, DPMU_COH_WRITER_COHERENT_CORE, s).writer, 0);
			assert_int_equal(decide(p, DPMU_COH_WRITER_HOST_DMA, s).writer, 0);
			assert_int_equal(decide(p, DPMU_COH_WRITER_DEVICE_DMA, s).writer, 0);
		}
}

/* Decision step 5: a Device-memory flag owes rmb before the payload, for any
 * writer other than the reader itself; a Normal flag read with acquire does
 * not. */
static void test_mmio_flag_owes_load_load_barrier(void **state)
{
	(void)state;
	for (int p = 0; p < DPMU_COH_PLATFORM_COUNT; p++)
		for (int w = DPMU_COH_WRITER_COHERENT_CORE; w < DPMU_COH_WRITER_COUNT; w++) {
			if (p == NCD && w == DPMU_COH_WRITER_DEVICE_CQE)
				continue;
			assert_int_equal(decide(p, w, MMIO).reader & RMB, RMB);
			assert_int_equal(decide(p, w, FLAG).reader & RMB, 0);
		}
	assert_int_equal(decide(NCD, DPMU_COH_WRITER_SELF, MMIO).reader, 0);
}

/* The invalidate never stands in for the barrier: host DMA on a2a3 with an
 * MMIO flag owes both (seed 002 "cache visibility and protocol ordering are
 * separate"). */
static void test_a2a3_host_dma_mmio_owes_invalidate_and_barrier(void **state)
{
	(void)state;
	assert_int_equal(decide(NCD, DPMU_COH_WRITER_HOST_DMA, MMIO).reader, INV | RMB);
	assert_int_equal(decide(NCD, DPMU_COH_WRITER_DEVICE_DMA, MMIO).reader, INV | RMB);
}

/* Seed 002 "Historical pitfall": an invalidate on the AICPU side of the
 * AICore staging slot was only providing COND->slot ordering. The table must
 * answer "no invalidate, explicit rmb, writer dcci" for that case. */
static void test_historical_pitfall_invalidate_was_only_ordering(void **state)
{
	(void)state;
	struct dpmu_coh_rule r = decide(NCD, DPMU_COH_WRITER_ACCEL_CORE, MMIO);
	assert_int_equal(r.reader & INV, 0);
	assert_int_equal(r.reader & RMB, RMB);
	assert_int_equal(r.writer, CLEAN);
	assert_non_null(strstr(r.reason, "load-load barrier"));
}

static void test_bad_arguments(void **state)
{
	(void)state;
	struct dpmu_coh_rule r;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	assert_int_equal(dpmu_coh_decide(DPMU_COH_PLATFORM_COUNT, 0, 0, &r, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "platform 3"));
	assert_int_equal(dpmu_coh_decide(0, DPMU_COH_WRITER_COUNT, 0, &r, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "writer"));
	assert_int_equal(dpmu_coh_decide(0, 0, (enum dpmu_coh_signal)-1, &r, &err), DPMU_EINVAL);
	assert_int_equal(dpmu_coh_decide(0, 0, 0, NULL, &err), DPMU_EINVAL);
	assert_string_equal(dpmu_coh_platform_name(NCD), "noncoherent-dma");
	assert_string_equal(dpmu_coh_writer_name(DPMU_COH_WRITER_HOST_DMA), "host-dma");
	assert_string_equal(dpmu_coh_signal_name(MMIO), "mmio");
	assert_string_equal(dpmu_coh_writer_name(DPMU_COH_WRITER_COUNT), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writer_table_a2a3_invalidate_column),
		cmocka_unit_test(test_writer_table_cqe_unsupported_on_a2a3),
		cmocka_unit_test(test_writer_table_a5_never_invalidates),
		cmocka_unit_test(test_smp_never_invalidates),
		cmocka_unit_test(test_accel_core_writer_owes_clean),
		cmocka_unit_test(test_coherent_writers_owe_no_clean),
		cmocka_unit_test(test_mmio_flag_owes_load_load_barrier),
		cmocka_unit_test(test_a2a3_host_dma_mmio_owes_invalidate_and_barrier),
		cmocka_unit_test(test_historical_pitfall_invalidate_was_only_ordering),
		cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
