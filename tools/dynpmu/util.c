/* Helpers shared by the subcommands. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

int dpmu_tool_open_model(const char *cmd, const char *profile, struct dpmu_profile **p,
			 struct dpmu_model **m)
{
	struct dpmu_err err;
	dpmu_err_clear(&err);
	*p = NULL;
	*m = NULL;
	if (dpmu_profile_load(profile ? profile : DPMU_PROFILE_DEFAULT, p, &err) != 0) {
		fprintf(stderr, "dynpmu %s: %s\n", cmd, dpmu_errmsg(&err));
		return DPMU_EXIT_USAGE;
	}
	if (dpmu_model_create(*p, m, &err) != 0) {
		fprintf(stderr, "dynpmu %s: %s\n", cmd, dpmu_errmsg(&err));
		dpmu_profile_free(*p);
		*p = NULL;
		return DPMU_EXIT_USAGE;
	}
	return 0;
}

unsigned dpmu_tool_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return 1000;
	unsigned row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			unsigned best = diag + cost;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}
