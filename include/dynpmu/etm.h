/*
 * The trace unit (ETMv4.2) register map: offsets in its 4 KiB external
 * frame, the System register encoding each has (op0 = 2, op1 = 1, the rest
 * from the offset: ETMv4 IHI 0064, "System register encodings"), which are
 * read-only, write-only, 64-bit, or reachable only through the frame, and
 * what the trace unit of a modelled core implements (the TRCIDR values).
 * One table for every layer: the model decodes with it, the register console
 * names registers with it, the driver addresses them with the macros.
 */
#ifndef DYNPMU_ETM_H
#define DYNPMU_ETM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DPMU_ETM_FRAME_SIZE 0x1000u

#define DPMU_TRCPRGCTLR 0x004u
#define DPMU_TRCSTATR 0x00Cu
#define DPMU_TRCCONFIGR 0x010u
#define DPMU_TRCAUXCTLR 0x018u
#define DPMU_TRCEVENTCTL0R 0x020u
#define DPMU_TRCEVENTCTL1R 0x024u
#define DPMU_TRCSTALLCTLR 0x02Cu
#define DPMU_TRCTSCTLR 0x030u
#define DPMU_TRCSYNCPR 0x034u
#define DPMU_TRCCCCTLR 0x038u
#define DPMU_TRCBBCTLR 0x03Cu
#define DPMU_TRCTRACEIDR 0x040u
#define DPMU_TRCVICTLR 0x080u
#define DPMU_TRCVIIECTLR 0x084u
#define DPMU_TRCVISSCTLR 0x088u
#define DPMU_TRCEXTINSELR 0x120u
#define DPMU_TRCCNTRLDVR(n) (0x140u + 4u * (unsigned)(n))
#define DPMU_TRCCNTCTLR(n) (0x150u + 4u * (unsigned)(n))
#define DPMU_TRCCNTVR(n) (0x160u + 4u * (unsigned)(n))
#define DPMU_TRCIDR8_13(n) (0x180u + 4u * (unsigned)((n) - 8))   /* n = 8..13 */
#define DPMU_TRCIDR0_7(n) (0x1E0u + 4u * (unsigned)(n))          /* n = 0..7 */
#define DPMU_TRCIDR(n) ((n) < 8 ? DPMU_TRCIDR0_7(n) : DPMU_TRCIDR8_13(n))
#define DPMU_TRCRSCTLR(n) (0x200u + 4u * (unsigned)(n))          /* n = 2..15 */
#define DPMU_TRCOSLAR 0x300u
#define DPMU_TRCOSLSR 0x304u
#define DPMU_TRCPDCR 0x310u
#define DPMU_TRCPDSR 0x314u
#define DPMU_TRCACVR(n) (0x400u + 8u * (unsigned)(n))
#define DPMU_TRCACATR(n) (0x480u + 8u * (unsigned)(n))
#define DPMU_TRCCIDCVR0 0x600u
#define DPMU_TRCVMIDCVR0 0x640u
#define DPMU_TRCCIDCCTLR0 0x680u
#define DPMU_TRCVMIDCCTLR0 0x688u
#define DPMU_TRCITCTRL 0xF00u
#define DPMU_TRCCLAIMSET 0xFA0u
#define DPMU_TRCCLAIMCLR 0xFA4u
#define DPMU_TRCDEVAFF0 0xFA8u
#define DPMU_TRCDEVAFF1 0xFACu
#define DPMU_TRCLAR 0xFB0u
#define DPMU_TRCLSR 0xFB4u
#define DPMU_TRCAUTHSTATUS 0xFB8u
#define DPMU_TRCDEVARCH 0xFBCu
#define DPMU_TRCDEVID 0xFC8u
#define DPMU_TRCDEVTYPE 0xFCCu
#define DPMU_TRCPIDR4 0xFD0u
#define DPMU_TRCPIDR(n) (0xFE0u + 4u * (unsigned)(n))
#define DPMU_TRCCIDR(n) (0xFF0u + 4u * (unsigned)(n))

/* Fields software uses. */
#define DPMU_TRCPRGCTLR_EN (1u << 0)
#define DPMU_TRCSTATR_IDLE (1u << 0)
#define DPMU_TRCSTATR_PMSTABLE (1u << 1)
#define DPMU_TRCCONFIGR_BB (1u << 3)
#define DPMU_TRCCONFIGR_CCI (1u << 4)
#define DPMU_TRCCONFIGR_CID (1u << 6)
#define DPMU_TRCCONFIGR_VMID (1u << 7)
#define DPMU_TRCCONFIGR_TS (1u << 11)
#define DPMU_TRCOSLSR_OSLK (1u << 1)
#define DPMU_TRCPDSR_POWER (1u << 0)
#define DPMU_TRCPDSR_STICKYPD (1u << 1)
#define DPMU_TRCPDSR_OSLK (1u << 5)
#define DPMU_TRCLSR_SLK (1u << 1)
#define DPMU_TRCLAR_KEY 0xC5ACCE55u

/* What ViewInst and the counters are built from (IHI 0064 chapter 7, the
 * resource selection): an EVENT field (TRCVICTLR.EVENT, TRCCNTCTLR.CNTEVENT)
 * names one resource selector (TYPE 0: SEL) or a pair (TYPE 1: selectors
 * 2*SEL and 2*SEL+1, both true, inverted by the even one's PAIRINV).
 * Selector 0 is always FALSE, 1 always TRUE; 2-15 are TRCRSCTLRn: a GROUP
 * and a SELECT mask over that group's resources, inverted by INV. */
#define DPMU_ETM_EVENT_PAIR (1u << 7)
#define DPMU_ETM_EVENT_SEL(v) ((unsigned)(v) & 0xFu)
#define DPMU_TRCRSCTLR_SELECT(v) ((unsigned)(v) & 0xFFu)
#define DPMU_TRCRSCTLR_GROUP(v) (((unsigned)(v) >> 16) & 0xFu)
#define DPMU_TRCRSCTLR_INV (1u << 20)
#define DPMU_TRCRSCTLR_PAIRINV (1u << 21)
enum dpmu_etm_rs_group {
	DPMU_ETM_RS_EXTIN = 0x0,    /* SELECT[3:0]: external input selectors */
	DPMU_ETM_RS_COUNTER = 0x2,  /* SELECT[3:0]: counter n at zero */
	DPMU_ETM_RS_SINGLE = 0x4,   /* SELECT[7:0]: single address comparator n */
	DPMU_ETM_RS_RANGE = 0x5,    /* SELECT[3:0]: address range comparator n */
};
#define DPMU_ETM_EXTINSEL 4u        /* TRCEXTINSELR.SEL0-3, 8 bits each */
#define DPMU_ETM_COUNTERS 2u
#define DPMU_ETM_AC_PAIRS 4u
#define DPMU_TRCVICTLR_EVENT(v) ((unsigned)(v) & 0xFFu)
#define DPMU_TRCVICTLR_SSSTATUS (1u << 9)
#define DPMU_TRCVICTLR_EXLEVEL_S(el) (1u << (16 + (el)))   /* set: EL not traced */
#define DPMU_TRCVICTLR_EXLEVEL_NS(el) (1u << (20 + (el)))
#define DPMU_TRCVIIECTLR_INCLUDE(v) ((unsigned)(v) & 0xFFu)
#define DPMU_TRCVIIECTLR_EXCLUDE(v) (((unsigned)(v) >> 16) & 0xFFu)
#define DPMU_TRCVISSCTLR_START(v) ((unsigned)(v) & 0xFFu)
#define DPMU_TRCVISSCTLR_STOP(v) (((unsigned)(v) >> 16) & 0xFFu)
#define DPMU_TRCCNTCTLR_CNTEVENT(v) ((unsigned)(v) & 0xFFu)
#define DPMU_TRCCNTCTLR_RLDSELF (1u << 16)
/* The PMU event that is an external input on every instruction given to
 * the trace unit (the others arrive when the engine delivers them). */
#define DPMU_ETM_INST_RETIRED 0x08u

/* ARCHITECT 0x23B (Arm), PRESENT, REVISION 2, ARCHVER 4, ARCHPART 0xA13:
 * an ETMv4.2 trace unit (reference: formats.md). */
#define DPMU_TRCDEVARCH_ETMV4_2 0x47724A13u

enum dpmu_etm_reg_flags {
	DPMU_ETM_RO = 1u << 0,      /* writes ignored (frame) / UNDEFINED (MSR) */
	DPMU_ETM_WO = 1u << 1,      /* reads 0 (frame) / UNDEFINED (MRS) */
	DPMU_ETM_64 = 1u << 2,      /* two words in the frame, one System register */
	DPMU_ETM_EXT_ONLY = 1u << 3,/* no System register encoding */
	DPMU_ETM_MGMT = 1u << 4,    /* management registers: answer whatever the
	                               power, locks or authentication */
	DPMU_ETM_IDLE_ONLY = 1u << 5, /* a configuration register: writes take
	                                 effect only while TRCPRGCTLR.EN is 0 */
};

/* A register, or an array of `count` registers `stride` bytes apart. */
struct dpmu_etm_reg {
	const char *name;           /* as ETMv4 writes it; arrays get their index */
	uint16_t offset;
	uint8_t count, stride;
	uint8_t first;              /* index of the first element (TRCRSCTLR2) */
	uint16_t flags;
	uint64_t wmask;             /* stored bits (reset value 0) */
};

/* Every register of the trace unit the model implements. */
const struct dpmu_etm_reg *dpmu_etm_regs(size_t *n);
/* The register whose word `offset` is part of (*index: array element,
 * *word: 1 for the high half of a 64-bit register); NULL when unmapped. */
const struct dpmu_etm_reg *dpmu_etm_reg_at(uint32_t offset, unsigned *index, unsigned *word);
/* Name of the word at `offset` ("TRCACVR3", "TRCACVR3[63:32]"), or NULL. */
const char *dpmu_etm_name(uint32_t offset, char *buf, size_t len);
/* System register encoding (DPMU_SYSREG) of the register at `offset`. */
uint32_t dpmu_etm_sysreg_enc(uint32_t offset);
/* The offset of a System register encoding of the trace unit: the inverse,
 * or -1 when enc is not one (or names an external-only register). */
long dpmu_etm_sysreg_offset(uint32_t enc);

/* What one trace unit implements (seed 003 section 1: 8-byte instruction
 * addresses, 4-byte context ID and VMID, 2 counters, 4 address comparator
 * pairs, cycle counting), from which the TRCIDR values follow. */
struct dpmu_etm_params {
	unsigned addr_pairs;        /* address comparator pairs (TRCIDR4.NUMACPAIRS) */
	unsigned counters;          /* TRCIDR5.NUMCNTR */
	unsigned rs_pairs;          /* resource selector pairs (TRCIDR4.NUMRSPAIR + 1) */
	unsigned ext_in_sel;        /* external input selectors (TRCIDR5.NUMEXTINSEL) */
	unsigned events;            /* ETM events (TRCIDR0.NUMEVENT + 1) */
	unsigned cid_comparators, vmid_comparators;
	unsigned ccitmin;           /* smallest cycle count threshold (TRCIDR3.CCITMIN) */
};
extern const struct dpmu_etm_params dpmu_etm_default;
/* TRCIDR<n> (0..13) of a trace unit with these parameters. */
uint32_t dpmu_etm_idr(const struct dpmu_etm_params *p, unsigned n);

#endif
