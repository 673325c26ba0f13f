/* Retirement: seed 002 "Unified COND nonce" on rings and on the collector. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

#include <cmocka.h>

#include "dynpmu/collect.h"

static struct dpmu_ring *mk(void)
{
	struct dpmu_ring *r;
	assert_int_equal(dpmu_ring_create(&r, 0, 16, 4, DPMU_RING_LOSSLESS, NULL, NULL), 0);
	return r;
}

/* Step 2: the nonce differs from the producer's retained COND. */
static void test_nonce_differs_from_retained_cond(void **state)
{
	(void)state;
	struct dpmu_ring *r = mk();
	assert_int_equal(dpmu_ring_cond(r), 0);
	uint64_t n1 = dpmu_ring_retire_request(r);
	assert_int_equal(n1, DPMU_COLLECT_NONCE_A);
	assert_int_equal(dpmu_ring_poll(r), 1);
	assert_int_equal(dpmu_ring_cond(r), n1);
	assert_true(dpmu_ring_retire_acked(r, n1));
	dpmu_ring_retire_reset(r);
	uint64_t n2 = dpmu_ring_retire_request(r);
	assert_int_equal(n2, DPMU_COLLECT_NONCE_B);
	/* The retained echo of the previous run does not answer this one. */
	assert_false(dpmu_ring_retire_acked(r, n2));
	assert_int_equal(dpmu_ring_poll(r), 1);
	assert_true(dpmu_ring_retire_acked(r, n2));
	dpmu_ring_retire_reset(r);
	assert_int_equal(dpmu_ring_retire_request(r), DPMU_COLLECT_NONCE_A);
	dpmu_ring_destroy(r);
}

/* Step 3-4: the producer completes its writes before the echo, publishes the
 * nonce once and takes nothing more. */
static void test_echo_publishes_staged_records_first(void **state)
{
	(void)state;
	struct dpmu_ring *r = mk();
	struct dpmu_record rec = {0}, out[16];
	for (int i = 0; i < 3; i++)
		assert_int_equal(dpmu_ring_push(r, &rec), 0); /* staged, batch is 4 */
	uint64_t n = dpmu_ring_retire_request(r);
	assert_int_equal(dpmu_ring_push(r, &rec), DPMU_ESTATE);
	assert_true(dpmu_ring_retire_acked(r, n));
	assert_int_equal(dpmu_ring_pop(r, out, 16), 3);
	assert_int_equal(dpmu_ring_push(r, &rec), DPMU_ESTATE);
	assert_int_equal(dpmu_ring_flush(r), DPMU_ESTATE);
	struct dpmu_ring_stats st;
	dpmu_ring_stats(r, &st);
	assert_int_equal(st.produced, 3);
	assert_int_equal(st.collected, 3);
	/* After the next run's reset the producer may push again. */
	dpmu_ring_retire_reset(r);
	assert_int_equal(dpmu_ring_push(r, &rec), 0);
	dpmu_ring_destroy(r);
}

/* Only the echo of this request counts: FIN-like values and the other nonce
 * do not. */
static void test_only_the_matching_echo_counts(void **state)
{
	(void)state;
	struct dpmu_ring *r = mk();
	uint64_t n = dpmu_ring_retire_request(r);
	assert_false(dpmu_ring_retire_acked(r, n));
	assert_false(dpmu_ring_retire_acked(r, n == DPMU_COLLECT_NONCE_A ? DPMU_COLLECT_NONCE_B
									 : DPMU_COLLECT_NONCE_A));
	dpmu_ring_destroy(r);
}

struct worker {
	struct dpmu_ring *r;
	_Atomic int stop_pushing; /* make the producer go silent */
	uint64_t pushed;
};

static void *worker_main(void *p)
{
	struct worker *w = p;
	struct dpmu_record rec = {0};
	while (!atomic_load(&w->stop_pushing)) {
		rec.val[0] = w->pushed;
		int rc = dpmu_ring_push(w->r, &rec);
		if (rc == DPMU_ESTATE)
			break;
		if (rc == 0)
			w->pushed++;
	}
	return NULL;
}

static uint64_t ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A producer that never answers is reported within the shared deadline, not
 * waited on; the answering ones are retired and fully collected. */
static void test_silent_producer_reported_not_waited_on(void **state)
{
	(void)state;
	struct dpmu_collect_config cfg;
	dpmu_collect_config_default(&cfg);
	cfg.producers = 3;
	cfg.ring_slots = 64;
	cfg.batch = 8;
	struct dpmu_collector *c;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	assert_int_equal(dpmu_collect_create(&c, &cfg, &err), 0);
	assert_int_equal(dpmu_collect_start(c), 0);
	static struct worker w[3];
	pthread_t t[3];
	for (int i = 0; i < 3; i++) {
		w[i].r = dpmu_collect_ring(c, i);
		atomic_init(&w[i].stop_pushing, i == 1); /* producer 1 is silent */
		w[i].pushed = 0;
		pthread_create(&t[i], NULL, worker_main, &w[i]);
	}
	pthread_join(t[1], NULL);
	struct timespec ts = {0, 20000000};
	nanosleep(&ts, NULL);
	struct dpmu_collect_report rep;
	uint64_t t0 = ms();
	assert_int_equal(dpmu_collect_stop(c, 200000000ull, &rep), DPMU_ETIMEDOUT);
	uint64_t took = ms() - t0;
	assert_true(took >= 150 && took < 5000);
	pthread_join(t[0], NULL);
	pthread_join(t[2], NULL);
	assert_int_equal(rep.retired, 2);
	assert_int_equal(rep.silent, 1);
	assert_true(dpmu_collect_silent(c, 1));
	assert_false(dpmu_collect_silent(c, 0));
	assert_non_null(strstr(dpmu_collect_errmsg(c), "producer 1"));
	for (int i = 0; i < 3; i += 2) {
		struct dpmu_ring_stats st;
		assert_int_equal(dpmu_collect_stats(c, i, &st), 0);
		assert_int_equal(st.produced, w[i].pushed);
		assert_int_equal(st.collected, w[i].pushed);
		assert_int_equal(st.in_flight, 0);
	}
	/* Its ring is not reused before its owner recovers it: a late answer
	 * to this run's request must not pass for the next run's. */
	assert_int_equal(dpmu_collect_start(c), DPMU_ESTATE);
	assert_non_null(strstr(dpmu_collect_errmsg(c), "producer 1"));
	assert_int_equal(dpmu_collect_recover(c, 3), DPMU_EINVAL);
	assert_int_equal(dpmu_collect_recover(c, 1), 0);
	assert_false(dpmu_collect_silent(c, 1));
	assert_int_equal(dpmu_collect_start(c), 0);
	assert_int_equal(dpmu_collect_recover(c, 1), DPMU_ESTATE);
	dpmu_collect_destroy(c);
}

/* The stale-echo hazard: producer 0 answered run 1 and then went away. In run
 * 2 its COND still holds run 1's nonce; the collector must ask with the other
 * nonce and so report it silent instead of counting the old echo. */
static void test_stale_echo_from_previous_run_not_accepted(void **state)
{
	(void)state;
	struct dpmu_collect_config cfg;
	dpmu_collect_config_default(&cfg);
	cfg.producers = 2;
	cfg.ring_slots = 64;
	struct dpmu_collector *c;
	assert_int_equal(dpmu_collect_create(&c, &cfg, NULL), 0);

	static struct worker w[2];
	pthread_t t[2];
	assert_int_equal(dpmu_collect_start(c), 0);
	for (int i = 0; i < 2; i++) {
		w[i].r = dpmu_collect_ring(c, i);
		atomic_init(&w[i].stop_pushing, 0);
		w[i].pushed = 0;
		pthread_create(&t[i], NULL, worker_main, &w[i]);
	}
	struct dpmu_collect_report rep;
	assert_int_equal(dpmu_collect_stop(c, 2000000000ull, &rep), 0);
	assert_int_equal(rep.retired, 2);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	uint64_t old0 = dpmu_ring_cond(dpmu_collect_ring(c, 0));
	assert_true(old0 == DPMU_COLLECT_NONCE_A || old0 == DPMU_COLLECT_NONCE_B);

	/* Run 2: only producer 1 comes back. */
	assert_int_equal(dpmu_collect_start(c), 0);
	atomic_store(&w[1].stop_pushing, 0);
	pthread_create(&t[1], NULL, worker_main, &w[1]);
	assert_int_equal(dpmu_collect_stop(c, 100000000ull, &rep), DPMU_ETIMEDOUT);
	pthread_join(t[1], NULL);
	assert_int_equal(rep.retired, 1);
	assert_int_equal(rep.silent, 1);
	assert_true(dpmu_collect_silent(c, 0));
	assert_false(dpmu_collect_silent(c, 1));
	/* Producer 1 answered with the other nonce this time. */
	assert_int_not_equal(dpmu_ring_cond(dpmu_collect_ring(c, 1)), old0);
	/* Producer 0's COND is untouched: still the old echo. */
	assert_int_equal(dpmu_ring_cond(dpmu_collect_ring(c, 0)), old0);
	/* Accounting over both runs holds for the producer that answered. */
	struct dpmu_ring_stats st;
	dpmu_collect_stats(c, 1, &st);
	assert_int_equal(st.collected + st.dropped + st.mismatched, st.produced);
	assert_int_equal(st.produced, w[1].pushed);
	dpmu_collect_destroy(c);
}

static void test_stop_without_start_is_a_state_error(void **state)
{
	(void)state;
	struct dpmu_collect_config cfg;
	dpmu_collect_config_default(&cfg);
	struct dpmu_collector *c;
	assert_int_equal(dpmu_collect_create(&c, &cfg, NULL), 0);
	assert_int_equal(dpmu_collect_stop(c, 0, NULL), DPMU_ESTATE);
	assert_int_equal(dpmu_collect_start(c), 0);
	assert_int_equal(dpmu_collect_start(c), DPMU_ESTATE);
	assert_non_null(strstr(dpmu_collect_errmsg(c), "already started"));
	/* An idle producer that polls answers too. */
	struct dpmu_ring *r = dpmu_collect_ring(c, 0);
	pthread_t t;
	static struct worker w;
	w.r = r;
	atomic_init(&w.stop_pushing, 0);
	pthread_create(&t, NULL, worker_main, &w);
	assert_int_equal(dpmu_collect_stop(c, 2000000000ull, NULL), 0);
	pthread_join(t, NULL);
	dpmu_collect_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nonce_differs_from_retained_cond),
		cmocka_unit_test(test_echo_publishes_staged_records_first),
		cmocka_unit_test(test_only_the_matching_echo_counts),
		cmocka_unit_test(test_silent_producer_reported_not_waited_on),
		cmocka_unit_test(test_stale_echo_from_previous_run_not_accepted),
		cmocka_unit_test(test_stop_without_start_is_a_state_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
