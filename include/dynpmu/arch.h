/*
 * Architectural facts as data: system-register encodings, event catalogs and
 * cluster profiles (src/arch). Everything above this layer asks these tables
 * instead of hard-coding codes, offsets or counts.
 */
#ifndef DYNPMU_ARCH_H
#define DYNPMU_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dynpmu/error.h"

/* ---- system-register encodings ---------------------------------------- */

/* (op0, op1, CRn, CRm, op2) packed as the MRS/MSR instruction's bits [20:5]. */
#define DPMU_SYSREG(op0, op1, crn, crm, op2)                                   \
	((uint32_t)(((op0) << 14) | ((op1) << 11) | ((crn) << 7) | ((crm) << 3) | (op2)))
#define DPMU_SYSREG_OP0(e) (((e) >> 14) & 0x3)
#define DPMU_SYSREG_OP1(e) (((e) >> 11) & 0x7)
#define DPMU_SYSREG_CRN(e) (((e) >> 7) & 0xf)
#define DPMU_SYSREG_CRM(e) (((e) >> 3) & 0xf)
#define DPMU_SYSREG_OP2(e) ((e) & 0x7)

/* Look up an architectural register name (case-insensitive, e.g.
 * "PMEVCNTR3_EL0") or an "op0:op1:CRn:CRm:op2" string. Returns 0 and sets
 * *enc, or DPMU_ENOENT / DPMU_EINVAL with a message. */
int dpmu_sysreg_parse(const char *text, uint32_t *enc, struct dpmu_err *err);
/* Name of a modelled register, or NULL. */
const char *dpmu_sysreg_name(uint32_t enc);

/* The table behind both: every register the model implements. */
struct dpmu_sysreg_desc {
	const char *name;  /* "PMEVCNTR3_EL0", "AMEVTYPER12_EL0" */
	uint32_t enc;      /* DPMU_SYSREG(...) */
};
const struct dpmu_sysreg_desc *dpmu_sysreg_table(size_t *n);

/* ---- events -------------------------------------------------------------- */

enum dpmu_pmu_kind {
	DPMU_PMU_CORE = 0,    /* PMUv3 core PMU */
	DPMU_PMU_AMU = 1,     /* Activity Monitors */
	DPMU_PMU_CLUSTER = 2, /* DSU cluster PMU */
};

struct dpmu_event_desc {
	const char *name;        /* as Arm writes it: "L1D_CACHE_REFILL" */
	uint16_t code;
	enum dpmu_pmu_kind pmu;
	const char *description;
};

/* A catalog is an immutable table loaded from data/events/<name>.json. */
struct dpmu_event_catalog {
	const char *name;        /* "cortex-a75", "dsu", "dsu-120", "amu" */
	size_t count;
	const struct dpmu_event_desc *events;
};

/* Built-in catalog by name, or NULL (the tables live for the whole process). */
const struct dpmu_event_catalog *dpmu_catalog_get(const char *name, struct dpmu_err *err);
const struct dpmu_event_desc *dpmu_catalog_find_name(const struct dpmu_event_catalog *c,
						      const char *name);
const struct dpmu_event_desc *dpmu_catalog_find_code(const struct dpmu_event_catalog *c,
						      uint16_t code);

/* Architected event numbers the model itself must know (Arm ARM D17.x). */
enum {
	DPMU_EV_SW_INCR = 0x00,
	DPMU_EV_INST_RETIRED = 0x08,
	DPMU_EV_CPU_CYCLES = 0x11,
	DPMU_EV_CHAIN = 0x1e,
	DPMU_EV_CNT_CYCLES = 0x4004, /* AMU constant-frequency cycles */
};

/* ---- profiles ------------------------------------------------------------ */

#define DPMU_MAX_CLUSTERS 4
#define DPMU_MAX_CORES_PER_CLUSTER 8
#define DPMU_MAX_CORES (DPMU_MAX_CLUSTERS * DPMU_MAX_CORES_PER_CLUSTER)
#define DPMU_MAX_CORE_TYPES 4
#define DPMU_MAX_EVENTS 256          /* implemented events per PMU */
#define DPMU_AMU_GROUP0_MAX 4
#define DPMU_AMU_GROUP1_MAX 16
#define DPMU_AMU_SELECTABLE_MAX 16
#define DPMU_NAME_MAX 64

enum dpmu_replacement { DPMU_REPL_LRU, DPMU_REPL_PLRU, DPMU_REPL_RANDOM };
enum dpmu_prefetch { DPMU_PREFETCH_NONE, DPMU_PREFETCH_NEXT_LINE, DPMU_PREFETCH_STRIDE };
enum dpmu_bp_kind { DPMU_BP_BIMODAL, DPMU_BP_GSHARE };
enum dpmu_dsu_numbering { DPMU_DSU_CLASSIC, DPMU_DSU_120 };

struct dpmu_cache_params {
	uint32_t size;        /* bytes */
	uint32_t ways;
	uint32_t line;        /* bytes */
	uint32_t latency;     /* load-to-use, core cycles */
	enum dpmu_replacement replacement;
	enum dpmu_prefetch prefetch;
};

struct dpmu_tlb_params {
	uint32_t entries;
	uint32_t ways;        /* entries == ways: fully associative */
	uint32_t latency;     /* extra cycles on a hit at this level (L2 TLB) */
};

struct dpmu_bp_params {
	enum dpmu_bp_kind kind;
	uint32_t entries;     /* 2-bit counters in the direction predictor */
	uint32_t history_bits;/* global history length (gshare) */
	uint32_t btb_entries;
	uint32_t ras_entries; /* return stack */
};

/* Execution latency classes: which instructions' results take more than
 * their dispatch slot (profile "exec_latency" keys, docs/profiles.md). */
enum dpmu_exec_class {
	DPMU_EX_SIMPLE = 0, /* everything else: the result is ready at issue */
	DPMU_EX_INT_MUL,    /* MADD, MSUB, SMADDL, UMADDL, SMULH, UMULH (MUL, MNEG) */
	DPMU_EX_INT_DIV,    /* SDIV, UDIV */
	DPMU_EX_FP,         /* FADD, FSUB, FMUL, FNMUL, FMAX/FMIN, FMADD family; vector FMLA... */
	DPMU_EX_FP_DIV,     /* FDIV, FSQRT */
	DPMU_EX_COUNT
};

struct dpmu_pipeline_params {
	uint32_t issue_width;
	uint32_t base_cpi_milli;      /* cycles per instruction x 1000 with no stalls */
	uint32_t mispredict_penalty;  /* cycles */
	/* Instructions in flight past an incomplete one (an out-of-order
	 * core's reorder buffer); 0: in order, the first use of a pending
	 * load stalls. */
	uint32_t reorder_window;
	uint32_t miss_buffers;        /* L1D misses outstanding at once */
	/* Cycles from an instruction's issue to its result, by class (the
	 * profile's "exec_latency"; [DPMU_EX_SIMPLE] is 0: ready at issue). */
	uint32_t exec_latency[DPMU_EX_COUNT];
};

#define DPMU_REORDER_MAX 1024u
#define DPMU_MISS_BUFFERS_MAX 64u

/* One core type (Cortex-A75, Cortex-A55). Facts about its monitors and its
 * microarchitecture; every core of this type shares them. */
struct dpmu_core_type {
	char name[DPMU_NAME_MAX];        /* "Cortex-A75" */
	char catalog[DPMU_NAME_MAX];     /* event catalog name, "cortex-a75" */
	uint32_t midr;
	uint64_t freq_hz;

	/* core PMU */
	unsigned pmu_counters;           /* PMCR.N */
	bool pmuv3p5;                    /* 64-bit event counters and PMCR.LP */
	uint8_t pmcr_idcode;             /* PMCR.IDCODE */
	size_t n_events;                 /* implemented events (count when programmed) */
	uint16_t events[DPMU_MAX_EVENTS];

	/* AMU (FEAT_AMUv1) */
	unsigned amu_group0;             /* fixed counters */
	uint16_t amu_group0_events[DPMU_AMU_GROUP0_MAX];
	unsigned amu_group1;             /* programmable counters */
	size_t amu_n_selectable;         /* events a group-1 counter may select */
	uint16_t amu_selectable[DPMU_AMU_SELECTABLE_MAX];

	/* microarchitecture (src/uarch) */
	struct dpmu_cache_params l1i, l1d, l2;
	struct dpmu_tlb_params l1itlb, l1dtlb, l2tlb;
	uint32_t page_size;
	uint32_t walk_latency;           /* page-table walk, cycles, before cache effects */
	struct dpmu_bp_params bp;
	struct dpmu_pipeline_params pipeline;
};

struct dpmu_cluster_params {
	unsigned ncores;
	unsigned core_type[DPMU_MAX_CORES_PER_CLUSTER]; /* index into profile core_types */
	uint64_t freq_hz;                /* DSU clock: cluster PMU cycle counter */

	/* cluster PMU (DSU) */
	enum dpmu_dsu_numbering numbering;
	char catalog[DPMU_NAME_MAX];     /* "dsu" or "dsu-120" */
	unsigned pmu_counters;           /* CLUSTERPMCR.N */
	bool counters64;                 /* newer DSUs: 64-bit event counters */
	size_t n_events;
	uint16_t events[DPMU_MAX_EVENTS];

	/* shared L3 and snoop filter in the DSU */
	struct dpmu_cache_params l3;
	uint32_t snoop_filter_entries;
	uint32_t snoop_latency;          /* cycles for a snoop hit served by a peer core */
};

struct dpmu_profile {
	char name[DPMU_NAME_MAX];
	char description[256];
	unsigned n_core_types;
	struct dpmu_core_type core_types[DPMU_MAX_CORE_TYPES];
	unsigned nclusters;
	struct dpmu_cluster_params clusters[DPMU_MAX_CLUSTERS];

	uint64_t const_freq_hz;          /* AMU constant-frequency clock */
	uint64_t timer_freq_hz;          /* generic timer, CNTFRQ_EL0 */
	uint32_t snapshot_latency;       /* cycles before PMSSCR.SS reads 0 again */
	uint32_t bus_latency;            /* cycles, DSU to memory and back, beyond L3 */
	uint32_t dram_latency;           /* ns */
	uint64_t dram_bandwidth;         /* bytes per second */
	uint32_t bus_width;              /* bytes per bus beat (BUS_ACCESS granule) */
};

/* Built-in profile names, NULL-terminated; the first is the default. */
extern const char *const dpmu_profile_builtin_names[];
#define DPMU_PROFILE_DEFAULT "a75x4-a55x4"

/* Load a built-in profile by name, or a JSON file when name_or_path names
 * one (contains '/' or ends in ".json"). On a bad file the message names the
 * file, the key and the problem. A profile with a "base" is read as its base
 * with its own keys laid over (docs/profiles.md "Deriving a profile"); a
 * relative base path is taken from the directory of source_name for
 * dpmu_profile_parse. The caller owns *out (dpmu_profile_free). */
int dpmu_profile_load(const char *name_or_path, struct dpmu_profile **out, struct dpmu_err *err);
int dpmu_profile_parse(const char *json_text, const char *source_name,
		       struct dpmu_profile **out, struct dpmu_err *err);
void dpmu_profile_free(struct dpmu_profile *p);

/* Global core numbering: cluster by cluster, cores in order. */
unsigned dpmu_profile_ncores(const struct dpmu_profile *p);
/* Cluster and core-in-cluster of global core `core`; returns its type. */
const struct dpmu_core_type *dpmu_profile_core(const struct dpmu_profile *p, unsigned core,
					       unsigned *cluster, unsigned *index);
/* MPIDR_EL1 of a core: DynamIQ reports MT = 1, Aff0 = 0 (one thread), Aff1 =
 * core number in the cluster, Aff2 = cluster, bit 31 RES1. */
uint64_t dpmu_profile_mpidr(const struct dpmu_profile *p, unsigned core);
bool dpmu_core_type_implements(const struct dpmu_core_type *t, uint16_t event);
bool dpmu_cluster_implements(const struct dpmu_cluster_params *c, uint16_t event);

/* ---- names --------------------------------------------------------------- */

/* Case-insensitive edit distance between two names (events, registers,
 * metrics, commands), for "did you mean" suggestions. Names longer than
 * DPMU_NAME_MAX are DPMU_NAME_DISTANCE_FAR from everything. */
#define DPMU_NAME_DISTANCE_FAR 1000u
unsigned dpmu_name_distance(const char *a, const char *b);

#endif
