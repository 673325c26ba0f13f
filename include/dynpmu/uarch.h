/*
 * The microarchitectural engine (src/uarch): turns a stream of retired
 * instructions per core into the events a DynamIQ cluster's PMUs count,
 * and delivers them to the model (include/dynpmu/model.h).
 *
 * Per core: L1I, L1D, L2, TLBs, branch predictor, timing. Per cluster: the
 * DSU's L3 with its snoop filter, coherence between the cores, the bus.
 * The engine keeps simulated time per core in core cycles.
 */
#ifndef DYNPMU_UARCH_H
#define DYNPMU_UARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dynpmu/error.h"
#include "dynpmu/model.h"

/* What kind of instruction retired. */
enum dpmu_insn_kind {
	DPMU_INSN_OTHER = 0,   /* any other instruction */
	DPMU_INSN_LOAD = 1,
	DPMU_INSN_STORE = 2,
	DPMU_INSN_BRANCH = 3,
};

enum dpmu_branch_kind {
	DPMU_BR_COND = 0,      /* conditional direct (B.cond, CBZ, TBZ) */
	DPMU_BR_UNCOND = 1,    /* unconditional direct (B) */
	DPMU_BR_CALL = 2,      /* BL, BLR */
	DPMU_BR_RET = 3,       /* RET */
	DPMU_BR_IND = 4,       /* BR and other register-indirect branches */
};

/* Instruction-class flags (from the encoding, for the *_SPEC events, the
 * barrier events, exclusives, exceptions). Trace input may leave them 0. */
enum {
	DPMU_IC_DP = 1u << 0,        /* integer data processing */
	DPMU_IC_ASE = 1u << 1,       /* Advanced SIMD */
	DPMU_IC_VFP = 1u << 2,       /* scalar floating point */
	DPMU_IC_CRYPTO = 1u << 3,
	DPMU_IC_ISB = 1u << 4,
	DPMU_IC_DSB = 1u << 5,
	DPMU_IC_DMB = 1u << 6,
	DPMU_IC_LDREX = 1u << 7,     /* load-exclusive */
	DPMU_IC_STREX = 1u << 8,     /* store-exclusive */
	DPMU_IC_STREX_FAIL = 1u << 9,/* store-exclusive that failed */
	DPMU_IC_SVC = 1u << 10,      /* exception-generating (SVC): EXC_TAKEN */
	DPMU_IC_PAIR = 1u << 11,     /* load/store pair */
	DPMU_IC_IMMED = 1u << 12,    /* immediate (direct) branch */
	DPMU_IC_ERET = 1u << 13,     /* exception return */
	DPMU_IC_REG_BRANCH = 1u << 14,/* register branch (BR, BLR, RET): target from a register */
	/* load/store with base writeback (pre- or post-index): the base is in
	 * src and in dst, and what it is written is the address, not data */
	DPMU_IC_WRITEBACK = 1u << 15,
};

/* Architectural registers as the timing model's scoreboard numbers them
 * (docs/events.md "Timing"): 0 is "none". */
#define DPMU_REG_X(n) ((uint8_t)(1 + (n)))   /* X0..X30 (W regs are the same register) */
#define DPMU_REG_SP 32
#define DPMU_REG_V(n) ((uint8_t)(33 + (n)))  /* V0..V31 (B/H/S/D/Q views are the same register) */
#define DPMU_REG_NZCV 65
#define DPMU_REG_COUNT 66                    /* ids 0..65 */

/* One retired instruction. */
struct dpmu_insn {
	uint64_t pc;
	uint64_t addr;          /* load/store: effective address; branch: target */
	uint32_t flags;         /* DPMU_IC_* */
	uint16_t size;          /* load/store: bytes accessed */
	uint8_t kind;           /* enum dpmu_insn_kind */
	uint8_t br_kind;        /* enum dpmu_branch_kind */
	uint8_t taken;          /* branch: 1 taken, 0 not taken */
	uint8_t isize;          /* instruction bytes (4 on AArch64) */
	uint8_t exec;           /* enum dpmu_exec_class: its result's latency */
	/* Registers read and written (DPMU_REG_*, 0: none): the dependences
	 * the timing follows. Input without them (a trace) has none; a load
	 * without a destination then waits for its data at once. */
	uint8_t src[3], dst[3];
};

/* A branch that ended a run of instructions, which execution left for
 * next_pc (0: unknown, taken as the fall-through): its outcome and target,
 * as the engine reads them. */
static inline void dpmu_insn_branch_to(struct dpmu_insn *in, uint64_t next_pc)
{
	uint64_t fall = in->pc + in->isize;
	uint64_t to = next_pc ? next_pc : fall;
	in->taken = to != fall || in->br_kind != DPMU_BR_COND;
	in->addr = to;
}

struct dpmu_uarch;

/* The engine drives `model` (not owned) with the profile's parameters. */
int dpmu_uarch_create(struct dpmu_model *model, const struct dpmu_profile *profile,
		      struct dpmu_uarch **out, struct dpmu_err *err);
void dpmu_uarch_destroy(struct dpmu_uarch *u);

/* n instructions retired in order on `core`. Events may be held back and
 * delivered in batches; dpmu_uarch_flush delivers everything pending, so a
 * read of the model after a flush is exact. */
void dpmu_uarch_retire(struct dpmu_uarch *u, unsigned core, const struct dpmu_insn *insns,
		       size_t n);
void dpmu_uarch_flush(struct dpmu_uarch *u);
/* dpmu_uarch_retire with overflow interrupts that have no skid (sampling):
 * retires up to and including the instruction whose events overflow a
 * core-PMU counter of `core` with its overflow interrupt enabled
 * (dpmu_model_core_overflow_watch), delivers the core's counts there, so
 * that the interrupt line is asserted right after that instruction, and
 * returns how many retired with *overflow set; else retires all n and
 * returns n. The events and timing are dpmu_uarch_retire's. */
size_t dpmu_uarch_retire_watched(struct dpmu_uarch *u, unsigned core, const struct dpmu_insn *insns,
				 size_t n, bool *overflow);
/* The same on the block path, for counters of the core clock only (the
 * cycle counter or CPU_CYCLES): after dpmu_uarch_watch_arm, each block
 * run on `core` that takes the clock to a watched counter's overflow
 * calls hooks.overflow with the instruction it happened in, at the
 * block's end (the counts delivered later, at the tick that takes the
 * sample); every block whose last instruction is a call or a register
 * branch calls hooks.branch after it, with where it went. Returns false,
 * arming nothing, when a watched counter counts anything else: then only
 * dpmu_uarch_retire_watched stops exactly. Call it again after every
 * write to the counters (each sample's re-arming). */
struct dpmu_uarch_sample_hooks {
	void (*overflow)(void *ctx, unsigned core, const struct dpmu_insn *in);
	void (*branch)(void *ctx, unsigned core, const struct dpmu_insn *in, uint64_t next_pc);
};
void dpmu_uarch_set_sample_hooks(struct dpmu_uarch *u, const struct dpmu_uarch_sample_hooks *h,
				 void *ctx);
bool dpmu_uarch_watch_arm(struct dpmu_uarch *u, unsigned core);

/* A translated block (a run of instructions that always executes from its
 * first, as qemu's translation blocks do), summarised once: its class
 * events and the instructions that read the machine's state (fetch-line
 * changes, loads, stores, branches, store-exclusives). Retiring the
 * summary costs those instructions only. One summary serves every core
 * (and engine) that runs the block, one at a time: it keeps how often it
 * ran since the delivery of the core that last ran it, and its class
 * events go into that core's counts at that delivery (or earlier into its
 * pending counts: when another core runs it, when the core holds more
 * summaries than it keeps, when it is destroyed), which is where
 * one-by-one retirement's would be delivered too. It may be destroyed before or after the engine. */
struct dpmu_ublock;
int dpmu_ublock_create(const struct dpmu_insn *insns, uint32_t n, struct dpmu_ublock **out,
		       struct dpmu_err *err);
void dpmu_ublock_destroy(struct dpmu_ublock *b);

/* One whole execution of block b on `core`, every load and store having
 * made its access: addr[i] is the address of instruction i (read for
 * loads and stores only), next_pc where execution went next (the last
 * instruction's branch target or fall-through; 0: unknown, taken as the
 * fall-through). Exactly the events and timing of dpmu_uarch_retire on the
 * block's instructions with those fields filled in. A block that retired
 * only in part (a fault) or whose store-exclusive failed goes through
 * dpmu_uarch_retire instead. */
void dpmu_uarch_run_block(struct dpmu_uarch *u, unsigned core, struct dpmu_ublock *b,
			  const uint64_t *addr, uint64_t next_pc);
/* The same without the checks, for a caller that runs many blocks: c from
 * dpmu_uarch_core (not NULL), b and addr not NULL. */
struct dpmu_ucore;
struct dpmu_ucore *dpmu_uarch_core(struct dpmu_uarch *u, unsigned core); /* NULL: no such core */
void dpmu_uarch_run_block_on(struct dpmu_uarch *u, struct dpmu_ucore *c, struct dpmu_ublock *b,
			     const uint64_t *addr, uint64_t next_pc);

/* Simulated time of a core, in its clock cycles, and of the whole system
 * in nanoseconds (the slowest-moving view: the maximum over cores). The
 * second is not const: it remembers each core's answer for its current
 * clock, since it is asked far more often than most cores move. */
uint64_t dpmu_uarch_core_cycles(const struct dpmu_uarch *u, unsigned core);
/* Core `core` was idle for ns of simulated time (its thread blocked, or
 * started after others had run): the core's time moves on, and with it
 * dpmu_uarch_time_ns, its cluster's DSU clock and the DRAM bandwidth
 * epochs it is timed in; its cycle counter does not, as a core's in WFI. */
void dpmu_uarch_core_idle(struct dpmu_uarch *u, unsigned core, uint64_t ns);
uint64_t dpmu_uarch_time_ns(struct dpmu_uarch *u);

/* Deliver what one core has pending (and its cluster's events). Call it
 * before changing the core's exception level, security state, power or WFI
 * state in the model, so that held-back events count in the state they
 * happened in. */
void dpmu_uarch_flush_core(struct dpmu_uarch *u, unsigned core);

/* Batching: pending counts of a core are delivered at the latest after
 * `insns` retired instructions of that core (1 = deliver every
 * instruction; the bound on overflow-interrupt skid, docs/events.md). */
#define DPMU_UARCH_BATCH_DEFAULT 256u
#define DPMU_UARCH_BATCH_MAX 65536u
int dpmu_uarch_set_batch(struct dpmu_uarch *u, uint32_t insns, struct dpmu_err *err);

/* Observer of deliveries: called with every (event, n > 0) the engine
 * delivers, in delivery order, after the model has counted it. `cluster`
 * false: index is a core and event a core-PMU event (CPU_CYCLES 0x11 for
 * core cycles); true: index is a cluster and event a cluster-PMU event of
 * its numbering (0x11 for DSU cycles). For tests, tracing and per-region
 * counts; fn NULL removes it.
 *
 * `wants` says which (cluster, index, event) the observer needs; NULL
 * means all of them. The engine hands the model only the events it counts
 * (dpmu_model_core_event_live) and the observer only those it wants, so an
 * observer that names its few events keeps delivery cheap. The engine asks
 * `wants` when it builds its delivery lists: after this call, and again
 * whenever the model's live generation of that core or cluster moves; the
 * answer must stay the same in between (register again to change it). */
typedef void (*dpmu_uarch_observer_fn)(void *ctx, bool cluster, unsigned index, uint16_t event,
				       uint64_t n);
typedef bool (*dpmu_uarch_wants_fn)(void *ctx, bool cluster, unsigned index, uint16_t event);
void dpmu_uarch_set_observer(struct dpmu_uarch *u, dpmu_uarch_observer_fn fn,
			     dpmu_uarch_wants_fn wants, void *ctx);

/* Last problem with the engine's input (a retire on a core the profile does
 * not have, ...), or "no error". */
const char *dpmu_uarch_errmsg(const struct dpmu_uarch *u);

/* Whether the simulated cluster produces the event `name` (a catalog name,
 * case-insensitive) on a PMU of this kind: the engine's happenings and what
 * the model counts by itself (docs/events.md). For `dynpmu list`. */
bool dpmu_uarch_produces(enum dpmu_pmu_kind pmu, const char *name);

#endif
