/* dynpmu profiles: the built-in cluster profiles, each loaded to describe it. */
#include <inttypes.h>
#include <string.h>

#include "commands.h"

static void print_freq(uint64_t hz)
{
	if (hz >= 1000000000u && hz % 1000000u == 0)
		printf("%.2f GHz", (double)hz / 1e9);
	else
		printf("%" PRIu64 " MHz", hz / 1000000u);
}

static int describe(const char *name, bool is_default)
{
	struct dpmu_err err;
	struct dpmu_profile *p = NULL;
	if (dpmu_profile_load(name, &p, &err) != 0) {
		fprintf(stderr, "dynpmu profiles: built-in profile %s: %s\n", name, dpmu_errmsg(&err));
		return DPMU_EXIT_FAIL;
	}
	printf("%s%s\n", p->name, is_default ? " (default)" : "");
	if (p->description[0])
		printf("  %s\n", p->description);
	unsigned core = 0;
	for (unsigned c = 0; c < p->nclusters; c++) {
		const struct dpmu_cluster_params *cl = &p->clusters[c];
		printf("  cluster%u: %u cores, DSU ", c, cl->ncores);
		print_freq(cl->freq_hz);
		printf(", cluster PMU %u counters (%s events)\n", cl->pmu_counters, cl->catalog);
		for (unsigned k = 0; k < cl->ncores; k++, core++) {
			const struct dpmu_core_type *t = &p->core_types[cl->core_type[k]];
			printf("    cpu%-2u %-12s ", core, t->name);
			print_freq(t->freq_hz);
			printf(", PMU %u counters, AMU %u+%u\n", t->pmu_counters, t->amu_group0,
			       t->amu_group1);
		}
	}
	dpmu_profile_free(p);
	return DPMU_EXIT_OK;
}

int dpmu_cmd_profiles(int argc, char **argv)
{
	if (argc > 1) {
		if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
			printf("usage: dynpmu profiles\n\nLists the built-in cluster profiles; "
			       "the default is marked. Any command taking --profile also accepts "
			       "a JSON file (docs/).\n");
			return DPMU_EXIT_OK;
		}
		fprintf(stderr, "dynpmu profiles: unexpected argument '%s'\nusage: dynpmu profiles\n",
			argv[1]);
		return DPMU_EXIT_USAGE;
	}
	int rc = DPMU_EXIT_OK;
	for (size_t i = 0; dpmu_profile_builtin_names[i]; i++) {
		if (i)
			printf("\n");
		if (describe(dpmu_profile_builtin_names[i],
			     strcmp(dpmu_profile_builtin_names[i], DPMU_PROFILE_DEFAULT) == 0))
			rc = DPMU_EXIT_FAIL;
	}
	return rc;
}
