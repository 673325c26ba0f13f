/*
 * libFuzzer target for the trace-directory reader (docs/trace-unit.md):
 * an input is meta.json's bytes, a NUL, then trace.bin's. Any bytes must
 * give a directory or an error naming the input, never a crash; whatever
 * reads must hold only what lies within it. (What OpenCSD makes of any
 * trace bytes is tests/unit/test_etm_trace.c's: its C API leaks an object
 * per decode, which a fuzzer's leak check cannot be told apart from ours.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dynpmu/tracedir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t mlen = nul ? (size_t)(nul - data) : size;
	const uint8_t *trace = nul ? nul + 1 : data + size;
	size_t tlen = (size_t)(data + size - trace);
	struct dpmu_tracedir t;
	struct dpmu_err err;
	if (dpmu_tracedir_parse("fuzz", (const char *)data, mlen, trace, tlen, &t, &err) != 0) {
		if (t.trace || t.snap || t.program || t.nmaps || strncmp(dpmu_errmsg(&err), "fuzz", 4))
			abort(); /* a failure must name the input and leave nothing */
		return 0;
	}
	if (t.trace_len != tlen || (tlen && memcmp(t.trace, trace, tlen)) || t.nmaps > DPMU_TRACEDIR_MAX_MAPS ||
	    t.traced > t.given)
		abort();
	for (unsigned i = 0; i < t.nmaps; i++)
		if (!t.maps[i].path || strlen(t.maps[i].path) >= size)
			abort();
	if (t.first != DPMU_TRACEDIR_NONE && t.traced && t.last >= t.given)
		abort();
	dpmu_tracedir_free(&t);
	return 0;
}
