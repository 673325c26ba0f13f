/*
 * A trace directory (dynpmu trace record -o DIR; docs/trace-unit.md):
 * trace.bin, one trace unit's raw ETMv4 trace as its sink held it, and
 * meta.json, what a decoder and a reader need besides: the trace unit's
 * ID and configuration registers, the sink's state, the trigger, the
 * window, the program's mappings and the PMU snapshots taken while the
 * window was open (src/analysis/tracedir.c).
 */
#ifndef DYNPMU_TRACEDIR_H
#define DYNPMU_TRACEDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dynpmu/error.h"
#include "dynpmu/etmdecode.h"

#define DPMU_TRACEDIR_VERSION 1
#define DPMU_TRACEDIR_MAX_MAPS 64
#define DPMU_TRACEDIR_MAX_COUNTS 16     /* events per snapshot */
#define DPMU_TRACEDIR_MAX_SNAPSHOTS 1000000
#define DPMU_TRACEDIR_NONE UINT64_MAX   /* an index that is not there */

struct dpmu_tracedir_map {
	uint64_t start, len, pgoff;
	char *path;
};

struct dpmu_tracedir_snapshot {
	uint64_t time_ns;                 /* the trace's timestamp at it */
	unsigned n;
	char name[DPMU_TRACEDIR_MAX_COUNTS][48];
	uint64_t value[DPMU_TRACEDIR_MAX_COUNTS];
};

struct dpmu_tracedir {
	unsigned cpu;
	char core_type[48];
	struct dpmu_etm_decode_regs regs;
	uint64_t sink_size, sink_written;
	bool wrapped;                     /* the sink overwrote its oldest bytes */
	char trigger_event[48];           /* "" : no trigger */
	uint64_t trigger_count;           /* trace once the event passed this count */
	uint64_t window;                  /* instructions traced at most (0: no bound) */
	char range_name[128];             /* "" : no address range */
	uint64_t range_start, range_end;  /* [start, end) */
	/* The trace unit's count of what it was given (the core's retired
	 * instructions while enabled) and traced, by index among those. */
	uint64_t given, traced, first, last, event_at;
	char *program;
	struct dpmu_tracedir_map maps[DPMU_TRACEDIR_MAX_MAPS];
	unsigned nmaps;
	struct dpmu_tracedir_snapshot *snap;
	size_t nsnap;
	uint8_t *trace;
	size_t trace_len;
};

/* Write DIR/meta.json and DIR/trace.bin (DIR created if missing). */
int dpmu_tracedir_write(const char *dir, const struct dpmu_tracedir *t, struct dpmu_err *err);
/* Read a directory. A missing file, bad JSON, a missing or ill-typed
 * field, or a trace.bin whose size is not the sink's fill is DPMU_EINVAL
 * (DPMU_EIO when unreadable) naming the file and the field. */
int dpmu_tracedir_read(const char *dir, struct dpmu_tracedir *t, struct dpmu_err *err);
/* The same from memory (the fuzz target): meta's bytes and the trace's;
 * `name` names them in messages. */
int dpmu_tracedir_parse(const char *name, const char *meta, size_t meta_len, const uint8_t *trace,
			size_t trace_len, struct dpmu_tracedir *t, struct dpmu_err *err);
void dpmu_tracedir_free(struct dpmu_tracedir *t);

/* The decoder's memory image of a directory: each mapping's bytes from its
 * file (src/analysis/trace_image.c). A file that cannot be opened is
 * DPMU_EINVAL naming it. */
struct dpmu_tracedir_image {
	struct dpmu_etm_image img[DPMU_TRACEDIR_MAX_MAPS];
	uint8_t *buf[DPMU_TRACEDIR_MAX_MAPS];
	size_t n;
};
int dpmu_tracedir_image(const struct dpmu_tracedir *t, struct dpmu_tracedir_image *out,
			struct dpmu_err *err);
void dpmu_tracedir_image_free(struct dpmu_tracedir_image *im);

#endif
