/*
 * Seed 002's writer table and "Quick decision table" as data. Two concerns
 * are kept apart exactly as the seed keeps them ("Two separate concerns,
 * often conflated"): cache visibility (who cleans, who invalidates) follows
 * the writer and the platform; load-load ordering follows how the reader
 * learned the data was ready. The rows spell out both for every case, so the
 * reason a caller gets is the one sentence that fits its case.
 */
#include "dynpmu/collect.h"

#define ANY (-1)

struct coh_row {
	int platform;   /* enum dpmu_coh_platform or ANY */
	int writer;     /* enum dpmu_coh_writer */
	int signal;     /* enum dpmu_coh_signal or ANY */
	int supported;
	unsigned wbits;
	unsigned rbits;
	const char *reason;
};

enum { NCD = DPMU_COH_PLATFORM_NONCOHERENT_DMA, CD = DPMU_COH_PLATFORM_COHERENT_DMA,
       SMP = DPMU_COH_PLATFORM_SMP };
enum { FLAG = DPMU_COH_SIGNAL_FLAG, MMIO = DPMU_COH_SIGNAL_MMIO };
#define CLEAN DPMU_COH_WRITER_CLEAN
#define INV DPMU_COH_READER_INVALIDATE
#define RMB DPMU_COH_READER_RMB

/* First matching row wins. */
static const struct coh_row coh_rows[] = {
	/* Writer table row "AICPU itself": own cache, program order. */
	{ANY, DPMU_COH_WRITER_SELF, ANY, 1, 0, 0,
	 "The reader wrote the bytes itself, so its own cache holds them and program order "
	 "orders them (seed 002 writer table: AICPU itself)."},

	/* Writer table row "Device writes to RDMA/URMA completion records": N/A on a2a3. */
	{NCD, DPMU_COH_WRITER_DEVICE_CQE, ANY, 0, 0, 0,
	 "Device-written completion records are not supported on a non-coherent-DMA platform "
	 "(seed 002 writer table: the RDMA/URMA backends exist only on a5)."},

	/* "The AICore -> AICPU path": the writer's dcci is load-bearing, the
	 * reader does not invalidate; the barrier depends on the flag. */
	{ANY, DPMU_COH_WRITER_ACCEL_CORE, FLAG, 1, CLEAN, 0,
	 "The accelerator core's cache is not coherent with memory, so it must clean (dcci) the "
	 "line and dsb before releasing the flag, while the reader shares the coherency domain, "
	 "needs no invalidate, and is ordered by its acquire load (seed 002 AICore to AICPU path, "
	 "decision step 4)."},
	{ANY, DPMU_COH_WRITER_ACCEL_CORE, MMIO, 1, CLEAN, RMB,
	 "The accelerator core must clean (dcci) the line and dsb before writing FIN, and the "
	 "reader needs no invalidate but owes a load-load barrier between the Device COND read "
	 "and the Normal slot reads, which ARM64 does not order without a dependency (seed 002 "
	 "AICore to AICPU path, historical pitfall)."},

	/* Decision steps 3 and 6: a coherent core publishes without a clean. */
	{ANY, DPMU_COH_WRITER_COHERENT_CORE, FLAG, 1, 0, 0,
	 "A core of the reader's coherency domain publishes through coherent caches, so the "
	 "writer's release store and the reader's acquire load are the whole hand-off (seed 002 "
	 "decision steps 3 and 6)."},
	{ANY, DPMU_COH_WRITER_COHERENT_CORE, MMIO, 1, 0, RMB,
	 "A coherent core needs no cache maintenance, but a flag read from Device memory does not "
	 "order the following Normal payload loads, so the reader owes a load-load barrier "
	 "(seed 002 decision step 5)."},

	/* "The host DMA -> AICPU path": a2a3 must invalidate, a5 does not. */
	{NCD, DPMU_COH_WRITER_HOST_DMA, FLAG, 1, 0, INV,
	 "Host DMA bypasses the reader's cache on this platform, so a line cached from an earlier "
	 "round survives the copy and the reader must invalidate the payload before reading it "
	 "(seed 002 host DMA to AICPU path)."},
	{NCD, DPMU_COH_WRITER_HOST_DMA, MMIO, 1, 0, INV | RMB,
	 "Host DMA bypasses the reader's cache, so the reader must invalidate the payload, and it "
	 "still owes an explicit load-load barrier after the Device flag because the invalidate's "
	 "embedded barrier is not part of a cross-platform protocol (seed 002 host DMA path, "
	 "decision step 5)."},
	{CD, DPMU_COH_WRITER_HOST_DMA, FLAG, 1, 0, 0,
	 "Host DMA is coherent with the reader on this platform, so no cache maintenance is owed "
	 "and the acquire load of the flag orders the payload (seed 002 decision step 2)."},
	{CD, DPMU_COH_WRITER_HOST_DMA, MMIO, 1, 0, RMB,
	 "Host DMA is coherent with the reader here, so no invalidate, but the Device flag read "
	 "does not order the Normal payload reads and a load-load barrier is owed (seed 002 "
	 "decision steps 2 and 5)."},
	{SMP, DPMU_COH_WRITER_HOST_DMA, FLAG, 1, 0, 0,
	 "DMA on a cache-coherent SMP host is snooped, so no cache maintenance is owed and the "
	 "acquire load of the flag orders the payload (seed 002 decision step 2, coherent case)."},
	{SMP, DPMU_COH_WRITER_HOST_DMA, MMIO, 1, 0, RMB,
	 "DMA on a coherent SMP host needs no cache maintenance, but a flag read from a Device "
	 "register owes a load-load barrier before the payload reads (seed 002 decision step 5)."},

	/* "The SDMA -> AICPU path": a2a3 conservative, a5 coherent. */
	{NCD, DPMU_COH_WRITER_DEVICE_DMA, FLAG, 1, 0, INV,
	 "Device DMA is not known to snoop the reader's cache on this platform, so the reader "
	 "conservatively invalidates the payload before reading it (seed 002 SDMA to AICPU path)."},
	{NCD, DPMU_COH_WRITER_DEVICE_DMA, MMIO, 1, 0, INV | RMB,
	 "Device DMA is not known to snoop the reader's cache, so the reader invalidates the "
	 "payload and also owes an explicit load-load barrier after the Device flag (seed 002 SDMA "
	 "path, decision step 5)."},
	{CD, DPMU_COH_WRITER_DEVICE_DMA, FLAG, 1, 0, 0,
	 "Device DMA is coherent with the reader on this platform, so no cache maintenance is owed "
	 "and the acquire load of the flag orders the payload (seed 002 SDMA path, a5)."},
	{CD, DPMU_COH_WRITER_DEVICE_DMA, MMIO, 1, 0, RMB,
	 "Device DMA is coherent here, so no invalidate, but the Device flag read owes a load-load "
	 "barrier before the payload reads (seed 002 SDMA path, decision step 5)."},
	{SMP, DPMU_COH_WRITER_DEVICE_DMA, FLAG, 1, 0, 0,
	 "Device DMA on a cache-coherent SMP host is snooped, so no cache maintenance is owed and "
	 "the acquire load orders the payload (seed 002 decision step 2, coherent case)."},
	{SMP, DPMU_COH_WRITER_DEVICE_DMA, MMIO, 1, 0, RMB,
	 "Device DMA on a coherent SMP host needs no cache maintenance, but the Device flag read "
	 "owes a load-load barrier before the payload reads (seed 002 decision step 5)."},

	/* Completion records where they are supported. */
	{ANY, DPMU_COH_WRITER_DEVICE_CQE, FLAG, 1, 0, 0,
	 "Device-written completion records are coherent with the reader, so no cache maintenance "
	 "is owed; the owner/sequence check and acquire ordering remain the protocol (seed 002 "
	 "SDMA path, completion records)."},
	{ANY, DPMU_COH_WRITER_DEVICE_CQE, MMIO, 1, 0, RMB,
	 "Device-written completion records need no cache maintenance, but a Device doorbell read "
	 "owes a load-load barrier before the record reads (seed 002 decision step 5)."},
};

static const char *const platform_names[] = {"noncoherent-dma", "coherent-dma", "smp"};
static const char *const writer_names[] = {"self", "coherent-core", "accel-core",
					   "host-dma", "device-dma", "device-cqe"};
static const char *const signal_names[] = {"flag", "mmio"};

const char *dpmu_coh_platform_name(enum dpmu_coh_platform p)
{
	return (unsigned)p < DPMU_COH_PLATFORM_COUNT ? platform_names[p] : "?";
}

const char *dpmu_coh_writer_name(enum dpmu_coh_writer w)
{
	return (unsigned)w < DPMU_COH_WRITER_COUNT ? writer_names[w] : "?";
}

const char *dpmu_coh_signal_name(enum dpmu_coh_signal s)
{
	return (unsigned)s < DPMU_COH_SIGNAL_COUNT ? signal_names[s] : "?";
}

int dpmu_coh_decide(enum dpmu_coh_platform platform, enum dpmu_coh_writer writer,
		    enum dpmu_coh_signal signal, struct dpmu_coh_rule *rule,
		    struct dpmu_err *err)
{
	if (!rule)
		return dpmu_err_set(err, DPMU_EINVAL, "dpmu_coh_decide: rule is NULL");
	rule->writer = 0;
	rule->reader = 0;
	rule->reason = "";
	if ((unsigned)platform >= DPMU_COH_PLATFORM_COUNT)
		return dpmu_err_set(err, DPMU_EINVAL, "dpmu_coh_decide: platform %d out of range",
				    (int)platform);
	if ((unsigned)writer >= DPMU_COH_WRITER_COUNT)
		return dpmu_err_set(err, DPMU_EINVAL, "dpmu_coh_decide: writer %d out of range",
				    (int)writer);
	if ((unsigned)signal >= DPMU_COH_SIGNAL_COUNT)
		return dpmu_err_set(err, DPMU_EINVAL, "dpmu_coh_decide: signal %d out of range",
				    (int)signal);
	for (size_t i = 0; i < sizeof coh_rows / sizeof coh_rows[0]; i++) {
		const struct coh_row *r = &coh_rows[i];
		if ((r->platform != ANY && r->platform != (int)platform) ||
		    r->writer != (int)writer || (r->signal != ANY && r->signal != (int)signal))
			continue;
		rule->reason = r->reason;
		if (!r->supported)
			return dpmu_err_set(err, DPMU_ENOTSUP, "%s writer on %s platform: %s",
					    writer_names[writer], platform_names[platform],
					    r->reason);
		rule->writer = r->wbits;
		rule->reader = r->rbits;
		return 0;
	}
	/* Unreachable while the table covers every writer; kept as a guard so a
	 * new enumerator without rows fails loudly instead of owing nothing. */
	return dpmu_err_set(err, DPMU_ENOTSUP, "no coherency rule for %s writer on %s via %s",
			    writer_names[writer], platform_names[platform], signal_names[signal]);
}
