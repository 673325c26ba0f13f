/*
 * libFuzzer target for the profile reader (dpmu_profile_parse, JSON as in
 * docs/profiles.md): any bytes give a profile or an error message, never a
 * crash. A profile that loads has cores, each of a core type and a cluster
 * of the profile.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dynpmu/arch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TEXT_MAX 16384

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[TEXT_MAX + 1];
	if (size > TEXT_MAX)
		size = TEXT_MAX;
	memcpy(text, data, size);
	text[size] = '\0';
	struct dpmu_profile *p = NULL;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	/* a relative "base" is looked up next to the source: a folder that
	 * holds no profile, so only built-in bases load */
	int rc = dpmu_profile_parse(text, "/nonexistent/fuzz.json", &p, &err);
	if (rc) {
		if (!err.msg[0] || p)
			abort(); /* every refusal says why, and leaves nothing */
		return 0;
	}
	unsigned n = dpmu_profile_ncores(p);
	if (n == 0 || n > DPMU_MAX_CORES)
		abort();
	if (p->nclusters == 0 || p->nclusters > DPMU_MAX_CLUSTERS || p->n_core_types == 0 ||
	    p->n_core_types > DPMU_MAX_CORE_TYPES)
		abort();
	for (unsigned c = 0; c < n; c++) {
		unsigned cl, in;
		const struct dpmu_core_type *t = dpmu_profile_core(p, c, &cl, &in);
		if (!t || cl >= p->nclusters || t < p->core_types || t >= p->core_types + p->n_core_types)
			abort();
	}
	dpmu_profile_free(p);
	return 0;
}
