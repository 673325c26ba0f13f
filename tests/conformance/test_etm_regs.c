/*
 * The trace unit's programmers' model (ETMv4.2, Arm IHI 0064): System
 * register encodings, the access rules of both interfaces (EL, CPTR.TTA,
 * power, OS double lock, the trace unit's OS lock, authentication, the
 * software lock), identification, stored bits, and programming only while
 * idle. Seed 003 section 1 gives the features TRCIDR reports.
 */
#include "conformance.h"

#include "dynpmu/etm.h"

#define ETM(i) ((struct dpmu_frame){ DPMU_FRAME_ETM, (i) })

static uint32_t enc_of(const char *name)
{
	uint32_t enc = 0;
	struct dpmu_err err;
	if (dpmu_sysreg_parse(name, &enc, &err) != 0)
		fail_msg("%s: %s", name, dpmu_errmsg(&err));
	return enc;
}

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

/* The frame, unlocked (software lock and OS lock), for rules about the
 * registers rather than the locks. */
static void etm_open(struct dpmu_model *m, unsigned core)
{
	conf_xwr(m, ETM(core), DPMU_TRCLAR, DPMU_TRCLAR_KEY);
	conf_xwr(m, ETM(core), DPMU_TRCOSLAR, 0);
}

static void refused_read(struct dpmu_model *m, unsigned core, uint32_t off)
{
	uint32_t v = 0x1234;
	assert_int_equal(dpmu_model_ext_read(m, ETM(core), off, false, &v), DPMU_EIO);
	assert_int_equal(v, 0);
}

/* IHI 0064, System register encodings: published encodings of a few
 * registers (op0 = 2, op1 = 1). */
static void TRC_sysreg_encodings_follow_the_offset(void **state)
{
	(void)state;
	assert_int_equal(enc_of("TRCPRGCTLR"), DPMU_SYSREG(2, 1, 0, 1, 0));
	assert_int_equal(enc_of("TRCCONFIGR"), DPMU_SYSREG(2, 1, 0, 4, 0));
	assert_int_equal(enc_of("TRCIDR0"), DPMU_SYSREG(2, 1, 0, 8, 7));
	assert_int_equal(enc_of("TRCIDR8"), DPMU_SYSREG(2, 1, 0, 0, 6));
	assert_int_equal(enc_of("TRCOSLAR"), DPMU_SYSREG(2, 1, 1, 0, 4));
	assert_int_equal(enc_of("TRCACVR7"), DPMU_SYSREG(2, 1, 2, 14, 0));
	assert_int_equal(enc_of("TRCACATR0"), DPMU_SYSREG(2, 1, 2, 0, 2));
	assert_int_equal(enc_of("TRCVMIDCVR0"), DPMU_SYSREG(2, 1, 3, 0, 1));
	assert_int_equal(enc_of("TRCDEVARCH"), DPMU_SYSREG(2, 1, 7, 15, 6));
	for (uint32_t off = 0; off < DPMU_ETM_FRAME_SIZE; off += 4) {
		long back = dpmu_etm_sysreg_offset(dpmu_etm_sysreg_enc(off));
		assert_true(back < 0 || back == (long)off);
	}
	/* TRCLAR and TRCLSR exist only in the frame. */
	assert_true(dpmu_etm_sysreg_offset(dpmu_etm_sysreg_enc(DPMU_TRCLAR)) < 0);
}

/* TRCDEVARCH identifies an ETMv4.2 whatever the locks and power; the
 * CoreSight identification and TRCDEVTYPE (trace source, processor). */
static void TRCDEVARCH_identifies_ETMv4_2_always(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(conf_xrd(m, ETM(0), DPMU_TRCDEVARCH), DPMU_TRCDEVARCH_ETMV4_2);
	assert_int_equal(dpmu_model_set_power(m, 1, false, NULL), 0);
	assert_int_equal(dpmu_model_set_extauth(m, 1, false, NULL), 0);
	assert_int_equal(conf_xrd(m, ETM(1), DPMU_TRCDEVARCH), DPMU_TRCDEVARCH_ETMV4_2);
	assert_int_equal(conf_xrd(m, ETM(0), DPMU_TRCDEVTYPE), 0x13);
	assert_int_equal(conf_xrd(m, ETM(0), DPMU_TRCCIDR(1)), 0x90);
	assert_int_equal(conf_xrd(m, ETM(0), DPMU_TRCPIDR4), 0x4);
	assert_int_equal(conf_rd(m, 0, enc_of("TRCDEVARCH")), DPMU_TRCDEVARCH_ETMV4_2);
}

/* Seed 003 section 1 as TRCIDR reports it: 64-bit instruction addresses,
 * 32-bit context ID, VMID, 2 counters, 4 address comparator pairs, cycle
 * counting; TRCIDR1 an ETMv4.2 by Arm. */
static void TRCIDR_reports_the_seed_features(void **state)
{
	struct dpmu_model *m = *state;
	uint64_t idr0 = conf_rd(m, 0, enc_of("TRCIDR0"));
	uint64_t idr1 = conf_rd(m, 0, enc_of("TRCIDR1"));
	uint64_t idr2 = conf_rd(m, 0, enc_of("TRCIDR2"));
	uint64_t idr4 = conf_rd(m, 0, enc_of("TRCIDR4"));
	uint64_t idr5 = conf_rd(m, 0, enc_of("TRCIDR5"));
	assert_true(idr0 & (1u << 7));                    /* TRCCCI */
	assert_int_equal((idr0 >> 24) & 0x1f, 0x8);       /* TSSIZE: 64 bits */
	assert_int_equal((idr1 >> 8) & 0xf, 4);           /* TRCARCHMAJ */
	assert_int_equal((idr1 >> 4) & 0xf, 2);           /* TRCARCHMIN */
	assert_int_equal(idr1 >> 24, 0x41);               /* DESIGNER: Arm */
	assert_int_equal(idr2 & 0x1f, 0x8);               /* IASIZE: 64 bits */
	assert_int_equal((idr2 >> 5) & 0x1f, 0x4);        /* CIDSIZE: 32 bits */
	assert_int_not_equal((idr2 >> 10) & 0x1f, 0);     /* VMIDSIZE */
	assert_int_equal(idr4 & 0xf, 4);                  /* NUMACPAIRS */
	assert_int_equal((idr5 >> 28) & 7, 2);            /* NUMCNTR */
	/* The frame reads the same values. */
	etm_open(m, 0);
	assert_int_equal(conf_xrd(m, ETM(0), DPMU_TRCIDR(4)), idr4);
	assert_int_equal(conf_xrd(m, ETM(0), DPMU_TRCIDR(0)), idr0);
}

/* The trace System registers are EL1 registers: UNDEFINED at EL0. */
static void TRC_sysregs_are_UNDEFINED_at_EL0(void **state)
{
	struct dpmu_model *m = *state;
	assert_int_equal(dpmu_model_set_el(m, 0, 0, DPMU_NONSECURE, NULL), 0);
	uint64_t v;
	assert_int_equal(dpmu_model_sysreg_read(m, 0, enc_of("TRCCONFIGR"), &v).kind,
			 DPMU_ACCESS_UNDEF);
	assert_int_equal(dpmu_model_sysreg_write(m, 0, enc_of("TRCPRGCTLR"), 1).kind,
			 DPMU_ACCESS_UNDEF);
}

/* CPTR_EL2.TTA traps EL1 to EL2; CPTR_EL3.TTA traps EL2 to EL3. */
static void CPTR_TTA_traps_trace_sysregs(void **state)
{
	struct dpmu_model *m = *state;
	uint64_t v;
	assert_int_equal(dpmu_model_set_el(m, 0, 2, DPMU_NONSECURE, NULL), 0);
	conf_wr(m, 0, enc_of("CPTR_EL2"), 1u << 20);
	assert_int_equal(dpmu_model_set_el(m, 0, 1, DPMU_NONSECURE, NULL), 0);
	struct dpmu_access a = dpmu_model_sysreg_read(m, 0, enc_of("TRCCONFIGR"), &v);
	assert_int_equal(a.kind, DPMU_ACCESS_TRAP);
	assert_int_equal(a.el, 2);
	assert_int_equal(dpmu_model_set_el(m, 0, 3, DPMU_SECURE, NULL), 0);
	conf_wr(m, 0, enc_of("CPTR_EL3"), 1u << 20);
	assert_int_equal(dpmu_model_set_el(m, 0, 2, DPMU_NONSECURE, NULL), 0);
	a = dpmu_model_sysreg_read(m, 0, enc_of("TRCCONFIGR"), &v);
	assert_int_equal(a.kind, DPMU_ACCESS_TRAP);
	assert_int_equal(a.el, 3);
	assert_int_equal(dpmu_model_set_el(m, 0, 3, DPMU_SECURE, NULL), 0);
	(void)conf_rd(m, 0, enc_of("TRCCONFIGR"));
}

/* MSR to a read-only register and MRS of a write-only one are UNDEFINED. */
static void TRC_readonly_and_writeonly_sysregs(void **state)
{
	struct dpmu_model *m = *state;
	uint64_t v;
	assert_int_equal(dpmu_model_sysreg_write(m, 0, enc_of("TRCSTATR"), 0).kind,
			 DPMU_ACCESS_UNDEF);
	assert_int_equal(dpmu_model_sysreg_write(m, 0, enc_of("TRCIDR0"), 0).kind,
			 DPMU_ACCESS_UNDEF);
	assert_int_equal(dpmu_model_sysreg_read(m, 0, enc_of("TRCOSLAR"), &v).kind,
			 DPMU_ACCESS_UNDEF);
}

/* A Cold reset sets TRCOSLSR.OSLK; with it set, the frame refuses the
 * trace registers but TRCOSLSR and TRCOSLAR answer, and the System
 * registers still work (the OS saves and restores through them). */
static void TRCOSLSR_OSLK_refuses_the_frame_not_the_sysregs(void **state)
{
	struct dpmu_model *m = *state;
	assert_true(conf_rd(m, 0, enc_of("TRCOSLSR")) & DPMU_TRCOSLSR_OSLK);
	refused_read(m, 0, DPMU_TRCCONFIGR);
	assert_true(conf_xrd(m, ETM(0), DPMU_TRCOSLSR) & DPMU_TRCOSLSR_OSLK);
	conf_wr(m, 0, enc_of("TRCCONFIGR"), DPMU_TRCCONFIGR_CCI);
	assert_int_equal(conf_rd(m, 0, enc_of("TRCCONFIGR")), DPMU_TRCCONFIGR_CCI);
	conf_xwr(m, ETM(0), DPMU_TRCLAR, DPMU_TRCLAR_KEY);
	conf_xwr(m, ETM(0), DPMU_TRCOSLAR, 0);      /* unlock by the frame */
	assert_int_equal(conf_xrd(m, ETM(0), DPMU_TRCCONFIGR), DPMU_TRCCONFIGR_CCI);
	conf_wr(m, 0, enc_of("TRCOSLAR"), 1);       /* lock by MSR */
	refused_read(m, 0, DPMU_TRCCONFIGR);
}

/* IsCorePowered() and DoubleLockStatus() refuse the frame; powering up is a
 * Cold reset (registers lost, OS lock set, TRCPDSR.STICKYPD set until read). */
static void power_and_double_lock_refuse_the_frame(void **state)
{
	struct dpmu_model *m = *state;
	etm_open(m, 1);
	conf_xwr(m, ETM(1), DPMU_TRCTRACEIDR, 0x10);
	assert_int_equal(dpmu_model_set_doublelock(m, 1, true, NULL), 0);
	refused_read(m, 1, DPMU_TRCTRACEIDR);
	assert_int_equal(dpmu_model_set_doublelock(m, 1, false, NULL), 0);
	assert_int_equal(conf_xrd(m, ETM(1), DPMU_TRCTRACEIDR), 0x10);
	(void)conf_xrd(m, ETM(1), DPMU_TRCPDSR);    /* clears STICKYPD */
	assert_int_equal(conf_xrd(m, ETM(1), DPMU_TRCPDSR) & DPMU_TRCPDSR_STICKYPD, 0);

	assert_int_equal(dpmu_model_set_power(m, 1, false, NULL), 0);
	refused_read(m, 1, DPMU_TRCTRACEIDR);
	assert_int_equal(dpmu_model_ext_write(m, ETM(1), DPMU_TRCOSLAR, false, 0), DPMU_EIO);
	assert_int_equal(dpmu_model_set_power(m, 1, true, NULL), 0);
	uint32_t pdsr = conf_xrd(m, ETM(1), DPMU_TRCPDSR);
	assert_true(pdsr & DPMU_TRCPDSR_STICKYPD);
	assert_true(pdsr & DPMU_TRCPDSR_OSLK);
	assert_int_equal(conf_xrd(m, ETM(1), DPMU_TRCPDSR) & DPMU_TRCPDSR_STICKYPD, 0);
	conf_xwr(m, ETM(1), DPMU_TRCOSLAR, 0);
	assert_int_equal(conf_xrd(m, ETM(1), DPMU_TRCTRACEIDR), 0);
}

/* ExternalNoninvasiveDebugEnabled() refuses non-secure accesses; secure
 * ones pass; TRCAUTHSTATUS.NSNID reports it. */
static void authentication_refuses_nonsecure_frame_access(void **state)
{
	struct dpmu_model *m = *state;
	etm_open(m, 0);
	assert_int_equal((conf_xrd(m, ETM(0), DPMU_TRCAUTHSTATUS) >> 2) & 3, 3);
	assert_int_equal(dpmu_model_set_extauth(m, 0, false, NULL), 0);
	assert_int_equal((conf_xrd(m, ETM(0), DPMU_TRCAUTHSTATUS) >> 2) & 3, 2);
	refused_read(m, 0, DPMU_TRCCONFIGR);
	uint32_t v;
	assert_int_equal(dpmu_model_ext_read(m, ETM(0), DPMU_TRCCONFIGR, true, &v), 0);
	assert_int_equal(dpmu_model_ext_write(m, ETM(0), DPMU_TRCTRACEIDR, true, 3), 0);
	assert_int_equal(conf_rd(m, 0, enc_of("TRCTRACEIDR")), 3);
}

/* TRCLSR.SLK is set by an external debug reset; while set, frame writes are
 * ignored without an error; the TRCLAR key clears it, another value sets it. */
static void TRCLSR_SLK_makes_the_frame_read_only(void **state)
{
	struct dpmu_model *m = *state;
	conf_xwr(m, ETM(0), DPMU_TRCOSLAR, 0);   /* ignored: locked */
	assert_true(conf_xrd(m, ETM(0), DPMU_TRCLSR) & DPMU_TRCLSR_SLK);
	assert_true(conf_xrd(m, ETM(0), DPMU_TRCOSLSR) & DPMU_TRCOSLSR_OSLK);
	conf_xwr(m, ETM(0), DPMU_TRCLAR, DPMU_TRCLAR_KEY);
	assert_false(conf_xrd(m, ETM(0), DPMU_TRCLSR) & DPMU_TRCLSR_SLK);
	conf_xwr(m, ETM(0), DPMU_TRCOSLAR, 0);
	conf_xwr(m, ETM(0), DPMU_TRCTRACEIDR, 5);
	conf_xwr(m, ETM(0), DPMU_TRCLAR, 0);
	conf_xwr(m, ETM(0), DPMU_TRCTRACEIDR, 6);
	assert_int_equal(conf_xrd(m, ETM(0), DPMU_TRCTRACEIDR), 5);
	/* The System registers have no software lock. */
	conf_wr(m, 0, enc_of("TRCTRACEIDR"), 7);
	assert_int_equal(conf_xrd(m, ETM(0), DPMU_TRCTRACEIDR), 7);
}

/* One state behind both interfaces: a 64-bit comparator value written by
 * MSR is the two frame words, and the frame's words make the MRS value. */
static void both_interfaces_reach_one_register_file(void **state)
{
	struct dpmu_model *m = *state;
	etm_open(m, 0);
	conf_wr(m, 0, enc_of("TRCACVR3"), 0x0000ffff12345678ull);
	assert_int_equal(conf_xrd(m, ETM(0), DPMU_TRCACVR(3)), 0x12345678);
	assert_int_equal(conf_xrd(m, ETM(0), DPMU_TRCACVR(3) + 4), 0x0000ffff);
	conf_xwr(m, ETM(0), DPMU_TRCACVR(3) + 4, 0xffff0000);
	assert_int_equal(conf_rd(m, 0, enc_of("TRCACVR3")), 0xffff000012345678ull);
	conf_xwr(m, ETM(0), DPMU_TRCRSCTLR(2), 0x00010001);
	assert_int_equal(conf_rd(m, 0, enc_of("TRCRSCTLR2")), 0x00010001);
}

/* Registers keep only the fields the trace unit implements: TRCCONFIGR CCI,
 * CID, VMID, TS; 16-bit counters; a 7-bit trace ID. */
static void TRC_registers_keep_implemented_bits(void **state)
{
	struct dpmu_model *m = *state;
	conf_wr(m, 0, enc_of("TRCCONFIGR"), ~0ull);
	assert_int_equal(conf_rd(m, 0, enc_of("TRCCONFIGR")),
			 DPMU_TRCCONFIGR_CCI | DPMU_TRCCONFIGR_CID | DPMU_TRCCONFIGR_VMID |
				 DPMU_TRCCONFIGR_TS);
	conf_wr(m, 0, enc_of("TRCCNTVR1"), 0x12345);
	assert_int_equal(conf_rd(m, 0, enc_of("TRCCNTVR1")), 0x2345);
	conf_wr(m, 0, enc_of("TRCTRACEIDR"), 0xff);
	assert_int_equal(conf_rd(m, 0, enc_of("TRCTRACEIDR")), 0x7f);
}

/* TRCSTATR.IDLE and PMSTABLE follow TRCPRGCTLR.EN; configuration written
 * while enabled does not take (programming is for an idle trace unit). */
static void TRCPRGCTLR_EN_and_TRCSTATR(void **state)
{
	struct dpmu_model *m = *state;
	uint64_t idle = DPMU_TRCSTATR_IDLE | DPMU_TRCSTATR_PMSTABLE;
	assert_int_equal(conf_rd(m, 0, enc_of("TRCSTATR")), idle);
	conf_wr(m, 0, enc_of("TRCTRACEIDR"), 0x11);
	conf_wr(m, 0, enc_of("TRCPRGCTLR"), 1);
	assert_int_equal(conf_rd(m, 0, enc_of("TRCSTATR")), 0);
	conf_wr(m, 0, enc_of("TRCTRACEIDR"), 0x22);
	assert_int_equal(conf_rd(m, 0, enc_of("TRCTRACEIDR")), 0x11);
	conf_wr(m, 0, enc_of("TRCPRGCTLR"), 0);
	assert_int_equal(conf_rd(m, 0, enc_of("TRCSTATR")), idle);
	conf_wr(m, 0, enc_of("TRCTRACEIDR"), 0x22);
	assert_int_equal(conf_rd(m, 0, enc_of("TRCTRACEIDR")), 0x22);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(TRC_sysreg_encodings_follow_the_offset),
		cmocka_unit_test_setup_teardown(TRCDEVARCH_identifies_ETMv4_2_always, setup, teardown),
		cmocka_unit_test_setup_teardown(TRCIDR_reports_the_seed_features, setup, teardown),
		cmocka_unit_test_setup_teardown(TRC_sysregs_are_UNDEFINED_at_EL0, setup, teardown),
		cmocka_unit_test_setup_teardown(CPTR_TTA_traps_trace_sysregs, setup, teardown),
		cmocka_unit_test_setup_teardown(TRC_readonly_and_writeonly_sysregs, setup, teardown),
		cmocka_unit_test_setup_teardown(TRCOSLSR_OSLK_refuses_the_frame_not_the_sysregs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(power_and_double_lock_refuse_the_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(authentication_refuses_nonsecure_frame_access, setup,
						teardown),
		cmocka_unit_test_setup_teardown(TRCLSR_SLK_makes_the_frame_read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(both_interfaces_reach_one_register_file, setup, teardown),
		cmocka_unit_test_setup_teardown(TRC_registers_keep_implemented_bits, setup, teardown),
		cmocka_unit_test_setup_teardown(TRCPRGCTLR_EN_and_TRCSTATR, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
