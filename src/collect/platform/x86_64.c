/*
 * x86-64 platform layer. The host's caches are coherent with every writer we
 * meet there, so cache maintenance is no operation; seed 002 "Cache
 * primitives" then says the call supplies no ordering either, so it issues no
 * barrier: protocols order with dpmu_rmb/dpmu_wmb or acquire/release.
 */
#include <cpuid.h>

#include "dynpmu/collect.h"

void dpmu_rmb(void) { __asm__ __volatile__("lfence" ::: "memory"); }
void dpmu_wmb(void) { __asm__ __volatile__("sfence" ::: "memory"); }
void dpmu_mb(void) { __asm__ __volatile__("mfence" ::: "memory"); }

size_t dpmu_cache_line_size(void)
{
	unsigned a, b, c, d;
	/* CPUID.01H:EBX[15:8] is the CLFLUSH line size in 8-byte units. */
	if (__get_cpuid(1, &a, &b, &c, &d) && ((b >> 8) & 0xff))
		return (size_t)((b >> 8) & 0xff) * 8;
	return 64;
}

const char *dpmu_collect_platform(void) { return "x86_64"; }

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
