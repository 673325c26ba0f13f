/*
 * Decoding ETMv4 instruction trace with OpenCSD (src/analysis/etm_decode.c):
 * the trace unit's register values configure OpenCSD's ETMv4 decoder, the
 * program image is its memory accessor, and the decoded instruction ranges
 * come back one by one.
 */
#ifndef DYNPMU_ETMDECODE_H
#define DYNPMU_ETMDECODE_H

#include <stddef.h>
#include <stdint.h>

#include "dynpmu/error.h"

/* The registers a decoder needs (IHI 0064: what a trace's consumer must
 * know of the trace unit that made it). */
struct dpmu_etm_decode_regs {
	uint32_t idr[14];         /* TRCIDR0-13 */
	uint32_t configr;         /* TRCCONFIGR */
	uint32_t traceidr;        /* TRCTRACEIDR */
};

/* A piece of the program image at its run-time address. */
struct dpmu_etm_image {
	uint64_t addr;
	const uint8_t *bytes;
	size_t len;
};

enum dpmu_etm_elem_kind {
	DPMU_ETM_ELEM_RANGE = 0,      /* instructions [start, end) executed */
	DPMU_ETM_ELEM_TRACE_ON = 1,   /* trace (re)started: a gap before */
	DPMU_ETM_ELEM_TIMESTAMP = 2,  /* value in start */
	DPMU_ETM_ELEM_NO_SYNC = 3,    /* decoder lost sync (start: trace offset) */
	DPMU_ETM_ELEM_NO_IMAGE = 4,   /* code not in the image at start */
	DPMU_ETM_ELEM_CYCLES = 5,     /* cycles (in start) up to the last P0 element; 0: unknown */
	DPMU_ETM_ELEM_EXCEPTION = 6,  /* an exception; start: its preferred return address,
	                                 end: its number (IHI 0064: 2 Call, 14 IRQ) */
	DPMU_ETM_ELEM_CONTEXT = 7,    /* the PE's context; start: the context ID */
};

struct dpmu_etm_elem {
	enum dpmu_etm_elem_kind kind;
	uint64_t start, end;
	uint32_t ninsns;          /* instructions in a range */
	uint64_t offset;          /* trace byte offset of the packet behind it */
};

/* Called for each element in trace order; non-zero stops the decode. */
typedef int (*dpmu_etm_elem_fn)(void *ctx, const struct dpmu_etm_elem *el);

/* Decode `len` bytes of raw trace (one trace unit's stream). A packet
 * OpenCSD refuses ends the decode with its message and the byte offset,
 * prefixed by `name`. */
int dpmu_etm_decode(const char *name, const uint8_t *trace, size_t len,
		    const struct dpmu_etm_decode_regs *regs, const struct dpmu_etm_image *image,
		    size_t nimage, dpmu_etm_elem_fn fn, void *ctx, struct dpmu_err *err);

#endif
