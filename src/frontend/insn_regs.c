/*
 * Register operands of an A64 instruction, for the timing model's
 * register-ready scoreboard (qemu.h struct dpmu_iregs).
 *
 * Hand decoding in the style of insn_class.c: rows of (mask, value) on the
 * encoding, tried in order, first match wins, each naming its Arm ARM
 * encoding group (C4.1). A row's operand flags say what its plain fields
 * are (O_*); its handler, if any, rejects unallocated encodings and adds
 * what the fields cannot say. A row with neither lists nothing: that is
 * how unallocated corners and hints are carved out.
 *
 * Register 31 is XZR unless the operand is <Xn|SP> (O_SN, O_SD, O_ST:
 * base registers, ADD/SUB immediate and extended, logical immediate
 * destinations, PAC modifiers, tag sources).
 *
 * Each array holds at most three registers. A handler may offer more; the
 * priority of each decides what is kept: load/store base and offset
 * registers are never dropped (address dependences decide load-to-use),
 * extra V registers of multi-register structures and the second register
 * of a CASP pair go first.
 *
 * Not decoded (no registers): SVE and SME, FEAT_LS64, FEAT_LRCPC3,
 * FEAT_LSE128, FEAT_THE, TME. FPCR/FPSR are not scoreboard registers.
 * Advanced SIMD encodings are checked as far as their group, so some
 * unallocated size/opcode combinations there get the group's registers.
 */
#include <stddef.h>
#include <string.h>

#include "dynpmu/qemu.h"

#define BITS(x, hi, lo) (((x) >> (lo)) & ((1u << ((hi) - (lo) + 1)) - 1))
#define BIT(x, n) (((x) >> (n)) & 1u)
#define RD(e) BITS(e, 4, 0)
#define RN(e) BITS(e, 9, 5)
#define RM(e) BITS(e, 20, 16)
#define RA(e) BITS(e, 14, 10)

enum { P_EXTRA = 0, P_NORM = 1, P_KEEP = 2 };

#define ACC_MAX 8 /* no row offers more than this per array */

struct acc {
	uint8_t reg[ACC_MAX], pri[ACC_MAX];
	unsigned n;
};

struct ctx {
	struct acc src, dst;
	bool wb; /* a base written back (base()) */
};

/* Row operand flags: what the plain fields are, applied before the handler. */
enum {
	O_XN = 1u << 0,  /* reads Xn [9:5] */
	O_XM = 1u << 1,  /* reads Xm [20:16] */
	O_XA = 1u << 2,  /* reads Xa [14:10] */
	O_XT = 1u << 3,  /* reads Xt [4:0] (CBZ, MOVK, BFM, stores, MSR) */
	O_SN = 1u << 4,  /* reads Xn|SP [9:5]: a base register, never dropped */
	O_ST = 1u << 5,  /* reads Xt|SP [4:0] (PAC modifier) */
	O_XD = 1u << 6,  /* writes Xd [4:0] */
	O_SD = 1u << 7,  /* writes Xd|SP [4:0] */
	O_WB = 1u << 8,  /* writes Xn|SP [9:5] back (pre/post-index) */
	O_VN = 1u << 9,  /* reads Vn */
	O_VM = 1u << 10, /* reads Vm */
	O_VA = 1u << 11, /* reads Va [14:10] */
	O_VT = 1u << 12, /* reads Vd: accumulating, inserting, crypto state */
	O_VD = 1u << 13, /* writes Vd */
	O_FR = 1u << 14, /* reads NZCV */
	O_FW = 1u << 15, /* writes NZCV */
	O_LR = 1u << 16, /* writes X30 (BL, BLR) */
	O_WS = 1u << 17, /* writes Xs [20:16] (exclusive status, CAS) */
	O_W2 = 1u << 18, /* writes Xt2 [14:10] (LDXP) */
};

#define O_XNMD (O_XN | O_XM | O_XD)
#define O_VNMD (O_VN | O_VM | O_VD)

/* Returns false for an unallocated encoding: then nothing is listed. */
typedef bool (*iregs_fn)(uint32_t e, struct ctx *c);

struct iregs_row {
	uint32_t mask, value;
	uint32_t ops; /* O_* */
	iregs_fn fn;
	const char *what; /* the Arm ARM encoding group, for readers */
};

static void put(struct acc *a, uint8_t r, unsigned pri)
{
	if (!r)
		return;
	for (unsigned i = 0; i < a->n; i++) {
		if (a->reg[i] == r) {
			if (pri > a->pri[i])
				a->pri[i] = (uint8_t)pri;
			return;
		}
	}
	if (a->n < ACC_MAX) {
		a->reg[a->n] = r;
		a->pri[a->n++] = (uint8_t)pri;
	}
}

/* The three highest-priority registers, in the order they were offered. */
static void pack(const struct acc *a, uint8_t out[3])
{
	bool take[ACC_MAX] = {false};
	unsigned k = 0;
	for (int p = P_KEEP; p >= P_EXTRA; p--)
		for (unsigned i = 0; i < a->n && k < 3; i++)
			if (a->pri[i] == p) {
				take[i] = true;
				k++;
			}
	k = 0;
	for (unsigned i = 0; i < a->n; i++)
		if (take[i])
			out[k++] = a->reg[i];
}

static void rd(struct ctx *c, uint8_t r)
{
	put(&c->src, r, P_NORM);
}

static void wr(struct ctx *c, uint8_t r)
{
	put(&c->dst, r, P_NORM);
}

/* Register 31 is XZR/WZR: never a dependence. */
static uint8_t gx(unsigned n)
{
	return n < 31 ? DPMU_REG_X(n) : 0;
}

/* Register 31 is SP (<Xn|SP> operands). */
static uint8_t gsp(unsigned n)
{
	return n < 31 ? DPMU_REG_X(n) : DPMU_REG_SP;
}

static uint8_t vr(unsigned n)
{
	return DPMU_REG_V(n & 31);
}

/* ---- data processing (immediate, register) (C4.1.86, C4.1.89) ----------------- */

static bool r_bitmask(uint32_t e, struct ctx *c)
{
	/* DecodeBitMasks: N:NOT(imms) gives the element size, an all-ones
	 * element is reserved; N = 1 needs sf = 1 */
	unsigned n = BIT(e, 22), imms = BITS(e, 15, 10), x = (n << 6) | (~imms & 0x3f), len = 6;
	(void)c;
	if ((!BIT(e, 31) && n) || x < 2)
		return false;
	while (!(x >> len))
		len--;
	return (imms & ((1u << len) - 1)) != (1u << len) - 1;
}

static bool r_movw(uint32_t e, struct ctx *c)
{
	(void)c; /* opc 01 is unallocated, hw >= 2 needs sf */
	return BITS(e, 30, 29) != 1 && (BIT(e, 31) || !BIT(e, 22));
}

/* bitfield, extract: sf [31] = N [22]; the W forms take 5-bit immediates */
static bool r_sf_n(uint32_t e, struct ctx *c)
{
	(void)c;
	if (BIT(e, 31) != BIT(e, 22) || (!BIT(e, 31) && BIT(e, 15)))
		return false;
	if (BIT(e, 23)) /* EXTR: op21 [30:29] and o0 [21] are 0 */
		return !BITS(e, 30, 29) && !BIT(e, 21);
	return BITS(e, 30, 29) != 3 && (BIT(e, 31) || !BIT(e, 21));
}

static bool r_shifted(uint32_t e, struct ctx *c)
{
	(void)c; /* imm6 >= 32 for W; add/subtract (bit 24) has no ROR */
	return (BIT(e, 31) || !BIT(e, 15)) && !(BIT(e, 24) && BITS(e, 23, 22) == 3);
}

static bool r_extended(uint32_t e, struct ctx *c)
{
	(void)c; /* opt [23:22] 00, imm3 [12:10] <= 4 */
	return !BITS(e, 23, 22) && BITS(e, 12, 10) <= 4;
}

static bool r_flagm(uint32_t e, struct ctx *c)
{
	/* RMIF (sf op S 101, [14:10] 00001, bit 4 0), SETF8/SETF16 (001,
	 * Rm 0, [13:10] 0010, [4:0] 01101): some flags set, the rest kept */
	unsigned top = BITS(e, 31, 29);
	(void)c;
	return (top == 5 && RA(e) == 1 && !BIT(e, 4)) ||
	       (top == 1 && !BITS(e, 20, 15) && BITS(e, 13, 10) == 2 && RD(e) == 13);
}

static bool r_ccmp(uint32_t e, struct ctx *c)
{
	(void)c; /* S [29] = 1, o2 [10] = o3 [4] = 0 */
	return BIT(e, 29) && !BIT(e, 10) && !BIT(e, 4);
}

static bool r_csel(uint32_t e, struct ctx *c)
{
	(void)c; /* CSET is CSINC Rd, XZR, XZR: NZCV only */
	return !BIT(e, 29) && !BIT(e, 11);
}

static bool r_dp2(uint32_t e, struct ctx *c)
{
	unsigned op = BITS(e, 15, 10);
	if (op == 0) { /* SUBP, SUBPS (CMPP) Xd, Xn|SP, Xm|SP */
		rd(c, gsp(RN(e)));
		rd(c, gsp(RM(e)));
		wr(c, gx(RD(e)));
		if (BIT(e, 29))
			wr(c, DPMU_REG_NZCV);
		return true;
	}
	if (BIT(e, 29))
		return false;
	if (op == 4 || op == 5) { /* IRG Xd|SP, Xn|SP, Xm; GMI Xd, Xn|SP, Xm */
		rd(c, gsp(RN(e)));
		rd(c, gx(RM(e)));
		wr(c, op == 4 ? gsp(RD(e)) : gx(RD(e)));
		return true;
	}
	/* UDIV, SDIV, LSLV..RORV, PACGA (Xm|SP), CRC32*, SMAX..UMIN */
	if (op != 2 && op != 3 && (op < 8 || op > 12) && (op < 16 || op > 27))
		return false;
	rd(c, gx(RN(e)));
	rd(c, op == 12 ? gsp(RM(e)) : gx(RM(e)));
	wr(c, gx(RD(e)));
	return true;
}

static bool r_dp1(uint32_t e, struct ctx *c)
{
	unsigned op2 = RM(e), op = BITS(e, 15, 10);
	if (BIT(e, 29))
		return false;
	if (op2 == 0 && op <= 8) { /* RBIT, REV16, REV32, REV, CLZ, CLS, CTZ, CNT, ABS */
		rd(c, gx(RN(e)));
		wr(c, gx(RD(e)));
		return true;
	}
	if (op2 != 1 || op > 17 || !BIT(e, 31))
		return false;
	/* PACIA..AUTDB sign Xd with the modifier Xn|SP; the Z forms and
	 * XPACI/XPACD only Xd */
	rd(c, gx(RD(e)));
	if (op < 8)
		rd(c, gsp(RN(e)));
	wr(c, gx(RD(e)));
	return true;
}

static bool r_dp3(uint32_t e, struct ctx *c)
{
	/* op31 [23:21], o0 [15]: 000 MADD/MSUB (MUL, MNEG: Ra = XZR), 001 and
	 * 101 S/UMADDL, S/UMSUBL (sf 1); 010, 110 SMULH, UMULH (Ra unused) */
	unsigned op31 = BITS(e, 23, 21);
	bool mulh = (op31 & 3) == 2;
	if (BITS(e, 30, 29) ||
	    (op31 && (!BIT(e, 31) || (op31 & 3) == 3 || op31 == 4 || (mulh && BIT(e, 15)))))
		return false;
	if (!mulh)
		rd(c, gx(RA(e)));
	return true;
}

/* ---- branches, exception generation, system (C4.1.87) ------------------------- */

static bool r_retaa(uint32_t e, struct ctx *c)
{
	(void)e; /* RETAA, RETAB: X30, signed with SP as the modifier */
	rd(c, DPMU_REG_X(30));
	rd(c, DPMU_REG_SP);
	return true;
}

static bool r_svc(uint32_t e, struct ctx *c)
{
	(void)e; /* the Linux system-call convention: number in X8, arguments
		  * from X0, the result to X0 */
	rd(c, DPMU_REG_X(8));
	rd(c, DPMU_REG_X(0));
	wr(c, DPMU_REG_X(0));
	return true;
}

static bool r_hint(uint32_t e, struct ctx *c)
{
	/* HINT space, CRm [11:8], op2 [7:5]: the PAC hints use fixed registers */
	unsigned crm = BITS(e, 11, 8), op2 = BITS(e, 7, 5);
	uint8_t x30 = DPMU_REG_X(30);
	if (crm == 1 && !(op2 & 1)) { /* PACIA1716 ... AUTIB1716 */
		rd(c, DPMU_REG_X(17));
		rd(c, DPMU_REG_X(16));
		wr(c, DPMU_REG_X(17));
	} else if (crm == 3 || (crm == 0 && op2 == 7)) { /* PACIAZ ... AUTIBSP, XPACLRI */
		rd(c, x30);
		if (crm == 3 && (op2 & 1))
			rd(c, DPMU_REG_SP);
		wr(c, x30);
	} else if (crm == 5 && op2 == 0) { /* CHKFEAT X16 */
		rd(c, DPMU_REG_X(16));
		wr(c, DPMU_REG_X(16));
	}
	return true; /* NOP, YIELD, WFE, BTI, ...: none */
}

/* ---- loads and stores (C4.1.88) ----------------------------------------------- */

/* The address: the base is never dropped; writeback makes it a result. */
static void base(struct ctx *c, unsigned rn, bool wb)
{
	put(&c->src, gsp(rn), P_KEEP);
	if (wb) {
		put(&c->dst, gsp(rn), P_KEEP);
		c->wb = true;
	}
}

static bool r_simd_struct(uint32_t e, struct ctx *c)
{
	/* Advanced SIMD load/store multiple (bit 24 = 0) and single (1)
	 * structures: Q [30], L [22], post-index [23] with Rm [20:16] (31: the
	 * immediate form), opcode [15:12], size [11:10]. */
	static const uint8_t nregs[16] = {4, 0, 4, 0, 3, 0, 3, 1, 2, 0, 2, 0, 0, 0, 0, 0};
	bool load = BIT(e, 22), post = BIT(e, 23), merge = false;
	unsigned opcode = BITS(e, 15, 12), size = BITS(e, 11, 10), n;
	if (!post && RM(e))
		return false;
	if (!BIT(e, 24)) {
		n = nregs[opcode];
		if (BIT(e, 21) || !n)
			return false;
		if ((opcode == 0 || opcode == 4 || opcode == 8) && size == 3 && !BIT(e, 30))
			return false; /* LD2/LD3/LD4 .1D is reserved */
	} else {
		unsigned kind = opcode >> 2; /* 0 B, 1 H, 2 S or D, 3 replicate */
		bool s = BIT(e, 12);
		n = ((BIT(e, 13) << 1) | BIT(e, 21)) + 1;
		if ((kind == 3 && (!load || s)) || (kind == 1 && (size & 1)) ||
		    (kind == 2 && (size > 1 || (size == 1 && s))))
			return false;
		merge = load && kind != 3; /* one lane: the rest of Vt stays */
	}
	for (unsigned i = 0; i < n; i++) {
		unsigned pri = i ? P_EXTRA : P_NORM;
		if (!load || merge)
			put(&c->src, vr(RD(e) + i), pri);
		if (load)
			put(&c->dst, vr(RD(e) + i), pri);
	}
	base(c, RN(e), post);
	if (post && RM(e) != 31)
		put(&c->src, gx(RM(e)), P_KEEP);
	return true;
}

static bool r_casp(uint32_t e, struct ctx *c)
{
	/* CASP Rs:Rs+1, Rt:Rt+1 (even registers): keep the first of each
	 * pair, and the base */
	unsigned rs = RM(e), rt = RD(e);
	rd(c, gx(rs));
	put(&c->src, gx(rs + 1), P_EXTRA);
	rd(c, gx(rt));
	put(&c->src, gx(rt + 1), P_EXTRA);
	base(c, RN(e), false);
	wr(c, gx(rs));
	wr(c, gx(rs + 1));
	return true;
}

static bool r_rcpc(uint32_t e, struct ctx *c)
{
	/* LDAPUR*, STLUR*: size [31:30], opc [23:22] (00 store) */
	unsigned size = BITS(e, 31, 30), opc = BITS(e, 23, 22);
	if ((size == 3 && opc >= 2) || (size == 2 && opc == 3))
		return false;
	if (opc)
		wr(c, gx(RD(e)));
	else
		rd(c, gx(RD(e)));
	return true;
}

static bool r_mops(uint32_t e, struct ctx *c)
{
	/* FEAT_MOPS CPY* [Xd]!, [Xs]!, Xn!: all three read and written;
	 * SET* (op1 [23:22] = 11) [Xd]!, Xn!, Xs: the value Xs only read */
	bool set = BITS(e, 23, 22) == 3;
	put(&c->src, gx(RD(e)), P_KEEP);
	put(&c->src, gx(RM(e)), set ? P_NORM : P_KEEP);
	rd(c, gx(RN(e)));
	put(&c->dst, gx(RD(e)), P_KEEP);
	if (!set)
		put(&c->dst, gx(RM(e)), P_KEEP);
	wr(c, gx(RN(e)));
	return true;
}

static bool r_mte(uint32_t e, struct ctx *c)
{
	/* opc [23:22], imm9 [20:12], op2 [11:10]: 00 LDG, STZGM, STGM, LDGM
	 * (imm9 0 but LDG), else STG, STZG, ST2G, STZ2G (01 post, 11 pre) */
	unsigned opc = BITS(e, 23, 22), op2 = BITS(e, 11, 10);
	if (op2 == 0) {
		if (opc != 1 && BITS(e, 20, 12))
			return false;
		if (opc != 3) /* LDG inserts the tag into Xt; STZGM, STGM store Xt */
			rd(c, gx(RD(e)));
		if (opc & 1)
			wr(c, gx(RD(e)));
		base(c, RN(e), false);
		return true;
	}
	rd(c, gsp(RD(e))); /* the tag comes from Xt|SP */
	base(c, RN(e), op2 & 1);
	return true;
}

static bool r_pair(uint32_t e, struct ctx *c)
{
	/* opc [31:30], V [26], mode [24:23] (00 no-allocate, 01 post-index,
	 * 10 offset, 11 pre-index), L [22], Rt2 [14:10] */
	unsigned opc = BITS(e, 31, 30), mode = BITS(e, 24, 23);
	bool v = BIT(e, 26), load = BIT(e, 22);
	if (opc == 3 || (!v && opc == 1 && mode == 0))
		return false;
	uint8_t t1 = v ? vr(RD(e)) : gx(RD(e)), t2 = v ? vr(RA(e)) : gx(RA(e));
	if (load) {
		wr(c, t1);
		wr(c, t2);
	} else { /* STP, STNP, STGP */
		rd(c, t1);
		rd(c, t2);
	}
	base(c, RN(e), mode & 1);
	return true;
}

static bool r_ldst(uint32_t e, struct ctx *c)
{
	/* Load/store register: size [31:30], V [26], opc [23:22]; unsigned
	 * offset (bit 24), register offset (bit 21, Rm, option [15:13]),
	 * else imm9 with [11:10] 00 unscaled, 01 post, 10 unprivileged, 11 pre */
	unsigned size = BITS(e, 31, 30), opc = BITS(e, 23, 22);
	bool v = BIT(e, 26), uoff = BIT(e, 24), roff = !uoff && BIT(e, 21);
	unsigned mode = (uoff || roff) ? 0 : BITS(e, 11, 10);
	bool load = opc != 0, prfm = false;
	if (roff && !BIT(e, 14))
		return false; /* option<1> = 0 */
	if (v) {
		if ((opc >= 2 && size) || mode == 2)
			return false;
		load = opc & 1; /* opc<1>: the Q forms */
	} else if (opc == 2 && size == 3) {
		if (mode)
			return false; /* no PRFM with writeback or unprivileged */
		prfm = true;          /* PRFM, PRFUM: a hint, only the address */
		load = false;
	} else if (opc == 3 && size >= 2) {
		return false;
	}
	uint8_t t = v ? vr(RD(e)) : gx(RD(e));
	if (load)
		wr(c, t);
	else if (!prfm)
		rd(c, t);
	base(c, RN(e), mode & 1);
	if (roff)
		put(&c->src, gx(RM(e)), P_KEEP);
	return true;
}

/* ---- SIMD and floating point (C4.1.90) ---------------------------------------- */

static bool acc(uint32_t e, struct ctx *c, bool reads_vd)
{
	if (reads_vd) /* accumulating or inserting forms */
		rd(c, vr(RD(e)));
	return true;
}

/* vector (bit 28 = 0) with Q [30] = 1: an "...2" narrowing form writes the
 * upper half of Vd and keeps the lower */
static bool upper_half(uint32_t e)
{
	return !BIT(e, 28) && BIT(e, 30);
}

/* scalar FP: M [31] = S [29] = 0, ftype [23:22] 10 is unallocated */
static bool r_fp(uint32_t e, struct ctx *c)
{
	(void)c;
	return !BIT(e, 31) && !BIT(e, 29) && BITS(e, 23, 22) != 2;
}

static bool r_fpimm(uint32_t e, struct ctx *c)
{
	return r_fp(e, c) && !RN(e); /* imm5 [9:5] is 0 */
}

static bool r_fp2(uint32_t e, struct ctx *c)
{
	return r_fp(e, c) && BITS(e, 15, 12) <= 8; /* FMUL ... FNMUL */
}

static bool r_fcmp(uint32_t e, struct ctx *c)
{
	/* op [15:14] 00, opcode2 [4:0]: bit 3 compares with #0.0 (no Vm) */
	if (!r_fp(e, c) || BITS(e, 15, 14) || BITS(e, 2, 0))
		return false;
	if (!BIT(e, 3))
		rd(c, vr(RM(e)));
	return true;
}

static bool r_fpfix(uint32_t e, struct ctx *c)
{
	/* rmode [20:19], opcode [18:16]: SCVTF/UCVTF from Xn, FCVTZS/FCVTZU to
	 * Xd; the W forms take scale [15:10] >= 32 */
	unsigned rmode = BITS(e, 20, 19), op = BITS(e, 18, 16);
	if (BIT(e, 29) || BITS(e, 23, 22) == 2 || (!BIT(e, 31) && !BIT(e, 15)))
		return false;
	if (rmode == 0 && (op == 2 || op == 3)) {
		rd(c, gx(RN(e)));
		wr(c, vr(RD(e)));
	} else if (rmode == 3 && op <= 1) {
		rd(c, vr(RN(e)));
		wr(c, gx(RD(e)));
	} else {
		return false;
	}
	return true;
}

static bool r_fpint(uint32_t e, struct ctx *c)
{
	/* opcode [18:16]: 010 SCVTF, 011 UCVTF, 111 FMOV from a general
	 * register (rmode 01: into D[1], the rest of Vd stays); the others
	 * (FCVT*, FMOV to general, FJCVTZS) go from Vn to a general register */
	unsigned op = BITS(e, 18, 16);
	bool top = BITS(e, 20, 19) == 1 && (op & 6) == 6;
	if (BIT(e, 29) || (BITS(e, 23, 22) == 2 && !top))
		return false;
	if (op == 2 || op == 3 || op == 7) {
		rd(c, gx(RN(e)));
		acc(e, c, top);
		wr(c, vr(RD(e)));
	} else {
		rd(c, vr(RN(e)));
		wr(c, gx(RD(e)));
	}
	return true;
}

static bool r_imm5(uint32_t e, struct ctx *c)
{
	(void)c; /* copy: imm5 x0000 is reserved */
	return BITS(e, 19, 16) != 0;
}

static bool r_simd3x(uint32_t e, struct ctx *c)
{
	/* three-register extension, opcode [14:11]: SQRDMLAH/SH, SDOT, UDOT,
	 * USDOT, FCMLA, xMMLA, BFDOT accumulate; FCADD (U, 11x0) does not */
	unsigned op = BITS(e, 14, 11);
	return acc(e, c, !(BIT(e, 29) && (op == 12 || op == 14)));
}

static bool r_simd3h(uint32_t e, struct ctx *c)
{
	/* three same (FP16), opcode [13:11]: FMLA, FMLS (U 0, 001) */
	return acc(e, c, !BIT(e, 29) && BITS(e, 13, 11) == 1);
}

static bool r_simd3(uint32_t e, struct ctx *c)
{
	/* three same, opcode [15:11]: MLA/MLS 10010, SABA/UABA 01111, FMLA/
	 * FMLS 11001 (U 0), BSL/BIT/BIF 00011 (U 1, size != 0), FMLAL(2)/
	 * FMLSL(2) 11101 (U 0) and 11001 (U 1) with sz [22] 0 */
	unsigned op = BITS(e, 15, 11);
	bool u = BIT(e, 29);
	return acc(e, c,
		   op == 0x12 || op == 0x0f || (!u && op == 0x19) || (u && op == 3 && BITS(e, 23, 22)) ||
			   (!BIT(e, 22) && op == (u ? 0x19u : 0x1du)));
}

static bool r_simd3d(uint32_t e, struct ctx *c)
{
	/* three different, opcode [15:12]: SABAL, SMLAL, SQDMLAL, SMLSL,
	 * SQDMLSL accumulate; ADDHN2, SUBHN2 (and R) keep the lower half */
	unsigned op = BITS(e, 15, 12);
	return op != 15 &&
	       acc(e, c, op == 5 || (op >= 8 && op <= 11) || ((op == 4 || op == 6) && upper_half(e)));
}

static bool r_simd2(uint32_t e, struct ctx *c)
{
	/* [20:17]: 0000 two-register misc, 1000 across lanes / pairwise, 1100
	 * FP16 misc; opcode [16:12]: SUQADD, USQADD (00011), SADALP, UADALP
	 * (00110) accumulate; XTN2, SQXTN2, FCVTN2 ... keep the lower half */
	unsigned grp = BITS(e, 20, 17), op = BITS(e, 16, 12);
	if (grp != 0 && grp != 8 && grp != 12)
		return false;
	return acc(e, c, grp == 0 && (op == 3 || op == 6 || ((op == 18 || op == 20 || op == 22) && upper_half(e))));
}

static bool r_tbl(uint32_t e, struct ctx *c)
{
	/* len [14:13]: Vn..Vn+len form the table; op [12]: TBX keeps Vd lanes */
	unsigned len = BITS(e, 14, 13);
	if (BITS(e, 23, 22))
		return false;
	rd(c, vr(RN(e)));
	for (unsigned i = 1; i <= len; i++)
		put(&c->src, vr(RN(e) + i), P_EXTRA);
	rd(c, vr(RM(e)));
	return acc(e, c, BIT(e, 12));
}

static bool r_shift(uint32_t e, struct ctx *c)
{
	/* immh [22:19] != 0, opcode [15:11]: SSRA, SRSRA (and U), SRI, SLI
	 * accumulate or insert; SHRN2 ... SQRSHRN2 keep the lower half */
	unsigned op = BITS(e, 15, 11);
	bool u = BIT(e, 29);
	return BITS(e, 22, 19) &&
	       acc(e, c, op == 2 || op == 6 || (u && (op == 8 || op == 10)) || (op >= 16 && op <= 19 && upper_half(e)));
}

static bool r_elem(uint32_t e, struct ctx *c)
{
	/* by element: size [23:22], L [21], M [20], Rm [19:16], opcode [15:12].
	 * Vm is M:Rm, or Rm alone (V0..V15, M indexes) for H elements (size 00,
	 * 01; not SUDOT/BFDOT, FCMLA) and FMLAL(2)/FMLSL(2)/BFMLAL */
	unsigned size = BITS(e, 23, 22), op = BITS(e, 15, 12);
	bool u = BIT(e, 29), dot = !u && op == 15, fcmla = u && (op & 9) == 1;
	bool fmlal = size == 2 && (u ? (op == 8 || op == 12) : (op == 0 || op == 4));
	bool rm4 = (size <= 1 && !dot && !fcmla) || fmlal || (dot && size == 3);
	rd(c, vr(rm4 ? BITS(e, 19, 16) : RM(e)));
	/* MLA, MLS, FMLA, FMLS, SMLAL..., FCMLA (opcode 0xxx), the dot
	 * products, SQRDMLAH/SH, FMLAL2/FMLSL2 accumulate */
	return !(u && op == 11) && acc(e, c, ((u ? 0xf1ffu : 0xc0ffu) >> op) & 1);
}

/* Tried in order; specific patterns before the groups that contain them.
 * SVE (op0 x010), SME, B (immediate), barriers and MSR (immediate) have
 * no rows: no registers. */
static const struct iregs_row rows[] = {
	/* data processing (immediate) */
	{0x1f000000u, 0x10000000u, O_XD, NULL, "PC-rel. addressing: ADR, ADRP"},
	{0x3f800000u, 0x11000000u, O_SN | O_SD, NULL, "add/subtract (immediate): ADD, SUB (MOV SP)"},
	{0x3f800000u, 0x31000000u, O_SN | O_XD | O_FW, NULL, "add/subtract (immediate): ADDS, SUBS (CMP, CMN)"},
	{0xbfc0c000u, 0x91800000u, O_SN | O_SD, NULL, "add/subtract (immediate, with tags): ADDG, SUBG"},
	{0x7ff00000u, 0x11c00000u, O_XN | O_XD, NULL, "min/max (immediate): SMAX, UMAX, SMIN, UMIN"},
	{0x1f800000u, 0x11800000u, 0, NULL, "add/subtract (immediate, with tags), min/max: unallocated"},
	{0x7f800000u, 0x72000000u, O_XN | O_XD | O_FW, r_bitmask, "logical (immediate): ANDS (TST)"},
	{0x1f800000u, 0x12000000u, O_XN | O_SD, r_bitmask, "logical (immediate): AND, ORR (MOV), EOR"},
	{0x7f800000u, 0x72800000u, O_XT | O_XD, r_movw, "move wide (immediate): MOVK"},
	{0x1f800000u, 0x12800000u, O_XD, r_movw, "move wide (immediate): MOVN, MOVZ"},
	{0x7f800000u, 0x33000000u, O_XN | O_XT | O_XD, r_sf_n, "bitfield: BFM (BFI, BFXIL)"},
	{0x1f800000u, 0x13000000u, O_XN | O_XD, r_sf_n, "bitfield: SBFM, UBFM (LSL, ASR, SXTW, UBFX...)"},
	{0x1f800000u, 0x13800000u, O_XNMD, r_sf_n, "extract: EXTR (ROR)"},
	/* data processing (register) */
	{0x7f000000u, 0x6a000000u, O_XNMD | O_FW, r_shifted, "logical (shifted register): ANDS, BICS (TST)"},
	{0x1f000000u, 0x0a000000u, O_XNMD, r_shifted, "logical (shifted register) (MOV, MVN)"},
	{0x3f200000u, 0x2b000000u, O_XNMD | O_FW, r_shifted, "add/subtract (shifted register): ADDS, SUBS (CMP, NEGS)"},
	{0x1f200000u, 0x0b000000u, O_XNMD, r_shifted, "add/subtract (shifted register) (NEG)"},
	{0x3f200000u, 0x2b200000u, O_SN | O_XM | O_XD | O_FW, r_extended, "add/subtract (extended register): ADDS, SUBS"},
	{0x1f200000u, 0x0b200000u, O_SN | O_XM | O_SD, r_extended, "add/subtract (extended register): ADD, SUB"},
	{0x3fe0fc00u, 0x3a000000u, O_XNMD | O_FR | O_FW, NULL, "add/subtract (with carry): ADCS, SBCS (NGCS)"},
	{0x3fe0fc00u, 0x1a000000u, O_XNMD | O_FR, NULL, "add/subtract (with carry): ADC, SBC (NGC)"},
	{0x1fe00000u, 0x1a000000u, O_XN | O_FR | O_FW, r_flagm, "rotate right into flags, evaluate into flags"},
	{0x1fe00800u, 0x1a400000u, O_XN | O_XM | O_FR | O_FW, r_ccmp, "conditional compare (register)"},
	{0x1fe00800u, 0x1a400800u, O_XN | O_FR | O_FW, r_ccmp, "conditional compare (immediate)"},
	{0x1fe00000u, 0x1a800000u, O_XNMD | O_FR, r_csel, "conditional select (CSET, CINC, CNEG...)"},
	{0x5fe00000u, 0x1ac00000u, 0, r_dp2, "data-processing (2 source)"},
	{0x5fe00000u, 0x5ac00000u, 0, r_dp1, "data-processing (1 source)"},
	{0x1f000000u, 0x1b000000u, O_XNMD, r_dp3, "data-processing (3 source)"},
	/* branches, exception generation, system */
	{0xff000000u, 0x54000000u, O_FR, NULL, "conditional branch (immediate)"},
	{0xfc000000u, 0x94000000u, O_LR, NULL, "unconditional branch (immediate): BL"},
	{0x7e000000u, 0x34000000u, O_XT, NULL, "compare and branch (immediate)"},
	{0x7e000000u, 0x36000000u, O_XT, NULL, "test and branch (immediate)"},
	{0xfffffc1fu, 0xd61f0000u, O_XN, NULL, "unconditional branch (register): BR"},
	{0xfffffc1fu, 0xd63f0000u, O_XN | O_LR, NULL, "unconditional branch (register): BLR"},
	{0xfffffc1fu, 0xd65f0000u, O_XN, NULL, "unconditional branch (register): RET (X30 default)"},
	{0xfffff81fu, 0xd61f081fu, O_XN, NULL, "unconditional branch (register): BRAAZ, BRABZ"},
	{0xfffff81fu, 0xd63f081fu, O_XN | O_LR, NULL, "unconditional branch (register): BLRAAZ, BLRABZ"},
	{0xfffffbffu, 0xd65f0bffu, 0, r_retaa, "unconditional branch (register): RETAA, RETAB"},
	{0xfffff800u, 0xd71f0800u, O_XN | O_ST, NULL, "unconditional branch (register): BRAA, BRAB"},
	{0xfffff800u, 0xd73f0800u, O_XN | O_ST | O_LR, NULL, "unconditional branch (register): BLRAA, BLRAB"},
	{0xffe0001fu, 0xd4000001u, 0, r_svc, "exception generation: SVC"},
	{0xfffff01fu, 0xd503201fu, 0, r_hint, "hints"},
	{0xffffff9fu, 0xd500401fu, O_FR | O_FW, NULL, "PSTATE: CFINV, XAFLAG, AXFLAG"},
	{0xffffffc0u, 0xd5031000u, O_XT, NULL, "system instructions with register argument: WFET, WFIT"},
	{0xffffffe0u, 0xd53b4200u, O_FR | O_XD, NULL, "system register move: MRS Xt, NZCV"},
	{0xffffffe0u, 0xd51b4200u, O_XT | O_FW, NULL, "system register move: MSR NZCV, Xt"},
	{0xfff80000u, 0xd5080000u, O_XT, NULL, "system instructions: SYS (DC ZVA, IC, TLBI, AT)"},
	{0xfff80000u, 0xd5280000u, O_XD, NULL, "system instructions: SYSL"},
	{0xfff00000u, 0xd5100000u, O_XT, NULL, "system register move: MSR (register)"},
	{0xfff00000u, 0xd5300000u, O_XD, NULL, "system register move: MRS"},
	/* loads and stores; exclusive and ordered: size, o2 [23], L [22],
	 * o1 [21], Rs [20:16], o0 [15], Rt2 [14:10] (11111 where unused) */
	{0xbe000000u, 0x0c000000u, 0, r_simd_struct, "Advanced SIMD load/store multiple, single structures"},
	{0x3fe07c00u, 0x08007c00u, O_XT | O_SN | O_WS, NULL, "load/store exclusive register: STXR, STLXR"},
	{0x3fff7c00u, 0x085f7c00u, O_SN | O_XD, NULL, "load/store exclusive register: LDXR, LDAXR"},
	{0xbfe00000u, 0x88200000u, O_XT | O_XA | O_SN | O_WS, NULL, "load/store exclusive pair: STXP, STLXP"},
	{0xbfff0000u, 0x887f0000u, O_SN | O_XD | O_W2, NULL, "load/store exclusive pair: LDXP, LDAXP"},
	{0xbfa07c00u, 0x08207c00u, 0, r_casp, "compare and swap pair: CASP"},
	{0x3fff7c00u, 0x089f7c00u, O_XT | O_SN, NULL, "load/store ordered: STLR, STLLR"},
	{0x3fff7c00u, 0x08df7c00u, O_SN | O_XD, NULL, "load/store ordered: LDAR, LDLAR"},
	{0x3fa07c00u, 0x08a07c00u, O_XM | O_XT | O_SN | O_WS, NULL, "compare and swap: CAS (Rs read and written)"},
	{0x3f000000u, 0x08000000u, 0, NULL, "load/store exclusive, ordered: unallocated"},
	{0xff200000u, 0xd9200000u, 0, r_mte, "load/store memory tags"},
	{0x3f200c00u, 0x19000000u, O_SN, r_rcpc, "LDAPR/STLR (unscaled immediate)"},
	{0xfb200c00u, 0x19000400u, 0, r_mops, "memory copy and memory set"},
	{0xff000000u, 0xd8000000u, 0, NULL, "load register (literal): PRFM, a hint"},
	{0x3f000000u, 0x18000000u, O_XD, NULL, "load register (literal): LDR, LDRSW"},
	{0xff000000u, 0xdc000000u, 0, NULL, "load register (literal): unallocated"},
	{0x3f000000u, 0x1c000000u, O_VD, NULL, "load register (literal): LDR (SIMD&FP)"},
	{0x3a000000u, 0x28000000u, 0, r_pair, "load/store pair (all modes)"},
	{0x3b000000u, 0x39000000u, 0, r_ldst, "load/store register (unsigned immediate)"},
	{0x3b200000u, 0x38000000u, 0, r_ldst, "load/store register (imm9: unscaled, post, pre, unprivileged)"},
	{0x3ffffc00u, 0x38bfc000u, O_SN | O_XD, NULL, "atomic memory operations: LDAPR"},
	{0x3f208c00u, 0x38200000u, O_XM | O_SN | O_XD, NULL, "atomic memory operations: LDADD ... LDUMIN (STADD...)"},
	{0x3f20fc00u, 0x38208000u, O_XM | O_SN | O_XD, NULL, "atomic memory operations: SWP"},
	{0x3b200c00u, 0x38200800u, 0, r_ldst, "load/store register (register offset)"},
	{0xff200c00u, 0xf8200400u, O_SN | O_XD, NULL, "load/store register (pac): LDRAA, LDRAB"},
	{0xff200c00u, 0xf8200c00u, O_SN | O_XD | O_WB, NULL, "load/store register (pac): LDRAA, LDRAB (pre-index)"},
	/* SIMD and FP: crypto, scalar FP, then Advanced SIMD vector and scalar */
	{0xffffec00u, 0x4e284800u, O_VN | O_VT | O_VD, NULL, "cryptographic AES: AESE, AESD"},
	{0xffffec00u, 0x4e286800u, O_VN | O_VD, NULL, "cryptographic AES: AESMC, AESIMC"},
	{0xffe0fc00u, 0x5e007000u, 0, NULL, "cryptographic three-register SHA: unallocated"},
	{0xffe08c00u, 0x5e000000u, O_VNMD | O_VT, NULL, "cryptographic three-register SHA: SHA1C ... SHA256SU1"},
	{0xfffffc00u, 0x5e280800u, O_VN | O_VD, NULL, "cryptographic two-register SHA: SHA1H"},
	{0xfffffc00u, 0x5e281800u, O_VN | O_VT | O_VD, NULL, "cryptographic two-register SHA: SHA1SU1"},
	{0xfffffc00u, 0x5e282800u, O_VN | O_VT | O_VD, NULL, "cryptographic two-register SHA: SHA256SU0"},
	{0xffe08000u, 0xce600000u, 0, NULL, "cryptographic four-register: unallocated"},
	{0xff808000u, 0xce000000u, O_VNMD | O_VA, NULL, "cryptographic four-register: EOR3, BCAX, SM3SS1"},
	{0xffe0c000u, 0xce408000u, O_VNMD | O_VT, NULL, "cryptographic three-register, imm2: SM3TT*"},
	{0xffe0fc00u, 0xce608c00u, O_VNMD, NULL, "cryptographic three-register SHA512: RAX1"},
	{0xffe0fc00u, 0xce60c800u, O_VNMD, NULL, "cryptographic three-register SHA512: SM4EKEY"},
	{0xffe0fc00u, 0xce60cc00u, 0, NULL, "cryptographic three-register SHA512: unallocated"},
	{0xffe0b000u, 0xce608000u, O_VNMD | O_VT, NULL, "cryptographic three-register SHA512: SHA512*, SM3PARTW*"},
	{0xffe00000u, 0xce800000u, O_VNMD, NULL, "XAR"},
	{0xfffff800u, 0xcec08000u, O_VN | O_VT | O_VD, NULL, "cryptographic two-register SHA512: SHA512SU0, SM4E"},
	{0x5f000000u, 0x1f000000u, O_VNMD | O_VA, r_fp, "floating-point data-processing (3 source)"},
	{0x5f200000u, 0x1e000000u, 0, r_fpfix, "conversion between floating-point and fixed-point"},
	{0x5f20fc00u, 0x1e200000u, 0, r_fpint, "conversion between floating-point and integer"},
	{0x5f207c00u, 0x1e204000u, O_VN | O_VD, r_fp, "floating-point data-processing (1 source)"},
	{0x5f203c00u, 0x1e202000u, O_VN | O_FW, r_fcmp, "floating-point compare"},
	{0x5f201c00u, 0x1e201000u, O_VD, r_fpimm, "floating-point immediate"},
	{0x5f200c00u, 0x1e200400u, O_VN | O_VM | O_FR | O_FW, r_fp, "floating-point conditional compare"},
	{0x5f200c00u, 0x1e200800u, O_VNMD, r_fp2, "floating-point data-processing (2 source)"},
	{0x5f200c00u, 0x1e200c00u, O_VNMD | O_FR, r_fp, "floating-point conditional select"},
	{0xbfe0fc00u, 0x0e000400u, O_VN | O_VD, r_imm5, "Advanced SIMD copy: DUP (element)"},
	{0xbfe0fc00u, 0x0e000c00u, O_XN | O_VD, r_imm5, "Advanced SIMD copy: DUP (general)"},
	{0xffe0fc00u, 0x4e001c00u, O_XN | O_VT | O_VD, r_imm5, "Advanced SIMD copy: INS (general)"},
	{0xbfe0fc00u, 0x0e002c00u, O_VN | O_XD, r_imm5, "Advanced SIMD copy: SMOV"},
	{0xbfe0fc00u, 0x0e003c00u, O_VN | O_XD, r_imm5, "Advanced SIMD copy: UMOV (MOV to general)"},
	{0xffe08400u, 0x6e000400u, O_VN | O_VT | O_VD, r_imm5, "Advanced SIMD copy: INS (element)"},
	{0x9f208400u, 0x0e008400u, O_VNMD, r_simd3x, "Advanced SIMD three-register extension"},
	{0x9f60c400u, 0x0e400400u, O_VNMD, r_simd3h, "Advanced SIMD three same (FP16)"},
	{0x9f200400u, 0x0e200400u, O_VNMD, r_simd3, "Advanced SIMD three same"},
	{0x9f200c00u, 0x0e200000u, O_VNMD, r_simd3d, "Advanced SIMD three different"},
	{0x9f200c00u, 0x0e200800u, O_VN | O_VD, r_simd2, "Advanced SIMD two-register misc, across lanes"},
	{0xbf208c00u, 0x0e000800u, O_VNMD, NULL, "Advanced SIMD permute"},
	{0xbf208c00u, 0x0e000000u, O_VD, r_tbl, "Advanced SIMD table lookup"},
	{0xbf208400u, 0x2e000000u, O_VNMD, NULL, "Advanced SIMD extract"},
	{0x9ff89400u, 0x0f001400u, O_VT | O_VD, NULL, "Advanced SIMD modified immediate: ORR, BIC (cmode 0xx1)"},
	{0x9ff8d400u, 0x0f009400u, O_VT | O_VD, NULL, "Advanced SIMD modified immediate: ORR, BIC (cmode 10x1)"},
	{0x9ff80400u, 0x0f000400u, O_VD, NULL, "Advanced SIMD modified immediate: MOVI, MVNI, FMOV"},
	{0x9f800400u, 0x0f000400u, O_VN | O_VD, r_shift, "Advanced SIMD shift by immediate"},
	{0x9f000400u, 0x0f000000u, O_VN | O_VD, r_elem, "Advanced SIMD vector x indexed element"},
	{0xffe0fc00u, 0x5e000400u, O_VN | O_VD, r_imm5, "Advanced SIMD scalar copy: DUP (element)"},
	{0xdf208400u, 0x5e008400u, O_VNMD, r_simd3x, "Advanced SIMD scalar three same extra"},
	{0xdf60c400u, 0x5e400400u, O_VNMD, r_simd3h, "Advanced SIMD scalar three same FP16"},
	{0xdf200400u, 0x5e200400u, O_VNMD, r_simd3, "Advanced SIMD scalar three same"},
	{0xdf200c00u, 0x5e200000u, O_VNMD, r_simd3d, "Advanced SIMD scalar three different"},
	{0xdf200c00u, 0x5e200800u, O_VN | O_VD, r_simd2, "Advanced SIMD scalar two-register misc, pairwise"},
	{0xdf800400u, 0x5f000400u, O_VN | O_VD, r_shift, "Advanced SIMD scalar shift by immediate"},
	{0xdf000400u, 0x5f000000u, O_VN | O_VD, r_elem, "Advanced SIMD scalar x indexed element"},
};

static void apply_ops(uint32_t e, uint32_t ops, struct ctx *c)
{
	static const struct {
		uint32_t op;
		uint8_t src, lo, sp; /* src or dst; field [lo+4:lo]; 31 is SP */
	} fields[] = {
		{O_XN, 1, 5, 0},  {O_XM, 1, 16, 0}, {O_XA, 1, 10, 0}, {O_XT, 1, 0, 0},
		{O_SN, 1, 5, 1},  {O_ST, 1, 0, 1},  {O_XD, 0, 0, 0},  {O_SD, 0, 0, 1},
		{O_WB, 0, 5, 1},  {O_WS, 0, 16, 0}, {O_W2, 0, 10, 0},
	};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		if (!(ops & fields[i].op))
			continue;
		unsigned n = BITS(e, fields[i].lo + 4, fields[i].lo);
		put(fields[i].src ? &c->src : &c->dst, fields[i].sp ? gsp(n) : gx(n),
		    fields[i].op & (O_SN | O_WB) ? P_KEEP : P_NORM);
	}
	c->wb |= (ops & O_WB) != 0;
	if (ops & O_VN)
		rd(c, vr(RN(e)));
	if (ops & O_VM)
		rd(c, vr(RM(e)));
	if (ops & O_VA)
		rd(c, vr(RA(e)));
	if (ops & O_VT)
		rd(c, vr(RD(e)));
	if (ops & O_FR)
		rd(c, DPMU_REG_NZCV);
	if (ops & O_VD)
		wr(c, vr(RD(e)));
	if (ops & O_FW)
		wr(c, DPMU_REG_NZCV);
	if (ops & O_LR)
		wr(c, DPMU_REG_X(30));
}

void dpmu_iregs_decode(uint32_t enc, struct dpmu_iregs *out)
{
	struct ctx c;
	memset(&c, 0, sizeof c);
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		if ((enc & rows[i].mask) == rows[i].value) {
			apply_ops(enc, rows[i].ops, &c);
			if (rows[i].fn && !rows[i].fn(enc, &c))
				return; /* unallocated: no registers */
			break;
		}
	}
	pack(&c.src, out->src);
	pack(&c.dst, out->dst);
	out->writeback = c.wb;
}
