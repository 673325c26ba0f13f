/*
 * Activity Monitors (FEAT_AMUv1): one rule per test (Arm ARM D24.6 register
 * descriptions and accessibility pseudocode, reference section 4, seed 003
 * section 5 for the Cortex-A75's counter set).
 */
#include "conformance.h"

#define AMCR_EL0 DPMU_SYSREG(3, 3, 13, 2, 0)
#define AMCFGR_EL0 DPMU_SYSREG(3, 3, 13, 2, 1)
#define AMCGCR_EL0 DPMU_SYSREG(3, 3, 13, 2, 2)
#define AMUSERENR_EL0 DPMU_SYSREG(3, 3, 13, 2, 3)
#define AMCNTENCLR0_EL0 DPMU_SYSREG(3, 3, 13, 2, 4)
#define AMCNTENSET0_EL0 DPMU_SYSREG(3, 3, 13, 2, 5)
#define AMCNTENCLR1_EL0 DPMU_SYSREG(3, 3, 13, 3, 0)
#define AMCNTENSET1_EL0 DPMU_SYSREG(3, 3, 13, 3, 1)
#define AMEVCNTR0(n) DPMU_SYSREG(3, 3, 13, 4 + ((n) >> 3), (n) & 7)
#define AMEVTYPER0(n) DPMU_SYSREG(3, 3, 13, 6 + ((n) >> 3), (n) & 7)
#define AMEVCNTR1(n) DPMU_SYSREG(3, 3, 13, 12 + ((n) >> 3), (n) & 7)
#define AMEVTYPER1(n) DPMU_SYSREG(3, 3, 13, 14 + ((n) >> 3), (n) & 7)

#define CPTR_EL2 DPMU_SYSREG(3, 4, 1, 1, 2)
#define CPTR_EL3 DPMU_SYSREG(3, 6, 1, 1, 2)
#define TAM (1ull << 30)

/* Group-0 counter numbers of the architected events (Arm ARM D24.6.13). */
#define CNT_CORE 0
#define CNT_CONST 1
#define CNT_INST 2

static void set_el(struct dpmu_model *m, unsigned core, unsigned el, enum dpmu_security sec)
{
	struct dpmu_err err;
	if (dpmu_model_set_el(m, core, el, sec, &err) != 0)
		fail_msg("set_el: %s", dpmu_errmsg(&err));
}

static void el3(struct dpmu_model *m, unsigned core)
{
	set_el(m, core, 3, DPMU_SECURE);
}

static const struct dpmu_core_type *ctype(struct dpmu_model *m, unsigned core)
{
	unsigned cl, idx;
	return dpmu_profile_core(dpmu_model_profile(m), core, &cl, &idx);
}

static struct dpmu_access rd(struct dpmu_model *m, unsigned core, uint32_t enc)
{
	uint64_t v;
	return dpmu_model_sysreg_read(m, core, enc, &v);
}

static void assert_trap(struct dpmu_access a, unsigned el)
{
	assert_int_equal(a.kind, DPMU_ACCESS_TRAP);
	assert_int_equal(a.el, el);
}

/* Firmware at EL3 enables every implemented counter and lets EL0 in
 * (AMUSERENR_EL0 written at EL1); the core is left at Non-secure EL1. */
static struct dpmu_model *amu_model(void)
{
	struct dpmu_model *m = conf_model(NULL);
	el3(m, 0);
	conf_wr(m, 0, AMCNTENSET0_EL0, ~0ull);
	if (ctype(m, 0)->amu_group1)
		conf_wr(m, 0, AMCNTENSET1_EL0, ~0ull);
	set_el(m, 0, 1, DPMU_NONSECURE);
	return m;
}

/* Set CPTR_EL3.TAM at EL3 and CPTR_EL2.TAM at EL2 (CPTR_EL2 is not an AMU
 * register: CPTR_EL3.TAM does not trap it), then go to (el, sec). */
static void set_tam(struct dpmu_model *m, bool el2, bool el3_, unsigned el,
		    enum dpmu_security sec)
{
	el3(m, 0);
	conf_wr(m, 0, CPTR_EL3, el3_ ? TAM : 0);
	set_el(m, 0, 2, DPMU_NONSECURE);
	conf_wr(m, 0, CPTR_EL2, el2 ? TAM : 0);
	set_el(m, 0, el, sec);
}

static void set_userenr(struct dpmu_model *m, bool en)
{
	set_el(m, 0, 1, DPMU_NONSECURE);
	conf_wr(m, 0, AMUSERENR_EL0, en ? 1 : 0);
}

/* Arm ARM D24.6.13 AMEVTYPER0<n>_EL0: the architected event numbers are
 * mandated per counter: 0x11 processor cycles, 0x4004 constant-frequency
 * cycles (seed 003 writes 0xEF; the architecture wins), 0x08 instructions
 * retired. */
static void AMEVTYPER0_reports_the_architected_fixed_events(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	assert_int_equal(conf_rd(m, 0, AMEVTYPER0(CNT_CORE)), 0x11);
	assert_int_equal(conf_rd(m, 0, AMEVTYPER0(CNT_CONST)), 0x4004);
	assert_int_equal(conf_rd(m, 0, AMEVTYPER0(CNT_INST)), 0x08);
	dpmu_model_destroy(m);
}

/* AMEVTYPER0<n>, AMCFGR_EL0 and AMCGCR_EL0 have no MSR form: UNDEFINED
 * even at EL3. */
static void AMU_read_only_registers_have_no_MSR(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	el3(m, 0);
	assert_int_equal(dpmu_model_sysreg_write(m, 0, AMEVTYPER0(0), 0x24).kind,
			 DPMU_ACCESS_UNDEF);
	assert_int_equal(dpmu_model_sysreg_write(m, 0, AMCFGR_EL0, 0).kind, DPMU_ACCESS_UNDEF);
	assert_int_equal(dpmu_model_sysreg_write(m, 0, AMCGCR_EL0, 0).kind, DPMU_ACCESS_UNDEF);
	assert_int_equal(conf_rd(m, 0, AMEVTYPER0(0)), 0x11);
	dpmu_model_destroy(m);
}

/* Arm ARM D24.6.1 AMCFGR_EL0: N [7:0] = counters in all groups - 1, SIZE
 * [13:8] = 63 (64-bit counters), HDBG bit 24 = 1, NCG [31:28] = groups - 1.
 * Seed 003 section 5: the Cortex-A75 AMU has 5 counters in 2 groups. */
static void AMCFGR_reports_N_SIZE_HDBG_and_NCG(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	const struct dpmu_core_type *t = ctype(m, 0);
	uint64_t v = conf_rd(m, 0, AMCFGR_EL0);
	assert_int_equal(v & 0xff, t->amu_group0 + t->amu_group1 - 1);
	assert_int_equal(v & 0xff, 5);
	assert_int_equal((v >> 8) & 0x3f, 63);
	assert_int_equal((v >> 24) & 1, 1);
	assert_int_equal((v >> 28) & 0xf, 1);
	dpmu_model_destroy(m);
}

/* Arm ARM D24.6.3 AMCGCR_EL0: CG0NC [7:0], CG1NC [15:8]. AMUv1 fixes CG0NC
 * at 4 architected counters (seed 003 fits 3; the architecture wins), and
 * the seed's 2 programmable counters. */
static void AMCGCR_reports_the_counters_of_each_group(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	uint64_t v = conf_rd(m, 0, AMCGCR_EL0);
	assert_int_equal(v & 0xff, ctype(m, 0)->amu_group0);
	assert_int_equal((v >> 8) & 0xff, ctype(m, 0)->amu_group1);
	assert_int_equal(v, 4 | (2 << 8));
	dpmu_model_destroy(m);
}

/* Arm ARM D24.6.9/10/13/14: "If <n> is greater than or equal to the number
 * of ... counters, reads and writes of AMEVCNTR/AMEVTYPER<n> are UNDEFINED",
 * checked before any trap. */
static void AMU_unimplemented_counter_registers_are_UNDEFINED(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	unsigned n0 = ctype(m, 0)->amu_group0, n1 = ctype(m, 0)->amu_group1;
	for (unsigned el = 0; el <= 3; el++) {
		set_el(m, 0, el, el == 3 ? DPMU_SECURE : DPMU_NONSECURE);
		assert_int_equal(rd(m, 0, AMEVCNTR0(n0)).kind, DPMU_ACCESS_UNDEF);
		assert_int_equal(rd(m, 0, AMEVTYPER0(n0)).kind, DPMU_ACCESS_UNDEF);
		assert_int_equal(rd(m, 0, AMEVCNTR1(n1)).kind, DPMU_ACCESS_UNDEF);
		assert_int_equal(rd(m, 0, AMEVTYPER1(15)).kind, DPMU_ACCESS_UNDEF);
		assert_int_equal(dpmu_model_sysreg_write(m, 0, AMEVCNTR1(n1), 0).kind,
				 DPMU_ACCESS_UNDEF);
	}
	dpmu_model_destroy(m);
}

/* Arm ARM D24.6.15 AMUSERENR_EL0.EN = 0: EL0 accesses to the AMU registers
 * trap to EL1. */
static void AMU_EL0_access_traps_to_EL1_without_AMUSERENR_EN(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	set_userenr(m, false);
	set_el(m, 0, 0, DPMU_NONSECURE);
	const uint32_t regs[] = { AMCR_EL0, AMCFGR_EL0, AMCGCR_EL0, AMCNTENSET0_EL0,
				  AMCNTENCLR1_EL0, AMEVCNTR0(0), AMEVTYPER0(2), AMEVCNTR1(1),
				  AMEVTYPER1(0) };
	for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++)
		assert_trap(rd(m, 0, regs[i]), 1);
	set_userenr(m, true);
	set_el(m, 0, 0, DPMU_NONSECURE);
	for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++)
		assert_int_equal(rd(m, 0, regs[i]).kind, DPMU_ACCESS_OK);
	dpmu_model_destroy(m);
}

/* Arm ARM D24.6.15 note: "AMUSERENR_EL0 can always be read at EL0 and is
 * not governed by this bit". */
static void AMUSERENR_EL0_is_always_readable_at_EL0(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	set_userenr(m, false);
	set_el(m, 0, 0, DPMU_NONSECURE);
	assert_int_equal(conf_rd(m, 0, AMUSERENR_EL0), 0);
	set_userenr(m, true);
	set_el(m, 0, 0, DPMU_NONSECURE);
	assert_int_equal(conf_rd(m, 0, AMUSERENR_EL0), 1);
	dpmu_model_destroy(m);
}

/* MSR AMUSERENR_EL0 pseudocode: UNDEFINED at EL0, writable at EL1/EL2/EL3;
 * only EN (bit 0) is stored. */
static void AMUSERENR_EL0_writable_at_EL1_and_above_only(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	set_userenr(m, true);
	set_el(m, 0, 0, DPMU_NONSECURE);
	assert_int_equal(dpmu_model_sysreg_write(m, 0, AMUSERENR_EL0, 0).kind,
			 DPMU_ACCESS_UNDEF);
	assert_int_equal(conf_rd(m, 0, AMUSERENR_EL0), 1);
	set_el(m, 0, 2, DPMU_NONSECURE);
	conf_wr(m, 0, AMUSERENR_EL0, 0xfe);
	assert_int_equal(conf_rd(m, 0, AMUSERENR_EL0), 0);
	el3(m, 0);
	conf_wr(m, 0, AMUSERENR_EL0, 1);
	assert_int_equal(conf_rd(m, 0, AMUSERENR_EL0), 1);
	dpmu_model_destroy(m);
}

/* CPTR_EL2.TAM traps EL0 and EL1 accesses to EL2 (Arm ARM D24.6). */
static void AMU_CPTR_EL2_TAM_traps_EL0_and_EL1_to_EL2(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	set_userenr(m, true);
	set_tam(m, true, false, 1, DPMU_NONSECURE);
	assert_trap(rd(m, 0, AMEVCNTR0(0)), 2);
	assert_trap(rd(m, 0, AMCFGR_EL0), 2);
	assert_trap(dpmu_model_sysreg_write(m, 0, AMUSERENR_EL0, 1), 2);
	set_el(m, 0, 0, DPMU_NONSECURE);
	assert_trap(rd(m, 0, AMEVCNTR0(0)), 2);
	assert_trap(rd(m, 0, AMUSERENR_EL0), 2);
	/* EL2 itself is not trapped by CPTR_EL2.TAM */
	set_el(m, 0, 2, DPMU_NONSECURE);
	assert_int_equal(rd(m, 0, AMEVCNTR0(0)).kind, DPMU_ACCESS_OK);
	dpmu_model_destroy(m);
}

/* CPTR_EL3.TAM traps EL0, EL1 and EL2 accesses to EL3; EL3 is not trapped. */
static void AMU_CPTR_EL3_TAM_traps_EL0_to_EL2_to_EL3(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	set_userenr(m, true);
	set_tam(m, false, true, 0, DPMU_NONSECURE);
	assert_trap(rd(m, 0, AMEVCNTR0(1)), 3);
	set_el(m, 0, 1, DPMU_NONSECURE);
	assert_trap(rd(m, 0, AMCGCR_EL0), 3);
	set_el(m, 0, 2, DPMU_NONSECURE);
	assert_trap(rd(m, 0, AMEVTYPER1(0)), 3);
	el3(m, 0);
	assert_int_equal(rd(m, 0, AMEVTYPER1(0)).kind, DPMU_ACCESS_OK);
	dpmu_model_destroy(m);
}

/* Pseudocode order: AMUSERENR_EL0.EN (to EL1), then CPTR_EL2.TAM (to EL2),
 * then CPTR_EL3.TAM (to EL3). */
static void AMU_trap_priority_is_AMUSERENR_then_CPTR_EL2_then_CPTR_EL3(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	set_userenr(m, false);
	set_tam(m, true, true, 0, DPMU_NONSECURE);
	assert_trap(rd(m, 0, AMEVCNTR0(0)), 1);
	set_el(m, 0, 1, DPMU_NONSECURE);
	assert_trap(rd(m, 0, AMEVCNTR0(0)), 2);
	set_el(m, 0, 2, DPMU_NONSECURE);
	assert_trap(rd(m, 0, AMEVCNTR0(0)), 3);
	/* with EN set, EL0 goes on to the EL2 trap */
	el3(m, 0);
	conf_wr(m, 0, AMUSERENR_EL0, 1);
	set_el(m, 0, 0, DPMU_NONSECURE);
	assert_trap(rd(m, 0, AMEVCNTR0(0)), 2);
	dpmu_model_destroy(m);
}

/* EL2Enabled() is false in Secure state (no FEAT_SEL2): CPTR_EL2.TAM does
 * not trap Secure EL0/EL1; CPTR_EL3.TAM still does. */
static void AMU_CPTR_EL2_TAM_does_not_trap_Secure_state(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	set_tam(m, true, false, 1, DPMU_SECURE);
	assert_int_equal(rd(m, 0, AMEVCNTR0(0)).kind, DPMU_ACCESS_OK);
	set_tam(m, true, true, 1, DPMU_SECURE);
	assert_trap(rd(m, 0, AMEVCNTR0(0)), 3);
	dpmu_model_destroy(m);
}

/* MSR AMEVCNTR0<n>/AMEVCNTR1<n>: "if IsHighestEL(PSTATE.EL) then write
 * else UNDEFINED" -- the seed's "usually EL2 and above" is, exactly,
 * the highest implemented EL (EL3 in this model). */
static void AMU_counter_writes_UNDEFINED_below_the_highest_EL(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	set_userenr(m, true);
	for (unsigned el = 0; el <= 2; el++) {
		set_el(m, 0, el, DPMU_NONSECURE);
		assert_int_equal(dpmu_model_sysreg_write(m, 0, AMEVCNTR0(0), 5).kind,
				 DPMU_ACCESS_UNDEF);
		assert_int_equal(dpmu_model_sysreg_write(m, 0, AMEVCNTR1(0), 5).kind,
				 DPMU_ACCESS_UNDEF);
	}
	set_el(m, 0, 1, DPMU_SECURE);
	assert_int_equal(dpmu_model_sysreg_write(m, 0, AMEVCNTR0(2), 5).kind,
			 DPMU_ACCESS_UNDEF);
	el3(m, 0);
	conf_wr(m, 0, AMEVCNTR0(2), 0x123456789abcull);
	conf_wr(m, 0, AMEVCNTR1(1), 42);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(2)), 0x123456789abcull);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR1(1)), 42);
	dpmu_model_destroy(m);
}

/* MSR AMCNTENSET0/CLR0/SET1/CLR1 and AMCR_EL0: highest EL only. */
static void AMU_enable_and_control_writes_UNDEFINED_below_the_highest_EL(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	const uint32_t regs[] = { AMCNTENSET0_EL0, AMCNTENCLR0_EL0, AMCNTENSET1_EL0,
				  AMCNTENCLR1_EL0, AMCR_EL0 };
	set_userenr(m, true);
	for (unsigned el = 0; el <= 2; el++) {
		set_el(m, 0, el, DPMU_NONSECURE);
		for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++)
			assert_int_equal(dpmu_model_sysreg_write(m, 0, regs[i], 1).kind,
					 DPMU_ACCESS_UNDEF);
	}
	assert_int_equal(conf_rd(m, 0, AMCNTENSET0_EL0), 0);
	dpmu_model_destroy(m);
}

/* MSR AMEVTYPER1<n>: highest EL only; evtCount [15:0] reads back. */
static void AMEVTYPER1_writable_at_the_highest_EL_only(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	uint16_t ev = ctype(m, 0)->amu_selectable[0];
	assert_int_equal(dpmu_model_sysreg_write(m, 0, AMEVTYPER1(0), ev).kind,
			 DPMU_ACCESS_UNDEF);
	el3(m, 0);
	conf_wr(m, 0, AMEVTYPER1(0), 0xffff0000ull | ev);
	assert_int_equal(conf_rd(m, 0, AMEVTYPER1(0)), ev);
	dpmu_model_destroy(m);
}

/* AMCR_EL0.HDBG (bit 10) is read/write since AMCFGR_EL0.HDBG = 1; CG1RZ
 * (AMUv1p1) and the rest are RES0. */
static void AMCR_EL0_stores_HDBG_only(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	el3(m, 0);
	conf_wr(m, 0, AMCR_EL0, ~0ull);
	assert_int_equal(conf_rd(m, 0, AMCR_EL0), 1u << 10);
	dpmu_model_destroy(m);
}

/* AMCNTENSET0 (W1S) enables and AMCNTENCLR0 (W1C) disables; both read the
 * enable mask; bits of unimplemented counters are RAZ/WI. */
static void AMCNTENSET0_sets_and_AMCNTENCLR0_clears_enables(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	unsigned n0 = ctype(m, 0)->amu_group0, n1 = ctype(m, 0)->amu_group1;
	el3(m, 0);
	assert_int_equal(conf_rd(m, 0, AMCNTENSET0_EL0), 0);
	conf_wr(m, 0, AMCNTENSET0_EL0, 0xffff);
	assert_int_equal(conf_rd(m, 0, AMCNTENCLR0_EL0), (1u << n0) - 1);
	conf_wr(m, 0, AMCNTENCLR0_EL0, 1);
	assert_int_equal(conf_rd(m, 0, AMCNTENSET0_EL0), ((1u << n0) - 1) & ~1u);
	conf_wr(m, 0, AMCNTENSET1_EL0, 0xffff);
	assert_int_equal(conf_rd(m, 0, AMCNTENSET1_EL0), (1u << n1) - 1);
	conf_wr(m, 0, AMCNTENCLR1_EL0, 0xffff);
	assert_int_equal(conf_rd(m, 0, AMCNTENCLR1_EL0), 0);
	dpmu_model_destroy(m);
}

/* Only enabled counters count (AMCNTENSET0 P<n> = 0: disabled). */
static void AMU_counts_only_enabled_counters(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	el3(m, 0);
	conf_wr(m, 0, AMCNTENSET0_EL0, 1u << CNT_INST);
	dpmu_model_core_cycles(m, 0, 500);
	dpmu_model_core_event(m, 0, DPMU_EV_INST_RETIRED, 40);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_CORE)), 0);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_CONST)), 0);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_INST)), 40);
	dpmu_model_destroy(m);
}

/* Group 0: the instructions-retired counter counts INST_RETIRED (0x08). */
static void AMU_group0_INST_RETIRED_counts_retired_instructions(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	dpmu_model_core_event(m, 0, DPMU_EV_INST_RETIRED, 1000);
	dpmu_model_core_event(m, 0, DPMU_EV_INST_RETIRED, 7);
	el3(m, 0);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_INST)), 1007);
	dpmu_model_destroy(m);
}

/* Group 0: the core-frequency counter counts CPU_CYCLES (0x11). */
static void AMU_group0_CPU_CYCLES_counts_core_cycles(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	dpmu_model_core_cycles(m, 0, 12345);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_CORE)), 12345);
	dpmu_model_destroy(m);
}

/* Seed 003 section 5: each programmable counter selects one of the
 * profile's events and counts it. */
static void AMU_group1_counter_counts_the_event_it_selects(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	const struct dpmu_core_type *t = ctype(m, 0);
	assert_int_equal(t->amu_n_selectable, 6);
	uint16_t a = t->amu_selectable[0], b = t->amu_selectable[1];
	el3(m, 0);
	conf_wr(m, 0, AMEVTYPER1(0), a);
	conf_wr(m, 0, AMEVTYPER1(1), b);
	set_el(m, 0, 1, DPMU_NONSECURE);
	dpmu_model_core_event(m, 0, a, 30);
	dpmu_model_core_event(m, 0, b, 4);
	dpmu_model_core_event(m, 0, a, 3);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR1(0)), a == b ? 37 : 33);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR1(1)), a == b ? 37 : 4);
	dpmu_model_destroy(m);
}

/* Arm ARM D24.6.14: a value the counter does not support counts an
 * UNPREDICTABLE event and reads back UNKNOWN; the model counts nothing
 * (reference section 4) and reads back 0, so software sees it was not
 * taken. */
static void AMU_group1_unselectable_event_counts_nothing(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	const struct dpmu_core_type *t = ctype(m, 0);
	uint16_t ev;
	for (ev = 0x01; ev < 0xffff; ev++) {
		bool found = false;
		for (size_t i = 0; i < t->amu_n_selectable; i++)
			found |= t->amu_selectable[i] == ev;
		if (!found && ev != DPMU_EV_CPU_CYCLES)
			break;
	}
	el3(m, 0);
	conf_wr(m, 0, AMEVTYPER1(0), ev);
	assert_int_equal(conf_rd(m, 0, AMEVTYPER1(0)), 0);
	dpmu_model_core_event(m, 0, ev, 99);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR1(0)), 0);
	dpmu_model_destroy(m);
}

/* Reference section 4: counters are 64-bit (AMCFGR.SIZE = 63), do not wrap
 * at 2^32 and have no overflow interrupt; at 2^64 they wrap silently. */
static void AMU_counters_are_64_bit_without_overflow_interrupt(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	el3(m, 0);
	conf_wr(m, 0, AMEVCNTR0(CNT_INST), 0xfffffff0ull);
	dpmu_model_core_event(m, 0, DPMU_EV_INST_RETIRED, 0x20);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_INST)), 0x100000010ull);
	conf_wr(m, 0, AMEVCNTR0(CNT_INST), ~0ull - 1);
	dpmu_model_core_event(m, 0, DPMU_EV_INST_RETIRED, 3);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_INST)), 1);
	assert_false(dpmu_model_core_irq(m, 0));
	dpmu_model_destroy(m);
}

/* Reference section 4, Linux amu.rst: "When in WFI or WFE these counters
 * do not increment". */
static void AMU_does_not_count_in_WFI(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	struct dpmu_err err;
	assert_int_equal(dpmu_model_set_wfi(m, 0, true, &err), 0);
	dpmu_model_core_cycles(m, 0, 10000);
	dpmu_model_core_event(m, 0, DPMU_EV_INST_RETIRED, 10);
	assert_int_equal(dpmu_model_set_wfi(m, 0, false, &err), 0);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_CORE)), 0);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_CONST)), 0);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_INST)), 0);
	dpmu_model_core_cycles(m, 0, 10);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_CORE)), 10);
	dpmu_model_destroy(m);
}

/* Reference section 4: no counting while powered down; powering up is a
 * Cold reset of the core domain, which is an AMU reset (enables and
 * counters 0), so only cycles after re-enabling count. */
static void AMU_does_not_count_while_powered_down_and_resets_on_power_up(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	struct dpmu_err err;
	dpmu_model_core_cycles(m, 0, 100);
	assert_int_equal(dpmu_model_set_power(m, 0, false, &err), 0);
	dpmu_model_core_cycles(m, 0, 5000);
	assert_int_equal(dpmu_model_set_power(m, 0, true, &err), 0);
	set_el(m, 0, 3, DPMU_SECURE);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_CORE)), 0);
	assert_int_equal(conf_rd(m, 0, AMCNTENSET0_EL0), 0);
	conf_wr(m, 0, AMCNTENSET0_EL0, 1);
	dpmu_model_core_cycles(m, 0, 7);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_CORE)), 7);
	dpmu_model_destroy(m);
}

/* Every core has its own AMU: another core's cycles do not count here. */
static void AMU_is_per_core(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	dpmu_model_core_cycles(m, 1, 777);
	dpmu_model_core_event(m, 1, DPMU_EV_INST_RETIRED, 5);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_CORE)), 0);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_INST)), 0);
	dpmu_model_destroy(m);
}

/* CNT_CYCLES counts at the profile's constant frequency: after k core
 * cycles in total, floor(k * f_const / f_core) constant cycles, exactly,
 * however the k is split -- no constant cycle lost or invented. */
static void AMU_CNT_CYCLES_is_exact_over_many_odd_sized_advances(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	const struct dpmu_profile *p = dpmu_model_profile(m);
	uint64_t f_core = ctype(m, 0)->freq_hz, f_const = p->const_freq_hz;
	assert_true(f_core > 0 && f_const > 0);
	uint64_t total = 0, x = 12345;
	for (unsigned i = 0; i < 5000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t k = (x >> 33) % 9973 + 1; /* odd sizes, 1..9973 */
		dpmu_model_core_cycles(m, 0, k);
		total += k;
		if (i % 997 == 0) {
			unsigned __int128 want = (unsigned __int128)total * f_const / f_core;
			assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_CONST)), (uint64_t)want);
		}
	}
	unsigned __int128 want = (unsigned __int128)total * f_const / f_core;
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_CONST)), (uint64_t)want);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_CORE)), total);
	dpmu_model_destroy(m);
}

/* Single-cycle advances accumulate exactly too (the remainder is carried
 * even when one advance yields no constant cycle). */
static void AMU_CNT_CYCLES_carries_the_remainder_across_single_cycles(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	uint64_t f_core = ctype(m, 0)->freq_hz, f_const = dpmu_model_profile(m)->const_freq_hz;
	uint64_t n = 3 * f_core / f_const + 7;
	for (uint64_t i = 0; i < n; i++)
		dpmu_model_core_cycles(m, 0, 1);
	assert_int_equal(conf_rd(m, 0, AMEVCNTR0(CNT_CONST)),
			 (uint64_t)((unsigned __int128)n * f_const / f_core));
	dpmu_model_destroy(m);
}

/* Linux frequency invariance (reference section 4): f_const * dCore /
 * dConst recovers the core frequency; over a long run the core/constant
 * ratio equals the profile's frequency ratio to within one constant tick. */
static void AMU_core_over_constant_cycles_gives_the_core_frequency(void **state)
{
	(void)state;
	struct dpmu_model *m = amu_model();
	const struct dpmu_profile *p = dpmu_model_profile(m);
	uint64_t f_core = ctype(m, 0)->freq_hz;
	for (unsigned i = 0; i < 1000; i++)
		dpmu_model_core_cycles(m, 0, 1000003);
	uint64_t dcore = conf_rd(m, 0, AMEVCNTR0(CNT_CORE));
	uint64_t dconst = conf_rd(m, 0, AMEVCNTR0(CNT_CONST));
	assert_true(dconst > 0);
	double f = (double)p->const_freq_hz * (double)dcore / (double)dconst;
	double err = f / (double)f_core - 1.0;
	assert_true(err >= 0 && err < 1.0 / (double)dconst * 1.01);
	/* and on a core of another type, its own frequency */
	for (unsigned c = 1; c < dpmu_model_ncores(m); c++) {
		if (ctype(m, c)->freq_hz == f_core)
			continue;
		set_el(m, c, 3, DPMU_SECURE);
		conf_wr(m, c, AMCNTENSET0_EL0, 3);
		for (unsigned i = 0; i < 1000; i++)
			dpmu_model_core_cycles(m, c, 999983);
		dcore = conf_rd(m, c, AMEVCNTR0(CNT_CORE));
		dconst = conf_rd(m, c, AMEVCNTR0(CNT_CONST));
		f = (double)p->const_freq_hz * (double)dcore / (double)dconst;
		err = f / (double)ctype(m, c)->freq_hz - 1.0;
		assert_true(err >= 0 && err < 1.0 / (double)dconst * 1.01);
		break;
	}
	dpmu_model_destroy(m);
}

/* AMU reset: enables, counters, AMUSERENR.EN 0 (the model's choice for the
 * UNKNOWN warm-reset value: EL0 trapped until EL1 allows it). */
static void AMU_reset_values(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	el3(m, 0);
	assert_int_equal(conf_rd(m, 0, AMCNTENSET0_EL0), 0);
	assert_int_equal(conf_rd(m, 0, AMCNTENSET1_EL0), 0);
	assert_int_equal(conf_rd(m, 0, AMUSERENR_EL0), 0);
	for (unsigned i = 0; i < ctype(m, 0)->amu_group0; i++)
		assert_int_equal(conf_rd(m, 0, AMEVCNTR0(i)), 0);
	dpmu_model_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(AMEVTYPER0_reports_the_architected_fixed_events),
		cmocka_unit_test(AMU_read_only_registers_have_no_MSR),
		cmocka_unit_test(AMCFGR_reports_N_SIZE_HDBG_and_NCG),
		cmocka_unit_test(AMCGCR_reports_the_counters_of_each_group),
		cmocka_unit_test(AMU_unimplemented_counter_registers_are_UNDEFINED),
		cmocka_unit_test(AMU_EL0_access_traps_to_EL1_without_AMUSERENR_EN),
		cmocka_unit_test(AMUSERENR_EL0_is_always_readable_at_EL0),
		cmocka_unit_test(AMUSERENR_EL0_writable_at_EL1_and_above_only),
		cmocka_unit_test(AMU_CPTR_EL2_TAM_traps_EL0_and_EL1_to_EL2),
		cmocka_unit_test(AMU_CPTR_EL3_TAM_traps_EL0_to_EL2_to_EL3),
		cmocka_unit_test(AMU_trap_priority_is_AMUSERENR_then_CPTR_EL2_then_CPTR_EL3),
		cmocka_unit_test(AMU_CPTR_EL2_TAM_does_not_trap_Secure_state),
		cmocka_unit_test(AMU_counter_writes_UNDEFINED_below_the_highest_EL),
		cmocka_unit_test(AMU_enable_and_control_writes_UNDEFINED_below_the_highest_EL),
		cmocka_unit_test(AMEVTYPER1_writable_at_the_highest_EL_only),
		cmocka_unit_test(AMCR_EL0_stores_HDBG_only),
		cmocka_unit_test(AMCNTENSET0_sets_and_AMCNTENCLR0_clears_enables),
		cmocka_unit_test(AMU_counts_only_enabled_counters),
		cmocka_unit_test(AMU_group0_INST_RETIRED_counts_retired_instructions),
		cmocka_unit_test(AMU_group0_CPU_CYCLES_counts_core_cycles),
		cmocka_unit_test(AMU_group1_counter_counts_the_event_it_selects),
		cmocka_unit_test(AMU_group1_unselectable_event_counts_nothing),
		cmocka_unit_test(AMU_counters_are_64_bit_without_overflow_interrupt),
		cmocka_unit_test(AMU_does_not_count_in_WFI),
		cmocka_unit_test(AMU_does_not_count_while_powered_down_and_resets_on_power_up),
		cmocka_unit_test(AMU_is_per_core),
		cmocka_unit_test(AMU_CNT_CYCLES_is_exact_over_many_odd_sized_advances),
		cmocka_unit_test(AMU_CNT_CYCLES_carries_the_remainder_across_single_cycles),
		cmocka_unit_test(AMU_core_over_constant_cycles_gives_the_core_frequency),
		cmocka_unit_test(AMU_reset_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
