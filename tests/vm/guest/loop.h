/* The known loop of the VM tests: exactly 2N+1 instructions (one mov, then
 * N times subs and b.ne), whatever the compiler does around it, so that
 * INST_RETIRED over it is known to the instruction. */
#ifndef DPMU_VM_LOOP_H
#define DPMU_VM_LOOP_H

#include <stdint.h>

/* n >= 1: a subs that reaches zero ends the loop. */
static inline void dpmu_vm_loop(uint64_t n)
{
	__asm__ volatile("mov x9, %0\n"
			 "1:\n\t"
			 "subs x9, x9, #1\n\t"
			 "b.ne 1b\n"
			 :
			 : "r"(n)
			 : "x9", "cc");
}

#endif
