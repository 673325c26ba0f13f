/* Guest programs for tests/integration/qemu_stat.sh, one per mode:
 *   upper        stdin to stdout in upper case, exit status 3
 *   crash        a load from address 0 (SIGSEGV)
 *   regions      two entries of region "outer", each with "inner" nested
 *   regthreads   region "mine" around main's work while a second thread,
 *                in no region, works three times as long
 *   unpaired     markers that do not pair up: region "once" around three
 *                nested entries of "rec"; a thread that ends in region
 *                "left" and a later one (given its index) in none; an end of
 *                "stray" alone; "open" entered, never left; and 70 names
 *                entered and left in turn (beyond 64 regions)
 *   pagemarker   region "split" entered by a marker whose two instructions
 *                lie on two pages (qemu ends a block at a page's end), and
 *                left by a plain one
 *   workers K N  K threads released together by a barrier, each running N
 *                iterations of work(), joined
 *   handoff N M  a thread waiting at a barrier while main runs N iterations
 *                of work(); released by main's arrival, it runs M, joined
 *   threads      two threads incrementing a shared counter with atomics
 *   pingpong N   two threads handing a turn back and forth N times (each
 *                waits in a futex for the other), prints N
 *   pipe N [US]  a thread reading N messages from a pipe that main writes,
 *                one after each stretch of work and a sleep of US
 *                microseconds (default none; each read blocks), prints N
 *   fork N       a child process that runs N iterations of work() while the
 *                parent runs 10000, then waits for it (exit status 3)
 *   exitrun N    a thread that never stops, and main exiting after N
 *                iterations of work() (exit_group with a thread running)
 *   startrace N  a thread and main each storing N times into one cache line
 *                from the thread's start on; main then runs 10 N iterations
 *                of work(), waits for the thread's stores (one futex call,
 *                the same instructions whether it sleeps or not) and exits
 *                with the thread parked in pause()
 *   pipesync N [v]  pipe N, but the thread reads exactly N bytes (with v,
 *                by readv and writev), and main runs
 *                one more stretch of work, waits for it as startrace does,
 *                then exits with it parked
 *   sleeps K US  a thread running K rounds of 2000 iterations of work() and
 *                a sleep of US microseconds each, joined by main
 *   abssleeps K US  the same rounds, each one ending at an absolute time of
 *                CLOCK_MONOTONIC US microseconds after the last
 *   clocksleeps K US C  the same rounds, each a relative clock_nanosleep of
 *                US microseconds on clock C (a number); prints the last
 *                call's result ("clock_nanosleep: 0" or its error's number)
 *   work N       N iterations of work() (for --by-symbol and determinism) */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dynpmu/marker.h"

static _Atomic long shared;
static volatile long sink;

__attribute__((noinline, noipa)) static long work(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += (i * 7) ^ (s >> 3);
	return s;
}

static pthread_mutex_t pp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pp_cond = PTHREAD_COND_INITIALIZER;
static long pp_turn, pp_rounds;

/* Thread `me` (0 or 1) takes every other turn. */
static void *pingpong(void *arg)
{
	long me = (long)(intptr_t)arg, done = 0;
	pthread_mutex_lock(&pp_lock);
	while (pp_turn < 2 * pp_rounds) {
		if (pp_turn % 2 == me) {
			sink = work(400000);
			pp_turn++;
			done++;
			pthread_cond_signal(&pp_cond);
		} else {
			pthread_cond_wait(&pp_cond, &pp_lock);
		}
	}
	pthread_mutex_unlock(&pp_lock);
	return (void *)(intptr_t)done;
}

static void *bump(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++)
		atomic_fetch_add(&shared, 1);
	return NULL;
}

static int pipe_fd[2];

/* Reads messages until the pipe closes; returns how many. */
static void *pipe_reader(void *arg)
{
	(void)arg;
	long got = 0;
	char c;
	while (read(pipe_fd[0], &c, 1) == 1)
		got++;
	return (void *)(intptr_t)got;
}

/* DPMU_REGION_BEGIN(name) with its magic the last instruction of a page
 * and its load the first of the next: the nops fill the page from its
 * start (the branch skips the alignment's padding). */
__attribute__((noinline)) static void page_split_begin(const char *name)
{
#if defined(__aarch64__)
	__asm__ __volatile__("b 1f\n\t.p2align 12\n1:\n\t.rept 1023\n\tnop\n\t.endr\n\t"
			     "orr x3, x3, x3\n\tldrb wzr, [%0]"
			     :
			     : "r"(name)
			     : "memory");
#else
	(void)name;
#endif
}

static void *outside(void *arg)
{
	(void)arg;
	sink = work(30000);
	return NULL;
}

/* Enters a region it never leaves, then ends. */
static void *leaves_open(void *arg)
{
	(void)arg;
	DPMU_REGION_BEGIN("left");
	sink = work(3000);
	return NULL;
}

static long worker_n;
static pthread_barrier_t worker_start;

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&worker_start);
	sink = work(worker_n);
	return NULL;
}

static _Atomic int spinning;

static long sleep_rounds, sleep_us;
static int sleep_clock = -1, sleep_result; /* -1: usleep */

static void *sleeper(void *arg)
{
	(void)arg;
	for (long i = 0; i < sleep_rounds; i++) {
		sink = work(2000);
		if (sleep_clock < 0) {
			usleep((useconds_t)sleep_us);
			continue;
		}
		struct timespec d = {sleep_us / 1000000, sleep_us % 1000000 * 1000};
		sleep_result = clock_nanosleep((clockid_t)sleep_clock, 0, &d, NULL);
	}
	return NULL;
}

static void *abs_sleeper(void *arg)
{
	(void)arg;
	struct timespec at;
	clock_gettime(CLOCK_MONOTONIC, &at);
	for (long i = 0; i < sleep_rounds; i++) {
		sink = work(2000);
		at.tv_nsec += sleep_us * 1000;
		at.tv_sec += at.tv_nsec / 1000000000;
		at.tv_nsec %= 1000000000;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
			;
	}
	return NULL;
}

/* startrace: two words of one line, one per thread */
static volatile long race_line[2] __attribute__((aligned(64)));
static long race_n;
static _Atomic int race_done;

/* A futex call straight through SVC: glibc's syscall() takes more
 * instructions when the call fails (errno), and a wait fails (EAGAIN)
 * when its value has changed already, which depends on host timing. */
static long raw_futex(_Atomic int *addr, long op, long val)
{
	register long x8 __asm__("x8") = SYS_futex;
	register long x0 __asm__("x0") = (long)addr;
	register long x1 __asm__("x1") = op;
	register long x2 __asm__("x2") = val;
	register long x3 __asm__("x3") = 0;
	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	return x0;
}

static long pipe_n;

/* The thread's part is done: main's wait (one raw call) may end; the
 * thread stays parked until main exits. */
static void *done_and_park(void)
{
	atomic_store(&race_done, 1);
	raw_futex(&race_done, FUTEX_WAKE_PRIVATE, 1);
	for (;;)
		pause();
	return NULL;
}

static bool pipe_vectored;

/* one byte through the pipe, by read/write or by readv/writev of two
 * pieces, one of them empty */
static bool pipe_move(int fd, char *c, bool write_it)
{
	if (!pipe_vectored)
		return (write_it ? write(fd, c, 1) : read(fd, c, 1)) == 1;
	struct iovec v[2] = {{c, 0}, {c, 1}};
	return (write_it ? writev(fd, v, 2) : readv(fd, v, 2)) == 1;
}

static void *pipe_counted(void *arg)
{
	(void)arg;
	char c;
	for (long i = 0; i < pipe_n; i++)
		if (!pipe_move(pipe_fd[0], &c, false))
			break;
	return done_and_park();
}

static void *racer(void *arg)
{
	(void)arg;
	for (long i = 0; i < race_n; i++)
		race_line[1] = i;
	return done_and_park();
}

/* Runs until the program exits under it. */
static void *spin(void *arg)
{
	(void)arg;
	atomic_store(&spinning, 1);
	for (;;)
		sink = work(1000);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "work";
	if (!strcmp(mode, "upper")) {
		int c;
		while ((c = getchar()) != EOF)
			putchar(toupper(c));
		return 3;
	}
	if (!strcmp(mode, "crash")) {
		sink = work(1000);
		volatile long *p = (volatile long *)(argc > 5 ? argv[5] : NULL);
		return (int)*p;
	}
	if (!strcmp(mode, "regions")) {
		for (int r = 0; r < 2; r++) {
			DPMU_REGION_BEGIN("outer");
			sink = work(100);
			DPMU_REGION_BEGIN("inner");
			sink = work(1000);
			DPMU_REGION_END("inner");
			DPMU_REGION_END("outer");
		}
		return 0;
	}
	if (!strcmp(mode, "regthreads")) {
		pthread_t t;
		DPMU_REGION_BEGIN("mine");
		pthread_create(&t, NULL, outside, NULL);
		sink = work(10000);
		pthread_join(t, NULL);
		DPMU_REGION_END("mine");
		return 0;
	}
	if (!strcmp(mode, "unpaired")) {
		DPMU_REGION_BEGIN("once");
		DPMU_REGION_BEGIN("rec");
		DPMU_REGION_BEGIN("rec");
		DPMU_REGION_BEGIN("rec");
		sink = work(2000);
		DPMU_REGION_END("rec");
		DPMU_REGION_END("rec");
		DPMU_REGION_END("rec");
		DPMU_REGION_END("once");
		pthread_t t;
		pthread_create(&t, NULL, leaves_open, NULL);
		pthread_join(t, NULL);
		pthread_create(&t, NULL, outside, NULL);
		pthread_join(t, NULL);
		DPMU_REGION_END("stray");
		DPMU_REGION_BEGIN("open");
		sink = work(1000);
		char name[16];
		for (int i = 0; i < 70; i++) {
			snprintf(name, sizeof name, "name%d", i);
			DPMU_REGION_BEGIN(name);
			DPMU_REGION_END(name);
		}
		return 0;
	}
	if (!strcmp(mode, "pagemarker")) {
		page_split_begin("split");
		sink = work(1000);
		DPMU_REGION_END("split");
		return 0;
	}
	if (!strcmp(mode, "handoff")) {
		/* a worker that main's arrival at the barrier releases */
		long n = argc > 2 ? atol(argv[2]) : 1000000;
		worker_n = argc > 3 ? atol(argv[3]) : 100000;
		pthread_barrier_init(&worker_start, NULL, 2);
		pthread_t t;
		pthread_create(&t, NULL, worker, NULL);
		sink = work(n);
		pthread_barrier_wait(&worker_start);
		pthread_join(t, NULL);
		return 0;
	}
	if (!strcmp(mode, "threads")) {
		pthread_t t[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, bump, NULL);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		printf("%ld\n", (long)shared);
		return shared == 40000 ? 0 : 1;
	}
	long n = argc > 2 ? atol(argv[2]) : 10000;
	if (!strcmp(mode, "pingpong")) {
		pp_rounds = n;
		pthread_t t;
		pthread_create(&t, NULL, pingpong, (void *)(intptr_t)1);
		void *mine = pingpong((void *)(intptr_t)0), *theirs;
		pthread_join(t, &theirs);
		printf("%ld\n", (long)(intptr_t)mine);
		return (intptr_t)mine == n && (intptr_t)theirs == n ? 0 : 1;
	}
	if (!strcmp(mode, "pipe")) {
		if (pipe(pipe_fd))
			return 2;
		pthread_t t;
		pthread_create(&t, NULL, pipe_reader, NULL);
		long pause_us = argc > 3 ? atol(argv[3]) : 0;
		for (long i = 0; i < n; i++) {
			sink = work(20000);
			if (pause_us)
				usleep((useconds_t)pause_us);
			if (write(pipe_fd[1], "x", 1) != 1)
				return 2;
		}
		close(pipe_fd[1]);
		void *got;
		pthread_join(t, &got);
		printf("%ld\n", (long)(intptr_t)got);
		return (intptr_t)got == n ? 0 : 1;
	}
	if (!strcmp(mode, "workers")) {
		long k = n < 1 ? 1 : n > 8 ? 8 : n;
		worker_n = argc > 3 ? atol(argv[3]) : 10000;
		pthread_t t[8];
		pthread_barrier_init(&worker_start, NULL, (unsigned)k);
		for (long i = 0; i < k; i++)
			pthread_create(&t[i], NULL, worker, NULL);
		for (long i = 0; i < k; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		fflush(stdout);
		pid_t child = fork();
		if (child == 0) {
			sink = work(n);
			_exit(3);
		}
		sink = work(10000);
		int st = 0;
		if (child < 0 || waitpid(child, &st, 0) != child)
			return 2;
		printf("%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 0;
	}
	if (!strcmp(mode, "sleeps") || !strcmp(mode, "abssleeps") || !strcmp(mode, "clocksleeps")) {
		sleep_rounds = n;
		sleep_us = argc > 3 ? atol(argv[3]) : 100;
		if (mode[0] == 'c')
			sleep_clock = argc > 4 ? atoi(argv[4]) : CLOCK_MONOTONIC;
		pthread_t t;
		pthread_create(&t, NULL, mode[0] == 'a' ? abs_sleeper : sleeper, NULL);
		pthread_join(t, NULL);
		if (sleep_clock >= 0)
			printf("clock_nanosleep: %d\n", sleep_result);
		return 0;
	}
	if (!strcmp(mode, "pipesync")) {
		pipe_n = n;
		pipe_vectored = argc > 3 && !strcmp(argv[3], "v");
		if (pipe(pipe_fd))
			return 2;
		pthread_t t;
		pthread_create(&t, NULL, pipe_counted, NULL);
		for (long i = 0; i < n; i++) {
			sink = work(20000);
			char x = 'x';
			if (!pipe_move(pipe_fd[1], &x, true))
				return 2;
		}
		/* the thread's last read and its wake come before main's wait in
		 * simulated time, whichever comes first in the host */
		sink = work(20000);
		raw_futex(&race_done, FUTEX_WAIT_PRIVATE, 0);
		exit(0);
	}
	if (!strcmp(mode, "startrace")) {
		race_n = n;
		pthread_t t;
		pthread_create(&t, NULL, racer, NULL);
		for (long i = 0; i < n; i++)
			race_line[0] = i;
		sink = work(10 * n);
		/* returns woken, or at once if the stores are done: no loop */
		raw_futex(&race_done, FUTEX_WAIT_PRIVATE, 0);
		exit(0);
	}
	if (!strcmp(mode, "exitrun")) {
		pthread_t t;
		pthread_create(&t, NULL, spin, NULL);
		while (!atomic_load(&spinning))
			;
		printf("%ld\n", work(n));
		exit(0);
	}
	printf("%ld\n", work(n));
	return 0;
}
