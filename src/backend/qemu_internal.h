/*
 * Shared by the qemu backend's files, not part of the API: qemu.c (the
 * shared region, the stream decoder, the scheduler, running and setup),
 * qemu_sync.c (futex, pipe, sleep and thread-start ordering in simulated
 * time), qemu_report.c (the regions, threads and functions of the report)
 * and qemu_elf.c (the program's checks before qemu runs it).
 */
#ifndef DPMU_BACKEND_QEMU_INTERNAL_H
#define DPMU_BACKEND_QEMU_INTERNAL_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "dynpmu/backend.h"
#include "dynpmu/qemu.h"
#include "dynpmu/regio_model.h"
#include "dynpmu/uarch.h"

/* The first executable regular file called `name` in the directories of
 * PATH, as execvp(3) finds a program: an empty entry is the current
 * directory, an unset PATH is the system's default (confstr _CS_PATH), a
 * candidate longer than `cap` is skipped. Writes its path to out; returns 0,
 * or -1 when there is none. */
int dpmu_qemu_find_in_path(const char *name, char *out, size_t cap);

/* ---- the backend's state ---------------------------------------------------------- */

#define REGION_MAX 64u
#define SYNC_TOKENS 256u
#define PIPE_WRITES 64u /* writes kept per pipe for the reads of them */
#define NEV_MAX 64u

/* The tag that ends a block's list of expected address tags (bdec.exp):
 * tags are 16 bits, so no stream word has it. */
#define EXP_END 0x10000u
/* q->texp: a block's list holds at most n + 1 tags, and the lists of
 * blocks bid and bid + 1 lie apart from entry first + bid on (first grows
 * by n with each block) */
#define TEXP_BYTES (((size_t)DPMU_QEMU_MAX_CODE + DPMU_QEMU_MAX_BLOCKS) * sizeof(uint32_t))

/* One named region's totals (marker.h), summed over its entries. */
struct region {
	uint32_t name;              /* string-table offset */
	uint64_t entries;
	uint64_t insns;
	uint64_t ev[NEV_MAX];
	/* markers that did not pair up (the report says so): entries whose
	 * thread ended first (closed there), ends with no entry open */
	uint64_t left_open, stray_ends;
};

/* One function's totals (--by-symbol). */
struct symstat {
	uint32_t name; /* 0: unknown */
	uint64_t insns, loads, stores, branches, cycles;
};

/* What a vCPU's stream decoder holds between words. */
struct vstream {
	unsigned core;
	/* the thread's number (the order threads first ran, from 0), given at
	 * its first turn; -1: none yet (the index's thread ended, or has not
	 * run) */
	int thread;
	struct dpmu_ucore *uc; /* the engine's handle of core */
	bool open;          /* a block entry is pending its addresses */
	bool open_fast;     /* ... and the fast mode holds for them (decode) */
	bool ended;         /* the last word taken was its thread's end */
	/* The scheduler's (its time is qemu_be's vtime[], which it sorts by):
	 * started, has had words or its thread is born; idle, found with none
	 * and set aside until it has. */
	bool started, idle;
	/* futex synchronisation (DPMU_QEMU_TAG_WAITED, _WOKE): the word the
	 * decoder stopped at, for the scheduler (dpmu_qemu_sync_word; 0: none); stalled,
	 * its wait returned woken but its waker's wake is not in simulated
	 * time yet (stall_addr: the futex); woken, brought back by a wake
	 * while set aside in a wait, its words not come yet */
	uint64_t sync;
	bool stalled, woken;
	uint64_t stall_addr;
	uint64_t stall_bytes; /* a pipe's read stalled: the bytes it waits for */
	/* a thread's start (DPMU_QEMU_TAG_CHILD): unborn, the index's next
	 * thread waits for its parent's clone in simulated time (every vCPU
	 * but 0 until then, and one whose thread ended); birth_known, the
	 * parent's clone came first, at birth_t, for the thread after the one
	 * still running there */
	bool unborn, birth_known;
	double birth_t;
	/* the last word taken was a call that may wait (DPMU_QEMU_TAG_WAIT_CALL,
	 * _SLEEP: its SVC block has retired) */
	bool in_call;
	/* asleep: in a sleep of a given length; its time is where the sleep
	 * ends, which its core reaches at its next turn (sleep_settle), from
	 * asleep_from */
	bool asleep;
	double asleep_from;
	uint64_t aside_addr; /* set aside in a futex wait: its futex (else 0) */
	const struct bdec *blk; /* the open block's, classified (block_first) */
	/* the open block's addresses: the indices of the instructions that
	 * made one, in the order they ran, and the address (the first access)
	 * of each by index */
	uint32_t *aidx;     /* both DPMU_QEMU_TAG_ADDR_MAX long, one allocation (stream_alloc) */
	uint32_t na;
	uint32_t next;      /* the least index a new address may have */
	uint64_t *abyidx;
	struct {
		uint32_t idx, name;
		bool end;
	} rev[32];
	unsigned nrev;
	/* the regions open on this stream, each once (in the order they
	 * opened), with the entries of each still open: an event counts once
	 * in a region however deep its entries nest (recursion) */
	unsigned depth;
	uint32_t stack[REGION_MAX];
	uint32_t nest[REGION_MAX];
	uint64_t insns;
	/* instructions of a turn the queue ran out in before the quantum:
	 * the turn goes on with the next words, so where turns end (and the
	 * monitor's checks between them) does not depend on how the words
	 * arrived */
	uint64_t turn_left;
	/* its core's clock, looked up once when the vCPU is placed (0: the
	 * profile gives none, a cycle counts as a nanosecond) */
	double freq_hz;
	/* sampling (qemu_sample.c): the thread's shadow call stack, the
	 * symbol of the block that follows the one retiring (its last
	 * branch's target), the instructions left before an interrupt taken
	 * with skid */
	struct shadow_frame {
		uint64_t site;  /* the call instruction */
		uint64_t ret;   /* where it returns to */
		uint32_t fn;    /* the callee's symbol (string offset; 0: none) */
	} *sh;
	uint32_t sh_n, sh_cap;
	uint64_t sh_lost;   /* frames deeper than the stack holds */
	uint32_t next_sym;
	uint32_t skid_left;
};

/* What the decoder knows of a translated block once it has classified it:
 * all a block entry reads, in one place (the shared table's entry is read
 * once, when the block is classified). One cache line, aligned: a block
 * entry's lookup (q->bdec[bid]) is a shift, and an entry never straddles
 * two lines. */
struct bdec {
	_Alignas(64) struct dpmu_ublock *sum; /* the engine's summary; NULL: not classified */
	uint64_t vaddr;          /* the shared entry's, copied */
	uint32_t first, n;
	uint32_t ncheck;         /* entries of its tcheck list */
	/* The address count of an execution the summary may run: the number
	 * of instructions qemu reports accesses for; UINT32_MAX (no count
	 * reaches it) when the block has an instruction that never retires or
	 * the run counts per symbol, which take the per-instruction path. */
	uint32_t fast_na;
	/* The tags (index + 1) of its memory instructions in order, then
	 * EXP_END: the address words an execution that retires whole makes
	 * (decode's fast mode). In q->texp, from entry first + bid on. */
	const uint32_t *exp;
	/* exp + fast_na: where the fast mode's expected tags end in an
	 * execution the summary may run; NULL when fast_na is UINT32_MAX */
	const uint32_t *fast_end;
};

_Static_assert(sizeof(struct bdec) == 64, "a struct bdec is one cache line");

/* A vCPU's stream words, taken from its ring, waiting for their turn.
 * w has room for cap + 1 words: the one after the tail takes the word that
 * ends decode's fast loop (QUEUE_END). */
struct wqueue {
	uint64_t *w;
	size_t head, tail, cap;
};

/* What the backend does with the records it takes (DPMU_QEMU_DRAIN): model
 * them, the run; or, to measure what the front end and the transfer cost
 * without the model, read every word and drop it, or hand the slots back
 * unread. */
enum qemu_drain { QEMU_DRAIN_MODEL, QEMU_DRAIN_READ, QEMU_DRAIN_DISCARD };

struct qemu_be {
	struct dpmu_backend b; /* first: the monitor's view */
	struct dpmu_profile *profile;
	struct dpmu_model *model;
	struct dpmu_uarch *uarch;
	struct dpmu_regio_model rm;
	char program[4096];
	char qemu[4096];
	char plugin[4096];
	char sysroot[4096];
	char *const *argv;
	bool by_symbol;
	bool per_thread; /* vev: every report event per vCPU (dpmu_qemu_options) */
	int stdout_fd; /* the program's stdout (dpmu_qemu_options), 0: dynpmu's */
	unsigned place[DPMU_MAX_CORES]; /* vCPU i runs on place[i % nplace] */
	unsigned nplace;

	/* shared region */
	int fd;
	void *shm_base;
	struct dpmu_qemu_shm *shm;
	const struct dpmu_qemu_block *blocks;
	const struct dpmu_qemu_code *code;
	const char *str;

	/* decoder state */
	struct dpmu_insn *tmpl;  /* per code entry, once its block is classified */
	uint8_t *tmem;           /* per code entry: mem class | noretire << 2 */
	uint32_t *tcheck;        /* per block, from its first code entry on: the
				  * indices of its instructions with a memory
				  * class or that do not retire (tmem != 0) */
	uint32_t *texp;          /* per block, from entry first + bid on (n + 1
				  * entries, so the blocks' lists are apart):
				  * its bdec.exp list */
	struct bdec *bdec;       /* per block id */
	uint32_t bdec_end;       /* no block from this id on is classified */
	struct vstream vs[DPMU_QEMU_MAX_VCPUS];
	uint64_t per_core[DPMU_MAX_CORES];
	uint64_t since_tick;

	/* regions; per core, the vCPU whose turn it holds (core_take): what
	 * the core delivers goes to that one's open regions (vs[].stack) */
	struct region region[REGION_MAX];
	unsigned nregion;
	/* markers not counted: of a name beyond REGION_MAX, or beyond a
	 * block's room for them (vstream.rev) */
	uint64_t region_refused, markers_dropped;
	int core_vcpu[DPMU_MAX_CORES];  /* -1: none yet */
	/* the thread each core runs (vstream.thread; -1: none yet), the
	 * numbers given so far, and who is told of each change (on_switch) */
	int core_thread[DPMU_MAX_CORES];
	int nthreads;
	dpmu_backend_switch_fn on_switch;
	void *switch_ctx;
	uint64_t vev[DPMU_QEMU_MAX_VCPUS][NEV_MAX]; /* per_thread: report events per vCPU */
	int16_t *evmap;          /* event code -> report column; -1: none */
	unsigned nev;

	struct symstat *sym;
	size_t nsym, symcap;

	/* sampling (qemu_sample.c): on the block path when every watched
	 * counter counts the clock (sample_blocks), the engine's hooks then
	 * about hook_v; each block's address and function (the targets of
	 * calls and returns), an open-addressing table */
	bool sample, sample_blocks;
	unsigned skid;
	struct vstream *hook_v;
	struct block_sym {
		uint64_t vaddr;
		uint32_t sym;
	} *bsym;
	size_t nbsym, bsymcap;
	/* per core: the thread and instruction a sample is being taken at
	 * (v NULL: none), and the last instruction retired in sampling mode,
	 * where an interrupt that another tick takes first (with --skid)
	 * finds the core */
	struct {
		const struct vstream *v;
		uint64_t pc;
	} at[DPMU_MAX_CORES], last[DPMU_MAX_CORES];

	/* run */
	pid_t pid;
	/* pid while qemu runs and is not yet reaped, else 0: what a signal
	 * handler may send a signal to (dpmu_qemu_signal) without racing the
	 * reuse of a reaped pid */
	volatile sig_atomic_t live_pid;
	int status;
	bool exited;
	dpmu_backend_tick_fn tick;
	void *tick_ctx;
	uint64_t interval;
	struct dpmu_err *run_err;
	int run_rc;

	/* scheduling: the vCPUs' streams interleaved in simulated time
	 * (docs/frontend.md "Threads and interleaving") */
	struct wqueue wq[DPMU_QEMU_MAX_VCPUS];
	double vtime[DPMU_QEMU_MAX_VCPUS];  /* simulated ns each vCPU has run to */
	/* simulated ns each core is busy to: the end of the last turn on it
	 * (a core that threads share runs one at a time) */
	double core_free[DPMU_MAX_CORES];
	double idle_sum[DPMU_MAX_CORES];     /* simulated ns each core was idle */
	uint64_t idle_given[DPMU_MAX_CORES]; /* ... of which the engine has had */
	int lag_wait;                       /* vCPU the scheduler waits for, or -1 */
	bool lag_blocked;                   /* ... which was in a waiting system call */
	long long lag_probe_ns;             /* ... whose host thread's state is read next then */
	struct timespec lag_since;
	/* each pipe's writes, oldest first (pipe_wrote) */
	struct pipe_writes {
		struct {
			uint64_t end;
			double t;
		} w[PIPE_WRITES];
		unsigned n;
	} pipes[DPMU_QEMU_MAX_PIPES];
	/* wakes no stalled wait has taken yet, oldest first: a futex's guest
	 * address and the waker's simulated time (dpmu_qemu_sync_word) */
	struct {
		uint64_t addr;
		double t;
	} tok[SYNC_TOKENS];
	unsigned ntok;
	size_t last_got;                    /* records the last collect() took */
	bool resort;                        /* a sync word changed the candidates */
	struct dpmu_qemu_sched_stats sched; /* what the scheduler did (stat -v) */
	/* schedule()'s candidates in its order (sched_before), norder of them
	 * from order[first], a ring */
	uint8_t order[DPMU_QEMU_MAX_VCPUS];
	unsigned first, norder;
	uint64_t quantum;                   /* instructions a vCPU runs per turn (at least a block) */
	enum qemu_drain drain;              /* what becomes of the records (DPMU_QEMU_DRAIN) */
	uint64_t drain_sink;                /* QEMU_DRAIN_READ: every word read ends here */
	uint64_t period_ns, next_ns, since_check;
	uint32_t check_insns;               /* the delivery batch and check period */
	struct dpmu_backend_irq_cache irq; /* the interrupt lines, asked at every check */
};

static inline size_t wq_len(const struct wqueue *w)
{
	return w->tail - w->head;
}

/* The vCPUs qemu has started (at least one, at most the rings). */
static inline unsigned nvcpus(const struct qemu_be *q)
{
	unsigned nv = atomic_load(&q->shm->vcpus_seen);
	if (nv > DPMU_QEMU_MAX_VCPUS)
		nv = DPMU_QEMU_MAX_VCPUS;
	return nv ? nv : 1;
}

/* The string table's entry at off (NULL: none). */
static inline const char *name_at(const struct qemu_be *q, uint32_t off)
{
	if (!q->shm || off == 0 || off >= DPMU_QEMU_STR_BYTES)
		return NULL;
	return q->str + off;
}

/* ---- qemu.c's, for the others ------------------------------------------------------ */

/* vCPU i goes on at simulated time `now` (if later than its own): its core
 * was idle from the end of its last turn there until then. */
void dpmu_qemu_idle_to(struct qemu_be *q, unsigned i, double now);

/* v's thread ended: the regions still open on it are closed there. */
void dpmu_qemu_thread_end(struct qemu_be *q, struct vstream *v);

/* The monitor's tick now (its interval restarts). */
int dpmu_qemu_tick_now(struct qemu_be *q);

/* ---- qemu_sample.c ----------------------------------------------------------------- */

/* n instructions of v retired in sampling mode: each on its own, the
 * monitor's tick right after the one whose event overflows a counter
 * (skid: that many later), the shadow call stack following the calls and
 * returns. */
void dpmu_qemu_retire_sampled(struct qemu_be *q, struct vstream *v, const struct dpmu_insn *in,
			      size_t n);
/* v's thread ended or the stream is reused: its call stack goes. */
void dpmu_qemu_shadow_reset(struct vstream *v);
/* At the run's start, with the counters armed: whether blocks can run on
 * the block path (every watched counter counts the clock), the hooks. */
void dpmu_qemu_sample_start(struct qemu_be *q);
/* After a tick: the block path's watch on every core follows the counters. */
void dpmu_qemu_sample_rearm(struct qemu_be *q);
/* A block classified: its address and function, for the call stacks. */
void dpmu_qemu_sample_block(struct qemu_be *q, uint64_t vaddr, uint32_t sym);
/* The backend's dpmu_backend_ops.where. */
int dpmu_qemu_where(struct dpmu_backend *b, unsigned cpu, struct dpmu_backend_where *out,
		    struct dpmu_err *err);

/* ---- qemu_sync.c ------------------------------------------------------------------- */

/* What vCPU i's decoder stopped at (v->sync), after its turn: the thread's
 * end, a thread's start, a futex's wait or wake, a pipe's write or read, a
 * sleep, at the vCPU's time now. */
void dpmu_qemu_sync_word(struct qemu_be *q, unsigned i);

/* Whether a wake of the futex at addr is there that no wait has taken. */
bool dpmu_qemu_token_has(const struct qemu_be *q, uint64_t addr);

/* Nothing can run but stalled waits: with nothing new from qemu (or qemu
 * gone), the one furthest behind goes on at the latest time any vCPU has
 * reached. Returns whether one went. */
bool dpmu_qemu_sync_let_go(struct qemu_be *q, unsigned nv);

/* ---- qemu_options.c ---------------------------------------------------------------- */

/* --cpus LIST ("0-3,6") of a profile of ncores cores, as a mask. */
int dpmu_qemu_parse_cpus(const char *s, unsigned ncores, uint64_t *mask, struct dpmu_err *err);
/* q->place: the order in which the cores of mask take guest threads. */
void dpmu_qemu_placement(struct qemu_be *q, uint64_t mask, enum dpmu_qemu_place place);
/* qemu-aarch64 (DPMU_QEMU, else PATH) and the plugin (DPMU_PLUGIN, else
 * next to dynpmu), into out. */
int dpmu_qemu_find_qemu(char *out, size_t cap, struct dpmu_err *err);
int dpmu_qemu_find_plugin(char *out, size_t cap, struct dpmu_err *err);
/* the longest turn DPMU_QEMU_QUANTUM may ask for */
#define QEMU_QUANTUM_MAX DPMU_UARCH_BATCH_MAX
/* DPMU_QEMU_QUANTUM and DPMU_QEMU_DRAIN's values (s: NULL when unset). */
int dpmu_qemu_parse_quantum(const char *s, uint64_t *out, struct dpmu_err *err);
int dpmu_qemu_parse_drain(const char *s, enum qemu_drain *out, struct dpmu_err *err);

/* qemu_trace.c: vCPU i takes core c (its trace unit's context). */
void dpmu_qemu_trace_switch(struct qemu_be *q, unsigned c, unsigned i);

#endif
