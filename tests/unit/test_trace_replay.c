/*
 * dpmu_trace_replay (include/dynpmu/frontend.h): every record of a trace
 * reaches the engine once, on its core; the caller is ticked at the
 * interval and once at the end; a tick's error or a malformed record stops
 * the replay with that code.
 */
#include "uarch_fixture.h"

#include <stdio.h>

#include "dynpmu/frontend.h"

/* cpu0: 4 instructions (one a load), cpu2: 2, cpu0 again: 1. */
static const char trace[] = "i 400000\n"
			    "l 400004 10000 8\n"
			    "i 400008\n"
			    "b 40000c 400000 T cond\n"
			    "cpu 2\n"
			    "i 500000\n"
			    "i 500004\n"
			    "cpu 0\n"
			    "i 400000\n";

struct ticks {
	unsigned n;
	int fail_at; /* tick number that returns 42 (0: none) */
};

static int on_tick(void *ctx, struct dpmu_err *err)
{
	struct ticks *t = ctx;
	t->n++;
	if (t->fail_at && t->n == (unsigned)t->fail_at)
		return dpmu_err_set(err, 42, "tick %u says stop", t->n);
	return 0;
}

static int replay(struct fx *f, const char *text, uint64_t interval, struct ticks *t,
		  struct dpmu_trace_summary *sum, struct dpmu_err *err)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "rb");
	assert_non_null(fp);
	struct dpmu_trace_reader *r;
	assert_int_equal(dpmu_trace_open_stream(fp, "r.trace", DPMU_TRACE_AUTO, &r, err), 0);
	dpmu_trace_set_ncores(r, 8);
	int rc = dpmu_trace_replay(r, f->u, interval, t ? on_tick : NULL, t, sum, err);
	dpmu_trace_close(r);
	fclose(fp);
	return rc;
}

static void every_record_reaches_its_core_once(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct ticks t = { 0 };
	struct dpmu_trace_summary sum;
	struct dpmu_err err;
	assert_int_equal(replay(f, trace, 1, &t, &sum, &err), 0);
	assert_int_equal(sum.insns, 7);
	assert_int_equal(sum.per_core[0], 5);
	assert_int_equal(sum.per_core[2], 2);
	assert_int_equal(sum.cores_used, 0x5);
	/* The replay delivers what the engine holds before its last tick. */
	assert_int_equal(f->core[0][0x08], 5); /* INST_RETIRED */
	assert_int_equal(f->core[2][0x08], 2);
	assert_int_equal(f->core[0][0x06], 1); /* LD_RETIRED */
	assert_int_equal(f->core[0][0x21], 1); /* BR_RETIRED */
	/* Interval 1: a tick after each of the three runs, and the last. */
	assert_int_equal(t.n, 4);
	fx_free(f);
}

static void no_interval_ticks_only_at_the_end(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct ticks t = { 0 };
	struct dpmu_err err;
	assert_int_equal(replay(f, trace, 0, &t, NULL, &err), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(f->core[0][0x08] + f->core[2][0x08], 7);
	fx_free(f);
}

static void tick_error_stops_the_replay(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct ticks t = { .fail_at = 1 };
	struct dpmu_trace_summary sum;
	struct dpmu_err err;
	assert_int_equal(replay(f, trace, 1, &t, &sum, &err), 42);
	assert_string_equal(err.msg, "tick 1 says stop");
	assert_int_equal(t.n, 1);
	assert_true(sum.insns < 7); /* the rest was not replayed */
	fx_free(f);
}

static void malformed_record_stops_with_its_line(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct ticks t = { 0 };
	struct dpmu_err err;
	assert_int_not_equal(replay(f, "i 400000\nx 1\n", 1, &t, NULL, &err), 0);
	assert_string_equal(err.msg,
			    "r.trace:2: unknown record 'x' (expected i, l, s, b or cpu)");
	assert_int_equal(t.n, 0); /* no last tick after an error */
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_record_reaches_its_core_once),
		cmocka_unit_test(no_interval_ticks_only_at_the_end),
		cmocka_unit_test(tick_error_stops_the_replay),
		cmocka_unit_test(malformed_record_stops_with_its_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
