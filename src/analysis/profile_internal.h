/*
 * Shared by profile.c (the report, collapsed stacks, annotation) and
 * flame.c (the flame graph).
 */
#ifndef DPMU_ANALYSIS_PROFILE_INTERNAL_H
#define DPMU_ANALYSIS_PROFILE_INTERNAL_H

#include "dynpmu/analysis.h"
#include "dynpmu/perfdata.h"

/* Weights by string key: an open-addressing table, then (sorted) a list. */
struct dpmu_an_tally_row {
	char *key;
	uint64_t hash, weight, samples;
};
struct dpmu_an_tally {
	struct dpmu_an_tally_row *rows;
	size_t n, cap;
};
/* Add w (one sample) to key; DPMU_ENOMEM when out of memory. */
int dpmu_an_tally_add(struct dpmu_an_tally *t, const char *key, uint64_t w);
/* The rows in t->rows[0..n), by weight (heaviest first) or by key; no add
 * after it. Returns n. */
size_t dpmu_an_tally_sorted(struct dpmu_an_tally *t, bool weight);
void dpmu_an_tally_free(struct dpmu_an_tally *t);

/* The function at caller level `depth` of a sample (0: the sampled
 * instruction's); NULL past its chain. */
const struct dpmu_an_loc *dpmu_an_frame(struct dpmu_an_syms *s, const struct dpmu_perf_file *f,
					const struct dpmu_perf_sample *smp, uint32_t depth);
/* The collapsed stacks of an event into t (outermost first, ';'). */
int dpmu_an_profile_stacks(const struct dpmu_perf_file *f, struct dpmu_an_syms *s, unsigned event,
			   struct dpmu_an_tally *t);
/* The command name of a thread, from the COMM records. */
const char *dpmu_an_comm_of(const struct dpmu_perf_file *f, uint32_t pid, uint32_t tid);

#endif
