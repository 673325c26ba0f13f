/*
 * What the engine counts, as tables: each core happening and its PMU event
 * number (reference section 5), and each cluster happening with its name and
 * number in both DSU numberings (reference section 3, seed 001 section 4.2).
 * docs/events.md says for every catalog event whether it is produced.
 */
#include <string.h>
#include <strings.h>

#include "uarch/uarch_internal.h"

struct uev_row {
	const char *name;
	uint16_t code;
};

#define DPMU_UEV_ROW(n, c) { #n, c },
static const struct uev_row uev_table[DPMU_UEV_COUNT] = { DPMU_UEV_LIST(DPMU_UEV_ROW) };
#undef DPMU_UEV_ROW

const char *dpmu_uev_name(enum dpmu_uev e)
{
	return (unsigned)e < DPMU_UEV_COUNT ? uev_table[e].name : "?";
}

uint16_t dpmu_uev_code(enum dpmu_uev e)
{
	return (unsigned)e < DPMU_UEV_COUNT ? uev_table[e].code : DPMU_UEV_NONE;
}

static const char *const iev_names[DPMU_IEV_COUNT] = {
#define DPMU_IEV_NAME(n) #n,
	DPMU_IEV_LIST(DPMU_IEV_NAME)
#undef DPMU_IEV_NAME
};

void dpmu_iev_codes(const char *catalog, uint16_t codes[DPMU_IEV_COUNT])
{
	struct dpmu_err err;
	const struct dpmu_event_catalog *cat =
		catalog && catalog[0] ? dpmu_catalog_get(catalog, &err) : NULL;
	for (unsigned e = 0; e < DPMU_IEV_COUNT; e++) {
		const struct dpmu_event_desc *d = cat ? dpmu_catalog_find_name(cat, iev_names[e]) : NULL;
		codes[e] = d ? d->code : DPMU_UEV_NONE;
	}
}

/* Derived events: each is the sum of one or two counted ones (Arm ARM D17
 * definitions: an access is a read or a write, a retired load is a
 * speculated one in an engine without wrong-path execution, ...). */
struct derive_row {
	enum dpmu_uev ev, a, b;
};

#define D1(e, x) { DPMU_UEV_##e, DPMU_UEV_##x, DPMU_UEV_COUNT }
#define D2(e, x, y) { DPMU_UEV_##e, DPMU_UEV_##x, DPMU_UEV_##y }
static const struct derive_row derive_table[] = {
	D1(INST_SPEC, INST_RETIRED),
	D1(LD_RETIRED, LD_SPEC),
	D1(MEM_ACCESS_RD, LD_SPEC),
	D1(ST_RETIRED, ST_SPEC),
	D1(MEM_ACCESS_WR, ST_SPEC),
	D2(LDST_SPEC, LD_SPEC, ST_SPEC),
	D2(MEM_ACCESS, LD_SPEC, ST_SPEC),
	D2(L1D_TLB, L1D_TLB_RD, L1D_TLB_WR),
	D2(L1D_TLB_REFILL, L1D_TLB_REFILL_RD, L1D_TLB_REFILL_WR),
	D2(L2D_TLB, L2D_TLB_RD, L2D_TLB_WR),
	D2(L2D_TLB_REFILL, L2D_TLB_REFILL_RD, L2D_TLB_REFILL_WR),
	D2(L1D_CACHE, L1D_CACHE_RD, L1D_CACHE_WR),
	D2(L1D_CACHE_REFILL, L1D_CACHE_REFILL_RD, L1D_CACHE_REFILL_WR),
	D2(L2D_CACHE, L2D_CACHE_RD, L2D_CACHE_WR),
	D2(L2D_CACHE_REFILL, L2D_CACHE_REFILL_RD, L2D_CACHE_REFILL_WR),
	D2(BUS_ACCESS, BUS_ACCESS_RD, BUS_ACCESS_WR),
	D1(BR_PRED, BR_RETIRED),
	D1(BR_MIS_PRED_RETIRED, BR_MIS_PRED),
	D1(PC_WRITE_SPEC, PC_WRITE_RETIRED),
	D1(BR_IMMED_SPEC, BR_IMMED_RETIRED),
	D1(BR_RETURN_SPEC, BR_RETURN_RETIRED),
	D2(UNALIGNED_LDST_SPEC, UNALIGNED_LD_SPEC, UNALIGNED_ST_SPEC),
	D2(UNALIGNED_LDST_RETIRED, UNALIGNED_LD_SPEC, UNALIGNED_ST_SPEC),
	D2(STREX_SPEC, STREX_PASS_SPEC, STREX_FAIL_SPEC),
	D1(LL_CACHE_RD, L3D_CACHE_RD),
	D1(LL_CACHE_MISS_RD, L3D_CACHE_REFILL_RD),
};
#undef D1
#undef D2

unsigned dpmu_uev_sources(enum dpmu_uev e, enum dpmu_uev src[2])
{
	for (size_t i = 0; i < sizeof derive_table / sizeof derive_table[0]; i++) {
		const struct derive_row *r = &derive_table[i];
		if (r->ev != e)
			continue;
		src[0] = r->a;
		src[1] = r->b;
		return r->b < DPMU_UEV_COUNT ? 2 : 1;
	}
	return 0;
}

/*
 * Cluster happenings. Each numbering gives the event name its catalog uses
 * and the number to use when no catalog is at hand: the DSU numbers from
 * reference section 3 (Linux arm_dsu_pmu and the DSU TRM), the DSU-120
 * numbers the seed gives (L3_ACCESS, L3_MISS, SNOOP_REQ, DATA_TRANSFER);
 * the other DSU-120 events are the catalog's (data/events/dsu-120.json).
 */
struct cev_row {
	const char *name[2];      /* [DPMU_DSU_CLASSIC], [DPMU_DSU_120]; NULL: none */
	uint16_t fallback[2];
};

#define NONE DPMU_UEV_NONE
static const struct cev_row cev_table[DPMU_CEV_COUNT] = {
	[DPMU_CEV_L3_ACCESS] = { { "L3D_CACHE", "L3_ACCESS" }, { 0x2B, 0x4000 } },
	[DPMU_CEV_L3_ACCESS_RD] = { { "L3D_CACHE_RD", "L3_ACCESS_RD" }, { 0xA0, NONE } },
	[DPMU_CEV_L3_ACCESS_WR] = { { "L3D_CACHE_WR", "L3_ACCESS_WR" }, { NONE, NONE } },
	[DPMU_CEV_L3_HIT] = { { NULL, "L3_HIT" }, { NONE, NONE } },
	[DPMU_CEV_L3_MISS] = { { NULL, "L3_MISS" }, { NONE, 0x4001 } },
	[DPMU_CEV_L3_MISS_RD] = { { NULL, "L3_MISS_RD" }, { NONE, NONE } },
	[DPMU_CEV_L3_MISS_WR] = { { NULL, "L3_MISS_WR" }, { NONE, NONE } },
	[DPMU_CEV_L3_REFILL] = { { "L3D_CACHE_REFILL", "L3_REFILL" }, { 0x2A, NONE } },
	[DPMU_CEV_L3_REFILL_RD] = { { "L3D_CACHE_REFILL_RD", NULL }, { 0xA2, NONE } },
	[DPMU_CEV_L3_REFILL_WR] = { { "L3D_CACHE_REFILL_WR", NULL }, { NONE, NONE } },
	[DPMU_CEV_L3_ALLOCATE] = { { "L3D_CACHE_ALLOCATE", "L3_ALLOCATE" }, { 0x29, NONE } },
	[DPMU_CEV_L3_WB] = { { "L3D_CACHE_WB", "L3_WB" }, { 0x2C, NONE } },
	[DPMU_CEV_L3_EVICT] = { { NULL, "L3_EVICT" }, { NONE, NONE } },
	[DPMU_CEV_BUS_ACCESS] = { { "BUS_ACCESS", "BUS_ACCESS" }, { 0x19, NONE } },
	[DPMU_CEV_BUS_ACCESS_RD] = { { "BUS_ACCESS_RD", "BUS_ACCESS_RD" }, { 0x60, NONE } },
	[DPMU_CEV_BUS_ACCESS_WR] = { { "BUS_ACCESS_WR", "BUS_ACCESS_WR" }, { 0x61, NONE } },
	[DPMU_CEV_MEM_READ] = { { NULL, "MEM_READ" }, { NONE, NONE } },
	[DPMU_CEV_MEM_WRITE] = { { NULL, "MEM_WRITE" }, { NONE, NONE } },
	[DPMU_CEV_SF_ACCESS] = { { NULL, "SNOOP_FILTER_ACCESS" }, { NONE, NONE } },
	[DPMU_CEV_SF_HIT] = { { NULL, "SNOOP_FILTER_HIT" }, { NONE, NONE } },
	[DPMU_CEV_SF_NO_SNOOP] = { { "SCU_SNP_NO_CPU_SNP", NULL }, { NONE, NONE } },
	[DPMU_CEV_SNOOP_REQ] = { { "SCU_SNP_ACCESS", "SNOOP_REQ" }, { NONE, 0x4022 } },
	[DPMU_CEV_SNOOP_DATA] = { { NULL, "DATA_TRANSFER" }, { NONE, 0x4023 } },
	[DPMU_CEV_SNOOP_INVAL] = { { NULL, "SNOOP_INVAL" }, { NONE, NONE } },
	[DPMU_CEV_SF_EVICT] = { { "SCU_SNP_EVICT", "SNOOP_FILTER_EVICT" }, { NONE, NONE } },
	[DPMU_CEV_BUS_CYCLES] = { { "BUS_CYCLES", "BUS_CYCLES" }, { 0x1D, NONE } },
};
#undef NONE

const char *dpmu_cev_name(enum dpmu_cev e, enum dpmu_dsu_numbering num)
{
	if ((unsigned)e >= DPMU_CEV_COUNT || (num != DPMU_DSU_CLASSIC && num != DPMU_DSU_120))
		return "?";
	return cev_table[e].name[num] ? cev_table[e].name[num] : "-";
}

void dpmu_cev_codes(const struct dpmu_cluster_params *cp, uint16_t codes[DPMU_CEV_COUNT])
{
	unsigned num = cp->numbering == DPMU_DSU_120 ? 1 : 0;
	struct dpmu_err err;
	const struct dpmu_event_catalog *cat =
		cp->catalog[0] ? dpmu_catalog_get(cp->catalog, &err) : NULL;
	for (unsigned e = 0; e < DPMU_CEV_COUNT; e++) {
		codes[e] = cev_table[e].fallback[num];
		const char *name = cev_table[e].name[num];
		const struct dpmu_event_desc *d =
			cat && name ? dpmu_catalog_find_name(cat, name) : NULL;
		if (d)
			codes[e] = d->code;
	}
}

/* Does the simulated cluster produce the event called `name` on this kind
 * of PMU? Read from the tables above, so `dynpmu list` cannot drift from
 * what the engine delivers. Besides the engine's happenings, the model
 * counts some events by itself: the clocks (CPU_CYCLES, the DSU's CYCLES,
 * the AMU's CNT_CYCLES), SW_INCR (PMSWINC) and CHAIN (overflows). An AMU
 * counter counts whatever its core receives. */
static bool core_produces(const char *name)
{
	static const char *const by_model[] = { "SW_INCR", "CPU_CYCLES", "CHAIN", "BUS_CYCLES" };
	for (size_t i = 0; i < sizeof by_model / sizeof by_model[0]; i++)
		if (strcasecmp(name, by_model[i]) == 0)
			return true;
	for (unsigned e = 0; e < DPMU_UEV_COUNT; e++)
		if (strcasecmp(name, uev_table[e].name) == 0)
			return true;
	for (unsigned e = 0; e < DPMU_IEV_COUNT; e++)
		if (strcasecmp(name, iev_names[e]) == 0)
			return true;
	return false;
}

bool dpmu_uarch_produces(enum dpmu_pmu_kind pmu, const char *name)
{
	switch (pmu) {
	case DPMU_PMU_CORE:
		return core_produces(name);
	case DPMU_PMU_AMU:
		return strcasecmp(name, "CNT_CYCLES") == 0 || core_produces(name);
	case DPMU_PMU_CLUSTER:
		if (strcasecmp(name, "CYCLES") == 0)
			return true;
		for (unsigned e = 0; e < DPMU_CEV_COUNT; e++)
			for (unsigned num = 0; num < 2; num++)
				if (cev_table[e].name[num] && strcasecmp(name, cev_table[e].name[num]) == 0)
					return true;
		return false;
	}
	return false;
}
