/*
 * dynpmu's qemu-user TCG plugin (docs/frontend.md): thin by design. It
 * describes each translated block once (its encodings and function names)
 * in the shared region dynpmu created, and streams, per vCPU, which block
 * ran and the address of each memory access into that vCPU's lossless
 * collector ring (include/dynpmu/qemu.h "wire format"). Classification,
 * branch outcomes, regions and every monitoring feature live in dynpmu.
 *
 * Arguments: fd=N (the shared region, inherited from dynpmu) and/or
 * count=PATH (an independent instruction count for tests: a call per
 * executed instruction that adds one to its vCPU's count, the sum written
 * to PATH at exit; alongside fd=N it counts the very run dynpmu measures).
 *
 * The ABI gives callbacks no context of their own, so the plugin's state is
 * one static object: qemu loads a plugin once per process.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "dynpmu/collect.h"
#include "dynpmu/marker.h"
#include "dynpmu/qemu.h"
#include "frontend/qemu/guest_syscalls.h"
#include "frontend/qemu/plugin_abi.h"

DPMU_EXPORT int qemu_plugin_version = 1;

/* mem callback userdata: instruction index in its block, marker bits */
#define UD_MARK_BEGIN 0x10000u
#define UD_MARK_END 0x20000u

struct vcpu {
	struct dpmu_ring *ring;
	/* The record being filled, in the ring's slot itself (claimed at its
	 * first word, committed at its last): a word costs one store, not a
	 * store here and a copy at the end. NULL between records. */
	struct dpmu_record *slot;
	unsigned nw; /* words in slot */
	uint32_t last_idx; /* index of the last address entry since the block entry */
	uint32_t tid;      /* its host thread's id once shm->tid has it, else 0 */
	/* the futex call in progress (on_syscall to on_syscall_ret): its
	 * operation (A64_FUTEX_OP_FLAGS taken off; -1: not a futex call) and
	 * address */
	int64_t futex_op;
	uint64_t futex_addr;
	/* the futex the kernel wakes when the thread ends (0: none) */
	uint64_t ctid;
	/* the pipe the call in progress reads or writes (pl.pipe's index;
	 * -1: none); a write's count and where its bytes end in the pipe's,
	 * taken at the call */
	int pipe;
	bool pipe_write;
	uint64_t pipe_count, pipe_end;
};

/* The futex the thread being created here will have woken at its end: set
 * by the parent's clone call, read by on_vcpu_init, which qemu-user runs
 * in the parent during that call. */
static __thread uint64_t spawn_ctid;
/* The vCPU index + 1 of the thread being created here (0: none), set by
 * on_vcpu_init in the parent's clone call as above: its start in
 * simulated time is the parent's return from that call
 * (DPMU_QEMU_TAG_CHILD). */
static __thread unsigned spawn_child;

#define NAMES_MAX 4096u

static struct plugin {
	struct dpmu_qemu_shm *shm;
	struct dpmu_qemu_block *blocks;
	struct dpmu_qemu_code *code;
	char *str;
	struct vcpu vcpu[DPMU_QEMU_MAX_VCPUS];
	pthread_mutex_t lock;       /* translation and name interning */
	uintptr_t guest_base;       /* host address of guest address 0 */
	bool have_base;
	/* the mappings may have changed since maps_scan last read them (a
	 * mmap or mprotect returned; at first, nothing is read yet) */
	atomic_bool maps_dirty;
	/* interned names: qemu's symbol strings are stable, keyed by pointer;
	 * region names by content */
	const void *key[NAMES_MAX];
	uint32_t off[NAMES_MAX];
	bool by_content[NAMES_MAX];
	/* count mode: one count per vCPU index, a cache line each. qemu-user
	 * gives a new thread an index no live thread has (the lowest above
	 * every live one), so each count has one writer at a time and needs no
	 * atomic add; an index beyond them shares the atomic one. */
	struct {
		_Alignas(64) uint64_t n;
	} count[DPMU_QEMU_MAX_VCPUS];
	_Atomic uint64_t count_more;
	char count_path[4096];
	/* This process is one the program forked (on_fork_child). */
	bool forked;
	/* The pipes the program's threads read and write (by inode; 0: a free
	 * slot): the bytes written (counted when a write starts, as its data
	 * may reach a reader before the write returns) and read, in all. */
	struct {
		_Atomic uint64_t inode;
		_Atomic uint64_t written, read;
	} pipe[DPMU_QEMU_MAX_PIPES];
} pl = {.lock = PTHREAD_MUTEX_INITIALIZER, .maps_dirty = true};

static void fail(const char *msg)
{
	if (!pl.shm)
		return;
	uint32_t expect = 0;
	if (atomic_compare_exchange_strong(&pl.shm->failed, &expect, 1u))
		snprintf(pl.shm->errmsg, sizeof pl.shm->errmsg, "%s", msg);
}

/* ---- streaming --------------------------------------------------------------- */

/* Publish the record being filled, full or not (a thread or the program
 * ends): its kind says how many of its words are the stream's. */
static void push(struct vcpu *v)
{
	if (!v->slot)
		return;
	v->slot->kind = DPMU_QEMU_REC_STREAM | v->nw << 8;
	dpmu_ring_commit(v->ring);
	v->slot = NULL;
	v->nw = 0;
}

static inline void emit(struct vcpu *v, uint64_t word)
{
	if (!v->slot) {
		/* Lossless: a full ring makes this vCPU wait here for dynpmu (if
		 * dynpmu dies, the kernel kills qemu: PR_SET_PDEATHSIG,
		 * src/backend/qemu.c). A refusal (dynpmu never asks these rings
		 * to retire) loses the word, as a refused push would. */
		if (dpmu_ring_claim(v->ring, &v->slot))
			return;
		v->slot->time = word;
		v->nw = 1;
		return;
	}
	v->slot->val[v->nw - 1] = word;
	if (++v->nw == DPMU_QEMU_WORDS)
		push(v);
}

static inline struct vcpu *vcpu_of(unsigned idx)
{
	if (pl.forked)
		return NULL;
	if (idx >= DPMU_QEMU_MAX_VCPUS) {
		fail("more guest threads at once than dynpmu has rings (64)");
		return NULL;
	}
	return &pl.vcpu[idx];
}

static void on_tb_exec(unsigned vcpu_index, void *udata)
{
	struct vcpu *v = vcpu_of(vcpu_index);
	if (!v)
		return;
	emit(v, DPMU_QEMU_TAG_BLOCK << DPMU_QEMU_TAG_SHIFT | (uint32_t)(uintptr_t)udata);
	v->last_idx = UINT32_MAX;
}

static uint32_t intern_locked(const void *key, const char *s, bool by_content);
static void count_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
static void count_exit(qemu_plugin_id_t id, void *udata);

static void on_mem(unsigned vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	(void)info;
	struct vcpu *v = vcpu_of(vcpu_index);
	if (!v)
		return;
	uint32_t ud = (uint32_t)(uintptr_t)udata, idx = ud & 0xffffu;
	/* One address per instruction: a pair or a structure load makes
	 * several accesses, the engine takes the first (its lowest line). */
	if (idx == v->last_idx)
		return;
	v->last_idx = idx;
	emit(v, (uint64_t)(idx + 1) << DPMU_QEMU_TAG_SHIFT | (vaddr & DPMU_QEMU_ADDR_MASK));
	if (!(ud & (UD_MARK_BEGIN | UD_MARK_END)) || !pl.have_base)
		return;
	/* A region marker's load: vaddr is the name (marker.h). The load has
	 * just succeeded, so its first byte is mapped; a C string is mapped up
	 * to its NUL. */
	char name[DPMU_MARKER_NAME_MAX];
	const char *g = (const char *)(pl.guest_base + (uintptr_t)vaddr);
	size_t n = 0;
	while (n + 1 < sizeof name && g[n])
		n++;
	memcpy(name, g, n);
	name[n] = '\0';
	pthread_mutex_lock(&pl.lock);
	uint32_t off = intern_locked(NULL, name, true);
	pthread_mutex_unlock(&pl.lock);
	uint64_t end = (ud & UD_MARK_END) ? 1ull << 47 : 0;
	emit(v, DPMU_QEMU_TAG_REGION << DPMU_QEMU_TAG_SHIFT | end | off);
}

/* ---- translation --------------------------------------------------------------- */

static uint32_t str_add(const char *s)
{
	size_t len = strlen(s) + 1;
	uint32_t off = atomic_fetch_add(&pl.shm->nstr, (uint32_t)len);
	if ((uint64_t)off + len > DPMU_QEMU_STR_BYTES) {
		fail("the program has more symbol and region names than the string table holds");
		return 0;
	}
	memcpy(pl.str + off, s, len);
	return off;
}

static uint32_t intern_locked(const void *key, const char *s, bool by_content)
{
	uint64_t h = by_content ? 1469598103934665603ull : (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull;
	if (by_content)
		for (const char *p = s; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (unsigned probe = 0; probe < NAMES_MAX; probe++) {
		unsigned i = (unsigned)((h >> 20) + probe) % NAMES_MAX;
		if (!pl.off[i]) {
			uint32_t off = str_add(s);
			if (!off)
				return 0;
			pl.key[i] = key;
			pl.off[i] = off;
			pl.by_content[i] = by_content;
			return off;
		}
		if (pl.by_content[i] != by_content)
			continue;
		if (by_content ? strcmp(pl.str + pl.off[i], s) == 0 : pl.key[i] == key)
			return pl.off[i];
	}
	return 0; /* table full: the name is reported as unknown */
}

/* n bytes of guest memory at addr into buf, read through the kernel: a
 * bad pointer (the call then fails with EFAULT) must not fault qemu here. */
static bool guest_read(uint64_t addr, void *buf, size_t n)
{
	if (!pl.have_base || !addr)
		return false;
	struct iovec to = {buf, n};
	struct iovec from = {(void *)(pl.guest_base + (uintptr_t)addr), n};
	return process_vm_readv(getpid(), &to, 1, &from, 1, 0) == (ssize_t)n;
}

/* ---- mappings ---------------------------------------------------------------------- */

/* Whether guest address a lies in a mapping already published. */
static bool map_known(uint64_t a)
{
	uint32_t n = atomic_load_explicit(&pl.shm->nmaps, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++)
		if (a - pl.shm->maps[i].start < pl.shm->maps[i].len)
			return true;
	return false;
}

/* Whether bytes [off, off + len) of the file `path` hold code of an
 * AArch64 ELF file: a loadable, executable segment (PT_LOAD with PF_X)
 * overlaps them. qemu maps the guest's code readable only (it runs its
 * translations), so the host's permissions do not say. */
static bool is_aarch64_code(const char *path, uint64_t off, uint64_t len)
{
	unsigned char h[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h && !memcmp(h, "\177ELF", 4) &&
		  h[4] == 2 /* ELFCLASS64 */ && h[5] == 1 /* little-endian */ &&
		  (h[18] | h[19] << 8) == 183 /* EM_AARCH64 */;
	bool code = false;
	if (ok) {
		uint64_t phoff;
		memcpy(&phoff, h + 0x20, 8);
		unsigned phentsize = h[0x36] | h[0x37] << 8, phnum = h[0x38] | h[0x39] << 8;
		for (unsigned i = 0; i < phnum && i < 256 && phentsize >= 56 && !code; i++) {
			unsigned char ph[56];
			if (pread(fd, ph, sizeof ph, (off_t)(phoff + (uint64_t)i * phentsize)) !=
			    (ssize_t)sizeof ph)
				break;
			uint32_t type, flags;
			uint64_t p_off, p_filesz;
			memcpy(&type, ph, 4);
			memcpy(&flags, ph + 4, 4);
			memcpy(&p_off, ph + 8, 8);
			memcpy(&p_filesz, ph + 32, 8);
			code = type == 1 /* PT_LOAD */ && (flags & 1) /* PF_X */ &&
			       p_off < off + len && off < p_off + p_filesz;
		}
	}
	close(fd);
	return code;
}

/* The process's mappings of AArch64 ELF code (qemu's own libraries are
 * x86 ones), published in guest addresses; each once. Under pl.lock. */
static void maps_scan(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	char line[4096 + 128];
	while (fgets(line, sizeof line, f)) {
		unsigned long long lo, hi, off;
		char perm[8];
		int at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perm, &off, &at) != 4 ||
		    !at || line[at] != '/' || lo < pl.guest_base)
			continue;
		char *path = line + at;
		path[strcspn(path, "\n")] = '\0';
		uint64_t g = lo - pl.guest_base;
		if (map_known(g) || !is_aarch64_code(path, off, hi - lo))
			continue;
		uint32_t n = atomic_load_explicit(&pl.shm->nmaps, memory_order_relaxed);
		if (n >= DPMU_QEMU_MAX_MAPS)
			break; /* the rest are looked up as unknown */
		uint32_t name = intern_locked(NULL, path, true);
		if (!name)
			break;
		pl.shm->maps[n] = (struct dpmu_qemu_map){g, hi - lo, off, name, 0};
		atomic_store_explicit(&pl.shm->nmaps, n + 1, memory_order_release);
	}
	fclose(f);
}

static uint32_t insn_enc(const struct qemu_plugin_insn *insn)
{
	uint32_t enc = 0;
	if (qemu_plugin_insn_size(insn) == 4)
		memcpy(&enc, qemu_plugin_insn_data(insn), 4);
	return enc;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	size_t n = qemu_plugin_tb_n_insns(tb);
	if (pl.forked || n == 0 || n >= DPMU_QEMU_TAG_ADDR_MAX)
		return;
	pthread_mutex_lock(&pl.lock);
	uint32_t bid = atomic_fetch_add(&pl.shm->nblocks, 1u);
	uint32_t first = atomic_fetch_add(&pl.shm->ncode, (uint32_t)n);
	if (bid >= DPMU_QEMU_MAX_BLOCKS || (uint64_t)first + n > DPMU_QEMU_MAX_CODE) {
		fail("the program translated more code than the shared region holds");
		pthread_mutex_unlock(&pl.lock);
		return;
	}
	uint32_t prev_enc = 0;
	bool scanned = false;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint32_t enc = insn_enc(insn);
		if (!pl.have_base) {
			/* User mode maps the guest linearly: one instruction's host
			 * and guest addresses give the offset for all. */
			pl.guest_base = (uintptr_t)qemu_plugin_insn_haddr(insn) -
					(uintptr_t)qemu_plugin_insn_vaddr(insn);
			pl.have_base = true;
			/* the program is loaded by now (not yet at install time) */
			pl.shm->start_code = qemu_plugin_start_code();
			pl.shm->end_code = qemu_plugin_end_code();
			pl.shm->entry_code = qemu_plugin_entry_code();
		}
		if (i == 0 && !scanned && atomic_load(&pl.maps_dirty) &&
		    !map_known(qemu_plugin_insn_vaddr(insn))) {
			atomic_store(&pl.maps_dirty, false);
			maps_scan(); /* code from a mapping not seen yet */
			scanned = true;
		}
		const char *sym = qemu_plugin_insn_symbol(insn);
		pl.code[first + i].enc = enc;
		pl.code[first + i].sym = sym ? intern_locked(sym, sym, false) : DPMU_QEMU_SYM_NONE;
		struct dpmu_iclass c;
		dpmu_iclass_decode(enc, &c);
		if (c.mem != DPMU_ICLASS_MEM_NONE) {
			uint32_t ud = (uint32_t)i;
			/* a marker's load that starts the block: its magic
			 * ended the one before (qemu ends a block at a page's
			 * end), and falls through to it (a jump cannot land
			 * inside the marker's asm statement) */
			if ((enc & DPMU_MARKER_LOAD_MASK) == DPMU_MARKER_LOAD_INSN && i == 0 &&
			    !guest_read(qemu_plugin_insn_vaddr(insn) - 4, &prev_enc, sizeof prev_enc))
				prev_enc = 0;
			if ((enc & DPMU_MARKER_LOAD_MASK) == DPMU_MARKER_LOAD_INSN) {
				if (prev_enc == DPMU_MARKER_BEGIN_INSN)
					ud |= UD_MARK_BEGIN;
				else if (prev_enc == DPMU_MARKER_END_INSN)
					ud |= UD_MARK_END;
			}
			qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW, (void *)(uintptr_t)ud);
		}
		prev_enc = enc;
	}
	struct dpmu_qemu_block *b = &pl.blocks[bid];
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->first = first;
	b->n = (uint32_t)n;
	atomic_store_explicit(&b->ready, 1u, memory_order_release);
	pthread_mutex_unlock(&pl.lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)bid);
	if (pl.count_path[0])
		count_trans(id, tb);
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned vcpu_index)
{
	(void)id;
	if (pl.forked)
		return;
	if (vcpu_index >= DPMU_QEMU_MAX_VCPUS) {
		fail("more guest threads at once than dynpmu has rings (64)");
		return;
	}
	/* a reused index: its last thread may have died in a waiting call,
	 * and the new one is another host thread (this callback runs in the
	 * thread that creates it, before it starts) */
	atomic_store_explicit(&pl.shm->waiting[vcpu_index], 0u, memory_order_relaxed);
	pl.vcpu[vcpu_index].tid = 0;
	pl.vcpu[vcpu_index].futex_op = -1;
	pl.vcpu[vcpu_index].pipe = -1;
	pl.vcpu[vcpu_index].ctid = spawn_ctid;
	spawn_child = vcpu_index + 1;
	atomic_store_explicit(&pl.shm->tid[vcpu_index], 0u, memory_order_relaxed);
	uint32_t seen = atomic_load(&pl.shm->vcpus_seen);
	while (seen < vcpu_index + 1 &&
	       !atomic_compare_exchange_weak(&pl.shm->vcpus_seen, &seen, vcpu_index + 1))
		;
}

/* A thread ends (qemu calls this in the thread, before its index is free
 * again): its end goes into the stream, so that what it left open (a
 * region) is not carried into a later thread given the same index, which
 * continues the stream; then what it staged goes out. */
static void on_vcpu_exit(qemu_plugin_id_t id, unsigned vcpu_index)
{
	(void)id;
	if (pl.forked || vcpu_index >= DPMU_QEMU_MAX_VCPUS)
		return;
	struct vcpu *v = &pl.vcpu[vcpu_index];
	emit(v, DPMU_QEMU_TAG_THREAD_END << DPMU_QEMU_TAG_SHIFT | v->ctid);
	push(v);
	dpmu_ring_flush(v->ring);
}

/* The waits and wakes whose pairing the stream carries: WAIT and
 * WAIT_BITSET return 0 when woken, WAKE and WAKE_BITSET the threads woken.
 * The requeue, wake-op and priority-inheritance operations, which wake on
 * other addresses or return no count, are left out. */
static bool futex_paired_wait(int64_t op)
{
	return op == A64_FUTEX_WAIT || op == A64_FUTEX_WAIT_BITSET;
}

/* The futex a clone or clone3 call's new thread has woken at its end: the
 * child_tid argument (clone's fifth; clone3's struct clone_args, whose
 * flags are at offset 0 and child_tid at 16), when A64_CLONE_CHILD_CLEARTID. */
static uint64_t clone_ctid(int64_t num, uint64_t a1, uint64_t a5)
{
	if (num == A64_SYS_CLONE)
		return (a1 & (uint64_t)A64_CLONE_CHILD_CLEARTID) ? a5 & DPMU_QEMU_ADDR_MASK : 0;
	uint64_t args[3];
	if (num != A64_SYS_CLONE3 || !guest_read(a1, args, sizeof args))
		return 0;
	return (args[0] & (uint64_t)A64_CLONE_CHILD_CLEARTID) ? args[2] & DPMU_QEMU_ADDR_MASK : 0;
}

/* Reads and writes of a pipe, plain and vectored: a read that returns
 * data goes on no earlier than a write of it (DPMU_QEMU_TAG_PIPE_READ). */

/* The bytes a write asks to move: write(fd, buf, count), or the sum of
 * writev(fd, iov, iovcnt)'s struct iovec { base; len; } lengths (0 if the
 * vector cannot be read or is too long: the call then fails at once). */
static uint64_t write_count(int64_t num, uint64_t a2, uint64_t a3)
{
	if (num == A64_SYS_WRITE)
		return a3;
	if (a3 > A64_IOV_MAX)
		return 0;
	struct {
		uint64_t base, len;
	} iov[64]; /* the guest's struct iovec, read a stretch at a time */
	const uint64_t per = sizeof iov / sizeof iov[0];
	uint64_t sum = 0;
	for (uint64_t i = 0; i < a3; i += per) {
		uint64_t n = a3 - i < per ? a3 - i : per;
		if (!guest_read(a2 + i * sizeof iov[0], iov, (size_t)n * sizeof iov[0]))
			return 0;
		for (uint64_t k = 0; k < n; k++)
			sum += iov[k].len;
	}
	return sum;
}

/* The pipe (or FIFO) a read or write of fd goes to: its index in
 * pl.pipe, found by the pipe's inode, which both ends share (qemu-user
 * passes a guest's fds to the host as they are); -1 if fd is no pipe, or
 * the table is full. */
static int pipe_of(int64_t num, uint64_t fd, bool *write)
{
	if (num != A64_SYS_READ && num != A64_SYS_WRITE && num != A64_SYS_READV && num != A64_SYS_WRITEV)
		return -1;
	struct stat st;
	if (fd > INT32_MAX || fstat((int)fd, &st) || !S_ISFIFO(st.st_mode))
		return -1;
	*write = num == A64_SYS_WRITE || num == A64_SYS_WRITEV;
	uint64_t inode = ((uint64_t)st.st_ino ^ ((uint64_t)st.st_dev << 40)) | 1u; /* never 0 */
	for (int k = 0; k < (int)DPMU_QEMU_MAX_PIPES; k++) {
		uint64_t cur = atomic_load_explicit(&pl.pipe[k].inode, memory_order_acquire);
		/* a free slot is taken; a failed take reads who took it */
		if (!cur && atomic_compare_exchange_strong(&pl.pipe[k].inode, &cur, inode))
			return k;
		if (cur == inode)
			return k;
	}
	return -1;
}

static bool in_table(const uint64_t *t, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (t[i] == v)
			return true;
	return false;
}
/* v is among table t's entries (an array: its length from its size) */
#define IN_TABLE(t, v) in_table((t), sizeof(t) / sizeof(t)[0], (v))

/* Whether the host kernel sleeps on clock c at all, asked once per clock
 * (qemu-user hands the guest's clock_nanosleep to the host with its clock
 * as it is): an absolute sleep until 0, a time every clock has passed,
 * returns at once, with an error where the call always fails. The alarm
 * clocks need an RTC and CAP_WAKE_ALARM (EOPNOTSUPP, EPERM); MONOTONIC_RAW
 * and the COARSE clocks have no sleep (EOPNOTSUPP); THREAD_CPUTIME is
 * refused (EINVAL). A sleep on such a clock returns at once, whatever its
 * length. Clocks beyond the table (the dynamic ones, negative) are not
 * asked: false, and their sleeps stay unknown. */
#define SLEEP_CLOCKS_ASKED 16u
static _Atomic int8_t clock_sleeps[SLEEP_CLOCKS_ASKED]; /* 0: not asked, 1: sleeps, -1: fails */

static int clock_sleeps_on(uint64_t c)
{
	if (c >= SLEEP_CLOCKS_ASKED)
		return 0;
	int8_t k = atomic_load_explicit(&clock_sleeps[c], memory_order_relaxed);
	if (!k) {
		const struct timespec past = {0, 0};
		int r = clock_nanosleep((clockid_t)c, TIMER_ABSTIME, &past, NULL);
		if (r == EINTR)
			return 1; /* no answer: taken as one that sleeps, not kept */
		k = r ? -1 : 1;
		atomic_store_explicit(&clock_sleeps[c], k, memory_order_relaxed);
	}
	return k;
}

static uint64_t timespec_ns(const int64_t ts[2])
{
	const uint64_t max = DPMU_QEMU_ADDR_MASK; /* the word's 48 bits: 78 hours */
	if ((uint64_t)ts[0] >= max / 1000000000u)
		return max;
	return (uint64_t)ts[0] * 1000000000u + (uint64_t)ts[1];
}

/* The sleeps whose length the call gives: nanosleep(req, rem) and
 * clock_nanosleep(clock, flags, req, rem) (glibc's nanosleep, usleep and
 * sleep make the latter). An absolute one (TIMER_ABSTIME) sleeps until its
 * clock reads req; the guest's clock reads are the host's (qemu-user passes
 * clock_gettime through), so its length is what is left of it on the host
 * clock now, the length the host kernel sleeps.
 * What a sleep call does: SLEEP_UNKNOWN if it is none or its length
 * cannot be known here (a CPU-time clock's sleep, a timespec that cannot
 * be read), SLEEP_AT_ONCE if it returns at once (a clock the host does not
 * sleep on, an invalid timespec: EINVAL; an absolute time that has
 * passed), else SLEEP_FOR with its length in *ns. */
enum sleep_kind { SLEEP_UNKNOWN, SLEEP_AT_ONCE, SLEEP_FOR };

static enum sleep_kind sleep_of(int64_t num, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t *ns)
{
	uint64_t req;
	bool absolute = false;
	if (num == A64_SYS_NANOSLEEP)
		req = a1;
	else if (num == A64_SYS_CLOCK_NANOSLEEP) {
		req = a3;
		absolute = a2 & A64_TIMER_ABSTIME;
		int sleeps = clock_sleeps_on(a1);
		if (sleeps < 0)
			return SLEEP_AT_ONCE; /* the call fails */
		/* a CPU-time clock's sleep, relative or absolute, lasts
		 * until the CPU time is used: unknown here */
		if (!sleeps || !IN_TABLE(a64_sleep_clocks, a1))
			return SLEEP_UNKNOWN;
	} else
		return SLEEP_UNKNOWN;
	int64_t ts[2]; /* struct timespec: tv_sec, tv_nsec */
	if (!guest_read(req, ts, sizeof ts))
		return SLEEP_UNKNOWN;
	if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000)
		return SLEEP_AT_ONCE;
	if (absolute) {
		struct timespec now;
		if (clock_gettime((clockid_t)a1, &now))
			return SLEEP_UNKNOWN;
		ts[0] -= (int64_t)now.tv_sec;
		ts[1] -= (int64_t)now.tv_nsec;
		if (ts[1] < 0)
			ts[0]--, ts[1] += 1000000000;
		if (ts[0] < 0)
			return SLEEP_AT_ONCE;
	}
	*ns = timespec_ns(ts);
	return *ns ? SLEEP_FOR : SLEEP_AT_ONCE;
}

static bool syscall_waits(int64_t num, uint64_t a2)
{
	if (num == A64_SYS_FUTEX)
		return IN_TABLE(a64_waiting_futex_ops, a2 & ~(uint64_t)A64_FUTEX_OP_FLAGS);
	return IN_TABLE(a64_waiting_syscalls, (uint64_t)num);
}

/* A system call: what the thread staged goes out first, so a thread
 * blocked in the kernel has published all its words and its last block
 * ends in SVC; one that waits for another thread or for time says so
 * (shm->waiting), and dynpmu sets it aside at once instead of waiting for
 * words that only another thread's progress brings (src/backend/qemu.c
 * "scheduling"). */
static void on_syscall(qemu_plugin_id_t id, unsigned vcpu_index, int64_t num, uint64_t a1,
		       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7,
		       uint64_t a8)
{
	(void)id, (void)a4, (void)a6, (void)a7, (void)a8;
	struct vcpu *v = vcpu_of(vcpu_index);
	if (!v)
		return;
	if (!v->tid) {
		v->tid = (uint32_t)syscall(SYS_gettid);
		atomic_store_explicit(&pl.shm->tid[vcpu_index], v->tid, memory_order_relaxed);
	}
	/* a call that may wait: its SVC block retires now, at the thread's
	 * own time, and not after whatever brings the thread back */
	bool waits = syscall_waits(num, a2);
	uint64_t sleep = 0;
	if (waits && sleep_of(num, a1, a2, a3, &sleep) == SLEEP_AT_ONCE)
		waits = false; /* it does not wait: its thread goes on at its own time */
	v->pipe = pipe_of(num, a1, &v->pipe_write);
	if (sleep)
		emit(v, DPMU_QEMU_TAG_SLEEP << DPMU_QEMU_TAG_SHIFT | sleep);
	else if (waits || (v->pipe >= 0 && !v->pipe_write)) /* a pipe's read may wait too */
		emit(v, DPMU_QEMU_TAG_WAIT_CALL << DPMU_QEMU_TAG_SHIFT);
	push(v);
	dpmu_ring_flush(v->ring);
	v->futex_op = num == A64_SYS_FUTEX ? (int64_t)(a2 & ~(uint64_t)A64_FUTEX_OP_FLAGS) : -1;
	v->futex_addr = a1 & DPMU_QEMU_ADDR_MASK;
	if (num == A64_SYS_SET_TID_ADDRESS)
		v->ctid = a1 & DPMU_QEMU_ADDR_MASK;
	spawn_ctid = clone_ctid(num, a1, a5);
	spawn_child = 0;
	if (v->pipe >= 0 && v->pipe_write) {
		v->pipe_count = write_count(num, a2, a3);
		v->pipe_end = atomic_fetch_add(&pl.pipe[v->pipe].written, v->pipe_count) +
			      v->pipe_count;
	}
	/* what a wake of which brings the thread back: the futex it waits
	 * on, or the pipe it reads (asleep there, it is found so: qemu.c) */
	bool fw = waits && futex_paired_wait(v->futex_op);
	uint64_t wait = fw			     ? v->futex_addr
			: v->pipe >= 0 && !v->pipe_write ? DPMU_QEMU_PIPE_KEY(v->pipe)
							 : 0;
	atomic_store_explicit(&pl.shm->wait_addr[vcpu_index], wait, memory_order_release);
	if (waits)
		atomic_store_explicit(&pl.shm->waiting[vcpu_index], 1u, memory_order_release);
}

/* A read or write of pipe v->pipe returned ret: a write says how far the
 * pipe's bytes reach after it; a read that got the program's bytes, how
 * far it read (DPMU_QEMU_TAG_PIPE_WROTE, _READ). Data from outside the
 * program (the bytes read pass the bytes written) says nothing. */
static void pipe_ret(struct vcpu *v, int64_t ret)
{
	int k = v->pipe;
	uint64_t got = ret > 0 ? (uint64_t)ret : 0;
	if (v->pipe_write) {
		uint64_t end = v->pipe_end;
		if (got < v->pipe_count) { /* short or failed: not all it counted */
			atomic_fetch_sub(&pl.pipe[k].written, v->pipe_count - got);
			end -= v->pipe_count - got;
		}
		if (got)
			emit(v, DPMU_QEMU_TAG_PIPE_WROTE << DPMU_QEMU_TAG_SHIFT |
					DPMU_QEMU_PIPE_WORD(k, end));
		return;
	}
	if (!got)
		return;
	uint64_t r = atomic_fetch_add(&pl.pipe[k].read, got) + got;
	if (r <= atomic_load(&pl.pipe[k].written))
		emit(v, DPMU_QEMU_TAG_PIPE_READ << DPMU_QEMU_TAG_SHIFT | DPMU_QEMU_PIPE_WORD(k, r));
}

/* A system call returned: what orders threads in simulated time goes into
 * the stream: a clone's child (DPMU_QEMU_TAG_SPAWN, _CHILD), a futex
 * wait's outcome or the threads a wake woke (_WAITED, _NOT_WAITED, _WOKE),
 * a pipe's read or write (_PIPE_READ, _PIPE_WROTE). */
static void on_syscall_ret(qemu_plugin_id_t id, unsigned vcpu_index, int64_t num, int64_t ret)
{
	(void)id, (void)num;
	struct vcpu *v = vcpu_of(vcpu_index);
	if (!v)
		return;
	atomic_store_explicit(&pl.shm->waiting[vcpu_index], 0u, memory_order_relaxed);
	if ((num == A64_SYS_MMAP || num == A64_SYS_MPROTECT) && ret >= 0)
		atomic_store(&pl.maps_dirty, true); /* new code may be mapped */
	int64_t op = v->futex_op;
	v->futex_op = -1;
	if (spawn_ctid && ret > 0) /* the parent's side of a clone */
		emit(v, DPMU_QEMU_TAG_SPAWN << DPMU_QEMU_TAG_SHIFT | spawn_ctid);
	spawn_ctid = 0;
	if (spawn_child && ret > 0)
		emit(v, DPMU_QEMU_TAG_CHILD << DPMU_QEMU_TAG_SHIFT | (spawn_child - 1));
	spawn_child = 0;
	if (futex_paired_wait(op) && ret == 0)
		emit(v, DPMU_QEMU_TAG_WAITED << DPMU_QEMU_TAG_SHIFT | v->futex_addr);
	else if (futex_paired_wait(op) && ret == -EAGAIN)
		emit(v, DPMU_QEMU_TAG_NOT_WAITED << DPMU_QEMU_TAG_SHIFT | v->futex_addr);
	if (op == A64_FUTEX_WAKE || op == A64_FUTEX_WAKE_BITSET)
		for (int64_t k = 0; k < ret && k < DPMU_QEMU_MAX_VCPUS; k++)
			emit(v, DPMU_QEMU_TAG_WOKE << DPMU_QEMU_TAG_SHIFT | v->futex_addr);
	if (v->pipe >= 0)
		pipe_ret(v, ret);
	v->pipe = -1;
}

/* The program ends (exit_group, or a signal that kills it): publish every
 * vCPU's staged records. */
static void on_prog_exit(qemu_plugin_id_t id, void *udata)
{
	if (pl.count_path[0])
		count_exit(id, udata);
	if (pl.forked)
		return;
	for (unsigned i = 0; i < DPMU_QEMU_MAX_VCPUS; i++) {
		push(&pl.vcpu[i]);
		dpmu_ring_flush(pl.vcpu[i].ring);
	}
}

/* ---- count mode ----------------------------------------------------------------- */

/* Not an inline add: qemu's inline add is to one fixed address, which the
 * vCPU threads would share without atomics and lose adds on. */
static void count_insn(unsigned vcpu_index, void *udata)
{
	(void)udata;
	if (vcpu_index < DPMU_QEMU_MAX_VCPUS)
		pl.count[vcpu_index].n++;
	else
		atomic_fetch_add_explicit(&pl.count_more, 1, memory_order_relaxed);
}

static void count_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	if (pl.forked)
		return;
	size_t n = qemu_plugin_tb_n_insns(tb);
	for (size_t i = 0; i < n; i++)
		qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_tb_get_insn(tb, i), count_insn,
						       QEMU_PLUGIN_CB_NO_REGS, NULL);
}

/* The sum when the program exits: exact for the threads that have ended
 * or wait (a thread still running then goes on adding). */
static void count_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	if (pl.forked)
		return; /* the count is the program's own process's, as dynpmu's */
	uint64_t sum = atomic_load_explicit(&pl.count_more, memory_order_relaxed);
	for (unsigned i = 0; i < DPMU_QEMU_MAX_VCPUS; i++)
		sum += pl.count[i].n;
	FILE *f = fopen(pl.count_path, "w");
	if (f) {
		fprintf(f, "%llu\n", (unsigned long long)sum);
		fclose(f);
	}
}

/* ---- forked processes ------------------------------------------------------------ */

/* qemu-user runs a guest's fork (clone without CLONE_VM) as a host fork(),
 * so the child is a copy of this process, plugin included: its vCPU
 * indices are the parent's, and its words would land in the parent's rings
 * beside the parent's own, from a second writer (and its translations in
 * the shared block table, under a lock that is only its own). dynpmu counts
 * the program's own process (docs/frontend.md "Limits"): the child says
 * that it exists and stays silent. Runs in the child, whose only thread is
 * the one that forked. */
static void on_fork_child(void)
{
	pl.forked = true;
	if (pl.shm)
		atomic_fetch_add_explicit(&pl.shm->forks, 1u, memory_order_relaxed);
}

/* ---- install --------------------------------------------------------------------- */

static int attach(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < sizeof(struct dpmu_qemu_shm)) {
		fprintf(stderr, "dynpmu plugin: fd %d is not dynpmu's shared region\n", fd);
		return -1;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	/* The guest program inherits qemu's descriptors: do not leave it ours. */
	close(fd);
	if (m == MAP_FAILED) {
		fprintf(stderr, "dynpmu plugin: cannot map the shared region: %s\n", strerror(errno));
		return -1;
	}
	struct dpmu_qemu_shm *h = m;
	if (h->magic != DPMU_QEMU_MAGIC || h->version != DPMU_QEMU_VERSION ||
	    h->size != (uint64_t)st.st_size) {
		fprintf(stderr, "dynpmu plugin: the shared region is from another dynpmu version\n");
		return -1;
	}
	pl.shm = h;
	pl.blocks = (struct dpmu_qemu_block *)((char *)m + h->block_off);
	pl.code = (struct dpmu_qemu_code *)((char *)m + h->code_off);
	pl.str = (char *)m + h->str_off;
	for (unsigned i = 0; i < DPMU_QEMU_MAX_VCPUS; i++)
		pl.vcpu[i].ring = (struct dpmu_ring *)((char *)m + h->ring_off + i * h->ring_stride);
	return 0;
}

DPMU_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
				    char **argv)
{
	if (info->system_emulation) {
		fprintf(stderr, "dynpmu plugin: runs under qemu user mode (qemu-aarch64) only\n");
		return -1;
	}
	int fd = -1;
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "fd=", 3) == 0) {
			fd = atoi(argv[i] + 3);
		} else if (strncmp(argv[i], "count=", 6) == 0) {
			snprintf(pl.count_path, sizeof pl.count_path, "%s", argv[i] + 6);
		} else {
			fprintf(stderr, "dynpmu plugin: unknown argument '%s' (fd=N or count=PATH)\n",
				argv[i]);
			return -1;
		}
	}
	if (pthread_atfork(NULL, NULL, on_fork_child)) {
		fprintf(stderr, "dynpmu plugin: cannot watch for forked processes\n");
		return -1;
	}
	if (pl.count_path[0] && fd < 0) {
		qemu_plugin_register_vcpu_tb_trans_cb(id, count_trans);
		qemu_plugin_register_atexit_cb(id, count_exit, NULL);
		return 0;
	}
	if (fd < 0) {
		fprintf(stderr, "dynpmu plugin: no shared region (fd=N): run it through dynpmu stat\n");
		return -1;
	}
	if (attach(fd))
		return -1;
	qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	qemu_plugin_register_vcpu_exit_cb(id, on_vcpu_exit);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
	qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
	qemu_plugin_register_atexit_cb(id, on_prog_exit, NULL);
	return 0;
}
