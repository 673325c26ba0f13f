/*
 * The perf.data layouts shared by perfdata_write.c and perfdata_read.c:
 * Linux's include/uapi/linux/perf_event.h and tools/perf/util/header.c.
 */
#ifndef DPMU_ANALYSIS_PERFDATA_INTERNAL_H
#define DPMU_ANALYSIS_PERFDATA_INTERNAL_H

#include "dynpmu/perfdata.h"

#define DPMU_PERF_MAGIC 0x32454c4946524550ull /* "PERFILE2" */
#define DPMU_PERF_HEADER_SIZE 104u            /* struct perf_file_header */
/* struct perf_event_attr as PERF_ATTR_SIZE_VER7 has it (up to sig_data) */
#define DPMU_PERF_ATTR_SIZE 128u
#define DPMU_PERF_ATTR_SIZE_VER0 64u          /* the smallest perf accepts */
/* an attribute in the attrs section: the attr, then its ids' section */
#define DPMU_PERF_FILE_ATTR_SIZE (DPMU_PERF_ATTR_SIZE + 16u)

/* perf_event_attr flag bits (the bitfield at offset 40) */
#define DPMU_PERF_ATTR_DISABLED (1ull << 0)
#define DPMU_PERF_ATTR_INHERIT (1ull << 1)
#define DPMU_PERF_ATTR_EXCLUDE_KERNEL (1ull << 5)
#define DPMU_PERF_ATTR_EXCLUDE_HV (1ull << 6)
#define DPMU_PERF_ATTR_MMAP (1ull << 8)
#define DPMU_PERF_ATTR_COMM (1ull << 9)
#define DPMU_PERF_ATTR_FREQ (1ull << 10)
#define DPMU_PERF_ATTR_ENABLE_ON_EXEC (1ull << 12)
#define DPMU_PERF_ATTR_TASK (1ull << 13)
#define DPMU_PERF_ATTR_PRECISE_SHIFT 15 /* precise_ip, 2 bits: 3 = no skid */
#define DPMU_PERF_ATTR_SAMPLE_ID_ALL (1ull << 18)
#define DPMU_PERF_ATTR_MMAP2 (1ull << 23)
#define DPMU_PERF_ATTR_COMM_EXEC (1ull << 24)

/* PERF_SAMPLE_* */
#define DPMU_PERF_SAMPLE_IP (1ull << 0)
#define DPMU_PERF_SAMPLE_TID (1ull << 1)
#define DPMU_PERF_SAMPLE_TIME (1ull << 2)
#define DPMU_PERF_SAMPLE_ADDR (1ull << 3)
#define DPMU_PERF_SAMPLE_READ (1ull << 4)
#define DPMU_PERF_SAMPLE_CALLCHAIN (1ull << 5)
#define DPMU_PERF_SAMPLE_ID (1ull << 6)
#define DPMU_PERF_SAMPLE_CPU (1ull << 7)
#define DPMU_PERF_SAMPLE_PERIOD (1ull << 8)
#define DPMU_PERF_SAMPLE_STREAM_ID (1ull << 9)
#define DPMU_PERF_SAMPLE_RAW (1ull << 10)
#define DPMU_PERF_SAMPLE_IDENTIFIER (1ull << 16)
/* what the writer gives every sample; with -g, CALLCHAIN too */
#define DPMU_PERF_SAMPLE_TYPE                                                          \
	(DPMU_PERF_SAMPLE_IDENTIFIER | DPMU_PERF_SAMPLE_IP | DPMU_PERF_SAMPLE_TID |     \
	 DPMU_PERF_SAMPLE_TIME | DPMU_PERF_SAMPLE_CPU | DPMU_PERF_SAMPLE_PERIOD)

/* perf_event_header.misc */
#define DPMU_PERF_MISC_USER 2u
#define DPMU_PERF_MISC_COMM_EXEC (1u << 13)

/* HEADER_* feature bits */
#define DPMU_PERF_FEAT_HOSTNAME 3u
#define DPMU_PERF_FEAT_OSRELEASE 4u
#define DPMU_PERF_FEAT_VERSION 5u
#define DPMU_PERF_FEAT_ARCH 6u
#define DPMU_PERF_FEAT_NRCPUS 7u
#define DPMU_PERF_FEAT_CMDLINE 11u
#define DPMU_PERF_FEAT_EVENT_DESC 12u
#define DPMU_PERF_FEAT_SAMPLE_TIME 21u

/* The writer's sample ids: one per event (0 is no id). */
#define DPMU_PERF_ID(event) ((uint64_t)(event) + 1)

#endif
