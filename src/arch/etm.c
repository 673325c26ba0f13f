/*
 * The trace unit's registers (ETMv4.2, Arm IHI 0064) as a table: offset,
 * element count, which bits are stored, and the access flags. The System
 * register encoding of every register is op0 = 2, op1 = 1, CRn = offset
 * [11:9], op2 = offset[8:6], CRm = offset[5:2] (IHI 0064, "System register
 * encodings of the trace registers"): no second table.
 */
#include <stdio.h>

#include "dynpmu/arch.h"
#include "dynpmu/etm.h"

#define RW 0u
#define RO DPMU_ETM_RO
#define WO DPMU_ETM_WO
#define W64 DPMU_ETM_64
#define EXT DPMU_ETM_EXT_ONLY
#define MGMT DPMU_ETM_MGMT
#define CFG DPMU_ETM_IDLE_ONLY

/* Stored bits: only fields of what dpmu_etm_default implements (no branch
 * broadcast, no sequencer, no single-shot comparators, no stall control,
 * instruction-address comparators only), everything else RES0. */
static const struct dpmu_etm_reg etm_regs[] = {
	{ "TRCPRGCTLR", DPMU_TRCPRGCTLR, 1, 0, 0, RW, 0x1 },
	{ "TRCSTATR", DPMU_TRCSTATR, 1, 0, 0, RO, 0 },
	/* CCI, CID, VMID, TS */
	{ "TRCCONFIGR", DPMU_TRCCONFIGR, 1, 0, 0, CFG, 0x8D0 },
	{ "TRCAUXCTLR", DPMU_TRCAUXCTLR, 1, 0, 0, CFG, 0 },
	/* EVENT0-3: TYPE [7], SEL [3:0] (16 resource selectors, 8 pairs) */
	{ "TRCEVENTCTL0R", DPMU_TRCEVENTCTL0R, 1, 0, 0, CFG, 0x8F8F8F8F },
	{ "TRCEVENTCTL1R", DPMU_TRCEVENTCTL1R, 1, 0, 0, CFG, 0xF },   /* INSTEN */
	{ "TRCSTALLCTLR", DPMU_TRCSTALLCTLR, 1, 0, 0, CFG, 0 },
	{ "TRCTSCTLR", DPMU_TRCTSCTLR, 1, 0, 0, CFG, 0x8F },          /* EVENT */
	{ "TRCSYNCPR", DPMU_TRCSYNCPR, 1, 0, 0, CFG, 0x1F },          /* PERIOD */
	{ "TRCCCCTLR", DPMU_TRCCCCTLR, 1, 0, 0, CFG, 0xFFF },         /* THRESHOLD */
	{ "TRCBBCTLR", DPMU_TRCBBCTLR, 1, 0, 0, CFG, 0 },
	{ "TRCTRACEIDR", DPMU_TRCTRACEIDR, 1, 0, 0, CFG, 0x7F },
	/* EVENT, SSSTATUS [9], EXLEVEL_S [19:16] (EL0, EL1, EL3), EXLEVEL_NS
	 * [23:20] (EL0-EL2) */
	{ "TRCVICTLR", DPMU_TRCVICTLR, 1, 0, 0, CFG, 0x008F | 0x200 | 0xB0000 | 0x700000 },
	{ "TRCVIIECTLR", DPMU_TRCVIIECTLR, 1, 0, 0, CFG, 0x000F000F }, /* INCLUDE, EXCLUDE */
	{ "TRCVISSCTLR", DPMU_TRCVISSCTLR, 1, 0, 0, CFG, 0x00FF00FF }, /* START, STOP */
	{ "TRCEXTINSELR", DPMU_TRCEXTINSELR, 1, 0, 0, CFG, 0xFFFFFFFF }, /* SEL0-3 */
	{ "TRCCNTRLDVR", DPMU_TRCCNTRLDVR(0), 2, 4, 0, CFG, 0xFFFF },
	/* CNTCHAIN [17], RLDSELF [16], RLDEVENT [15:8], CNTEVENT [7:0] */
	{ "TRCCNTCTLR", DPMU_TRCCNTCTLR(0), 2, 4, 0, CFG, 0x38F8F },
	{ "TRCCNTVR", DPMU_TRCCNTVR(0), 2, 4, 0, CFG, 0xFFFF },
	{ "TRCIDR", DPMU_TRCIDR8_13(8), 6, 4, 8, RO, 0 },
	{ "TRCIDR", DPMU_TRCIDR0_7(0), 8, 4, 0, RO, 0 },
	/* PAIRINV [21], INV [20], GROUP [19:16], SELECT [7:0] */
	{ "TRCRSCTLR", DPMU_TRCRSCTLR(2), 14, 4, 2, CFG, 0x3F00FF },
	{ "TRCOSLAR", DPMU_TRCOSLAR, 1, 0, 0, WO, 0x1 },
	{ "TRCOSLSR", DPMU_TRCOSLSR, 1, 0, 0, RO, 0 },
	{ "TRCPDCR", DPMU_TRCPDCR, 1, 0, 0, RW, 0x8 },               /* PU */
	{ "TRCPDSR", DPMU_TRCPDSR, 1, 0, 0, RO, 0 },
	{ "TRCACVR", DPMU_TRCACVR(0), 8, 8, 0, CFG | W64, ~0ull },
	/* CONTEXTTYPE [3:2], CONTEXT [6:4], EXLEVEL_S [11:8], EXLEVEL_NS [15:12] */
	{ "TRCACATR", DPMU_TRCACATR(0), 8, 8, 0, CFG | W64, 0xB7C | 0x7000 },
	{ "TRCCIDCVR0", DPMU_TRCCIDCVR0, 1, 0, 0, CFG | W64, 0xFFFFFFFF },
	{ "TRCVMIDCVR0", DPMU_TRCVMIDCVR0, 1, 0, 0, CFG | W64, 0xFF },
	{ "TRCCIDCCTLR0", DPMU_TRCCIDCCTLR0, 1, 0, 0, CFG, 0xF },
	{ "TRCVMIDCCTLR0", DPMU_TRCVMIDCCTLR0, 1, 0, 0, CFG, 0x1 },
	{ "TRCITCTRL", DPMU_TRCITCTRL, 1, 0, 0, MGMT, 0 },
	{ "TRCCLAIMSET", DPMU_TRCCLAIMSET, 1, 0, 0, MGMT, 0xF },
	{ "TRCCLAIMCLR", DPMU_TRCCLAIMCLR, 1, 0, 0, MGMT, 0xF },
	{ "TRCDEVAFF0", DPMU_TRCDEVAFF0, 1, 0, 0, MGMT | RO | EXT, 0 },
	{ "TRCDEVAFF1", DPMU_TRCDEVAFF1, 1, 0, 0, MGMT | RO | EXT, 0 },
	{ "TRCLAR", DPMU_TRCLAR, 1, 0, 0, MGMT | WO | EXT, 0 },
	{ "TRCLSR", DPMU_TRCLSR, 1, 0, 0, MGMT | RO | EXT, 0 },
	{ "TRCAUTHSTATUS", DPMU_TRCAUTHSTATUS, 1, 0, 0, MGMT | RO, 0 },
	{ "TRCDEVARCH", DPMU_TRCDEVARCH, 1, 0, 0, MGMT | RO, 0 },
	{ "TRCDEVID", DPMU_TRCDEVID, 1, 0, 0, MGMT | RO | EXT, 0 },
	{ "TRCDEVTYPE", DPMU_TRCDEVTYPE, 1, 0, 0, MGMT | RO | EXT, 0 },
	{ "TRCPIDR", DPMU_TRCPIDR4, 4, 4, 4, MGMT | RO | EXT, 0 },
	{ "TRCPIDR", DPMU_TRCPIDR(0), 4, 4, 0, MGMT | RO | EXT, 0 },
	{ "TRCCIDR", DPMU_TRCCIDR(0), 4, 4, 0, MGMT | RO | EXT, 0 },
};

const struct dpmu_etm_reg *dpmu_etm_regs(size_t *n)
{
	*n = sizeof etm_regs / sizeof etm_regs[0];
	return etm_regs;
}

static unsigned reg_words(const struct dpmu_etm_reg *r)
{
	return r->flags & DPMU_ETM_64 ? 2u : 1u;
}

const struct dpmu_etm_reg *dpmu_etm_reg_at(uint32_t offset, unsigned *index, unsigned *word)
{
	for (size_t i = 0; i < sizeof etm_regs / sizeof etm_regs[0]; i++) {
		const struct dpmu_etm_reg *r = &etm_regs[i];
		unsigned stride = r->count > 1 ? r->stride : 4u * reg_words(r);
		if (offset < r->offset || offset >= r->offset + (uint32_t)r->count * stride)
			continue;
		unsigned rel = offset - r->offset;
		unsigned w = (rel % stride) / 4;
		if (w >= reg_words(r))
			return NULL;     /* a gap between array elements */
		if (index)
			*index = rel / stride;
		if (word)
			*word = w;
		return r;
	}
	return NULL;
}

const char *dpmu_etm_name(uint32_t offset, char *buf, size_t len)
{
	unsigned idx, word;
	const struct dpmu_etm_reg *r = dpmu_etm_reg_at(offset, &idx, &word);
	if (!r)
		return NULL;
	const char *hi = word ? "[63:32]" : "";
	if (r->count > 1)
		snprintf(buf, len, "%s%u%s", r->name, r->first + idx, hi);
	else
		snprintf(buf, len, "%s%s", r->name, hi);
	return buf;
}

uint32_t dpmu_etm_sysreg_enc(uint32_t offset)
{
	return DPMU_SYSREG(2, 1, (offset >> 9) & 7, (offset >> 2) & 0xf, (offset >> 6) & 7);
}

long dpmu_etm_sysreg_offset(uint32_t enc)
{
	if (DPMU_SYSREG_OP0(enc) != 2 || DPMU_SYSREG_OP1(enc) != 1 || DPMU_SYSREG_CRN(enc) > 7)
		return -1;
	uint32_t off = (uint32_t)(DPMU_SYSREG_CRN(enc) << 9 | DPMU_SYSREG_OP2(enc) << 6 |
				  DPMU_SYSREG_CRM(enc) << 2);
	unsigned word;
	const struct dpmu_etm_reg *r = dpmu_etm_reg_at(off, NULL, &word);
	if (!r || word || (r->flags & DPMU_ETM_EXT_ONLY))
		return -1;
	return (long)off;
}

/* Seed 003 section 1: 4 address comparator pairs, 2 counters, 8-byte
 * instruction addresses, 4-byte context ID, VMID; the rest as a Cortex-A
 * trace unit of the time: 8 resource selector pairs, 4 external input
 * selectors, 4 ETM events, one context ID and one VMID comparator. */
const struct dpmu_etm_params dpmu_etm_default = {
	.addr_pairs = 4,
	.counters = 2,
	.rs_pairs = 8,
	.ext_in_sel = 4,
	.events = 4,
	.cid_comparators = 1,
	.vmid_comparators = 1,
	.ccitmin = 4,
};

uint32_t dpmu_etm_idr(const struct dpmu_etm_params *p, unsigned n)
{
	switch (n) {
	case 0:
		/* bit 0 RES1; TRCCCI [7]; NUMEVENT [11:10]; TSSIZE [28:24] =
		 * 0b01000 (64-bit timestamps); COMMOPT [29] = 1 (commit mode 1) */
		return 1u | (1u << 7) | ((p->events - 1) & 3) << 10 | 0x8u << 24 | 1u << 29;
	case 1:
		/* REVISION 0, TRCARCHMIN 2, TRCARCHMAJ 4, [15:12] RES1,
		 * DESIGNER 0x41 (Arm) */
		return 0x2u << 4 | 0x4u << 8 | 0xFu << 12 | 0x41u << 24;
	case 2:
		/* IASIZE 0b01000 (64-bit), CIDSIZE 0b00100 (32-bit), VMIDSIZE
		 * 0b00001 (8-bit), CCSIZE 0 (12-bit cycle counter) */
		return 0x8u | 0x4u << 5 | 0x1u << 10;
	case 3:
		/* CCITMIN; EXLEVEL_S EL0, EL1, EL3; EXLEVEL_NS EL0-EL2 */
		return (p->ccitmin & 0xfff) | 0xBu << 16 | 0x7u << 20;
	case 4:
		return (p->addr_pairs & 0xf) | ((p->rs_pairs - 1) & 0xf) << 16 |
		       (p->cid_comparators & 0xf) << 24 | (p->vmid_comparators & 0xf) << 28;
	case 5:
		/* NUMEXTIN 256 (the PMU event bus: TRCEXTINSELR selects an
		 * event number), NUMEXTINSEL, TRACEIDSIZE 7, NUMCNTR */
		return 256u | (p->ext_in_sel & 7) << 9 | 7u << 16 | (p->counters & 7) << 28;
	default:
		return 0;        /* TRCIDR6-13: no P0 keys, no speculation depth */
	}
}
