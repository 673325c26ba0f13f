/*
 * Replay: hand each run of instructions to the engine, ticking the caller
 * (the monitor reads its counters then) every so many instructions.
 */
#include <string.h>

#include "dynpmu/frontend.h"

int dpmu_trace_replay(struct dpmu_trace_reader *r, struct dpmu_uarch *u, uint64_t interval,
		      dpmu_trace_tick_fn tick, void *tick_ctx, struct dpmu_trace_summary *sum,
		      struct dpmu_err *err)
{
	struct dpmu_trace_summary local;
	if (!sum)
		sum = &local;
	memset(sum, 0, sizeof *sum);
	uint64_t next_tick = interval;
	for (;;) {
		unsigned core;
		const struct dpmu_insn *insns;
		long n = dpmu_trace_next(r, &core, &insns, err);
		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		dpmu_uarch_retire(u, core, insns, (size_t)n);
		dpmu_trace_summary_add(sum, core, (uint64_t)n);
		if (tick && interval && sum->insns >= next_tick) {
			int rc = tick(tick_ctx, err);
			if (rc)
				return rc;
			next_tick = sum->insns + interval;
		}
	}
	dpmu_uarch_flush(u);
	if (tick) {
		int rc = tick(tick_ctx, err);
		if (rc)
			return rc;
	}
	return 0;
}
