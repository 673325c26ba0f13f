/*
 * dynpmu demo: seed 001 section 4.1 ("multi-core coordinated monitoring") on
 * the model, through the driver only:
 *   1. every core PMU: PMCR = E|C|P, six events, PMCNTENSET;
 *   2. the cluster PMU: L3 / bus events, and PMSSRR = RP0|RP1|RP2 so
 *      counters 0-2 restart from zero after each snapshot;
 *   3. per interval: activity runs for the interval's simulated time, then
 *      PMSSCR.SS = 1 on every frame, poll until SS reads 0, read the
 *      PMEVCNTSVR<n> / PMCCNTSVR snapshot registers and print them.
 * The activity is SYNTHETIC (synth.c) until the engine is wired in.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "dynpmu/driver.h"
#include "dynpmu/regio_model.h"
#include "synth.h"

#define DEMO_COUNTERS 6
/* Seed 001 section 4.1 step 2: reset counters 0-2 after each capture. */
#define DEMO_PMSSRR ((1u << 0) | (1u << 1) | (1u << 2))
/* Simulated cycles an APB poll of PMSSCR takes (lets a capture complete). */
#define DEMO_POLL_CYCLES 32u

/* Core events: what a performance engineer looks at first (IPC, L1D miss
 * ratio, branch mispredictions, back-end stalls; reference section 6). */
static const char *const core_events[DEMO_COUNTERS] = {
	"INST_RETIRED", "CPU_CYCLES", "L1D_CACHE", "L1D_CACHE_REFILL", "BR_MIS_PRED", "STALL_BACKEND",
};
/* Cluster events per numbering: L3 access and miss first (the hit rate of
 * seed 001 section 4.2 from deltas), then bus / coherency traffic. */
static const char *const cluster_events_classic[DEMO_COUNTERS] = {
	"L3D_CACHE", "L3D_CACHE_REFILL", "BUS_ACCESS", "L3D_CACHE_ALLOCATE", "L3D_CACHE_WB", "BUS_CYCLES",
};
static const char *const cluster_events_120[DEMO_COUNTERS] = {
	"L3_ACCESS", "L3_MISS", "SNOOP_REQ", "DATA_TRANSFER", "BUS_ACCESS", "BUS_CYCLES",
};

struct demo {
	struct dpmu_model *m;
	const struct dpmu_profile *p;
	struct dpmu_drv *drv;
	struct dpmu_drv_frame waiting;   /* frame being polled, for the wait hook */
	/* per target: event code programmed on each counter, or -1 */
	int core_code[DPMU_MAX_CORES][DEMO_COUNTERS];
	const char *cluster_names[DPMU_MAX_CLUSTERS][DEMO_COUNTERS];
	int cluster_code[DPMU_MAX_CLUSTERS][DEMO_COUNTERS];
};

/* Time passes while the driver polls PMSSCR. */
static void demo_wait(void *ctx, unsigned poll)
{
	struct demo *d = ctx;
	(void)poll;
	if (d->waiting.kind == DPMU_REGIO_FRAME_CORE)
		dpmu_model_core_cycles(d->m, d->waiting.index, DEMO_POLL_CYCLES);
	else
		dpmu_model_cluster_cycles(d->m, d->waiting.index, DEMO_POLL_CYCLES);
}

static int fail(const struct dpmu_err *err)
{
	fprintf(stderr, "dynpmu demo: %s\n", dpmu_errmsg(err));
	return DPMU_EXIT_FAIL;
}

static int setup_cores(struct demo *d, struct dpmu_err *err)
{
	for (unsigned cpu = 0; cpu < dpmu_drv_ncpus(d->drv); cpu++) {
		unsigned cl, idx;
		const struct dpmu_core_type *t = dpmu_profile_core(d->p, cpu, &cl, &idx);
		const struct dpmu_event_catalog *cat = dpmu_catalog_get(t->catalog, err);
		const struct dpmu_drv_cpuinfo *ci = dpmu_drv_cpuinfo(d->drv, cpu);
		if (!cat)
			return DPMU_ENOENT;
		/* Seed 001 section 4.1 step 1: write_pmcr(PMCR_E | PMCR_C | PMCR_P). */
		int rc = dpmu_drv_pmu_write_pmcr(d->drv, cpu,
						 DPMU_DRV_PMCR_E | DPMU_DRV_PMCR_C | DPMU_DRV_PMCR_P, err);
		if (rc || (rc = dpmu_drv_pmu_program_cycles(d->drv, cpu, DPMU_DRV_EL01, err)))
			return rc;
		uint32_t mask = DPMU_DRV_CYCLE_BIT;
		for (unsigned i = 0; i < DEMO_COUNTERS; i++) {
			const struct dpmu_event_desc *e = dpmu_catalog_find_name(cat, core_events[i]);
			d->core_code[cpu][i] = -1;
			/* Program only what the catalog names and PMCEID does not deny. */
			if (i >= ci->pmu_n || !e ||
			    dpmu_drv_cpu_event(d->drv, cpu, e->code) == DPMU_DRV_EVENT_NO)
				continue;
			if ((rc = dpmu_drv_pmu_program(d->drv, cpu, i, e->code, DPMU_DRV_EL01, err)))
				return rc;
			d->core_code[cpu][i] = e->code;
			mask |= 1u << i;
		}
		if ((rc = dpmu_drv_pmu_start(d->drv, cpu, mask, err)))
			return rc;
	}
	return 0;
}

static int setup_clusters(struct demo *d, struct dpmu_err *err)
{
	for (unsigned cl = 0; cl < dpmu_drv_nclusters(d->drv); cl++) {
		const struct dpmu_cluster_params *cp = &d->p->clusters[cl];
		const struct dpmu_event_catalog *cat = dpmu_catalog_get(cp->catalog, err);
		const struct dpmu_drv_clusterinfo *ki = dpmu_drv_clusterinfo(d->drv, cl);
		if (!cat)
			return DPMU_ENOENT;
		const char *const *names = dpmu_catalog_find_name(cat, "L3_ACCESS")
						   ? cluster_events_120
						   : cluster_events_classic;
		int rc = dpmu_drv_cluster_reset(d->drv, cl, err);
		if (rc)
			return rc;
		uint32_t mask = DPMU_DRV_CYCLE_BIT;
		for (unsigned i = 0; i < DEMO_COUNTERS; i++) {
			const struct dpmu_event_desc *e = dpmu_catalog_find_name(cat, names[i]);
			d->cluster_names[cl][i] = names[i];
			d->cluster_code[cl][i] = -1;
			if (i >= ki->pmu_n || !e ||
			    dpmu_drv_cluster_event(d->drv, cl, e->code) == DPMU_DRV_EVENT_NO)
				continue;
			if ((rc = dpmu_drv_cluster_program(d->drv, cl, i, e->code, err)))
				return rc;
			d->cluster_code[cl][i] = e->code;
			mask |= 1u << i;
		}
		if ((rc = dpmu_drv_cluster_start(d->drv, cl, mask, err)) ||
		    (rc = dpmu_drv_cluster_enable(d->drv, cl, true, err)))
			return rc;
	}
	return 0;
}

/* Every frame: unlock the software lock, then PMSSRR (seed 001 step 2). */
static int setup_snapshots(struct demo *d, struct dpmu_err *err)
{
	int rc;
	for (unsigned cpu = 0; cpu < dpmu_drv_ncpus(d->drv); cpu++)
		if ((rc = dpmu_drv_frame_unlock(d->drv, DPMU_DRV_CORE_FRAME(cpu), true, err)) ||
		    (rc = dpmu_drv_snapshot_reset_mask(d->drv, DPMU_DRV_CORE_FRAME(cpu), DEMO_PMSSRR, err)))
			return rc;
	for (unsigned cl = 0; cl < dpmu_drv_nclusters(d->drv); cl++)
		if ((rc = dpmu_drv_frame_unlock(d->drv, DPMU_DRV_CLUSTER_FRAME(cl), true, err)) ||
		    (rc = dpmu_drv_snapshot_reset_mask(d->drv, DPMU_DRV_CLUSTER_FRAME(cl), DEMO_PMSSRR,
						       err)))
			return rc;
	return 0;
}

static unsigned col_width(const char *name)
{
	size_t n = strlen(name) + 1;
	return (unsigned)(n < 11 ? 11 : n);
}

static void print_header(const char *const *names, const char *cycles, const char *ratio)
{
	printf("%-9s", "");
	for (unsigned i = 0; i < DEMO_COUNTERS; i++) {
		char h[40];
		snprintf(h, sizeof h, "%s%s", (DEMO_PMSSRR >> i) & 1 ? "+" : "", names[i]);
		printf(" %*s", col_width(names[i]), h);
	}
	printf(" %14s %7s\n", cycles, ratio);
}

static void print_counts(const struct dpmu_drv_snapshot *s, const char *const *names,
			 const int *codes)
{
	for (unsigned i = 0; i < DEMO_COUNTERS; i++) {
		if (codes[i] < 0 || i >= s->n)
			printf(" %*s", col_width(names[i]), "-");
		else
			printf(" %*" PRIu64, col_width(names[i]), s->ev[i]);
	}
	printf(" %14" PRIu64, s->cc);
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static int snapshot_all(struct demo *d, struct dpmu_drv_snapshot *core_snap,
			struct dpmu_drv_snapshot *cl_snap, struct dpmu_err *err)
{
	unsigned ncpus = dpmu_drv_ncpus(d->drv), ncl = dpmu_drv_nclusters(d->drv);
	int rc;
	/* Trigger every frame first, then collect: the captures are as close
	 * together in time as the bus allows (seed 001 section 5.2 item 2). */
	for (unsigned cpu = 0; cpu < ncpus; cpu++)
		if ((rc = dpmu_drv_snapshot_trigger(d->drv, DPMU_DRV_CORE_FRAME(cpu), err)))
			return rc;
	for (unsigned cl = 0; cl < ncl; cl++)
		if ((rc = dpmu_drv_snapshot_trigger(d->drv, DPMU_DRV_CLUSTER_FRAME(cl), err)))
			return rc;
	for (unsigned cpu = 0; cpu < ncpus; cpu++) {
		d->waiting = DPMU_DRV_CORE_FRAME(cpu);
		if ((rc = dpmu_drv_snapshot_collect(d->drv, d->waiting, &core_snap[cpu], err)))
			return rc;
	}
	for (unsigned cl = 0; cl < ncl; cl++) {
		d->waiting = DPMU_DRV_CLUSTER_FRAME(cl);
		if ((rc = dpmu_drv_snapshot_collect(d->drv, d->waiting, &cl_snap[cl], err)))
			return rc;
	}
	return 0;
}

static void print_interval(struct demo *d, unsigned k, unsigned intervals, uint64_t ns,
			   const struct dpmu_drv_snapshot *core_snap,
			   const struct dpmu_drv_snapshot *cl_snap)
{
	printf("\ninterval %u of %u: %.3f ms simulated, ending at %.3f ms\n", k + 1, intervals,
	       (double)ns / 1e6, (double)ns * (k + 1) / 1e6);
	print_header(core_events, "PMCCNTR", "IPC");
	for (unsigned cpu = 0; cpu < dpmu_drv_ncpus(d->drv); cpu++) {
		const struct dpmu_drv_snapshot *s = &core_snap[cpu];
		printf("cpu%-6u", cpu);
		print_counts(s, core_events, d->core_code[cpu]);
		/* counters 0 and 1 are per-interval deltas: IPC of this interval */
		printf(" %7.2f  %s\n", ratio(s->ev[0], s->ev[1]), dpmu_synth_phase(k, cpu));
	}
	for (unsigned cl = 0; cl < dpmu_drv_nclusters(d->drv); cl++) {
		const struct dpmu_drv_snapshot *s = &cl_snap[cl];
		print_header(d->cluster_names[cl], "CLUSTERPMCCNTR", "L3 hit");
		printf("cluster%-2u", cl);
		print_counts(s, d->cluster_names[cl], d->cluster_code[cl]);
		/* seed 001 section 4.2: (L3 access - L3 miss) / L3 access */
		double hit = s->ev[0] ? 1.0 - ratio(s->ev[1], s->ev[0]) : 0.0;
		printf(" %6.1f%%\n", 100.0 * hit);
	}
}

static void print_discovery(struct demo *d)
{
	printf("driver discovery (register reads): %u cpus, %u cluster(s)\n", dpmu_drv_ncpus(d->drv),
	       dpmu_drv_nclusters(d->drv));
	for (unsigned cpu = 0; cpu < dpmu_drv_ncpus(d->drv); cpu++) {
		const struct dpmu_drv_cpuinfo *ci = dpmu_drv_cpuinfo(d->drv, cpu);
		printf("  cpu%-2u MIDR 0x%08" PRIx64 "  cluster %u core %u  PMCR.N %u", cpu, ci->midr,
		       ci->cluster, ci->core, ci->pmu_n);
		if (ci->amu)
			printf("  AMU %u+%u counters\n", ci->amu_cg0nc, ci->amu_cg1nc);
		else
			printf("  no AMU\n");
	}
	for (unsigned cl = 0; cl < dpmu_drv_nclusters(d->drv); cl++) {
		const struct dpmu_drv_clusterinfo *ki = dpmu_drv_clusterinfo(d->drv, cl);
		printf("  cluster%u: %u cpus, CLUSTERPMCR.N %u (accessed from cpu%u)\n", cl, ki->ncpus,
		       ki->pmu_n, ki->cpu);
	}
}

static void demo_usage(FILE *out)
{
	fprintf(out, "usage: dynpmu demo [--profile NAME|FILE] [--intervals N] [--interval-us US]\n\n"
		     "Runs seed 001 section 4.1 on the simulated cluster through the driver: every\n"
		     "core PMU and the cluster PMU programmed, then periodic snapshots (PMSSCR.SS)\n"
		     "of every frame, printed per interval. Default: 5 intervals of 1000 us.\n"
		     "The activity is SYNTHETIC until the microarchitectural engine is wired in.\n");
}

static int parse_count(const char *opt, const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v = s ? strtoul(s, &end, 10) : 0;
	if (!s || !*s || *end || v < lo || v > hi) {
		fprintf(stderr, "dynpmu demo: %s needs a number from %u to %u, not '%s'\n", opt, lo, hi,
			s ? s : "");
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

int dpmu_cmd_demo(int argc, char **argv)
{
	const char *profile = NULL;
	unsigned intervals = 5, interval_us = 1000;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			demo_usage(stdout);
			return DPMU_EXIT_OK;
		} else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc) {
			profile = argv[++i];
		} else if (strcmp(argv[i], "--intervals") == 0) {
			if (parse_count(argv[i], i + 1 < argc ? argv[i + 1] : NULL, 1, 1000, &intervals))
				return DPMU_EXIT_USAGE;
			i++;
		} else if (strcmp(argv[i], "--interval-us") == 0) {
			if (parse_count(argv[i], i + 1 < argc ? argv[i + 1] : NULL, 1, 1000000, &interval_us))
				return DPMU_EXIT_USAGE;
			i++;
		} else {
			fprintf(stderr, "dynpmu demo: unknown argument '%s'\n", argv[i]);
			demo_usage(stderr);
			return DPMU_EXIT_USAGE;
		}
	}

	struct demo *d = calloc(1, sizeof *d);
	struct dpmu_profile *p = NULL;
	struct dpmu_drv_snapshot *core_snap = calloc(DPMU_MAX_CORES, sizeof *core_snap);
	struct dpmu_drv_snapshot *cl_snap = calloc(DPMU_MAX_CLUSTERS, sizeof *cl_snap);
	if (!d || !core_snap || !cl_snap) {
		fprintf(stderr, "dynpmu demo: out of memory\n");
		free(d), free(core_snap), free(cl_snap);
		return DPMU_EXIT_FAIL;
	}
	int rc = dpmu_tool_open_model("demo", profile, &p, &d->m);
	if (rc) {
		free(d), free(core_snap), free(cl_snap);
		return rc;
	}
	d->p = dpmu_model_profile(d->m);
	struct dpmu_regio_model rm;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	dpmu_regio_model_init(&rm, d->m, NULL, NULL);
	uint64_t ns = (uint64_t)interval_us * 1000u;

	if (dpmu_drv_create(&rm.io, &d->drv, &err) != 0) {
		rc = fail(&err);
		goto out;
	}
	dpmu_drv_set_wait(d->drv, demo_wait, d);

	printf("dynpmu demo: seed 001 section 4.1 on the simulated cluster, profile %s\n", d->p->name);
	print_discovery(d);
	if (setup_cores(d, &err) || setup_clusters(d, &err) || setup_snapshots(d, &err)) {
		rc = fail(&err);
		goto out;
	}
	printf("activity: SYNTHETIC - a made-up, deterministic event mix fed to the model (the\n"
	       "          microarchitectural engine is not wired into the demo yet); the last\n"
	       "          column names the synthetic phase of each cpu\n");
	printf("snapshots: PMSSRR = 0x%x on every frame: columns marked + are reset after each\n"
	       "           capture (per-interval deltas); the others and the cycle counters are\n"
	       "           cumulative since the start\n",
	       DEMO_PMSSRR);

	for (unsigned k = 0; k < intervals; k++) {
		dpmu_synth_run(d->m, k, ns);
		if (snapshot_all(d, core_snap, cl_snap, &err)) {
			rc = fail(&err);
			goto out;
		}
		print_interval(d, k, intervals, ns, core_snap, cl_snap);
	}
	rc = DPMU_EXIT_OK;
out:
	dpmu_drv_destroy(d->drv);
	dpmu_model_destroy(d->m);
	dpmu_profile_free(p);
	free(d);
	free(core_snap);
	free(cl_snap);
	return rc;
}
