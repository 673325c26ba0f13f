/*
 * The perf backend (src/backend/perf*.c): real hardware through Linux
 * perf_event. Discovery reads sysfs (perf_sysfs.c; testable against a fake
 * tree), the backend opens and reads events through perf_event_open(2)
 * (perf.c) behind the monitor's counting interface (dynpmu/monitor.h).
 * docs/hardware.md describes what it shows and how it differs from the
 * simulation.
 */
#ifndef DYNPMU_PERF_H
#define DYNPMU_PERF_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "dynpmu/arch.h"
#include "dynpmu/backend.h"
#include "dynpmu/error.h"

/* ---- discovery (perf_sysfs.c) ------------------------------------------------ */

/* Where sysfs is: DPMU_SYSFS_ROOT in the environment (the tests' fake
 * trees), else "/sys". PMUs are under ROOT/bus/event_source/devices, cpus
 * under ROOT/devices/system/cpu. */
#define DPMU_PERF_SYSFS_ENV "DPMU_SYSFS_ROOT"
const char *dpmu_perf_sysfs_root(void);

#define DPMU_PERF_MAX_PMUS 16

enum dpmu_perf_pmu_kind {
	DPMU_PERF_PMU_CORE = 0,  /* an arm_pmu core PMU: armv8_pmuv3_0, armv8_cortex_a75 */
	DPMU_PERF_PMU_DSU = 1,   /* arm_dsu_N: one DSU cluster PMU */
};

/* A format/ field: where a value goes in perf_event_attr (config,
 * config1 or config2, bits lo..hi), as "config1:0" or "config:0-15". */
struct dpmu_perf_field {
	bool present;
	unsigned word;           /* 0 config, 1 config1, 2 config2 */
	unsigned lo, hi;
};

/* An events/ alias: "inst_retired" -> event=0x08. */
struct dpmu_perf_alias {
	char name[DPMU_NAME_MAX];
	uint16_t event;
};

struct dpmu_perf_pmu {
	char name[DPMU_NAME_MAX];
	enum dpmu_perf_pmu_kind kind;
	uint32_t type;           /* the `type` file: perf_event_attr.type */
	uint64_t cpus;           /* core: `cpus`; DSU: `associated_cpus` (bit n = cpu n) */
	int open_cpu;            /* DSU: `cpumask`, the one cpu its events open on */
	struct dpmu_perf_field event, long_bit;
	size_t naliases;
	struct dpmu_perf_alias *aliases;
};

struct dpmu_perf_system {
	char root[512];
	uint64_t online;                   /* ROOT/devices/system/cpu/online */
	uint32_t midr[DPMU_MAX_CORES];     /* cpuN/regs/identification/midr_el1; 0 unknown */
	unsigned npmus;
	struct dpmu_perf_pmu pmus[DPMU_PERF_MAX_PMUS];
	int core_pmu[DPMU_MAX_CORES];      /* index in pmus of cpu n's core PMU, -1 none */
	char others[256];                  /* the other PMUs' names, for messages */
};

/* Read the PMUs and cpus under `root` (NULL: dpmu_perf_sysfs_root()). A
 * tree without event_source devices or cpus is DPMU_ENOENT naming the path.
 * The caller owns *out (dpmu_perf_system_free). */
int dpmu_perf_discover(const char *root, struct dpmu_perf_system **out, struct dpmu_err *err);
void dpmu_perf_system_free(struct dpmu_perf_system *sys);
/* The DSU PMU of the cluster holding cpu n, or NULL. */
const struct dpmu_perf_pmu *dpmu_perf_dsu_of(const struct dpmu_perf_system *sys, unsigned cpu);
/* Whether the PMU's events/ advertises event number `code`. */
bool dpmu_perf_advertises(const struct dpmu_perf_pmu *pmu, uint16_t code);
/* Whether this machine has an Arm core PMU perf can count with (dynpmu
 * says so on an aarch64 host running the simulation). */
bool dpmu_perf_available(void);

/* A profile of the machine: core types from the cores' MIDR_EL1 matched
 * (implementer and part number) against the built-in profiles' core types
 * (their catalogs and names); a core PMU whose MIDR no profile has is a
 * core type named after the PMU with the architectural catalog
 * (armv8-pmuv3). Clusters are the DSU PMUs' associated_cpus, each
 * numbered in cpu order; cpus outside any DSU are grouped by eight with no
 * cluster PMU. The caller owns *out (dpmu_profile_free). */
int dpmu_perf_profile(const struct dpmu_perf_system *sys, struct dpmu_profile **out,
		      struct dpmu_err *err);

/* ---- the backend (perf.c) ---------------------------------------------------- */

struct dpmu_perf_options {
	const char *sysfs_root;  /* NULL: dpmu_perf_sysfs_root() */
	char **argv;             /* a program to run and count (with inherit), or NULL */
	pid_t pid;               /* -p: count this running process's threads; 0 none */
	bool system_wide;        /* -a: every cpu, every task (per-cpu events) */
};

/* Discover, build the profile, and start the program (held before its
 * exec until the run, so its events are in place when it starts). With
 * neither argv nor pid, system_wide must be set; the run then lasts until
 * SIGINT or SIGTERM. */
int dpmu_perf_backend_create(const struct dpmu_perf_options *o, struct dpmu_backend **out,
		     struct dpmu_err *err);
/* The program's exit status after the run (128 + signal when a signal
 * ended it); 0 without a program. */
int dpmu_perf_exit_code(const struct dpmu_backend *b);
/* Whether the machine has an Arm core PMU (else only software events). */
bool dpmu_perf_has_core_pmu(const struct dpmu_backend *b);
/* Whether the backend counts one task (a program or -p): its counts are
 * per core type, not per cpu (the kernel counts a task wherever it runs). */
bool dpmu_perf_per_task(const struct dpmu_backend *b);
/* What the kernel refused and the run went on without (an event a PMU does
 * not count: <not supported>), one line each; "" when nothing. */
const char *dpmu_perf_notes(const struct dpmu_backend *b);
/* perf's default list for this machine: its software events, then the
 * core and DSU events of dpmu_mon_events_default that it has PMUs for. */
void dpmu_perf_default_events(const struct dpmu_backend *b, char *list, size_t cap);

#endif
