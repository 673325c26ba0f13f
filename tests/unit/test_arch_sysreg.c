/* System-register names: every encoding of reference sections 1, 3 and 4 and
 * the EL2/EL3 controls round-trips through dpmu_sysreg_parse/_name; bad
 * encodings are refused with a message naming the field. The expected
 * encodings are written out here from the reference, independently of the
 * table in src/arch/sysreg.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "dynpmu/arch.h"
#include "dynpmu/etm.h"

struct want {
	const char *name;
	unsigned op0, op1, crn, crm, op2;
};

static const struct want fixed[] = {
	/* reference section 1 */
	{"PMCR_EL0", 3, 3, 9, 12, 0}, {"PMCNTENSET_EL0", 3, 3, 9, 12, 1},
	{"PMCNTENCLR_EL0", 3, 3, 9, 12, 2}, {"PMOVSCLR_EL0", 3, 3, 9, 12, 3},
	{"PMSWINC_EL0", 3, 3, 9, 12, 4}, {"PMSELR_EL0", 3, 3, 9, 12, 5},
	{"PMCEID0_EL0", 3, 3, 9, 12, 6}, {"PMCEID1_EL0", 3, 3, 9, 12, 7},
	{"PMCCNTR_EL0", 3, 3, 9, 13, 0}, {"PMXEVTYPER_EL0", 3, 3, 9, 13, 1},
	{"PMXEVCNTR_EL0", 3, 3, 9, 13, 2}, {"PMUSERENR_EL0", 3, 3, 9, 14, 0},
	{"PMINTENSET_EL1", 3, 0, 9, 14, 1}, {"PMINTENCLR_EL1", 3, 0, 9, 14, 2},
	{"PMOVSSET_EL0", 3, 3, 9, 14, 3}, {"PMMIR_EL1", 3, 0, 9, 14, 6},
	{"PMCCFILTR_EL0", 3, 3, 14, 15, 7},
	/* reference section 4 */
	{"AMCR_EL0", 3, 3, 13, 2, 0}, {"AMCFGR_EL0", 3, 3, 13, 2, 1},
	{"AMCGCR_EL0", 3, 3, 13, 2, 2}, {"AMUSERENR_EL0", 3, 3, 13, 2, 3},
	{"AMCNTENCLR0_EL0", 3, 3, 13, 2, 4}, {"AMCNTENSET0_EL0", 3, 3, 13, 2, 5},
	{"AMCNTENCLR1_EL0", 3, 3, 13, 3, 0}, {"AMCNTENSET1_EL0", 3, 3, 13, 3, 1},
	/* reference section 3 */
	{"CLUSTERPMCR_EL1", 3, 0, 15, 5, 0}, {"CLUSTERPMCNTENSET_EL1", 3, 0, 15, 5, 1},
	{"CLUSTERPMCNTENCLR_EL1", 3, 0, 15, 5, 2}, {"CLUSTERPMOVSSET_EL1", 3, 0, 15, 5, 3},
	{"CLUSTERPMOVSCLR_EL1", 3, 0, 15, 5, 4}, {"CLUSTERPMSELR_EL1", 3, 0, 15, 5, 5},
	{"CLUSTERPMINTENSET_EL1", 3, 0, 15, 5, 6}, {"CLUSTERPMINTENCLR_EL1", 3, 0, 15, 5, 7},
	{"CLUSTERPMCCNTR_EL1", 3, 0, 15, 6, 0}, {"CLUSTERPMXEVTYPER_EL1", 3, 0, 15, 6, 1},
	{"CLUSTERPMXEVCNTR_EL1", 3, 0, 15, 6, 2}, {"CLUSTERPMMDCR_EL1", 3, 0, 15, 6, 3},
	{"CLUSTERPMCEID0_EL1", 3, 0, 15, 6, 4}, {"CLUSTERPMCEID1_EL1", 3, 0, 15, 6, 5},
	/* identification and EL2/EL3 controls (Arm ARM register descriptions) */
	{"MIDR_EL1", 3, 0, 0, 0, 0}, {"MPIDR_EL1", 3, 0, 0, 0, 5},
	{"MDCR_EL2", 3, 4, 1, 1, 1}, {"MDCR_EL3", 3, 6, 1, 3, 1},
	{"CPTR_EL2", 3, 4, 1, 1, 2}, {"CPTR_EL3", 3, 6, 1, 1, 2},
	{"ACTLR_EL2", 3, 4, 1, 0, 1}, {"ACTLR_EL3", 3, 6, 1, 0, 1},
};

static void check_one(const char *name, uint32_t want)
{
	struct dpmu_err err;
	dpmu_err_clear(&err);
	uint32_t enc = 0xffffffffu;
	if (dpmu_sysreg_parse(name, &enc, &err) != 0)
		fail_msg("%s: %s", name, dpmu_errmsg(&err));
	if (enc != want)
		fail_msg("%s: parsed 0x%x, reference says 0x%x", name, enc, want);
	const char *back = dpmu_sysreg_name(want);
	if (!back || strcmp(back, name) != 0)
		fail_msg("0x%x: name %s, want %s", want, back ? back : "(null)", name);

	/* case-insensitive */
	char lower[64];
	size_t i = 0;
	for (; name[i] && i + 1 < sizeof lower; i++)
		lower[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
	lower[i] = '\0';
	assert_int_equal(dpmu_sysreg_parse(lower, &enc, &err), 0);
	assert_int_equal(enc, want);

	/* the numeric form names the same register */
	char num[32];
	snprintf(num, sizeof num, "%u:%u:%u:%u:%u", DPMU_SYSREG_OP0(want), DPMU_SYSREG_OP1(want),
		 DPMU_SYSREG_CRN(want), DPMU_SYSREG_CRM(want), DPMU_SYSREG_OP2(want));
	assert_int_equal(dpmu_sysreg_parse(num, &enc, &err), 0);
	assert_int_equal(enc, want);
}

static void test_fixed_registers_round_trip(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		const struct want *w = &fixed[i];
		check_one(w->name, DPMU_SYSREG(w->op0, w->op1, w->crn, w->crm, w->op2));
	}
}

/* Reference section 1: PMEVCNTR<n>_EL0 = 3,3,14,8+(n>>3),n&7 and
 * PMEVTYPER<n>_EL0 = 3,3,14,12+(n>>3),n&7 for n = 0..30. */
static void test_pmev_registers_round_trip(void **state)
{
	(void)state;
	char name[32];
	for (unsigned n = 0; n <= 30; n++) {
		snprintf(name, sizeof name, "PMEVCNTR%u_EL0", n);
		check_one(name, DPMU_SYSREG(3, 3, 14, 8 + (n >> 3), n & 7));
		snprintf(name, sizeof name, "PMEVTYPER%u_EL0", n);
		check_one(name, DPMU_SYSREG(3, 3, 14, 12 + (n >> 3), n & 7));
	}
	/* 31 is the cycle counter's slot: PMCCFILTR_EL0, not PMEVTYPER31_EL0. */
	uint32_t enc;
	struct dpmu_err err;
	assert_int_equal(dpmu_sysreg_parse("PMEVTYPER31_EL0", &enc, &err), DPMU_ENOENT);
	assert_int_equal(dpmu_sysreg_parse("PMEVCNTR31_EL0", &enc, &err), DPMU_ENOENT);
}

/* Reference section 4, names as the Arm ARM writes them: AMEVCNTR0<n>_EL0
 * with n in decimal (AMEVCNTR02_EL0 is group 0 counter 2, AMEVTYPER12_EL0
 * group 1 type 2), n = 0..15. */
static void test_amu_registers_round_trip(void **state)
{
	(void)state;
	char name[32];
	for (unsigned n = 0; n <= 15; n++) {
		snprintf(name, sizeof name, "AMEVCNTR0%u_EL0", n);
		check_one(name, DPMU_SYSREG(3, 3, 13, 4 + (n >> 3), n & 7));
		snprintf(name, sizeof name, "AMEVTYPER0%u_EL0", n);
		check_one(name, DPMU_SYSREG(3, 3, 13, 6 + (n >> 3), n & 7));
		snprintf(name, sizeof name, "AMEVCNTR1%u_EL0", n);
		check_one(name, DPMU_SYSREG(3, 3, 13, 12 + (n >> 3), n & 7));
		snprintf(name, sizeof name, "AMEVTYPER1%u_EL0", n);
		check_one(name, DPMU_SYSREG(3, 3, 13, 14 + (n >> 3), n & 7));
	}
	check_one("AMEVCNTR02_EL0", DPMU_SYSREG(3, 3, 13, 4, 2));
	check_one("AMEVTYPER12_EL0", DPMU_SYSREG(3, 3, 13, 14, 2));
	check_one("AMEVCNTR012_EL0", DPMU_SYSREG(3, 3, 13, 5, 4));
	uint32_t enc;
	struct dpmu_err err;
	assert_int_equal(dpmu_sysreg_parse("AMEVCNTR016_EL0", &enc, &err), DPMU_ENOENT);
	assert_int_equal(dpmu_sysreg_parse("AMEVCNTR2_EL0", &enc, &err), DPMU_ENOENT);
	/* Seed 003's AMEVTYPER3 encoding S3_3_C13_C2_2 is AMCGCR_EL0 in the
	 * architected map (reference section 4). */
	assert_int_equal(dpmu_sysreg_parse("S3_3_C13_C2_2", &enc, &err), 0);
	assert_string_equal(dpmu_sysreg_name(enc), "AMCGCR_EL0");
}

static void test_table_is_complete_and_unique(void **state)
{
	(void)state;
	size_t n;
	const struct dpmu_sysreg_desc *t = dpmu_sysreg_table(&n);
	/* Every trace unit register with a System register encoding is named,
	 * at the encoding its frame offset gives (dpmu/etm.h). */
	size_t netm_regs, netm = 0;
	const struct dpmu_etm_reg *er = dpmu_etm_regs(&netm_regs);
	for (size_t i = 0; i < netm_regs; i++) {
		if (er[i].flags & DPMU_ETM_EXT_ONLY)
			continue;
		for (unsigned k = 0; k < er[i].count; k++, netm++) {
			char name[32];
			uint32_t off = er[i].offset + k * (er[i].count > 1 ? er[i].stride : 0);
			assert_non_null(dpmu_etm_name(off, name, sizeof name));
			uint32_t enc;
			assert_int_equal(dpmu_sysreg_parse(name, &enc, NULL), 0);
			assert_int_equal(enc, dpmu_etm_sysreg_enc(off));
		}
	}
	/* fixed + 31 x 2 PMEV + 16 x 4 AMEV + the trace unit's */
	assert_int_equal(n, sizeof fixed / sizeof fixed[0] + 62 + 64 + netm);
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++) {
			if (t[i].enc == t[k].enc)
				fail_msg("%s and %s share encoding 0x%x", t[i].name, t[k].name, t[i].enc);
			assert_true(strcasecmp(t[i].name, t[k].name) != 0);
		}
}

static void test_generic_and_numeric_forms(void **state)
{
	(void)state;
	uint32_t enc;
	struct dpmu_err err;
	assert_int_equal(dpmu_sysreg_parse("3:3:9:12:0", &enc, &err), 0);
	assert_string_equal(dpmu_sysreg_name(enc), "PMCR_EL0");
	assert_int_equal(dpmu_sysreg_parse("s3_0_c15_c5_0", &enc, &err), 0);
	assert_string_equal(dpmu_sysreg_name(enc), "CLUSTERPMCR_EL1");
	/* A valid encoding the model does not implement still parses; it has no name. */
	assert_int_equal(dpmu_sysreg_parse("3:0:1:0:0", &enc, &err), 0);
	assert_int_equal(enc, DPMU_SYSREG(3, 0, 1, 0, 0));
	assert_null(dpmu_sysreg_name(enc));
}

struct bad {
	const char *text;
	int code;
	const char *needle; /* must appear in the message */
};

static void test_bad_input_is_refused(void **state)
{
	(void)state;
	static const struct bad bad[] = {
		{"4:0:0:0:0", DPMU_ERANGE, "op0 must be 0 to 3, got 4"},
		{"3:8:9:12:0", DPMU_ERANGE, "op1 must be 0 to 7, got 8"},
		{"3:3:16:12:0", DPMU_ERANGE, "CRn must be 0 to 15, got 16"},
		{"3:3:9:99:0", DPMU_ERANGE, "CRm must be 0 to 15, got 99"},
		{"3:3:9:12:8", DPMU_ERANGE, "op2 must be 0 to 7, got 8"},
		{"3:3:9:12:99999999999999999999", DPMU_ERANGE, "op2 must be 0 to 7"},
		{"3:3:9:12", DPMU_EINVAL, "after CRm"},
		{"3:3:9:12:0:1", DPMU_EINVAL, "after op2"},
		{"3:3:x:12:0", DPMU_EINVAL, "CRn must be a decimal number"},
		{"3:3:-9:12:0", DPMU_EINVAL, "CRn must be a decimal number"},
		{"3:3:9:12:", DPMU_EINVAL, "op2 must be a decimal number"},
		{"S3_3_9_C12_0", DPMU_EINVAL, "expected 'C' before CRn"},
		{"PMCR", DPMU_ENOENT, "'PMCR' is not a register"},
		{"PMCR_EL1", DPMU_ENOENT, "(did you mean PMCR_EL0?)"},
		{"PMCR_EL0 ", DPMU_ENOENT, "is not a register"},
		{"", DPMU_EINVAL, "no register given"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint32_t enc = 0x1234;
		struct dpmu_err err;
		dpmu_err_clear(&err);
		int rc = dpmu_sysreg_parse(bad[i].text, &enc, &err);
		if (rc != bad[i].code || !strstr(err.msg, bad[i].needle))
			fail_msg("'%s': rc %d msg '%s'; want %d and '%s'", bad[i].text, rc, err.msg,
				 bad[i].code, bad[i].needle);
		assert_int_equal(enc, 0x1234); /* untouched on error */
	}
	struct dpmu_err err;
	uint32_t enc;
	assert_int_equal(dpmu_sysreg_parse(NULL, &enc, &err), DPMU_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed_registers_round_trip),
		cmocka_unit_test(test_pmev_registers_round_trip),
		cmocka_unit_test(test_amu_registers_round_trip),
		cmocka_unit_test(test_table_is_complete_and_unique),
		cmocka_unit_test(test_generic_and_numeric_forms),
		cmocka_unit_test(test_bad_input_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
