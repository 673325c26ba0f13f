/* A64 classification (src/frontend/insn_class.c): encodings assembled with
 * aarch64-linux-gnu-as, each checked against the class the Arm ARM's
 * encoding tables (C4.1) give it and the PMU events it must drive: LD/ST
 * retired and sizes, pairs, exclusives (LDREX/STREX_SPEC), branch kinds
 * (BR_IMMED / BR_RETURN / indirect), SVC (EXC_TAKEN), barriers
 * (ISB/DSB/DMB_SPEC), ASE/VFP/CRYPTO_SPEC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dynpmu/qemu.h"

struct want {
	uint32_t enc;
	const char *text;
	uint8_t kind;
	uint8_t br_kind;
	uint16_t size;
	uint32_t flags; /* every one of these must be set */
	uint8_t mem;
};

#define L DPMU_INSN_LOAD
#define S DPMU_INSN_STORE
#define B DPMU_INSN_BRANCH
#define O DPMU_INSN_OTHER
#define MUST DPMU_ICLASS_MEM_MUST
#define OPT DPMU_ICLASS_MEM_OPTIONAL

static const struct want loads_stores[] = {
	{0xf9400020, "ldr x0, [x1]", L, 0, 8, 0, MUST},
	{0x39400c20, "ldrb w0, [x1, #3]", L, 0, 1, 0, MUST},
	{0xf8627820, "ldr x0, [x1, x2, lsl #3]", L, 0, 8, 0, MUST},
	{0xb85fc020, "ldur w0, [x1, #-4]", L, 0, 4, 0, MUST},
	{0xf8408420, "ldr x0, [x1], #8", L, 0, 8, 0, MUST},
	{0xb9000020, "str w0, [x1]", S, 0, 4, 0, MUST},
	{0x79000420, "strh w0, [x1, #2]", S, 0, 2, 0, MUST},
	{0xa94107e0, "ldp x0, x1, [sp, #16]", L, 0, 16, DPMU_IC_PAIR, MUST},
	{0xa9be7bfd, "stp x29, x30, [sp, #-32]!", S, 0, 16, DPMU_IC_PAIR, MUST},
	{0xad400400, "ldp q0, q1, [x0]", L, 0, 32, DPMU_IC_PAIR, MUST},
	{0x69400440, "ldpsw x0, x1, [x2]", L, 0, 8, DPMU_IC_PAIR, MUST},
	{0xc85f7c20, "ldxr x0, [x1]", L, 0, 8, DPMU_IC_LDREX, MUST},
	{0xc8027c20, "stxr w2, x0, [x1]", S, 0, 8, DPMU_IC_STREX, OPT},
	{0x885ffc20, "ldaxr w0, [x1]", L, 0, 4, DPMU_IC_LDREX, MUST},
	{0x8802fc20, "stlxr w2, w0, [x1]", S, 0, 4, DPMU_IC_STREX, OPT},
	{0xc87f0440, "ldxp x0, x1, [x2]", L, 0, 16, DPMU_IC_LDREX | DPMU_IC_PAIR, MUST},
	{0xc8dffc20, "ldar x0, [x1]", L, 0, 8, 0, MUST},
	{0xc89ffc20, "stlr x0, [x1]", S, 0, 8, 0, MUST},
	{0xc8a07c41, "cas x0, x1, [x2]", S, 0, 8, 0, MUST},
	{0x48207c82, "casp x0, x1, x2, x3, [x4]", S, 0, 16, DPMU_IC_PAIR, MUST},
	{0xf8200041, "ldadd x0, x1, [x2]", S, 0, 8, 0, MUST},
	{0xb8208041, "swp w0, w1, [x2]", S, 0, 4, 0, MUST},
	{0x580003c0, "ldr x0, lit", L, 0, 8, 0, MUST},
	{0x3dc00000, "ldr q0, [x0]", L, 0, 16, 0, MUST},
	{0x4c40a000, "ld1 {v0.16b, v1.16b}, [x0]", L, 0, 32, DPMU_IC_ASE, MUST},
	{0x0d409000, "ld1 {v0.s}[1], [x0]", L, 0, 4, DPMU_IC_ASE, MUST},
	{0x4c000800, "st4 {v0.4s-v3.4s}, [x0]", S, 0, 64, DPMU_IC_ASE, MUST},
	{0xd50b7420, "dc zva, x0", S, 0, 64, 0, OPT},
};

static const struct want branches[] = {
	{0x14000019, "b lit", B, DPMU_BR_UNCOND, 0, DPMU_IC_IMMED, 0},
	{0x94000018, "bl lit", B, DPMU_BR_CALL, 0, DPMU_IC_IMMED, 0},
	{0x540002e1, "b.ne lit", B, DPMU_BR_COND, 0, DPMU_IC_IMMED, 0},
	{0xb40002c0, "cbz x0, lit", B, DPMU_BR_COND, 0, DPMU_IC_IMMED, 0},
	{0x371802a0, "tbnz w0, #3, lit", B, DPMU_BR_COND, 0, DPMU_IC_IMMED, 0},
	{0xd61f0000, "br x0", B, DPMU_BR_IND, 0, 0, 0},
	{0xd63f0020, "blr x1", B, DPMU_BR_CALL, 0, 0, 0},
	{0xd65f03c0, "ret", B, DPMU_BR_RET, 0, 0, 0},
	{0xd65f0bff, "retaa", B, DPMU_BR_RET, 0, 0, 0},
};

static const struct want others[] = {
	{0xd4000001, "svc #0", O, 0, 0, DPMU_IC_SVC, 0},
	{0xd5033bbf, "dmb ish", O, 0, 0, DPMU_IC_DMB, 0},
	{0xd5033f9f, "dsb sy", O, 0, 0, DPMU_IC_DSB, 0},
	{0xd5033fdf, "isb", O, 0, 0, DPMU_IC_ISB, 0},
	{0x8b020020, "add x0, x1, x2", O, 0, 0, DPMU_IC_DP, 0},
	{0xd28000a0, "mov x0, #5", O, 0, 0, DPMU_IC_DP, 0},
	{0x1e622820, "fadd d0, d1, d2", O, 0, 0, DPMU_IC_VFP, 0},
	{0x1f020c20, "fmadd s0, s1, s2, s3", O, 0, 0, DPMU_IC_VFP, 0},
	{0x4ea28420, "add v0.4s, v1.4s, v2.4s", O, 0, 0, DPMU_IC_ASE, 0},
	{0x4e284820, "aese v0.16b, v1.16b", O, 0, 0, DPMU_IC_CRYPTO, 0},
	{0x5e024020, "sha256h q0, q1, v2.4s", O, 0, 0, DPMU_IC_CRYPTO, 0},
	{0xce020c20, "eor3 v0.16b, v1.16b, v2.16b, v3.16b", O, 0, 0, DPMU_IC_CRYPTO, 0},
	{0xd69f03e0, "eret", O, 0, 0, DPMU_IC_ERET, 0},
};

static void check(const struct want *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct dpmu_iclass c;
		dpmu_iclass_decode(w[i].enc, &c);
		print_message("%08x %s\n", w[i].enc, w[i].text);
		assert_int_equal(c.kind, w[i].kind);
		if (w[i].kind == B)
			assert_int_equal(c.br_kind, w[i].br_kind);
		if (w[i].kind == L || w[i].kind == S)
			assert_int_equal(c.size, w[i].size);
		assert_int_equal(c.flags & w[i].flags, w[i].flags);
		assert_int_equal(c.mem, w[i].mem);
		assert_int_equal(c.noretire, 0);
	}
}

static void test_loads_and_stores_with_sizes_pairs_exclusives(void **state)
{
	(void)state;
	check(loads_stores, sizeof loads_stores / sizeof loads_stores[0]);
}

static void test_branches_immediate_register_calls_returns(void **state)
{
	(void)state;
	check(branches, sizeof branches / sizeof branches[0]);
	/* Register branches must not look direct to the engine (BLR is an
	 * indirect call for the branch predictor and BR_IMMED_RETIRED). */
	struct dpmu_iclass c;
	dpmu_iclass_decode(0xd63f0020, &c);
	assert_int_equal(c.flags & DPMU_IC_IMMED, 0);
	assert_int_not_equal(c.flags, 0);
	assert_int_not_equal(c.flags & DPMU_IC_REG_BRANCH, 0);
}

static void test_svc_barriers_simd_fp_crypto(void **state)
{
	(void)state;
	check(others, sizeof others / sizeof others[0]);
	/* crypto is not scalar FP, scalar FP is not Advanced SIMD */
	struct dpmu_iclass c;
	dpmu_iclass_decode(0x1e622820, &c);
	assert_int_equal(c.flags & (DPMU_IC_ASE | DPMU_IC_CRYPTO), 0);
	dpmu_iclass_decode(0x4ea28420, &c);
	assert_int_equal(c.flags & (DPMU_IC_VFP | DPMU_IC_CRYPTO), 0);
}

/* The execution latency classes (enum dpmu_exec_class): multiplies,
 * divides, scalar FP arithmetic and Advanced SIMD FP arithmetic have one; moves, compares, selects,
 * absolute values, shifts and adds do not. Encodings from GNU as. */
static void test_execution_latency_classes(void **state)
{
	(void)state;
	static const struct {
		uint32_t enc;
		const char *text;
		uint8_t exec;
		uint32_t flags;
	} w[] = {
		{0x1e620800, "fmul d0, d0, d2", DPMU_EX_FP, DPMU_IC_VFP},
		{0x1e602821, "fadd d1, d1, d0", DPMU_EX_FP, DPMU_IC_VFP},
		{0x1e228820, "fnmul s0, s1, s2", DPMU_EX_FP, DPMU_IC_VFP},
		{0x1e626820, "fmaxnm d0, d1, d2", DPMU_EX_FP, DPMU_IC_VFP},
		{0x1f420c20, "fmadd d0, d1, d2, d3", DPMU_EX_FP, DPMU_IC_VFP},
		{0x1e621820, "fdiv d0, d1, d2", DPMU_EX_FP_DIV, DPMU_IC_VFP},
		{0x1e61c020, "fsqrt d0, d1", DPMU_EX_FP_DIV, DPMU_IC_VFP},
		{0x9b027c20, "mul x0, x1, x2", DPMU_EX_INT_MUL, DPMU_IC_DP},
		{0x9bc27c20, "umulh x0, x1, x2", DPMU_EX_INT_MUL, DPMU_IC_DP},
		{0x9b220c20, "smaddl x0, w1, w2, x3", DPMU_EX_INT_MUL, DPMU_IC_DP},
		{0x9ac20c20, "sdiv x0, x1, x2", DPMU_EX_INT_DIV, DPMU_IC_DP},
		{0x1ac20820, "udiv w0, w1, w2", DPMU_EX_INT_DIV, DPMU_IC_DP},
		{0x8b020020, "add x0, x1, x2", DPMU_EX_SIMPLE, DPMU_IC_DP},
		{0x9ac22020, "lsl x0, x1, x2", DPMU_EX_SIMPLE, DPMU_IC_DP},
		{0x1e604020, "fmov d0, d1", DPMU_EX_SIMPLE, DPMU_IC_VFP},
		{0x1e612000, "fcmp d0, d1", DPMU_EX_SIMPLE, DPMU_IC_VFP},
		{0x1e620c20, "fcsel d0, d1, d2, eq", DPMU_EX_SIMPLE, DPMU_IC_VFP},
		{0x1e60c020, "fabs d0, d1", DPMU_EX_SIMPLE, DPMU_IC_VFP},
		{0x6e64dc63, "fmul v3.2d, v3.2d, v4.2d", DPMU_EX_FP, DPMU_IC_ASE},
		{0x4e63d421, "fadd v1.2d, v1.2d, v3.2d", DPMU_EX_FP, DPMU_IC_ASE},
		{0x4e22cc20, "fmla v0.4s, v1.4s, v2.4s", DPMU_EX_FP, DPMU_IC_ASE},
		{0x4ee2d420, "fsub v0.2d, v1.2d, v2.2d", DPMU_EX_FP, DPMU_IC_ASE},
		{0x6e62fc20, "fdiv v0.2d, v1.2d, v2.2d", DPMU_EX_FP_DIV, DPMU_IC_ASE},
		{0x4e62e420, "fcmeq v0.2d, v1.2d, v2.2d", DPMU_EX_SIMPLE, DPMU_IC_ASE},
		{0x4ea28420, "add v0.4s, v1.4s, v2.4s", DPMU_EX_SIMPLE, DPMU_IC_ASE},
	};
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
		struct dpmu_iclass c;
		dpmu_iclass_decode(w[i].enc, &c);
		print_message("%08x %s\n", w[i].enc, w[i].text);
		assert_int_equal(c.exec, w[i].exec);
		assert_int_equal(c.flags & w[i].flags, w[i].flags);
		assert_int_equal(c.kind, DPMU_INSN_OTHER);
	}
}

static void test_hints_are_not_memory_or_branches(void **state)
{
	(void)state;
	static const uint32_t hints[] = {0xd503201f /* nop */, 0xf9800000 /* prfm */,
					 0xd53bd040 /* mrs tpidr_el0 */, 0xd4200000 /* brk */};
	for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
		struct dpmu_iclass c;
		dpmu_iclass_decode(hints[i], &c);
		assert_int_equal(c.kind, O);
		assert_int_equal(c.mem, DPMU_ICLASS_MEM_NONE);
		assert_int_equal(c.flags & (DPMU_IC_SVC | DPMU_IC_DMB | DPMU_IC_DSB | DPMU_IC_ISB), 0);
	}
}

static void test_udf_does_not_retire(void **state)
{
	(void)state;
	struct dpmu_iclass c;
	dpmu_iclass_decode(0x00000000, &c);
	assert_int_equal(c.noretire, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads_and_stores_with_sizes_pairs_exclusives),
		cmocka_unit_test(test_branches_immediate_register_calls_returns),
		cmocka_unit_test(test_svc_barriers_simd_fp_crypto),
		cmocka_unit_test(test_execution_latency_classes),
		cmocka_unit_test(test_hints_are_not_memory_or_branches),
		cmocka_unit_test(test_udf_does_not_retire),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
