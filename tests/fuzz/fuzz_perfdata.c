/*
 * libFuzzer target for the perf.data reader (docs/record.md): any bytes
 * must give a file or an error message naming the input and an offset,
 * never a crash; whatever reads must hold only what lies within it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dynpmu/perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dpmu_perf_file *f = NULL;
	struct dpmu_err err;
	if (dpmu_perf_parse(data, size, "fuzz", &f, &err) != 0) {
		if (!f && strncmp(dpmu_errmsg(&err), "fuzz", 4) == 0)
			return 0;
		abort(); /* a failure must name the input and leave nothing */
	}
	for (size_t i = 0; i < f->nsamples; i++)
		if (f->samples[i].event >= f->desc.nevents ||
		    (size_t)f->samples[i].chain + f->samples[i].nchain > f->nchains)
			abort();
	for (size_t i = 0; i < f->nmaps; i++)
		if (!f->maps[i].path || strlen(f->maps[i].path) >= size)
			abort();
	dpmu_perf_free(f);
	return 0;
}
