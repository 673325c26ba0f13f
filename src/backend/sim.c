/*
 * The simulation backend: a profile's model, the microarchitectural engine
 * on it, a trace replayed through the engine, and the driver over the
 * regio adapter onto the model. The adapter's before_access hook flushes
 * the engine, so every register the monitor reads already holds every event
 * of the instructions replayed so far (regio_model.h).
 *
 * The trace runs at EL0 Non-secure, as a user program under perf stat; the
 * monitor's accesses (start, each tick, stop) run at EL1, as a kernel
 * driver's would (simulated.c).
 */
#include <stdlib.h>
#include <string.h>

#include "dynpmu/backend.h"
#include "dynpmu/frontend.h"
#include "dynpmu/model.h"
#include "dynpmu/regio_model.h"
#include "dynpmu/uarch.h"

struct sim {
	struct dpmu_backend b;          /* first: the monitor's view */
	struct dpmu_profile *profile;
	struct dpmu_model *model;
	struct dpmu_uarch *uarch;
	struct dpmu_regio_model rm;
	char trace[4096];
	struct dpmu_trace_summary scan; /* from the validating pass */
	struct dpmu_trace_summary ran;  /* from the replay */
	/* the monitor's tick while a run is in progress */
	dpmu_backend_tick_fn tick;
	void *tick_ctx;
};

static void flush_engine(void *ctx)
{
	dpmu_uarch_flush(ctx);
}

/* Every measured core at `el`, after delivering what the engine holds. */
static int set_el(struct sim *s, unsigned el, struct dpmu_err *err)
{
	return dpmu_backend_set_el(s->model, s->uarch, s->b.cores, el, err);
}

static uint64_t sim_time_ns(struct dpmu_backend *b)
{
	struct sim *s = (struct sim *)b;
	return dpmu_uarch_time_ns(s->uarch);
}

static int sim_tick(void *ctx, struct dpmu_err *err)
{
	struct sim *s = ctx;
	return dpmu_backend_tick_el1(s->model, s->uarch, s->b.cores, s->tick, s->tick_ctx, err);
}

/* The end of a replay, after success or an error: the cores go back to EL1
 * for the monitor's last accesses, the trace is closed, and the first error
 * is the one reported. */
static int end_run(struct sim *s, struct dpmu_trace_reader *r, int rc, struct dpmu_err *err)
{
	rc = dpmu_backend_end_el1(s->model, s->uarch, s->b.cores, rc, err);
	dpmu_trace_close(r);
	s->tick = NULL;
	return rc;
}

/* The replay loop of dpmu_trace_replay, with the monitor's timer and the
 * PMU interrupt lines looked at every dpmu_backend_check_insns
 * instructions, the engine's batch. The backend's one loop: run is this
 * without a timer. */
static int sim_run_timed(struct dpmu_backend *b, uint64_t interval, uint64_t period_ns,
			 dpmu_backend_tick_fn tick, void *ctx, struct dpmu_err *err)
{
	struct sim *s = (struct sim *)b;
	struct dpmu_trace_reader *r;
	int rc = dpmu_trace_open(s->trace, DPMU_TRACE_AUTO, &r, err);
	if (rc)
		return rc;
	dpmu_trace_set_ncores(r, dpmu_model_ncores(s->model));
	s->tick = tick;
	s->tick_ctx = ctx;
	memset(&s->ran, 0, sizeof s->ran);
	const uint32_t chunk = dpmu_backend_check_insns(period_ns);
	rc = dpmu_uarch_set_batch(s->uarch, chunk, err);
	if (!rc)
		rc = set_el(s, 0, err);
	uint64_t next_insns = interval;
	struct dpmu_backend_irq_cache irq = {0};
	uint64_t next_ns = period_ns ? dpmu_uarch_time_ns(s->uarch) + period_ns : UINT64_MAX;
	while (!rc) {
		unsigned core;
		const struct dpmu_insn *insns;
		long n = dpmu_trace_next(r, &core, &insns, err);
		if (n <= 0) {
			rc = (int)n;
			break;
		}
		for (long done = 0; !rc && done < n;) {
			size_t k = (size_t)(n - done) < chunk ? (size_t)(n - done) : chunk;
			dpmu_uarch_retire(s->uarch, core, insns + done, k);
			dpmu_trace_summary_add(&s->ran, core, k);
			done += (long)k;
			uint64_t now = dpmu_uarch_time_ns(s->uarch);
			bool due = (interval && s->ran.insns >= next_insns) || now >= next_ns ||
				   dpmu_backend_irq_pending_cached(&irq, s->model, s->b.cores);
			if (!due || !tick)
				continue;
			rc = sim_tick(s, err);
			next_insns = s->ran.insns + interval;
			if (period_ns)
				while (next_ns <= now)
					next_ns += period_ns;
		}
	}
	if (!rc) {
		dpmu_uarch_flush(s->uarch);
		if (tick)
			rc = sim_tick(s, err);
	}
	return end_run(s, r, rc, err);
}

static int sim_run(struct dpmu_backend *b, uint64_t interval, dpmu_backend_tick_fn tick,
		   void *ctx, struct dpmu_err *err)
{
	return sim_run_timed(b, interval, 0, tick, ctx, err);
}

/* EL3 firmware's part of AMU use: only the highest Exception level may
 * select group-1 events and enable AMU counters (Arm ARM D24.6), so the
 * core goes to EL3 (Secure) for the driver's AMU calls and back to EL1
 * Non-secure. The backend is the only layer that can change a core's EL. */
static int sim_amu_setup(struct dpmu_backend *b, unsigned cpu, const uint16_t *events,
			 unsigned count, struct dpmu_err *err)
{
	struct sim *s = (struct sim *)b;
	return dpmu_backend_amu_firmware(s->b.drv, s->model, s->uarch, cpu, events, count, err);
}

static void sim_destroy(struct dpmu_backend *b)
{
	struct sim *s = (struct sim *)b;
	if (!s)
		return;
	dpmu_drv_destroy(s->b.drv);
	dpmu_uarch_destroy(s->uarch);
	dpmu_model_destroy(s->model);
	dpmu_profile_free(s->profile);
	free(s);
}

static const struct dpmu_backend_ops sim_ops = {
	.name = "sim",
	.run = sim_run,
	.time_ns = sim_time_ns,
	.destroy = sim_destroy,
	.run_timed = sim_run_timed,
	.amu_setup = sim_amu_setup,
};

int dpmu_sim_create(const struct dpmu_sim_options *opt, struct dpmu_backend **out,
		    struct dpmu_err *err)
{
	*out = NULL;
	if (!opt || !opt->trace)
		return dpmu_err_set(err, DPMU_EINVAL, "simulation: no trace file given");
	struct sim *s = calloc(1, sizeof *s);
	if (!s)
		return dpmu_err_set(err, DPMU_ENOMEM, "simulation: out of memory");
	s->b.ops = &sim_ops;
	if (strlen(opt->trace) >= sizeof s->trace) {
		free(s);
		return dpmu_err_set(err, DPMU_EINVAL, "trace path too long");
	}
	snprintf(s->trace, sizeof s->trace, "%s", opt->trace);
	snprintf(s->b.workload, sizeof s->b.workload, "%s", opt->trace);

	int rc = dpmu_profile_load(opt->profile ? opt->profile : DPMU_PROFILE_DEFAULT, &s->profile,
				   err);
	if (!rc)
		rc = dpmu_model_create(s->profile, &s->model, err);
	if (!rc)
		rc = dpmu_uarch_create(s->model, s->profile, &s->uarch, err);
	if (rc) {
		sim_destroy(&s->b);
		return rc;
	}
	s->b.profile = s->profile;

	/* Validate the whole trace and find its cores before anything is
	 * programmed: a malformed line fails fast, and the monitor programs
	 * exactly the core PMUs the trace uses. */
	struct dpmu_trace_reader *r;
	rc = dpmu_trace_open(s->trace, DPMU_TRACE_AUTO, &r, err);
	if (!rc) {
		dpmu_trace_set_ncores(r, dpmu_model_ncores(s->model));
		rc = dpmu_trace_scan(r, &s->scan, err);
		dpmu_trace_close(r);
	}
	if (rc) {
		sim_destroy(&s->b);
		return rc;
	}
	/* A trace with no instruction still runs on core 0, where a trace
	 * without `cpu` lines starts (docs/trace-format.md). */
	s->b.cores = s->scan.cores_used ? s->scan.cores_used : 1;

	dpmu_regio_model_init(&s->rm, s->model, flush_engine, s->uarch);
	rc = dpmu_drv_create(&s->rm.io, &s->b.drv, err);
	if (rc) {
		sim_destroy(&s->b);
		return rc;
	}
	*out = &s->b;
	return 0;
}

uint64_t dpmu_sim_insns(const struct dpmu_backend *b, unsigned core)
{
	const struct sim *s = (const struct sim *)b;
	return core < DPMU_MAX_CORES ? s->ran.per_core[core] : 0;
}
