/*
 * The monitor's diagnosis (seed 003 section 7.2, step 2): from the counts
 * the diagnosis groups took during an anomaly, the cause, named by the
 * metric that most exceeds its threshold. The thresholds are this table's
 * (docs/monitor.md lists them with their sources); the seeds' advice rules
 * (advice.c) add what to do.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/an_internal.h"

/* Snoops the cluster handled per 1000 instructions of the core: a
 * coherence measure both DSU numberings have (the DSU-120's SNOOP_REQ,
 * seed 001 section 4.2; the classic DSU's SCU_SNP_ACCESS, DSU TRM). The
 * DSU-120 also has DATA_TRANSFER, so its clusters are judged by
 * coherency_ratio as well. */
static const struct dpmu_an_metric snoop_pki = {
	"snoop_pki", "SNOOP_REQ * 1000 / INST_RETIRED", "SCU_SNP_ACCESS * 1000 / INST_RETIRED", "PKI",
	"seed 001 section 4.2 (SNOOP_REQ); DSU TRM (SCU_SNP_ACCESS)", "snoops per 1000 instructions"
};

static const struct {
	const char *group;
	bool cluster;              /* evaluated on the cluster's unit */
	const char *metric;        /* NULL: snoop_pki */
	double threshold;
	const char *what;
	const char *source;
} causes[] = {
	{ "memory hierarchy", false, "l2_cache_mpki", 5.0, "L2 refills", "reference section 6; seed 003 section 6.1" },
	{ "memory hierarchy", false, "l1d_cache_mpki", 20.0, "L1D refills", "reference section 6; seed 003 section 3.2" },
	{ "memory hierarchy", false, "dtlb_mpki", 2.0, "data page-table walks", "reference section 6" },
	{ "front end", false, "branch_mpki", 5.0, "branch mispredictions", "seed 003 section 6.2" },
	{ "front end", false, "l1i_cache_mpki", 10.0, "L1I refills", "reference section 6" },
	{ "front end", false, "itlb_mpki", 2.0, "instruction page-table walks", "reference section 6" },
	{ "coherence", true, "coherency_ratio", 10.0, "L3 requests served by another core", "seed 001 section 4.2" },
	{ "coherence", true, NULL, 20.0, "snoops", "seed 001 section 4.2; DSU TRM" },
};

int dpmu_an_diagnose(const struct dpmu_an_table *t, size_t sample, const char *cpu,
		     const char *cluster, struct dpmu_an_cause *out, struct dpmu_err *err)
{
	memset(out, 0, sizeof *out);
	if (sample >= t->nsamples)
		return dpmu_err_set(err, DPMU_EINVAL, "diagnosis: no sample %zu", sample);
	const struct dpmu_an_sample *s = &t->samples[sample];
	const struct dpmu_an_unit *uc = dpmu_an_unit_find(s, cpu);
	const struct dpmu_an_unit *ucl = cluster ? dpmu_an_unit_find(s, cluster) : NULL;
	double best = -1;
	for (size_t i = 0; i < sizeof causes / sizeof causes[0]; i++) {
		const struct dpmu_an_unit *u = causes[i].cluster ? ucl : uc;
		const struct dpmu_an_metric *m =
			causes[i].metric ? dpmu_an_metric_find(causes[i].metric) : &snoop_pki;
		if (!u || !m)
			continue;
		struct dpmu_an_value v;
		int rc = dpmu_an_metric_eval(m, t, s, u, &v, err);
		if (rc)
			return rc;
		if (!v.available)
			continue;
		double ratio = v.value / causes[i].threshold;
		if (ratio > best) {
			best = ratio;
			out->group = causes[i].group;
			out->metric = m->name;
			out->value = v.value;
			out->threshold = causes[i].threshold;
			out->found = ratio >= 1;
			snprintf(out->text, sizeof out->text, "%s: %.1f %s (%s %.3g, threshold %.3g; %s)",
				 causes[i].group, v.value, m->unit, m->name, v.value, causes[i].threshold,
				 causes[i].what);
		}
	}
	if (best < 0)
		return dpmu_err_set(err, DPMU_ENOENT, "diagnosis of %s: no metric could be evaluated",
				    cpu);
	return 0;
}
