/*
 * Edit distance between two names, for the "did you mean" of every lookup
 * of an event, register, metric or command by name.
 */
#include <ctype.h>
#include <string.h>

#include "dynpmu/arch.h"

unsigned dpmu_name_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > DPMU_NAME_MAX || lb > DPMU_NAME_MAX)
		return DPMU_NAME_DISTANCE_FAR;
	/* One row of the Levenshtein table; case is not a difference. */
	unsigned row[DPMU_NAME_MAX + 1];
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
