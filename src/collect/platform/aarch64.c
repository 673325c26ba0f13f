/*
 * aarch64 platform layer. Seed 002 "Cache primitives and barriers": clean is
 * dc cvac, clean+invalidate is dc civac (never a pure invalidate: dirty bytes
 * may be written back), both over whole lines, completed by dsb sy; isb.
 * Linux lets EL0 execute DC CVAC/CIVAC and read CTR_EL0 (SCTLR_EL1.UCI/UCT).
 */
#include "dynpmu/collect.h"
#include "collect/platform/platform.h"

void dpmu_rmb(void) { __asm__ __volatile__("dsb ld" ::: "memory"); }
void dpmu_wmb(void) { __asm__ __volatile__("dsb st" ::: "memory"); }
void dpmu_mb(void) { __asm__ __volatile__("dsb sy" ::: "memory"); }

size_t dpmu_cache_line_size(void)
{
	uint64_t ctr;
	__asm__ __volatile__("mrs %0, ctr_el0" : "=r"(ctr));
	/* CTR_EL0.DminLine, bits [19:16]: log2 of the line size in 4-byte words. */
	return (size_t)4 << ((ctr >> 16) & 0xf);
}

const char *dpmu_collect_platform(void) { return "aarch64"; }

/* Both maintenance calls walk the same lines and complete the same way; only
 * the instruction differs (clean: dc cvac, clean+invalidate: dc civac). */
static size_t maintain_lines(const void *addr, size_t len, int invalidate)
{
	if (len == 0)
		return 0;
	size_t line = dpmu_cache_line_size();
	size_t n = dpmu_cache_lines((uintptr_t)addr, len, line);
	uintptr_t p = (uintptr_t)addr & ~(uintptr_t)(line - 1);
	for (size_t i = 0; i < n; i++, p += line) {
		if (invalidate)
			__asm__ __volatile__("dc civac, %0" : : "r"(p) : "memory");
		else
			__asm__ __volatile__("dc cvac, %0" : : "r"(p) : "memory");
	}
	__asm__ __volatile__("dsb sy\n\tisb" ::: "memory");
	return n;
}

size_t dpmu_cache_flush_range(const void *addr, size_t len)
{
	return maintain_lines(addr, len, 0);
}

size_t dpmu_cache_invalidate_range(const void *addr, size_t len)
{
	return maintain_lines(addr, len, 1);
}
