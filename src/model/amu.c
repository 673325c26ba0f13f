/*
 * Activity Monitors, FEAT_AMUv1 (reference section 4; Arm ARM D24.6, the
 * AMU register descriptions and their accessibility pseudocode).
 *
 * Group 0 holds the profile's fixed counters (architected event numbers:
 * 0x11 CPU_CYCLES, 0x4004 CNT_CYCLES, 0x08 INST_RETIRED, 0x4005
 * STALL_BACKEND_MEM); group 1 the programmable ones, each selecting one of
 * the profile's selectable events. Counters are 64-bit and have no overflow
 * interrupt. model.c stops delivery while the core is powered down or in
 * WFI/WFE, so nothing here needs to know about those states.
 *
 * Access (Arm ARM D24.6, MRS pseudocode of every AMU register):
 *   EL0: AMUSERENR_EL0.EN == 0 traps to EL1 (AMUSERENR_EL0 itself is always
 *        readable at EL0), then CPTR_EL2.TAM traps to EL2 when EL2 is
 *        enabled, then CPTR_EL3.TAM traps to EL3;
 *   EL1: CPTR_EL2.TAM (EL2 enabled) to EL2, then CPTR_EL3.TAM to EL3;
 *   EL2: CPTR_EL3.TAM to EL3.
 * Writes (MSR pseudocode): AMCR_EL0, AMCNTENSET/CLR0/1_EL0, AMEVCNTR0/1<n>
 * and AMEVTYPER1<n> are writable only at the highest implemented Exception
 * level (IsHighestEL: EL3 here) and UNDEFINED elsewhere; AMUSERENR_EL0 is
 * writable at EL1 and above (UNDEFINED at EL0) after the TAM traps.
 * AMCFGR_EL0, AMCGCR_EL0 and AMEVTYPER0<n> have no MSR form: UNDEFINED.
 * Registers of counters that are not implemented are UNDEFINED.
 */
#include <stddef.h>

#include "model/model_internal.h"

#define DPMU_AMU_USERENR_EN 1u               /* AMUSERENR_EL0.EN */
#define DPMU_AMU_AMCR_HDBG (1u << 10)        /* AMCR_EL0.HDBG (CG1RZ is AMUv1p1) */
#define DPMU_AMU_CFGR_SIZE_SHIFT 8           /* AMCFGR_EL0.SIZE [13:8] = 63 */
#define DPMU_AMU_CFGR_HDBG (1u << 24)        /* AMCFGR_EL0.HDBG: must be 1 */
#define DPMU_AMU_CFGR_NCG_SHIFT 28           /* AMCFGR_EL0.NCG [31:28] */
#define DPMU_AMU_CGCR_CG1NC_SHIFT 8          /* AMCGCR_EL0.CG1NC [15:8] */
#define DPMU_AMU_HIGHEST_EL 3                /* the model implements EL3 */

enum amu_reg {
	AM_CR,
	AM_CFGR,
	AM_CGCR,
	AM_USERENR,
	AM_CNTENCLR0,
	AM_CNTENSET0,
	AM_CNTENCLR1,
	AM_CNTENSET1,
	AM_EVCNTR0,
	AM_EVTYPER0,
	AM_EVCNTR1,
	AM_EVTYPER1,
	AM_NONE,
};

/* How MSR behaves: not at all, at the highest EL only, or at EL1+ after
 * the TAM traps (AMUSERENR_EL0). */
enum amu_write { AMW_NONE, AMW_HIGHEST, AMW_EL1 };

static const struct {
	enum amu_write write;
	bool el0_free;        /* readable at EL0 whatever AMUSERENR_EL0.EN */
} amu_regs[] = {
	[AM_CR] = { AMW_HIGHEST, false },
	[AM_CFGR] = { AMW_NONE, false },
	[AM_CGCR] = { AMW_NONE, false },
	[AM_USERENR] = { AMW_EL1, true },
	[AM_CNTENCLR0] = { AMW_HIGHEST, false },
	[AM_CNTENSET0] = { AMW_HIGHEST, false },
	[AM_CNTENCLR1] = { AMW_HIGHEST, false },
	[AM_CNTENSET1] = { AMW_HIGHEST, false },
	[AM_EVCNTR0] = { AMW_HIGHEST, false },
	[AM_EVTYPER0] = { AMW_NONE, false },
	[AM_EVCNTR1] = { AMW_HIGHEST, false },
	[AM_EVTYPER1] = { AMW_HIGHEST, false },
};

/* Decode an encoding 3,3,13,CRm,op2 (reference section 4). Returns
 * AM_NONE for encodings outside the AMU; *idx is the counter number for the
 * array registers. `known` is false for AMU-space encodings the model does
 * not implement (AMCG1IDR_EL0 is AMUv1p1): those are UNDEFINED. */
static enum amu_reg decode(uint32_t enc, unsigned *idx, bool *known)
{
	*idx = 0;
	*known = true;
	if (DPMU_SYSREG_OP0(enc) != 3 || DPMU_SYSREG_OP1(enc) != 3 || DPMU_SYSREG_CRN(enc) != 13)
		return AM_NONE;
	unsigned crm = DPMU_SYSREG_CRM(enc), op2 = DPMU_SYSREG_OP2(enc);
	unsigned n = ((crm & 1) << 3) | op2;
	switch (crm) {
	case 2: {
		static const enum amu_reg crm2[8] = { AM_CR, AM_CFGR, AM_CGCR, AM_USERENR,
						      AM_CNTENCLR0, AM_CNTENSET0, AM_NONE,
						      AM_NONE };
		*known = crm2[op2] != AM_NONE;
		return *known ? crm2[op2] : AM_CR;
	}
	case 3:
		*known = op2 <= 1;
		return op2 == 0 ? AM_CNTENCLR1 : AM_CNTENSET1;
	case 4: case 5:
		*idx = n;
		return AM_EVCNTR0;
	case 6: case 7:
		*idx = n;
		return AM_EVTYPER0;
	case 12: case 13:
		*idx = n;
		return AM_EVCNTR1;
	case 14: case 15:
		*idx = n;
		return AM_EVTYPER1;
	default:
		return AM_NONE; /* CRm 0 is TPIDR_EL0 & co: not the AMU's */
	}
}

/* Whether the register exists in this implementation. */
static bool implemented(const struct dpmu_amu *a, enum amu_reg r, unsigned idx)
{
	switch (r) {
	case AM_CNTENCLR1:
	case AM_CNTENSET1:
		return a->n1 > 0; /* no auxiliary counters: UNDEFINED */
	case AM_EVCNTR0:
	case AM_EVTYPER0:
		return idx < a->n0;
	case AM_EVCNTR1:
	case AM_EVTYPER1:
		return idx < a->n1;
	default:
		return true;
	}
}

/* The traps shared by every AMU register (Arm ARM D24.6): the EL0
 * AMUSERENR_EL0.EN check here, then CPTR_EL2.TAM / CPTR_EL3.TAM
 * (dpmu_sysreg_amu_traps in sysreg.c). */
static struct dpmu_access amu_traps(const struct dpmu_core *c, bool check_en)
{
	if (c->el == 0 && check_en && !(c->amu.amuserenr & DPMU_AMU_USERENR_EN))
		return dpmu_access_trap(1);
	return dpmu_sysreg_amu_traps(c);
}

/* Whether a group-1 counter may count `event`: only the profile's
 * selectable events; anything else counts nothing. */
static bool selectable(const struct dpmu_core_type *t, uint16_t event)
{
	size_t n = t->amu_n_selectable > DPMU_AMU_SELECTABLE_MAX ? DPMU_AMU_SELECTABLE_MAX
								   : t->amu_n_selectable;
	for (size_t i = 0; i < n; i++)
		if (t->amu_selectable[i] == event)
			return true;
	return false;
}

static uint64_t read_reg(const struct dpmu_core *c, enum amu_reg r, unsigned idx)
{
	const struct dpmu_amu *a = &c->amu;
	switch (r) {
	case AM_CR:
		return a->amcr;
	case AM_CFGR:
		return (uint64_t)((a->n0 + a->n1 - 1) & 0xffu) |
		       (63ull << DPMU_AMU_CFGR_SIZE_SHIFT) | DPMU_AMU_CFGR_HDBG |
		       ((uint64_t)(a->n1 ? 1 : 0) << DPMU_AMU_CFGR_NCG_SHIFT);
	case AM_CGCR:
		return a->n0 | ((uint64_t)a->n1 << DPMU_AMU_CGCR_CG1NC_SHIFT);
	case AM_USERENR:
		return a->amuserenr;
	case AM_CNTENCLR0:
	case AM_CNTENSET0:
		return a->cnten0;
	case AM_CNTENCLR1:
	case AM_CNTENSET1:
		return a->cnten1;
	case AM_EVCNTR0:
		return a->cnt0[idx];
	case AM_EVTYPER0:
		return a->type0[idx];
	case AM_EVCNTR1:
		return a->cnt1[idx];
	case AM_EVTYPER1:
		/* An unsupported evtCount reads back UNKNOWN (Arm ARM
		 * D24.6.14): the model returns 0, so software can tell the
		 * event was not taken. */
		return selectable(c->type, a->type1[idx]) ? a->type1[idx] : 0;
	case AM_NONE:
		break;
	}
	return 0;
}

static void write_reg(struct dpmu_core *c, enum amu_reg r, unsigned idx, uint64_t v)
{
	struct dpmu_amu *a = &c->amu;
	uint32_t m0 = (1u << a->n0) - 1, m1 = (1u << a->n1) - 1;
	/* Enables and event types decide which deliveries count. */
	if (r == AM_CNTENCLR0 || r == AM_CNTENSET0 || r == AM_CNTENCLR1 || r == AM_CNTENSET1 ||
	    r == AM_EVTYPER1)
		c->live_gen++;
	switch (r) {
	case AM_CR:
		a->amcr = (uint32_t)v & DPMU_AMU_AMCR_HDBG;
		return;
	case AM_USERENR:
		a->amuserenr = (uint32_t)v & DPMU_AMU_USERENR_EN;
		return;
	/* Enable bits of unimplemented counters are RAZ/WI. */
	case AM_CNTENCLR0:
		a->cnten0 &= ~((uint32_t)v & m0);
		return;
	case AM_CNTENSET0:
		a->cnten0 |= (uint32_t)v & m0;
		return;
	case AM_CNTENCLR1:
		a->cnten1 &= ~((uint32_t)v & m1);
		return;
	case AM_CNTENSET1:
		a->cnten1 |= (uint32_t)v & m1;
		return;
	/* Writing an enabled counter or its type is UNPREDICTABLE; the model
	 * takes the write. */
	case AM_EVCNTR0:
		a->cnt0[idx] = v;
		return;
	case AM_EVCNTR1:
		a->cnt1[idx] = v;
		return;
	case AM_EVTYPER1:
		/* evtCount [15:0]. An event the counter does not support
		 * counts nothing and reads back as 0. */
		a->type1[idx] = (uint16_t)(v & 0xffffu);
		return;
	case AM_CFGR:
	case AM_CGCR:
	case AM_EVTYPER0:
	case AM_NONE:
		return;
	}
}

struct dpmu_access dpmu_amu_sysreg(struct dpmu_model *m, struct dpmu_core *c, uint32_t enc,
				   bool write, uint64_t *value)
{
	(void)m;
	unsigned idx;
	bool known;
	enum amu_reg r = decode(enc, &idx, &known);
	if (r == AM_NONE)
		return dpmu_access_notmine();
	struct dpmu_amu *a = &c->amu;
	/* Checked before any trap, as the pseudocode does. */
	if (!known || !implemented(a, r, idx))
		return dpmu_access_undef();

	if (!write) {
		struct dpmu_access t = amu_traps(c, !amu_regs[r].el0_free);
		if (t.kind != DPMU_ACCESS_OK)
			return t;
		*value = read_reg(c, r, idx);
		return t;
	}

	switch (amu_regs[r].write) {
	case AMW_NONE:
		return dpmu_access_undef();
	case AMW_HIGHEST:
		if (c->el != DPMU_AMU_HIGHEST_EL)
			return dpmu_access_undef();
		break;
	case AMW_EL1: {
		if (c->el == 0)
			return dpmu_access_undef();
		struct dpmu_access t = amu_traps(c, false);
		if (t.kind != DPMU_ACCESS_OK)
			return t;
		break;
	}
	}
	write_reg(c, r, idx, *value);
	return dpmu_access_ok();
}

void dpmu_amu_reset(struct dpmu_core *c, const struct dpmu_profile *p)
{
	(void)p;
	struct dpmu_amu *a = &c->amu;
	const struct dpmu_core_type *t = c->type;
	*a = (struct dpmu_amu){ 0 };
	a->n0 = t->amu_group0 > DPMU_AMU_GROUP0_MAX ? DPMU_AMU_GROUP0_MAX : t->amu_group0;
	a->n1 = t->amu_group1 > DPMU_AMU_GROUP1_MAX ? DPMU_AMU_GROUP1_MAX : t->amu_group1;
	for (unsigned i = 0; i < a->n0; i++)
		a->type0[i] = t->amu_group0_events[i];
	c->live_gen++; /* enables and types are back to their reset values */
	/* AMEVTYPER1 resets to an UNKNOWN value; the model uses 0, which is
	 * never selectable, so a group-1 counter counts nothing until
	 * programmed. Enables, counters, AMCR and AMUSERENR reset to 0. */
}

/* Add n to every enabled counter whose type is `event`. 64-bit counters:
 * wrap modulo 2^64, no overflow status, no interrupt. */
static void count(struct dpmu_core *c, uint16_t event, uint64_t n)
{
	struct dpmu_amu *a = &c->amu;
	if (!(a->cnten0 | a->cnten1))
		return; /* the usual case: software has enabled no AMU counter */
	for (unsigned i = 0; i < a->n0; i++)
		if ((a->cnten0 >> i & 1) && a->type0[i] == event)
			a->cnt0[i] += n;
	if (!a->cnten1)
		return;
	bool sel = selectable(c->type, event);
	for (unsigned i = 0; i < a->n1; i++)
		if ((a->cnten1 >> i & 1) && a->type1[i] == event && sel)
			a->cnt1[i] += n;
}

void dpmu_amu_event(struct dpmu_core *c, uint16_t event, uint64_t n)
{
	/* The two clocks are time, counted by dpmu_amu_cycles only. */
	if (n == 0 || event == DPMU_EV_CPU_CYCLES || event == DPMU_EV_CNT_CYCLES)
		return;
	count(c, event, n);
}

bool dpmu_amu_counts(const struct dpmu_core *c, uint16_t event)
{
	const struct dpmu_amu *a = &c->amu;
	if (event == DPMU_EV_CPU_CYCLES || event == DPMU_EV_CNT_CYCLES || !(a->cnten0 | a->cnten1))
		return false;
	for (unsigned i = 0; i < a->n0; i++)
		if ((a->cnten0 >> i & 1) && a->type0[i] == event)
			return true;
	for (unsigned i = 0; i < a->n1; i++)
		if ((a->cnten1 >> i & 1) && a->type1[i] == event)
			return selectable(c->type, event);
	return false;
}

void dpmu_amu_cycles(struct dpmu_core *c, const struct dpmu_profile *p, uint64_t k)
{
	if (k == 0)
		return;
	struct dpmu_amu *a = &c->amu;
	uint64_t f_core = c->type->freq_hz;
	/* k core cycles are k * f_const / f_core constant-frequency cycles,
	 * exactly: the remainder is carried, so over any sequence of advances
	 * the total is floor(total_k * f_const / f_core). The constant clock
	 * runs whether or not its counter is enabled. */
	uint64_t kc = 0, t64;
	if (f_core == 0) {
		/* no core clock: no constant-frequency cycles either */
	} else if (!__builtin_mul_overflow(k, p->const_freq_hz, &t64) &&
		   !__builtin_add_overflow(t64, a->const_rem, &t64)) {
		/* The same quotient without a 128-bit division, which a
		 * delivery every batch would otherwise pay for. */
		kc = t64 / f_core;
		a->const_rem = t64 % f_core;
	} else {
		unsigned __int128 t = (unsigned __int128)k * p->const_freq_hz + a->const_rem;
		kc = (uint64_t)(t / f_core);
		a->const_rem = (uint64_t)(t % f_core);
	}
	if (!(a->cnten0 | a->cnten1))
		return; /* the usual case: software has enabled no AMU counter */
	count(c, DPMU_EV_CPU_CYCLES, k);
	if (kc)
		count(c, DPMU_EV_CNT_CYCLES, kc);
}
