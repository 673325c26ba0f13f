/* Rings in caller-supplied memory (dpmu_ring_init_in): the same ring used
 * through two mappings of one shared-memory object at different addresses,
 * as the qemu plugin (producer) and dynpmu (consumer) use it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "dynpmu/collect.h"

#define SLOTS 64u

static void map_twice(void **a, void **b, size_t bytes)
{
	int fd = memfd_create("ring_in", 0);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)bytes), 0);
	*a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	*b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(*a != MAP_FAILED && *b != MAP_FAILED && *a != *b);
}

static void test_ring_in_works_through_a_second_mapping(void **state)
{
	(void)state;
	size_t bytes = dpmu_ring_bytes_in(SLOTS);
	void *ma, *mb;
	map_twice(&ma, &mb, bytes);
	struct dpmu_ring *cons, *prod;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	assert_int_equal(dpmu_ring_init_in(ma, bytes, 3, SLOTS, 1, DPMU_RING_LOSSLESS, NULL, &cons,
					   &err),
			 0);
	prod = mb; /* the producer's view: the same bytes at another address */
	/* Three times round the ring, so slots are reused. */
	uint64_t next = 0;
	for (unsigned round = 0; round < 3 * SLOTS / 16; round++) {
		for (unsigned i = 0; i < 16; i++) {
			struct dpmu_record rec = {.time = next + i, .kind = 9};
			rec.val[0] = ~(next + i);
			assert_int_equal(dpmu_ring_push(prod, &rec), 0);
		}
		struct dpmu_record out[16];
		assert_int_equal(dpmu_ring_pop(cons, out, 16), 16);
		for (unsigned i = 0; i < 16; i++) {
			assert_int_equal(out[i].time, next + i);
			assert_int_equal(out[i].val[0], ~(next + i));
			assert_int_equal(out[i].producer, 3);
		}
		next += 16;
	}
	struct dpmu_ring_stats st;
	dpmu_ring_stats(cons, &st);
	assert_int_equal(st.produced, next);
	assert_int_equal(st.collected, next);
	assert_int_equal(st.mismatched, 0);
	dpmu_ring_destroy(cons); /* a no-op: the memory is the caller's */
	munmap(ma, bytes);
	munmap(mb, bytes);
}

/* The zeroed form writes the header only: a header left dirty by earlier
 * use is reset, and a slot that was never written keeps its bytes (zero in
 * a fresh mapping) until the producer fills it. */
static void test_ring_in_zeroed_resets_the_header_only(void **state)
{
	(void)state;
	size_t bytes = dpmu_ring_bytes_in(SLOTS);
	void *ma, *mb;
	map_twice(&ma, &mb, bytes);
	size_t hdr = bytes - SLOTS * sizeof(struct dpmu_record);
	memset(ma, 0xa5, hdr); /* a header as garbage; the slots as a fresh memfd's */
	struct dpmu_ring *cons;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	assert_int_equal(dpmu_ring_init_in_zeroed(ma, bytes, 5, SLOTS, 4, DPMU_RING_LOSSLESS, NULL,
						  &cons, &err),
			 0);
	struct dpmu_ring_stats st;
	dpmu_ring_stats(cons, &st);
	assert_int_equal(st.produced, 0);
	assert_int_equal(st.collected, 0);
	assert_int_equal(st.mismatched, 0);
	struct dpmu_ring *prod = mb;
	for (unsigned i = 0; i < 2 * SLOTS; i++) {
		struct dpmu_record rec = {.time = i, .kind = 1};
		assert_int_equal(dpmu_ring_push(prod, &rec), 0);
		assert_int_equal(dpmu_ring_flush(prod), 0);
		struct dpmu_record out;
		assert_int_equal(dpmu_ring_pop(cons, &out, 1), 1);
		assert_int_equal(out.time, i);
		assert_int_equal(out.producer, 5);
	}
	dpmu_ring_stats(cons, &st);
	assert_int_equal(st.collected, 2 * SLOTS);
	assert_int_equal(st.mismatched, 0);
	/* The slots are left as they are: slot 0 (right after the header)
	 * last held position SLOTS, stamped SLOTS + 1. The zeroed form keeps
	 * that stamp; dpmu_ring_init_in clears it. */
	const struct dpmu_record *s0 = (const struct dpmu_record *)((char *)ma + hdr);
	assert_int_equal(dpmu_ring_init_in_zeroed(ma, bytes, 5, SLOTS, 4, DPMU_RING_LOSSLESS, NULL,
						  &cons, &err),
			 0);
	assert_int_equal(s0->seq, SLOTS + 1);
	assert_int_equal(dpmu_ring_init_in(ma, bytes, 5, SLOTS, 4, DPMU_RING_LOSSLESS, NULL, &cons,
					   &err),
			 0);
	assert_int_equal(s0->seq, 0);
	assert_int_equal(dpmu_ring_init_in_zeroed(NULL, bytes, 5, SLOTS, 4, DPMU_RING_LOSSLESS,
						  NULL, &cons, &err),
			 DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "dpmu_ring_init_in_zeroed"));
	munmap(ma, bytes);
	munmap(mb, bytes);
}

static void test_ring_in_lossy_full_ring_drops(void **state)
{
	(void)state;
	size_t bytes = dpmu_ring_bytes_in(4);
	void *ma, *mb;
	map_twice(&ma, &mb, bytes);
	struct dpmu_ring *r;
	assert_int_equal(dpmu_ring_init_in(ma, bytes, 0, 4, 1, DPMU_RING_LOSSY, NULL, &r, NULL), 0);
	struct dpmu_record rec = {0};
	for (int i = 0; i < 4; i++)
		assert_int_equal(dpmu_ring_push((struct dpmu_ring *)mb, &rec), 0);
	assert_int_equal(dpmu_ring_push((struct dpmu_ring *)mb, &rec), DPMU_EBUSY);
	munmap(ma, bytes);
	munmap(mb, bytes);
}

static void test_ring_in_rejects_small_or_misaligned_memory(void **state)
{
	(void)state;
	static _Alignas(64) unsigned char buf[8192];
	struct dpmu_ring *r;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	assert_int_equal(dpmu_ring_init_in(buf, 100, 0, SLOTS, 1, DPMU_RING_LOSSLESS, NULL, &r,
					   &err),
			 DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "bytes"));
	assert_int_equal(dpmu_ring_init_in(buf + 8, sizeof buf - 8, 0, 2, 1, DPMU_RING_LOSSLESS,
					   NULL, &r, &err),
			 DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "aligned"));
	assert_int_equal(dpmu_ring_init_in(buf, sizeof buf, 0, 3, 1, DPMU_RING_LOSSLESS, NULL, &r,
					   &err),
			 DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "power of two"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_in_works_through_a_second_mapping),
		cmocka_unit_test(test_ring_in_zeroed_resets_the_header_only),
		cmocka_unit_test(test_ring_in_lossy_full_ring_drops),
		cmocka_unit_test(test_ring_in_rejects_small_or_misaligned_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
