/*
 * Staging slot: one record on its own line, COND on the next, both written
 * only by the producer. Seed 002 "The AICore -> AICPU path":
 *
 *   writer: store fields; store seq last; [dcci + dsb]; release COND = seq
 *   reader: acquire COND; [rmb]; [invalidate]; read fields; check seq
 */
#include <string.h>

#include "dynpmu/collect.h"

void dpmu_slot_init(struct dpmu_slot *slot)
{
	memset(&slot->rec, 0, sizeof slot->rec);
	atomic_init(&slot->cond, 0);
}

void dpmu_slot_publish(struct dpmu_slot *slot, const struct dpmu_record *rec, uint64_t seq,
		       const struct dpmu_coh_rule *rule)
{
	struct dpmu_record *d = &slot->rec;
	d->time = rec->time;
	d->producer = rec->producer;
	d->kind = rec->kind;
	memcpy(d->val, rec->val, sizeof d->val);
	/* The sequence is the last field written: a reader that sees it knows the
	 * line it cleaned or fetched is this round's (seed 002: "store task_id
	 * (last)"). The signal fence keeps the compiler from hoisting it. */
	atomic_signal_fence(memory_order_release);
	d->seq = seq;
	if (rule && (rule->writer & DPMU_COH_WRITER_CLEAN)) {
		/* Push the whole line out, and commit it before COND (seed 002:
		 * "dcci slot; dsb (commit dcci before FIN)"). */
		dpmu_cache_flush_range(d, sizeof *d);
		dpmu_wmb();
	}
	atomic_store_explicit(&slot->cond, seq, memory_order_release);
}

int dpmu_slot_read(struct dpmu_slot *slot, uint64_t seq, const struct dpmu_coh_rule *rule,
		   struct dpmu_record *out, uint64_t *mismatched)
{
	if (atomic_load_explicit(&slot->cond, memory_order_acquire) != seq)
		return DPMU_EBUSY;
	unsigned owed = rule ? rule->reader : 0;
	/* The barrier is explicit, never left to a cache call's side effect
	 * (seed 002 "Historical pitfall"). */
	if (owed & DPMU_COH_READER_RMB)
		dpmu_rmb();
	if (owed & DPMU_COH_READER_INVALIDATE)
		dpmu_cache_invalidate_range(&slot->rec, sizeof slot->rec);
	*out = slot->rec;
	if (out->seq != seq) {
		if (mismatched)
			++*mismatched;
		return DPMU_ERANGE;
	}
	return 0;
}
