/*
 * Platform-layer checks for the cross-built collector (aarch64 under
 * qemu-aarch64): CTR_EL0 line size, dc cvac / dc civac over whole lines,
 * zero-length ranges, and the slot and ring hand-offs driven by the
 * decision table with real barriers and cache operations in the path.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dynpmu/collect.h"
#include "collect/platform/platform.h"

static int passed, failed;

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (cond) {                                                          \
			passed++;                                                    \
		} else {                                                             \
			failed++;                                                    \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                    \
	} while (0)

static void test_platform_is_aarch64(void)
{
#if defined(__aarch64__)
	CHECK(strcmp(dpmu_collect_platform(), "aarch64") == 0);
#else
	CHECK(strcmp(dpmu_collect_platform(), "aarch64") != 0);
#endif
}

static void test_line_size_from_ctr_el0(void)
{
	size_t line = dpmu_cache_line_size();
	CHECK(line >= 16 && line <= 2048);
	CHECK((line & (line - 1)) == 0);
}

static void test_zero_length(void)
{
	/* Must return before touching the (unmapped) address. */
	CHECK(dpmu_cache_flush_range((const void *)(uintptr_t)8, 0) == 0);
	CHECK(dpmu_cache_invalidate_range((const void *)(uintptr_t)8, 0) == 0);
}

static void test_every_touched_line(void)
{
	static _Alignas(256) unsigned char buf[1024];
	size_t line = dpmu_cache_line_size();
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (unsigned char)(i ^ 0x5a);
	/* One byte: one line. Two bytes across a boundary: two lines. */
	CHECK(dpmu_cache_flush_range(buf, 1) == 1);
	CHECK(dpmu_cache_flush_range(buf + line - 1, 2) == 2);
	CHECK(dpmu_cache_invalidate_range(buf + line - 1, 2) == 2);
	CHECK(dpmu_cache_flush_range(buf + 3, 3 * line) == 4);
	CHECK(dpmu_cache_invalidate_range(buf, 4 * line) == 4);
	/* dc civac cleans before it invalidates: data written by this core
	 * survives (seed 002: "not pure invalidation"). */
	int same = 1;
	for (size_t i = 0; i < sizeof buf; i++)
		same &= buf[i] == (unsigned char)(i ^ 0x5a);
	CHECK(same);
}

static void test_barriers(void)
{
	dpmu_rmb();
	dpmu_wmb();
	dpmu_mb();
	CHECK(1);
}

static void test_slot_with_maintenance(void)
{
	struct dpmu_coh_rule rule;
	/* The path that exercises every primitive: writer clean + wmb, reader rmb
	 * + invalidate (accelerator writer and host DMA on a2a3, MMIO flag). */
	CHECK(dpmu_coh_decide(DPMU_COH_PLATFORM_NONCOHERENT_DMA, DPMU_COH_WRITER_ACCEL_CORE,
			      DPMU_COH_SIGNAL_MMIO, &rule, NULL) == 0);
	rule.reader |= DPMU_COH_READER_INVALIDATE;
	static struct dpmu_slot slot;
	dpmu_slot_init(&slot);
	struct dpmu_record rec = {.time = 11, .kind = 2, .val = {1, 2, 3, 4, 5}}, out;
	uint64_t mism = 0;
	CHECK(dpmu_slot_read(&slot, 1, &rule, &out, &mism) == DPMU_EBUSY);
	dpmu_slot_publish(&slot, &rec, 1, &rule);
	CHECK(dpmu_slot_read(&slot, 1, &rule, &out, &mism) == 0);
	CHECK(out.time == 11 && out.val[4] == 5 && out.seq == 1 && mism == 0);
}

struct prod_arg {
	struct dpmu_ring *ring;
	uint64_t n;
};

static void *producer(void *p)
{
	struct prod_arg *a = p;
	struct dpmu_record rec = {0};
	for (uint64_t i = 0; i < a->n; i++) {
		rec.val[0] = i;
		rec.val[1] = ~i;
		while (dpmu_ring_push(a->ring, &rec) != 0)
			;
	}
	dpmu_ring_flush(a->ring);
	return NULL;
}

static void test_ring_two_threads(void)
{
	struct dpmu_coh_rule rule;
	CHECK(dpmu_coh_decide(DPMU_COH_PLATFORM_NONCOHERENT_DMA, DPMU_COH_WRITER_ACCEL_CORE,
			      DPMU_COH_SIGNAL_MMIO, &rule, NULL) == 0);
	struct dpmu_ring *ring;
	CHECK(dpmu_ring_create(&ring, 0, 64, 8, DPMU_RING_LOSSLESS, &rule, NULL) == 0);
	struct prod_arg a = {ring, 20000};
	pthread_t t;
	pthread_create(&t, NULL, producer, &a);
	uint64_t next = 0, bad = 0;
	struct dpmu_record out[16];
	while (next < a.n) {
		size_t k = dpmu_ring_pop(ring, out, 16);
		for (size_t i = 0; i < k; i++, next++)
			bad += out[i].val[0] != next || out[i].val[1] != ~next;
	}
	pthread_join(t, NULL);
	struct dpmu_ring_stats st;
	dpmu_ring_stats(ring, &st);
	CHECK(bad == 0);
	CHECK(st.produced == a.n && st.collected == a.n && st.dropped == 0 && st.mismatched == 0);
	dpmu_ring_destroy(ring);
}

int main(void)
{
	test_platform_is_aarch64();
	test_line_size_from_ctr_el0();
	test_zero_length();
	test_every_touched_line();
	test_barriers();
	test_slot_with_maintenance();
	test_ring_two_threads();
	printf("%s: line %zu bytes\n", dpmu_collect_platform(), dpmu_cache_line_size());
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
