/*
 * libFuzzer target for the event-list parser (dpmu_mon_events_parse, perf's
 * -e syntax): any text gives a list or an error message, never a crash. A
 * list that parses holds at most DPMU_MON_MAX_EVENTS named events, each on
 * a PMU, in groups numbered below ngroups, and parses again to the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dynpmu/arch.h"
#include "dynpmu/monitor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LIST_MAX 2048

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dpmu_profile *p;
	static struct dpmu_mon_events a, b;
	struct dpmu_err err;
	if (!p && dpmu_profile_load("a75x4-a55x4-dsu120", &p, &err))
		abort();
	char list[LIST_MAX + 1];
	if (size > LIST_MAX)
		size = LIST_MAX;
	memcpy(list, data, size);
	list[size] = '\0';
	uint64_t cores = (UINT64_C(1) << dpmu_profile_ncores(p)) - 1;
	dpmu_err_clear(&err);
	int rc = dpmu_mon_events_parse(list, p, cores, &a, &err);
	if (rc) {
		if (!err.msg[0])
			abort(); /* every refusal says why */
		return 0;
	}
	if (a.n == 0 || a.n > DPMU_MON_MAX_EVENTS)
		abort();
	for (unsigned i = 0; i < a.n; i++)
		if (!a.ev[i].name[0] || a.ev[i].group >= a.ngroups)
			abort();
	if (dpmu_mon_events_parse(list, p, cores, &b, &err) || memcmp(&a, &b, sizeof a) != 0)
		abort();
	return 0;
}
