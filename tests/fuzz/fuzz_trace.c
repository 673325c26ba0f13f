/*
 * libFuzzer target for the trace reader (docs/trace-format.md): any bytes,
 * text or binary, must give records or an error message, never a crash.
 * Whatever parses must survive a round trip through the binary and the
 * text writer unchanged.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynpmu/frontend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX 8192

struct rec {
	unsigned core;
	struct dpmu_insn in;
};

static size_t read_all(const void *buf, size_t len, struct rec *out, size_t cap, int *rc)
{
	struct dpmu_err err;
	size_t n = 0;
	*rc = 0;
	if (len == 0)
		return 0;
	FILE *f = fmemopen((void *)buf, len, "rb");
	if (!f)
		return 0;
	struct dpmu_trace_reader *r;
	*rc = dpmu_trace_open_stream(f, "fuzz", DPMU_TRACE_AUTO, &r, &err);
	if (*rc == 0) {
		for (;;) {
			unsigned core;
			const struct dpmu_insn *insns;
			long k = dpmu_trace_next(r, &core, &insns, &err);
			if (k <= 0) {
				*rc = (int)k;
				break;
			}
			for (long i = 0; i < k && n < cap; i++, n++) {
				out[n].core = core;
				out[n].in = insns[i];
			}
		}
		dpmu_trace_close(r);
	}
	if (*rc && (err.msg[0] == '\0' || strncmp(err.msg, "fuzz", 4) != 0))
		abort(); /* every error names its input */
	fclose(f);
	return n;
}

/* Write the n records in `format`, read them back: the same records. */
static void round_trip(const struct rec *a, size_t n, enum dpmu_trace_format format)
{
	static struct rec b[FUZZ_MAX];
	char *buf = NULL;
	size_t blen = 0;
	FILE *out = open_memstream(&buf, &blen);
	struct dpmu_trace_writer *w;
	struct dpmu_err err;
	if (!out || dpmu_trace_writer_open_stream(out, "fuzz-out", format, &w, &err))
		abort();
	for (size_t i = 0; i < n; i++)
		if (dpmu_trace_write(w, a[i].core, &a[i].in, 1, &err))
			abort(); /* what the reader accepts, the writer must take */
	if (dpmu_trace_writer_close(w, &err))
		abort();
	fclose(out);
	int rc;
	size_t m = read_all(buf, blen, b, FUZZ_MAX, &rc);
	if (rc != 0 || m != n)
		abort();
	for (size_t i = 0; i < n; i++)
		if (a[i].core != b[i].core || memcmp(&a[i].in, &b[i].in, sizeof a[i].in) != 0)
			abort();
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rec a[FUZZ_MAX];
	int rc;
	size_t n = read_all(data, size, a, FUZZ_MAX, &rc);
	if (rc != 0 || n == 0 || n == FUZZ_MAX)
		return 0;
	round_trip(a, n, DPMU_TRACE_BINARY);
	round_trip(a, n, DPMU_TRACE_TEXT);
	return 0;
}
