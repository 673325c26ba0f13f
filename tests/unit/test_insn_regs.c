/* Register operands (src/frontend/insn_regs.c), for the register-ready
 * scoreboard. Each row is an encoding from aarch64-linux-gnu-as 2.40 (the
 * text is what was assembled), with the registers the Arm ARM says it
 * reads and writes: XZR/WZR never listed, register 31 as SP where the
 * operand is <Xn|SP>, NZCV for flag readers and writers, V registers for
 * the B/H/S/D/Q views. Where an instruction has more than three, the
 * expected set is the documented cap: the base (and offset) register of a
 * load or store always, then the first V register of a structure or the
 * first register of each CASP pair. Compared as sets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>

#include <cmocka.h>

#include "dynpmu/qemu.h"

#define X(n) DPMU_REG_X(n)
#define V(n) DPMU_REG_V(n)
#define SP DPMU_REG_SP
#define NZCV DPMU_REG_NZCV

struct want {
	uint32_t enc;
	const char *text;
	uint8_t src[3], dst[3];
};

static const struct want dp[] = {
	{0x91004020, "add x0, x1, #16", {X(1)}, {X(0)}},
	{0x11400483, "add w3, w4, #1, lsl #12", {X(4)}, {X(3)}},
	{0x910083ff, "add sp, sp, #32", {SP}, {SP}},
	{0x910003fd, "mov x29, sp", {SP}, {X(29)}},
	{0x9100001f, "mov sp, x0", {X(0)}, {SP}},
	{0xd10023e2, "sub x2, sp, #8", {SP}, {X(2)}},
	{0xb1000420, "adds x0, x1, #1", {X(1)}, {X(0), NZCV}},
	{0x71000cc5, "subs w5, w6, #3", {X(6)}, {X(5), NZCV}},
	{0xf100103f, "cmp x1, #4", {X(1)}, {NZCV}},
	{0x3100045f, "cmn w2, #1", {X(2)}, {NZCV}},
	{0xf10043ff, "cmp sp, #16", {SP}, {NZCV}},
	{0x92401c20, "and x0, x1, #0xff", {X(1)}, {X(0)}},
	{0x927cec5f, "and sp, x2, #0xfffffffffffffff0", {X(2)}, {SP}},
	{0x32000020, "orr w0, w1, #1", {X(1)}, {X(0)}},
	{0xb200f3e3, "mov x3, #0x5555555555555555", {0}, {X(3)}},
	{0xd24000a4, "eor x4, x5, #0x1", {X(5)}, {X(4)}},
	{0xf2400c20, "ands x0, x1, #0xf", {X(1)}, {X(0), NZCV}},
	{0x7219005f, "tst w2, #0x80", {X(2)}, {NZCV}},
	{0xd2800020, "movz x0, #1", {0}, {X(0)}},
	{0x52a00027, "mov w7, #0x10000", {0}, {X(7)}},
	{0x92800001, "movn x1, #0", {0}, {X(1)}},
	{0x92800022, "mov x2, #-2", {0}, {X(2)}},
	{0xf2a24680, "movk x0, #0x1234, lsl #16", {X(0)}, {X(0)}},
	{0x728000e9, "movk w9, #7", {X(9)}, {X(9)}},
	{0x93407c20, "sbfm x0, x1, #0, #31", {X(1)}, {X(0)}},
	{0x93407c62, "sxtw x2, w3", {X(3)}, {X(2)}},
	{0xd3482ca4, "ubfx x4, x5, #8, #4", {X(5)}, {X(4)}},
	{0xd37df0e6, "lsl x6, x7, #3", {X(7)}, {X(6)}},
	{0x53027d28, "lsr w8, w9, #2", {X(9)}, {X(8)}},
	{0x937ffd6a, "asr x10, x11, #63", {X(11)}, {X(10)}},
	{0x53001c20, "uxtb w0, w1", {X(1)}, {X(0)}},
	{0xb3781c20, "bfi x0, x1, #8, #8", {X(1), X(0)}, {X(0)}},
	{0x33000c62, "bfxil w2, w3, #0, #4", {X(3), X(2)}, {X(2)}},
	{0x93c23020, "extr x0, x1, x2, #12", {X(1), X(2)}, {X(0)}},
	{0x13841483, "ror w3, w4, #5", {X(4)}, {X(3)}},
	{0x10000000, "adr x0, .", {0}, {X(0)}},
	{0x90000001, "adrp x1, .", {0}, {X(1)}},
	{0x8a020020, "and x0, x1, x2", {X(1), X(2)}, {X(0)}},
	{0x2a050883, "orr w3, w4, w5, lsl #2", {X(4), X(5)}, {X(3)}},
	{0xaa0103e0, "mov x0, x1", {X(1)}, {X(0)}},
	{0x2a1f03e2, "mov w2, wzr", {0}, {X(2)}},
	{0xaa2403e3, "mvn x3, x4", {X(4)}, {X(3)}},
	{0xcae70cc5, "eon x5, x6, x7, ror #3", {X(6), X(7)}, {X(5)}},
	{0xea220020, "bics x0, x1, x2", {X(1), X(2)}, {X(0), NZCV}},
	{0xea02003f, "tst x1, x2", {X(1), X(2)}, {NZCV}},
	{0x8b020020, "add x0, x1, x2", {X(1), X(2)}, {X(0)}},
	{0x0b451083, "add w3, w4, w5, lsr #4", {X(4), X(5)}, {X(3)}},
	{0xcb8808e6, "sub x6, x7, x8, asr #2", {X(7), X(8)}, {X(6)}},
	{0xcb0103e0, "neg x0, x1", {X(1)}, {X(0)}},
	{0x6b0303e2, "negs w2, w3", {X(3)}, {X(2), NZCV}},
	{0xab020020, "adds x0, x1, x2", {X(1), X(2)}, {X(0), NZCV}},
	{0xeb02003f, "cmp x1, x2", {X(1), X(2)}, {NZCV}},
	{0x2b04007f, "cmn w3, w4", {X(3), X(4)}, {NZCV}},
	{0x8b2163e0, "add x0, sp, x1", {SP, X(1)}, {X(0)}},
	{0x8b226fff, "add sp, sp, x2, uxtx #3", {SP, X(2)}, {SP}},
	{0x8b22c820, "add x0, x1, w2, sxtw #2", {X(1), X(2)}, {X(0)}},
	{0xcb24407f, "sub sp, x3, w4, uxtw", {X(3), X(4)}, {SP}},
	{0xeb2563ff, "cmp sp, x5", {SP, X(5)}, {NZCV}},
	{0xab2143e0, "adds x0, sp, w1, uxtw", {SP, X(1)}, {X(0), NZCV}},
	{0x9a020020, "adc x0, x1, x2", {X(1), X(2), NZCV}, {X(0)}},
	{0x3a050083, "adcs w3, w4, w5", {X(4), X(5), NZCV}, {X(3), NZCV}},
	{0xda0800e6, "sbc x6, x7, x8", {X(7), X(8), NZCV}, {X(6)}},
	{0xda0103e0, "ngc x0, x1", {X(1), NZCV}, {X(0)}},
	{0xfa421024, "ccmp x1, x2, #4, ne", {X(1), X(2), NZCV}, {NZCV}},
	{0x3a450860, "ccmn w3, #5, #0, eq", {X(3), NZCV}, {NZCV}},
	{0x9a82b020, "csel x0, x1, x2, lt", {X(1), X(2), NZCV}, {X(0)}},
	{0x1a85a483, "csinc w3, w4, w5, ge", {X(4), X(5), NZCV}, {X(3)}},
	{0x9a9f17e0, "cset x0, eq", {NZCV}, {X(0)}},
	{0x5a9f03e1, "csetm w1, ne", {NZCV}, {X(1)}},
	{0x9a839462, "cinc x2, x3, hi", {X(3), NZCV}, {X(2)}},
	{0xda8554a4, "cneg x4, x5, mi", {X(5), NZCV}, {X(4)}},
	{0xda9f60e6, "csinv x6, x7, xzr, vs", {X(7), NZCV}, {X(6)}},
	{0xdac00020, "rbit x0, x1", {X(1)}, {X(0)}},
	{0x5ac00862, "rev w2, w3", {X(3)}, {X(2)}},
	{0xdac004a4, "rev16 x4, x5", {X(5)}, {X(4)}},
	{0xdac010e6, "clz x6, x7", {X(7)}, {X(6)}},
	{0x5ac01528, "cls w8, w9", {X(9)}, {X(8)}},
	{0x9ac20820, "udiv x0, x1, x2", {X(1), X(2)}, {X(0)}},
	{0x1ac50c83, "sdiv w3, w4, w5", {X(4), X(5)}, {X(3)}},
	{0x9ac820e6, "lsl x6, x7, x8", {X(7), X(8)}, {X(6)}},
	{0x1acb2949, "asrv w9, w10, w11", {X(10), X(11)}, {X(9)}},
	{0x9ac25c20, "crc32cx w0, w1, x2", {X(1), X(2)}, {X(0)}},
	{0x9b020c20, "madd x0, x1, x2, x3", {X(1), X(2), X(3)}, {X(0)}},
	{0x1b069ca4, "msub w4, w5, w6, w7", {X(5), X(6), X(7)}, {X(4)}},
	{0x9b027c20, "mul x0, x1, x2", {X(1), X(2)}, {X(0)}},
	{0x1b05fc83, "mneg w3, w4, w5", {X(4), X(5)}, {X(3)}},
	{0x9b220c20, "smaddl x0, w1, w2, x3", {X(1), X(2), X(3)}, {X(0)}},
	{0x9ba67ca4, "umull x4, w5, w6", {X(5), X(6)}, {X(4)}},
	{0x9bc97d07, "umulh x7, x8, x9", {X(8), X(9)}, {X(7)}},
	{0x9b4c7d6a, "smulh x10, x11, x12", {X(11), X(12)}, {X(10)}},
	{0xdac10020, "pacia x0, x1", {X(0), X(1)}, {X(0)}},
	{0xdac123e2, "paciza x2", {X(2)}, {X(2)}},
	{0xdac143e3, "xpaci x3", {X(3)}, {X(3)}},
};

static const struct want ldst[] = {
	{0xf9400020, "ldr x0, [x1]", {X(1)}, {X(0)}},
	{0xb9400be2, "ldr w2, [sp, #8]", {SP}, {X(2)}},
	{0x397ffc83, "ldrb w3, [x4, #4095]", {X(4)}, {X(3)}},
	{0x798004c5, "ldrsh x5, [x6, #2]", {X(6)}, {X(5)}},
	{0xb9800107, "ldrsw x7, [x8]", {X(8)}, {X(7)}},
	{0xf9000420, "str x0, [x1, #8]", {X(0), X(1)}, {0}},
	{0x3900005f, "strb wzr, [x2]", {X(2)}, {0}},
	{0xf9000bff, "str xzr, [sp, #16]", {SP}, {0}},
	{0xf85f8020, "ldur x0, [x1, #-8]", {X(1)}, {X(0)}},
	{0xb8001062, "stur w2, [x3, #1]", {X(2), X(3)}, {0}},
	{0xf8408420, "ldr x0, [x1], #8", {X(1)}, {X(0), X(1)}},
	{0xb8404c62, "ldr w2, [x3, #4]!", {X(3)}, {X(2), X(3)}},
	{0xf81f0fe4, "str x4, [sp, #-16]!", {X(4), SP}, {SP}},
	{0x780024c5, "strh w5, [x6], #2", {X(5), X(6)}, {X(6)}},
	{0xf8400907, "ldtr x7, [x8]", {X(8)}, {X(7)}},
	{0xf8626820, "ldr x0, [x1, x2]", {X(1), X(2)}, {X(0)}},
	{0xb8655883, "ldr w3, [x4, w5, uxtw #2]", {X(4), X(5)}, {X(3)}},
	{0xf82878e6, "str x6, [x7, x8, lsl #3]", {X(6), X(7), X(8)}, {0}},
	{0x386a6be9, "ldrb w9, [sp, x10]", {SP, X(10)}, {X(9)}},
	{0x58000000, "ldr x0, .", {0}, {X(0)}},
	{0x98000001, "ldrsw x1, .", {0}, {X(1)}},
	{0x9c000002, "ldr q2, .", {0}, {V(2)}},
	{0xd8000000, "prfm pldl1keep, .", {0}, {0}},
	{0xf9800000, "prfm pldl1keep, [x0]", {X(0)}, {0}},
	{0xf8a26833, "prfm pstl2strm, [x1, x2]", {X(1), X(2)}, {0}},
	{0xf89ff060, "prfum pldl1keep, [x3, #-1]", {X(3)}, {0}},
	{0xa9400440, "ldp x0, x1, [x2]", {X(2)}, {X(0), X(1)}},
	{0x294113e3, "ldp w3, w4, [sp, #8]", {SP}, {X(3), X(4)}},
	{0xa9bf7bfd, "stp x29, x30, [sp, #-16]!", {X(29), X(30), SP}, {SP}},
	{0xa8c17bfd, "ldp x29, x30, [sp], #16", {SP}, {X(29), X(30), SP}},
	{0xa901045f, "stp xzr, x1, [x2, #16]", {X(1), X(2)}, {0}},
	{0xa84010a3, "ldnp x3, x4, [x5]", {X(5)}, {X(3), X(4)}},
	{0x28011d06, "stnp w6, w7, [x8, #8]", {X(6), X(7), X(8)}, {0}},
	{0x69c10440, "ldpsw x0, x1, [x2, #8]!", {X(2)}, {X(0), X(1), X(2)}},
	{0xad410400, "ldp q0, q1, [x0, #32]", {X(0)}, {V(0), V(1)}},
	{0x6c810fe2, "stp d2, d3, [sp], #16", {V(2), V(3), SP}, {SP}},
	{0xbd400020, "ldr s0, [x1]", {X(1)}, {V(0)}},
	{0x3cc10c41, "ldr q1, [x2, #16]!", {X(2)}, {V(1), X(2)}},
	{0xfc256883, "str d3, [x4, x5]", {V(3), X(4), X(5)}, {0}},
	{0x7c1fe0e6, "stur h6, [x7, #-2]", {V(6), X(7)}, {0}},
	{0x3d0003e8, "str b8, [sp]", {V(8), SP}, {0}},
	{0xc85f7c20, "ldxr x0, [x1]", {X(1)}, {X(0)}},
	{0x885fffe2, "ldaxr w2, [sp]", {SP}, {X(2)}},
	{0xc8037ca4, "stxr w3, x4, [x5]", {X(4), X(5)}, {X(3)}},
	{0x8806fcff, "stlxr w6, wzr, [x7]", {X(7)}, {X(6)}},
	{0xc87f0440, "ldxp x0, x1, [x2]", {X(2)}, {X(0), X(1)}},
	{0xc82314c4, "stxp w3, x4, x5, [x6]", {X(4), X(5), X(6)}, {X(3)}},
	{0xc8dffc20, "ldar x0, [x1]", {X(1)}, {X(0)}},
	{0x889ffc62, "stlr w2, [x3]", {X(2), X(3)}, {0}},
	{0x08dfffe4, "ldarb w4, [sp]", {SP}, {X(4)}},
	{0x88df7cc5, "ldlar w5, [x6]", {X(6)}, {X(5)}},
	{0xf8bfc020, "ldapr x0, [x1]", {X(1)}, {X(0)}},
	{0x995fc062, "ldapur w2, [x3, #-4]", {X(3)}, {X(2)}},
	{0xd90080a4, "stlur x4, [x5, #8]", {X(4), X(5)}, {0}},
	{0x198000e6, "ldapursb x6, [x7]", {X(7)}, {X(6)}},
	{0xf8200041, "ldadd x0, x1, [x2]", {X(0), X(2)}, {X(1)}},
	{0xb8e303e4, "ldaddal w3, w4, [sp]", {X(3), SP}, {X(4)}},
	{0xf82500df, "stadd x5, [x6]", {X(5), X(6)}, {0}},
	{0xf8271128, "ldclr x7, x8, [x9]", {X(7), X(9)}, {X(8)}},
	{0xb82a418b, "ldsmax w10, w11, [x12]", {X(10), X(12)}, {X(11)}},
	{0xf8208041, "swp x0, x1, [x2]", {X(0), X(2)}, {X(1)}},
	{0xb8e3809f, "swpal w3, wzr, [x4]", {X(3), X(4)}, {0}},
	{0xc8a07c41, "cas x0, x1, [x2]", {X(0), X(1), X(2)}, {X(0)}},
	{0x88e3ffe4, "casal w3, w4, [sp]", {X(3), X(4), SP}, {X(3)}},
	{0x08a57ce6, "casb w5, w6, [x7]", {X(5), X(6), X(7)}, {X(5)}},
	{0x48207c82, "casp x0, x1, x2, x3, [x4]", {X(0), X(2), X(4)}, {X(0), X(1)}},
	{0xf8201420, "ldraa x0, [x1, #8]", {X(1)}, {X(0)}},
	{0xf8ffec62, "ldrab x2, [x3, #-16]!", {X(3)}, {X(2), X(3)}},
	{0xd9201c20, "stg x0, [x1, #16]!", {X(0), X(1)}, {X(1)}},
};

static const struct want structs[] = {
	{0x4c407800, "ld1 {v0.4s}, [x0]", {X(0)}, {V(0)}},
	{0x4c40a020, "ld1 {v0.16b, v1.16b}, [x1]", {X(1)}, {V(0), V(1)}},
	{0x4cdf2442, "ld1 {v2.8h-v5.8h}, [x2], #64", {X(2)}, {V(2), V(3), X(2)}},
	{0x4cc38800, "ld2 {v0.4s, v1.4s}, [x0], x3", {X(0), X(3)}, {V(0), V(1), X(0)}},
	{0x4c400fe4, "ld4 {v4.2d-v7.2d}, [sp]", {SP}, {V(4), V(5), V(6)}},
	{0x4c007c00, "st1 {v0.2d}, [x0]", {V(0), X(0)}, {0}},
	{0x4c9fa021, "st1 {v1.16b, v2.16b}, [x1], #32", {V(1), V(2), X(1)}, {X(1)}},
	{0x4c810800, "st4 {v0.4s-v3.4s}, [x0], x1", {V(0), X(0), X(1)}, {X(0)}},
	{0x0c00405e, "st3 {v30.8b, v31.8b, v0.8b}, [x2]", {V(30), V(31), X(2)}, {0}},
	{0x0d409000, "ld1 {v0.s}[1], [x0]", {V(0), X(0)}, {V(0)}},
	{0x4ddf1c21, "ld1 {v1.b}[15], [x1], #1", {V(1), X(1)}, {V(1), X(1)}},
	{0x0de45842, "ld2 {v2.h, v3.h}[3], [x2], x4", {V(2), X(2), X(4)}, {V(2), V(3), X(2)}},
	{0x4d0084c5, "st1 {v5.d}[1], [x6]", {V(5), X(6)}, {0}},
	{0x4dbf8000, "st2 {v0.s, v1.s}[2], [x0], #8", {V(0), V(1), X(0)}, {X(0)}},
	{0x4d40c800, "ld1r {v0.4s}, [x0]", {X(0)}, {V(0)}},
	{0x0dc2e021, "ld3r {v1.8b-v3.8b}, [x1], x2", {X(1), X(2)}, {V(1), V(2), X(1)}},
	{0x0dffebe4, "ld4r {v4.2s-v7.2s}, [sp], #16", {SP}, {V(4), V(5), SP}},
};

static const struct want branch_sys[] = {
	{0x54000000, "b.eq .", {NZCV}, {0}},
	{0x54000041, "b.ne .+8", {NZCV}, {0}},
	{0x14000000, "b .", {0}, {0}},
	{0x94000000, "bl .", {0}, {X(30)}},
	{0xb4000000, "cbz x0, .", {X(0)}, {0}},
	{0x35000001, "cbnz w1, .", {X(1)}, {0}},
	{0xb6f80002, "tbz x2, #63, .", {X(2)}, {0}},
	{0x37000003, "tbnz w3, #0, .", {X(3)}, {0}},
	{0xd61f0200, "br x16", {X(16)}, {0}},
	{0xd63f0100, "blr x8", {X(8)}, {X(30)}},
	{0xd63f03c0, "blr x30", {X(30)}, {X(30)}},
	{0xd65f03c0, "ret", {X(30)}, {0}},
	{0xd65f0020, "ret x1", {X(1)}, {0}},
	{0xd61f085f, "braaz x2", {X(2)}, {0}},
	{0xd73f087f, "blraa x3, sp", {X(3), SP}, {X(30)}},
	{0xd73f0c85, "blrab x4, x5", {X(4), X(5)}, {X(30)}},
	{0xd71f08c7, "braa x6, x7", {X(6), X(7)}, {0}},
	{0xd65f0bff, "retaa", {X(30), SP}, {0}},
	{0xd503233f, "paciasp", {X(30), SP}, {X(30)}},
	{0xd50323bf, "autiasp", {X(30), SP}, {X(30)}},
	{0xd503211f, "pacia1716", {X(17), X(16)}, {X(17)}},
	{0xd50320ff, "xpaclri", {X(30)}, {X(30)}},
	{0xd4000001, "svc #0", {X(8), X(0)}, {X(0)}},
	{0xd4200020, "brk #1", {0}, {0}},
	{0xd4000002, "hvc #0", {0}, {0}},
	{0xd503201f, "nop", {0}, {0}},
	{0xd503203f, "yield", {0}, {0}},
	{0xd503245f, "bti c", {0}, {0}},
	{0xd5033bbf, "dmb ish", {0}, {0}},
	{0xd5033f9f, "dsb sy", {0}, {0}},
	{0xd5033fdf, "isb", {0}, {0}},
	{0xd5033f5f, "clrex", {0}, {0}},
	{0xd53bd040, "mrs x0, tpidr_el0", {0}, {X(0)}},
	{0xd53b4201, "mrs x1, nzcv", {NZCV}, {X(1)}},
	{0xd53be042, "mrs x2, cntvct_el0", {0}, {X(2)}},
	{0xd51bd043, "msr tpidr_el0, x3", {X(3)}, {0}},
	{0xd51b4204, "msr nzcv, x4", {X(4)}, {NZCV}},
	{0xd51b4405, "msr fpcr, x5", {X(5)}, {0}},
	{0xd50342df, "msr daifset, #2", {0}, {0}},
	{0xd50041bf, "msr spsel, #1", {0}, {0}},
	{0xd500401f, "cfinv", {NZCV}, {NZCV}},
	{0xd50b7420, "dc zva, x0", {X(0)}, {0}},
	{0xd50b7e21, "dc civac, x1", {X(1)}, {0}},
	{0xd508751f, "ic iallu", {0}, {0}},
	{0xd50b7522, "ic ivau, x2", {X(2)}, {0}},
	{0xd508831f, "tlbi vmalle1is", {0}, {0}},
	{0xd5281263, "sysl x3, #0, c1, c2, #3", {0}, {X(3)}},
};

static const struct want fp[] = {
	{0x1e622820, "fadd d0, d1, d2", {V(1), V(2)}, {V(0)}},
	{0x1e250883, "fmul s3, s4, s5", {V(4), V(5)}, {V(3)}},
	{0x1ee818e6, "fdiv h6, h7, h8", {V(7), V(8)}, {V(6)}},
	{0x1e6b8949, "fnmul d9, d10, d11", {V(10), V(11)}, {V(9)}},
	{0x1f420c20, "fmadd d0, d1, d2, d3", {V(1), V(2), V(3)}, {V(0)}},
	{0x1f269ca4, "fnmsub s4, s5, s6, s7", {V(5), V(6), V(7)}, {V(4)}},
	{0x1e60c020, "fabs d0, d1", {V(1)}, {V(0)}},
	{0x1e214062, "fneg s2, s3", {V(3)}, {V(2)}},
	{0x1e61c0a4, "fsqrt d4, d5", {V(5)}, {V(4)}},
	{0x1e6040e6, "fmov d6, d7", {V(7)}, {V(6)}},
	{0x1e624020, "fcvt s0, d1", {V(1)}, {V(0)}},
	{0x1ee2c062, "fcvt d2, h3", {V(3)}, {V(2)}},
	{0x1e6540a4, "frintm d4, d5", {V(5)}, {V(4)}},
	{0x1e612000, "fcmp d0, d1", {V(0), V(1)}, {NZCV}},
	{0x1e202058, "fcmpe s2, #0.0", {V(2)}, {NZCV}},
	{0x1ee02068, "fcmp h3, #0.0", {V(3)}, {NZCV}},
	{0x1e610400, "fccmp d0, d1, #0, eq", {V(0), V(1), NZCV}, {NZCV}},
	{0x1e24cc62, "fcsel s2, s3, s4, gt", {V(3), V(4), NZCV}, {V(2)}},
	{0x1e6e1000, "fmov d0, #1.0", {0}, {V(0)}},
	{0x1e309001, "fmov s1, #-2.5", {0}, {V(1)}},
	{0x9e670020, "fmov d0, x1", {X(1)}, {V(0)}},
	{0x1e270062, "fmov s2, w3", {X(3)}, {V(2)}},
	{0x9e6600a4, "fmov x4, d5", {V(5)}, {X(4)}},
	{0x1e2600e6, "fmov w6, s7", {V(7)}, {X(6)}},
	{0x9eaf0128, "fmov v8.d[1], x9", {X(9), V(8)}, {V(8)}},
	{0x9eae016a, "fmov x10, v11.d[1]", {V(11)}, {X(10)}},
	{0x9e6703ec, "fmov d12, xzr", {0}, {V(12)}},
	{0x9e620020, "scvtf d0, x1", {X(1)}, {V(0)}},
	{0x1e230062, "ucvtf s2, w3", {X(3)}, {V(2)}},
	{0x1e42c0a4, "scvtf d4, w5, #16", {X(5)}, {V(4)}},
	{0x9e780020, "fcvtzs x0, d1", {V(1)}, {X(0)}},
	{0x1e390062, "fcvtzu w2, s3", {V(3)}, {X(2)}},
	{0x9e6000a4, "fcvtns x4, d5", {V(5)}, {X(4)}},
	{0x1ee400e6, "fcvtas w6, h7", {V(7)}, {X(6)}},
	{0x9e58e128, "fcvtzs x8, d9, #8", {V(9)}, {X(8)}},
};

static const struct want simd[] = {
	{0x4ea28420, "add v0.4s, v1.4s, v2.4s", {V(1), V(2)}, {V(0)}},
	{0x7ee58483, "sub d3, d4, d5", {V(4), V(5)}, {V(3)}},
	{0x4e689ce6, "mul v6.8h, v7.8h, v8.8h", {V(7), V(8)}, {V(6)}},
	{0x4ea29420, "mla v0.4s, v1.4s, v2.4s", {V(1), V(2), V(0)}, {V(0)}},
	{0x6e659483, "mls v3.8h, v4.8h, v5.8h", {V(4), V(5), V(3)}, {V(3)}},
	{0x4e62cc20, "fmla v0.2d, v1.2d, v2.2d", {V(1), V(2), V(0)}, {V(0)}},
	{0x4ea5cc83, "fmls v3.4s, v4.4s, v5.4s", {V(4), V(5), V(3)}, {V(3)}},
	{0x4e480ce6, "fmla v6.8h, v7.8h, v8.8h", {V(7), V(8), V(6)}, {V(6)}},
	{0x4e2bd549, "fadd v9.4s, v10.4s, v11.4s", {V(10), V(11)}, {V(9)}},
	{0x4e221c20, "and v0.16b, v1.16b, v2.16b", {V(1), V(2)}, {V(0)}},
	{0x4ea41c83, "orr v3.16b, v4.16b, v4.16b", {V(4)}, {V(3)}},
	{0x2e271cc5, "eor v5.8b, v6.8b, v7.8b", {V(6), V(7)}, {V(5)}},
	{0x6e621c20, "bsl v0.16b, v1.16b, v2.16b", {V(1), V(2), V(0)}, {V(0)}},
	{0x6ea51c83, "bit v3.16b, v4.16b, v5.16b", {V(4), V(5), V(3)}, {V(3)}},
	{0x2ee81ce6, "bif v6.8b, v7.8b, v8.8b", {V(7), V(8), V(6)}, {V(6)}},
	{0x4ea27c20, "saba v0.4s, v1.4s, v2.4s", {V(1), V(2), V(0)}, {V(0)}},
	{0x6ee58c83, "cmeq v3.2d, v4.2d, v5.2d", {V(4), V(5)}, {V(3)}},
	{0x0ea2c020, "smull v0.2d, v1.2s, v2.2s", {V(1), V(2)}, {V(0)}},
	{0x0e658083, "smlal v3.4s, v4.4h, v5.4h", {V(4), V(5), V(3)}, {V(3)}},
	{0x6ea880e6, "umlal2 v6.2d, v7.4s, v8.4s", {V(7), V(8), V(6)}, {V(6)}},
	{0x0e2b4149, "addhn v9.8b, v10.8h, v11.8h", {V(10), V(11)}, {V(9)}},
	{0x4e2b4149, "addhn2 v9.16b, v10.8h, v11.8h", {V(10), V(11), V(9)}, {V(9)}},
	{0x0ee2e020, "pmull v0.1q, v1.1d, v2.1d", {V(1), V(2)}, {V(0)}},
	{0x4ea0b820, "abs v0.4s, v1.4s", {V(1)}, {V(0)}},
	{0x7ee0b862, "neg d2, d3", {V(3)}, {V(2)}},
	{0x0e2058a4, "cnt v4.8b, v5.8b", {V(5)}, {V(4)}},
	{0x6e2058e6, "not v6.16b, v7.16b", {V(7)}, {V(6)}},
	{0x0e212928, "xtn v8.8b, v9.8h", {V(9)}, {V(8)}},
	{0x4e212928, "xtn2 v8.16b, v9.8h", {V(9), V(8)}, {V(8)}},
	{0x4e606820, "sadalp v0.4s, v1.8h", {V(1), V(0)}, {V(0)}},
	{0x4ea03862, "suqadd v2.4s, v3.4s", {V(3), V(2)}, {V(2)}},
	{0x4ea1b8a4, "fcvtzs v4.4s, v5.4s", {V(5)}, {V(4)}},
	{0x4eb1b820, "addv s0, v1.4s", {V(1)}, {V(0)}},
	{0x6e30a862, "umaxv b2, v3.16b", {V(3)}, {V(2)}},
	{0x5ef1b8a4, "addp d4, v5.2d", {V(5)}, {V(4)}},
	{0x4f235420, "shl v0.4s, v1.4s, #3", {V(1)}, {V(0)}},
	{0x5f7f0462, "sshr d2, d3, #1", {V(3)}, {V(2)}},
	{0x4f7914a4, "ssra v4.2d, v5.2d, #7", {V(5), V(4)}, {V(4)}},
	{0x7f7e14e6, "usra d6, d7, #2", {V(7), V(6)}, {V(6)}},
	{0x6f215528, "sli v8.4s, v9.4s, #1", {V(9), V(8)}, {V(8)}},
	{0x6f1c456a, "sri v10.8h, v11.8h, #4", {V(11), V(10)}, {V(10)}},
	{0x0f0e85ac, "shrn v12.8b, v13.8h, #2", {V(13)}, {V(12)}},
	{0x4f0e85ac, "shrn2 v12.16b, v13.8h, #2", {V(13), V(12)}, {V(12)}},
	{0x2f08a5ee, "ushll v14.8h, v15.8b, #0", {V(15)}, {V(14)}},
	{0x4fa28020, "mul v0.4s, v1.4s, v2.s[1]", {V(1), V(2)}, {V(0)}},
	{0x6f7f0883, "mla v3.8h, v4.8h, v15.h[7]", {V(4), V(15), V(3)}, {V(3)}},
	{0x4fdf18c5, "fmla v5.2d, v6.2d, v31.d[1]", {V(6), V(31), V(5)}, {V(5)}},
	{0x5fbe9907, "fmul s7, s8, v30.s[3]", {V(8), V(30)}, {V(7)}},
	{0x4f8bc149, "sqdmulh v9.4s, v10.4s, v11.s[0]", {V(10), V(11)}, {V(9)}},
	{0x4e829420, "sdot v0.4s, v1.16b, v2.16b", {V(1), V(2), V(0)}, {V(0)}},
	{0x2fb4e083, "udot v3.2s, v4.8b, v20.4b[1]", {V(4), V(20), V(3)}, {V(3)}},
	{0x4e040c20, "dup v0.4s, w1", {X(1)}, {V(0)}},
	{0x4e080fe2, "dup v2.2d, xzr", {0}, {V(2)}},
	{0x4e0a0483, "dup v3.8h, v4.h[2]", {V(4)}, {V(3)}},
	{0x5e0c04c5, "dup s5, v6.s[1]", {V(6)}, {V(5)}},
	{0x4e0c1c20, "ins v0.s[1], w1", {X(1), V(0)}, {V(0)}},
	{0x4e081c62, "mov v2.d[0], x3", {X(3), V(2)}, {V(2)}},
	{0x6e0704a4, "ins v4.b[3], v5.b[0]", {V(5), V(4)}, {V(4)}},
	{0x0e073c20, "umov w0, v1.b[3]", {V(1)}, {X(0)}},
	{0x4e183c62, "mov x2, v3.d[1]", {V(3)}, {X(2)}},
	{0x4e0a2ca4, "smov x4, v5.h[2]", {V(5)}, {X(4)}},
	{0x0e043cdf, "umov wzr, v6.s[0]", {V(6)}, {0}},
	{0x4f07e7e0, "movi v0.16b, #0xff", {0}, {V(0)}},
	{0x2f05e541, "movi d1, #0xff00ff00ff00ff00", {0}, {V(1)}},
	{0x6f000422, "mvni v2.4s, #1", {0}, {V(2)}},
	{0x4f03f603, "fmov v3.4s, #1.0", {0}, {V(3)}},
	{0x4f003604, "orr v4.4s, #0x10, lsl #8", {V(4)}, {V(4)}},
	{0x6f009425, "bic v5.8h, #0x1", {V(5)}, {V(5)}},
	{0x4e823820, "zip1 v0.4s, v1.4s, v2.4s", {V(1), V(2)}, {V(0)}},
	{0x4e455883, "uzp2 v3.8h, v4.8h, v5.8h", {V(4), V(5)}, {V(3)}},
	{0x4ec828e6, "trn1 v6.2d, v7.2d, v8.2d", {V(7), V(8)}, {V(6)}},
	{0x6e021820, "ext v0.16b, v1.16b, v2.16b, #3", {V(1), V(2)}, {V(0)}},
	{0x4e020020, "tbl v0.16b, {v1.16b}, v2.16b", {V(1), V(2)}, {V(0)}},
	{0x4e062083, "tbl v3.16b, {v4.16b, v5.16b}, v6.16b", {V(4), V(5), V(6)}, {V(3)}},
	{0x0e091107, "tbx v7.8b, {v8.16b}, v9.8b", {V(8), V(9), V(7)}, {V(7)}},
	{0x6e82cc20, "fcmla v0.4s, v1.4s, v2.4s, #90", {V(1), V(2), V(0)}, {V(0)}},
	{0x6e85e483, "fcadd v3.4s, v4.4s, v5.4s, #90", {V(4), V(5)}, {V(3)}},
	{0x6e8884e6, "sqrdmlah v6.4s, v7.4s, v8.4s", {V(7), V(8), V(6)}, {V(6)}},
	{0x4e6bdd49, "fmulx v9.2d, v10.2d, v11.2d", {V(10), V(11)}, {V(9)}},
};

static const struct want crypto[] = {
	{0x4e284820, "aese v0.16b, v1.16b", {V(0), V(1)}, {V(0)}},
	{0x4e285862, "aesd v2.16b, v3.16b", {V(2), V(3)}, {V(2)}},
	{0x4e2868a4, "aesmc v4.16b, v5.16b", {V(5)}, {V(4)}},
	{0x4e2878e6, "aesimc v6.16b, v7.16b", {V(7)}, {V(6)}},
	{0x5e020020, "sha1c q0, s1, v2.4s", {V(0), V(1), V(2)}, {V(0)}},
	{0x5e054083, "sha256h q3, q4, v5.4s", {V(3), V(4), V(5)}, {V(3)}},
	{0x5e0860e6, "sha256su1 v6.4s, v7.4s, v8.4s", {V(6), V(7), V(8)}, {V(6)}},
	{0x5e280820, "sha1h s0, s1", {V(1)}, {V(0)}},
	{0x5e281862, "sha1su1 v2.4s, v3.4s", {V(2), V(3)}, {V(2)}},
	{0x5e2828a4, "sha256su0 v4.4s, v5.4s", {V(4), V(5)}, {V(4)}},
	{0xce628020, "sha512h q0, q1, v2.2d", {V(0), V(1), V(2)}, {V(0)}},
	{0xcec08083, "sha512su0 v3.2d, v4.2d", {V(3), V(4)}, {V(3)}},
	{0xce020c20, "eor3 v0.16b, v1.16b, v2.16b, v3.16b", {V(1), V(2), V(3)}, {V(0)}},
	{0xce261ca4, "bcax v4.16b, v5.16b, v6.16b, v7.16b", {V(5), V(6), V(7)}, {V(4)}},
	{0xce6a8d28, "rax1 v8.2d, v9.2d, v10.2d", {V(9), V(10)}, {V(8)}},
	{0xce8d118b, "xar v11.2d, v12.2d, v13.2d, #4", {V(12), V(13)}, {V(11)}},
	{0xcec085ee, "sm4e v14.4s, v15.4s", {V(14), V(15)}, {V(14)}},
	{0xce72ca30, "sm4ekey v16.4s, v17.4s, v18.4s", {V(17), V(18)}, {V(16)}},
	{0xce558293, "sm3tt1a v19.4s, v20.4s, v21.s[0]", {V(19), V(20), V(21)}, {V(19)}},
};

static const struct want unalloc[] = {
	{0x00000000, "udf #0", {0}, {0}},
	{0xffffffff, "unallocated: SIMD&FP space with bit 31 set", {0}, {0}},
	{0x32800000, "unallocated: move wide, opc 01", {0}, {0}},
	{0x53400000, "unallocated: UBFM W with N = 1", {0}, {0}},
	{0xd63f0001, "unallocated: BLR with op4 != 0", {0}, {0}},
	{0x1ea04020, "unallocated: FMOV (register), ftype 10", {0}, {0}},
	{0xe9400000, "unallocated: LDP, opc 11", {0}, {0}},
	{0x9ac00400, "unallocated: data-processing (2 source), opcode 000001", {0}, {0}},
	{0xf8a0d000, "unallocated: atomic, o3 1 opc 101, A 1", {0}, {0}},
	{0x4e28c800, "unallocated: AES, opcode 01100", {0}, {0}},
	{0x38bfc400, "unallocated: LDRAA space with size 00", {0}, {0}},
	{0x0e000c00, "unallocated: DUP (general), imm5 00000", {0}, {0}},
	{0x88c0fc20, "unallocated: LDAR with Rs != 11111", {0}, {0}},
};

static const char *reg_name(uint8_t r, char buf[8])
{
	if (r >= 1 && r <= 31)
		snprintf(buf, 8, "x%u", r - 1u);
	else if (r == SP)
		snprintf(buf, 8, "sp");
	else if (r >= V(0) && r <= V(31))
		snprintf(buf, 8, "v%u", r - (unsigned)V(0));
	else if (r == NZCV)
		snprintf(buf, 8, "nzcv");
	else
		snprintf(buf, 8, "?%u", r);
	return buf;
}

static void print_set(const char *what, const uint8_t s[3])
{
	char buf[8];
	print_message(" %s {", what);
	for (int i = 0; i < 3; i++)
		if (s[i])
			print_message(" %s", reg_name(s[i], buf));
	print_message(" }");
}

static bool has(const uint8_t s[3], uint8_t r)
{
	return r && (s[0] == r || s[1] == r || s[2] == r);
}

static unsigned count(const uint8_t s[3])
{
	return (s[0] != 0) + (s[1] != 0) + (s[2] != 0);
}

static bool same_set(const uint8_t got[3], const uint8_t want[3])
{
	if (count(got) != count(want))
		return false;
	for (int i = 0; i < 3; i++)
		if (want[i] && !has(got, want[i]))
			return false;
	return true;
}

/* Whether the text's memory operand is pre-index ("]!") or post-index (a
 * comma after the "[Xn]" or "[sp]" operand): a form that writes its base
 * back. */
static bool writes_back(const char *text)
{
	if (strstr(text, "]!"))
		return true;
	for (const char *p = strchr(text, '['); p; p = strchr(p + 1, '[')) {
		const char *q = p + 1;
		if (*q == 'x')
			for (q++; *q >= '0' && *q <= '9'; q++)
				;
		else if (!strncmp(q, "sp", 2))
			q += 2;
		else
			continue;
		if (q != p + 1 && !strncmp(q, "],", 2))
			return true;
	}
	return false;
}

/* Every mismatch is printed before the test fails. */
static void check(const struct want *w, size_t n)
{
	unsigned bad = 0;
	for (size_t i = 0; i < n; i++) {
		struct dpmu_iregs r;
		dpmu_iregs_decode(w[i].enc, &r);
		const bool wb = writes_back(w[i].text);
		if (same_set(r.src, w[i].src) && same_set(r.dst, w[i].dst) && r.writeback == wb)
			continue;
		bad++;
		print_message("%08x %-36s writeback %d (want %d)", w[i].enc, w[i].text, r.writeback, wb);
		print_set("src", r.src);
		print_set("dst", r.dst);
		print_message(", want");
		print_set("src", w[i].src);
		print_set("dst", w[i].dst);
		print_message("\n");
	}
	assert_int_equal(bad, 0);
}

#define CHECK(rows) check(rows, sizeof rows / sizeof rows[0])

static void test_data_processing_operands_with_zr_sp_and_flags(void **state)
{
	(void)state;
	CHECK(dp);
}

static void test_loads_and_stores_in_every_addressing_mode(void **state)
{
	(void)state;
	CHECK(ldst);
}

static void test_simd_structure_loads_and_stores_keep_the_base(void **state)
{
	(void)state;
	CHECK(structs);
}

static void test_branches_and_system_instructions(void **state)
{
	(void)state;
	CHECK(branch_sys);
}

static void test_scalar_fp_operands_compares_and_conversions(void **state)
{
	(void)state;
	CHECK(fp);
}

static void test_advanced_simd_operands_and_accumulators(void **state)
{
	(void)state;
	CHECK(simd);
}

static void test_crypto_instructions_read_their_state(void **state)
{
	(void)state;
	CHECK(crypto);
}

static void test_unallocated_encodings_list_no_registers(void **state)
{
	(void)state;
	CHECK(unalloc);
}

static uint8_t base_reg(unsigned rn)
{
	return rn == 31 ? SP : X(rn);
}

/* LD4/ST4 (multiple structures, post-index by register) name six
 * registers: the cap must keep the base, its writeback and Rm. */
static void test_cap_keeps_base_and_offset_of_four_register_structures(void **state)
{
	(void)state;
	for (unsigned load = 0; load <= 1; load++)
		for (unsigned rn = 0; rn < 32; rn++)
			for (unsigned rm = 0; rm < 31; rm++)
				for (unsigned rt = 0; rt < 32; rt += 5) {
					uint32_t e = 0x4c800000u | load << 22 | rm << 16 | rn << 5 | rt;
					struct dpmu_iregs r;
					dpmu_iregs_decode(e, &r);
					assert_true(has(r.src, base_reg(rn)));
					assert_true(has(r.src, X(rm)));
					assert_true(has(r.dst, base_reg(rn)));
					assert_true(has(load ? r.dst : r.src, V(rt)));
				}
}

/* Pre- and post-index LDR/STR/LDP/STP (C6.2) write the base back. */
static void test_writeback_forms_read_and_write_their_base(void **state)
{
	(void)state;
	static const uint32_t forms[] = {
		0xf8400400u, /* ldr x0, [x0], #0 */
		0xf8400c00u, /* ldr x0, [x0, #0]! */
		0x38000400u, /* strb w0, [x0], #0 */
		0x3c800c00u, /* str q0, [x0, #0]! */
		0xa8c00000u, /* ldp x0, x0, [x0], #0 */
		0xa9800000u, /* stp x0, x0, [x0, #0]! */
		0x6dc00000u, /* ldp d0, d0, [x0, #0]! */
		0xd9200400u, /* stg x0, [x0], #0 */
		0xf8200c00u, /* ldraa x0, [x0, #0]! */
	};
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
		for (unsigned rn = 0; rn < 32; rn++)
			for (unsigned rt = 0; rt < 32; rt++) {
				struct dpmu_iregs r;
				dpmu_iregs_decode(forms[i] | rn << 5 | rt, &r);
				assert_true(has(r.src, base_reg(rn)));
				assert_true(has(r.dst, base_reg(rn)));
				assert_true(r.writeback);
			}
}

static uint32_t xorshift32(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static void check_ids(uint32_t e, const uint8_t s[3])
{
	for (int i = 0; i < 3; i++) {
		if (s[i] >= DPMU_REG_COUNT || (i && !s[i - 1] && s[i]))
			fail_msg("%08x: id %u at %d (out of range or after padding)", e, s[i], i);
		for (int j = 0; j < i; j++)
			if (s[i] && s[i] == s[j])
				fail_msg("%08x: id %u listed twice", e, s[i]);
	}
}

static void test_random_encodings_give_valid_unique_padded_ids(void **state)
{
	(void)state;
	uint32_t seed = 0x2545f491u;
	for (unsigned i = 0; i < 1u << 20; i++) {
		uint32_t e = xorshift32(&seed);
		struct dpmu_iregs r;
		dpmu_iregs_decode(e, &r);
		check_ids(e, r.src);
		check_ids(e, r.dst);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_processing_operands_with_zr_sp_and_flags),
		cmocka_unit_test(test_loads_and_stores_in_every_addressing_mode),
		cmocka_unit_test(test_simd_structure_loads_and_stores_keep_the_base),
		cmocka_unit_test(test_branches_and_system_instructions),
		cmocka_unit_test(test_scalar_fp_operands_compares_and_conversions),
		cmocka_unit_test(test_advanced_simd_operands_and_accumulators),
		cmocka_unit_test(test_crypto_instructions_read_their_state),
		cmocka_unit_test(test_unallocated_encodings_list_no_registers),
		cmocka_unit_test(test_cap_keeps_base_and_offset_of_four_register_structures),
		cmocka_unit_test(test_writeback_forms_read_and_write_their_base),
		cmocka_unit_test(test_random_encodings_give_valid_unique_padded_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
