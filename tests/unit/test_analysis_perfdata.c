/*
 * perf.data (include/dynpmu/perfdata.h): what the writer writes the reader
 * reads back whole; a truncated, corrupt or foreign file is an error that
 * names the file and an offset, at every length and for every byte
 * changed, never a crash (docs/record.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dynpmu/perfdata.h"

static char path[64];

static void write_file(void)
{
	snprintf(path, sizeof path, "/tmp/dpmu_perfdata_%d.data", (int)getpid());
	const char *argv[] = {"dynpmu", "record", "prog", NULL};
	struct dpmu_perf_desc d = {.nevents = 2, .ncpus = 8, .callchain = true, .cmdline = argv};
	d.ev[0] = (struct dpmu_perf_event){"cycles", DPMU_PERF_TYPE_HARDWARE, 0, 4000, true, 3};
	d.ev[1] = (struct dpmu_perf_event){"l1d_cache_refill", DPMU_PERF_TYPE_RAW, 3, 100, false, 3};
	struct dpmu_perf_writer *w;
	struct dpmu_err err;
	assert_int_equal(dpmu_perf_create(path, &d, &w, &err), 0);
	const uint64_t chain[] = {0x400100, 0x400200, 0x400300};
	for (unsigned i = 0; i < 10; i++)
		assert_int_equal(dpmu_perf_sample(w, i % 2, 0x400000 + i * 4, 7, i < 5 ? 7 : 8, 1000 + i,
						  i % 3, 100 + i, chain, i % 4),
				 0);
	assert_int_equal(dpmu_perf_comm(w, 7, 7, "prog", true, 0), 0);
	assert_int_equal(dpmu_perf_mmap2(w, 7, 7, 0x400000, 0x10000, 0, "/no/such/prog", 0), 0);
	assert_int_equal(dpmu_perf_fork(w, 7, 7, 8, 7, 1005), 0);
	assert_int_equal(dpmu_perf_exit(w, 7, 7, 8, 7, 2000), 0);
	assert_int_equal(dpmu_perf_close(w, &err), 0);
}

static uint8_t *slurp(size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(*n);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, *n, f), *n);
	fclose(f);
	return b;
}

static void what_is_written_reads_back(void **state)
{
	(void)state;
	write_file();
	struct dpmu_perf_file *f;
	struct dpmu_err err;
	assert_int_equal(dpmu_perf_read(path, &f, &err), 0);
	assert_int_equal(f->desc.nevents, 2);
	assert_string_equal(f->desc.ev[0].name, "cycles");
	assert_string_equal(f->desc.ev[1].name, "l1d_cache_refill");
	assert_true(f->desc.ev[0].freq);
	assert_int_equal(f->desc.ev[1].config, 3);
	assert_int_equal(f->nsamples, 10);
	for (unsigned i = 0; i < 10; i++) {
		const struct dpmu_perf_sample *s = &f->samples[i];
		assert_int_equal(s->event, i % 2);
		assert_int_equal(s->ip, 0x400000 + i * 4);
		assert_int_equal(s->tid, i < 5 ? 7 : 8);
		assert_int_equal(s->time, 1000 + i);
		assert_int_equal(s->cpu, i % 3);
		assert_int_equal(s->period, 100 + i);
		assert_int_equal(s->nchain, i % 4);
		for (unsigned k = 0; k < s->nchain; k++)
			assert_int_equal(f->chains[s->chain + k], 0x400100 + 0x100 * k);
	}
	assert_int_equal(f->nmaps, 1);
	assert_int_equal(f->maps[0].start, 0x400000);
	assert_string_equal(f->maps[0].path, "/no/such/prog");
	assert_int_equal(f->ncomms, 1);
	assert_string_equal(f->comms[0].comm, "prog");
	dpmu_perf_free(f);
	unlink(path);
}

static void every_truncation_is_an_error_naming_an_offset(void **state)
{
	(void)state;
	write_file();
	size_t n;
	uint8_t *b = slurp(&n);
	/* up to the end of the data (the features after it are optional) */
	for (size_t len = 0; len + 200 < n; len++) {
		struct dpmu_perf_file *f = NULL;
		struct dpmu_err err;
		int rc = dpmu_perf_parse(b, len, "cut.data", &f, &err);
		if (rc == 0)
			fail_msg("a file cut at %zu bytes of %zu read as whole", len, n);
		assert_null(f);
		assert_non_null(strstr(dpmu_errmsg(&err), "cut.data: offset "));
	}
	free(b);
	unlink(path);
}

static void every_changed_byte_reads_or_fails_cleanly(void **state)
{
	(void)state;
	write_file();
	size_t n;
	uint8_t *b = slurp(&n);
	unsigned failed = 0;
	for (size_t i = 0; i < n; i++) {
		for (unsigned v = 0; v < 3; v++) {
			uint8_t keep = b[i];
			b[i] = v == 0 ? 0xff : v == 1 ? 0 : (uint8_t)(keep ^ 0x80);
			struct dpmu_perf_file *f = NULL;
			struct dpmu_err err;
			if (dpmu_perf_parse(b, n, "bad.data", &f, &err) == 0) {
				dpmu_perf_free(f); /* a change in a value: still a file */
			} else {
				assert_non_null(strstr(dpmu_errmsg(&err), "bad.data"));
				failed++;
			}
			b[i] = keep;
		}
	}
	assert_true(failed > 0);
	free(b);
	unlink(path);
}

static void a_foreign_file_is_named_so(void **state)
{
	(void)state;
	struct dpmu_perf_file *f;
	struct dpmu_err err;
	const char text[] = "#!/bin/sh\necho this is not a perf.data\n";
	assert_int_equal(dpmu_perf_parse(text, sizeof text, "x.sh", &f, &err), DPMU_EINVAL);
	assert_non_null(strstr(dpmu_errmsg(&err), "x.sh: offset 0: not a perf.data file"));
	const char be[16] = "2ELIFREP";
	assert_int_equal(dpmu_perf_parse(be, sizeof be, "be.data", &f, &err), DPMU_EINVAL);
	assert_non_null(strstr(dpmu_errmsg(&err), "big-endian"));
	assert_int_equal(dpmu_perf_read("/nonexistent/perf.data", &f, &err), DPMU_ENOENT);
	assert_non_null(strstr(dpmu_errmsg(&err), "/nonexistent/perf.data"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(what_is_written_reads_back),
		cmocka_unit_test(every_truncation_is_an_error_naming_an_offset),
		cmocka_unit_test(every_changed_byte_reads_or_fails_cleanly),
		cmocka_unit_test(a_foreign_file_is_named_so),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
