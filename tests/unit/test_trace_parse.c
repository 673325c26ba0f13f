/*
 * Trace front end: the text and binary forms of docs/trace-format.md, their
 * error messages (FILE:LINE: what is wrong) and the converter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dynpmu/frontend.h"

#define MAXREC 20000

struct rec {
	unsigned core;
	struct dpmu_insn in;
};

struct parsed {
	int rc;
	size_t n;
	long runs;
	struct dpmu_err err;
	struct rec r[MAXREC];
};

static struct parsed P;

/* Parse `text` as the trace "t.trace"; fills P. */
static int parse_buf(const void *data, size_t len, enum dpmu_trace_format fmt)
{
	memset(&P, 0, sizeof P);
	FILE *f = fmemopen((void *)data, len, "rb");
	assert_non_null(f);
	struct dpmu_trace_reader *r;
	P.rc = dpmu_trace_open_stream(f, "t.trace", fmt, &r, &P.err);
	if (P.rc == 0) {
		for (;;) {
			unsigned core;
			const struct dpmu_insn *insns;
			long n = dpmu_trace_next(r, &core, &insns, &P.err);
			if (n < 0) {
				P.rc = (int)n;
				break;
			}
			if (n == 0)
				break;
			P.runs++;
			for (long i = 0; i < n && P.n < MAXREC; i++) {
				P.r[P.n].core = core;
				P.r[P.n].in = insns[i];
				P.n++;
			}
		}
		dpmu_trace_close(r);
	}
	fclose(f);
	return P.rc;
}

static int parse(const char *text)
{
	return parse_buf(text, strlen(text), DPMU_TRACE_AUTO);
}

/* The message of a malformed trace, which must fail. */
static const char *parse_error(const char *text)
{
	assert_int_not_equal(parse(text), 0);
	return P.err.msg;
}

static void every_line_kind(void **state)
{
	(void)state;
	assert_int_equal(parse("i 400000\n"
			       "l 400004 10000 8\n"
			       "s 400008 10008 4\n"
			       "b 40000c 400000 T cond\n"
			       "b 400010 400014 N cond\n"
			       "b 400014 500000 T uncond\n"
			       "b 400018 600000 T call\n"
			       "b 600000 40001c T ret\n"
			       "b 40001c 700000 T ind\n"),
			 0);
	assert_int_equal(P.n, 9);
	assert_int_equal(P.r[0].in.kind, DPMU_INSN_OTHER);
	assert_int_equal(P.r[0].in.pc, 0x400000);
	assert_int_equal(P.r[0].in.isize, 4);
	assert_int_equal(P.r[1].in.kind, DPMU_INSN_LOAD);
	assert_int_equal(P.r[1].in.addr, 0x10000);
	assert_int_equal(P.r[1].in.size, 8);
	assert_int_equal(P.r[2].in.kind, DPMU_INSN_STORE);
	assert_int_equal(P.r[2].in.addr, 0x10008);
	assert_int_equal(P.r[2].in.size, 4);
	assert_int_equal(P.r[3].in.kind, DPMU_INSN_BRANCH);
	assert_int_equal(P.r[3].in.addr, 0x400000);
	assert_int_equal(P.r[3].in.taken, 1);
	assert_int_equal(P.r[3].in.br_kind, DPMU_BR_COND);
	assert_true(P.r[3].in.flags & DPMU_IC_IMMED);
	assert_int_equal(P.r[4].in.taken, 0);
	assert_int_equal(P.r[5].in.br_kind, DPMU_BR_UNCOND);
	assert_int_equal(P.r[6].in.br_kind, DPMU_BR_CALL);
	assert_int_equal(P.r[7].in.br_kind, DPMU_BR_RET);
	assert_false(P.r[7].in.flags & DPMU_IC_IMMED);
	assert_int_equal(P.r[8].in.br_kind, DPMU_BR_IND);
	assert_false(P.r[8].in.flags & DPMU_IC_IMMED);
	for (size_t i = 0; i < P.n; i++)
		assert_int_equal(P.r[i].core, 0);
}

static void hex_with_and_without_0x(void **state)
{
	(void)state;
	assert_int_equal(parse("i 0x400000\ni 400004\ni 0X40000C\nl 0xAbC0 0xffffffffffffffff 0x10\n"
			       "l abc4 FFFF0000 10\n"),
			 0);
	assert_int_equal(P.n, 5);
	assert_int_equal(P.r[0].in.pc, 0x400000);
	assert_int_equal(P.r[1].in.pc, 0x400004);
	assert_int_equal(P.r[2].in.pc, 0x40000c);
	assert_int_equal(P.r[3].in.pc, 0xabc0);
	assert_true(P.r[3].in.addr == UINT64_MAX);
	assert_int_equal(P.r[3].in.size, 16);
	/* SIZE is hex too: 10 is sixteen bytes. */
	assert_int_equal(P.r[4].in.size, 16);
	assert_int_equal(P.r[4].in.addr, 0xffff0000);
}

static void comments_and_blank_lines(void **state)
{
	(void)state;
	assert_int_equal(parse("# a trace\n\n   \n\t\ni 1000 # trailing comment\n#i 2000\n"
			       "  l 1004 2000 8   \r\ni 1008"),
			 0);
	assert_int_equal(P.n, 3);
	assert_int_equal(P.r[0].in.pc, 0x1000);
	assert_int_equal(P.r[1].in.pc, 0x1004);
	assert_int_equal(P.r[2].in.pc, 0x1008);
	assert_int_equal(parse(""), 0);
	assert_int_equal(P.n, 0);
	assert_int_equal(parse("# only a comment"), 0);
	assert_int_equal(P.n, 0);
}

static void cpu_switching_splits_runs(void **state)
{
	(void)state;
	assert_int_equal(parse("i 1000\ncpu 2\ni 2000\ni 2004\ncpu 2\ni 2008\ncpu 0\ni 1004\n"
			       "cpu 11\ni 3000\ncpu 0x1f\ni 4000\n"),
			 0);
	assert_int_equal(P.n, 7);
	assert_int_equal(P.r[0].core, 0);
	assert_int_equal(P.r[1].core, 2);
	assert_int_equal(P.r[2].core, 2);
	assert_int_equal(P.r[3].core, 2);
	assert_int_equal(P.r[4].core, 0);
	/* cpu numbers are decimal unless written 0x... */
	assert_int_equal(P.r[5].core, 11);
	assert_int_equal(P.r[5].in.pc, 0x3000);
	assert_int_equal(P.r[6].core, 31);
	assert_int_equal(P.runs, 5); /* 0 | 2 2 2 | 0 | 11 | 31 */
}

static void runs_are_bounded_blocks(void **state)
{
	(void)state;
	/* 10000 lines stream through in runs, none longer than the reader's
	 * block: the whole trace is never held at once. */
	size_t cap = 10000 * 16;
	char *text = malloc(cap);
	assert_non_null(text);
	size_t k = 0;
	for (unsigned i = 0; i < 10000; i++)
		k += (size_t)snprintf(text + k, cap - k, "i %x\n", 0x400000 + 4 * i);
	assert_int_equal(parse_buf(text, k, DPMU_TRACE_AUTO), 0);
	assert_int_equal(P.n, 10000);
	assert_true(P.runs >= 3);
	assert_int_equal(P.r[9999].in.pc, 0x400000 + 4 * 9999);
	free(text);
}

struct bad {
	const char *text;
	const char *msg;
};

static const struct bad bad_lines[] = {
	{"i 1000\nx 1000\n", "t.trace:2: unknown record 'x' (expected i, l, s, b or cpu)"},
	{"I 1000\n", "t.trace:1: unknown record 'I' (expected i, l, s, b or cpu)"},
	{"i\n", "t.trace:1: 'i' needs PC (i PC), got 0 fields"},
	{"i 1000 2000\n", "t.trace:1: 'i' needs PC (i PC), got 2 fields"},
	{"\n\nl 1000 2000\n", "t.trace:3: 'l' needs PC ADDR SIZE (l PC ADDR SIZE), got 2 fields"},
	{"s 1000\n", "t.trace:1: 's' needs PC ADDR SIZE (s PC ADDR SIZE), got 1 field"},
	{"b 1000 2000 T\n",
	 "t.trace:1: 'b' needs PC TARGET T|N KIND (b PC TARGET T|N KIND), got 3 fields"},
	{"i 10zz\n", "t.trace:1: PC '10zz' is not a hex number"},
	{"i 0x\n", "t.trace:1: PC '0x' is not a hex number"},
	{"i -4\n", "t.trace:1: PC '-4' is not a hex number"},
	{"l 1000 g000 8\n", "t.trace:1: address 'g000' is not a hex number"},
	{"l 1000 2000 eight\n", "t.trace:1: size 'eight' is not a hex number"},
	{"i 10000000000000000\n", "t.trace:1: PC '10000000000000000' does not fit in 64 bits"},
	{"l 1000 2000 0\n", "t.trace:1: size '0' out of range 1..0x1000 bytes"},
	{"l 1000 2000 1001\n", "t.trace:1: size '1001' out of range 1..0x1000 bytes"},
	{"b 1000 2000 X cond\n", "t.trace:1: branch direction 'X' must be T or N"},
	{"b 1000 2000 T jump\n",
	 "t.trace:1: branch kind 'jump' must be cond, uncond, call, ret or ind"},
	{"b 1000 2000 N ret\n", "t.trace:1: only a cond branch can be not taken (N)"},
	{"b 1000 zz T cond\n", "t.trace:1: target 'zz' is not a hex number"},
	{"i 1002\n", "t.trace:1: PC is not 4-byte aligned (AArch64 instructions are 4 bytes)"},
	{"cpu\n", "t.trace:1: 'cpu' needs one core number (cpu N)"},
	{"cpu 1 2\n", "t.trace:1: 'cpu' needs one core number (cpu N)"},
	{"cpu x\n", "t.trace:1: core number 'x' is not a number"},
	{"cpu 32\n", "t.trace:1: cpu 32 out of range: there are 32 cores (0-31)"},
	{"i 1000 2 3 4 5 6 7 8\n", "t.trace:1: too many fields"},
};

static void malformed_lines_name_file_and_line(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bad_lines / sizeof bad_lines[0]; i++) {
		const char *msg = parse_error(bad_lines[i].text);
		if (strcmp(msg, bad_lines[i].msg) != 0)
			fail_msg("input %zu: got \"%s\", want \"%s\"", i, msg, bad_lines[i].msg);
		assert_int_equal(P.err.code, DPMU_EINVAL);
	}
}

static void nonprintable_fields_are_quoted_safely(void **state)
{
	(void)state;
	static const char text[] = "i 1000\ni \x01\xff\n";
	assert_int_not_equal(parse_buf(text, sizeof text - 1, DPMU_TRACE_AUTO), 0);
	assert_string_equal(P.err.msg, "t.trace:2: PC '?\?' is not a hex number");
	static const char nul[] = "i 10\0000\n";
	assert_int_not_equal(parse_buf(nul, sizeof nul - 1, DPMU_TRACE_AUTO), 0);
	assert_string_equal(P.err.msg, "t.trace:1: PC '10?0' is not a hex number");
}

static void overlong_line_is_an_error(void **state)
{
	(void)state;
	size_t n = DPMU_TRACE_LINE_MAX + 10;
	char *text = malloc(n + 16);
	assert_non_null(text);
	strcpy(text, "i 1000\n# ");
	memset(text + 9, 'a', n);
	strcpy(text + 9 + n, "\n");
	assert_int_not_equal(parse(text), 0);
	assert_string_equal(P.err.msg, "t.trace:2: line longer than 1024 bytes");
	free(text);
}

static void set_ncores_bounds_cpu_lines(void **state)
{
	(void)state;
	static const char text[] = "i 1000\ncpu 7\ni 1004\ncpu 8\ni 1008\n";
	FILE *f = fmemopen((void *)text, sizeof text - 1, "rb");
	struct dpmu_trace_reader *r;
	struct dpmu_err err;
	assert_int_equal(dpmu_trace_open_stream(f, "p.trace", DPMU_TRACE_AUTO, &r, &err), 0);
	dpmu_trace_set_ncores(r, 8);
	struct dpmu_trace_summary sum;
	assert_int_equal(dpmu_trace_scan(r, &sum, &err), DPMU_EINVAL);
	assert_string_equal(err.msg, "p.trace:4: cpu 8 out of range: there are 8 cores (0-7)");
	dpmu_trace_close(r);
	fclose(f);
}

static void scan_counts_per_core(void **state)
{
	(void)state;
	static const char text[] = "i 1000\ni 1004\ncpu 3\ni 2000\ncpu 0\ni 1008\n";
	FILE *f = fmemopen((void *)text, sizeof text - 1, "rb");
	struct dpmu_trace_reader *r;
	struct dpmu_err err;
	assert_int_equal(dpmu_trace_open_stream(f, "s.trace", DPMU_TRACE_AUTO, &r, &err), 0);
	struct dpmu_trace_summary sum;
	assert_int_equal(dpmu_trace_scan(r, &sum, &err), 0);
	assert_int_equal(sum.insns, 4);
	assert_int_equal(sum.per_core[0], 3);
	assert_int_equal(sum.per_core[3], 1);
	assert_int_equal(sum.cores_used, 0x9);
	dpmu_trace_close(r);
	fclose(f);
}

static void open_missing_file_names_it(void **state)
{
	(void)state;
	struct dpmu_trace_reader *r;
	struct dpmu_err err;
	assert_int_equal(dpmu_trace_open("/nonexistent/x.trace", DPMU_TRACE_AUTO, &r, &err),
			 DPMU_ENOENT);
	assert_null(r);
	assert_non_null(strstr(err.msg, "/nonexistent/x.trace: cannot open"));
	/* A directory opens but cannot be read. */
	assert_int_equal(dpmu_trace_open("/", DPMU_TRACE_AUTO, &r, &err), DPMU_EIO);
	assert_non_null(strstr(err.msg, "/: read error"));
}

/* ---- binary --------------------------------------------------------------- */

static const char round_trip_text[] =
	"# every kind, core switches, far jumps and backwards addresses\n"
	"i 400000\ni 400004\nl 400008 7fff0000 8\ns 40000c 7ffefff8 10\n"
	"b 400010 400000 T cond\nb 400014 400018 N cond\nb 400018 ffffffff00000000 T call\n"
	"cpu 5\ni ffffffff00000000\nb ffffffff00000004 40001c T ret\nl 40001c 0 1\n"
	"cpu 0\ni 400020\nb 400024 123456789abc T ind\ns 400028 ffffffffffffffff 1000\n"
	"cpu 31\ni 0\nb 4 0 T uncond\n";

static char tmpdir[64];

static const char *tmp_path(const char *leaf)
{
	static char buf[4][128];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, leaf);
	return buf[k];
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static size_t read_file(const char *path, void *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

static struct rec saved[MAXREC];

static void binary_round_trip(void **state)
{
	(void)state;
	struct dpmu_err err;
	assert_int_equal(parse(round_trip_text), 0);
	size_t n = P.n;
	assert_int_equal(n, 15);
	memcpy(saved, P.r, n * sizeof saved[0]);

	write_file(tmp_path("a.trace"), round_trip_text, strlen(round_trip_text));
	assert_int_equal(dpmu_trace_convert(tmp_path("a.trace"), tmp_path("a.bin"),
					    DPMU_TRACE_BINARY, &err),
			 0);
	assert_int_equal(dpmu_trace_convert(tmp_path("a.bin"), tmp_path("b.trace"),
					    DPMU_TRACE_TEXT, &err),
			 0);

	static unsigned char bin[1 << 16];
	size_t blen = read_file(tmp_path("a.bin"), bin, sizeof bin);
	assert_memory_equal(bin, DPMU_TRACE_MAGIC, DPMU_TRACE_MAGIC_LEN);
	/* Compact: much smaller than the text. */
	assert_true(blen < strlen(round_trip_text) / 2);
	assert_int_equal(parse_buf(bin, blen, DPMU_TRACE_AUTO), 0);
	assert_int_equal(P.n, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(P.r[i].core, saved[i].core);
		assert_memory_equal(&P.r[i].in, &saved[i].in, sizeof saved[i].in);
	}

	static char text[1 << 16];
	size_t tlen = read_file(tmp_path("b.trace"), text, sizeof text - 1);
	text[tlen] = '\0';
	assert_int_equal(parse(text), 0);
	assert_int_equal(P.n, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(P.r[i].core, saved[i].core);
		assert_memory_equal(&P.r[i].in, &saved[i].in, sizeof saved[i].in);
	}
	/* text -> binary -> text is a fixed point after one pass. */
	assert_int_equal(dpmu_trace_convert(tmp_path("b.trace"), tmp_path("c.trace"),
					    DPMU_TRACE_TEXT, &err),
			 0);
	static char text2[1 << 16];
	size_t t2 = read_file(tmp_path("c.trace"), text2, sizeof text2);
	assert_int_equal(t2, tlen);
	assert_memory_equal(text, text2, tlen);
}

static void binary_sequential_records_are_one_byte(void **state)
{
	(void)state;
	struct dpmu_err err;
	size_t cap = 1000 * 16, k = 0;
	char *text = malloc(cap);
	for (unsigned i = 0; i < 1000; i++)
		k += (size_t)snprintf(text + k, cap - k, "i %x\n", 4 * i);
	write_file(tmp_path("seq.trace"), text, k);
	free(text);
	assert_int_equal(dpmu_trace_convert(tmp_path("seq.trace"), tmp_path("seq.bin"),
					    DPMU_TRACE_BINARY, &err),
			 0);
	static unsigned char bin[1 << 16];
	size_t blen = read_file(tmp_path("seq.bin"), bin, sizeof bin);
	assert_int_equal(blen, DPMU_TRACE_MAGIC_LEN + 1000);
}

static void binary_errors_name_the_byte(void **state)
{
	(void)state;
	/* Header, then a load whose size varint is cut short. */
	static const unsigned char trunc[] = "DPMUTRC1\x41\x02";
	assert_int_not_equal(parse_buf(trunc, sizeof trunc - 1, DPMU_TRACE_AUTO), 0);
	assert_string_equal(P.err.msg, "t.trace: byte 8: truncated record");

	static const unsigned char tag[] = "DPMUTRC1\x40\x40\x9f";
	assert_int_not_equal(parse_buf(tag, sizeof tag - 1, DPMU_TRACE_AUTO), 0);
	assert_string_equal(P.err.msg, "t.trace: byte 10: unknown record tag 0x9f");

	static const unsigned char cpu[] = "DPMUTRC1\x80\x20";
	assert_int_not_equal(parse_buf(cpu, sizeof cpu - 1, DPMU_TRACE_AUTO), 0);
	assert_string_equal(P.err.msg,
			    "t.trace: byte 8: cpu out of range: there are 32 cores (0-31)");

	static const unsigned char size0[] = "DPMUTRC1\x41\x00\x00";
	assert_int_not_equal(parse_buf(size0, sizeof size0 - 1, DPMU_TRACE_AUTO), 0);
	assert_string_equal(P.err.msg,
			    "t.trace: byte 8: access size out of range 1..0x1000 bytes");

	/* Branch kind 7 does not exist. */
	static const unsigned char brk[] = "DPMUTRC1\x7f\x00";
	assert_int_not_equal(parse_buf(brk, sizeof brk - 1, DPMU_TRACE_AUTO), 0);
	assert_string_equal(P.err.msg, "t.trace: byte 8: branch kind out of range");

	static const unsigned char big[] = "DPMUTRC1\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f";
	assert_int_not_equal(parse_buf(big, sizeof big - 1, DPMU_TRACE_AUTO), 0);
	assert_string_equal(P.err.msg, "t.trace: byte 8: PC delta does not fit in 64 bits");

	static const char notbin[] = "i 1000\n";
	assert_int_not_equal(parse_buf(notbin, sizeof notbin - 1, DPMU_TRACE_BINARY), 0);
	assert_string_equal(P.err.msg, "t.trace: not a binary trace (no DPMUTRC1 header)");

	/* Header alone: an empty trace. */
	assert_int_equal(parse_buf("DPMUTRC1", 8, DPMU_TRACE_AUTO), 0);
	assert_int_equal(P.n, 0);
}

static void writer_refuses_invalid_records(void **state)
{
	(void)state;
	struct dpmu_trace_writer *w;
	struct dpmu_err err;
	char buf[256];
	FILE *f = fmemopen(buf, sizeof buf, "wb");
	assert_int_equal(dpmu_trace_writer_open_stream(f, "w.trace", DPMU_TRACE_TEXT, &w, &err), 0);
	struct dpmu_insn in = {.pc = 0x1000, .kind = DPMU_INSN_LOAD, .size = 0, .isize = 4};
	assert_int_equal(dpmu_trace_write(w, 0, &in, 1, &err), DPMU_EINVAL);
	assert_string_equal(err.msg,
			    "w.trace: instruction at PC 0x1000: access size out of range 1..0x1000 bytes");
	in.size = 8;
	assert_int_equal(dpmu_trace_write(w, 32, &in, 1, &err), DPMU_ERANGE);
	assert_int_equal(dpmu_trace_writer_close(w, &err), 0);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/dpmu-trace-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_line_kind),
		cmocka_unit_test(hex_with_and_without_0x),
		cmocka_unit_test(comments_and_blank_lines),
		cmocka_unit_test(cpu_switching_splits_runs),
		cmocka_unit_test(runs_are_bounded_blocks),
		cmocka_unit_test(malformed_lines_name_file_and_line),
		cmocka_unit_test(nonprintable_fields_are_quoted_safely),
		cmocka_unit_test(overlong_line_is_an_error),
		cmocka_unit_test(set_ncores_bounds_cpu_lines),
		cmocka_unit_test(scan_counts_per_core),
		cmocka_unit_test(open_missing_file_names_it),
		cmocka_unit_test(binary_round_trip),
		cmocka_unit_test(binary_sequential_records_are_one_byte),
		cmocka_unit_test(binary_errors_name_the_byte),
		cmocka_unit_test(writer_refuses_invalid_records),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
