/*
 * A64 instruction classification from the encoding, for the engine's
 * events (uarch.h DPMU_IC_*, kinds, branch kinds, access sizes).
 *
 * Hand decoding: the classes the PMU cares about are a handful of
 * fixed-field tests on the top-level groups of the Arm ARM's A64 decode
 * (C4.1: bits [28:25] select data processing, branches/system, loads and
 * stores, SIMD&FP), which is cheaper and simpler than a full disassembly.
 * It runs once per translated instruction, not per execution.
 *
 * Each table row is (mask, value) on the encoding, tried in order; the
 * first match wins and its handler refines the class.
 */
#include <stddef.h>
#include <string.h>

#include "dynpmu/qemu.h"

#define BITS(x, hi, lo) (((x) >> (lo)) & ((1u << ((hi) - (lo) + 1)) - 1))

typedef void (*iclass_fn)(uint32_t enc, struct dpmu_iclass *c);

struct iclass_row {
	uint32_t mask, value;
	iclass_fn fn;
	const char *what; /* the Arm ARM encoding group, for readers */
	uint8_t exec;     /* enum dpmu_exec_class of the whole group, 0 none (fn may decide) */
};

static void set_mem(struct dpmu_iclass *c, bool load, unsigned size, uint8_t mem)
{
	c->kind = load ? DPMU_INSN_LOAD : DPMU_INSN_STORE;
	c->size = (uint16_t)size;
	c->mem = mem;
}

static void set_branch(struct dpmu_iclass *c, uint8_t br_kind, bool immed)
{
	c->kind = DPMU_INSN_BRANCH;
	c->br_kind = br_kind;
	c->flags |= immed ? DPMU_IC_IMMED : DPMU_IC_REG_BRANCH;
}

/* ---- branches, exception generation, system (C4.1.65) ---------------------- */

static void c_bcond(uint32_t e, struct dpmu_iclass *c)
{
	(void)e;
	set_branch(c, DPMU_BR_COND, true);
}

static void c_b(uint32_t e, struct dpmu_iclass *c)
{
	set_branch(c, (e >> 31) ? DPMU_BR_CALL : DPMU_BR_UNCOND, true);
}

static void c_breg(uint32_t e, struct dpmu_iclass *c)
{
	/* opc[3] is the pointer-authentication Z bit (BRAA/BLRAA/RETAA...). */
	switch (BITS(e, 23, 21)) {
	case 0:
		set_branch(c, DPMU_BR_IND, false);
		break;
	case 1:
		set_branch(c, DPMU_BR_CALL, false);
		break;
	case 2:
		set_branch(c, DPMU_BR_RET, false);
		break;
	case 4: /* ERET, ERETAA: EXC_RETURN and a PC write */
		c->flags |= DPMU_IC_ERET;
		break;
	default: /* DRPS and unallocated */
		break;
	}
}

static void c_exc(uint32_t e, struct dpmu_iclass *c)
{
	/* SVC is opc 000, LL 01 (C6.2 SVC); HVC/SMC are not available to a
	 * user program, BRK and HLT raise a debug exception. */
	if (BITS(e, 23, 21) == 0 && BITS(e, 1, 0) == 1)
		c->flags |= DPMU_IC_SVC;
}

static void c_barrier(uint32_t e, struct dpmu_iclass *c)
{
	switch (BITS(e, 7, 5)) {
	case 4:
		c->flags |= DPMU_IC_DSB;
		break;
	case 5:
		c->flags |= DPMU_IC_DMB;
		break;
	case 6:
		c->flags |= DPMU_IC_ISB;
		break;
	default: /* CLREX, SB */
		c->flags |= DPMU_IC_DP;
		break;
	}
}

static void c_dczva(uint32_t e, struct dpmu_iclass *c)
{
	(void)e;
	/* DC ZVA writes a whole block (64 bytes on the Cortex-A cores); qemu
	 * does the write without a per-access callback. */
	set_mem(c, false, 64, DPMU_ICLASS_MEM_OPTIONAL);
}

static void c_dp(uint32_t e, struct dpmu_iclass *c)
{
	(void)e;
	c->flags |= DPMU_IC_DP;
}

/* Data-processing (3 source), C4.1.67: every allocated op (op54 00;
 * op31 000, 001, 010, 101, 110: MADD/MSUB, SMADDL/SMSUBL, SMULH,
 * UMADDL/UMSUBL, UMULH) is a multiply. */
static void c_imul(uint32_t e, struct dpmu_iclass *c)
{
	const unsigned op31 = BITS(e, 23, 21);
	c->flags |= DPMU_IC_DP;
	if (BITS(e, 30, 29) == 0 && op31 != 3 && op31 != 4 && op31 != 7)
		c->exec = DPMU_EX_INT_MUL;
}

/* ---- loads and stores (C4.1.66) ---------------------------------------------- */

static void c_excl(uint32_t e, struct dpmu_iclass *c)
{
	/* Load/store exclusive and ordered: size [31:30], o2 [23], L [22],
	 * o1 [21] (pair for exclusives, CAS for o2 = 1). */
	unsigned size = 1u << BITS(e, 31, 30);
	bool o2 = BITS(e, 23, 23), load = BITS(e, 22, 22), o1 = BITS(e, 21, 21);
	if (!o2 && o1 && !BITS(e, 31, 31)) {
		/* CASP: two registers of 32 or 64 bits, read-modify-write,
		 * counted as a store (its write is what coherence sees) */
		set_mem(c, false, BITS(e, 30, 30) ? 16 : 8, DPMU_ICLASS_MEM_MUST);
		c->flags |= DPMU_IC_PAIR;
		return;
	}
	if (!o2) {
		if (o1) {
			/* LDXP/STXP: two registers of 32 or 64 bits */
			size = BITS(e, 30, 30) ? 16 : 8;
			c->flags |= DPMU_IC_PAIR;
		}
		if (load) {
			set_mem(c, true, size, DPMU_ICLASS_MEM_MUST);
			c->flags |= DPMU_IC_LDREX;
		} else {
			/* a failing store-exclusive may make no access at all */
			set_mem(c, false, size, DPMU_ICLASS_MEM_OPTIONAL);
			c->flags |= DPMU_IC_STREX;
		}
		return;
	}
	if (o1) {
		/* CAS: a read-modify-write, counted as a store as CASP */
		set_mem(c, false, size, DPMU_ICLASS_MEM_MUST);
		return;
	}
	set_mem(c, load, size, DPMU_ICLASS_MEM_MUST); /* LDAR, STLR, LDLAR, STLLR */
}

static void c_literal(uint32_t e, struct dpmu_iclass *c)
{
	unsigned opc = BITS(e, 31, 30);
	if (BITS(e, 26, 26)) { /* SIMD&FP: 4, 8, 16 bytes */
		set_mem(c, true, opc == 0 ? 4 : opc == 1 ? 8 : 16, DPMU_ICLASS_MEM_MUST);
		return;
	}
	if (opc == 3) { /* PRFM (literal): a hint, qemu makes no access */
		c->flags |= DPMU_IC_DP;
		return;
	}
	set_mem(c, true, opc == 1 ? 8 : 4, DPMU_ICLASS_MEM_MUST);
}

static void c_pair(uint32_t e, struct dpmu_iclass *c)
{
	unsigned opc = BITS(e, 31, 30);
	bool load = BITS(e, 22, 22);
	unsigned reg;
	if (BITS(e, 26, 26))
		reg = opc == 0 ? 4 : opc == 1 ? 8 : 16;
	else if (opc == 1 && !load)
		reg = 8; /* STGP */
	else
		reg = opc == 2 ? 8 : 4; /* LDP/STP w, LDPSW */
	set_mem(c, load, 2 * reg, DPMU_ICLASS_MEM_MUST);
	c->flags |= DPMU_IC_PAIR;
}

static void c_ldst_reg(uint32_t e, struct dpmu_iclass *c)
{
	/* Load/store register (unsigned immediate, imm9, register offset) and
	 * the atomic memory operations: size [31:30], V [26], opc [23:22]. */
	unsigned size = BITS(e, 31, 30), opc = BITS(e, 23, 22);
	bool v = BITS(e, 26, 26);
	bool unsigned_off = BITS(e, 24, 24);
	if (!unsigned_off && BITS(e, 21, 21) && !v) {
		unsigned op4 = BITS(e, 11, 10);
		if (op4 == 0) {
			/* atomics: LDADD..LDUMIN, SWP (o3 = 1, opc 000), LDAPR
			 * (o3 = 1, opc 100) is a plain acquire load */
			if (BITS(e, 15, 15) && BITS(e, 14, 12) == 4) {
				set_mem(c, true, 1u << size, DPMU_ICLASS_MEM_MUST);
				return;
			}
			set_mem(c, false, 1u << size, DPMU_ICLASS_MEM_MUST);
			return;
		}
		if (op4 & 1) { /* LDRAA/LDRAB */
			set_mem(c, true, 8, DPMU_ICLASS_MEM_MUST);
			return;
		}
	}
	if (v) {
		unsigned bytes = (opc & 2) ? 16 : 1u << size;
		set_mem(c, opc & 1, bytes, DPMU_ICLASS_MEM_MUST);
		return;
	}
	if (opc == 0) {
		set_mem(c, false, 1u << size, DPMU_ICLASS_MEM_MUST);
		return;
	}
	if (size == 3 && opc == 2) { /* PRFM / PRFUM: a hint */
		c->flags |= DPMU_IC_DP;
		return;
	}
	set_mem(c, true, 1u << size, DPMU_ICLASS_MEM_MUST);
}

static void c_rcpc(uint32_t e, struct dpmu_iclass *c)
{
	/* LDAPUR/STLUR family: size [31:30], opc [23:22] */
	set_mem(c, BITS(e, 23, 22) != 0, 1u << BITS(e, 31, 30), DPMU_ICLASS_MEM_MUST);
}

static void c_simd_struct(uint32_t e, struct dpmu_iclass *c)
{
	/* Advanced SIMD load/store multiple structures (bit 24 = 0) and single
	 * structure (bit 24 = 1): L [22], Q [30], opcode [15:12]. */
	bool load = BITS(e, 22, 22);
	unsigned q = BITS(e, 30, 30), opcode = BITS(e, 15, 12), bytes;
	if (!BITS(e, 24, 24)) {
		static const unsigned char regs[16] = {4, 0, 4, 0, 3, 0, 3, 1, 2, 0, 2, 0, 0, 0, 0, 0};
		unsigned n = regs[opcode] ? regs[opcode] : 1;
		bytes = n * (q ? 16u : 8u);
	} else {
		unsigned selem = ((BITS(e, 13, 13) << 1) | BITS(e, 21, 21)) + 1;
		unsigned scale = BITS(e, 15, 14);
		unsigned esize = scale == 3 ? 1u << BITS(e, 11, 10)      /* LDnR */
			       : scale == 2 ? (BITS(e, 10, 10) ? 8u : 4u) /* S or D */
			       : 1u << scale;
		bytes = selem * esize;
	}
	set_mem(c, load, bytes, DPMU_ICLASS_MEM_MUST);
	c->flags |= DPMU_IC_ASE;
}

static void c_mte(uint32_t e, struct dpmu_iclass *c)
{
	/* STG/STZG/ST2G/LDG...: tag accesses; qemu may not report them */
	set_mem(c, BITS(e, 23, 22) == 1 && BITS(e, 11, 10) == 0, 16, DPMU_ICLASS_MEM_OPTIONAL);
}

/* ---- SIMD and floating point (C4.1.69) ----------------------------------------- */

static void c_crypto(uint32_t e, struct dpmu_iclass *c)
{
	(void)e;
	c->flags |= DPMU_IC_CRYPTO | DPMU_IC_ASE;
}

static void c_fp(uint32_t e, struct dpmu_iclass *c)
{
	(void)e;
	c->flags |= DPMU_IC_VFP;
}

/* FP data-processing (2 source), C4.1.69: FMUL, FDIV, FADD, FSUB, FMAX,
 * FMIN, FMAXNM, FMINNM, FNMUL take the FP pipeline's latency (opcode
 * [15:12], 0001 FDIV, 1001 to 1111 unallocated). The 3-source FMADD family
 * and FSQRT take theirs from their rows. */
static void c_fp2(uint32_t e, struct dpmu_iclass *c)
{
	const unsigned op = BITS(e, 15, 12);
	c->flags |= DPMU_IC_VFP;
	if (op <= 8)
		c->exec = op == 1 ? DPMU_EX_FP_DIV : DPMU_EX_FP;
}

static void c_simd(uint32_t e, struct dpmu_iclass *c)
{
	(void)e;
	c->flags |= DPMU_IC_ASE;
}

static void c_udf(uint32_t e, struct dpmu_iclass *c)
{
	(void)e;
	c->noretire = 1;
}

/* Tried in order; specific patterns before the groups that contain them. */
static const struct iclass_row rows[] = {
	{0xffff0000u, 0x00000000u, c_udf, "UDF (permanently undefined)", 0},
	/* branches, exceptions, system */
	{0xff000010u, 0x54000000u, c_bcond, "B.cond", 0},
	{0x7c000000u, 0x14000000u, c_b, "B, BL", 0},
	{0x7e000000u, 0x34000000u, c_bcond, "CBZ, CBNZ", 0},
	{0x7e000000u, 0x36000000u, c_bcond, "TBZ, TBNZ", 0},
	{0xfe000000u, 0xd6000000u, c_breg, "unconditional branch (register)", 0},
	{0xff000000u, 0xd4000000u, c_exc, "exception generation", 0},
	{0xfffff01fu, 0xd503301fu, c_barrier, "barriers (CRn = 3)", 0},
	{0xffffffe0u, 0xd50b7420u, c_dczva, "DC ZVA", 0},
	{0xffc00000u, 0xd5000000u, c_dp, "system: hints, MSR, MRS, SYS", 0},
	/* loads and stores */
	{0x3f000000u, 0x08000000u, c_excl, "load/store exclusive and ordered, CAS", 0},
	{0x3b000000u, 0x18000000u, c_literal, "load register (literal)", 0},
	{0x3a000000u, 0x28000000u, c_pair, "load/store pair", 0},
	{0xff200000u, 0xd9200000u, c_mte, "load/store memory tags", 0},
	{0x3f200c00u, 0x19000000u, c_rcpc, "LDAPR/STLR (unscaled immediate)", 0},
	{0x3a000000u, 0x38000000u, c_ldst_reg, "load/store register, atomics", 0},
	{0xbe000000u, 0x0c000000u, c_simd_struct, "Advanced SIMD load/store structures", 0},
	/* SIMD and FP data processing: crypto, then scalar FP, then the rest */
	{0xff3e0c00u, 0x4e280800u, c_crypto, "AES", 0},
	{0xff208c00u, 0x5e000000u, c_crypto, "SHA three-register", 0},
	{0xff3e0c00u, 0x5e280800u, c_crypto, "SHA two-register", 0},
	{0xff000000u, 0xce000000u, c_crypto, "SHA512, SHA3, SM3, SM4", 0},
	{0xff200c00u, 0x1e200800u, c_fp2, "FP data-processing (2 source)", 0},
	{0xff000000u, 0x1f000000u, c_fp, "FP data-processing (3 source)", DPMU_EX_FP},
	{0xff3ffc00u, 0x1e21c000u, c_fp, "FSQRT (scalar)", DPMU_EX_FP_DIV},
	{0x5e000000u, 0x1e000000u, c_fp, "scalar floating point", 0},
	/* three same, opcode 110xx: FMAXNM, FMLA, FADD, FMULX and their U / a
	 * siblings (FMINNM, FMLS, FSUB, FADDP, FABD, FMUL), the FP latency as
	 * the scalar ones (Cortex-A55 SOG section 4.16: FMLA 4 as FMADD) */
	{0x9f20e400u, 0x0e20c400u, c_simd, "Advanced SIMD three same: FP arithmetic", DPMU_EX_FP},
	{0xbfa0fc00u, 0x2e20fc00u, c_simd, "Advanced SIMD three same: FDIV", DPMU_EX_FP_DIV},
	{0x0e000000u, 0x0e000000u, c_simd, "Advanced SIMD data processing", 0},
	{0x1e000000u, 0x04000000u, c_simd, "SVE", 0},
	/* data processing: immediate (100x) and register (x101) */
	{0x1c000000u, 0x10000000u, c_dp, "data processing (immediate)", 0},
	{0x1f000000u, 0x1b000000u, c_imul, "data processing (3 source): multiplies", 0},
	{0x7fe0f800u, 0x1ac00800u, c_dp, "UDIV, SDIV", DPMU_EX_INT_DIV},
	{0x0e000000u, 0x0a000000u, c_dp, "data processing (register)", 0},
};

void dpmu_iclass_decode(uint32_t enc, struct dpmu_iclass *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		if ((enc & rows[i].mask) == rows[i].value) {
			out->exec = rows[i].exec;
			rows[i].fn(enc, out);
			return;
		}
	}
}
