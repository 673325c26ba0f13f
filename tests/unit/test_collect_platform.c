/* The collector's platform layer on the host (the aarch64 variant has its own
 * runner in tests/collect_platform, executed under qemu-aarch64). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dynpmu/collect.h"
#include "collect/platform/platform.h"

static void test_lines_touched_by_a_range(void **state)
{
	(void)state;
	assert_int_equal(dpmu_cache_lines(0x1000, 0, 64), 0);
	assert_int_equal(dpmu_cache_lines(0x1000, 1, 64), 1);
	assert_int_equal(dpmu_cache_lines(0x1000, 64, 64), 1);
	assert_int_equal(dpmu_cache_lines(0x1000, 65, 64), 2);
	/* A 2-byte range straddling a line boundary touches both lines. */
	assert_int_equal(dpmu_cache_lines(0x103f, 2, 64), 2);
	assert_int_equal(dpmu_cache_lines(0x1001, 128, 64), 3);
	/* Ending at the very top of the address space must not wrap. */
	assert_int_equal(dpmu_cache_lines(UINTPTR_MAX - 63, 64, 64), 1);
	assert_int_equal(dpmu_cache_lines(UINTPTR_MAX - 64, 65, 64), 2);
}

static void test_zero_length_range_returns_at_once(void **state)
{
	(void)state;
	/* No line may be touched, even at an address that is not mapped. */
	assert_int_equal(dpmu_cache_flush_range((const void *)(uintptr_t)16, 0), 0);
	assert_int_equal(dpmu_cache_invalidate_range((const void *)(uintptr_t)16, 0), 0);
}

static void test_host_cache_ops_keep_data(void **state)
{
	(void)state;
	_Alignas(64) unsigned char buf[256];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (unsigned char)(i * 7);
	size_t f = dpmu_cache_flush_range(buf + 3, 130);
	size_t v = dpmu_cache_invalidate_range(buf + 3, 130);
	if (strcmp(dpmu_collect_platform(), "aarch64") == 0) {
		assert_int_equal(f, dpmu_cache_lines((uintptr_t)(buf + 3), 130, dpmu_cache_line_size()));
		assert_int_equal(v, f);
	} else {
		/* x86-64 and the simulator perform no cache operation. */
		assert_int_equal(f, 0);
		assert_int_equal(v, 0);
	}
	for (size_t i = 0; i < sizeof buf; i++)
		assert_int_equal(buf[i], (unsigned char)(i * 7));
}

static void test_line_size_is_a_power_of_two(void **state)
{
	(void)state;
	size_t line = dpmu_cache_line_size();
	assert_true(line >= 16 && line <= 2048);
	assert_int_equal(line & (line - 1), 0);
}

static void test_barriers_run(void **state)
{
	(void)state;
	dpmu_rmb();
	dpmu_wmb();
	dpmu_mb();
	const char *p = dpmu_collect_platform();
	assert_true(!strcmp(p, "x86_64") || !strcmp(p, "aarch64") || !strcmp(p, "sim"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_touched_by_a_range),
		cmocka_unit_test(test_zero_length_range_returns_at_once),
		cmocka_unit_test(test_host_cache_ops_keep_data),
		cmocka_unit_test(test_line_size_is_a_power_of_two),
		cmocka_unit_test(test_barriers_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
