/*
 * The access rule of the external PMU view: power, OS double lock, OS lock,
 * authentication, the sticky EDPRSR.SPMAD flag, secure accesses, the
 * software lock, and which registers stay reachable in the Debug power
 * domain. Sources: Arm ARM DDI0487 "External debug interface register access
 * permissions" and the PMU/EDPRSR/PMLAR/PMLSR register descriptions;
 * reference section 2; seed 001 section 2.2 (the access conditions).
 */
#include "conformance.h"

#include "dynpmu/ext32.h"

#define EDPRSR_PU (1u << 0)
#define EDPRSR_OSLK (1u << 5)
#define EDPRSR_DLK (1u << 6)
#define EDPRSR_EPMAD (1u << 9)
#define EDPRSR_SPMAD (1u << 10)

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

/* A non-secure read that must be refused: DPMU_EIO, value 0. */
static void expect_refused_read(struct dpmu_model *m, struct dpmu_frame f, uint32_t off)
{
	uint32_t v = 0x12345678;
	assert_int_equal(dpmu_model_ext_read(m, f, off, false, &v), DPMU_EIO);
	assert_int_equal(v, 0);
}

/* Arm ARM: IsCorePowered() is the first condition of the access rule. */
static void IsCorePowered_false_refuses_external_access(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(dpmu_model_set_power(m, 1, false, NULL), 0);
	expect_refused_read(m, CONF_CORE(1), DPMU_EXT_PMCR);
	assert_int_equal(dpmu_model_ext_write(m, CONF_CORE(1), DPMU_EXT_PMCNTENSET, false, 1),
			 DPMU_EIO);
	/* The other cores are unaffected. */
	(void)conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCR);
}

/* Arm ARM: DoubleLockStatus() refuses the access. */
static void DoubleLockStatus_refuses_external_access(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(dpmu_model_set_doublelock(m, 0, true, NULL), 0);
	expect_refused_read(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET);
	assert_int_equal(dpmu_model_set_doublelock(m, 0, false, NULL), 0);
	(void)conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET);
}

/* Arm ARM: OSLockStatus() refuses the access. */
static void OSLockStatus_refuses_external_access(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(dpmu_model_set_oslock(m, 0, true, NULL), 0);
	expect_refused_read(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0));
	assert_int_equal(dpmu_model_set_oslock(m, 0, false, NULL), 0);
	(void)conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0));
}

/* Arm ARM: AllowExternalPMUAccess() == FALSE refuses a non-secure access. */
static void AllowExternalPMUAccess_false_refuses_nonsecure_access(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(dpmu_model_set_extauth(m, 0, false, NULL), 0);
	expect_refused_read(m, CONF_CORE(0), DPMU_EXT_PMCFGR);
	assert_int_equal(dpmu_model_ext_write(m, CONF_CORE(0), DPMU_EXT_PMCR, false, 1), DPMU_EIO);
}

/* Reference section 2: secure accesses always pass the authentication. */
static void Secure_access_passes_AllowExternalPMUAccess(void **state)
{
	struct dpmu_model *m = *state;
	uint32_t v = 0;
	assert_int_equal(dpmu_model_set_extauth(m, 0, false, NULL), 0);
	assert_int_equal(dpmu_model_ext_read(m, CONF_CORE(0), DPMU_EXT_PMCFGR, true, &v), 0);
	assert_int_not_equal(v, 0);
	assert_int_equal(dpmu_model_edprsr_read(m, CONF_CORE(0)) & EDPRSR_SPMAD, 0);
}

/* Secure does not bypass the power and lock conditions (they come first). */
static void Secure_access_still_needs_power_and_no_locks(void **state)
{
	struct dpmu_model *m = *state;
	uint32_t v;
	assert_int_equal(dpmu_model_set_oslock(m, 0, true, NULL), 0);
	assert_int_equal(dpmu_model_ext_read(m, CONF_CORE(0), DPMU_EXT_PMCR, true, &v), DPMU_EIO);
}

/* Arm ARM EDPRSR.SPMAD: set when an access returns an error because
 * AllowExternalPMUAccess() == FALSE; EDPRSR.EPMAD shows the state. */
static void EDPRSR_SPMAD_set_by_authentication_refusal(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(dpmu_model_edprsr_read(m, CONF_CORE(0)) & EDPRSR_SPMAD, 0);
	assert_int_equal(dpmu_model_set_extauth(m, 0, false, NULL), 0);
	expect_refused_read(m, CONF_CORE(0), DPMU_EXT_PMCR);
	uint32_t e = dpmu_model_edprsr_read(m, CONF_CORE(0));
	assert_true(e & EDPRSR_SPMAD);
	assert_true(e & EDPRSR_EPMAD);
}

/* Arm ARM EDPRSR.SPMAD: cleared following a read of EDPRSR. */
static void EDPRSR_read_clears_SPMAD(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(dpmu_model_set_extauth(m, 0, false, NULL), 0);
	assert_int_equal(dpmu_model_ext_write(m, CONF_CORE(0), DPMU_EXT_PMCR, false, 0), DPMU_EIO);
	assert_true(dpmu_model_edprsr_read(m, CONF_CORE(0)) & EDPRSR_SPMAD);
	assert_false(dpmu_model_edprsr_read(m, CONF_CORE(0)) & EDPRSR_SPMAD);
	/* Still refused: the flag comes back on the next refusal. */
	expect_refused_read(m, CONF_CORE(0), DPMU_EXT_PMCR);
	assert_true(dpmu_model_edprsr_read(m, CONF_CORE(0)) & EDPRSR_SPMAD);
}

/* Arm ARM (DDI0500 table 12.1 wording): SPMAD is set only when EPMAD is the
 * highest-priority failing condition; power, double lock and OS lock
 * refusals leave it unchanged, even with authentication also refused. */
static void EDPRSR_SPMAD_not_set_by_power_or_lock_refusals(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(dpmu_model_set_extauth(m, 0, false, NULL), 0);

	assert_int_equal(dpmu_model_set_oslock(m, 0, true, NULL), 0);
	expect_refused_read(m, CONF_CORE(0), DPMU_EXT_PMCR);
	assert_int_equal(dpmu_model_edprsr_read(m, CONF_CORE(0)) & EDPRSR_SPMAD, 0);
	assert_int_equal(dpmu_model_set_oslock(m, 0, false, NULL), 0);

	assert_int_equal(dpmu_model_set_doublelock(m, 0, true, NULL), 0);
	expect_refused_read(m, CONF_CORE(0), DPMU_EXT_PMCR);
	assert_int_equal(dpmu_model_edprsr_read(m, CONF_CORE(0)) & EDPRSR_SPMAD, 0);
	assert_int_equal(dpmu_model_set_doublelock(m, 0, false, NULL), 0);

	assert_int_equal(dpmu_model_set_power(m, 0, false, NULL), 0);
	expect_refused_read(m, CONF_CORE(0), DPMU_EXT_PMCR);
	assert_int_equal(dpmu_model_edprsr_read(m, CONF_CORE(0)) & EDPRSR_SPMAD, 0);
}

/* Arm ARM EDPRSR: PU, OSLK, DLK report the conditions of the rule. */
static void EDPRSR_reports_power_and_lock_state(void **state)
{
	struct dpmu_model *m = *state;
	uint32_t e = dpmu_model_edprsr_read(m, CONF_CORE(0));
	assert_true(e & EDPRSR_PU);
	assert_false(e & (EDPRSR_OSLK | EDPRSR_DLK | EDPRSR_EPMAD));
	assert_int_equal(dpmu_model_set_oslock(m, 0, true, NULL), 0);
	assert_true(dpmu_model_edprsr_read(m, CONF_CORE(0)) & EDPRSR_OSLK);
	assert_int_equal(dpmu_model_set_doublelock(m, 0, true, NULL), 0);
	assert_true(dpmu_model_edprsr_read(m, CONF_CORE(0)) & EDPRSR_DLK);
}

/* A refused write has no effect on the PMU. */
static void Refused_write_changes_nothing(void **state)
{
	struct dpmu_model *m = *state;
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMLAR, DPMU_EXT_PMLAR_KEY);
	assert_int_equal(dpmu_model_set_oslock(m, 0, true, NULL), 0);
	assert_int_equal(dpmu_model_ext_write(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET, false, 1),
			 DPMU_EIO);
	assert_int_equal(dpmu_model_set_oslock(m, 0, false, NULL), 0);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET), 0);
}

/* Arm ARM PMLSR.SLK: the software lock is set out of reset (external debug
 * reset); SLI reads 1 (implemented), nTT reads 0. */
static void PMLSR_SLK_resets_locked(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMLSR), 0x3);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMLSR), 0x3);
}

/* Arm ARM PMLAR: writing 0xC5ACCE55 unlocks. */
static void PMLAR_key_unlocks_software_lock(void **state)
{
	struct dpmu_model *m = *state;
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMLAR, DPMU_EXT_PMLAR_KEY);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMLSR), 0x1);
	/* Per frame: the neighbour stays locked. */
	assert_int_equal(conf_xrd(m, CONF_CORE(1), DPMU_EXT_PMLSR), 0x3);
}

/* Arm ARM PMLAR: writing any other value locks. */
static void PMLAR_other_value_locks_software_lock(void **state)
{
	struct dpmu_model *m = *state;
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMLAR, DPMU_EXT_PMLAR_KEY);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMLAR, DPMU_EXT_PMLAR_KEY + 1);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMLSR) & DPMU_EXT_PMLSR_SLK,
			 DPMU_EXT_PMLSR_SLK);
}

/* Arm ARM PMLSR.SLK = 1: writes are ignored (no error); reads work. */
static void SoftwareLockStatus_ignores_writes_without_error(void **state)
{
	struct dpmu_model *m = *state;
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET, 1);   /* must not fail */
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0), 1234);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMCNTENSET), 0);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0)), 0);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMLAR, DPMU_EXT_PMLAR_KEY);
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0), 1234);
	assert_int_equal(conf_xrd(m, CONF_CORE(0), DPMU_EXT_PMEVCNTR(0)), 1234);
}

/* The software lock applies to the cluster frame too (seed 001 section 2.2,
 * condition 4). */
static void SoftwareLockStatus_applies_to_cluster_frame(void **state)
{
	struct dpmu_model *m = *state;
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMCNTENSET, 1);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMCNTENSET), 0);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMLAR, DPMU_EXT_PMLAR_KEY);
	conf_xwr(m, CONF_CLUSTER(0), DPMU_EXT_PMCNTENSET, 1);
	assert_int_equal(conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMCNTENSET), 1);
}

/* Arm ARM PMDEVARCH/PMDEVAFF/CIDR/PMLSR/PMLAR: without FEAT_DoPD these are in
 * the Debug power domain, readable (PMLAR writable) whatever the core's
 * power, locks or authentication. */
static void Debug_domain_registers_answer_when_core_is_off_or_locked(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(dpmu_model_set_power(m, 1, false, NULL), 0);
	assert_int_equal(dpmu_model_set_oslock(m, 2, true, NULL), 0);
	assert_int_equal(dpmu_model_set_doublelock(m, 3, true, NULL), 0);
	assert_int_equal(dpmu_model_set_extauth(m, 0, false, NULL), 0);
	for (unsigned core = 0; core < 4; core++) {
		assert_int_equal(conf_xrd(m, CONF_CORE(core), DPMU_EXT_PMDEVARCH),
				 DPMU_EXT_PMDEVARCH_PMUV3);
		assert_int_equal(conf_xrd(m, CONF_CORE(core), DPMU_EXT_CIDR(1)), 0x90);
		(void)conf_xrd(m, CONF_CORE(core), DPMU_EXT_PMDEVAFF0);
		(void)conf_xrd(m, CONF_CORE(core), DPMU_EXT_PMAUTHSTATUS);
		conf_xwr(m, CONF_CORE(core), DPMU_EXT_PMLAR, DPMU_EXT_PMLAR_KEY);
		assert_int_equal(conf_xrd(m, CONF_CORE(core), DPMU_EXT_PMLSR), 0x1);
	}
	assert_int_equal(dpmu_model_edprsr_read(m, CONF_CORE(0)) & EDPRSR_SPMAD, 0);
}

/* The DSU is powered while any core of its cluster is (model.h). */
static void Cluster_frame_powered_while_any_core_is(void **state)
{
	struct dpmu_model *m = *state;
	unsigned n = dpmu_model_ncores(m);
	unsigned in_cluster[DPMU_MAX_CORES], k = 0;
	for (unsigned c = 0; c < n; c++)
		if (dpmu_model_core_cluster(m, c) == 0)
			in_cluster[k++] = c;
	/* Any one core keeps it powered, first or last. */
	for (unsigned i = 1; i < k; i++)
		assert_int_equal(dpmu_model_set_power(m, in_cluster[i], false, NULL), 0);
	(void)conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMCR);
	assert_int_equal(dpmu_model_set_power(m, in_cluster[k - 1], true, NULL), 0);
	assert_int_equal(dpmu_model_set_power(m, in_cluster[0], false, NULL), 0);
	(void)conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMCR);
	assert_int_equal(dpmu_model_set_power(m, in_cluster[k - 1], false, NULL), 0);
	expect_refused_read(m, CONF_CLUSTER(0), DPMU_EXT_PMCR);
	assert_false(dpmu_model_edprsr_read(m, CONF_CLUSTER(0)) & EDPRSR_PU);
}

/* The cluster frame has its own OS lock, double lock and authentication
 * (model.h: the DSU debug state); the cores' states do not apply. */
static void Cluster_frame_has_its_own_locks_and_authentication(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(dpmu_model_set_oslock(m, 0, true, NULL), 0);
	(void)conf_xrd(m, CONF_CLUSTER(0), DPMU_EXT_PMCR);

	assert_int_equal(dpmu_model_cluster_set_oslock(m, 0, true, NULL), 0);
	expect_refused_read(m, CONF_CLUSTER(0), DPMU_EXT_PMCR);
	assert_int_equal(dpmu_model_cluster_set_oslock(m, 0, false, NULL), 0);

	assert_int_equal(dpmu_model_cluster_set_doublelock(m, 0, true, NULL), 0);
	expect_refused_read(m, CONF_CLUSTER(0), DPMU_EXT_PMCR);
	assert_int_equal(dpmu_model_cluster_set_doublelock(m, 0, false, NULL), 0);
	assert_int_equal(dpmu_model_edprsr_read(m, CONF_CLUSTER(0)) & EDPRSR_SPMAD, 0);

	assert_int_equal(dpmu_model_cluster_set_extauth(m, 0, false, NULL), 0);
	expect_refused_read(m, CONF_CLUSTER(0), DPMU_EXT_PMCR);
	assert_true(dpmu_model_edprsr_read(m, CONF_CLUSTER(0)) & EDPRSR_SPMAD);
	assert_false(dpmu_model_edprsr_read(m, CONF_CORE(0)) & EDPRSR_SPMAD);
	uint32_t v;
	assert_int_equal(dpmu_model_ext_read(m, CONF_CLUSTER(0), DPMU_EXT_PMCR, true, &v), 0);
}

/* model.h: offsets must be 4-byte aligned and inside the 4 KiB frame; a
 * frame that does not exist is bad input, not a bus error. */
static void Unaligned_or_out_of_frame_offsets_are_refused(void **state)
{
	struct dpmu_model *m = *state;
	uint32_t v = 1;
	assert_int_equal(dpmu_model_ext_read(m, CONF_CORE(0), 0xE02, false, &v), DPMU_EINVAL);
	assert_int_equal(v, 0);
	assert_int_equal(dpmu_model_ext_read(m, CONF_CORE(0), 0x1000, false, &v), DPMU_EINVAL);
	assert_int_equal(dpmu_model_ext_write(m, CONF_CORE(0), 0xFB1, false, 0), DPMU_EINVAL);
	assert_int_equal(dpmu_model_ext_write(m, CONF_CORE(0), 0xFFFFFFFCu, false, 0),
			 DPMU_EINVAL);
	assert_int_equal(dpmu_model_ext_read(m, CONF_CORE(dpmu_model_ncores(m)), 0, false, &v),
			 DPMU_EINVAL);
	assert_int_equal(dpmu_model_ext_read(m, CONF_CLUSTER(dpmu_model_nclusters(m)), 0, false,
					     &v),
			 DPMU_EINVAL);
	struct dpmu_frame bad = { (enum dpmu_frame_kind)7, 0 };
	assert_int_equal(dpmu_model_ext_read(m, bad, 0, false, &v), DPMU_EINVAL);
	assert_int_equal(dpmu_model_ext_read(m, CONF_CORE(0), 0, false, NULL), DPMU_EINVAL);
	assert_int_equal(dpmu_model_edprsr_read(m, CONF_CORE(dpmu_model_ncores(m))), 0);
}

/* Reference section 2: any other offset is RAZ/WI. */
static void Unallocated_offsets_are_RAZ_WI(void **state)
{
	struct dpmu_model *m = *state;
	static const uint32_t holes[] = { 0x100, 0x3FC, 0x480, 0x800, 0xBFC, 0xC04, 0xCA4,
					  0xD00, 0xE0C, 0xE34, 0xE3C, 0xF04, 0xFA4, 0xFC0,
					  0xFD4 };
	conf_xwr(m, CONF_CORE(0), DPMU_EXT_PMLAR, DPMU_EXT_PMLAR_KEY);
	for (size_t i = 0; i < sizeof holes / sizeof holes[0]; i++) {
		conf_xwr(m, CONF_CORE(0), holes[i], 0xffffffffu);
		assert_int_equal(conf_xrd(m, CONF_CORE(0), holes[i]), 0);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(IsCorePowered_false_refuses_external_access),
		T(DoubleLockStatus_refuses_external_access),
		T(OSLockStatus_refuses_external_access),
		T(AllowExternalPMUAccess_false_refuses_nonsecure_access),
		T(Secure_access_passes_AllowExternalPMUAccess),
		T(Secure_access_still_needs_power_and_no_locks),
		T(EDPRSR_SPMAD_set_by_authentication_refusal),
		T(EDPRSR_read_clears_SPMAD),
		T(EDPRSR_SPMAD_not_set_by_power_or_lock_refusals),
		T(EDPRSR_reports_power_and_lock_state),
		T(Refused_write_changes_nothing),
		T(PMLSR_SLK_resets_locked),
		T(PMLAR_key_unlocks_software_lock),
		T(PMLAR_other_value_locks_software_lock),
		T(SoftwareLockStatus_ignores_writes_without_error),
		T(SoftwareLockStatus_applies_to_cluster_frame),
		T(Debug_domain_registers_answer_when_core_is_off_or_locked),
		T(Cluster_frame_powered_while_any_core_is),
		T(Cluster_frame_has_its_own_locks_and_authentication),
		T(Unaligned_or_out_of_frame_offsets_are_refused),
		T(Unallocated_offsets_are_RAZ_WI),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
