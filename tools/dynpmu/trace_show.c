/*
 * dynpmu trace show [--addresses] DIR
 *
 * Decodes a trace directory (docs/trace-unit.md) with OpenCSD, the
 * program's files as its memory image, and prints the instructions with
 * their function, source line and disassembly; marks where the trigger
 * started the trace, where it restarted after a gap, and at each
 * timestamp the PMU readings taken then (seed 003 section 7.1).
 * --addresses prints only each instruction's address, one per line.
 */
#include <capstone/capstone.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "dynpmu/analysis.h"
#include "dynpmu/etm.h"
#include "dynpmu/etmdecode.h"
#include "dynpmu/perfdata.h"
#include "dynpmu/tracedir.h"

#define PID 1u /* the program, in the symbol lookup's one process */

struct show {
	FILE *out;
	const struct dpmu_tracedir *t;
	bool addresses;
	struct dpmu_an_syms *syms;
	struct dpmu_perf_file pf;   /* the mappings, for the symbol lookup */
	csh cs;
	bool cs_ok;
	uint64_t insns, cycles;
	uint64_t ctx;               /* the last context ID */
	bool have_ctx;
	bool marked;                /* the trigger mark printed */
	size_t next_snap;
};

static void usage(FILE *out)
{
	fprintf(out, "usage: dynpmu trace show [--addresses] DIR\n\n"
		     "Decode a trace directory from dynpmu trace record with OpenCSD and print its\n"
		     "instructions with symbols, source lines, the trigger and the PMU readings.\n"
		     "  --addresses   only the address of each instruction, one per line\n");
}

static void print_snapshot(struct show *s, const struct dpmu_tracedir_snapshot *sn)
{
	fprintf(s->out, "-- PMU at %" PRIu64 " ns:", sn->time_ns);
	for (unsigned k = 0; k < sn->n; k++) {
		char b[32];
		fprintf(s->out, " %s %s", sn->name[k], dpmu_an_thousands(sn->value[k], b, sizeof b));
	}
	fputs(" --\n", s->out);
}

static void print_insn(struct show *s, uint64_t pc, const uint8_t *code)
{
	const struct dpmu_an_loc *l = dpmu_an_syms_lookup(s->syms, &s->pf, PID, pc);
	char where[160] = "";
	if (l->sym && strcmp(l->sym, "[unknown]") != 0)
		snprintf(where, sizeof where, "%s+0x%" PRIx64, l->sym, pc - l->sym_addr);
	char src[160] = "";
	if (l->file) {
		const char *b = strrchr(l->file, '/');
		snprintf(src, sizeof src, "%s:%d", b ? b + 1 : l->file, l->line);
	}
	char text[256] = "";
	cs_insn *ins = NULL;
	if (s->cs_ok && code && cs_disasm(s->cs, code, 4, pc, 1, &ins) == 1)
		snprintf(text, sizeof text, "%s %s", ins->mnemonic, ins->op_str);
	if (ins)
		cs_free(ins, 1);
	fprintf(s->out, "  %12" PRIx64 "  %-28s %-20s %s\n", pc, where, src, text);
}

static const uint8_t *code_at(const struct dpmu_etm_image *img, size_t n, uint64_t pc)
{
	for (size_t i = 0; i < n; i++)
		if (pc >= img[i].addr && pc - img[i].addr + 4 <= img[i].len)
			return img[i].bytes + (pc - img[i].addr);
	return NULL;
}

struct elem_ctx {
	struct show *s;
	const struct dpmu_etm_image *img;
	size_t nimg;
};

static int on_elem(void *ctx, const struct dpmu_etm_elem *el)
{
	struct elem_ctx *x = ctx;
	struct show *s = x->s;
	const struct dpmu_tracedir *t = s->t;
	switch (el->kind) {
	case DPMU_ETM_ELEM_RANGE:
		if (!s->marked && !s->addresses && t->trigger_event[0]) {
			char b[32];
			if (t->wrapped)
				fprintf(s->out, "-- (the sink wrapped: where %s passed %s is overwritten) --\n",
					t->trigger_event, dpmu_an_thousands(t->trigger_count, b, sizeof b));
			else
				fprintf(s->out, "-- trigger: %s passed %s (instruction %" PRIu64
						" after the trace unit was enabled) --\n",
					t->trigger_event, dpmu_an_thousands(t->trigger_count, b, sizeof b),
					t->first);
		}
		s->marked = true;
		for (uint64_t pc = el->start; pc < el->end; pc += 4) {
			s->insns++;
			if (s->addresses)
				fprintf(s->out, "0x%" PRIx64 "\n", pc);
			else
				print_insn(s, pc, code_at(x->img, x->nimg, pc));
		}
		break;
	case DPMU_ETM_ELEM_TRACE_ON:
		if (!s->addresses && s->marked)
			fputs("-- trace on: a gap before --\n", s->out);
		break;
	case DPMU_ETM_ELEM_TIMESTAMP:
		if (s->addresses)
			break;
		while (s->next_snap < t->nsnap && t->snap[s->next_snap].time_ns < el->start)
			s->next_snap++;
		if (s->next_snap < t->nsnap && t->snap[s->next_snap].time_ns == el->start)
			print_snapshot(s, &t->snap[s->next_snap++]);
		else
			fprintf(s->out, "-- time %" PRIu64 " ns --\n", el->start);
		break;
	case DPMU_ETM_ELEM_NO_SYNC:
		if (!s->addresses && s->marked)
			fprintf(s->out, "-- decoder lost sync at trace offset %" PRIu64 " --\n", el->start);
		break;
	case DPMU_ETM_ELEM_CYCLES:
		s->cycles += el->start;
		if (!s->addresses) {
			if (el->start)
				fprintf(s->out, "-- %" PRIu64 " cycles --\n", el->start);
			else
				fputs("-- cycles: unknown (the counter saturated) --\n", s->out);
		}
		break;
	case DPMU_ETM_ELEM_EXCEPTION:
		if (!s->addresses)
			fprintf(s->out, "-- exception (%s), returns to 0x%" PRIx64 " --\n",
				el->end == 2 ? "SVC" : el->end == 14 ? "IRQ: the thread left the core" : "other",
				el->start);
		break;
	case DPMU_ETM_ELEM_CONTEXT:
		if (!s->addresses && (!s->have_ctx || el->start != s->ctx)) {
			if (el->start & 0x80000000u)
				fprintf(s->out, "-- thread: vCPU %" PRIu64 " --\n", el->start & 0x7fffffffu);
			else
				fprintf(s->out, "-- thread %" PRIu64 " --\n", el->start);
		}
		s->ctx = el->start;
		s->have_ctx = true;
		break;
	case DPMU_ETM_ELEM_NO_IMAGE:
		if (!s->addresses)
			fprintf(s->out, "-- no code for 0x%" PRIx64 " in the program's files --\n",
				el->start);
		break;
	}
	return ferror(s->out) ? -1 : 0;
}

static int show(const char *dir, bool addresses, struct dpmu_err *err, bool *bad_input)
{
	*bad_input = true;
	struct dpmu_tracedir t;
	int rc = dpmu_tracedir_read(dir, &t, err);
	if (rc)
		return rc;
	struct show s = { .out = stdout, .t = &t, .addresses = addresses };
	struct dpmu_perf_map pmaps[DPMU_TRACEDIR_MAX_MAPS];
	for (unsigned i = 0; i < t.nmaps; i++)
		pmaps[i] = (struct dpmu_perf_map){ PID, t.maps[i].start, t.maps[i].len,
						   t.maps[i].pgoff, t.maps[i].path };
	s.pf.maps = pmaps;
	s.pf.nmaps = t.nmaps;
	struct dpmu_tracedir_image im;
	rc = dpmu_tracedir_image(&t, &im, err);
	if (!rc)
		rc = dpmu_an_syms_create(&s.syms, err);
	if (!rc) {
		s.cs_ok = cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &s.cs) == CS_ERR_OK;
		if (!addresses) {
			char a[32], g[32];
			fprintf(s.out, "# %s: cpu%u (%s), %s of %s instructions traced, %zu bytes of "
				       "trace%s\n",
				dir, t.cpu, t.core_type, dpmu_an_thousands(t.traced, a, sizeof a),
				dpmu_an_thousands(t.given, g, sizeof g), t.trace_len,
				t.wrapped ? " (the sink wrapped: the oldest was overwritten)" : "");
			if (t.range_name[0])
				fprintf(s.out, "# range: %s [0x%" PRIx64 ", 0x%" PRIx64 ")\n",
					t.range_name, t.range_start, t.range_end);
			if (t.window)
				fprintf(s.out, "# window: %" PRIu64 " instructions\n", t.window);
		}
		char name[4200];
		snprintf(name, sizeof name, "%s/trace.bin", dir);
		struct elem_ctx x = { &s, im.img, im.n };
		rc = dpmu_etm_decode(name, t.trace, t.trace_len, &t.regs, im.img, im.n, on_elem, &x, err);
		if (!rc && ferror(s.out)) {
			*bad_input = false;
			rc = dpmu_err_set(err, DPMU_EIO, "cannot write the output");
		}
		if (!rc && !addresses) {
			char a[32];
			fprintf(s.out, "# %s instructions decoded", dpmu_an_thousands(s.insns, a, sizeof a));
			if (t.regs.configr & DPMU_TRCCONFIGR_CCI)
				fprintf(s.out, ", %s cycles counted", dpmu_an_thousands(s.cycles, a, sizeof a));
			fputc('\n', s.out);
		}
		if (s.cs_ok)
			cs_close(&s.cs);
		dpmu_an_syms_destroy(s.syms);
	}
	dpmu_tracedir_image_free(&im);
	dpmu_tracedir_free(&t);
	return rc;
}

int dpmu_cmd_trace_show(int argc, char **argv)
{
	bool addresses = false;
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--addresses") == 0) {
			addresses = true;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return DPMU_EXIT_OK;
		} else if (argv[i][0] == '-' || dir) {
			fprintf(stderr, "dynpmu trace show: unexpected argument '%s'\n", argv[i]);
			usage(stderr);
			return DPMU_EXIT_USAGE;
		} else {
			dir = argv[i];
		}
	}
	if (!dir) {
		usage(stderr);
		return DPMU_EXIT_USAGE;
	}
	struct dpmu_err err;
	dpmu_err_clear(&err);
	bool bad_input;
	if (show(dir, addresses, &err, &bad_input)) {
		fprintf(stderr, "dynpmu trace show: %s\n", dpmu_errmsg(&err));
		return bad_input ? DPMU_EXIT_USAGE : DPMU_EXIT_FAIL;
	}
	return DPMU_EXIT_OK;
}
