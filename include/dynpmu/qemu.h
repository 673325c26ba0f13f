/*
 * Real aarch64 programs on the simulated cluster (docs/frontend.md):
 *
 *   insn class   src/frontend/insn_class.c: what an A64 encoding is, for the
 *                engine (struct dpmu_insn kind, branch kind, DPMU_IC_* flags)
 *   wire format  the shared memory between dynpmu and its qemu plugin
 *                (src/frontend/qemu/plugin.c): a header, the table of
 *                translated blocks, their encodings, a string table, and one
 *                lossless collector ring of 64-byte records per vCPU
 *   backend      src/backend/qemu.c: launches qemu-aarch64 with the plugin,
 *                drains the rings into the engine, ticks the monitor
 */
#ifndef DYNPMU_QEMU_H
#define DYNPMU_QEMU_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dynpmu/backend.h"
#include "dynpmu/error.h"
#include "dynpmu/uarch.h"

/* ---- instruction classification ------------------------------------------ */

/* Whether qemu is certain to report a memory access for the instruction:
 * the decoder treats a MUST instruction without one as not retired (its
 * access faulted); OPTIONAL ones (store-exclusive, DC ZVA, tag stores) may
 * legitimately have none. */
enum dpmu_iclass_mem {
	DPMU_ICLASS_MEM_NONE = 0,
	DPMU_ICLASS_MEM_MUST = 1,
	DPMU_ICLASS_MEM_OPTIONAL = 2,
};

struct dpmu_iclass {
	uint32_t flags;   /* DPMU_IC_* */
	uint16_t size;    /* load/store: bytes the instruction accesses */
	uint8_t kind;     /* enum dpmu_insn_kind */
	uint8_t br_kind;  /* enum dpmu_branch_kind (kind == DPMU_INSN_BRANCH) */
	uint8_t mem;      /* enum dpmu_iclass_mem */
	uint8_t noretire; /* UDF: raises an exception instead of retiring */
	uint8_t exec;     /* enum dpmu_exec_class */
};

/* Classify one A64 instruction from its encoding (Arm ARM C4.1 top-level
 * decode). Never fails: an unallocated encoding is DPMU_INSN_OTHER. */
void dpmu_iclass_decode(uint32_t enc, struct dpmu_iclass *out);

/* Register operands of one A64 instruction, for the timing model's
 * register-ready scoreboard, in the engine's DPMU_REG_* numbering
 * (dynpmu/uarch.h; 0: none). XZR/WZR is never listed; SVE/SME and
 * unallocated encodings list nothing (src/frontend/insn_regs.c). */
struct dpmu_iregs {
	uint8_t src[3];  /* registers read, 0-terminated-or-padded, no duplicates */
	uint8_t dst[3];  /* registers written, same */
	bool writeback;  /* a load/store's base is written back (DPMU_IC_WRITEBACK) */
};
/* Never fails; at most three of each, a load/store's base always kept. */
void dpmu_iregs_decode(uint32_t enc, struct dpmu_iregs *out);

/* ---- wire format ------------------------------------------------------------ */

#define DPMU_QEMU_MAGIC 0x31554d4551554d50ull /* "PMUQEMU1" */
#define DPMU_QEMU_VERSION 7u
#define DPMU_QEMU_MAX_VCPUS 64u           /* rings; a later thread is refused */
#define DPMU_QEMU_RING_SLOTS 4096u
/* Records per publication of a ring's head. The consumer polls head, so
 * each publication moves head's line to the consumer and the next one
 * waits for it back: at 8 that trip came every 48 words. A system call,
 * a full ring and the program's end publish at once whatever the batch. */
#define DPMU_QEMU_RING_BATCH 64u
#define DPMU_QEMU_MAX_BLOCKS (1u << 20)   /* translated blocks in one run */
#define DPMU_QEMU_MAX_CODE (1u << 23)     /* translated instructions in one run */
#define DPMU_QEMU_STR_BYTES (1u << 22)    /* symbol and region names */

/* A stream word (8 bytes; six per record: time and val[0..4]). Bits 63:48
 * tag it: a user-mode guest address has them clear (48-bit VA, TBI tag
 * already removed by qemu), so an address entry is (insn index + 1) << 48 |
 * address. */
#define DPMU_QEMU_TAG_SHIFT 48
#define DPMU_QEMU_TAG_BLOCK 0xffffull     /* low 32 bits: block id */
#define DPMU_QEMU_TAG_REGION 0xfffeull    /* bit 47: end; low 32: name offset */
/* The vCPU's thread ended (its last word): its index may be given to a
 * later thread, whose words continue the stream. Low 48 bits: the futex
 * the kernel wakes at its end (CLONE_CHILD_CLEARTID, set_tid_address;
 * pthread_join waits on it), or 0. */
#define DPMU_QEMU_TAG_THREAD_END 0xfffdull
/* Futex synchronisation, after the system call's SVC block (low 48 bits:
 * the futex's guest address): the thread's futex wait returned woken, or
 * its futex wake woke a thread (one word per thread woken). A woken thread
 * goes on no earlier in simulated time than its waker's wake
 * (docs/frontend.md "Threads and interleaving"). */
#define DPMU_QEMU_TAG_WAITED 0xfffcull
#define DPMU_QEMU_TAG_WOKE 0xfffbull
/* The thread started one whose end wakes this futex (after the clone):
 * a wake of it left from an earlier thread is stale. */
#define DPMU_QEMU_TAG_SPAWN 0xfffaull
/* The thread started a thread, now qemu's vCPU of this index (low bits;
 * after the clone): the new thread starts in simulated time where its
 * parent's clone returned. */
#define DPMU_QEMU_TAG_CHILD 0xfff9ull
/* The thread enters a system call that may wait (the plugin's table:
 * futex waits, sleeps, polls), after the call's SVC block: that block ran
 * to its end. */
#define DPMU_QEMU_TAG_WAIT_CALL 0xfff8ull
/* The thread's futex wait returned at once (EAGAIN: the futex's value had
 * changed), after the call: it did not sleep, and goes on at its own time
 * even if it was set aside meanwhile. */
#define DPMU_QEMU_TAG_NOT_WAITED 0xfff7ull
/* The thread enters a sleep of a length the call gives (low 48 bits: ns;
 * nanosleep, clock_nanosleep; with TIMER_ABSTIME what is left of it on the
 * host clock, which the guest reads), after its SVC block,
 * in place of DPMU_QEMU_TAG_WAIT_CALL: it goes on that much later in
 * simulated time, its core idle meanwhile. */
#define DPMU_QEMU_TAG_SLEEP 0xfff6ull
/* A pipe between the program's threads (docs/frontend.md "Threads and
 * interleaving"), after a read or write of it that moved data: low 48 bits
 * DPMU_QEMU_PIPE_WORD(pipe, bytes), the pipe's index in the plugin's table
 * and how far in the pipe's bytes the write wrote or the read read. A read
 * goes on no earlier than the write of its last byte. */
#define DPMU_QEMU_TAG_PIPE_WROTE 0xfff5ull
#define DPMU_QEMU_TAG_PIPE_READ 0xfff4ull
#define DPMU_QEMU_MAX_PIPES 64u
#define DPMU_QEMU_PIPE_SHIFT 42
#define DPMU_QEMU_PIPE_BYTES_MASK ((1ull << DPMU_QEMU_PIPE_SHIFT) - 1)
#define DPMU_QEMU_PIPE_WORD(pipe, bytes) \
	((uint64_t)(pipe) << DPMU_QEMU_PIPE_SHIFT | ((bytes) & DPMU_QEMU_PIPE_BYTES_MASK))
/* What shm->wait_addr holds for a thread reading pipe k: odd, as no
 * futex's (4-byte aligned) address is. */
#define DPMU_QEMU_PIPE_KEY(pipe) ((uint64_t)(pipe) << 2 | 1u)
/* The words a system call's end writes (PIPE_READ up to THREAD_END): the
 * decoder retires the open block at each and stops for the scheduler. */
#define DPMU_QEMU_TAG_SYNC_FIRST DPMU_QEMU_TAG_PIPE_READ
#define DPMU_QEMU_TAG_SYNC_LAST DPMU_QEMU_TAG_THREAD_END
#define DPMU_QEMU_TAG_ADDR_MAX 0xfff0ull  /* index + 1 up to this */
#define DPMU_QEMU_ADDR_MASK ((1ull << 48) - 1)
#define DPMU_QEMU_WORDS 6u
/* record kind: DPMU_QEMU_REC_STREAM | words << 8 */
#define DPMU_QEMU_REC_STREAM 0x51u

/* A translated block: its instructions' encodings and symbols are
 * code[first .. first + n). ready is stored last (release). */
struct dpmu_qemu_block {
	uint64_t vaddr;
	uint32_t first;
	uint32_t n;
	_Atomic uint32_t ready;
	uint32_t pad;
};

struct dpmu_qemu_code {
	uint32_t enc;
	uint32_t sym; /* offset of the function name in the string table; 0: none */
};

/* An executable mapping of an AArch64 ELF file (the program, its
 * interpreter, a shared object), in guest addresses: what a sample's
 * address is looked up in (perf's PERF_RECORD_MMAP2). path: the file as
 * the host names it, in the string table. */
#define DPMU_QEMU_MAX_MAPS 256u
struct dpmu_qemu_map {
	uint64_t start, len, pgoff;
	uint32_t path;
	uint32_t pad;
};

/* The instruction is the load of a region marker (include/dynpmu/marker.h). */
#define DPMU_QEMU_SYM_NONE 0u

struct dpmu_qemu_shm {
	uint64_t magic;
	uint32_t version;
	uint32_t nrings;
	uint64_t size;              /* bytes of the whole mapping */
	uint64_t ring_off, ring_stride;
	uint64_t block_off, code_off, str_off;
	/* plugin side */
	_Atomic uint32_t nblocks;   /* blocks allocated */
	_Atomic uint32_t ncode;     /* code entries allocated */
	_Atomic uint32_t nstr;      /* string bytes allocated (offset 0 is "") */
	_Atomic uint32_t vcpus_seen;/* highest vCPU index + 1 */
	_Atomic uint32_t failed;    /* the plugin hit a limit: errmsg says which */
	uint32_t pad;
	uint64_t start_code, end_code, entry_code;
	char errmsg[256];
	/* Nonzero while vCPU i's thread is in a system call that waits for
	 * another thread or for time (a futex wait, a sleep, a poll), stored
	 * after everything the thread staged was published (release). */
	_Atomic uint32_t waiting[DPMU_QEMU_MAX_VCPUS];
	/* The host thread id of vCPU i's thread (0: not known yet), stored at
	 * its first system call before that call's words are published: a
	 * thread in a call the plugin does not know to wait is asked of the
	 * kernel whether it sleeps there (/proc/PID/task/TID). */
	_Atomic uint32_t tid[DPMU_QEMU_MAX_VCPUS];
	/* Processes the program forked: each stays silent (not counted). */
	_Atomic uint32_t forks;
	uint32_t pad2;
	/* What a wake of which brings vCPU i's thread back, stored at each
	 * system call (before waiting[i]): the futex (guest address) a futex
	 * wait waits on, or the key of the pipe a read reads (as in
	 * DPMU_QEMU_TAG_PIPE_READ), else 0. */
	_Atomic uint64_t wait_addr[DPMU_QEMU_MAX_VCPUS];
	/* The executable mappings seen so far (a block translated outside
	 * every one makes the plugin read its process's maps again), each
	 * stored before nmaps counts it (release). */
	_Atomic uint32_t nmaps;
	uint32_t pad3;
	struct dpmu_qemu_map maps[DPMU_QEMU_MAX_MAPS];
};

/* Bytes of the whole shared region. */
uint64_t dpmu_qemu_shm_bytes(void);

/* ---- backend ---------------------------------------------------------------- */

enum dpmu_qemu_place {
	DPMU_QEMU_PLACE_SPREAD = 0, /* threads across clusters and core types, in turn */
	DPMU_QEMU_PLACE_BIG = 1,    /* the fastest core type first */
	DPMU_QEMU_PLACE_LITTLE = 2, /* the slowest core type first */
};

struct dpmu_qemu_options {
	const char *profile;       /* NULL: the default */
	const char *program;       /* path, or a name looked up in PATH */
	char *const *argv;         /* argv[0] .. NULL, passed to the guest */
	const char *sysroot;       /* qemu -L for dynamic programs */
	const char *cpus;          /* "0-3,6": cores guest threads may run on; NULL: all */
	enum dpmu_qemu_place place;
	bool by_symbol;            /* count per function */
	/* every report event per vCPU, not only its instructions: a core that
	 * threads share delivers its pending events at each hand-over */
	bool per_thread;
	/* The program's standard output: dynpmu's when 0 (fd 0 is standard
	 * input, never one to write to), else this descriptor, for a caller
	 * that prints while the program runs (dynpmu demo's snapshot loop). */
	int stdout_fd;
	/* Sampling (dynpmu record): overflow interrupts with no skid, each
	 * instruction retired on its own (the block path could not stop at
	 * the one that overflows), every thread's shadow call stack kept;
	 * `skid` instructions between the overflow and the interrupt. */
	bool sample;
	unsigned skid;
};

/* The executable mappings of a run (dpmu_qemu_map's, the host's paths):
 * writes at most cap of them; returns how many there are. path points
 * into the backend (valid until it is destroyed). */
struct dpmu_qemu_mapping {
	uint64_t start, len, pgoff;
	const char *path;
};
size_t dpmu_qemu_mappings(const struct dpmu_backend *b, struct dpmu_qemu_mapping *out, size_t cap);
/* The process id qemu ran the program as (0 before the run). */
uint32_t dpmu_qemu_pid(const struct dpmu_backend *b);

/* Check that `program` is something the simulated cluster can run: find it
 * (PATH when it has no '/'), an ELF file, for aarch64, and if dynamic, its
 * loader (PT_INTERP) and libraries (DT_NEEDED) present under sysroot. The
 * path found goes to resolved. Messages name the program and say what to do. */
int dpmu_qemu_check_program(const char *program, const char *sysroot, char *resolved,
			    size_t cap, struct dpmu_err *err);

/* Check the program (ELF, aarch64, its loader and libraries in the
 * sysroot), find qemu-aarch64 and the plugin, and build model, engine and
 * driver. The program starts in ops->run. */
int dpmu_qemu_create(const struct dpmu_qemu_options *opt, struct dpmu_backend **out,
		     struct dpmu_err *err);

/* After a run: how the program ended (waitpid status), and the instructions
 * each core retired. */
int dpmu_qemu_wait_status(const struct dpmu_backend *b);
uint64_t dpmu_qemu_insns(const struct dpmu_backend *b, unsigned core);

/* What the scheduler that interleaves the vCPUs did in a run
 * (docs/frontend.md "Threads and interleaving"). */
struct dpmu_qemu_sched_stats {
	uint64_t turns;         /* turns given, one vCPU's quantum each */
	/* vCPUs set aside without words: at once in a system call that waits
	 * (futex, sleep, poll: shm->waiting), in another system call (found
	 * asleep in the host, asked every 100 us: aside_asleep of them, else
	 * after 50 ms), after 50 ms outside one (a preempted host thread); at
	 * once when its thread has ended */
	uint64_t aside_waiting, aside_syscall, aside_asleep, aside_running, aside_ended;
	/* futex waits that returned woken: their waker's wake was in simulated
	 * time already (paired) or came while they stalled (waited); let go
	 * with no wake in the stream when nothing else could run */
	uint64_t sync_paired, sync_waited, sync_let_go;
	/* threads started at their parent's clone, or let go without one
	 * when nothing else could run */
	uint64_t born, born_let_go;
	/* sleeps of a length the call gave, and their simulated ns in all */
	uint64_t slept, slept_ns;
	/* reads of a pipe that went on at a write of it in simulated time */
	uint64_t pipe_paired;
	uint64_t idle_ns;       /* host time dynpmu slept with nothing to run */
};
void dpmu_qemu_sched_stats(const struct dpmu_backend *b, struct dpmu_qemu_sched_stats *out);

/* Whether the program (qemu-aarch64) runs: started and not yet reaped;
 * if so and sig is not 0, signal sig is sent to it (qemu hands it to the
 * guest). Async-signal-safe: for a command's SIGINT or SIGTERM handler,
 * so that the run ends with the program and its counts are reported. */
bool dpmu_qemu_signal(struct dpmu_backend *b, int sig);

/* The exit status dynpmu should exit with: the program's, or 128 + signal. */
int dpmu_qemu_exit_code(const struct dpmu_backend *b);

/* Parse a place policy name ("big", "little", "spread"). */
int dpmu_qemu_place_parse(const char *s, enum dpmu_qemu_place *out, struct dpmu_err *err);

/* Events to report per region and per symbol: core-PMU event codes of the
 * first core type (as the monitor's event list holds them) with names. */
struct dpmu_qemu_report_event {
	const char *name;
	int32_t code; /* core PMU event number; < 0: not countable per region */
};

/* Before the run: the events regions count (they are gathered while the
 * program runs). */
int dpmu_qemu_set_region_events(struct dpmu_backend *b, const struct dpmu_qemu_report_event *ev,
				unsigned nev, struct dpmu_err *err);

/* Print the per-region (marker.h) and, with by_symbol, per-function tables;
 * nothing when there is neither. Also what happened to the program (exit
 * status or the signal that killed it). */
void dpmu_qemu_report(const struct dpmu_backend *b, const struct dpmu_qemu_report_event *ev,
		      unsigned nev, const char *sep, FILE *out);

/* One function of a --by-symbol run (name "[unknown]" without symbols). */
struct dpmu_qemu_symbol {
	const char *name;         /* valid while the backend lives */
	uint64_t cycles, insns, loads, stores, branches;
};

/* The functions of a --by-symbol run, the most core cycles first: writes at
 * most `cap` to `out` and returns how many there are in all. */
size_t dpmu_qemu_symbols(const struct dpmu_backend *b, struct dpmu_qemu_symbol *out, size_t cap);

/* The trace units (dynpmu trace record, src/backend/qemu_trace.c): attach
 * a trace sink to cpu's trace unit (the caller owns it; it must outlive
 * the run), watch every instruction given to it, put a timestamp into its
 * trace now (a PMU snapshot's time: true when one was written), and its
 * state (include/dynpmu/model.h, "the trace unit at work"). */
int dpmu_qemu_trace_attach(struct dpmu_backend *b, unsigned cpu, struct dpmu_etm_sink *sink,
			   struct dpmu_err *err);
void dpmu_qemu_trace_seen(struct dpmu_backend *b, unsigned cpu, dpmu_etm_seen_fn fn, void *ctx);
bool dpmu_qemu_trace_mark(struct dpmu_backend *b, unsigned cpu, uint64_t time_ns);
int dpmu_qemu_trace_status(const struct dpmu_backend *b, unsigned cpu,
			   struct dpmu_etm_status *out);
/* After enabling cpu's trace unit mid-run: it learns the thread that runs
 * there now (its context ID). */
void dpmu_qemu_trace_context(struct dpmu_backend *b, unsigned cpu);

#endif
