/*
 * Translated blocks' summaries (ublock.c), as the block path (block_run.c)
 * and the engine's delivery (uarch.c) read them.
 *
 * Most instructions of a block do the same thing every time it runs: they
 * issue (work cycles) and count their class events. Only a few read the
 * machine's state: the first (its fetch line may differ from where the
 * core fetched last), the first of each new fetch line, loads, stores,
 * branches and store-exclusives (their outcome). A block's summary lists
 * the class-event totals and those instructions (its steps), so an
 * execution adds the totals and visits the steps, with the work clock set
 * to what the per-instruction loop would have at each: the same events,
 * the same timing.
 */
#ifndef DPMU_UARCH_UBLOCK_H
#define DPMU_UARCH_UBLOCK_H

#include "uarch/timing.h"
#include "uarch/uarch_internal.h"

/* A summary's steps mark the fetch-line changes of one L1I line size,
 * planned for the line of the core that runs it (ublock_plan): an
 * instruction in the previous one's line finds the fetch where it is. At
 * creation, the smallest line a profile may have (docs/profiles.md). */
#define UBLOCK_LINE_SHIFT 4u

struct dpmu_ublock_ev {
	uint32_t off;        /* byte offset of its pend[] or ipend[] entry in a core */
	uint32_t n;
};

/* fold_need's index of the pend[] or ipend[] entry at byte offset off of
 * a core. */
static inline unsigned fold_index(uint32_t off)
{
	const uint32_t ip = (uint32_t)offsetof(struct dpmu_ucore, ipend);
	return off >= ip ? DPMU_UEV_COUNT + 1 + (off - ip) / 8
			 : (off - (uint32_t)offsetof(struct dpmu_ucore, pend)) / 8;
}

/* A step: an instruction index, whether its fetch line may differ from
 * the previous instruction's, and what else it does, decided once when the
 * summary is built so an execution tests nothing of the instruction: only
 * the fetch (STEP_NONE), a load, a store, a branch, anything else (a
 * store-exclusive: the per-instruction code), or an instruction with an
 * execution latency (its value's time). STEP_SOME only while a
 * summary is built: "a step". */
#define STEP_FETCH (1u << 31)
#define STEP_OP_SHIFT 28
#define STEP_OP(st) (((st) >> STEP_OP_SHIFT) & 7u)
enum { STEP_NONE, STEP_LOAD, STEP_STORE, STEP_BRANCH, STEP_OTHER, STEP_EXEC };
#define STEP_SOME (1u << 27)
#define STEP_INDEX (STEP_SOME - 1)
/* After the last step: no step has op 7, so it is none (the loop over the
 * steps then needs neither their number nor their end in a register). */
#define STEP_END UINT32_MAX

struct dpmu_ublock {
	uint32_t n;          /* instructions */
	uint32_t nev;        /* entries of ev[] */
	uint32_t nstep;      /* entries of step[] (room for n), then STEP_END */
	uint32_t line_shift; /* log2 of the L1I line the steps are planned for */
	struct dpmu_ublock_ev *ev;
	uint32_t *step;      /* STEP_* flags | instruction index, ascending */
	struct dpmu_insn *insn; /* the instructions; an execution's fields are
				 * written in before it retires */
	struct dpmu_insn *branch; /* the last instruction if a branch, else NULL */
	/* Every execution starts with the fetch of instruction 0, and most
	 * end in a branch: both are done outside the steps. first_op:
	 * instruction 0 is a step too (its access follows the fetch); tail
	 * (TAIL_* bits, 0: none): the last instruction is a branch run after
	 * the steps (TAIL_FETCH: its fetch line may differ from the previous
	 * instruction's; TAIL_COND: conditional, whose outcome next_pc
	 * gives); tail_pc and fall: its address and fall-through. A last
	 * branch that is not the tail (a store-exclusive's class) is a step
	 * that reads its outcome from the copy: copy_branch, else NULL. */
	bool first_op;
	uint8_t tail;
	/* sampling: its last instruction is a call or a register branch,
	 * which the backend's call stacks follow (run_block_sampled) */
	bool tail_hook;
	/* plain_shift: line_shift if the block is plain (no steps, and a
	 * conditional tail in the line of instruction 0, head_blk: its L1I
	 * block for line_shift), else UINT32_MAX; most blocks are. One
	 * compare with the core's line tests both. */
	uint32_t plain_shift;
	uint64_t head_blk;
	uint64_t tail_pc, fall;
	struct dpmu_insn *copy_branch;
	/* Executions on `owner` whose class events are not yet in its pend[]
	 * (owner NULL: none); the block is owner->owned[slot]. */
	struct dpmu_ucore *owner;
	uint32_t runs, slot;
	/* ev[] ordered for the fold_need set fold_key (all zero: none yet):
	 * its first nfold entries are those the set holds (dpmu_ucore_fold_live) */
	uint64_t fold_key[DPMU_FOLD_WORDS];
	uint32_t nfold;
	/* Dependences (timing.h): `reads`, the registers the block reads
	 * before it writes them (its values from before it); `computed`,
	 * those it leaves written by other instructions than loads; each
	 * instruction's registers (imask). walk: an instruction reads what
	 * an earlier load of the block wrote, or a load has no register
	 * operands. In order (no reorder window), an execution that reads
	 * nothing pending and has no walk waits for nothing: the steps time
	 * it, and its computed values are ready; out of order such an
	 * execution takes the clean template whatever walk is (block_timing
	 * in block_run.c). touch: reads | computed (a plain block that touches nothing
	 * pending leaves dep_pend as it is). */
	dpmu_u128 reads, computed, touch;
	struct dpmu_iregm *imask;
	bool walk;
	/* The dependence summary (timing.h), when dsum: idep[i], what
	 * instruction i's sources are at its issue; wdep[nw], the registers
	 * the block leaves written with a value that depends on something,
	 * `fixed` the others (ready at their issue). Not for a block of more
	 * than DPMU_UDEP_MAX instructions, with a load without register
	 * operands or with a step that times itself (step_rare). */
	bool dsum;
	bool noload; /* a summary, and no instruction that makes a value
		      * (insn_makes_value: run_block_noload) */
	uint32_t nw, nwl; /* nwl: the first of wdep[] name a load */
	dpmu_u128 fixed, wmask, win; /* win: the registers wdep[] names */
	struct dpmu_udep *idep;
	struct dpmu_uwdep *wdep;
	/* The template of a clean execution (dpmu_ublock_lean_template) for core type
	 * lean_type (NULL: none yet): when every load hits the L1D and
	 * nothing stalls, the value of load (or execution-latency
	 * instruction) i is ready lean_load[i] milli-cycles after the
	 * block's start; left[] (nleft of them), the values of wdep[] (k <
	 * nwl) that may still be pending at the end (ready after the block's
	 * last dispatch slot), with their times, left_mask their registers;
	 * lean_ok: no load then takes a reorder-window entry. lean_key: the
	 * key (dpmu_ucore lean_key) of the cores the template holds on as
	 * planned (their type, lean_ok, the steps for their L1I line, and
	 * the block within their reorder window, with a dependence summary:
	 * block_timing's RUN_CLEAN), 0 when none is known; one compare then
	 * sends a clean execution to it. */
	const struct dpmu_core_type *lean_type;
	bool lean_ok;
	uint64_t lean_key;
	uint32_t *lean_load;
	uint32_t nleft;
	struct dpmu_ulean_left *left;
	dpmu_u128 left_mask;
	/* The template of an execution that reads one register pending at
	 * its entry, entry_reg (0: none yet), ready at T, for core type
	 * entry_type, when every load hits the L1D and nothing stalls: the
	 * value of load i is ready at max(t0 + entry_a[i], T + entry_b[i])
	 * (DPMU_UENTRY_NONE: not after T), t0 the block's start; that of
	 * wdep[k] likewise, from went_a[k] and went_b[k] (went_b[k]
	 * DPMU_UENTRY_SELF: the entry value itself, if later; went_a[k]
	 * DPMU_UENTRY_NONE: no load's). entry_ok: no load then takes a
	 * reorder-window entry while T is at most entry_thr after t0; no
	 * template for a block with an execution-latency instruction. */
	const struct dpmu_core_type *entry_type;
	uint8_t entry_reg;
	bool entry_ok;
	uint64_t entry_thr;
	uint32_t *entry_a, *entry_b, *went_a, *went_b;
};

#define DPMU_UENTRY_NONE UINT32_MAX
#define DPMU_UENTRY_SELF (UINT32_MAX - 1)

/* A written value a clean execution may leave pending: register reg's,
 * ready off milli-cycles after the block's start; exec, its dpmu_ureg
 * tlb field (DPMU_UREG_EXEC: a computed one's, else 0). */
struct dpmu_ulean_left {
	uint32_t off, exec;
	uint8_t reg;
};

enum { TAIL_BRANCH = 1, TAIL_FETCH = 2, TAIL_COND = 4 };

/* b planned again for an L1I line of 2^shift bytes (another core's). */
void dpmu_ublock_replan(struct dpmu_ublock *b, uint32_t shift);
/* b's executions on c are counted in b from now (b had none on c). */
void dpmu_ublock_adopt(struct dpmu_ucore *c, struct dpmu_ublock *b);
/* The engine that held b is going: its counts go nowhere. */
void dpmu_ublock_detach(struct dpmu_ublock *b);
/* At a delivery, the class events of the blocks c ran since the last one:
 * only the entries the delivery reads. */
void dpmu_ucore_fold_live(struct dpmu_ucore *c);
/* b's clean template for c's core type (the block path's lean case). */
void dpmu_ublock_lean_template(struct dpmu_ublock *b, const struct dpmu_ucore *c);
/* b's template for c's core type with register e pending at entry. */
void dpmu_ublock_entry_template(struct dpmu_ublock *b, const struct dpmu_ucore *c, uint8_t e);

#endif
