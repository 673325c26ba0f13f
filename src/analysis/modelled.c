/*
 * What the simulated cluster produces, for `dynpmu list`. The engine's own
 * table (src/uarch) is not a public interface, so this mirrors it, and
 * docs/events.md's "produced" column (exact, approximate or model), by name:
 * the core-PMU events the engine derives from retired instructions, the
 * cluster happenings in both DSU numberings, and what the model counts by
 * itself (the clocks, SW_INCR, CHAIN). An AMU counter counts what its core
 * receives (src/model/amu.c), plus its two clocks.
 */
#include <string.h>
#include <strings.h>

#include "analysis/an_internal.h"

static const char *const core_events[] = {
	/* counted by the model itself */
	"SW_INCR", "CPU_CYCLES", "CHAIN",
	/* derived by the engine */
	"L1I_CACHE_REFILL", "L1I_TLB_REFILL", "L1D_CACHE_REFILL", "L1D_CACHE", "L1D_TLB_REFILL",
	"LD_RETIRED", "ST_RETIRED", "INST_RETIRED", "EXC_TAKEN", "EXC_RETURN", "PC_WRITE_RETIRED",
	"BR_IMMED_RETIRED", "BR_RETURN_RETIRED", "UNALIGNED_LDST_RETIRED", "BR_MIS_PRED", "BR_PRED",
	"MEM_ACCESS", "L1I_CACHE", "L1D_CACHE_WB", "L2D_CACHE", "L2D_CACHE_REFILL", "L2D_CACHE_WB",
	"BUS_ACCESS", "INST_SPEC", "L1D_CACHE_ALLOCATE", "L2D_CACHE_ALLOCATE", "BR_RETIRED",
	"BR_MIS_PRED_RETIRED", "STALL_FRONTEND", "STALL_BACKEND", "L1D_TLB", "L1I_TLB",
	"L3D_CACHE_ALLOCATE", "L3D_CACHE_REFILL", "L3D_CACHE", "L2D_TLB_REFILL", "L2I_TLB_REFILL",
	"L2D_TLB", "L2I_TLB", "DTLB_WALK", "ITLB_WALK", "LL_CACHE_RD", "LL_CACHE_MISS_RD",
	"L1D_CACHE_RD", "L1D_CACHE_WR", "L1D_CACHE_REFILL_RD", "L1D_CACHE_REFILL_WR",
	"L1D_CACHE_REFILL_INNER", "L1D_CACHE_REFILL_OUTER", "L1D_CACHE_WB_VICTIM",
	"L1D_CACHE_WB_CLEAN", "L1D_CACHE_INVAL", "L1D_TLB_REFILL_RD", "L1D_TLB_REFILL_WR",
	"L1D_TLB_RD", "L1D_TLB_WR", "L2D_CACHE_RD", "L2D_CACHE_WR", "L2D_CACHE_REFILL_RD",
	"L2D_CACHE_REFILL_WR", "L2D_CACHE_WB_VICTIM", "L2D_CACHE_WB_CLEAN", "L2D_CACHE_INVAL",
	"L2D_TLB_REFILL_RD", "L2D_TLB_REFILL_WR", "L2D_TLB_RD", "L2D_TLB_WR", "BUS_ACCESS_RD",
	"BUS_ACCESS_WR", "MEM_ACCESS_RD", "MEM_ACCESS_WR", "UNALIGNED_LD_SPEC", "UNALIGNED_ST_SPEC",
	"UNALIGNED_LDST_SPEC", "LDREX_SPEC", "STREX_PASS_SPEC", "STREX_FAIL_SPEC", "STREX_SPEC",
	"LD_SPEC", "ST_SPEC", "LDST_SPEC", "DP_SPEC", "ASE_SPEC", "VFP_SPEC", "PC_WRITE_SPEC",
	"CRYPTO_SPEC", "BR_IMMED_SPEC", "BR_RETURN_SPEC", "BR_INDIRECT_SPEC", "ISB_SPEC", "DSB_SPEC",
	"DMB_SPEC", "EXC_SVC", "L3D_CACHE_RD", "L3D_CACHE_REFILL_RD", "BUS_CYCLES",
	/* implementation defined, found by name in each core type's catalog */
	"BR_COND_PRED", "BR_COND_MIS_PRED", "BR_INDIRECT_MIS_PRED", "BR_INDIRECT_ADDR_PRED",
	"BR_INDIRECT_ADDR_MIS_PRED", "BR_RETURN_ADDR_PRED", "BR_RETURN_ADDR_MIS_PRED",
	"L1D_CACHE_REFILL_PREFETCH", "L2D_CACHE_REFILL_PREFETCH", "L3D_CACHE_REFILL_PREFETCH",
	"STALL_BACKEND_LD", "STALL_BACKEND_LD_CACHE", "STALL_BACKEND_LD_TLB", "STALL_BACKEND_ST",
	"STALL_BACKEND_ST_STB", "STALL_FRONTEND_CACHE", "STALL_FRONTEND_TLB",
};

static const char *const cluster_events[] = {
	/* the DSU clock, counted by the model */
	"CYCLES", "BUS_CYCLES",
	/* classic DSU numbering */
	"L3D_CACHE", "L3D_CACHE_RD", "L3D_CACHE_WR", "L3D_CACHE_REFILL", "L3D_CACHE_REFILL_RD",
	"L3D_CACHE_REFILL_WR", "L3D_CACHE_ALLOCATE", "L3D_CACHE_WB", "BUS_ACCESS", "BUS_ACCESS_RD",
	"BUS_ACCESS_WR", "SCU_SNP_NO_CPU_SNP", "SCU_SNP_ACCESS", "SCU_SNP_EVICT",
	/* DSU-120 numbering (seed 001 section 4.2 and data/events/dsu-120.json) */
	"L3_ACCESS", "L3_ACCESS_RD", "L3_ACCESS_WR", "L3_HIT", "L3_MISS", "L3_MISS_RD", "L3_MISS_WR",
	"L3_REFILL", "L3_ALLOCATE", "L3_WB", "L3_EVICT", "MEM_READ", "MEM_WRITE",
	"SNOOP_FILTER_ACCESS", "SNOOP_FILTER_HIT", "SNOOP_REQ", "DATA_TRANSFER", "SNOOP_INVAL",
	"SNOOP_FILTER_EVICT",
};

static bool in(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(list[i], name) == 0)
			return true;
	return false;
}

#define IN(list, name) in(list, sizeof list / sizeof list[0], name)

bool dpmu_an_sim_produces(enum dpmu_pmu_kind pmu, const char *name)
{
	switch (pmu) {
	case DPMU_PMU_CORE:
		return IN(core_events, name);
	case DPMU_PMU_AMU:
		/* the AMU's two clocks, and what the core PMU receives */
		return strcasecmp(name, "CNT_CYCLES") == 0 || IN(core_events, name);
	case DPMU_PMU_CLUSTER:
		return IN(cluster_events, name);
	}
	return false;
}
