/*
 * Internal to the collector's platform layer: what every <arch>.c shares.
 */
#ifndef DPMU_COLLECT_PLATFORM_H
#define DPMU_COLLECT_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

/* Lines of size `line` (a power of two) that [addr, addr+len) touches. Seed
 * 002 "Cache primitives": maintenance is over whole cache lines, so a range
 * that starts or ends inside a line maintains that whole line. Computed from
 * line indices so a range ending at the top of the address space does not
 * overflow. */
static inline size_t dpmu_cache_lines(uintptr_t addr, size_t len, size_t line)
{
	if (len == 0)
		return 0;
	uintptr_t first = addr / line;
	uintptr_t last = (addr + (len - 1)) / line;
	return (size_t)(last - first) + 1;
}

/* Ask for a line in a writable state ahead of a store to it. In a ring the
 * line was last read by the other side, so a plain prefetch would fetch it
 * shared and the store would still wait for the upgrade. */
static inline void dpmu_prefetch_write(const void *p)
{
#if defined(__x86_64__)
	__asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)p));
#elif defined(__aarch64__)
	__asm__ __volatile__("prfm pstl1keep, %0" : : "Q"(*(const char *)p));
#else
	__builtin_prefetch(p, 1);
#endif
}

#endif
