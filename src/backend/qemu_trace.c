/*
 * The trace units of a program's run (dynpmu trace record): where their
 * trace goes and what they have done. The tool programs them through the
 * driver like any monitor; this is the part of the system outside the
 * trace unit that a CoreSight sink and its firmware would be.
 */
#include "backend/qemu_internal.h"

int dpmu_qemu_trace_attach(struct dpmu_backend *b, unsigned cpu, struct dpmu_etm_sink *sink,
			   struct dpmu_err *err)
{
	struct qemu_be *q = (struct qemu_be *)b;
	return dpmu_model_etm_attach(q->model, cpu, sink, err);
}

void dpmu_qemu_trace_seen(struct dpmu_backend *b, unsigned cpu, dpmu_etm_seen_fn fn, void *ctx)
{
	struct qemu_be *q = (struct qemu_be *)b;
	dpmu_model_etm_seen(q->model, cpu, fn, ctx);
}

bool dpmu_qemu_trace_mark(struct dpmu_backend *b, unsigned cpu, uint64_t time_ns)
{
	struct qemu_be *q = (struct qemu_be *)b;
	return dpmu_model_etm_timestamp(q->model, cpu, time_ns);
}

int dpmu_qemu_trace_status(const struct dpmu_backend *b, unsigned cpu,
			   struct dpmu_etm_status *out)
{
	const struct qemu_be *q = (const struct qemu_be *)b;
	return dpmu_model_etm_status(q->model, cpu, out);
}

/* vCPU i runs on core c from now: its trace unit's context ID is the
 * thread's ID, as Linux sets CONTEXTIDR_EL1 (the vCPU's number while the
 * plugin has not told it). */
void dpmu_qemu_trace_switch(struct qemu_be *q, unsigned c, unsigned i)
{
	uint32_t tid = atomic_load_explicit(&q->shm->tid[i], memory_order_relaxed);
	dpmu_model_etm_context(q->model, c, tid ? tid : 0x80000000u | i);
}

void dpmu_qemu_trace_context(struct dpmu_backend *b, unsigned cpu)
{
	struct qemu_be *q = (struct qemu_be *)b;
	if (cpu < dpmu_profile_ncores(q->profile) && q->core_vcpu[cpu] >= 0)
		dpmu_qemu_trace_switch(q, cpu, (unsigned)q->core_vcpu[cpu]);
}
