/*
 * Core PMU conformance: counting filters by exception level and security
 * state, PMEVTYPER<n>_EL0 and PMCCFILTR_EL0 (reference section 1 "PMEVTYPER
 * fields" and the filtering rule; Arm ARM AArch64.CountPMUEvents).
 *
 * Registers are programmed and read at EL3, which no trap stops; events are
 * delivered at the exception level under test.
 */
#include "conformance.h"

#define PMCR DPMU_SYSREG(3, 3, 9, 12, 0)
#define PMCNTENSET DPMU_SYSREG(3, 3, 9, 12, 1)
#define PMCCNTR DPMU_SYSREG(3, 3, 9, 13, 0)
#define PMEVCNTR(n) DPMU_SYSREG(3, 3, 14, 8 + ((n) >> 3), (n) & 7)
#define PMEVTYPER(n) DPMU_SYSREG(3, 3, 14, 12 + ((n) >> 3), (n) & 7)
#define PMCCFILTR DPMU_SYSREG(3, 3, 14, 15, 7)

#define F_P (1u << 31)
#define F_U (1u << 30)
#define F_NSK (1u << 29)
#define F_NSU (1u << 28)
#define F_NSH (1u << 27)
#define F_M (1u << 26)
#define E (1u << 0)
#define CC (1u << 31)
#define INST_RETIRED 0x08

static void set_el(struct dpmu_model *m, unsigned el, enum dpmu_security sec)
{
	struct dpmu_err err;
	if (dpmu_model_set_el(m, 0, el, sec, &err) != 0)
		fail_msg("set_el: %s", dpmu_errmsg(&err));
}

/* Does an event counter with filter `f` count at (el, sec)? And the cycle
 * counter with PMCCFILTR = f? */
static void counts_at(struct dpmu_model *m, uint32_t f, unsigned el, enum dpmu_security sec,
		      bool *ev_counts, bool *cc_counts)
{
	set_el(m, 3, DPMU_SECURE);
	conf_wr(m, 0, PMEVTYPER(0), f | INST_RETIRED);
	conf_wr(m, 0, PMCCFILTR, f);
	conf_wr(m, 0, PMEVCNTR(0), 0);
	conf_wr(m, 0, PMCCNTR, 0);
	conf_wr(m, 0, PMCNTENSET, 1u | CC);
	conf_wr(m, 0, PMCR, E);
	set_el(m, el, sec);
	dpmu_model_core_event(m, 0, INST_RETIRED, 1);
	dpmu_model_core_cycles(m, 0, 1);
	set_el(m, 3, DPMU_SECURE);
	*ev_counts = conf_rd(m, 0, PMEVCNTR(0)) == 1;
	*cc_counts = conf_rd(m, 0, PMCCNTR) == 1;
}

/* Each row: filter bits, EL, security, expected "counts". */
struct filter_case {
	uint32_t f;
	unsigned el;
	enum dpmu_security sec;
	bool counts;
};

static void check_cases(const struct filter_case *cs, size_t n)
{
	struct dpmu_model *m = conf_model(NULL);
	for (size_t i = 0; i < n; i++) {
		bool ev, cc;
		counts_at(m, cs[i].f, cs[i].el, cs[i].sec, &ev, &cc);
		if (ev != cs[i].counts || cc != cs[i].counts)
			fail_msg("filter 0x%08x at EL%u %s: event counter %s, cycle counter %s, "
				 "expected %s",
				 cs[i].f, cs[i].el, cs[i].sec ? "Secure" : "Non-secure",
				 ev ? "counts" : "filtered", cc ? "counts" : "filtered",
				 cs[i].counts ? "counts" : "filtered");
	}
	dpmu_model_destroy(m);
}

#define NS DPMU_NONSECURE
#define S DPMU_SECURE
#define N_CASES(a) (sizeof(a) / sizeof((a)[0]))

/* Reference section 1: Non-secure EL0 is filtered if U != NSU. */
static void Nonsecure_EL0_is_filtered_when_U_differs_from_NSU(void **state)
{
	(void)state;
	static const struct filter_case cs[] = {
		{ 0, 0, NS, true },
		{ F_U, 0, NS, false },
		{ F_NSU, 0, NS, false },
		{ F_U | F_NSU, 0, NS, true },
		{ F_P | F_NSK | F_NSH | F_M, 0, NS, true }, /* other ELs' bits */
	};
	check_cases(cs, N_CASES(cs));
}

/* Reference section 1: Secure EL0 is filtered if U; NSU does not apply. */
static void Secure_EL0_is_filtered_by_U_alone(void **state)
{
	(void)state;
	static const struct filter_case cs[] = {
		{ 0, 0, S, true },
		{ F_U, 0, S, false },
		{ F_NSU, 0, S, true },
		{ F_U | F_NSU, 0, S, false },
	};
	check_cases(cs, N_CASES(cs));
}

/* Reference section 1: Non-secure EL1 is filtered if P != NSK. */
static void Nonsecure_EL1_is_filtered_when_P_differs_from_NSK(void **state)
{
	(void)state;
	static const struct filter_case cs[] = {
		{ 0, 1, NS, true },
		{ F_P, 1, NS, false },
		{ F_NSK, 1, NS, false },
		{ F_P | F_NSK, 1, NS, true },
		{ F_U | F_NSU | F_NSH | F_M, 1, NS, true },
	};
	check_cases(cs, N_CASES(cs));
}

/* Reference section 1: Secure EL1 is filtered if P; NSK does not apply. */
static void Secure_EL1_is_filtered_by_P_alone(void **state)
{
	(void)state;
	static const struct filter_case cs[] = {
		{ 0, 1, S, true },
		{ F_P, 1, S, false },
		{ F_NSK, 1, S, true },
		{ F_P | F_NSK, 1, S, false },
	};
	check_cases(cs, N_CASES(cs));
}

/* Reference section 1: EL2 counts only if NSH (include EL2) is set. */
static void EL2_counts_only_when_NSH_is_set(void **state)
{
	(void)state;
	static const struct filter_case cs[] = {
		{ 0, 2, NS, false },
		{ F_NSH, 2, NS, true },
		{ F_NSH | F_P | F_U, 2, NS, true },
		{ F_P | F_NSK | F_U | F_NSU | F_M, 2, NS, false },
	};
	check_cases(cs, N_CASES(cs));
}

/* Reference section 1: EL3 is filtered if M != P. */
static void EL3_is_filtered_when_M_differs_from_P(void **state)
{
	(void)state;
	static const struct filter_case cs[] = {
		{ 0, 3, S, true },
		{ F_P, 3, S, false },
		{ F_M, 3, S, false },
		{ F_P | F_M, 3, S, true },
		{ F_U | F_NSK | F_NSU | F_NSH, 3, S, true },
	};
	check_cases(cs, N_CASES(cs));
}

/* Reference section 1: the filter is applied in the state where the event
 * happens; moving between ELs starts and stops a counter without any
 * register write. */
static void Filter_follows_the_exception_level_the_core_is_in(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMEVTYPER(0), F_P | INST_RETIRED); /* exclude EL1 */
	conf_wr(m, 0, PMCNTENSET, 1);
	conf_wr(m, 0, PMCR, E);
	dpmu_model_core_event(m, 0, INST_RETIRED, 3);
	set_el(m, 0, NS);
	dpmu_model_core_event(m, 0, INST_RETIRED, 4);
	set_el(m, 1, NS);
	dpmu_model_core_event(m, 0, INST_RETIRED, 5);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 4);
	dpmu_model_destroy(m);
}

/* Reference section 1: PMCCFILTR filters the cycle counter independently
 * of the event counters' filters. */
static void PMCCFILTR_filters_only_the_cycle_counter(void **state)
{
	(void)state;
	struct dpmu_model *m = conf_model(NULL);
	conf_wr(m, 0, PMEVTYPER(0), 0x11); /* CPU_CYCLES, unfiltered */
	conf_wr(m, 0, PMCCFILTR, F_P);     /* cycle counter excludes EL1 */
	conf_wr(m, 0, PMCNTENSET, 1u | CC);
	conf_wr(m, 0, PMCR, E);
	dpmu_model_core_cycles(m, 0, 10);
	assert_int_equal(conf_rd(m, 0, PMEVCNTR(0)), 10);
	assert_int_equal(conf_rd(m, 0, PMCCNTR), 0);
	dpmu_model_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(Nonsecure_EL0_is_filtered_when_U_differs_from_NSU),
		cmocka_unit_test(Secure_EL0_is_filtered_by_U_alone),
		cmocka_unit_test(Nonsecure_EL1_is_filtered_when_P_differs_from_NSK),
		cmocka_unit_test(Secure_EL1_is_filtered_by_P_alone),
		cmocka_unit_test(EL2_counts_only_when_NSH_is_set),
		cmocka_unit_test(EL3_is_filtered_when_M_differs_from_P),
		cmocka_unit_test(Filter_follows_the_exception_level_the_core_is_in),
		cmocka_unit_test(PMCCFILTR_filters_only_the_cycle_counter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
