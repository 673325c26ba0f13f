/*
 * The monitoring hardware of a DynamIQ system (src/model): per core a PMUv3
 * core PMU and an AMU, per cluster a DSU cluster PMU, and the external
 * (memory-mapped, EXT32) view of every PMU with its access rule. The model
 * behaves register by register as the Arm ARM, reference sections 1-4 and
 * seeds 001/003 say; docs/model.md lists each choice.
 *
 * Two kinds of callers:
 *  - software that programs the monitors: system-register accesses from a
 *    core at its current exception level (dpmu_model_sysreg_*) and external
 *    accesses to a frame (dpmu_model_ext_*). These are the only ways to read
 *    or change PMU state, as on silicon.
 *  - the layers that make things happen (src/uarch, the register console):
 *    events, cycles, and the execution/debug state of each core.
 *
 * A model is not thread-safe; one thread drives it.
 */
#ifndef DYNPMU_MODEL_H
#define DYNPMU_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dynpmu/arch.h"
#include "dynpmu/error.h"

struct dpmu_model;

int dpmu_model_create(const struct dpmu_profile *profile, struct dpmu_model **out,
		      struct dpmu_err *err);
void dpmu_model_destroy(struct dpmu_model *m);
const struct dpmu_profile *dpmu_model_profile(const struct dpmu_model *m);
unsigned dpmu_model_ncores(const struct dpmu_model *m);
unsigned dpmu_model_nclusters(const struct dpmu_model *m);
/* Cluster a core belongs to. */
unsigned dpmu_model_core_cluster(const struct dpmu_model *m, unsigned core);

/* ---- execution and debug state of a core -------------------------------- */

enum dpmu_security { DPMU_NONSECURE = 0, DPMU_SECURE = 1 };

/* EL3 is always Secure; EL2 is Non-secure only (no FEAT_SEL2 on Armv8.2
 * cores). Other combinations return DPMU_EINVAL. */
int dpmu_model_set_el(struct dpmu_model *m, unsigned core, unsigned el, enum dpmu_security sec,
		      struct dpmu_err *err);
void dpmu_model_get_el(const struct dpmu_model *m, unsigned core, unsigned *el,
		       enum dpmu_security *sec);
/* Power the core down or up. Powering up is a Cold reset of the core power
 * domain: PMU and AMU registers return to their reset values and the OS lock
 * is set (OSLSR_EL1.OSLK resets to 1). */
int dpmu_model_set_power(struct dpmu_model *m, unsigned core, bool on, struct dpmu_err *err);
bool dpmu_model_powered(const struct dpmu_model *m, unsigned core);
int dpmu_model_set_oslock(struct dpmu_model *m, unsigned core, bool locked, struct dpmu_err *err);
int dpmu_model_set_doublelock(struct dpmu_model *m, unsigned core, bool locked,
			      struct dpmu_err *err);
/* External debug authentication for non-secure external PMU accesses
 * (AllowExternalPMUAccess). */
int dpmu_model_set_extauth(struct dpmu_model *m, unsigned core, bool allow, struct dpmu_err *err);
/* In WFI/WFE the core's clock is gated: nothing counts. */
int dpmu_model_set_wfi(struct dpmu_model *m, unsigned core, bool wfi, struct dpmu_err *err);

/* The cluster PMU frame has its own debug state (DSU debug power domain):
 * it is powered while any core of the cluster is. */
int dpmu_model_cluster_set_oslock(struct dpmu_model *m, unsigned cluster, bool locked,
				  struct dpmu_err *err);
int dpmu_model_cluster_set_doublelock(struct dpmu_model *m, unsigned cluster, bool locked,
				      struct dpmu_err *err);
int dpmu_model_cluster_set_extauth(struct dpmu_model *m, unsigned cluster, bool allow,
				   struct dpmu_err *err);

/* ---- event input --------------------------------------------------------- */

/* n occurrences of event `event` on a core, at the core's current exception
 * level and security state. Counted by every enabled core-PMU counter
 * programmed with it (if implemented and not filtered) and by every AMU
 * counter watching it. Overflow is detected at delivery: PMOVSSET, CHAIN and
 * the interrupt line are exact however large n is. */
void dpmu_model_core_event(struct dpmu_model *m, unsigned core, uint16_t event, uint64_t n);
/* Several events on a core at once: exactly dpmu_model_core_event for each
 * (events[i], n[i]), i < count, in that order (n[i] = 0 counts nothing), with
 * the per-call checks made once. For the engine's batched delivery. */
void dpmu_model_core_events(struct dpmu_model *m, unsigned core, const uint16_t *events,
			    const uint64_t *n, size_t count);
/* k core clock cycles pass on a core: CPU_CYCLES, the cycle counter (PMCR.D
 * divider), the AMU core and constant-frequency counters. */
void dpmu_model_core_cycles(struct dpmu_model *m, unsigned core, uint64_t k);
/* Cluster events (L3, bus, snoops), counted by the cluster PMU. */
void dpmu_model_cluster_event(struct dpmu_model *m, unsigned cluster, uint16_t event, uint64_t n);
/* k DSU clock cycles: the cluster PMU cycle counter and CYCLES. */
void dpmu_model_cluster_cycles(struct dpmu_model *m, unsigned cluster, uint64_t k);

/* Which deliveries matter, so that a caller with many kinds of event can
 * skip the ones nothing counts. dpmu_model_core_event_live is false when
 * dpmu_model_core_event(m, core, event, n) would change no model state for
 * any n: the core is powered down or in WFI/WFE, or the event is SW_INCR or
 * CHAIN (never counted from delivery), or no enabled core-PMU event counter
 * that may count now (PMCR.E, the PMEVTYPER filter at the current EL and
 * security state, an event the core implements) is programmed with it and
 * no enabled AMU counter watches it (group 0; group 1 only with an event
 * the profile lets it select; CPU_CYCLES and CNT_CYCLES are AMU clocks, not
 * events). CPU_CYCLES on a running core is always live (it is the clock:
 * the cycle counter, its snapshot timing and the AMU's constant clock move).
 * Skipping deliveries that are not live leaves the model exactly as
 * delivering them would. dpmu_model_cluster_event_live is the same for
 * dpmu_model_cluster_event: an enabled cluster-PMU counter (CLUSTERPMCR.E)
 * programmed with an event the cluster implements. Out-of-range core or
 * cluster: false. The clocks (dpmu_model_*_cycles) always matter. */
bool dpmu_model_core_event_live(const struct dpmu_model *m, unsigned core, uint16_t event);
bool dpmu_model_cluster_event_live(const struct dpmu_model *m, unsigned cluster,
				   uint16_t event);
/* Generation of those answers for a core (cluster): a number that changes
 * whenever the answer for some event may have changed (a PMU event type,
 * enable, PMCR or filter write, an exception level or security change that
 * changes what the filters let count, an AMU enable or type write, a reset,
 * power or WFI change) and never returns to an earlier value. While it is
 * unchanged, every answer is: a caller may keep a list of the live events
 * and rebuild it when the generation moves. Out-of-range: 0. */
uint64_t dpmu_model_core_live_gen(const struct dpmu_model *m, unsigned core);
uint64_t dpmu_model_cluster_live_gen(const struct dpmu_model *m, unsigned cluster);

/* Interrupt request lines (level-sensitive): the core PMU overflow
 * interrupt (PPI 23) and the cluster's nCLUSTERPMUIRQ (true = asserted). */
bool dpmu_model_core_irq(const struct dpmu_model *m, unsigned core);
bool dpmu_model_cluster_irq(const struct dpmu_model *m, unsigned cluster);
/* Precise overflow (sampling with no skid): the core PMU counters whose
 * overflow would assert the core's interrupt line (PMCR.E, enabled and
 * counting now, PMINTENSET), each as the event it counts and how many
 * more of that event overflow it (the cycle counter: CPU_CYCLES, in core
 * cycles). A caller that delivers events one instruction at a time can
 * so deliver at once the instruction whose event overflows a counter.
 * Writes at most cap entries; returns how many. */
unsigned dpmu_model_core_overflow_watch(const struct dpmu_model *m, unsigned core,
					 uint16_t *event, uint64_t *left, unsigned cap);
/* Generation of those lines, for every core and cluster: a number that
 * changes whenever some line may have changed (a write of an overflow
 * status, interrupt enable or PMCR register by any interface, an overflow
 * that sets a status bit, a reset) and never returns to an earlier value.
 * While it is unchanged, so is every line: a caller that polls them may
 * keep its last answer. */
uint64_t dpmu_model_irq_gen(const struct dpmu_model *m);

/* ---- system-register access --------------------------------------------- */

enum dpmu_access_kind {
	DPMU_ACCESS_OK = 0,
	DPMU_ACCESS_TRAP = 1,     /* trapped to result.el */
	DPMU_ACCESS_UNDEF = 2,    /* UNDEFINED at the current EL */
};

struct dpmu_access {
	enum dpmu_access_kind kind;
	unsigned el;              /* target EL of a trap */
};

/* MRS/MSR from `core` at its current EL. enc is DPMU_SYSREG(...). An
 * encoding the model does not implement is UNDEFINED. */
struct dpmu_access dpmu_model_sysreg_read(struct dpmu_model *m, unsigned core, uint32_t enc,
					  uint64_t *value);
struct dpmu_access dpmu_model_sysreg_write(struct dpmu_model *m, unsigned core, uint32_t enc,
					   uint64_t value);

/* ---- external (memory-mapped, EXT32) view --------------------------------- */

/* A core's PMU, a cluster's PMU, or a core's trace unit (ETMv4 frame,
 * dynpmu/etm.h: its own OS lock and software lock, no EDPRSR flag). */
enum dpmu_frame_kind { DPMU_FRAME_CORE = 0, DPMU_FRAME_CLUSTER = 1, DPMU_FRAME_ETM = 2 };

struct dpmu_frame {
	enum dpmu_frame_kind kind;
	unsigned index;           /* core number or cluster number */
};

/* 32-bit access at `offset` (4-byte aligned, < 0x1000) of a 4 KiB frame,
 * non-secure unless `secure`. Returns 0, or DPMU_EIO when the access rule
 * refuses it (the bus error a debugger would see; see the sticky flag). */
int dpmu_model_ext_read(struct dpmu_model *m, struct dpmu_frame f, uint32_t offset, bool secure,
			uint32_t *value);
int dpmu_model_ext_write(struct dpmu_model *m, struct dpmu_frame f, uint32_t offset, bool secure,
			 uint32_t value);
/* EDPRSR of the core's external debug interface (SPMAD, the sticky "external
 * PMU access disabled" error flag); reading clears the sticky bits, as a
 * debugger's read of EDPRSR does. For a cluster frame, the DSU's flag. */
uint32_t dpmu_model_edprsr_read(struct dpmu_model *m, struct dpmu_frame f);

/* ---- trace unit output (etm_encode.c) ---------------------------------------- */

/* The trace sink: a circular buffer of trace bytes, as an ETR or ETB in
 * circular mode. When it fills it wraps and overwrites the oldest bytes;
 * `wrapped` says so (the user's overflow indication, seed 003 section 8.3),
 * and the decoder finds the first whole sync in what is left. */
struct dpmu_etm_sink {
	uint8_t *buf;
	size_t size;
	size_t wr;                /* next byte written */
	uint64_t written;         /* bytes ever written */
	bool wrapped;
};

int dpmu_etm_sink_init(struct dpmu_etm_sink *s, size_t size, struct dpmu_err *err);
void dpmu_etm_sink_free(struct dpmu_etm_sink *s);
/* Empty it for the next capture (its buffer kept). */
void dpmu_etm_sink_reset(struct dpmu_etm_sink *s);
/* Bytes held (at most size). */
size_t dpmu_etm_sink_fill(const struct dpmu_etm_sink *s);
/* Copy the held bytes, oldest first, into out (dpmu_etm_sink_fill bytes). */
void dpmu_etm_sink_copy(const struct dpmu_etm_sink *s, uint8_t *out);

/* What the encoder needs of a retired instruction. */
enum dpmu_etm_branch {
	DPMU_ETM_NOT_BRANCH = 0,
	DPMU_ETM_DIRECT = 1,      /* B, BL, B.cond, CBZ/CBNZ, TBZ/TBNZ: target in the code */
	DPMU_ETM_INDIRECT = 2,    /* BR, BLR, RET: target in an address packet */
	DPMU_ETM_EXCEPTION = 3,   /* SVC: an exception, `next` its preferred return address */
};

struct dpmu_etm_insn {
	uint64_t pc;
	uint64_t next;            /* address of the next instruction executed */
	enum dpmu_etm_branch branch;
	bool taken;
};

/*
 * The ETMv4 instruction-trace packet encoder (IHI 0064 chapter 6) of one
 * trace unit: A-sync, Trace Info, Trace On, address with context, E and N
 * atoms (format 1), target addresses of taken indirect branches, and
 * timestamps. Speculation depth 0 (TRCIDR8.MAXSPEC): every P0 element is
 * committed when it is traced. Periodic synchronisation every 2^sync_log2
 * bytes (TRCSYNCPR), placed after a P0 element so that no instruction is
 * pending across it.
 */
struct dpmu_etm_encoder {
	struct dpmu_etm_sink *sink;
	bool on;                  /* tracing: the last instruction was traced */
	bool synced;              /* an A-sync has been written */
	bool ts;                  /* TRCCONFIGR.TS */
	bool cid, vmid;           /* TRCCONFIGR.CID, .VMID */
	unsigned el;
	bool ns;
	uint32_t context_id;
	uint8_t vmid_value;
	unsigned sync_log2;
	uint64_t since_sync;      /* bytes since the last A-sync */
	bool sync_due;
	/* Cycle counting (TRCCONFIGR.CCI): the core's cycle count now (set
	 * with dpmu_etm_encoder_cycles), at the last count written, and
	 * whether a P0 element since then waits for its count. */
	bool cci;
	uint32_t cc_threshold;    /* TRCCCCTLR.THRESHOLD */
	uint64_t cc_now, cc_last;
	bool cc_pending;
};

void dpmu_etm_encoder_init(struct dpmu_etm_encoder *e, struct dpmu_etm_sink *sink,
			   uint32_t trcconfigr, uint32_t trcsyncpr, uint32_t trcccctlr);
/* The common case of dpmu_etm_encoder_insn, inline for the engine's block
 * path: a direct branch while tracing, with no cycle count or sync to
 * place and room before the sink's end, is one atom byte. Returns false,
 * having written nothing, when the general path must run. */
#define DPMU_ETM_HDR_ATOM_F1_N 0xF6u
#define DPMU_ETM_HDR_ATOM_F1_E 0xF7u
static inline bool dpmu_etm_encoder_atom(struct dpmu_etm_encoder *e, bool taken)
{
	struct dpmu_etm_sink *s = e->sink;
	if (!e->on || e->sync_due || e->cci || s->wr + 1 >= s->size ||
	    e->since_sync + 1 >= (1ull << e->sync_log2))
		return false;
	s->buf[s->wr++] = taken ? DPMU_ETM_HDR_ATOM_F1_E : DPMU_ETM_HDR_ATOM_F1_N;
	s->written++;
	e->since_sync++;
	return true;
}
/* With CCI: the core's cycle count is now `cycles`. The P0 elements
 * written since the last count get a Cycle Count packet with the cycles
 * since then, once they reach TRCCCCTLR.THRESHOLD (fewer wait for the next
 * element). Call it before each run of instructions. */
void dpmu_etm_encoder_cycles(struct dpmu_etm_encoder *e, uint64_t cycles);
/* An instruction ViewInst lets through. The first after a gap starts the
 * trace (sync, Trace On, address with context, a timestamp when TS). */
void dpmu_etm_encoder_insn(struct dpmu_etm_encoder *e, const struct dpmu_etm_insn *in,
			   uint64_t timestamp);
/* An instruction ViewInst does not let through: the next traced one starts
 * after a gap. */
void dpmu_etm_encoder_gap(struct dpmu_etm_encoder *e);
/* The PE was interrupted (an IRQ, exception type 0x0E) before the
 * instruction at ret_addr: an exception packet with that preferred return
 * address; the handler is not traced, so the next traced instruction
 * starts after a gap. */
void dpmu_etm_encoder_interrupt(struct dpmu_etm_encoder *e, uint64_t ret_addr);
/* A timestamp packet now (TS set and tracing): at PMU snapshots. Returns
 * whether one was written. */
bool dpmu_etm_encoder_timestamp(struct dpmu_etm_encoder *e, uint64_t timestamp);

/* ---- the trace unit at work (etm_run.c) -------------------------------------- */

/* A core's trace unit traces while TRCPRGCTLR.EN is 1 and a sink is
 * attached (its ATB output goes somewhere): it is then `active`, and the
 * engine gives it every instruction the core retires
 * (dpmu_model_etm_insns). ViewInst decides which it traces: TRCVICTLR's
 * EVENT resource, its exception-level filter, the start/stop logic
 * (TRCVISSCTLR) and the include/exclude ranges (TRCVIIECTLR). Counters
 * decrement on the external inputs their CNTEVENT resource reads: a PMU
 * event selected by TRCEXTINSELR, by the number of its occurrences, when the
 * engine delivers it (docs/model.md: at most a delivery batch late), and
 * INST_RETIRED exactly, with each instruction. */
typedef void (*dpmu_etm_watch_fn)(void *ctx, unsigned core, bool active);
/* The system's time in ns, read when a timestamp packet is made; a
 * core's cycle count, read for cycle counting (TRCCONFIGR.CCI). */
typedef uint64_t (*dpmu_etm_clock_fn)(void *ctx);
typedef uint64_t (*dpmu_etm_cycles_fn)(void *ctx, unsigned core);
/* index counts the instructions given since the trace unit was enabled. */
typedef void (*dpmu_etm_seen_fn)(void *ctx, unsigned core, uint64_t index, uint64_t pc,
				 bool traced);

/* Attach (or with NULL detach) core's trace sink; the model does not own
 * it. Attaching to an enabled trace unit starts it with this sink. */
int dpmu_model_etm_attach(struct dpmu_model *m, unsigned core, struct dpmu_etm_sink *sink,
			  struct dpmu_err *err);
/* The engine's hook: fn is called whenever a core's trace unit becomes
 * active or stops, clock gives the trace's timestamps and cycles the
 * cores' cycle counts (one watcher per model; NULL: 0). */
void dpmu_model_etm_watch(struct dpmu_model *m, dpmu_etm_watch_fn fn, dpmu_etm_clock_fn clock,
			  dpmu_etm_cycles_fn cycles, void *ctx);
/* Every instruction given to core's trace unit, traced or not (a check of
 * a decoder against what executed); fn NULL removes it. */
void dpmu_model_etm_seen(struct dpmu_model *m, unsigned core, dpmu_etm_seen_fn fn, void *ctx);
bool dpmu_model_etm_active(const struct dpmu_model *m, unsigned core);
/* n instructions retired in order on an active core. */
void dpmu_model_etm_insns(struct dpmu_model *m, unsigned core, const struct dpmu_etm_insn *in,
			  size_t n);
/* The same for a block of n instructions of which only the last may be a
 * P0 element (a branch or an SVC: a translated block), given its first
 * address and its last instruction: true when that was enough, false when
 * the trace unit needs every instruction (address comparators, a seen
 * watcher, a counter reaching zero inside the block): then give them with
 * dpmu_model_etm_insns. */
bool dpmu_model_etm_block(struct dpmu_model *m, unsigned core, uint64_t first_pc,
			  const struct dpmu_etm_insn *last, size_t n);
/* Another thread (`context_id`, CONTEXTIDR_EL1 as Linux sets it: its
 * thread ID) runs on the core from its next instruction: the trace shows
 * the interrupt that took the last one off the core, and restarts with
 * the new context (TRCCONFIGR.CID) at the new thread's first traced
 * instruction. */
void dpmu_model_etm_context(struct dpmu_model *m, unsigned core, uint32_t context_id);
/* A timestamp in the trace now (a PMU snapshot's time, seed 003 section
 * 7.1): written when the trace unit is tracing with TRCCONFIGR.TS. */
bool dpmu_model_etm_timestamp(struct dpmu_model *m, unsigned core, uint64_t timestamp);

struct dpmu_etm_status {
	bool enabled;             /* TRCPRGCTLR.EN */
	bool active;              /* enabled with a sink */
	bool open;                /* ViewInst let the last instruction through */
	uint64_t seen, traced;    /* instructions given and traced since enable */
	uint64_t first, last;     /* index of the first and last traced (UINT64_MAX: none) */
	uint64_t event_at;        /* index where TRCVICTLR.EVENT first held (UINT64_MAX: never) */
};
int dpmu_model_etm_status(const struct dpmu_model *m, unsigned core, struct dpmu_etm_status *out);

#endif
