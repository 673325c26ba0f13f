/*
 * dynpmu list --backend perf [--json]
 *
 * This machine as the perf backend sees it (src/backend/perf_sysfs.c):
 * each Arm PMU in sysfs (core PMUs with their cpus and core type from
 * MIDR_EL1, DSU PMUs with their cluster and the cpu events open on), then
 * every event of each PMU's catalog with whether the running kernel
 * advertises it in the PMU's events/ directory (the arm_pmuv3 driver
 * derives those from PMCEID0/1_EL0), the advertised events no catalog
 * names, and Linux's software events. An event the kernel does not
 * advertise may still open as a raw code (rNN); one it advertises counts.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "dynpmu/monitor.h"
#include "dynpmu/perf.h"

static void cpulist(uint64_t m, char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned c = 0; c < 64 && used + 8 < cap; c++) {
		if (!(m >> c & 1))
			continue;
		unsigned e = c;
		while (e + 1 < 64 && (m >> (e + 1) & 1))
			e++;
		int w = e > c ? snprintf(buf + used, cap - used, "%s%u-%u", used ? "," : "", c, e)
			      : snprintf(buf + used, cap - used, "%s%u", used ? "," : "", c);
		used += w > 0 ? (size_t)w : 0;
		c = e;
	}
}

static const struct dpmu_core_type *type_of_pmu(const struct dpmu_profile *p,
						const struct dpmu_perf_pmu *pmu)
{
	unsigned cpu = (unsigned)__builtin_ctzll(pmu->cpus), cl, idx;
	return dpmu_profile_core(p, cpu, &cl, &idx);
}

static void row(json_t *arr, const char *name, unsigned code, const char *pmu, const char *desc,
		bool advertised, bool in_catalog)
{
	char hex[16];
	snprintf(hex, sizeof hex, "0x%02X", code);
	if (arr) {
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(name));
		json_object_set_new(o, "code", json_string(hex));
		json_object_set_new(o, "pmu", json_string(pmu));
		json_object_set_new(o, "description", json_string(desc ? desc : ""));
		json_object_set_new(o, "advertised", json_boolean(advertised));
		json_object_set_new(o, "catalog", json_boolean(in_catalog));
		json_array_append_new(arr, o);
		return;
	}
	printf("  %-28s %-7s %-4s %s\n", name, hex, advertised ? "yes" : "no", desc ? desc : "");
}

static int list_pmu(const struct dpmu_perf_system *sys, const struct dpmu_profile *p,
		    const struct dpmu_perf_pmu *pmu, json_t *arr)
{
	char cpus[128];
	cpulist(pmu->cpus, cpus, sizeof cpus);
	const char *catname = "dsu";
	if (pmu->kind == DPMU_PERF_PMU_CORE) {
		const struct dpmu_core_type *t = type_of_pmu(p, pmu);
		catname = t ? t->catalog : "armv8-pmuv3";
		if (!arr)
			printf("\n%s (type %u): core PMU of cpu%s, %s (MIDR_EL1 0x%08X), catalog %s\n",
			       pmu->name, pmu->type, cpus, t ? t->name : "?",
			       sys->midr[__builtin_ctzll(pmu->cpus)], catname);
	} else if (!arr) {
		printf("\n%s (type %u): DSU cluster PMU of cpu%s, events open on cpu%d (cpumask), "
		       "system-wide only, catalog %s\n",
		       pmu->name, pmu->type, cpus, pmu->open_cpu, catname);
	}
	struct dpmu_err err;
	const struct dpmu_event_catalog *cat = dpmu_catalog_get(catname, &err);
	if (!cat) {
		fprintf(stderr, "dynpmu list: %s\n", dpmu_errmsg(&err));
		return DPMU_EXIT_FAIL;
	}
	if (!arr)
		printf("  %-28s %-7s %-4s %s\n", "EVENT", "CODE", "ADV", "DESCRIPTION");
	for (size_t i = 0; i < cat->count; i++)
		row(arr, cat->events[i].name, cat->events[i].code, pmu->name,
		    cat->events[i].description, dpmu_perf_advertises(pmu, cat->events[i].code), true);
	/* what the kernel advertises beyond the catalog: counted as raw codes */
	for (size_t i = 0; i < pmu->naliases; i++)
		if (!dpmu_catalog_find_code(cat, pmu->aliases[i].event)) {
			char raw[16];
			snprintf(raw, sizeof raw, "r%x", pmu->aliases[i].event);
			char desc[DPMU_NAME_MAX + 64];
			snprintf(desc, sizeof desc, "the kernel's %s; not in the catalog: -e %s",
				 pmu->aliases[i].name, raw);
			row(arr, pmu->aliases[i].name, pmu->aliases[i].event, pmu->name, desc, true,
			    false);
		}
	return 0;
}

int dpmu_list_perf(bool json)
{
	struct dpmu_perf_system *sys = NULL;
	struct dpmu_profile *p = NULL;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	int rc = dpmu_perf_discover(NULL, &sys, &err);
	if (!rc)
		rc = dpmu_perf_profile(sys, &p, &err);
	if (rc) {
		fprintf(stderr, "dynpmu list: %s\n", dpmu_errmsg(&err));
		dpmu_perf_system_free(sys);
		return DPMU_EXIT_FAIL;
	}
	json_t *arr = json ? json_array() : NULL;
	if (!json)
		printf("PMUs of this machine (%s/bus/event_source/devices)\n", sys->root);
	if (!json && sys->npmus == 0)
		printf("\nno Arm core or DSU PMU (there: %s): only software events can be "
		       "counted (docs/hardware.md)\n",
		       sys->others[0] ? sys->others : "nothing");
	rc = 0;
	for (unsigned i = 0; !rc && i < sys->npmus; i++)
		rc = list_pmu(sys, p, &sys->pmus[i], arr);
	if (!rc && !json)
		printf("\nsoftware (Linux's, per task or cpu):");
	for (unsigned sw = 0; !rc && sw < DPMU_MON_SW_COUNT; sw++) {
		if (json)
			row(arr, dpmu_mon_sw_name(sw), sw, "software", "Linux software event", true,
			    false);
		else
			printf(" %s", dpmu_mon_sw_name(sw));
	}
	if (!rc && json) {
		if (json_dumpf(arr, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER) || putchar('\n') == EOF)
			rc = DPMU_EXIT_FAIL;
	} else if (!rc) {
		printf("\n\nADV: advertised by the running kernel in the PMU's events/ (from PMCEID); "
		       "the AMU is\nnot reachable through Linux, and the DSU PMU does not sample "
		       "(docs/hardware.md).\n");
	}
	json_decref(arr);
	dpmu_profile_free(p);
	dpmu_perf_system_free(sys);
	fflush(stdout);
	if (!rc && ferror(stdout))
		rc = DPMU_EXIT_FAIL;
	return rc;
}
