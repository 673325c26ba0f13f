/* The aarch64 Linux system-call facts the plugin reads a guest's calls by:
 * call numbers (asm-generic/unistd.h, which aarch64 uses), the futex
 * operations (linux/futex.h), the clone flag and the clocks
 * (include/uapi/linux/time.h, the same on aarch64 and the host). They are
 * the guest kernel's ABI, not the host's: the plugin runs on the host, so
 * <sys/syscall.h>'s numbers are x86-64's and do not apply. */
#ifndef DPMU_GUEST_SYSCALLS_H
#define DPMU_GUEST_SYSCALLS_H

#include <stdint.h>

enum {
	A64_SYS_EPOLL_PWAIT = 22,
	A64_SYS_READ = 63,
	A64_SYS_WRITE = 64,
	A64_SYS_READV = 65,
	A64_SYS_WRITEV = 66,
	A64_SYS_PSELECT6 = 72,
	A64_SYS_PPOLL = 73,
	A64_SYS_WAITID = 95,
	A64_SYS_SET_TID_ADDRESS = 96,
	A64_SYS_FUTEX = 98,
	A64_SYS_NANOSLEEP = 101,
	A64_SYS_CLOCK_NANOSLEEP = 115,
	A64_SYS_RT_SIGSUSPEND = 133,
	A64_SYS_RT_SIGTIMEDWAIT = 137,
	A64_SYS_CLONE = 220,
	A64_SYS_MMAP = 222,
	A64_SYS_MPROTECT = 226,
	A64_SYS_WAIT4 = 260,
	A64_SYS_CLONE3 = 435,
	A64_SYS_EPOLL_PWAIT2 = 441,
	A64_SYS_FUTEX_WAITV = 449,
};

/* The calls that wait for another thread, a signal or time (futex only
 * for its waiting operations, below). */
static const uint64_t a64_waiting_syscalls[] = {
	A64_SYS_EPOLL_PWAIT,   A64_SYS_PSELECT6,	A64_SYS_PPOLL,
	A64_SYS_WAITID,	       A64_SYS_NANOSLEEP,	A64_SYS_CLOCK_NANOSLEEP,
	A64_SYS_RT_SIGSUSPEND, A64_SYS_RT_SIGTIMEDWAIT, A64_SYS_WAIT4,
	A64_SYS_EPOLL_PWAIT2,  A64_SYS_FUTEX_WAITV,
};

/* futex's operations, taken without FUTEX_PRIVATE_FLAG (128) and
 * FUTEX_CLOCK_REALTIME (256). */
#define A64_FUTEX_OP_FLAGS (128u | 256u)
enum {
	A64_FUTEX_WAIT = 0,
	A64_FUTEX_WAKE = 1,
	A64_FUTEX_LOCK_PI = 6,
	A64_FUTEX_WAIT_BITSET = 9,
	A64_FUTEX_WAKE_BITSET = 10,
	A64_FUTEX_WAIT_REQUEUE_PI = 11,
	A64_FUTEX_LOCK_PI2 = 13,
};
/* The ones that wait. */
static const uint64_t a64_waiting_futex_ops[] = {A64_FUTEX_WAIT, A64_FUTEX_LOCK_PI,
						 A64_FUTEX_WAIT_BITSET, A64_FUTEX_WAIT_REQUEUE_PI,
						 A64_FUTEX_LOCK_PI2};

/* clone's flag: the kernel clears the child's tid word and wakes its futex
 * when the thread ends. */
#define A64_CLONE_CHILD_CLEARTID 0x00200000u

/* UIO_MAXIOV: a readv or writev of more vectors is EINVAL. */
#define A64_IOV_MAX 1024u

/* clock_nanosleep's flag for an absolute time. */
#define A64_TIMER_ABSTIME 1u

/* The clocks whose sleep lasts its length: REALTIME, MONOTONIC, BOOTTIME,
 * REALTIME_ALARM, BOOTTIME_ALARM, TAI. A sleep on a CPU-time clock is left
 * to the call, as a sleep of unknown length. */
static const uint64_t a64_sleep_clocks[] = {0, 1, 7, 8, 9, 11};

#endif
