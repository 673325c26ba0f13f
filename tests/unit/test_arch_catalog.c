/* Event catalogs: the built-in catalogs hold the events the reference, the
 * TRMs and the seeds name, with the codes they give; lookups by name are
 * case-insensitive, lookups by code exact; catalogs are loaded once and the
 * same immutable table is returned every time. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dynpmu/arch.h"

static const struct dpmu_event_catalog *get(const char *name)
{
	struct dpmu_err err;
	dpmu_err_clear(&err);
	const struct dpmu_event_catalog *c = dpmu_catalog_get(name, &err);
	if (!c)
		fail_msg("catalog %s: %s", name, dpmu_errmsg(&err));
	return c;
}

struct ev {
	const char *name;
	uint16_t code;
};

static void expect(const struct dpmu_event_catalog *c, const struct ev *list, size_t n,
		   enum dpmu_pmu_kind kind)
{
	for (size_t i = 0; i < n; i++) {
		const struct dpmu_event_desc *d = dpmu_catalog_find_name(c, list[i].name);
		if (!d)
			fail_msg("%s: no event %s", c->name, list[i].name);
		if (d->code != list[i].code)
			fail_msg("%s: %s is 0x%x, want 0x%x", c->name, list[i].name, d->code,
				 list[i].code);
		assert_int_equal(d->pmu, kind);
		assert_ptr_equal(dpmu_catalog_find_code(c, list[i].code), d);
		assert_non_null(d->description);
		assert_true(strlen(d->description) > 10);
	}
}

/* Reference section 5: every Cortex-A75 event, by name and code. */
static void test_cortex_a75_has_every_reference_event(void **state)
{
	(void)state;
	static const struct ev a75[] = {
		{"SW_INCR", 0x00}, {"L1I_CACHE_REFILL", 0x01}, {"L1I_TLB_REFILL", 0x02},
		{"L1D_CACHE_REFILL", 0x03}, {"L1D_CACHE", 0x04}, {"L1D_TLB_REFILL", 0x05},
		{"INST_RETIRED", 0x08}, {"EXC_TAKEN", 0x09}, {"EXC_RETURN", 0x0A},
		{"CID_WRITE_RETIRED", 0x0B}, {"PC_WRITE_RETIRED", 0x0C}, {"BR_IMMED_RETIRED", 0x0D},
		{"BR_RETURN_RETIRED", 0x0E}, {"BR_MIS_PRED", 0x10}, {"CPU_CYCLES", 0x11},
		{"BR_PRED", 0x12}, {"MEM_ACCESS", 0x13}, {"L1I_CACHE", 0x14}, {"L1D_CACHE_WB", 0x15},
		{"L2D_CACHE", 0x16}, {"L2D_CACHE_REFILL", 0x17}, {"L2D_CACHE_WB", 0x18},
		{"BUS_ACCESS", 0x19}, {"MEMORY_ERROR", 0x1A}, {"INST_SPEC", 0x1B},
		{"TTBR_WRITE_RETIRED", 0x1C}, {"BUS_CYCLES", 0x1D}, {"CHAIN", 0x1E},
		{"L1D_CACHE_ALLOCATE", 0x1F}, {"L2D_CACHE_ALLOCATE", 0x20}, {"BR_RETIRED", 0x21},
		{"BR_MIS_PRED_RETIRED", 0x22}, {"STALL_FRONTEND", 0x23}, {"STALL_BACKEND", 0x24},
		{"L1D_TLB", 0x25}, {"L1I_TLB", 0x26}, {"L3D_CACHE_ALLOCATE", 0x29},
		{"L3D_CACHE_REFILL", 0x2A}, {"L3D_CACHE", 0x2B}, {"L2D_TLB_REFILL", 0x2D},
		{"L2D_TLB", 0x2F}, {"L2I_TLB", 0x30}, {"DTLB_WALK", 0x34}, {"ITLB_WALK", 0x35},
		{"LL_CACHE_RD", 0x36}, {"LL_CACHE_MISS_RD", 0x37}, {"REMOTE_ACCESS_RD", 0x38},
		{"L1D_CACHE_RD", 0x40}, {"L1D_CACHE_WR", 0x41}, {"L1D_CACHE_WB_VICTIM", 0x46},
		{"L1D_CACHE_WB_CLEAN", 0x47}, {"L1D_CACHE_INVAL", 0x48}, {"L2D_CACHE_RD", 0x50},
		{"L2D_CACHE_WR", 0x51}, {"L2D_CACHE_WB_VICTIM", 0x56}, {"L2D_CACHE_WB_CLEAN", 0x57},
		{"L2D_CACHE_INVAL", 0x58}, {"MEM_ACCESS_RD", 0x66}, {"MEM_ACCESS_WR", 0x67},
		{"UNALIGNED_LDST_SPEC", 0x6A}, {"LDREX_SPEC", 0x6C}, {"STREX_PASS_SPEC", 0x6D},
		{"STREX_FAIL_SPEC", 0x6E}, {"STREX_SPEC", 0x6F}, {"LD_SPEC", 0x70}, {"ST_SPEC", 0x71},
		{"LDST_SPEC", 0x72}, {"DP_SPEC", 0x73}, {"ASE_SPEC", 0x74}, {"VFP_SPEC", 0x75},
		{"CRYPTO_SPEC", 0x77}, {"ISB_SPEC", 0x7C}, {"DSB_SPEC", 0x7D}, {"DMB_SPEC", 0x7E},
		{"EXC_UNDEF", 0x81}, {"EXC_HVC", 0x8A}, {"L3D_CACHE_RD", 0xA0},
		{"L3D_CACHE_REFILL_RD", 0xA2}, {"LF_STALL", 0xC0}, {"PTW_STALL", 0xC1},
		{"I_TAG_RAM_RD", 0xC2}, {"I_DATA_RAM_RD", 0xC3}, {"I_BTAC_RAM_RD", 0xC4},
		{"D_LSU_SLOT_FULL", 0xD3}, {"LS_IQ_FULL", 0xD8}, {"DP_IQ_FULL", 0xD9},
		{"DE_IQ_FULL", 0xDA}, {"EXC_TRAP_HYP", 0xDC}, {"MMU_PTW", 0xE0},
		{"MMU_PTW_ST1", 0xE1}, {"MMU_PTW_ST2", 0xE2}, {"MMU_PTW_LSU", 0xE3},
		{"MMU_PTW_ISIDE", 0xE4}, {"MMU_PTW_PLD", 0xE5}, {"MMU_PTW_CP15", 0xE6},
		{"L1PLD_TLB_REFILL", 0xE7}, {"L2PLD_TLB", 0xE8}, {"UTLB_FLUSH", 0xE9},
		{"TLB_ACCESS", 0xEA}, {"L1PLD_TLB", 0xEB}, {"PLDTLB_WALK", 0xEC},
	};
	const struct dpmu_event_catalog *c = get("cortex-a75");
	assert_string_equal(c->name, "cortex-a75");
	expect(c, a75, sizeof a75 / sizeof a75[0], DPMU_PMU_CORE);
	/* Exactly the reference list: nothing the A75 does not implement. */
	assert_int_equal(c->count, sizeof a75 / sizeof a75[0]);
	/* The seed's LSU_SLOT_FULL is perf's D_LSU_SLOT_FULL (reference section 5). */
	assert_null(dpmu_catalog_find_name(c, "LSU_SLOT_FULL"));
}

/* Cortex-A55 TRM: a sample of common and IMPLEMENTATION DEFINED events. */
static void test_cortex_a55_events(void **state)
{
	(void)state;
	static const struct ev a55[] = {
		{"LD_RETIRED", 0x06}, {"ST_RETIRED", 0x07}, {"INST_RETIRED", 0x08},
		{"UNALIGNED_LDST_RETIRED", 0x0F}, {"CPU_CYCLES", 0x11}, {"CHAIN", 0x1E},
		{"STALL_FRONTEND", 0x23}, {"STALL_BACKEND", 0x24}, {"L3D_CACHE", 0x2B},
		{"L1D_CACHE_REFILL_INNER", 0x44}, {"L1D_CACHE_REFILL_OUTER", 0x45},
		{"BUS_ACCESS_RD", 0x60}, {"BR_INDIRECT_SPEC", 0x7A}, {"EXC_IRQ", 0x86},
		{"L3D_CACHE_REFILL_PREFETCH", 0xC0}, {"L2D_CACHE_REFILL_PREFETCH", 0xC1},
		{"L1D_CACHE_REFILL_PREFETCH", 0xC2}, {"PREDECODE_ERROR", 0xC6},
		{"BR_COND_MIS_PRED", 0xCC}, {"L2D_CACHE_STASH_DROPPED", 0xD6},
		{"STALL_FRONTEND_CACHE", 0xE1}, {"STALL_BACKEND_LD_CACHE", 0xE9},
		{"STALL_BACKEND_ST_TLB", 0xEC},
	};
	const struct dpmu_event_catalog *c = get("cortex-a55");
	expect(c, a55, sizeof a55 / sizeof a55[0], DPMU_PMU_CORE);
	/* The A55 has no L1D_CACHE_ALLOCATE (0x1F) and no A75 MMU_PTW (0xE0). */
	assert_null(dpmu_catalog_find_code(c, 0x1F));
	assert_null(dpmu_catalog_find_code(c, 0xE0));
	assert_null(dpmu_catalog_find_name(c, "LF_STALL"));
}

/* Reference section 3 and the DSU TRM. */
static void test_dsu_classic_events(void **state)
{
	(void)state;
	static const struct ev dsu[] = {
		{"CYCLES", 0x11}, {"BUS_ACCESS", 0x19}, {"MEMORY_ERROR", 0x1A},
		{"BUS_CYCLES", 0x1D}, {"L3D_CACHE_ALLOCATE", 0x29}, {"L3D_CACHE_REFILL", 0x2A},
		{"L3D_CACHE", 0x2B}, {"L3D_CACHE_WB", 0x2C}, {"BUS_ACCESS_RD", 0x60},
		{"BUS_ACCESS_WR", 0x61}, {"L3D_CACHE_RD", 0xA0}, {"L3D_CACHE_WR", 0xA1},
		{"L3D_CACHE_REFILL_RD", 0xA2}, {"L3D_CACHE_REFILL_WR", 0xA3},
		{"SCU_SNP_ACCESS", 0xC0}, {"SCU_SNP_EVICT", 0xC1},
	};
	const struct dpmu_event_catalog *c = get("dsu");
	expect(c, dsu, sizeof dsu / sizeof dsu[0], DPMU_PMU_CLUSTER);
	assert_null(dpmu_catalog_find_code(c, 0x4000));
}

/* Seed 001 sections 2.1 and 4.2: the DSU-120 numbering and its ranges. */
static void test_dsu120_events_and_ranges(void **state)
{
	(void)state;
	static const struct ev d120[] = {
		{"CYCLES", 0x11}, {"L3_ACCESS", 0x4000}, {"L3_MISS", 0x4001},
		{"SNOOP_REQ", 0x4022}, {"DATA_TRANSFER", 0x4023},
	};
	const struct dpmu_event_catalog *c = get("dsu-120");
	expect(c, d120, sizeof d120 / sizeof d120[0], DPMU_PMU_CLUSTER);
	bool l3 = false, coh = false, mem = false;
	for (size_t i = 0; i < c->count; i++) {
		uint16_t code = c->events[i].code;
		if (code == 0x11)
			continue;
		/* every other code lies in one of the seed's three ranges */
		assert_true(code >= 0x4000 && code <= 0x403F);
		assert_false(code >= 0x402F && code < 0x4030);
		l3 |= code <= 0x401F;
		coh |= code >= 0x4020 && code <= 0x402F;
		mem |= code >= 0x4030;
	}
	assert_true(l3 && coh && mem);
	/* the classic names are not here: the numberings are separate profiles */
	assert_null(dpmu_catalog_find_name(c, "L3D_CACHE"));
}

/* Arm ARM AMEVTYPER0<n>: the architected group-0 events; seed 003: the
 * selectable group-1 events. CNT_CYCLES is 0x4004, not the seed's 0xEF. */
static void test_amu_events(void **state)
{
	(void)state;
	static const struct ev amu[] = {
		{"CPU_CYCLES", 0x11}, {"CNT_CYCLES", 0x4004}, {"INST_RETIRED", 0x08},
		{"STALL_BACKEND_MEM", 0x4005}, {"L1D_CACHE", 0x04}, {"L2D_CACHE", 0x16},
		{"BUS_ACCESS", 0x19}, {"STALL_BACKEND", 0x24}, {"STALL_FRONTEND", 0x23},
		{"L1D_CACHE_REFILL", 0x03},
	};
	const struct dpmu_event_catalog *c = get("amu");
	expect(c, amu, sizeof amu / sizeof amu[0], DPMU_PMU_AMU);
	assert_int_equal(c->count, 10);
	assert_null(dpmu_catalog_find_code(c, 0xEF));
	assert_int_equal(dpmu_catalog_find_name(c, "CNT_CYCLES")->code, DPMU_EV_CNT_CYCLES);
}

static void test_lookup_is_case_insensitive_by_name(void **state)
{
	(void)state;
	const struct dpmu_event_catalog *c = get("cortex-a75");
	const struct dpmu_event_desc *a = dpmu_catalog_find_name(c, "l1d_cache_refill");
	const struct dpmu_event_desc *b = dpmu_catalog_find_name(c, "L1D_Cache_Refill");
	assert_non_null(a);
	assert_ptr_equal(a, b);
	assert_int_equal(a->code, 0x03);
	assert_string_equal(a->name, "L1D_CACHE_REFILL"); /* stored as Arm writes it */
	assert_null(dpmu_catalog_find_name(c, "L1D_CACHE_REFIL"));
	assert_null(dpmu_catalog_find_name(c, ""));
	assert_null(dpmu_catalog_find_name(c, NULL));
	assert_null(dpmu_catalog_find_name(NULL, "CPU_CYCLES"));
	assert_null(dpmu_catalog_find_code(c, 0xFFFF));
	assert_null(dpmu_catalog_find_code(NULL, 0x11));
}

static void test_catalogs_are_loaded_once(void **state)
{
	(void)state;
	const struct dpmu_event_catalog *a = get("dsu");
	const struct dpmu_event_catalog *b = get("dsu");
	assert_ptr_equal(a, b);
	assert_ptr_equal(a->events, b->events);
}

static void *get_in_thread(void *arg)
{
	return (void *)dpmu_catalog_get((const char *)arg, NULL);
}

/* First use from several threads at once still yields one table. */
static void test_concurrent_first_use(void **state)
{
	(void)state;
	pthread_t t[4];
	void *r[4];
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, get_in_thread, (void *)"dsu-120"), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_join(t[i], &r[i]), 0);
	for (int i = 0; i < 4; i++) {
		assert_non_null(r[i]);
		assert_ptr_equal(r[i], r[0]);
	}
}

static void test_unknown_catalog_is_refused(void **state)
{
	(void)state;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	assert_null(dpmu_catalog_get("cortex-x9", &err));
	assert_int_equal(err.code, DPMU_ENOENT);
	assert_non_null(strstr(err.msg, "cortex-x9"));
	assert_non_null(strstr(err.msg, "cortex-a75")); /* says what exists */
	assert_null(dpmu_catalog_get("../profiles/a75x4-a55x4", &err));
	assert_int_equal(err.code, DPMU_ENOENT);
	assert_null(dpmu_catalog_get("", &err));
	assert_int_equal(err.code, DPMU_EINVAL);
	assert_null(dpmu_catalog_get(NULL, &err));
}

/* Names and codes are both keys: unique within each catalog. */
static void test_names_and_codes_unique(void **state)
{
	(void)state;
	static const char *const names[] = {"cortex-a75", "cortex-a55", "dsu", "dsu-120", "amu"};
	for (size_t n = 0; n < 5; n++) {
		const struct dpmu_event_catalog *c = get(names[n]);
		assert_true(c->count > 0 && c->count <= DPMU_MAX_EVENTS);
		for (size_t i = 0; i < c->count; i++) {
			assert_ptr_equal(dpmu_catalog_find_name(c, c->events[i].name), &c->events[i]);
			assert_ptr_equal(dpmu_catalog_find_code(c, c->events[i].code), &c->events[i]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cortex_a75_has_every_reference_event),
		cmocka_unit_test(test_cortex_a55_events),
		cmocka_unit_test(test_dsu_classic_events),
		cmocka_unit_test(test_dsu120_events_and_ranges),
		cmocka_unit_test(test_amu_events),
		cmocka_unit_test(test_lookup_is_case_insensitive_by_name),
		cmocka_unit_test(test_catalogs_are_loaded_once),
		cmocka_unit_test(test_concurrent_first_use),
		cmocka_unit_test(test_unknown_catalog_is_refused),
		cmocka_unit_test(test_names_and_codes_unique),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
