/*
 * Trace front end (src/frontend/trace*.c): read a trace of retired
 * instructions, in the text or the compact binary form of
 * docs/trace-format.md, and replay it through the microarchitectural engine.
 *
 * Streaming: a reader holds one block of input and one array of
 * instructions, never the whole trace. dpmu_trace_next hands out runs of
 * instructions that all retired on one core, ready for dpmu_uarch_retire.
 *
 * Every malformed input is reported as "FILE:LINE: what is wrong" (text) or
 * "FILE: byte OFFSET: what is wrong" (binary).
 */
#ifndef DYNPMU_FRONTEND_H
#define DYNPMU_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dynpmu/arch.h"
#include "dynpmu/error.h"
#include "dynpmu/uarch.h"

enum dpmu_trace_format {
	DPMU_TRACE_AUTO = 0,   /* reader: detect from the first bytes */
	DPMU_TRACE_TEXT = 1,
	DPMU_TRACE_BINARY = 2,
};

/* The binary form starts with these 8 bytes (docs/trace-format.md). */
#define DPMU_TRACE_MAGIC "DPMUTRC1"
#define DPMU_TRACE_MAGIC_LEN 8
/* Binary record tags: bit 7 clear is an instruction (bits [1:0] kind,
 * bit 2 taken, bits [5:3] branch kind, bit 6 PC = previous PC + 4). */
#define DPMU_TRACE_TAG_SEQ 0x40
#define DPMU_TRACE_TAG_CPU 0x80

/* The text form's branch kinds, indexed by enum dpmu_branch_kind
 * (docs/trace-format.md "Records"): one table for reader and writer. */
extern const char *const dpmu_trace_br_kinds[DPMU_BR_IND + 1];

/* Limits of the format (docs/trace-format.md "Limits"). */
#define DPMU_TRACE_LINE_MAX 1024     /* bytes in a text line, newline excluded */
#define DPMU_TRACE_SIZE_MAX 4096     /* bytes one load/store may access */
#define DPMU_TRACE_CORE_MAX (DPMU_MAX_CORES - 1)

struct dpmu_trace_reader;

/* Open `path` for reading (format detected unless told). */
int dpmu_trace_open(const char *path, enum dpmu_trace_format format,
		    struct dpmu_trace_reader **out, struct dpmu_err *err);
/* Read from an open stream (not closed by the reader); `name` is used in
 * messages. */
int dpmu_trace_open_stream(FILE *f, const char *name, enum dpmu_trace_format format,
			   struct dpmu_trace_reader **out, struct dpmu_err *err);
void dpmu_trace_close(struct dpmu_trace_reader *r);

/* Refuse `cpu N` with N >= ncores (the profile's core count), so the
 * message can name the line. Default: DPMU_TRACE_CORE_MAX + 1. */
void dpmu_trace_set_ncores(struct dpmu_trace_reader *r, unsigned ncores);
enum dpmu_trace_format dpmu_trace_format_of(const struct dpmu_trace_reader *r);

/* The next run of instructions, all retired in order on *core. Returns the
 * number of instructions (> 0), 0 at the end of the trace, or a negative
 * DPMU_E* code with the message in err. *insns points into the reader and
 * stays valid until the next call. */
long dpmu_trace_next(struct dpmu_trace_reader *r, unsigned *core,
		     const struct dpmu_insn **insns, struct dpmu_err *err);

/* Check one record against the format's rules (docs/trace-format.md
 * "Records"): kinds, branch kinds, T/N, sizes, 4-byte aligned PC. Returns
 * NULL if it is valid, else what is wrong (a constant string). */
const char *dpmu_trace_check_insn(const struct dpmu_insn *insn);

/* Position for messages: line of the last record read (text), byte offset
 * of the next record (binary). */
uint64_t dpmu_trace_position(const struct dpmu_trace_reader *r);

/* ---- writing --------------------------------------------------------------- */

struct dpmu_trace_writer;

int dpmu_trace_writer_open(const char *path, enum dpmu_trace_format format,
			   struct dpmu_trace_writer **out, struct dpmu_err *err);
int dpmu_trace_writer_open_stream(FILE *f, const char *name, enum dpmu_trace_format format,
				  struct dpmu_trace_writer **out, struct dpmu_err *err);
int dpmu_trace_write(struct dpmu_trace_writer *w, unsigned core, const struct dpmu_insn *insns,
		     size_t n, struct dpmu_err *err);
/* Flush and close; reports a write error that happened on the way. */
int dpmu_trace_writer_close(struct dpmu_trace_writer *w, struct dpmu_err *err);

/* Copy a trace from one form to the other (or the same), streaming. */
int dpmu_trace_convert(const char *in_path, const char *out_path, enum dpmu_trace_format to,
		       struct dpmu_err *err);

/* ---- whole-trace passes ---------------------------------------------------- */

struct dpmu_trace_summary {
	uint64_t insns;                      /* instructions in the trace */
	uint64_t per_core[DPMU_MAX_CORES];   /* instructions per core */
	uint64_t cores_used;                 /* bit n: core n retired at least one */
};

void dpmu_trace_summary_add(struct dpmu_trace_summary *sum, unsigned core, uint64_t n);

/* Read the trace to the end without replaying it: validates every record
 * and finds the cores it uses. */
int dpmu_trace_scan(struct dpmu_trace_reader *r, struct dpmu_trace_summary *sum,
		    struct dpmu_err *err);

/* Called by dpmu_trace_replay about every `interval` instructions (and
 * once at the end); a non-zero return stops the replay with that code. */
typedef int (*dpmu_trace_tick_fn)(void *ctx, struct dpmu_err *err);

/* Replay the rest of the trace through the engine, run by run. */
int dpmu_trace_replay(struct dpmu_trace_reader *r, struct dpmu_uarch *u,
		      uint64_t interval, dpmu_trace_tick_fn tick, void *tick_ctx,
		      struct dpmu_trace_summary *sum, struct dpmu_err *err);

#endif
