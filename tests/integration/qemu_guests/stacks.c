/*
 * A guest whose call stacks are known by construction, for dynpmu
 * record -g (tests/integration/record_report.sh). Each mode spends most of
 * its time in one leaf reached by a known path:
 *   recurse   main -> descend x40 -> leaf_recurse
 *   longjmp   main -> jumper -> deep1 -> deep2 longjmps back to jumper,
 *             which then calls after_jump: no deep frame is left
 *   signal    main raises SIGUSR1; the handler calls in_handler; back in
 *             main, after_signal runs with no handler frame left
 *   tail      main -> tail_caller, which tail-calls tail_callee: the
 *             callee's caller is main
 *   threads   two threads, each thread_fn -> thread_work
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
}

__attribute__((noinline)) void leaf_recurse(void) { spin(600000); sink++; }

__attribute__((noinline)) void descend(int d)
{
	if (d == 0)
		leaf_recurse();
	else
		descend(d - 1);
	sink++; /* not a tail call */
}

static jmp_buf env;

__attribute__((noinline)) void deep2(void)
{
	spin(1000);
	longjmp(env, 1);
}

__attribute__((noinline)) void deep1(void)
{
	deep2();
	sink++;
}

__attribute__((noinline)) void after_jump(void) { spin(600000); sink++; }

__attribute__((noinline)) void jumper(void)
{
	if (setjmp(env) == 0)
		deep1();
	else
		after_jump();
	sink++;
}

__attribute__((noinline)) void in_handler(void) { spin(300000); sink++; }

static void handler(int sig)
{
	(void)sig;
	in_handler();
	sink++;
}

__attribute__((noinline)) void after_signal(void) { spin(600000); sink++; }

__attribute__((noinline)) unsigned long tail_callee(unsigned long n)
{
	spin(n);
	return sink + 1;
}

/* -O2 makes the call a branch (a sibling call): tail_caller's frame goes */
__attribute__((noinline)) unsigned long tail_caller(unsigned long n) { return tail_callee(n + 1); }

__attribute__((noinline)) void thread_work(void) { spin(300000); sink++; }

static void *thread_fn(void *arg)
{
	(void)arg;
	thread_work();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "recurse";
	if (!strcmp(mode, "recurse")) {
		descend(40);
	} else if (!strcmp(mode, "longjmp")) {
		jumper();
	} else if (!strcmp(mode, "signal")) {
		signal(SIGUSR1, handler);
		raise(SIGUSR1);
		after_signal();
	} else if (!strcmp(mode, "tail")) {
		tail_caller(600000);
	} else if (!strcmp(mode, "threads")) {
		pthread_t t[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, thread_fn, NULL);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
	} else {
		fprintf(stderr, "stacks: unknown mode '%s'\n", mode);
		return 2;
	}
	printf("%s %lu\n", mode, sink);
	return 0;
}
