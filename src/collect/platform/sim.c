/*
 * Simulator platform layer (any other host, or DPMU_COLLECT_PLATFORM=sim).
 * The cache is modelled as coherent, so maintenance is no operation and, per
 * seed 002 "Cache primitives", supplies no ordering; barriers are C11 fences.
 */
#include <stdatomic.h>

#include "dynpmu/collect.h"

void dpmu_rmb(void) { atomic_thread_fence(memory_order_acquire); }
void dpmu_wmb(void) { atomic_thread_fence(memory_order_release); }
void dpmu_mb(void) { atomic_thread_fence(memory_order_seq_cst); }

size_t dpmu_cache_line_size(void) { return DPMU_COLLECT_LINE; }

const char *dpmu_collect_platform(void) { return "sim"; }

size_t dpmu_cache_flush_range(const void *addr, size_t len)
{
	(void)addr;
	(void)len;
	return 0;
}

size_t dpmu_cache_invalidate_range(const void *addr, size_t len)
{
	(void)addr;
	(void)len;
	return 0;
}
