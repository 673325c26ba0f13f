/*
 * Identification registers of the external PMU frames: PMCFGR, PMIIDR,
 * PMCEID0-3, PMDEVAFF0/1, PMAUTHSTATUS, PMDEVARCH, PMDEVTYPE, PIDR, CIDR.
 * Sources: Arm ARM DDI0487 register descriptions (PMCFGR, PMIIDR, PMDEVAFF0,
 * PMAUTHSTATUS, PMDEVARCH, PMPIDR/PMCIDR), CoreSight Architecture (JEP106
 * designer fields), reference section 2, seed 001 sections 2.1 and 3.
 */
#include "conformance.h"

#include "dynpmu/ext32.h"

static int setup(void **state)
{
	*state = conf_model(NULL);
	return 0;
}

static int teardown(void **state)
{
	dpmu_model_destroy(*state);
	return 0;
}

static const struct dpmu_core_type *core_type(struct dpmu_model *m, unsigned core)
{
	unsigned cl, idx;
	return dpmu_profile_core(dpmu_model_profile(m), core, &cl, &idx);
}

static const struct dpmu_cluster_params *cluster_params(struct dpmu_model *m, unsigned cl)
{
	return &dpmu_model_profile(m)->clusters[cl];
}

/* Every frame, core and cluster. */
#define FOR_EACH_FRAME(m, f)                                                                   \
	for (unsigned i_ = 0, n_ = dpmu_model_ncores(m) + dpmu_model_nclusters(m); i_ < n_;   \
	     i_++)                                                                             \
		for (struct dpmu_frame f = i_ < dpmu_model_ncores(m)                           \
			     ? CONF_CORE(i_)                                                   \
			     : CONF_CLUSTER(i_ - dpmu_model_ncores(m));                        \
		     f.index != ~0u; f.index = ~0u)

/* Arm ARM PMDEVARCH: ARCHITECT 0x23B (Arm), PRESENT, ARCHID 0x2A16 (PMUv3);
 * seed 001 section 3.2 gives the same value for the cluster frame. */
static void PMDEVARCH_is_Arm_PMUv3_on_every_frame(void **state)
{
	struct dpmu_model *m = *state;
	FOR_EACH_FRAME(m, f) {
		uint32_t v = conf_xrd(m, f, DPMU_EXT_PMDEVARCH);
		assert_int_equal(v, 0x47702A16u);
		assert_int_equal(v >> 21, 0x23B);
		assert_int_equal(v & 0xffff, 0x2A16);
	}
}

/* Reference section 2: PMDEVTYPE = 0x16 (performance monitor, processor). */
static void PMDEVTYPE_is_performance_monitor(void **state)
{
	struct dpmu_model *m = *state;
	FOR_EACH_FRAME(m, f)
		assert_int_equal(conf_xrd(m, f, DPMU_EXT_PMDEVTYPE), 0x16);
}

/* CoreSight: CIDR0-3 = 0x0D, 0x90, 0x05, 0xB1 (component class 9). */
static void CIDR_is_CoreSight_component(void **state)
{
	struct dpmu_model *m = *state;
	static const uint32_t cidr[4] = { 0x0D, 0x90, 0x05, 0xB1 };
	FOR_EACH_FRAME(m, f) {
		for (unsigned i = 0; i < 4; i++)
			assert_int_equal(conf_xrd(m, f, DPMU_EXT_CIDR(i)), cidr[i]);
		assert_int_equal((conf_xrd(m, f, DPMU_EXT_CIDR(1)) >> 4) & 0xf, 0x9);
	}
}

/* CoreSight PIDR: designer = JEP106 Arm (continuation 4, code 0x3B) split
 * over PIDR1[7:4], PIDR2[2:0], PIDR4[3:0]; PIDR2.JEDEC = 1; PIDR4.SIZE = 0
 * (one 4 KiB frame). */
static void PIDR_designer_is_Arm_JEP106(void **state)
{
	struct dpmu_model *m = *state;
	FOR_EACH_FRAME(m, f) {
		uint32_t p1 = conf_xrd(m, f, DPMU_EXT_PIDR(1));
		uint32_t p2 = conf_xrd(m, f, DPMU_EXT_PIDR(2));
		uint32_t p4 = conf_xrd(m, f, DPMU_EXT_PIDR4);
		uint32_t des = ((p2 & 0x7) << 4) | (p1 >> 4);
		assert_int_equal(des, 0x3B);
		assert_true(p2 & 0x8);
		assert_int_equal(p4 & 0xf, 4);
		assert_int_equal(p4 >> 4, 0);
		for (unsigned i = 0; i < 4; i++)
			assert_true(conf_xrd(m, f, DPMU_EXT_PIDR(i)) <= 0xff);
	}
}

/* docs/model.md: a core frame's part number is its core's MIDR PartNum, so
 * a debugger tells an A75 PMU from an A55 one; the cluster frame's differs. */
static void PIDR_part_number_follows_core_type(void **state)
{
	struct dpmu_model *m = *state;
	for (unsigned c = 0; c < dpmu_model_ncores(m); c++) {
		uint32_t part = conf_xrd(m, CONF_CORE(c), DPMU_EXT_PIDR(0)) |
				(conf_xrd(m, CONF_CORE(c), DPMU_EXT_PIDR(1)) & 0xf) << 8;
		assert_int_equal(part, (core_type(m, c)->midr >> 4) & 0xfff);
	}
	uint32_t cpart = conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PIDR(0)) |
			 (conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PIDR(1)) & 0xf) << 8;
	assert_int_not_equal(cpart, (core_type(m, 0)->midr >> 4) & 0xfff);
}

/* Arm ARM PMIIDR: Implementer [11:0] = 0x43B (JEP106 Arm), ProductID
 * [31:20], Variant [19:16], Revision [15:12] from the core's MIDR. */
static void PMIIDR_is_Arm_with_product_from_MIDR(void **state)
{
	struct dpmu_model *m = *state;
	for (unsigned c = 0; c < dpmu_model_ncores(m); c++) {
		uint32_t v = conf_xrd(m, CONF_CORE(c), DPMU_EXT_PMIIDR);
		uint32_t midr = core_type(m, c)->midr;
		assert_int_equal(v & 0xfff, 0x43B);
		assert_int_equal(v >> 20, (midr >> 4) & 0xfff);
		assert_int_equal((v >> 16) & 0xf, (midr >> 20) & 0xf);
		assert_int_equal((v >> 12) & 0xf, midr & 0xf);
	}
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMIIDR) & 0xfff, 0x43B);
}

/* Arm ARM PMDEVAFF0/1: a copy of MPIDR_EL1 of the frame's core, for
 * several cores of every cluster. */
static void PMDEVAFF_is_MPIDR_of_the_frame_core(void **state)
{
	struct dpmu_model *m = *state;
	const struct dpmu_profile *p = dpmu_model_profile(m);
	for (unsigned c = 0; c < dpmu_model_ncores(m); c++) {
		uint64_t mpidr = dpmu_profile_mpidr(p, c);
		assert_int_equal(conf_xrd(m, CONF_CORE(c), DPMU_EXT_PMDEVAFF0), (uint32_t)mpidr);
		assert_int_equal(conf_xrd(m, CONF_CORE(c), DPMU_EXT_PMDEVAFF1),
				 (uint32_t)(mpidr >> 32));
		/* Frames of different cores are told apart by affinity. */
		if (c > 0)
			assert_int_not_equal(conf_xrd(m, CONF_CORE(c), DPMU_EXT_PMDEVAFF0),
					     conf_xrd(m, CONF_CORE(c - 1), DPMU_EXT_PMDEVAFF0));
	}
}

/* Arm ARM MPIDR_EL1 layout (not the seed's packed struct, reference
 * section 2): bit 31 RES1, U bit 30 = 0 in a multiprocessor cluster, MT bit
 * 24 as DynamIQ reports it, Aff1 = core in cluster, Aff2 = cluster. */
static void PMDEVAFF0_uses_MPIDR_field_layout(void **state)
{
	struct dpmu_model *m = *state;
	for (unsigned c = 0; c < dpmu_model_ncores(m); c++) {
		uint32_t v = conf_xrd(m, CONF_CORE(c), DPMU_EXT_PMDEVAFF0);
		unsigned cl, idx;
		dpmu_profile_core(dpmu_model_profile(m), c, &cl, &idx);
		assert_true(v >> 31 & 1);
		assert_false(v >> 30 & 1);
		assert_true(v >> 24 & 1);
		assert_int_equal((v >> 8) & 0xff, idx);
		assert_int_equal((v >> 16) & 0xff, cl);
		assert_int_equal(v & 0xff, 0);
	}
}

/* Seed 001 section 3.1: the cluster PMU frame reports Aff0 = 0x80 (all
 * threads) and Aff1 = 0x80 (all cores of the cluster), Aff2 = the cluster,
 * with MT/U/RES1 in their MPIDR positions. */
static void Cluster_PMDEVAFF_is_0x80_0x80_cluster(void **state)
{
	struct dpmu_model *m = *state;
	for (unsigned cl = 0; cl < dpmu_model_nclusters(m); cl++) {
		uint32_t v = conf_xrd(m, CONF_CLUSTER(cl), DPMU_EXT_PMDEVAFF0);
		assert_int_equal(v & 0xff, 0x80);
		assert_int_equal((v >> 8) & 0xff, 0x80);
		assert_int_equal((v >> 16) & 0xff, cl);
		assert_true(v >> 31 & 1);
		assert_false(v >> 30 & 1);
		assert_int_equal(v & 0x3e000000u, 0); /* bits [29:25] RES0 */
		assert_int_equal(conf_xrd(m, CONF_CLUSTER(cl), DPMU_EXT_PMDEVAFF1), 0);
	}
}

/* Arm ARM PMAUTHSTATUS: NSID and SID 0b00 (not implemented for a PMU);
 * NSNID 0b11 / 0b10 as external non-secure access is enabled / disabled. */
static void PMAUTHSTATUS_reports_authentication(void **state)
{
	struct dpmu_model *m = *state;
	uint32_t v = conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMAUTHSTATUS);
	assert_int_equal(v & 0x3, 0);              /* NSID */
	assert_int_equal((v >> 4) & 0x3, 0);       /* SID */
	assert_int_equal((v >> 2) & 0x3, 0x3);     /* NSNID enabled */
	assert_int_equal((v >> 6) & 0x3, 0x3);     /* SNID enabled */
	assert_int_equal(v >> 8, 0);
	assert_int_equal(dpmu_model_set_extauth(m, 0, false, NULL), 0);
	v = conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMAUTHSTATUS);
	assert_int_equal((v >> 2) & 0x3, 0x2);     /* NSNID disabled */
	assert_int_equal(dpmu_model_cluster_set_extauth(m, 0, false, NULL), 0);
	v = conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMAUTHSTATUS);
	assert_int_equal((v >> 2) & 0x3, 0x2);
}

/* Arm ARM PMCFGR: N [7:0] = PMCR.N, SIZE [13:8] = 63, CC bit 14 = 1, CCD bit
 * 15 = PMCR.D implemented, UEN bit 19 RAZ (PMUSERENR is not external), SS
 * bit 22 = 0 (the snapshot is the seed's IMPLEMENTATION DEFINED one). */
static void PMCFGR_describes_the_core_PMU(void **state)
{
	struct dpmu_model *m = *state;
	for (unsigned c = 0; c < dpmu_model_ncores(m); c++) {
		uint32_t v = conf_xrd(m, CONF_CORE(c), DPMU_EXT_PMCFGR);
		assert_int_equal(v & 0xff, core_type(m, c)->pmu_counters);
		assert_int_equal((v >> 8) & 0x3f, 63);
		assert_true(v >> 14 & 1);
		assert_true(v >> 15 & 1);
		assert_false(v >> 19 & 1);
		assert_false(v >> 22 & 1);
	}
}

/* Seed 001 / reference section 3: the cluster frame's PMCFGR reports the
 * cluster counters, a 64-bit cycle counter (SIZE 63) and no divider. */
static void PMCFGR_describes_the_cluster_PMU(void **state)
{
	struct dpmu_model *m = *state;
	for (unsigned cl = 0; cl < dpmu_model_nclusters(m); cl++) {
		uint32_t v = conf_xrd(m, CONF_CLUSTER(cl), DPMU_EXT_PMCFGR);
		assert_int_equal(v & 0xff, cluster_params(m, cl)->pmu_counters);
		assert_int_equal((v >> 8) & 0x3f, 63);
		assert_true(v >> 14 & 1);
		assert_false(v >> 15 & 1);
	}
}

static uint32_t expected_ceid(bool (*has)(const void *, uint16_t), const void *obj,
			      uint16_t base)
{
	uint32_t v = 0;
	for (unsigned b = 0; b < 32; b++)
		if (has(obj, (uint16_t)(base + b)))
			v |= 1u << b;
	return v;
}

static bool core_has(const void *t, uint16_t ev)
{
	return dpmu_core_type_implements(t, ev);
}

static bool cluster_has(const void *c, uint16_t ev)
{
	return dpmu_cluster_implements(c, ev);
}

/* Reference section 2 / seed 001 section 2.1: PMCEID0 = events 0x00-0x1F,
 * PMCEID1 = 0x20-0x3F, PMCEID2 = 0x4000-0x401F, PMCEID3 = 0x4020-0x403F;
 * a bit is 1 exactly when the event is implemented. */
static void PMCEID_bitmaps_match_implemented_events(void **state)
{
	struct dpmu_model *m = *state;
	static const uint16_t base[4] = { 0x0000, 0x0020, 0x4000, 0x4020 };
	for (unsigned c = 0; c < dpmu_model_ncores(m); c++)
		for (unsigned i = 0; i < 4; i++)
			assert_int_equal(conf_xrd(m, CONF_CORE(c), DPMU_EXT_PMCEID0 + 4 * i),
					 expected_ceid(core_has, core_type(m, c), base[i]));
	for (unsigned cl = 0; cl < dpmu_model_nclusters(m); cl++)
		for (unsigned i = 0; i < 4; i++)
			assert_int_equal(conf_xrd(m, CONF_CLUSTER(cl), DPMU_EXT_PMCEID0 + 4 * i),
					 expected_ceid(cluster_has, cluster_params(m, cl),
						       base[i]));
	/* The Armv8 common events a core PMU always has. */
	assert_true(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCEID0) & (1u << DPMU_EV_CPU_CYCLES));
}

/* Arm ARM: PMCEID0_EL0[31:0] / [63:32] are the external PMCEID0 / PMCEID2,
 * PMCEID1_EL0[31:0] / [63:32] are PMCEID1 / PMCEID3: both views report the
 * same implemented events. */
static void PMCEID_same_in_both_views(void **state)
{
	struct dpmu_model *m = *state;
	for (unsigned c = 0; c < dpmu_model_ncores(m); c++) {
		uint64_t ceid0 = conf_rd(m, c, DPMU_SYSREG(3, 3, 9, 12, 6));
		uint64_t ceid1 = conf_rd(m, c, DPMU_SYSREG(3, 3, 9, 12, 7));
		assert_int_equal(conf_xrd(m, CONF_CORE(c), DPMU_EXT_PMCEID0), (uint32_t)ceid0);
		assert_int_equal(conf_xrd(m, CONF_CORE(c), DPMU_EXT_PMCEID1), (uint32_t)ceid1);
		assert_int_equal(conf_xrd(m, CONF_CORE(c), DPMU_EXT_PMCEID2),
				 (uint32_t)(ceid0 >> 32));
		assert_int_equal(conf_xrd(m, CONF_CORE(c), DPMU_EXT_PMCEID3),
				 (uint32_t)(ceid1 >> 32));
	}
	/* CLUSTERPMCEID0/1_EL1 use the same layout (reference section 3). */
	for (unsigned cl = 0; cl < dpmu_model_nclusters(m); cl++) {
		unsigned core = 0;
		while (dpmu_model_core_cluster(m, core) != cl)
			core++;
		uint64_t ceid0 = conf_rd(m, core, DPMU_SYSREG(3, 0, 15, 6, 4));
		uint64_t ceid1 = conf_rd(m, core, DPMU_SYSREG(3, 0, 15, 6, 5));
		assert_int_equal(conf_xrd(m, CONF_CLUSTER(cl), DPMU_EXT_PMCEID0), (uint32_t)ceid0);
		assert_int_equal(conf_xrd(m, CONF_CLUSTER(cl), DPMU_EXT_PMCEID1), (uint32_t)ceid1);
		assert_int_equal(conf_xrd(m, CONF_CLUSTER(cl), DPMU_EXT_PMCEID2),
				 (uint32_t)(ceid0 >> 32));
		assert_int_equal(conf_xrd(m, CONF_CLUSTER(cl), DPMU_EXT_PMCEID3),
				 (uint32_t)(ceid1 >> 32));
	}
}

/* Identification registers are read-only: writes are ignored. */
static void Identification_registers_ignore_writes(void **state)
{
	struct dpmu_model *m = *state;
	static const uint32_t offs[] = { DPMU_EXT_PMCFGR, DPMU_EXT_PMIIDR, DPMU_EXT_PMCEID0,
					 DPMU_EXT_PMDEVAFF0, DPMU_EXT_PMDEVARCH,
					 DPMU_EXT_PMDEVTYPE, DPMU_EXT_PIDR(0), DPMU_EXT_CIDR(0),
					 DPMU_EXT_PMAUTHSTATUS, DPMU_EXT_PMLSR };
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMLAR, DPMU_EXT_PMLAR_KEY);
	for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
		uint32_t before = conf_xrd(m, CONF_CORE(0), offs[i]);
		conf_xwr(m, CONF_CORE(0), offs[i], ~before);
		assert_int_equal(conf_xrd(m, CONF_CORE(0), offs[i]), before);
	}
}

/* Arm ARM PMITCTRL: integration mode not implemented, reads 0; PMDEVID
 * reports no PC sampling; PMLAR is write-only and reads 0. */
static void PMITCTRL_PMDEVID_and_PMLAR_read_zero(void **state)
{
	struct dpmu_model *m = *state;
	FOR_EACH_FRAME(m, f) {
		assert_int_equal(conf_xrd(m, f, DPMU_EXT_PMITCTRL), 0);
		assert_int_equal(conf_xrd(m, f, DPMU_EXT_PMDEVID), 0);
		assert_int_equal(conf_xrd(m, f, DPMU_EXT_PMLAR), 0);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(PMDEVARCH_is_Arm_PMUv3_on_every_frame),
		T(PMDEVTYPE_is_performance_monitor),
		T(CIDR_is_CoreSight_component),
		T(PIDR_designer_is_Arm_JEP106),
		T(PIDR_part_number_follows_core_type),
		T(PMIIDR_is_Arm_with_product_from_MIDR),
		T(PMDEVAFF_is_MPIDR_of_the_frame_core),
		T(PMDEVAFF0_uses_MPIDR_field_layout),
		T(Cluster_PMDEVAFF_is_0x80_0x80_cluster),
		T(PMAUTHSTATUS_reports_authentication),
		T(PMCFGR_describes_the_core_PMU),
		T(PMCFGR_describes_the_cluster_PMU),
		T(PMCEID_bitmaps_match_implemented_events),
		T(PMCEID_same_in_both_views),
		T(Identification_registers_ignore_writes),
		T(PMITCTRL_PMDEVID_and_PMLAR_read_zero),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
