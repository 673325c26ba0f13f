/* Staging slot: seed 002 "The AICore -> AICPU path" hand-off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>

#include <cmocka.h>

#include "dynpmu/collect.h"

static void test_slot_layout_one_writer_per_line(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct dpmu_record), 64);
	assert_int_equal(_Alignof(struct dpmu_slot), 64);
	/* The record fills its line; COND starts the next one. */
	assert_int_equal(offsetof(struct dpmu_slot, cond), 64);
	assert_int_equal(offsetof(struct dpmu_record, seq), 56);
	struct dpmu_slot two[2];
	assert_true(((uintptr_t)&two[1] - (uintptr_t)&two[0]) % 64 == 0);
}

static void test_publish_then_read(void **state)
{
	(void)state;
	struct dpmu_slot s;
	dpmu_slot_init(&s);
	struct dpmu_record rec = {.time = 99, .producer = 3, .kind = 7, .val = {1, 2, 3, 4, 5}}, out;
	uint64_t mism = 0;
	assert_int_equal(dpmu_slot_read(&s, 1, NULL, &out, &mism), DPMU_EBUSY);
	dpmu_slot_publish(&s, &rec, 1, NULL);
	assert_int_equal(dpmu_slot_read(&s, 1, NULL, &out, &mism), 0);
	assert_int_equal(out.time, 99);
	assert_int_equal(out.producer, 3);
	assert_int_equal(out.kind, 7);
	assert_int_equal(out.val[4], 5);
	assert_int_equal(out.seq, 1);
	assert_int_equal(mism, 0);
	/* The reader waits for the sequence it dispatched, not any FIN. */
	assert_int_equal(dpmu_slot_read(&s, 2, NULL, &out, &mism), DPMU_EBUSY);
}

/* A COND that says FIN for round 5 over a line still holding round 4 (what a
 * missing writer clean or a missing reader barrier delivers) is counted as a
 * mismatch and never returned as data. */
static void test_stale_line_is_a_mismatch(void **state)
{
	(void)state;
	struct dpmu_slot s;
	dpmu_slot_init(&s);
	struct dpmu_record rec = {.val = {4}}, out;
	uint64_t mism = 0;
	dpmu_slot_publish(&s, &rec, 4, NULL);
	atomic_store(&s.cond, 5); /* signal without the payload */
	assert_int_equal(dpmu_slot_read(&s, 5, NULL, &out, &mism), DPMU_ERANGE);
	assert_int_equal(mism, 1);
	assert_int_equal(dpmu_slot_read(&s, 5, NULL, &out, NULL), DPMU_ERANGE);
}

static void test_every_rule_reads_back(void **state)
{
	(void)state;
	for (int p = 0; p < DPMU_COH_PLATFORM_COUNT; p++)
		for (int w = 0; w < DPMU_COH_WRITER_COUNT; w++)
			for (int g = 0; g < DPMU_COH_SIGNAL_COUNT; g++) {
				struct dpmu_coh_rule rule;
				if (dpmu_coh_decide(p, w, g, &rule, NULL))
					continue;
				struct dpmu_slot s;
				dpmu_slot_init(&s);
				struct dpmu_record rec = {.val = {(uint64_t)p, (uint64_t)w, (uint64_t)g}}, out;
				dpmu_slot_publish(&s, &rec, 9, &rule);
				assert_int_equal(dpmu_slot_read(&s, 9, &rule, &out, NULL), 0);
				assert_int_equal(out.val[1], (uint64_t)w);
			}
}

/* Two threads, many rounds of reuse of one slot: the reader dispatches round
 * r (through a separate word the reader owns), the writer fills the slot and
 * publishes r; every round's payload must be that round's. */
struct pingpong {
	struct dpmu_slot slot;
	_Alignas(64) _Atomic uint64_t dispatch; /* reader-owned line */
	uint64_t rounds;
};

static void *slot_writer(void *arg)
{
	struct pingpong *pp = arg;
	for (uint64_t r = 1; r <= pp->rounds; r++) {
		while (atomic_load_explicit(&pp->dispatch, memory_order_acquire) != r)
			sched_yield(); /* more threads than cores: let the other run */
		struct dpmu_record rec = {.time = r, .val = {r, r * 3, r * 5, r * 7, r * 11}};
		dpmu_slot_publish(&pp->slot, &rec, r, NULL);
	}
	return NULL;
}

static void test_two_thread_rounds(void **state)
{
	(void)state;
	static struct pingpong pp;
	dpmu_slot_init(&pp.slot);
	atomic_init(&pp.dispatch, 0);
	pp.rounds = 20000;
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, slot_writer, &pp), 0);
	uint64_t bad = 0, mism = 0;
	for (uint64_t r = 1; r <= pp.rounds; r++) {
		atomic_store_explicit(&pp.dispatch, r, memory_order_release);
		struct dpmu_record out;
		int rc;
		while ((rc = dpmu_slot_read(&pp.slot, r, NULL, &out, &mism)) == DPMU_EBUSY)
			sched_yield();
		bad += rc != 0 || out.time != r || out.val[4] != r * 11 || out.val[2] != r * 5;
	}
	pthread_join(t, NULL);
	assert_int_equal(bad, 0);
	assert_int_equal(mism, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slot_layout_one_writer_per_line),
		cmocka_unit_test(test_publish_then_read),
		cmocka_unit_test(test_stale_line_is_a_mismatch),
		cmocka_unit_test(test_every_rule_reads_back),
		cmocka_unit_test(test_two_thread_rounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
