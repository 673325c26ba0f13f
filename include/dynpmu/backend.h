/*
 * Backends (src/backend): what runs a workload under the monitor and gives
 * it a driver to program the counters with. The monitor sees only this
 * interface; the simulation backend (model + engine + trace replay + the
 * regio adapter onto the model) is the first implementation.
 */
#ifndef DYNPMU_BACKEND_H
#define DYNPMU_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "dynpmu/arch.h"
#include "dynpmu/driver.h"
#include "dynpmu/error.h"
#include "dynpmu/uarch.h"

struct dpmu_backend;

/* Called while the workload runs, with the counters reachable through the
 * driver (on the model: at EL1, every pending event delivered). A non-zero
 * return stops the run with that code. */
typedef int (*dpmu_backend_tick_fn)(void *ctx, uint64_t now_ns, struct dpmu_err *err);

/* Where a core was when its overflow interrupt was taken (sampling): the
 * instruction whose event overflowed the counter (with a modelled skid,
 * the one the interrupt came after), its thread, and the calls it is in:
 * call sites, innermost first. */
#define DPMU_BACKEND_CHAIN_MAX 127 /* perf's default perf_event_max_stack */
struct dpmu_backend_where {
	uint64_t pc;
	uint32_t pid, tid;
	unsigned depth;   /* entries of call[] */
	bool truncated;   /* deeper than DPMU_BACKEND_CHAIN_MAX: the outermost left out */
	uint64_t call[DPMU_BACKEND_CHAIN_MAX];
};

/* A core changes threads (the kernel's context switch, where Linux saves a
 * task's counters for perf's per-task counts): `prev` stops running on
 * `cpu` and `next` starts. Threads are the backend's numbers, in the order
 * they first ran, from 0 (the program's first thread); -1: none. Called
 * with the core's pending events delivered, at EL1, before next runs, so
 * the core's counters read now are prev's up to here. A non-zero return
 * stops the run with that code. */
typedef int (*dpmu_backend_switch_fn)(void *ctx, unsigned cpu, int prev, int next,
				      uint64_t now_ns, struct dpmu_err *err);

struct dpmu_backend_ops {
	const char *name;
	/* Run the workload to its end, calling tick about every `interval`
	 * instructions and once at the end. */
	int (*run)(struct dpmu_backend *b, uint64_t interval, dpmu_backend_tick_fn tick,
		   void *ctx, struct dpmu_err *err);
	/* Time since the workload started, in (simulated) nanoseconds. */
	uint64_t (*time_ns)(struct dpmu_backend *b);
	void (*destroy)(struct dpmu_backend *b);
	/* Optional (NULL: the monitor uses run). Like run, and also calls
	 * tick when the backend's time passes each multiple of period_ns
	 * (0: no timer) and whenever the overflow interrupt line of a core or
	 * cluster PMU of the workload's cores is asserted, as a timer and the
	 * PMU interrupt would call firmware. */
	int (*run_timed)(struct dpmu_backend *b, uint64_t interval, uint64_t period_ns,
			 dpmu_backend_tick_fn tick, void *ctx, struct dpmu_err *err);
	/* Optional (NULL: amu/ events are refused). Set up the Activity
	 * Monitors of `cpu` as EL3 firmware would (AMEVTYPER1<n> and the
	 * AMCNTENSET registers are writable only at the highest EL, Arm ARM
	 * D24.6): group-1 counter n selects events[n] (n < count), every
	 * group-0 counter and those `count` group-1 counters enabled. */
	int (*amu_setup)(struct dpmu_backend *b, unsigned cpu, const uint16_t *events,
			 unsigned count, struct dpmu_err *err);
	/* Optional (NULL: no sampling). In a tick for an overflow interrupt
	 * of `cpu`: where that core was (above). */
	int (*where)(struct dpmu_backend *b, unsigned cpu, struct dpmu_backend_where *out,
		     struct dpmu_err *err);
	/* Optional (NULL: the workload's threads are not told apart, as a
	 * replayed trace's cores have none). Call fn at every thread switch
	 * on a core of the workload (above) from the next run on, the first
	 * placement of a thread on its core included; fn NULL: no more. */
	void (*on_switch)(struct dpmu_backend *b, dpmu_backend_switch_fn fn, void *ctx);
};

struct dpmu_mon_counting;

struct dpmu_backend {
	const struct dpmu_backend_ops *ops;
	struct dpmu_drv *drv;               /* owned by the backend; NULL with counting */
	/* Set by a backend whose counters the kernel schedules (perf): the
	 * monitor opens and reads events through it instead of programming
	 * counters through drv (include/dynpmu/monitor.h). Owned by the backend. */
	const struct dpmu_mon_counting *counting;
	const struct dpmu_profile *profile; /* owned by the backend */
	uint64_t cores;                     /* bit n: the workload runs on core n */
	char workload[256];                 /* what runs, for reports ("FILE") */
};

static inline void dpmu_backend_destroy(struct dpmu_backend *b)
{
	if (b)
		b->ops->destroy(b);
}

/* ---- simulation ----------------------------------------------------------- */

struct dpmu_sim_options {
	const char *profile;     /* built-in name or JSON path; NULL: the default */
	const char *trace;       /* trace file to replay (text or binary) */
};

/* Load the profile, build the model, the engine and the driver, and scan
 * the trace (validating every record and finding its cores) without
 * replaying it yet. */
int dpmu_sim_create(const struct dpmu_sim_options *opt, struct dpmu_backend **out,
		    struct dpmu_err *err);
/* Instructions the trace retired on core n (after a run). */
uint64_t dpmu_sim_insns(const struct dpmu_backend *b, unsigned core);

/* ---- shared by the simulated backends ---------------------------------------- */

struct dpmu_model;
struct dpmu_uarch;

/* EL3 firmware's part of an AMU set-up on the model: select `count` group-1
 * events on `cpu` and enable its group-0 and those group-1 counters, with
 * the core at EL3 for the duration (AMU enables and types are writable only
 * at the highest EL). Implements dpmu_backend_ops.amu_setup for backends
 * that own a model and an engine. */
int dpmu_backend_amu_firmware(struct dpmu_drv *drv, struct dpmu_model *model,
			      struct dpmu_uarch *uarch, unsigned cpu, const uint16_t *events,
			      unsigned count, struct dpmu_err *err);

/* Every core of `cores` (bit n: core n) at `el` Non-secure, after the engine
 * has delivered what it holds, so each event counts at the level its
 * instruction ran at. */
int dpmu_backend_set_el(struct dpmu_model *model, struct dpmu_uarch *uarch, uint64_t cores,
			unsigned el, struct dpmu_err *err);
/* The monitor's tick with the cores at EL1 (a kernel driver's accesses),
 * back at EL0 (the user program) after it. */
int dpmu_backend_tick_el1(struct dpmu_model *model, struct dpmu_uarch *uarch, uint64_t cores,
			  dpmu_backend_tick_fn tick, void *ctx, struct dpmu_err *err);
/* The end of a run, after success or an error (rc): the cores back at EL1
 * for the monitor's last accesses; returns the first error. */
int dpmu_backend_end_el1(struct dpmu_model *model, struct dpmu_uarch *uarch, uint64_t cores,
			 int rc, struct dpmu_err *err);
/* Whether the overflow interrupt line of a core PMU of `cores`, or of the
 * cluster PMU of a cluster holding one of them, is asserted. */
bool dpmu_backend_irq_pending(const struct dpmu_model *model, uint64_t cores);
/* The same, asked of the model again only when its interrupt-line
 * generation (dpmu_model_irq_gen) has moved: a backend checks at every
 * batch, the lines change only with a register write or an overflow.
 * Start from a zeroed cache; one cache per (model, cores). */
struct dpmu_backend_irq_cache {
	uint64_t gen;
	bool known, pending;
};
bool dpmu_backend_irq_pending_cached(struct dpmu_backend_irq_cache *cache,
				     const struct dpmu_model *model, uint64_t cores);

/* Instructions between a backend's looks at the monitor's timer and the
 * interrupt lines, and its engine's delivery batch. A run with a timer
 * (period_ns: stat -I, event rotation) keeps the engine's default, the
 * bound on an overflow interrupt's skid (docs/events.md) and on a tick's
 * lateness. Without one the only interrupts are the counters' overflows,
 * which the monitor takes to extend them to 64 bits: how late changes no
 * count (the counts do not depend on the batch), and a 16 times longer
 * batch leaves out 15 of 16 deliveries. */
#define DPMU_BACKEND_CHECK_UNTIMED 4096u
static inline uint32_t dpmu_backend_check_insns(uint64_t period_ns)
{
	return period_ns ? DPMU_UARCH_BATCH_DEFAULT : DPMU_BACKEND_CHECK_UNTIMED;
}

#endif
