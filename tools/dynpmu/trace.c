/*
 * dynpmu trace record | show | convert
 *
 * record and show are the trace unit's (trace_record.c, trace_show.c).
 * convert converts an instruction trace between the text and the compact
 * binary form of docs/trace-format.md, streaming. Without --to, a text
 * trace becomes binary and a binary trace becomes text.
 */
#include <string.h>

#include "commands.h"
#include "dynpmu/frontend.h"

static void trace_usage(FILE *out)
{
	fprintf(out, "usage: dynpmu trace record [OPTIONS] -- PROGRAM [ARGS...]\n"
		     "       dynpmu trace show [--addresses] DIR\n"
		     "       dynpmu trace convert IN OUT [--to text|binary]\n\n"
		     "record: ETMv4 instruction trace of a program, started by a PMU event\n"
		     "        (docs/trace-unit.md); show: decode it with OpenCSD;\n"
		     "convert: an instruction trace between its text and binary forms\n"
		     "        (docs/trace-format.md).\n");
}

int dpmu_cmd_trace(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		trace_usage(stdout);
		return DPMU_EXIT_OK;
	}
	if (argc >= 2 && strcmp(argv[1], "record") == 0)
		return dpmu_cmd_trace_record(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "show") == 0)
		return dpmu_cmd_trace_show(argc - 1, argv + 1);
	if (argc < 2 || strcmp(argv[1], "convert") != 0) {
		if (argc >= 2)
			fprintf(stderr, "dynpmu trace: unknown subcommand '%s'\n", argv[1]);
		trace_usage(stderr);
		return DPMU_EXIT_USAGE;
	}
	const char *in = NULL, *out = NULL, *to = NULL;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--to") == 0) {
			if (i + 1 == argc) {
				fprintf(stderr, "dynpmu trace: --to needs text or binary\n");
				return DPMU_EXIT_USAGE;
			}
			to = argv[++i];
		} else if (!in) {
			in = argv[i];
		} else if (!out) {
			out = argv[i];
		} else {
			fprintf(stderr, "dynpmu trace: unexpected argument '%s'\n", argv[i]);
			return DPMU_EXIT_USAGE;
		}
	}
	if (!in || !out) {
		trace_usage(stderr);
		return DPMU_EXIT_USAGE;
	}
	struct dpmu_err err;
	dpmu_err_clear(&err);
	enum dpmu_trace_format fmt;
	if (!to) {
		struct dpmu_trace_reader *r;
		if (dpmu_trace_open(in, DPMU_TRACE_AUTO, &r, &err)) {
			fprintf(stderr, "dynpmu trace: %s\n", dpmu_errmsg(&err));
			return DPMU_EXIT_FAIL;
		}
		fmt = dpmu_trace_format_of(r) == DPMU_TRACE_TEXT ? DPMU_TRACE_BINARY : DPMU_TRACE_TEXT;
		dpmu_trace_close(r);
	} else if (strcmp(to, "text") == 0) {
		fmt = DPMU_TRACE_TEXT;
	} else if (strcmp(to, "binary") == 0) {
		fmt = DPMU_TRACE_BINARY;
	} else {
		fprintf(stderr, "dynpmu trace: --to '%s': expected text or binary\n", to);
		return DPMU_EXIT_USAGE;
	}
	if (dpmu_trace_convert(in, out, fmt, &err)) {
		fprintf(stderr, "dynpmu trace: %s\n", dpmu_errmsg(&err));
		return DPMU_EXIT_FAIL;
	}
	return DPMU_EXIT_OK;
}
