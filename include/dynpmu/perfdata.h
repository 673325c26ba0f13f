/*
 * Linux perf's perf.data (src/analysis/perfdata_write.c, perfdata_read.c;
 * docs/record.md): the samples of `dynpmu record` in the file `perf
 * report` and `perf script` read, and the reader `dynpmu report` uses.
 *
 * What a file holds here: one attribute per event (sample_type
 * IP | TID | TIME | CPU | PERIOD | IDENTIFIER, and CALLCHAIN with -g;
 * sample_id_all),
 * COMM, MMAP2, FORK and EXIT records and the samples, then the feature
 * sections arch, nrcpus, event_desc, cmdline, hostname, osrelease,
 * version and sample_time. The layouts are Linux's
 * (include/uapi/linux/perf_event.h, tools/perf/util/header.c), all
 * little-endian.
 */
#ifndef DYNPMU_PERFDATA_H
#define DYNPMU_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dynpmu/error.h"

/* perf_event_attr.type values this file uses */
#define DPMU_PERF_TYPE_HARDWARE 0u
#define DPMU_PERF_TYPE_RAW 4u

/* PERF_RECORD_* */
#define DPMU_PERF_RECORD_MMAP 1u
#define DPMU_PERF_RECORD_COMM 3u
#define DPMU_PERF_RECORD_EXIT 4u
#define DPMU_PERF_RECORD_FORK 7u
#define DPMU_PERF_RECORD_SAMPLE 9u
#define DPMU_PERF_RECORD_MMAP2 10u
#define DPMU_PERF_RECORD_FINISHED_ROUND 68u

/* A callchain's context marker: the addresses after it are user ones. */
#define DPMU_PERF_CONTEXT_USER ((uint64_t)-512)
#define DPMU_PERF_MAX_CHAIN 256u

/* One event of the file. */
struct dpmu_perf_event {
	char name[64];     /* as perf shows it: "cycles", "L1D_CACHE_REFILL" */
	uint32_t type;     /* DPMU_PERF_TYPE_HARDWARE (a generic name) or _RAW */
	uint64_t config;   /* PERF_COUNT_HW_* or the PMU event number */
	uint64_t period;   /* -c, or the frequency with freq */
	bool freq;
	unsigned precise;  /* perf's precise_ip: 3 = no skid, 0 = some */
};

struct dpmu_perf_desc {
	unsigned nevents;
	struct dpmu_perf_event ev[16];
	unsigned ncpus;
	bool callchain;             /* samples carry their call chain (-g) */
	const char *const *cmdline; /* argv of the command, NULL-terminated */
	const char *hostname, *osrelease;
};

struct dpmu_perf_writer;

/* Start FILE (created or truncated). Messages name the file. */
int dpmu_perf_create(const char *path, const struct dpmu_perf_desc *d,
		     struct dpmu_perf_writer **out, struct dpmu_err *err);
int dpmu_perf_comm(struct dpmu_perf_writer *w, uint32_t pid, uint32_t tid, const char *comm,
		   bool exec, uint64_t time_ns);
int dpmu_perf_mmap2(struct dpmu_perf_writer *w, uint32_t pid, uint32_t tid, uint64_t start,
		    uint64_t len, uint64_t pgoff, const char *path, uint64_t time_ns);
int dpmu_perf_fork(struct dpmu_perf_writer *w, uint32_t pid, uint32_t ppid, uint32_t tid,
		   uint32_t ptid, uint64_t time_ns);
int dpmu_perf_exit(struct dpmu_perf_writer *w, uint32_t pid, uint32_t ppid, uint32_t tid,
		   uint32_t ptid, uint64_t time_ns);
/* A sample of event `event` (index in the desc): chain holds the user
 * call chain below ip, innermost first (the context marker is added). */
int dpmu_perf_sample(struct dpmu_perf_writer *w, unsigned event, uint64_t ip, uint32_t pid,
		     uint32_t tid, uint64_t time_ns, uint32_t cpu, uint64_t period,
		     const uint64_t *chain, unsigned nchain);
/* Write the feature sections and the header, close; the writer is freed
 * even on an error. */
int dpmu_perf_close(struct dpmu_perf_writer *w, struct dpmu_err *err);
/* The first write error (0: none), its message in err. */
int dpmu_perf_error(const struct dpmu_perf_writer *w, struct dpmu_err *err);

/* ---- reading ----------------------------------------------------------------- */

struct dpmu_perf_sample {
	unsigned event;
	uint64_t ip, time, period;
	uint32_t pid, tid, cpu;
	uint32_t nchain;   /* user addresses below ip (context markers left out) */
	uint32_t chain;    /* their first index in the file's chains[] */
};

struct dpmu_perf_map {
	uint32_t pid;
	uint64_t start, len, pgoff;
	char *path;
};

struct dpmu_perf_comm {
	uint32_t pid, tid;
	char comm[32];
};

struct dpmu_perf_file {
	struct dpmu_perf_desc desc; /* names and kinds of the events (cmdline not kept) */
	char arch[32];
	struct dpmu_perf_sample *samples;
	size_t nsamples;
	uint64_t *chains;
	size_t nchains;
	struct dpmu_perf_map *maps;
	size_t nmaps;
	struct dpmu_perf_comm *comms;
	size_t ncomms;
};

/* Read a whole file written by perf or by dpmu_perf_create: a truncated,
 * corrupt or foreign file is DPMU_EINVAL (DPMU_EIO when it cannot be
 * read) with a message naming the file, the offset and what is wrong. */
int dpmu_perf_read(const char *path, struct dpmu_perf_file **out, struct dpmu_err *err);
/* The same from memory (the fuzz target); `name` names it in messages. */
int dpmu_perf_parse(const void *data, size_t size, const char *name, struct dpmu_perf_file **out,
		    struct dpmu_err *err);
void dpmu_perf_free(struct dpmu_perf_file *f);

#endif
