/*
 * The collector: hands 64-byte records from the threads (or cores) that
 * produce them to the one thread that collects them, following the
 * cache-coherency rulebook of seed 002. docs/collector.md explains the
 * protocol; this header is the whole public API.
 *
 *   platform layer   dpmu_rmb / dpmu_wmb / dpmu_mb, cache clean and invalidate
 *   decision table   dpmu_coh_decide: what writer and reader owe for a hand-off
 *   staging slot     dpmu_slot_*: one record, sequence last, flag by release
 *   ring             dpmu_ring_*: single-producer single-consumer, lossless or lossy
 *   collector        dpmu_collect_*: one ring per producer, buffers, drain thread
 *                    to a sink, retirement by the nonce handshake
 */
#ifndef DYNPMU_COLLECT_H
#define DYNPMU_COLLECT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dynpmu/error.h"

/* One record is one cache line (seed 002: the PMU staging slot is 64 B). */
#define DPMU_COLLECT_LINE 64

/* ---- Platform layer (src/collect/platform/<arch>.c) ------------------- */

/* Load-load, store-store and full barriers: aarch64 dsb ld / dsb st / dsb sy,
 * x86-64 lfence / sfence / mfence. They are for the places seed 002 owes a
 * barrier that acquire/release does not give (a Device-memory flag read
 * before Normal-memory payload reads); ordinary hand-offs use C11 atomics. */
void dpmu_rmb(void);
void dpmu_wmb(void);
void dpmu_mb(void);

/* Clean (dc cvac) or clean+invalidate (dc civac) every data-cache line that
 * [addr, addr+len) touches, then dsb sy; isb. A zero-length range returns at
 * once. On x86-64 and the simulator platform they perform no cache operation
 * and no barrier (seed 002 "Cache primitives": a cache call supplies no
 * ordering; callers order with dpmu_rmb/dpmu_wmb or acquire/release).
 * Return the number of lines maintained (0 where no operation is done). */
size_t dpmu_cache_flush_range(const void *addr, size_t len);
size_t dpmu_cache_invalidate_range(const void *addr, size_t len);
/* Smallest data-cache line in bytes (aarch64: CTR_EL0.DminLine). */
size_t dpmu_cache_line_size(void);
/* "aarch64", "x86_64" or "sim". */
const char *dpmu_collect_platform(void);

/* ---- Decision table (seed 002 "Quick decision table", writer table) ---- */

enum dpmu_coh_platform {
	DPMU_COH_PLATFORM_NONCOHERENT_DMA, /* host and device DMA bypass the reader's cache (a2a3) */
	DPMU_COH_PLATFORM_COHERENT_DMA,    /* DMA and HBM coherent with the reader (a5) */
	DPMU_COH_PLATFORM_SMP,             /* a plain cache-coherent SMP host */
	DPMU_COH_PLATFORM_COUNT
};

enum dpmu_coh_writer {
	DPMU_COH_WRITER_SELF,         /* the reader itself */
	DPMU_COH_WRITER_COHERENT_CORE,/* another core of the reader's coherency domain */
	DPMU_COH_WRITER_ACCEL_CORE,   /* a core whose cache is not coherent with memory (AICore) */
	DPMU_COH_WRITER_HOST_DMA,     /* host copy into device memory (rtMemcpy) */
	DPMU_COH_WRITER_DEVICE_DMA,   /* device-side DMA engine (SDMA) */
	DPMU_COH_WRITER_DEVICE_CQE,   /* device-written completion records (RDMA/URMA CQEs) */
	DPMU_COH_WRITER_COUNT
};

enum dpmu_coh_signal {
	DPMU_COH_SIGNAL_FLAG, /* a flag in Normal memory, read with acquire */
	DPMU_COH_SIGNAL_MMIO, /* a Device-nGnRE register (COND, mailbox) */
	DPMU_COH_SIGNAL_COUNT
};

/* What the writer owes before it signals. */
#define DPMU_COH_WRITER_CLEAN      0x1u /* clean its lines (dcci / dc cvac) and dsb before the flag */
/* What the reader owes. */
#define DPMU_COH_READER_INVALIDATE 0x1u /* invalidate the payload before reading it */
#define DPMU_COH_READER_RMB        0x2u /* load-load barrier between the flag and the payload */

struct dpmu_coh_rule {
	unsigned writer;    /* DPMU_COH_WRITER_* bits; 0: nothing */
	unsigned reader;    /* DPMU_COH_READER_* bits; 0: nothing beyond acquire */
	const char *reason; /* one sentence, naming the seed 002 rule */
};

/* Fill *rule for a hand-off. Returns 0, DPMU_EINVAL for an out-of-range
 * enumerator, or DPMU_ENOTSUP for a combination the platform does not support
 * (completion records on a2a3); rule->reason then says why. */
int dpmu_coh_decide(enum dpmu_coh_platform platform, enum dpmu_coh_writer writer,
		    enum dpmu_coh_signal signal, struct dpmu_coh_rule *rule,
		    struct dpmu_err *err);
const char *dpmu_coh_platform_name(enum dpmu_coh_platform platform);
const char *dpmu_coh_writer_name(enum dpmu_coh_writer writer);
const char *dpmu_coh_signal_name(enum dpmu_coh_signal signal);

/* ---- Records and staging slots ---------------------------------------- */

/* The unit the collector moves. seq is written last and checked by the
 * reader: in a ring it is the record's 1-based position in its producer's
 * stream, in a staging slot the sequence (task id) the reader expects. */
struct dpmu_record {
	uint64_t time;
	uint32_t producer;
	uint32_t kind;
	uint64_t val[5];
	uint64_t seq;
};
_Static_assert(sizeof(struct dpmu_record) == DPMU_COLLECT_LINE, "a record is one cache line");

/* Reserved COND values: the retirement nonces (seed 002 "Unified COND
 * nonce"). Sequences never take them. */
#define DPMU_COLLECT_NONCE_A 0xfffffff1u
#define DPMU_COLLECT_NONCE_B 0xfffffff2u
#define DPMU_COLLECT_SEQ_MAX 0xfffffff0u

/* A staging slot: the record on one line, the COND word on the next. The
 * producer is the only writer of both lines (seed 002 "dcci is whole-cache-
 * line": two writers never share a line). */
struct dpmu_slot {
	_Alignas(DPMU_COLLECT_LINE) struct dpmu_record rec;
	_Alignas(DPMU_COLLECT_LINE) _Atomic uint64_t cond;
};

void dpmu_slot_init(struct dpmu_slot *slot);
/* Producer: copy *rec, store seq last, clean if the rule says so, then
 * release-store seq into COND. seq in 1..DPMU_COLLECT_SEQ_MAX. */
void dpmu_slot_publish(struct dpmu_slot *slot, const struct dpmu_record *rec, uint64_t seq,
		       const struct dpmu_coh_rule *rule);
/* Reader: acquire-load COND; if it is not seq return DPMU_EBUSY. Otherwise
 * issue what the rule owes (dpmu_rmb, invalidate), copy the record, and check
 * its seq: 0 on a match, DPMU_ERANGE (and ++*mismatched) if the line held a
 * different sequence (a stale or torn line). mismatched may be NULL. */
int dpmu_slot_read(struct dpmu_slot *slot, uint64_t seq, const struct dpmu_coh_rule *rule,
		   struct dpmu_record *out, uint64_t *mismatched);

/* ---- Rings ------------------------------------------------------------ */

enum dpmu_ring_mode {
	DPMU_RING_LOSSLESS, /* the producer waits while the ring is full (simulation streams) */
	DPMU_RING_LOSSY,    /* the producer drops and counts (monitoring: never block) */
};

/* Per-producer accounting. At rest (producer retired, ring drained)
 * collected + dropped + mismatched == produced; in_flight is what is
 * published but not yet collected. */
struct dpmu_ring_stats {
	uint64_t produced;
	uint64_t collected;
	uint64_t dropped;
	uint64_t mismatched;
	uint64_t in_flight;
};

struct dpmu_ring;

/* slots: a power of two in 2..2^30; batch: records per publication (1..slots);
 * rule: what the hand-off owes (NULL: nothing beyond release/acquire). */
int dpmu_ring_create(struct dpmu_ring **out, uint32_t producer, size_t slots, unsigned batch,
		     enum dpmu_ring_mode mode, const struct dpmu_coh_rule *rule,
		     struct dpmu_err *err);
void dpmu_ring_destroy(struct dpmu_ring *ring);

/* A ring in caller-supplied memory, e.g. shared memory that the producer's
 * process maps at another address: the slots follow the header inside
 * [mem, mem + dpmu_ring_bytes_in(slots)) and the ring holds no pointer, so
 * each process uses it through its own mapping. mem must be 64-byte
 * aligned. The caller owns the memory: do not pass the ring to
 * dpmu_ring_destroy. The rule's reason string is the only pointer kept
 * (for messages in the process that created the ring). */
size_t dpmu_ring_bytes_in(size_t slots);
int dpmu_ring_init_in(void *mem, size_t bytes, uint32_t producer, size_t slots, unsigned batch,
		      enum dpmu_ring_mode mode, const struct dpmu_coh_rule *rule,
		      struct dpmu_ring **out, struct dpmu_err *err);
/* The same for memory whose slot bytes are already zero, as a fresh memfd or
 * anonymous mapping's are: only the header is written, so the slots' pages
 * are not touched until the producer fills them. Memory that held anything
 * else, a ring before among it, needs dpmu_ring_init_in: a slot holding the
 * stamp of the position it will take would defeat the consumer's check
 * that the record it reads is the one published. */
int dpmu_ring_init_in_zeroed(void *mem, size_t bytes, uint32_t producer, size_t slots,
			     unsigned batch, enum dpmu_ring_mode mode,
			     const struct dpmu_coh_rule *rule, struct dpmu_ring **out,
			     struct dpmu_err *err);

/* Producer side (one thread). push stamps rec->producer and seq. Returns 0;
 * DPMU_EBUSY when a lossy ring dropped the record; DPMU_ESTATE once the
 * collector asked this producer to retire (the request has been answered and
 * the record was not taken). */
int dpmu_ring_push(struct dpmu_ring *ring, const struct dpmu_record *rec);
/* The same without the copy: claim the next slot (same returns as push),
 * fill time, kind and val in place, then commit, which stamps producer and
 * seq last. Nothing else may happen on the ring between the two. */
int dpmu_ring_claim(struct dpmu_ring *ring, struct dpmu_record **slot);
void dpmu_ring_commit(struct dpmu_ring *ring);
/* Publish what push has staged. Returns 0 or DPMU_ESTATE as push. */
int dpmu_ring_flush(struct dpmu_ring *ring);
/* Answer a pending retirement request without pushing; an idle producer
 * calls it periodically. Returns 1 once retired, else 0. */
int dpmu_ring_poll(struct dpmu_ring *ring);

/* Consumer side (one thread). Copy up to max records out; records whose
 * sequence does not match their slot are counted as mismatched and skipped. */
size_t dpmu_ring_pop(struct dpmu_ring *ring, struct dpmu_record *out, size_t max);
/* The same without the copy: peek gives the next published records in the
 * ring's own slots, up to max, contiguous (a run stops at the ring's end and
 * before a mismatched record; a mismatched record at the front is counted and
 * passed by, as pop does), and returns how many; *recs points at the first.
 * The slots stay the consumer's until release(n) hands the first n of them
 * (n <= what peek returned; more is taken as all that was published) back
 * to the producer and counts them collected.
 * Nothing else may happen on the consumer side between the two. */
size_t dpmu_ring_peek(struct dpmu_ring *ring, const struct dpmu_record **recs, size_t max);
void dpmu_ring_release(struct dpmu_ring *ring, size_t n);
/* Hand every published position back to the producer unread and count it
 * collected; returns how many. For a consumer that measures what the
 * transfer costs the producer: the slots' lines stay in the producer's
 * cache. No stamp is read, so a stale line (which peek and pop count
 * mismatched) counts collected here: use it only where the records do not
 * matter. */
size_t dpmu_ring_discard(struct dpmu_ring *ring);

/* Consumer side: the retirement handshake (seed 002 "Unified COND nonce").
 * request reads the producer's retained COND, picks the nonce that differs
 * from it, stores the request and returns the nonce; acked is true only when
 * COND holds that nonce; reset clears the request before a new run. */
uint64_t dpmu_ring_retire_request(struct dpmu_ring *ring);
int dpmu_ring_retire_acked(struct dpmu_ring *ring, uint64_t nonce);
void dpmu_ring_retire_reset(struct dpmu_ring *ring);
/* The producer's COND word as last published. */
uint64_t dpmu_ring_cond(struct dpmu_ring *ring);

/* Any thread. */
void dpmu_ring_stats(struct dpmu_ring *ring, struct dpmu_ring_stats *st);

/* ---- Collector -------------------------------------------------------- */

enum dpmu_collect_sink {
	DPMU_COLLECT_SINK_MEMORY,   /* kept in memory: dpmu_collect_records */
	DPMU_COLLECT_SINK_FILE,     /* raw 64-byte records written to path (truncated at create) */
	DPMU_COLLECT_SINK_CALLBACK, /* write(ctx, recs, n); non-zero return is an error */
};

struct dpmu_collect_config {
	unsigned producers;         /* 1..DPMU_COLLECT_MAX_PRODUCERS */
	size_t ring_slots;          /* per producer, power of two */
	unsigned batch;             /* records per publication */
	enum dpmu_ring_mode mode;
	size_t buffer_records;      /* records per sink buffer */
	unsigned buffers;           /* buffers in the free-buffer queue, >= 2 */
	enum dpmu_coh_platform platform;
	enum dpmu_coh_writer writer;
	enum dpmu_coh_signal signal;
	enum dpmu_collect_sink sink;
	const char *path;           /* DPMU_COLLECT_SINK_FILE */
	int (*write)(void *ctx, const struct dpmu_record *recs, size_t n);
	void *ctx;
	int collector_cpu;          /* pin the collector thread to this CPU; -1: do not pin */
};

#define DPMU_COLLECT_MAX_PRODUCERS 1024

/* Outcome of dpmu_collect_stop. */
struct dpmu_collect_report {
	unsigned retired;             /* producers that echoed this run's nonce */
	unsigned silent;              /* producers that did not answer by the deadline */
	struct dpmu_ring_stats total; /* summed over producers */
};

struct dpmu_collector;

/* Defaults: 1 producer, 4096 slots, batch 32, lossless, coherent SMP host,
 * coherent-core writer, Normal-memory flag, memory sink, collector not pinned. */
void dpmu_collect_config_default(struct dpmu_collect_config *cfg);
int dpmu_collect_create(struct dpmu_collector **out, const struct dpmu_collect_config *cfg,
			struct dpmu_err *err);
/* Stops a running collector without waiting for answers; call it once no
 * producer thread uses the rings any more. */
void dpmu_collect_destroy(struct dpmu_collector *c);
/* Producer i's ring; the producer thread pushes into it. */
struct dpmu_ring *dpmu_collect_ring(struct dpmu_collector *c, unsigned i);
/* Clear the retirement requests and start the collector and drain threads.
 * DPMU_ESTATE while a producer left silent by the last stop has not been
 * recovered: a late answer to the old request could otherwise be taken for
 * the new one (seed 002: reuse needs the previous generation completed or
 * recovered). */
int dpmu_collect_start(struct dpmu_collector *c);
/* The caller declares silent producer i gone for good (its thread has ended),
 * so its ring may be used again. */
int dpmu_collect_recover(struct dpmu_collector *c, unsigned i);
/* Retire every producer within one shared deadline (timeout_ns from now),
 * collect what they published, write it all to the sink and stop the
 * threads. Returns 0; DPMU_ETIMEDOUT if a producer did not answer (it is
 * reported in *rep and by dpmu_collect_silent, not waited on); DPMU_EIO if
 * the sink failed. rep may be NULL. */
int dpmu_collect_stop(struct dpmu_collector *c, uint64_t timeout_ns,
		      struct dpmu_collect_report *rep);
/* 1 if producer i did not answer the last stop's request. */
int dpmu_collect_silent(const struct dpmu_collector *c, unsigned i);
int dpmu_collect_stats(struct dpmu_collector *c, unsigned i, struct dpmu_ring_stats *st);
/* Memory sink: every record written so far, in collection order. */
const struct dpmu_record *dpmu_collect_records(const struct dpmu_collector *c, size_t *n);
const char *dpmu_collect_errmsg(const struct dpmu_collector *c);

#endif
