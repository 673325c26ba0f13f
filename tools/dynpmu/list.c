/*
 * dynpmu list [--profile P] [--json]
 *
 * Every core-PMU, AMU and cluster-PMU event of the profile's catalogs, with
 * its code, description, the PMU that counts it, whether the profile
 * implements it and whether the simulator produces it.
 *
 * "Implemented" is asked of the hardware as software would: PMCEID0/1_EL0
 * and CLUSTERPMCEID0/1_EL1 read through the driver on a model of the
 * profile, and the AMU's AMEVTYPER0<n>_EL0. PMCEID describes events 0x00-0x3F
 * and 0x4000-0x403F only (reference section 1); for any other event, and for
 * the events an AMU group-1 counter may select, the answer comes from the
 * profile's implemented list, and the table marks it with '*'.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "dynpmu/analysis.h"
#include "dynpmu/driver.h"
#include "dynpmu/regio_model.h"
#include "dynpmu/uarch.h"

struct list_row {
	const struct dpmu_event_desc *ev;
	char pmu[DPMU_NAME_MAX + 16];
	bool implemented;
	bool from_profile;   /* PMCEID cannot describe it */
	bool modelled;
};

struct list_ctx {
	struct dpmu_drv *drv;
	const struct dpmu_profile *p;
	bool json;
	json_t *array;
	bool any_profile_answer;
};

static void list_usage(FILE *out)
{
	fprintf(out,
		"usage: dynpmu list [--profile P] [--json]\n"
		"       dynpmu list --backend perf [--json]\n\n"
		"List the core PMU, AMU and cluster PMU events of a profile: code, description,\n"
		"which PMU counts it, whether the profile implements it (PMCEID read through the\n"
		"driver on a model of the profile) and whether the simulator produces it.\n\n"
		"  --profile P   built-in profile or JSON file (default %s)\n"
		"  --backend B   sim (default) or perf: this machine's PMUs from sysfs, and\n"
		"                which catalog events the running kernel advertises\n"
		"  --json        one JSON array of objects: name, code, pmu, description,\n"
		"                implemented, modelled (docs/output.md)\n",
		DPMU_PROFILE_DEFAULT);
}

static void emit(struct list_ctx *c, const struct list_row *r)
{
	char code[16];
	snprintf(code, sizeof code, "0x%02X", (unsigned)r->ev->code);
	if (c->json) {
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(r->ev->name));
		json_object_set_new(o, "code", json_string(code));
		json_object_set_new(o, "pmu", json_string(r->pmu));
		json_object_set_new(o, "description", json_string(r->ev->description ? r->ev->description : ""));
		json_object_set_new(o, "implemented", json_boolean(r->implemented));
		json_object_set_new(o, "modelled", json_boolean(r->modelled));
		json_array_append_new(c->array, o);
		return;
	}
	char impl[8];
	snprintf(impl, sizeof impl, "%s%s", r->implemented ? "yes" : "no", r->from_profile ? "*" : "");
	printf("  %-28s %-7s %-5s %-4s %s\n", r->ev->name, code, impl, r->modelled ? "yes" : "no",
	       r->ev->description ? r->ev->description : "");
	c->any_profile_answer = c->any_profile_answer || r->from_profile;
}

static void heading(const struct list_ctx *c, const char *what, const char *cpus,
		    const char *catalog)
{
	if (c->json)
		return;
	printf("\n%s (%s; catalog %s)\n", what, cpus, catalog);
	printf("  %-28s %-7s %-5s %-4s %s\n", "EVENT", "CODE", "IMPL", "SIM", "DESCRIPTION");
}

/* "cpu0-3" or "cpu4,cpu6": the cores of core type ty. */
static unsigned cores_of_type(const struct dpmu_profile *p, unsigned ty, char *buf, size_t cap)
{
	unsigned first = ~0u, n = 0, ncores = dpmu_profile_ncores(p);
	size_t k = 0;
	buf[0] = '\0';
	for (unsigned cpu = 0; cpu < ncores; cpu++) {
		unsigned cl, idx;
		const struct dpmu_core_type *t = dpmu_profile_core(p, cpu, &cl, &idx);
		if (t != &p->core_types[ty])
			continue;
		if (first == ~0u)
			first = cpu;
		int w = snprintf(buf + k, cap - k, "%scpu%u", n ? "," : "", cpu);
		if (w > 0 && (size_t)w < cap - k)
			k += (size_t)w;
		n++;
	}
	return first;
}

static int list_core_type(struct list_ctx *c, unsigned ty)
{
	const struct dpmu_core_type *t = &c->p->core_types[ty];
	char cpus[256];
	unsigned cpu = cores_of_type(c->p, ty, cpus, sizeof cpus);
	if (cpu == ~0u)
		return 0; /* a core type no core of the profile uses */
	struct dpmu_err err;
	const struct dpmu_event_catalog *cat = dpmu_catalog_get(t->catalog, &err);
	if (!cat) {
		fprintf(stderr, "dynpmu list: %s: %s\n", t->name, dpmu_errmsg(&err));
		return DPMU_EXIT_FAIL;
	}
	char what[DPMU_NAME_MAX + 16];
	snprintf(what, sizeof what, "%s core PMU", t->name);
	heading(c, what, cpus, cat->name);
	for (size_t i = 0; i < cat->count; i++) {
		struct list_row r = {.ev = &cat->events[i]};
		snprintf(r.pmu, sizeof r.pmu, "core:%s", t->name);
		enum dpmu_drv_event_status st = dpmu_drv_cpu_event(c->drv, cpu, r.ev->code);
		r.from_profile = st == DPMU_DRV_EVENT_UNKNOWN;
		r.implemented = r.from_profile ? dpmu_core_type_implements(t, r.ev->code)
					       : st == DPMU_DRV_EVENT_YES;
		r.modelled = dpmu_uarch_produces(DPMU_PMU_CORE, r.ev->name);
		emit(c, &r);
	}

	/* AMU: group-0 types read back through the driver; group-1 choices
	 * are the profile's (no register lists what AMEVTYPER1 accepts). */
	const struct dpmu_drv_cpuinfo *ci = dpmu_drv_cpuinfo(c->drv, cpu);
	const struct dpmu_event_catalog *amu = dpmu_catalog_get("amu", &err);
	if (!amu) {
		fprintf(stderr, "dynpmu list: %s\n", dpmu_errmsg(&err));
		return DPMU_EXIT_FAIL;
	}
	uint16_t g0[DPMU_AMU_GROUP0_MAX];
	unsigned n0 = 0;
	for (unsigned i = 0; ci && ci->amu && i < ci->amu_cg0nc && n0 < DPMU_AMU_GROUP0_MAX; i++) {
		uint16_t ev;
		if (dpmu_drv_amu_type(c->drv, cpu, 0, i, &ev, &err) == 0)
			g0[n0++] = ev;
	}
	snprintf(what, sizeof what, "%s AMU", t->name);
	heading(c, what, cpus, amu->name);
	for (size_t i = 0; i < amu->count; i++) {
		struct list_row r = {.ev = &amu->events[i]};
		snprintf(r.pmu, sizeof r.pmu, "amu:%s", t->name);
		for (unsigned k = 0; k < n0; k++)
			r.implemented = r.implemented || g0[k] == r.ev->code;
		if (!r.implemented && ci && ci->amu && ci->amu_cg1nc) {
			for (size_t k = 0; k < t->amu_n_selectable; k++)
				r.implemented = r.implemented || t->amu_selectable[k] == r.ev->code;
			r.from_profile = true;
		}
		r.modelled = r.implemented && dpmu_uarch_produces(DPMU_PMU_AMU, r.ev->name);
		emit(c, &r);
	}
	return 0;
}

static int list_cluster(struct list_ctx *c, unsigned cl)
{
	const struct dpmu_cluster_params *cp = &c->p->clusters[cl];
	struct dpmu_err err;
	const struct dpmu_event_catalog *cat = dpmu_catalog_get(cp->catalog, &err);
	if (!cat) {
		fprintf(stderr, "dynpmu list: cluster%u: %s\n", cl, dpmu_errmsg(&err));
		return DPMU_EXIT_FAIL;
	}
	char what[64], cpus[32];
	snprintf(what, sizeof what, "cluster%u DSU cluster PMU", cl);
	snprintf(cpus, sizeof cpus, "%u cores", cp->ncores);
	heading(c, what, cpus, cat->name);
	for (size_t i = 0; i < cat->count; i++) {
		struct list_row r = {.ev = &cat->events[i]};
		snprintf(r.pmu, sizeof r.pmu, "cluster:cluster%u", cl);
		enum dpmu_drv_event_status st = dpmu_drv_cluster_event(c->drv, cl, r.ev->code);
		r.from_profile = st == DPMU_DRV_EVENT_UNKNOWN;
		r.implemented = r.from_profile ? dpmu_cluster_implements(cp, r.ev->code)
					       : st == DPMU_DRV_EVENT_YES;
		r.modelled = dpmu_uarch_produces(DPMU_PMU_CLUSTER, r.ev->name);
		emit(c, &r);
	}
	return 0;
}

int dpmu_cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"profile", required_argument, NULL, 'p'},
		{"json", no_argument, NULL, 'j'},
		{"backend", required_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *profile = NULL;
	bool json = false, perf = false;
	optind = 1;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			profile = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'B':
			if (strcmp(optarg, "perf") != 0 && strcmp(optarg, "sim") != 0) {
				fprintf(stderr, "dynpmu list: --backend '%s': use sim or perf\n", optarg);
				return DPMU_EXIT_USAGE;
			}
			perf = strcmp(optarg, "perf") == 0;
			break;
		case 'h':
			list_usage(stdout);
			return DPMU_EXIT_OK;
		case ':':
			fprintf(stderr, "dynpmu list: option '%s' needs a value\n", argv[optind - 1]);
			return DPMU_EXIT_USAGE;
		default:
			fprintf(stderr, "dynpmu list: unknown option '%s'\n", argv[optind - 1]);
			list_usage(stderr);
			return DPMU_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dynpmu list: unexpected argument '%s'\n", argv[optind]);
		list_usage(stderr);
		return DPMU_EXIT_USAGE;
	}

	if (perf && profile) {
		fprintf(stderr, "dynpmu list: --profile is a simulated cluster; --backend perf lists "
				"this machine's PMUs from sysfs\n");
		return DPMU_EXIT_USAGE;
	}
	if (perf)
		return dpmu_list_perf(json);
	if (!json)
		dpmu_tool_perf_hint("list");
	struct dpmu_profile *p = NULL;
	struct dpmu_model *m = NULL;
	int rc = dpmu_tool_open_model("list", profile, &p, &m);
	if (rc)
		return rc;
	struct dpmu_regio_model rm;
	dpmu_regio_model_init(&rm, m, NULL, NULL);
	struct dpmu_err err;
	dpmu_err_clear(&err);
	struct list_ctx c = {.p = p, .json = json};
	if (dpmu_drv_create(&rm.io, &c.drv, &err) != 0) {
		fprintf(stderr, "dynpmu list: %s\n", dpmu_errmsg(&err));
		dpmu_model_destroy(m);
		dpmu_profile_free(p);
		return DPMU_EXIT_FAIL;
	}
	if (json)
		c.array = json_array();
	else
		printf("Events of profile %s\n", p->name);
	for (unsigned ty = 0; !rc && ty < p->n_core_types; ty++)
		rc = list_core_type(&c, ty);
	for (unsigned cl = 0; !rc && cl < p->nclusters; cl++)
		rc = list_cluster(&c, cl);
	if (!rc && json) {
		if (json_dumpf(c.array, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER) || putchar('\n') == EOF)
			rc = DPMU_EXIT_FAIL;
	} else if (!rc) {
		printf("\nIMPL: implemented, from PMCEID0/1 read through the driver (AMU group 0: "
		       "AMEVTYPER0<n>).\n");
		if (c.any_profile_answer)
			printf("  * from the profile's implemented list: PMCEID describes events "
			       "0x00-0x3F and 0x4000-0x403F only,\n    and no register lists the "
			       "events an AMU group-1 counter accepts.\n");
		printf("SIM: produced by the simulated cluster (model and engine).\n");
	}
	json_decref(c.array);
	dpmu_drv_destroy(c.drv);
	dpmu_model_destroy(m);
	dpmu_profile_free(p);
	fflush(stdout);
	if (!rc && ferror(stdout))
		rc = DPMU_EXIT_FAIL;
	return rc;
}
