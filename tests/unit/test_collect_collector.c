/* The collector's configuration, sinks and error reporting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>

#include <cmocka.h>

#include "dynpmu/collect.h"

static void push_n(struct dpmu_collector *c, unsigned ring, uint64_t n)
{
	struct dpmu_ring *r = dpmu_collect_ring(c, ring);
	struct dpmu_record rec;
	memset(&rec, 0, sizeof rec);
	for (uint64_t i = 0; i < n; i++) {
		rec.val[0] = i;
		assert_int_equal(dpmu_ring_push(r, &rec), 0);
	}
	dpmu_ring_flush(r);
}

/* The test thread pushes; stop blocks until the echo, so each ring's
 * retirement is answered by a small polling thread. */
static void *poller(void *arg)
{
	struct dpmu_ring *r = arg;
	while (!dpmu_ring_poll(r))
		sched_yield();
	return NULL;
}

static int stop_all(struct dpmu_collector *c, unsigned n, struct dpmu_collect_report *rep)
{
	pthread_t t[8];
	for (unsigned i = 0; i < n; i++)
		pthread_create(&t[i], NULL, poller, dpmu_collect_ring(c, i));
	int rc = dpmu_collect_stop(c, 5000000000ull, rep);
	for (unsigned i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return rc;
}

static void test_config_errors_name_the_input(void **state)
{
	(void)state;
	struct dpmu_collect_config cfg;
	struct dpmu_collector *c = NULL;
	struct dpmu_err err;
	dpmu_err_clear(&err);

	dpmu_collect_config_default(&cfg);
	cfg.producers = 0;
	assert_int_equal(dpmu_collect_create(&c, &cfg, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "0 producers"));
	assert_null(c);

	dpmu_collect_config_default(&cfg);
	cfg.ring_slots = 1000;
	assert_int_equal(dpmu_collect_create(&c, &cfg, &err), DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "1000 slots"));

	dpmu_collect_config_default(&cfg);
	cfg.buffers = 1;
	assert_int_equal(dpmu_collect_create(&c, &cfg, &err), DPMU_EINVAL);

	dpmu_collect_config_default(&cfg);
	cfg.sink = DPMU_COLLECT_SINK_FILE;
	assert_int_equal(dpmu_collect_create(&c, &cfg, &err), DPMU_EINVAL);
	cfg.path = "/nonexistent-dir/x.rec";
	assert_int_equal(dpmu_collect_create(&c, &cfg, &err), DPMU_EIO);
	assert_non_null(strstr(err.msg, "/nonexistent-dir/x.rec"));

	dpmu_collect_config_default(&cfg);
	cfg.sink = DPMU_COLLECT_SINK_CALLBACK;
	assert_int_equal(dpmu_collect_create(&c, &cfg, &err), DPMU_EINVAL);

	/* A hand-off the platform does not support is refused up front. */
	dpmu_collect_config_default(&cfg);
	cfg.platform = DPMU_COH_PLATFORM_NONCOHERENT_DMA;
	cfg.writer = DPMU_COH_WRITER_DEVICE_CQE;
	assert_int_equal(dpmu_collect_create(&c, &cfg, &err), DPMU_ENOTSUP);
	assert_null(dpmu_collect_ring(c, 0));
}

static void test_memory_sink_collects_everything(void **state)
{
	(void)state;
	struct dpmu_collect_config cfg;
	dpmu_collect_config_default(&cfg);
	cfg.producers = 2;
	cfg.ring_slots = 1024;
	cfg.buffer_records = 100;
	struct dpmu_collector *c;
	assert_int_equal(dpmu_collect_create(&c, &cfg, NULL), 0);
	assert_null(dpmu_collect_ring(c, 2));
	assert_int_equal(dpmu_collect_start(c), 0);
	push_n(c, 0, 777);
	push_n(c, 1, 333);
	struct dpmu_collect_report rep;
	assert_int_equal(stop_all(c, 2, &rep), 0);
	assert_int_equal(rep.total.produced, 1110);
	assert_int_equal(rep.total.collected, 1110);
	size_t n;
	const struct dpmu_record *recs = dpmu_collect_records(c, &n);
	assert_int_equal(n, 1110);
	uint64_t c0 = 0, c1 = 0;
	for (size_t i = 0; i < n; i++)
		*(recs[i].producer ? &c1 : &c0) += 1;
	assert_int_equal(c0, 777);
	assert_int_equal(c1, 333);
	struct dpmu_ring_stats st;
	assert_int_equal(dpmu_collect_stats(c, 5, &st), DPMU_EINVAL);
	dpmu_collect_destroy(c);
}

static void test_file_sink_writes_raw_records(void **state)
{
	(void)state;
	char path[] = "/tmp/dpmu-collect-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct dpmu_collect_config cfg;
	dpmu_collect_config_default(&cfg);
	cfg.sink = DPMU_COLLECT_SINK_FILE;
	cfg.path = path;
	cfg.buffer_records = 64;
	struct dpmu_collector *c;
	assert_int_equal(dpmu_collect_create(&c, &cfg, NULL), 0);
	assert_int_equal(dpmu_collect_start(c), 0);
	push_n(c, 0, 1000);
	assert_int_equal(stop_all(c, 1, NULL), 0);
	dpmu_collect_destroy(c);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	struct dpmu_record rec;
	uint64_t i = 0;
	while (fread(&rec, sizeof rec, 1, f) == 1) {
		assert_int_equal(rec.val[0], i);
		assert_int_equal(rec.seq, i + 1);
		i++;
	}
	fclose(f);
	unlink(path);
	assert_int_equal(i, 1000);
}

static int failing_write(void *ctx, const struct dpmu_record *recs, size_t n)
{
	(void)recs;
	(*(size_t *)ctx) += n;
	return -1;
}

static void test_sink_error_is_reported(void **state)
{
	(void)state;
	size_t seen = 0;
	struct dpmu_collect_config cfg;
	dpmu_collect_config_default(&cfg);
	cfg.sink = DPMU_COLLECT_SINK_CALLBACK;
	cfg.write = failing_write;
	cfg.ctx = &seen;
	cfg.buffer_records = 16;
	struct dpmu_collector *c;
	assert_int_equal(dpmu_collect_create(&c, &cfg, NULL), 0);
	assert_int_equal(dpmu_collect_start(c), 0);
	push_n(c, 0, 100);
	assert_int_equal(stop_all(c, 1, NULL), DPMU_EIO);
	assert_non_null(strstr(dpmu_collect_errmsg(c), "callback"));
	/* The first failure stops further writes to the sink. */
	assert_int_equal(seen, 16);
	dpmu_collect_destroy(c);
}

/* The rings obey the rule the collector was configured with: host DMA on a
 * non-coherent platform, signalled through MMIO, makes the reader invalidate
 * and issue rmb, and every record still arrives. */
static void test_collector_with_maintenance_rule(void **state)
{
	(void)state;
	struct dpmu_collect_config cfg;
	dpmu_collect_config_default(&cfg);
	cfg.platform = DPMU_COH_PLATFORM_NONCOHERENT_DMA;
	cfg.writer = DPMU_COH_WRITER_HOST_DMA;
	cfg.signal = DPMU_COH_SIGNAL_MMIO;
	struct dpmu_collector *c;
	assert_int_equal(dpmu_collect_create(&c, &cfg, NULL), 0);
	assert_int_equal(dpmu_collect_start(c), 0);
	push_n(c, 0, 5000);
	struct dpmu_collect_report rep;
	assert_int_equal(stop_all(c, 1, &rep), 0);
	assert_int_equal(rep.total.collected, 5000);
	dpmu_collect_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_errors_name_the_input),
		cmocka_unit_test(test_memory_sink_collects_everything),
		cmocka_unit_test(test_file_sink_writes_raw_records),
		cmocka_unit_test(test_sink_error_is_reported),
		cmocka_unit_test(test_collector_with_maintenance_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
