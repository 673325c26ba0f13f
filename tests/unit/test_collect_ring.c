/* Single-producer single-consumer rings: layout, batching, the two modes and
 * the accounting invariant. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>

#include <cmocka.h>

#include "dynpmu/collect.h"
#include "collect/ring.h"

static struct dpmu_ring *mk(size_t slots, unsigned batch, enum dpmu_ring_mode mode)
{
	struct dpmu_ring *r;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	assert_int_equal(dpmu_ring_create(&r, 7, slots, batch, mode, NULL, &err), 0);
	return r;
}

static void assert_balanced(struct dpmu_ring *r)
{
	struct dpmu_ring_stats st;
	dpmu_ring_stats(r, &st);
	assert_int_equal(st.collected + st.dropped + st.mismatched, st.produced);
	assert_int_equal(st.in_flight, 0);
}

static void test_layout_head_tail_on_separate_lines(void **state)
{
	(void)state;
	size_t head = offsetof(struct dpmu_ring, prod.head) / 64;
	size_t tail = offsetof(struct dpmu_ring, cons.tail) / 64;
	size_t req = offsetof(struct dpmu_ring, req.request) / 64;
	size_t ppriv = offsetof(struct dpmu_ring, pp) / 64;
	size_t cpriv = offsetof(struct dpmu_ring, cp) / 64;
	assert_true(head != tail && head != req && tail != req);
	assert_true(ppriv != head && ppriv != tail && cpriv != tail && cpriv != head);
	assert_true(ppriv != cpriv && cpriv != req && ppriv != req);
	struct dpmu_ring *r = mk(8, 1, DPMU_RING_LOSSLESS);
	assert_int_equal((uintptr_t)r % 64, 0);
	assert_int_equal((uintptr_t)r->slots % 64, 0);
	dpmu_ring_destroy(r);
}

static void test_create_rejects_bad_geometry(void **state)
{
	(void)state;
	struct dpmu_ring *r = (struct dpmu_ring *)1;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	assert_int_equal(dpmu_ring_create(&r, 0, 12, 1, DPMU_RING_LOSSY, NULL, &err), DPMU_EINVAL);
	assert_null(r);
	assert_non_null(strstr(err.msg, "12 slots"));
	assert_int_equal(dpmu_ring_create(&r, 0, 1, 1, DPMU_RING_LOSSY, NULL, &err), DPMU_EINVAL);
	assert_int_equal(dpmu_ring_create(&r, 0, 8, 0, DPMU_RING_LOSSY, NULL, &err), DPMU_EINVAL);
	assert_int_equal(dpmu_ring_create(&r, 0, 8, 9, DPMU_RING_LOSSY, NULL, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "batch 9"));
	assert_int_equal(dpmu_ring_create(&r, 0, 8, 1, (enum dpmu_ring_mode)5, NULL, &err), DPMU_EINVAL);
	assert_int_equal(dpmu_ring_create(NULL, 0, 8, 1, DPMU_RING_LOSSY, NULL, &err), DPMU_EINVAL);
}

static void test_fifo_and_stamps(void **state)
{
	(void)state;
	struct dpmu_ring *r = mk(16, 1, DPMU_RING_LOSSLESS);
	struct dpmu_record rec = {0}, out[16];
	for (uint64_t i = 0; i < 40; i++) {
		rec.val[0] = i;
		rec.producer = 99; /* push stamps the ring's own producer id */
		assert_int_equal(dpmu_ring_push(r, &rec), 0);
		if (i % 3 == 2) {
			size_t k = dpmu_ring_pop(r, out, 16);
			assert_int_equal(k, 3);
			for (size_t j = 0; j < k; j++) {
				assert_int_equal(out[j].val[0], i - 2 + j);
				assert_int_equal(out[j].seq, i - 2 + j + 1);
				assert_int_equal(out[j].producer, 7);
			}
		}
	}
	assert_int_equal(dpmu_ring_pop(r, out, 16), 1);
	assert_balanced(r);
	dpmu_ring_destroy(r);
}

static void test_batched_publication(void **state)
{
	(void)state;
	struct dpmu_ring *r = mk(64, 8, DPMU_RING_LOSSLESS);
	struct dpmu_record rec = {0}, out[64];
	for (int i = 0; i < 7; i++)
		assert_int_equal(dpmu_ring_push(r, &rec), 0);
	/* Seven staged records: not yet visible, not yet counted. */
	assert_int_equal(dpmu_ring_pop(r, out, 64), 0);
	struct dpmu_ring_stats st;
	dpmu_ring_stats(r, &st);
	assert_int_equal(st.produced, 0);
	assert_int_equal(dpmu_ring_push(r, &rec), 0); /* the eighth publishes the batch */
	assert_int_equal(dpmu_ring_pop(r, out, 64), 8);
	for (int i = 0; i < 3; i++)
		dpmu_ring_push(r, &rec);
	assert_int_equal(dpmu_ring_pop(r, out, 64), 0);
	assert_int_equal(dpmu_ring_flush(r), 0);
	assert_int_equal(dpmu_ring_pop(r, out, 64), 3);
	assert_balanced(r);
	dpmu_ring_destroy(r);
}

static void test_lossy_drops_and_counts(void **state)
{
	(void)state;
	struct dpmu_ring *r = mk(8, 4, DPMU_RING_LOSSY);
	struct dpmu_record rec = {0}, out[8];
	int dropped = 0;
	for (uint64_t i = 0; i < 20; i++) {
		rec.val[0] = i;
		int rc = dpmu_ring_push(r, &rec);
		assert_true(rc == 0 || rc == DPMU_EBUSY);
		dropped += rc == DPMU_EBUSY;
	}
	assert_int_equal(dropped, 12);
	struct dpmu_ring_stats st;
	dpmu_ring_stats(r, &st);
	assert_int_equal(st.produced, 20);
	assert_int_equal(st.dropped, 12);
	assert_int_equal(st.in_flight, 8);
	assert_int_equal(dpmu_ring_pop(r, out, 8), 8);
	/* The survivors are the first eight: a lossy ring drops the newest. */
	assert_int_equal(out[7].val[0], 7);
	assert_balanced(r);
	dpmu_ring_destroy(r);
}

/* A slot whose stamp does not match its position (a stale line) is counted
 * and never handed on; the invariant still holds. */
static void test_mismatch_counted(void **state)
{
	(void)state;
	struct dpmu_ring *r = mk(8, 1, DPMU_RING_LOSSLESS);
	struct dpmu_record rec = {0}, out[8];
	for (int i = 0; i < 4; i++)
		dpmu_ring_push(r, &rec);
	r->slots[2].seq = 0; /* as if the line of position 2 were stale */
	assert_int_equal(dpmu_ring_pop(r, out, 8), 3);
	struct dpmu_ring_stats st;
	dpmu_ring_stats(r, &st);
	assert_int_equal(st.mismatched, 1);
	assert_int_equal(st.collected, 3);
	assert_balanced(r);
	dpmu_ring_destroy(r);
}

/* claim/commit fills the slot in place and stamps it like push. */
static void test_claim_commit_in_place(void **state)
{
	(void)state;
	struct dpmu_ring *r = mk(4, 1, DPMU_RING_LOSSY);
	struct dpmu_record *s, out[4];
	for (uint64_t i = 0; i < 4; i++) {
		assert_int_equal(dpmu_ring_claim(r, &s), 0);
		assert_non_null(s);
		s->val[0] = 100 + i;
		s->producer = 55; /* commit stamps the ring's own id */
		dpmu_ring_commit(r);
	}
	assert_int_equal(dpmu_ring_claim(r, &s), DPMU_EBUSY);
	assert_null(s);
	assert_int_equal(dpmu_ring_pop(r, out, 4), 4);
	for (uint64_t i = 0; i < 4; i++) {
		assert_int_equal(out[i].val[0], 100 + i);
		assert_int_equal(out[i].seq, i + 1);
		assert_int_equal(out[i].producer, 7);
	}
	assert_balanced(r);
	uint64_t n = dpmu_ring_retire_request(r);
	assert_int_equal(dpmu_ring_claim(r, &s), DPMU_ESTATE);
	assert_true(dpmu_ring_retire_acked(r, n));
	dpmu_ring_destroy(r);
}

/* discard hands back exactly what is published, counted collected, so a
 * full lossless ring takes records again; unpublished staging stays. */
static void test_discard_takes_what_is_published(void **state)
{
	(void)state;
	struct dpmu_ring *r = mk(8, 4, DPMU_RING_LOSSLESS);
	struct dpmu_record rec = {0};
	assert_int_equal(dpmu_ring_discard(r), 0);
	for (uint64_t i = 0; i < 6; i++)
		assert_int_equal(dpmu_ring_push(r, &rec), 0);
	/* batch 4: positions 0..3 are published, 4 and 5 only staged */
	assert_int_equal(dpmu_ring_discard(r), 4);
	assert_int_equal(r->cons.tail, 4);
	struct dpmu_ring_stats st;
	dpmu_ring_stats(r, &st);
	assert_int_equal(st.collected, 4);
	assert_int_equal(dpmu_ring_flush(r), 0);
	for (uint64_t i = 6; i < 12; i++) /* room for 6 more only after the discard */
		assert_int_equal(dpmu_ring_push(r, &rec), 0);
	assert_int_equal(dpmu_ring_flush(r), 0);
	assert_int_equal(dpmu_ring_discard(r), 8);
	assert_int_equal(dpmu_ring_discard(r), 0);
	const struct dpmu_record *p;
	assert_int_equal(dpmu_ring_peek(r, &p, 8), 0);
	dpmu_ring_stats(r, &st);
	assert_int_equal(st.collected, 12);
	assert_int_equal(st.in_flight, 0);
	assert_balanced(r);
	dpmu_ring_destroy(r);
}

/* peek hands out the published records in place, contiguous up to the
 * ring's end; release gives the first n back and counts them. */
static void test_peek_release_in_place(void **state)
{
	(void)state;
	struct dpmu_ring *r = mk(8, 1, DPMU_RING_LOSSLESS);
	struct dpmu_record rec = {0};
	const struct dpmu_record *p;
	assert_int_equal(dpmu_ring_peek(r, &p, 8), 0);
	assert_null(p);
	for (uint64_t i = 0; i < 6; i++) {
		rec.val[0] = i;
		assert_int_equal(dpmu_ring_push(r, &rec), 0);
	}
	assert_int_equal(dpmu_ring_peek(r, &p, 4), 4);
	assert_ptr_equal(p, &r->slots[0]);
	for (uint64_t i = 0; i < 4; i++)
		assert_int_equal(p[i].val[0], i);
	dpmu_ring_release(r, 2); /* a consumer may take fewer than it saw */
	struct dpmu_ring_stats st;
	dpmu_ring_stats(r, &st);
	assert_int_equal(st.collected, 2);
	assert_int_equal(st.in_flight, 4);
	assert_int_equal(r->cons.tail, 2);
	for (uint64_t i = 6; i < 10; i++) {
		rec.val[0] = i;
		assert_int_equal(dpmu_ring_push(r, &rec), 0);
	}
	/* what the head said last time first (positions 2..5) ... */
	assert_int_equal(dpmu_ring_peek(r, &p, 64), 4);
	assert_int_equal(p[0].val[0], 2);
	assert_int_equal(p[3].val[0], 5);
	dpmu_ring_release(r, 4);
	/* ... then 6, 7 up to the ring's end, and 8, 9 from slot 0 */
	assert_int_equal(dpmu_ring_peek(r, &p, 64), 2);
	assert_int_equal(p[0].val[0], 6);
	assert_int_equal(p[1].seq, 8);
	dpmu_ring_release(r, 2);
	assert_int_equal(dpmu_ring_peek(r, &p, 64), 2);
	assert_ptr_equal(p, &r->slots[0]);
	assert_int_equal(p[0].val[0], 8);
	assert_int_equal(p[1].val[0], 9);
	assert_int_equal(p[1].producer, 7);
	dpmu_ring_release(r, 2);
	assert_int_equal(dpmu_ring_peek(r, &p, 64), 0);
	/* a release beyond what the producer published moves the tail no
	 * further than the head: nothing unread is handed back */
	rec.val[0] = 10;
	assert_int_equal(dpmu_ring_push(r, &rec), 0);
	assert_int_equal(dpmu_ring_peek(r, &p, 64), 1);
	dpmu_ring_release(r, 5);
	assert_int_equal(r->cons.tail, 11);
	dpmu_ring_stats(r, &st);
	assert_int_equal(st.collected, 11);
	assert_int_equal(st.in_flight, 0);
	assert_balanced(r);
	dpmu_ring_destroy(r);
}

/* A mismatched record stops a run; at the front it is counted and passed
 * by, never handed on. */
static void test_peek_passes_by_mismatch(void **state)
{
	(void)state;
	struct dpmu_ring *r = mk(8, 1, DPMU_RING_LOSSLESS);
	struct dpmu_record rec = {0};
	const struct dpmu_record *p;
	for (uint64_t i = 0; i < 5; i++) {
		rec.val[0] = i;
		dpmu_ring_push(r, &rec);
	}
	r->slots[2].seq = 0; /* as if the line of position 2 were stale */
	assert_int_equal(dpmu_ring_peek(r, &p, 8), 2);
	assert_int_equal(p[1].val[0], 1);
	dpmu_ring_release(r, 2);
	assert_int_equal(dpmu_ring_peek(r, &p, 8), 2);
	assert_int_equal(p[0].val[0], 3);
	dpmu_ring_release(r, 2);
	struct dpmu_ring_stats st;
	dpmu_ring_stats(r, &st);
	assert_int_equal(st.mismatched, 1);
	assert_int_equal(st.collected, 4);
	assert_balanced(r);
	dpmu_ring_destroy(r);
}

struct lossless_arg {
	struct dpmu_ring *r;
	uint64_t n;
};

static void *lossless_producer(void *p)
{
	struct lossless_arg *a = p;
	struct dpmu_record rec = {0};
	for (uint64_t i = 0; i < a->n; i++) {
		rec.val[0] = i;
		assert_int_equal(dpmu_ring_push(a->r, &rec), 0);
	}
	dpmu_ring_flush(a->r);
	return NULL;
}

/* Lossless: a producer far faster than a tiny ring waits, never drops. */
static void test_lossless_waits_when_full(void **state)
{
	(void)state;
	struct dpmu_ring *r = mk(4, 2, DPMU_RING_LOSSLESS);
	struct lossless_arg a = {r, 20000};
	pthread_t t;
	pthread_create(&t, NULL, lossless_producer, &a);
	uint64_t next = 0, bad = 0;
	struct dpmu_record out[4];
	while (next < a.n) {
		size_t k = dpmu_ring_pop(r, out, 4);
		for (size_t j = 0; j < k; j++, next++)
			bad += out[j].val[0] != next;
	}
	pthread_join(t, NULL);
	assert_int_equal(bad, 0);
	struct dpmu_ring_stats st;
	dpmu_ring_stats(r, &st);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.produced, a.n);
	assert_balanced(r);
	dpmu_ring_destroy(r);
}

/* Lossless with a consumer reading in place: the producer reuses a slot only
 * after its release. */
static void test_lossless_peek_against_producer(void **state)
{
	(void)state;
	struct dpmu_ring *r = mk(4, 2, DPMU_RING_LOSSLESS);
	struct lossless_arg a = {r, 20000};
	pthread_t t;
	pthread_create(&t, NULL, lossless_producer, &a);
	uint64_t next = 0, bad = 0;
	while (next < a.n) {
		const struct dpmu_record *p;
		size_t k = dpmu_ring_peek(r, &p, 3);
		for (size_t j = 0; j < k; j++, next++)
			bad += p[j].val[0] != next;
		dpmu_ring_release(r, k);
	}
	pthread_join(t, NULL);
	assert_int_equal(bad, 0);
	assert_balanced(r);
	dpmu_ring_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_head_tail_on_separate_lines),
		cmocka_unit_test(test_create_rejects_bad_geometry),
		cmocka_unit_test(test_fifo_and_stamps),
		cmocka_unit_test(test_batched_publication),
		cmocka_unit_test(test_lossy_drops_and_counts),
		cmocka_unit_test(test_mismatch_counted),
		cmocka_unit_test(test_claim_commit_in_place),
		cmocka_unit_test(test_lossless_waits_when_full),
		cmocka_unit_test(test_peek_release_in_place),
		cmocka_unit_test(test_discard_takes_what_is_published),
		cmocka_unit_test(test_peek_passes_by_mismatch),
		cmocka_unit_test(test_lossless_peek_against_producer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
