/*
 * The qemu backend: a real aarch64 program under qemu-aarch64 with dynpmu's
 * plugin, its instruction stream fed through the engine into the model,
 * the monitor ticking as in the simulation backend (sim.c).
 *
 * dynpmu creates one shared region (a memfd, docs/frontend.md "Data
 * flow"), lays out one lossless collector ring per vCPU in it
 * (dpmu_ring_init_in) and hands its descriptor to the plugin. The plugin
 * produces; this file consumes: it decodes each vCPU's words into retired
 * instructions (classified once per translated instruction), takes branch
 * outcomes from the next block's address, and retires them on the core the
 * placement policy gave that vCPU. The run ends when qemu has exited and
 * every ring is drained; qemu dies with dynpmu (PR_SET_PDEATHSIG), so a
 * full ring never leaves a guest waiting for nobody. The ordering of waits,
 * wakes, pipes and sleeps is qemu_sync.c's, the report's tables
 * qemu_report.c's; their shared state is in qemu_internal.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/qemu_internal.h"
#include "dynpmu/backend.h"
#include "dynpmu/collect.h"
#include "dynpmu/model.h"
#include "dynpmu/qemu.h"
#include "dynpmu/regio_model.h"
#include "dynpmu/uarch.h"


/* ---- layout of the shared region ------------------------------------------------ */

#define ALIGN_UP(x, a) (((x) + (a) - 1) & ~((uint64_t)(a) - 1))

static void layout(struct dpmu_qemu_shm *h)
{
	uint64_t off = ALIGN_UP(sizeof *h, 4096);
	h->ring_off = off;
	h->ring_stride = ALIGN_UP(dpmu_ring_bytes_in(DPMU_QEMU_RING_SLOTS), 4096);
	off += h->ring_stride * DPMU_QEMU_MAX_VCPUS;
	h->block_off = off;
	off += ALIGN_UP((uint64_t)DPMU_QEMU_MAX_BLOCKS * sizeof(struct dpmu_qemu_block), 4096);
	h->code_off = off;
	off += ALIGN_UP((uint64_t)DPMU_QEMU_MAX_CODE * sizeof(struct dpmu_qemu_code), 4096);
	h->str_off = off;
	off += DPMU_QEMU_STR_BYTES;
	h->size = off;
}

uint64_t dpmu_qemu_shm_bytes(void)
{
	struct dpmu_qemu_shm h;
	memset(&h, 0, sizeof h);
	layout(&h);
	return h.size;
}

static int shm_create(struct qemu_be *q, struct dpmu_err *err)
{
	uint64_t bytes = dpmu_qemu_shm_bytes();
	q->fd = memfd_create("dynpmu-qemu", 0); /* no CLOEXEC: qemu inherits it */
	if (q->fd < 0)
		return dpmu_err_set(err, DPMU_EIO, "cannot create the shared region: %s",
				    strerror(errno));
	if (ftruncate(q->fd, (off_t)bytes) != 0)
		return dpmu_err_set(err, DPMU_EIO, "cannot size the shared region (%llu bytes): %s",
				    (unsigned long long)bytes, strerror(errno));
	q->shm_base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, q->fd, 0);
	if (q->shm_base == MAP_FAILED) {
		q->shm_base = NULL;
		return dpmu_err_set(err, DPMU_EIO, "cannot map the shared region: %s",
				    strerror(errno));
	}
	struct dpmu_qemu_shm *h = q->shm_base;
	layout(h);
	h->magic = DPMU_QEMU_MAGIC;
	h->version = DPMU_QEMU_VERSION;
	h->nrings = DPMU_QEMU_MAX_VCPUS;
	atomic_store(&h->nstr, 1u); /* offset 0 is the empty name */
	for (unsigned i = 0; i < DPMU_QEMU_MAX_VCPUS; i++) {
		struct dpmu_ring *r;
		/* A fresh memfd reads as zero: 64 rings' slots (16 MiB) are
		 * left to be touched by the vCPUs that use them. */
		int rc = dpmu_ring_init_in_zeroed((char *)q->shm_base + h->ring_off +
							  i * h->ring_stride,
						  h->ring_stride, i, DPMU_QEMU_RING_SLOTS,
						  DPMU_QEMU_RING_BATCH,
						  DPMU_RING_LOSSLESS, NULL, &r, err);
		if (rc)
			return rc;
	}
	q->shm = h;
	q->blocks = (const struct dpmu_qemu_block *)((char *)q->shm_base + h->block_off);
	q->code = (const struct dpmu_qemu_code *)((char *)q->shm_base + h->code_off);
	q->str = (const char *)q->shm_base + h->str_off;
	return 0;
}

static struct dpmu_ring *ring_of(struct qemu_be *q, unsigned i)
{
	return (struct dpmu_ring *)((char *)q->shm_base + q->shm->ring_off + i * q->shm->ring_stride);
}

/* ---- regions and symbols ------------------------------------------------------- */

static void observe(void *ctx, bool cluster, unsigned index, uint16_t event, uint64_t n)
{
	struct qemu_be *q = ctx;
	if (cluster || index >= DPMU_MAX_CORES || !q->evmap)
		return;
	int col = q->evmap[event];
	if (col < 0)
		return;
	/* the vCPU on the core: what the core delivers is its (core_take) */
	int i = q->core_vcpu[index];
	if (i < 0)
		return;
	if (q->per_thread)
		q->vev[i][col] += n;
	/* inclusive: every region open in it counts the event */
	const struct vstream *v = &q->vs[i];
	for (unsigned d = 0; d < v->depth; d++)
		q->region[v->stack[d]].ev[col] += n;
}

/* The deliveries observe() uses: core events a region column counts, once
 * a region exists, or a thread's row (per_thread). The engine asks while
 * it builds its delivery lists and keeps the answers; it asks anew when the
 * observer is set again: by dpmu_qemu_set_region_events, and when the
 * first region opens (region_index), so a run without regions or
 * per-thread events delivers nothing to observe(). */
static bool wants(void *ctx, bool cluster, unsigned index, uint16_t event)
{
	const struct qemu_be *q = ctx;
	(void)index;
	return !cluster && q->evmap && q->evmap[event] >= 0 && (q->nregion || q->per_thread);
}

static int region_index(struct qemu_be *q, uint32_t name)
{
	for (unsigned i = 0; i < q->nregion; i++)
		if (q->region[i].name == name)
			return (int)i;
	if (q->nregion == REGION_MAX)
		return -1;
	q->region[q->nregion].name = name;
	if (q->nregion++ == 0 && !q->per_thread)
		dpmu_uarch_set_observer(q->uarch, observe, wants, q); /* wants() changed */
	return (int)q->nregion - 1;
}

/* A marker took effect on `v` (after its load retired): deliver what the
 * core holds so far to the regions open until now, then open or close an
 * entry. A name beyond REGION_MAX is not counted, and said. */
static void region_mark(struct qemu_be *q, struct vstream *v, uint32_t name, bool end)
{
	dpmu_uarch_flush_core(q->uarch, v->core);
	int r = region_index(q, name);
	if (r < 0) {
		q->region_refused++;
		return;
	}
	unsigned d = 0;
	while (d < v->depth && v->stack[d] != (uint32_t)r)
		d++;
	if (!end) {
		q->region[r].entries++;
		if (d == v->depth) { /* d < REGION_MAX: each region once */
			v->stack[d] = (uint32_t)r;
			v->nest[d] = 0;
			v->depth++;
		}
		v->nest[d]++;
		return;
	}
	if (d == v->depth) {
		q->region[r].stray_ends++;
		return;
	}
	if (--v->nest[d] == 0) {
		v->depth--;
		memmove(&v->stack[d], &v->stack[d + 1], (v->depth - d) * sizeof v->stack[0]);
		memmove(&v->nest[d], &v->nest[d + 1], (v->depth - d) * sizeof v->nest[0]);
	}
}

/* v's thread ended: what its core holds goes to its regions, which close
 * with it (a later thread given its index starts in none); until more
 * words come, the scheduler waits for none. */
void dpmu_qemu_thread_end(struct qemu_be *q, struct vstream *v)
{
	v->ended = true;
	v->thread = -1; /* a later thread given this index has its own number */
	dpmu_qemu_shadow_reset(v);
	if (!v->depth)
		return;
	dpmu_uarch_flush_core(q->uarch, v->core);
	for (unsigned d = 0; d < v->depth; d++)
		q->region[v->stack[d]].left_open += v->nest[d];
	v->depth = 0;
}

/* A thread switch on core c, told to the monitor (dpmu_backend_switch_fn):
 * at EL1, as the kernel's switch code runs, with the core's events
 * delivered (set_el flushes the engine). */
static void switch_told(struct qemu_be *q, unsigned c, int prev, int next)
{
	if (q->run_rc)
		return;
	uint64_t core = UINT64_C(1) << c;
	int rc = dpmu_backend_set_el(q->model, q->uarch, core, 1, q->run_err);
	if (!rc)
		rc = q->on_switch(q->switch_ctx, c, prev, next, dpmu_uarch_time_ns(q->uarch),
				  q->run_err);
	if (!rc)
		rc = dpmu_backend_set_el(q->model, q->uarch, core, 0, q->run_err);
	q->run_rc = rc;
}

/* vCPU i is about to run on its core. A core that threads share holds the
 * pending events of the vCPU that ran there last; when that one had other
 * regions open, or events go per thread, they are delivered first (to its
 * regions, to its row), and the core then takes i's (so a region or a
 * thread counts its own events, as on a core of its own). The same
 * regions, as most often none, and no per-thread events need nothing.
 * A thread that starts on an index whose thread ended is a switch too. */
static void core_take(struct qemu_be *q, unsigned i)
{
	struct vstream *v = &q->vs[i];
	unsigned c = v->core;
	if (v->thread < 0)
		v->thread = q->nthreads++;
	int last = q->core_vcpu[c];
	if (last == (int)i && q->core_thread[c] == v->thread)
		return;
	const struct vstream *l = last >= 0 ? &q->vs[last] : NULL;
	bool same = l ? l->depth == v->depth &&
			       !memcmp(l->stack, v->stack, v->depth * sizeof v->stack[0])
		      : v->depth == 0;
	if (!same || q->per_thread || q->on_switch)
		dpmu_uarch_flush_core(q->uarch, c);
	int prev = q->core_thread[c];
	if (q->on_switch)
		switch_told(q, c, prev, v->thread);
	q->core_vcpu[c] = (int)i;
	q->core_thread[c] = v->thread;
	if (dpmu_model_etm_active(q->model, c))
		dpmu_qemu_trace_switch(q, c, i);
}

static struct symstat *sym_get(struct qemu_be *q, uint32_t name)
{
	/* open addressing on the string offset */
	if (q->nsym * 2 >= q->symcap) {
		size_t ncap = q->symcap ? q->symcap * 2 : 1024;
		struct symstat *n = calloc(ncap, sizeof *n);
		if (!n)
			return NULL;
		for (size_t i = 0; i < q->symcap; i++) {
			if (!q->sym[i].insns && !q->sym[i].name)
				continue;
			size_t j = (q->sym[i].name * 2654435761u) & (ncap - 1);
			while (n[j].insns || n[j].name)
				j = (j + 1) & (ncap - 1);
			n[j] = q->sym[i];
		}
		free(q->sym);
		q->sym = n;
		q->symcap = ncap;
	}
	size_t j = (name * 2654435761u) & (q->symcap - 1);
	while (q->sym[j].insns || q->sym[j].name) {
		if (q->sym[j].name == name)
			return &q->sym[j];
		j = (j + 1) & (q->symcap - 1);
	}
	q->sym[j].name = name;
	q->nsym++;
	return &q->sym[j];
}

/* ---- decoding ------------------------------------------------------------------ */

static int tick_now(struct qemu_be *q);

/* n instructions of v have retired: the backend's own tallies. */
static void retired(struct qemu_be *q, struct vstream *v, size_t n)
{
	v->insns += n;
	q->per_core[v->core] += n;
	for (unsigned d = 0, depth = v->depth; d < depth; d++)
		q->region[v->stack[d]].insns += n;
	q->since_tick += n;
}

static void retire(struct qemu_be *q, struct vstream *v, const struct dpmu_insn *in, size_t n,
		   uint32_t first_code)
{
	if (!n)
		return;
	if (q->sample) {
		dpmu_qemu_retire_sampled(q, v, in, n);
	} else if (!q->by_symbol) {
		dpmu_uarch_retire(q->uarch, v->core, in, n);
	} else {
		/* runs of one function, so cycles go to the function they ran in */
		size_t s = 0;
		while (s < n) {
			uint32_t sym = q->code[first_code + s].sym;
			size_t e = s + 1;
			while (e < n && q->code[first_code + e].sym == sym)
				e++;
			uint64_t c0 = dpmu_uarch_core_cycles(q->uarch, v->core);
			dpmu_uarch_retire(q->uarch, v->core, in + s, e - s);
			struct symstat *st = sym_get(q, sym);
			if (st) {
				st->cycles += dpmu_uarch_core_cycles(q->uarch, v->core) - c0;
				st->insns += e - s;
				for (size_t i = s; i < e; i++) {
					st->loads += in[i].kind == DPMU_INSN_LOAD;
					st->stores += in[i].kind == DPMU_INSN_STORE;
					st->branches += in[i].kind == DPMU_INSN_BRANCH;
				}
			}
			s = e;
		}
	}
	retired(q, v, n);
}

/* Block bid the first time it runs: checked, classified, summarised; NULL
 * when the shared region is inconsistent (the run's error set). */
static const struct bdec *block_first(struct qemu_be *q, uint32_t bid)
{
	if (bid >= DPMU_QEMU_MAX_BLOCKS)
		goto bad;
	const struct dpmu_qemu_block *b = &q->blocks[bid];
	if (q->bdec[bid].sum)
		return &q->bdec[bid];
	/* Translation happens before execution, so the entry is normally
	 * ready; wait a little for a block described by another thread. */
	for (int spin = 0; !atomic_load_explicit(&b->ready, memory_order_acquire); spin++) {
		if (spin > 200000)
			goto bad;
		struct timespec ts = {0, 10000};
		nanosleep(&ts, NULL);
	}
	if (b->n == 0 || b->n >= DPMU_QEMU_TAG_ADDR_MAX ||
	    (uint64_t)b->first + b->n > DPMU_QEMU_MAX_CODE) {
		q->run_rc = dpmu_err_set(q->run_err, DPMU_EIO,
					 "qemu plugin: block %u describes %u instructions from entry "
					 "%u (1 to %u, within %u entries: the shared region is "
					 "inconsistent)",
					 bid, b->n, b->first, (unsigned)DPMU_QEMU_TAG_ADDR_MAX - 1,
					 (unsigned)DPMU_QEMU_MAX_CODE);
		return NULL;
	}
	/* A block's code entries are its own (the plugin gives every
	 * translation a fresh range): classified once, here. */
	struct bdec *d = &q->bdec[bid];
	d->vaddr = b->vaddr;
	d->first = b->first;
	d->n = b->n;
	d->ncheck = 0;
	uint32_t nmem = 0, *exp = q->texp + b->first + bid;
	d->exp = exp;
	bool partial = false;
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t k = b->first + i;
		struct dpmu_iclass c;
		dpmu_iclass_decode(q->code[k].enc, &c);
		struct dpmu_insn *t = &q->tmpl[k];
		memset(t, 0, sizeof *t);
		t->pc = b->vaddr + 4ull * i;
		t->flags = c.flags;
		t->size = c.size;
		t->kind = c.kind;
		t->br_kind = c.br_kind;
		t->isize = 4;
		t->exec = c.exec;
		struct dpmu_iregs r;
		dpmu_iregs_decode(q->code[k].enc, &r);
		memcpy(t->src, r.src, sizeof t->src);
		memcpy(t->dst, r.dst, sizeof t->dst);
		if (r.writeback)
			t->flags |= DPMU_IC_WRITEBACK;
		q->tmem[k] = (uint8_t)(c.mem | c.noretire << 2);
		if (q->tmem[k])
			q->tcheck[b->first + d->ncheck++] = i;
		if (c.mem != DPMU_ICLASS_MEM_NONE)
			exp[nmem++] = i + 1;
		partial |= c.noretire != 0;
	}
	exp[nmem] = EXP_END;
	d->fast_na = partial || q->by_symbol || (q->sample && !q->sample_blocks) ? UINT32_MAX : nmem;
	if (q->sample)
		dpmu_qemu_sample_block(q, b->vaddr, q->code[b->first].sym);
	d->fast_end = d->fast_na == UINT32_MAX ? NULL : exp + nmem;
	struct dpmu_err e;
	if (bid >= q->bdec_end)
		q->bdec_end = bid + 1;
	if (dpmu_ublock_create(q->tmpl + b->first, b->n, &d->sum, &e)) {
		q->run_rc = dpmu_err_set(q->run_err, e.code, "qemu backend: %s", dpmu_errmsg(&e));
		return NULL;
	}
	return d;
bad:
	q->run_rc = dpmu_err_set(q->run_err, DPMU_EIO,
				 "qemu plugin: block %u was never described (the shared region is "
				 "inconsistent)",
				 bid);
	return NULL;
}

/* The open block of v in part, or with regions or per-symbol counts: its
 * templates retired instruction by instruction. */
static __attribute__((noinline)) void finish_block_slow(struct qemu_be *q, struct vstream *v,
							 uint64_t next_pc)
{
	const struct bdec *b = v->blk;
	/* The block's templates are retired in place: only what differs
	 * between executions (addresses, a store-exclusive's outcome, the
	 * last branch's outcome) is written into them first, so an execution
	 * costs a pass over its memory instructions, not a copy of the block. */
	struct dpmu_insn *t = q->tmpl + b->first;
	const uint8_t *tm = q->tmem + b->first;
	const uint32_t *chk = q->tcheck + b->first;
	uint32_t n = b->n, k = 0;
	for (uint32_t j = 0; j < b->ncheck; j++) {
		uint32_t i = chk[j];
		uint8_t m = tm[i];
		while (k < v->na && v->aidx[k] < i)
			k++;
		bool seen = k < v->na && v->aidx[k] == i;
		/* An instruction qemu must have accessed memory for but did not
		 * faulted, and so did the block's rest: it did not retire. */
		if (((m & 3) == DPMU_ICLASS_MEM_MUST && !seen) || (m & 4)) {
			n = i;
			break;
		}
		if ((m & 3) != DPMU_ICLASS_MEM_NONE) {
			t[i].addr = seen ? v->abyidx[i] : 0;
			if (t[i].flags & DPMU_IC_STREX) {
				if (seen)
					t[i].flags &= ~(uint32_t)DPMU_IC_STREX_FAIL;
				else
					t[i].flags |= DPMU_IC_STREX_FAIL; /* made no access */
			}
		}
	}
	if (n == b->n) {
		struct dpmu_insn *last = &t[n - 1];
		if (last->kind == DPMU_INSN_BRANCH)
			dpmu_insn_branch_to(last, next_pc);
	}
	/* retire, opening and closing regions after their marker loads */
	uint32_t done = 0;
	for (unsigned r = 0; r < v->nrev; r++) {
		uint32_t upto = v->rev[r].idx + 1;
		if (upto > n)
			break;
		retire(q, v, t + done, upto - done, b->first + done);
		done = upto;
		region_mark(q, v, v->rev[r].name, v->rev[r].end);
	}
	retire(q, v, t + done, n - done, b->first + done);
	v->nrev = 0;
}

/* The block v has open ends; next_pc is where execution went next
 * (0: unknown, the stream ended). */
static inline void finish_block(struct qemu_be *q, struct vstream *v, uint64_t next_pc)
{
	if (!v->open)
		return;
	v->open = false;
	const struct bdec *d = v->blk;
	if (v->na == d->fast_na && !v->nrev) {
		/* The common case: every access made, so every instruction
		 * retired; the engine's summary of the block runs it. */
		q->hook_v = v;
		dpmu_uarch_run_block(q->uarch, v->core, d->sum, v->abyidx, next_pc);
		retired(q, v, d->n);
		return;
	}
	v->next_sym = 0;
	finish_block_slow(q, v, next_pc);
}

/* aidx lies right after abyidx (stream_alloc) */
#define STREAM_AIDX(aby) ((uint32_t *)(void *)((aby) + DPMU_QEMU_TAG_ADDR_MAX))

/* A vCPU's address arrays, once, for the largest block the wire format
 * can describe (an address's index is below DPMU_QEMU_TAG_ADDR_MAX; the
 * plugin describes no larger block and block_first refuses one), so no
 * block entry has to check their size. The pages a run never reaches are
 * never touched. */
static int stream_alloc(struct vstream *v)
{
	/* one allocation, aidx right after abyidx: the decoder's loop keeps
	 * one pointer for both */
	v->abyidx = malloc(DPMU_QEMU_TAG_ADDR_MAX * (sizeof *v->abyidx + sizeof *v->aidx));
	if (!v->abyidx)
		return -1;
	v->aidx = STREAM_AIDX(v->abyidx);
	return 0;
}

/* A region marker word of the open block: it belongs to the address entry
 * just before it. */
static void region_word(struct qemu_be *q, struct vstream *v, uint64_t w)
{
	if (!v->na)
		return; /* a stray: no load before it */
	if (v->nrev == sizeof v->rev / sizeof v->rev[0]) {
		q->markers_dropped++;
		return;
	}
	v->rev[v->nrev].idx = v->aidx[v->na - 1];
	v->rev[v->nrev].name = (uint32_t)w;
	v->rev[v->nrev].end = (w >> 47) & 1;
	v->nrev++;
}

/* ---- scheduling: interleaving the vCPUs in simulated time ------------------------ *
 *
 * qemu runs the guest's threads at host speed, far ahead of the engine, and
 * each vCPU's ring holds thousands of blocks. Handing each ring's contents
 * to the engine in turn would let one core run thousands of instructions
 * before another runs any, so a line two threads write would change hands
 * once per batch instead of once per access, as on real cores. Instead the
 * words wait in a queue per vCPU, and the vCPU furthest behind in simulated
 * time (its core's cycles at that core's clock) retires next, one turn of
 * at least `quantum` instructions (default: one block). A vCPU with no
 * words while its thread may still run is waited for a little (its thread
 * is producing, and its time stays its own), then set aside as blocked (a
 * futex wait, or finished) until it has words again; it then resumes at
 * the others' time, as a thread woken up on an idle core would, unless a
 * futex word gives its time ("futex synchronisation" below). A new thread
 * starts at its parent's clone (birth). */

#define QEMU_QUEUE_MAX (1u << 18)       /* words a vCPU's queue holds (2 MiB) */
/* How long a laggard without words is waited for when nothing says it is
 * blocked: its host thread runs, or was only preempted, so it will produce.
 * What blocks says so: a waiting system call (shm->waiting), a thread's end
 * (its end word), the host (below). The plugin publishes all a thread has
 * staged before each system call, so a thread blocked in the kernel always
 * shows its SVC block. */
#define QEMU_LAG_WAIT_NS 50000000ll
/* A laggard in a system call the plugin's table does not know (a read of
 * a pipe, say) is asked of the kernel every so often, the first time after
 * this long: a host thread asleep there waits for something dynpmu cannot
 * see coming. One that is not may be preempted inside a call as anywhere
 * (on a loaded host, main in pthread_create's calls), and is waited for as
 * anywhere. */
#define QEMU_LAG_PROBE_NS 100000ll

/* /proc/PID/task/TID/FILE into buf (NUL-terminated); false: no answer. */
static bool read_task_file(pid_t pid, uint32_t tid, const char *file, char *buf, size_t cap)
{
	char path[80];
	snprintf(path, sizeof path, "/proc/%d/task/%u/%s", (int)pid, tid, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* Whether host thread tid of process pid sleeps in a system call of the
 * guest's: state S (an interruptible wait, such as a read of an empty
 * pipe) in a call other than futex. A futex there is qemu's own lock (a
 * guest's futex wait is in the plugin's table and never probed), which
 * qemu's other thread soon lets go (futex_too: or the guest's futex wait
 * the thread has not left); D (a disk wait) ends by itself. No
 * answer (the thread is gone, no /proc): false, and the laggard is waited
 * for as before. */
static bool host_thread_sleeps(pid_t pid, uint32_t tid, bool futex_too)
{
	char buf[512];
	if (!read_task_file(pid, tid, "stat", buf, sizeof buf))
		return false;
	/* "tid (comm) S ...": comm may hold spaces and parentheses */
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] != 'S')
		return false;
	/* "NR args... sp pc" while in a system call, "running" or "-1 ..." else */
	if (!read_task_file(pid, tid, "syscall", buf, sizeof buf))
		return false;
	char *end;
	long nr = strtol(buf, &end, 10);
	return end != buf && nr >= 0 && (futex_too || nr != SYS_futex);
}

static long long elapsed_ns(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000000000ll + (b.tv_nsec - a->tv_nsec);
}

/* Room for n more words (compacting, then growing up to the cap). The
 * live words are moved over the consumed ones only when these are at
 * least as many, so a word moves at most once for each word consumed
 * before it: a queue far longer than what one collect() adds (a vCPU
 * whose thread runs ahead while others take their turns) would otherwise
 * be moved whole for every collect. Else the queue grows, consumed words
 * included, and is full when that would pass QEMU_QUEUE_MAX: it then
 * holds at least half as many live words. */
static bool wq_reserve(struct wqueue *w, size_t n)
{
	if (w->tail + n <= w->cap)
		return true;
	size_t len = wq_len(w);
	if (w->head && w->head >= len) {
		memmove(w->w, w->w + w->head, len * sizeof *w->w);
		w->head = 0;
		w->tail = len;
		if (len + n <= w->cap)
			return true;
	}
	size_t need = w->tail + n;
	if (need > QEMU_QUEUE_MAX)
		return false;
	size_t ncap = w->cap ? w->cap * 2 : 4096;
	while (ncap < need)
		ncap *= 2;
	uint64_t *nw = realloc(w->w, (ncap + 1) * sizeof *nw);
	if (!nw)
		return false;
	w->w = nw;
	w->cap = ncap;
	return true;
}

/* The simulated time the running vCPUs have reached (the least of those
 * with words), or -1 when none runs. */
static double sched_now(const struct qemu_be *q, unsigned nv, unsigned except)
{
	double now = -1;
	for (unsigned i = 0; i < nv; i++)
		if (i != except && q->vs[i].started && !q->vs[i].idle && !q->vs[i].stalled &&
		    !q->vs[i].unborn && wq_len(&q->wq[i]) && (now < 0 || q->vtime[i] < now))
			now = q->vtime[i];
	return now;
}

/* vCPU i's sleep (DPMU_QEMU_TAG_SLEEP) ends: its time goes back to the
 * sleep's start, its core's idle still to come; returns the sleep's end. */
static double sleep_unwind(struct qemu_be *q, unsigned i)
{
	struct vstream *v = &q->vs[i];
	v->asleep = false;
	double end = q->vtime[i];
	q->vtime[i] = v->asleep_from;
	return end;
}

/* The length of vCPU i's sleep not settled yet (0: none). */
static uint64_t sleep_left_ns(const struct qemu_be *q, unsigned i)
{
	const struct vstream *v = &q->vs[i];
	return v->asleep ? (uint64_t)(q->vtime[i] - v->asleep_from) : 0;
}

/* vCPU i goes on at simulated time `now` (if later than its own): its core
 * was idle from the end of its last turn there until then. */
void dpmu_qemu_idle_to(struct qemu_be *q, unsigned i, double now)
{
	if (q->vs[i].asleep) /* a sleep not settled yet: its end first */
		dpmu_qemu_idle_to(q, i, sleep_unwind(q, i));
	if (now <= q->vtime[i])
		return;
	unsigned c = q->vs[i].core;
	double from = q->vtime[i] > q->core_free[c] ? q->vtime[i] : q->core_free[c];
	if (now > from) {
		/* the engine takes whole ns: what the gaps add up to, so that
		 * how a gap is split (one wake or two) changes nothing */
		q->idle_sum[c] += now - from;
		uint64_t whole = (uint64_t)q->idle_sum[c];
		dpmu_uarch_core_idle(q->uarch, c, whole - q->idle_given[c]);
		q->idle_given[c] = whole;
		q->core_free[c] = now;
	}
	q->vtime[i] = now;
}

_Static_assert(DPMU_QEMU_WORDS == 1 + sizeof ((struct dpmu_record *)0)->val / sizeof(uint64_t),
	       "a record's words are its time and its val[]");

#define REC_FULL (DPMU_QEMU_REC_STREAM | DPMU_QEMU_WORDS << 8)

/* Take what every ring holds into the queues; returns the records taken.
 * The words are read where the plugin wrote them (peek) and go straight
 * into the queue: one copy. */
static size_t collect(struct qemu_be *q)
{
	size_t total = 0;
	unsigned nv = nvcpus(q);
	for (unsigned i = 0; i < nv && !q->run_rc; i++) {
		struct wqueue *w = &q->wq[i];
		struct dpmu_ring *ring = ring_of(q, i);
		bool had = wq_len(w) > 0;
		size_t got = 0;
		if (!had)
			w->head = w->tail = 0; /* nothing to keep: no compaction to pay */
		/* a full queue leaves the records in the ring: qemu waits */
		for (int round = 0; round < 16 && wq_reserve(w, 64 * DPMU_QEMU_WORDS); round++) {
			const struct dpmu_record *rec;
			size_t n = dpmu_ring_peek(ring, &rec, 64);
			if (!n)
				break;
			uint64_t *o = w->w + w->tail;
			for (size_t r = 0; r < n; r++) {
				uint32_t kind = rec[r].kind;
				unsigned nw = DPMU_QEMU_WORDS;
				/* all but a thread's last record are full: one
				 * compare for them */
				if (kind != REC_FULL) {
					if ((kind & 0xff) != DPMU_QEMU_REC_STREAM)
						continue;
					nw = (kind >> 8) & 0xff;
				}
				if (nw >= DPMU_QEMU_WORDS) {
					o[0] = rec[r].time;
					memcpy(o + 1, rec[r].val, sizeof rec[r].val);
					o += DPMU_QEMU_WORDS;
					continue;
				}
				if (nw >= 1)
					*o++ = rec[r].time;
				for (unsigned k = 1; k < nw; k++)
					*o++ = rec[r].val[k - 1];
			}
			w->tail = (size_t)(o - w->w);
			dpmu_ring_release(ring, n);
			got += n;
		}
		total += got;
		if (!got || had)
			continue;
		/* a vCPU set aside goes on at the time the others have reached,
		 * but one whose futex wait returned woken (its waker's wake gives
		 * its time: dpmu_qemu_sync_word) or at once (it did not sleep), one whose
		 * read of a pipe got the program's bytes (their write gives its
		 * time), and one a wake brought back (it has its time); a new
		 * thread's is its parent's clone (birth). One only waited for
		 * never idled. */
		uint64_t first = w->w[0] >> DPMU_QEMU_TAG_SHIFT;
		if (q->vs[i].idle && !q->vs[i].ended && !q->vs[i].woken &&
		    first != DPMU_QEMU_TAG_WAITED && first != DPMU_QEMU_TAG_NOT_WAITED &&
		    first != DPMU_QEMU_TAG_PIPE_READ)
			dpmu_qemu_idle_to(q, i, sched_now(q, nv, i));
		q->vs[i].woken = false;
		q->vs[i].aside_addr = 0;
		q->vs[i].started = true;
		q->vs[i].idle = false;
		if (q->lag_wait == (int)i)
			q->lag_wait = -1;
	}
	return total;
}

static void check_tick(struct qemu_be *q);

#define QUEUE_END 0ull

/* What decode takes for a stream with no open block: a block no address
 * word belongs to (n 0, no expected tag), never retired (fast_na). */
static const uint32_t exp_none[1] = {EXP_END};
static const struct bdec bdec_none = {.fast_na = UINT32_MAX, .exp = exp_none};

/* The fast mode's accepted addresses are the first na of the block's
 * expected ones: written out as the checked mode keeps them (aidx, and
 * the least index a new address may have, returned). */
static uint32_t exp_to_aidx(uint32_t *aidx, const uint32_t *exp, uint32_t na)
{
	for (uint32_t k = 0; k < na; k++)
		aidx[k] = exp[k] - 1;
	return na ? exp[na - 1] : 0;
}

/* Block bid of a block entry: one load for a block seen before (checked
 * and classified when it first ran); NULL: the run's error is set. */
static inline const struct bdec *block_of(struct qemu_be *q, uint32_t bid)
{
	return bid < DPMU_QEMU_MAX_BLOCKS && q->bdec[bid].sum ? &q->bdec[bid] : block_first(q, bid);
}

/* Decode vCPU v's queued words. A turn ends once `quantum` instructions
 * have retired in it (a block retires when the next one starts). Without
 * solo the call is one turn and returns its instructions. With solo (v is
 * the only vCPU that can run) turn follows turn until the queue is empty, each
 * completed one followed by what after_turn does in the general loop,
 * without a call and the loop's bookkeeping per block; it returns the
 * instructions of the last turn, for the caller's after_turn, once it is
 * complete: a turn the queue runs out in before the quantum goes on in the
 * next call (v->turn_left). *turns counts the turns that retired
 * instructions.
 * Each value of solo has a function of its own (decode_solo, decode_turn),
 * out of the scheduler's loops. q1 (solo only) is a quantum of 1, the
 * default: every block that retires ends a turn, so a block retired whole
 * needs no count of its turn.
 *
 * An open block's addresses are taken in one of two modes. The fast mode
 * holds while every address word is the first access of the block's next
 * memory instruction (bdec.exp lists their tags, in order), which is what
 * an execution that retires whole produces: such a word costs a compare
 * and a store, and the accepted addresses are exp[0 .. na). Any other
 * word but a block entry (another access of an instruction already seen,
 * one after a memory instruction that made none, a region marker, a stray)
 * switches the block to the checked mode, which takes each word with the
 * checks below and keeps the accepted indices in aidx. Both accept the
 * same addresses, so the engine's input does not depend on the mode. */
static inline __attribute__((always_inline)) uint64_t
decode(struct qemu_be *q, struct vstream *v, struct wqueue *w, bool solo, bool q1,
       size_t *turns)
{
	if (!v->abyidx && stream_alloc(v)) {
		q->run_rc = dpmu_err_set(q->run_err, DPMU_ENOMEM, "qemu backend: out of memory");
		return 0;
	}
	v->ended = false; /* words after its end: a later thread's */
	q->hook_v = v;    /* the engine's sampling hooks are about v */
	v->in_call = false; /* words after the call: it returned */
	/* Only wp lives in a register across the blocks: the queue's end
	 * (we) and the checked mode's aidx are reloaded where they are used,
	 * off the fast path, so that the values every block uses (cur, ran,
	 * chk_end) keep the callee-saved registers across the engine's call. */
	const uint64_t *wp = w->w + w->head, *we;
	/* The fast loop's end: a word no block expects and no block entry
	 * (tag 0), so the loop needs no bound of its own. */
	w->w[w->tail] = QUEUE_END;
	/* aidx: the checked mode's; it and the addresses by index, v->abyidx,
	 * are read from v where they are used, not kept across the engine's
	 * call */
	uint32_t *aidx;
	const uint64_t quantum = q1 ? 1 : q->quantum;
	size_t nturns = 0;
	/* Counts in this call's instructions: ran, those retired so far (both
	 * paths); flushed, those the tallies (retired()) hold, which are sums
	 * brought up to date only before anything reads them (the
	 * per-instruction path, the monitor's check, the return); the current
	 * turn began at turn_end - quantum (before 0 by the part of it an
	 * earlier call ran, v->turn_left: turn_left < quantum); chk_base, where
	 * q->since_check would be 0 (it grows by each completed turn, as
	 * after_turn adds it). Differences are exact in unsigned arithmetic. */
	uint64_t ran = 0, flushed = 0;
	uint64_t turn_end = quantum - v->turn_left;
	v->turn_left = 0;
	/* solo with a monitor: the check at the first turn end at or after
	 * chk_end; otherwise never */
	const bool chk = solo && q->tick;
	uint64_t chk_base = turn_end - quantum - q->since_check;
	uint64_t chk_end = UINT64_MAX;
	if (chk)
		chk_end = -chk_base >= q->check_insns ? 0 : chk_base + q->check_insns;
	/* The open block (bdec_none when there is none) and the addresses
	 * accepted (na); in the fast mode, where its expected tags are (ep).
	 * A block open from an earlier call resumes in the mode it was left
	 * in (a turn of the general loop ends just after its next block
	 * opened, in the fast mode): v holds its state so. */
	const struct bdec *cur = v->open ? v->blk : &bdec_none;
	uint32_t na = 0, next = 0;
	const struct bdec *b;
	const uint32_t *ep;
	uint64_t x;
	if (v->open) {
		na = v->na;
		next = v->next;
		if (!solo && v->open_fast) {
			ep = cur->exp + na;
			goto fast_resume;
		}
		we = w->w + w->tail;
		aidx = STREAM_AIDX(v->abyidx);
		goto checked;
	}
fast:
	ep = cur->exp;
fast_resume:
	for (;;) {
		uint64_t *const aby = v->abyidx;
		x = *wp++;
		if (x >> DPMU_QEMU_TAG_SHIFT != *ep) {
			/* A block entry: the open block retires (it ran to
			 * where this one starts), this one opens. Only this
			 * retires instructions or fails the run. */
			if (x >> DPMU_QEMU_TAG_SHIFT == DPMU_QEMU_TAG_BLOCK && ep == cur->fast_end)
				goto run_fast;
			na = (uint32_t)(ep - cur->exp);
			we = w->w + w->tail;
			aidx = STREAM_AIDX(v->abyidx);
			if (wp > we) { /* QUEUE_END */
				wp = we;
				/* next is set on every way out of the fast loop
				 * (unused without an open block), so it is dead
				 * in the loop: no register or spill kept for it
				 * across the engine's call */
				next = cur != &bdec_none ? exp_to_aidx(aidx, cur->exp, na) : 0;
				if (!solo)
					v->open_fast = true;
				goto out;
			}
			next = exp_to_aidx(aidx, cur->exp, na);
			if (x >> DPMU_QEMU_TAG_SHIFT == DPMU_QEMU_TAG_BLOCK)
				goto run_slow;
			goto checked_word;
		}
		aby[(x >> DPMU_QEMU_TAG_SHIFT) - 1] = x & DPMU_QEMU_ADDR_MASK;
		ep++;
	}
checked:
	while (wp < we) {
		x = *wp++;
	checked_word:;
		uint64_t tag = x >> DPMU_QEMU_TAG_SHIFT;
		if (tag == DPMU_QEMU_TAG_BLOCK) {
			if (na == cur->fast_na && !v->nrev)
				goto run_fast;
			goto run_slow;
		}
		if (tag - 1 < DPMU_QEMU_TAG_ADDR_MAX) {
			/* An address entry (tag = index + 1). Instructions
			 * run in order: a later index is a new instruction,
			 * one not later is another access of the same one.
			 * Only a memory instruction of the block has one (the
			 * plugin asks for no other), so a stray word never
			 * counts towards the fast path's count (fast_na). The
			 * indices are distinct and below the block's n <
			 * DPMU_QEMU_TAG_ADDR_MAX, the arrays' length. */
			uint32_t idx = (uint32_t)tag - 1;
			if (idx >= next && idx < cur->n &&
			    (q->tmem[cur->first + idx] & 3) != DPMU_ICLASS_MEM_NONE) {
				aidx[na++] = idx;
				v->abyidx[idx] = x & DPMU_QEMU_ADDR_MASK;
				next = idx + 1;
			}
		} else if (tag == DPMU_QEMU_TAG_REGION && cur != &bdec_none) {
			v->na = na;
			region_word(q, v, x);
		} else if (tag >= DPMU_QEMU_TAG_SYNC_FIRST && tag <= DPMU_QEMU_TAG_SYNC_LAST) {
			/* after a system call (or the thread's end): its block
			 * ran to its end */
			b = NULL;
			goto retire_open;
		}
	}
	if (!solo)
		v->open_fast = false;
	goto out;
run_fast:
	/* The common case: every access made, so every instruction retired;
	 * the engine's summary of the block runs it. */
	b = block_of(q, (uint32_t)x);
	ran += cur->n;
	dpmu_uarch_run_block_on(q->uarch, v->uc, cur->sum, v->abyidx, b ? b->vaddr : 0);
	if (!b) {
		cur = &bdec_none;
		na = next = 0; /* unused: kept dead across the call */
		goto out;
	}
	cur = b;
	if (q1)
		goto turn_done; /* n >= 1: a turn of one block */
	goto opened;
run_slow:
	b = block_of(q, (uint32_t)x);
	if (q1)
		turn_end = ran + 1; /* where the last turn ended, + 1 */
retire_open:
	if (cur != &bdec_none) {
		/* it may open or close regions: the tallies first */
		retired(q, v, ran - flushed);
		uint64_t n0 = v->insns;
		v->blk = cur;
		v->na = na;
		/* sampling: the call stack learns the target's function */
		v->next_sym = b ? q->code[b->first].sym : 0;
		finish_block_slow(q, v, b ? b->vaddr : 0); /* leaves nrev 0 */
		ran += v->insns - n0;
		flushed = ran;
	}
	if (!b) {
		cur = &bdec_none;
		/* a system call's word (a futex's wait or wake, a clone, a
		 * sleep, a pipe's read or write, the thread's end): the call
		 * stops here, and the scheduler takes it (dpmu_qemu_sync_word) */
		if (x >> DPMU_QEMU_TAG_SHIFT != DPMU_QEMU_TAG_BLOCK)
			v->sync = x;
		goto out;
	}
	/* v->nrev is 0: a region word made the block that had it take the
	 * per-instruction path, which consumed them */
	cur = b;
opened:
	if (ran < turn_end)
		goto fast;
turn_done:
	nturns++;
	if (!solo) {
		/* the block just opened: none of its words taken yet */
		na = next = 0;
		v->open_fast = true;
		goto out;
	}
	if (ran >= chk_end) {
		retired(q, v, ran - flushed);
		flushed = ran;
		check_tick(q); /* q->since_check = 0 */
		if (q->run_rc) {
			chk_base = q1 ? ran : turn_end - quantum; /* since_check stays 0 */
			na = next = 0;
			goto out;
		}
		chk_base = ran;
		chk_end = ran + q->check_insns;
	}
	if (!q1)
		turn_end = ran + quantum;
	goto fast;
out:
	/* solo resumes its open block in the checked mode, always right;
	 * only the general loop's turns keep the mode (open_fast) */
	if (solo)
		v->open_fast = false;
	retired(q, v, ran - flushed);
	v->open = cur != &bdec_none;
	if (v->open) {
		v->blk = cur;
		v->na = na;
		v->next = next;
	}
	/* q1: every block that retired ended a turn, the last one here */
	uint64_t turn_start = q1 ? ran : turn_end - quantum, turn = ran - turn_start;
	if (chk)
		q->since_check = turn_start - chk_base;
	w->head = (size_t)(wp - w->w);
	*turns += nturns + (turn != 0); /* and one the queue ran out in */
	if (turn && turn < quantum && !q->run_rc) {
		v->turn_left = turn; /* unfinished: it goes on with the next words */
		return 0;
	}
	return turn;
}

static __attribute__((noinline)) uint64_t decode_solo(struct qemu_be *q, struct vstream *v,
						       struct wqueue *w, size_t *turns)
{
	if (q->quantum == 1)
		return decode(q, v, w, true, true, turns);
	return decode(q, v, w, true, false, turns);
}

static __attribute__((noinline)) uint64_t decode_turn(struct qemu_be *q, struct vstream *v,
						       struct wqueue *w)
{
	size_t turns = 0;
	return decode(q, v, w, false, false, &turns);
}

/* Advance vCPU i's simulated time by its core's cycles since c0; the core
 * is busy until then. */
static void advance(struct qemu_be *q, unsigned i, uint64_t c0)
{
	const struct vstream *v = &q->vs[i];
	uint64_t dc = dpmu_uarch_core_cycles(q->uarch, v->core) - c0;
	if (!dc) /* (a drain with no words: its time may be a sleep's end, not yet its core's) */
		return;
	q->vtime[i] += v->freq_hz ? (double)dc * 1e9 / v->freq_hz : (double)dc;
	if (q->vtime[i] > q->core_free[v->core])
		q->core_free[v->core] = q->vtime[i];
}

/* Whether vCPU i must wait for its core: another vCPU's turn on it ran
 * past i's time. Its time then moves to the core's, as a time-sliced
 * thread waits while the other runs (only on a core threads share: a
 * core's own vCPU is never behind it). */
static bool wait_core(struct qemu_be *q, unsigned i)
{
	double free = q->core_free[q->vs[i].core];
	if (q->vtime[i] >= free)
		return false;
	q->vtime[i] = free;
	return true;
}


/* A sleep of vCPU i ends (its next turn): its core idles from the sleep's
 * start to its end, in steps at the monitor's timer (-I), each followed
 * by the timer's tick where this core is the furthest, so that interval
 * rows fall every period through the sleep, as perf's do. */
static void sleep_settle(struct qemu_be *q, unsigned i)
{
	if (!q->vs[i].asleep)
		return;
	double end = sleep_unwind(q, i);
	while (q->tick && q->period_ns && !q->run_rc) {
		double next = (double)q->next_ns;
		if (next >= end || next <= q->vtime[i])
			break;
		dpmu_qemu_idle_to(q, i, next);
		/* the engine's time is whole ns, each part rounded down: on
		 * to next, a few ns at most (each pass adds at least one) */
		uint64_t t;
		while ((t = dpmu_uarch_time_ns(q->uarch)) < q->next_ns)
			dpmu_qemu_idle_to(q, i, q->vtime[i] + (double)(q->next_ns - t));
		check_tick(q); /* due now: next_ns moves on */
	}
	dpmu_qemu_idle_to(q, i, end);
}

/* vCPU i's turn among others: its words, then its simulated time, then
 * what its decoder stopped at (a sync word). */
static uint64_t turn(struct qemu_be *q, unsigned i)
{
	sleep_settle(q, i);
	core_take(q, i);
	uint64_t c0 = dpmu_uarch_core_cycles(q->uarch, q->vs[i].core);
	uint64_t n = decode_turn(q, &q->vs[i], &q->wq[i]);
	advance(q, i, c0);
	if (q->vs[i].sync)
		dpmu_qemu_sync_word(q, i);
	return n;
}

/* Whether the thread of vCPU v is in a system call: its last word marked a
 * call that may wait, or its last block ends in SVC. An open block was
 * checked and classified when it opened (block_first), so its last
 * template holds the flags. */
static bool in_syscall(const struct qemu_be *q, const struct vstream *v)
{
	if (v->in_call)
		return true;
	return v->open && (q->tmpl[v->blk->first + v->blk->n - 1].flags & DPMU_IC_SVC) != 0;
}

/* After a turn of n instructions: every check_insns, the monitor's
 * tick when one is due. inline: it runs after every turn; the check itself
 * is rare (decode's solo loop does the same in line). */
static inline void after_turn(struct qemu_be *q, uint64_t n)
{
	if (!q->tick || q->run_rc)
		return;
	q->since_check += n;
	if (q->since_check >= q->check_insns)
		check_tick(q);
}

/* The monitor's tick, if one is due (poll interval, timer period, PMU
 * interrupt). */
static void check_tick(struct qemu_be *q)
{
	q->since_check = 0;
	uint64_t now = dpmu_uarch_time_ns(q->uarch);
	bool due = (q->interval && q->since_tick >= q->interval) || now >= q->next_ns ||
		   dpmu_backend_irq_pending_cached(&q->irq, q->model, q->b.cores);
	if (!due)
		return;
	q->run_rc = tick_now(q);
	if (q->period_ns)
		while (q->next_ns <= now)
			q->next_ns += q->period_ns;
}

/* Whether vCPU k is among the scheduler's candidates: started, with words
 * or not set aside, and not stalled in a wait its waker has not reached. */
static bool runnable(const struct qemu_be *q, unsigned k)
{
	return q->vs[k].started && !(q->vs[k].idle && !wq_len(&q->wq[k])) && !q->vs[k].stalled &&
	       !q->vs[k].unborn;
}

/* While a single vCPU can run (the others have not started, or are set
 * aside without words: blocked in the kernel, or finished) there is no one
 * to interleave with: its queue is drained turn after turn in one decode
 * call (the turns and the checks between them fall where they would in the
 * general loop, so the counts are the same) and its simulated time is
 * brought up to date once, at the end, before the sync word the drain
 * stopped at (a thread it starts or wakes takes this vCPU's time). */
static size_t solo(struct qemu_be *q, unsigned nv)
{
	int lone = -1;
	for (unsigned k = 0; k < nv; k++) {
		if (!runnable(q, k))
			continue;
		if (lone >= 0)
			return 0; /* two can run: the general loop interleaves them */
		lone = (int)k;
	}
	if (lone < 0)
		return 0;
	unsigned i = (unsigned)lone;
	struct vstream *v = &q->vs[i];
	struct wqueue *w = &q->wq[i];
	if (wq_len(w))
		q->lag_wait = -1;
	if (wq_len(w))
		sleep_settle(q, i);
	wait_core(q, i);
	core_take(q, i);
	uint64_t c0 = dpmu_uarch_core_cycles(q->uarch, v->core);
	size_t turns = 0;
	if (wq_len(w) && !q->run_rc)
		after_turn(q, decode_solo(q, v, w, &turns));
	advance(q, i, c0);
	if (v->sync)
		dpmu_qemu_sync_word(q, i);
	return turns;
}

/* The scheduler's order: the vCPU furthest behind, the lowest index among
 * equals. */
static inline bool sched_before(const struct qemu_be *q, unsigned a, unsigned b)
{
	return q->vtime[a] < q->vtime[b] || (q->vtime[a] == q->vtime[b] && a < b);
}

/* Put vCPU x among the candidates, in order: from the back, where a vCPU
 * that just took its turn usually goes (threads of one program take turns
 * in a round). */
static void order_insert(struct qemu_be *q, uint8_t x)
{
	uint8_t *o = q->order;
	unsigned pos = q->norder;
	for (; pos && sched_before(q, x, o[(q->first + pos - 1) % DPMU_QEMU_MAX_VCPUS]); pos--)
		o[(q->first + pos) % DPMU_QEMU_MAX_VCPUS] = o[(q->first + pos - 1) % DPMU_QEMU_MAX_VCPUS];
	o[(q->first + pos) % DPMU_QEMU_MAX_VCPUS] = x;
	q->norder++;
}

/* Take the first candidate out. */
static void order_pop(struct qemu_be *q)
{
	q->first = (q->first + 1) % DPMU_QEMU_MAX_VCPUS;
	q->norder--;
}

/* Turns in simulated-time order while the laggard has words; the monitor's
 * ticks (poll interval, timer period, PMU interrupt) between turns.
 * Returns the turns taken. Within one call only the vCPU that took a turn
 * (its time, its queue) or was set aside changes: the others' order
 * stays, so the candidates are put in order once per call, and after a
 * turn only its vCPU moves, instead of a scan of every vCPU per turn. */
static void order_build(struct qemu_be *q, unsigned nv)
{
	q->first = q->norder = 0;
	q->resort = false;
	for (unsigned i = 0; i < nv; i++)
		if (runnable(q, i))
			order_insert(q, (uint8_t)i);
}

static size_t schedule(struct qemu_be *q)
{
	size_t turns = 0;
	unsigned nv = nvcpus(q);
	turns = solo(q, nv);
	order_build(q, nv);
	while (!q->run_rc) {
		if (!q->norder) {
			if (!dpmu_qemu_sync_let_go(q, nv))
				break;
			order_build(q, nv);
			continue;
		}
		int best = q->order[q->first];
		if (wait_core(q, (unsigned)best)) {
			/* later now: back among the others in order */
			order_pop(q);
			order_insert(q, (uint8_t)best);
			continue;
		}
		if (!wq_len(&q->wq[best])) {
			/* qemu has exited, or its thread has: nothing more
			 * will come (a later thread given its index starts
			 * with words of its own) */
			if (q->exited || q->vs[best].ended) {
				q->vs[best].idle = true;
				order_pop(q);
				continue;
			}
			if (q->lag_wait != best) {
				/* the flag is read before the next collect(): what the
				 * thread published before its call is in the queue by
				 * the next pass, if it has nothing, it is blocked */
				q->lag_wait = best;
				/* one a wake brought back may not have left the
				 * wait in the host yet */
				q->lag_blocked = atomic_load_explicit(&q->shm->waiting[best],
								      memory_order_acquire) != 0 &&
						 !q->vs[best].woken && !q->vs[best].asleep;
				/* a futex wait whose wake came first in simulated
				 * time (a wake no wait has taken): its thread is
				 * about to go on, as one a wake brings back */
				if (q->lag_blocked &&
				    dpmu_qemu_token_has(q, atomic_load_explicit(&q->shm->wait_addr[best],
								      memory_order_acquire))) {
					q->vs[best].woken = true;
					q->lag_blocked = false;
				}
				q->lag_probe_ns = QEMU_LAG_PROBE_NS;
				clock_gettime(CLOCK_MONOTONIC, &q->lag_since);
				break;
			}
			bool sys = in_syscall(q, &q->vs[best]);
			long long waited = elapsed_ns(&q->lag_since);
			bool asleep = false;
			/* brought back by a wake, still in its futex wait: asleep
			 * there, the wake was another's */
			bool woken_waiting = q->vs[best].woken &&
					     atomic_load_explicit(&q->shm->waiting[best],
								  memory_order_acquire);
			/* in a sleep of a given length: its host thread sleeps,
			 * and wakes by itself after at most that long */
			uint64_t sleep = sleep_left_ns(q, (unsigned)best);
			if (sys && !q->lag_blocked && !sleep && waited >= q->lag_probe_ns) {
				uint32_t tid = atomic_load_explicit(&q->shm->tid[best],
								    memory_order_relaxed);
				/* a read costs two opens: every 100 us at most */
				q->lag_probe_ns = waited + QEMU_LAG_PROBE_NS;
				asleep = tid && host_thread_sleeps(q->pid, tid, woken_waiting);
			}
			if (!q->lag_blocked && !asleep &&
			    (uint64_t)waited < QEMU_LAG_WAIT_NS + sleep)
				break;
			q->vs[best].idle = true;
			q->vs[best].woken = false;
			/* the futex (or pipe) a wake of which brings it back */
			q->vs[best].aside_addr =
				q->lag_blocked || woken_waiting || asleep
					? atomic_load_explicit(&q->shm->wait_addr[best],
							       memory_order_acquire)
					: 0;
			if (q->lag_blocked)
				q->sched.aside_waiting++;
			else if (sys)
				q->sched.aside_syscall++;
			else
				q->sched.aside_running++;
			q->sched.aside_asleep += asleep;
			q->lag_wait = -1;
			order_pop(q);
			continue;
		}
		q->lag_wait = -1;
		uint64_t n = turn(q, (unsigned)best);
		turns++;
		after_turn(q, n);
		if (q->resort) { /* a sync word: others may have come or gone */
			order_build(q, nv);
			continue;
		}
		order_pop(q);
		order_insert(q, (uint8_t)best);
	}
	q->sched.turns += turns;
	return turns;
}

/* DPMU_QEMU_DRAIN=read|discard: take what the rings hold without modelling
 * it; returns the records taken. read touches every word as collect()
 * does, so its cost is the transfer's and the reading's; discard touches
 * none, so the slots' lines stay in the producer's cache. */
static size_t collect_unmodelled(struct qemu_be *q)
{
	size_t total = 0;
	unsigned nv = nvcpus(q);
	for (unsigned i = 0; i < nv; i++) {
		struct dpmu_ring *ring = ring_of(q, i);
		if (q->drain == QEMU_DRAIN_DISCARD) {
			total += dpmu_ring_discard(ring);
			continue;
		}
		const struct dpmu_record *rec;
		size_t n;
		uint64_t sum = q->drain_sink;
		while ((n = dpmu_ring_peek(ring, &rec, 64)) > 0) {
			for (size_t r = 0; r < n; r++) {
				sum += rec[r].time;
				for (size_t k = 0; k < DPMU_QEMU_WORDS - 1; k++)
					sum += rec[r].val[k];
			}
			dpmu_ring_release(ring, n);
			total += n;
		}
		q->drain_sink = sum; /* kept, so the reads are not optimised away */
	}
	return total;
}

/* Take what the rings hold and run what is due; returns whether anything
 * happened. */
static size_t drain(struct qemu_be *q)
{
	if (q->drain != QEMU_DRAIN_MODEL)
		return collect_unmodelled(q);
	size_t got = collect(q);
	q->last_got = got;
	return schedule(q) + got;
}

/* ---- running ------------------------------------------------------------------- */

int dpmu_qemu_tick_now(struct qemu_be *q)
{
	return tick_now(q);
}

static int tick_now(struct qemu_be *q)
{
	q->since_tick = 0;
	int rc = dpmu_backend_tick_el1(q->model, q->uarch, q->b.cores, q->tick, q->tick_ctx,
				       q->run_err);
	/* a sample re-arms its counter: the block path's watch follows it */
	if (q->sample_blocks)
		dpmu_qemu_sample_rearm(q);
	return rc;
}

static void flush_engine(void *ctx)
{
	dpmu_uarch_flush(ctx);
}

static int spawn(struct qemu_be *q, struct dpmu_err *err)
{
	size_t argc = 0;
	while (q->argv && q->argv[argc])
		argc++;
	char **args = calloc(argc + 8, sizeof *args);
	if (!args)
		return dpmu_err_set(err, DPMU_ENOMEM, "qemu backend: out of memory");
	char plug[4400];
	/* DPMU_PLUGIN_ARGS: more plugin arguments (tests: count=PATH) */
	const char *extra = getenv("DPMU_PLUGIN_ARGS");
	snprintf(plug, sizeof plug, "%s,fd=%d%s%.100s", q->plugin, q->fd, extra && *extra ? "," : "",
		 extra ? extra : "");
	size_t k = 0;
	args[k++] = q->qemu;
	if (q->sysroot[0]) {
		args[k++] = "-L";
		args[k++] = q->sysroot;
	}
	args[k++] = "-plugin";
	args[k++] = plug;
	args[k++] = q->program;
	for (size_t i = 1; i < argc; i++)
		args[k++] = q->argv[i];
	args[k] = NULL;
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		free(args);
		return dpmu_err_set(err, DPMU_EIO, "cannot start qemu-aarch64: %s", strerror(errno));
	}
	if (pid == 0) {
		/* qemu never outlives dynpmu: a guest waiting on a full ring would
		 * otherwise wait forever. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		if (q->stdout_fd > 0 && dup2(q->stdout_fd, STDOUT_FILENO) < 0)
			_exit(127);
		execv(q->qemu, args);
		fprintf(stderr, "dynpmu: cannot run %s: %s\n", q->qemu, strerror(errno));
		_exit(127);
	}
	free(args);
	q->pid = pid;
	q->live_pid = pid;
	return 0;
}

bool dpmu_qemu_signal(struct dpmu_backend *b, int sig)
{
	struct qemu_be *q = (struct qemu_be *)b;
	pid_t pid = q ? (pid_t)q->live_pid : 0;
	return pid > 0 && kill(pid, sig) == 0;
}

/* The run: ticks about every `interval` instructions, when the simulated
 * time passes each multiple of period_ns (0: no timer) and when a PMU
 * interrupt line of the workload's cores is asserted, as sim.c does. */
static int qemu_run_timed(struct dpmu_backend *b, uint64_t interval, uint64_t period_ns,
			  dpmu_backend_tick_fn tick, void *ctx, struct dpmu_err *err)
{
	struct qemu_be *q = (struct qemu_be *)b;
	if (q->pid)
		return dpmu_err_set(err, DPMU_ESTATE, "the program has already run");
	int rc = shm_create(q, err);
	if (rc)
		return rc;
	q->tick = tick;
	q->tick_ctx = ctx;
	q->interval = interval;
	q->run_err = err;
	q->run_rc = 0;
	q->period_ns = period_ns;
	q->next_ns = period_ns ? dpmu_uarch_time_ns(q->uarch) + period_ns : UINT64_MAX;
	q->lag_wait = -1;
	q->check_insns = dpmu_backend_check_insns(period_ns);
	if (q->sample)
		dpmu_qemu_sample_start(q); /* the counters are armed by now */
	rc = dpmu_uarch_set_batch(q->uarch, q->check_insns, err);
	if (!rc)
		rc = dpmu_backend_set_el(q->model, q->uarch, q->b.cores, 0, err);
	if (!rc)
		rc = spawn(q, err);
	if (rc)
		return rc;
	/* Consume until qemu has exited and the rings are empty. */
	unsigned idle = 0;
	while (!q->run_rc) {
		if (drain(q)) {
			idle = 0;
			continue;
		}
		if (!q->exited) {
			/* seen ended but not reaped (WNOWAIT), so that live_pid is
			 * cleared while the pid is still qemu's */
			siginfo_t si = {0};
			if (waitid(P_PID, (id_t)q->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    si.si_pid == q->pid) {
				q->live_pid = 0;
				waitpid(q->pid, &q->status, 0);
				q->exited = true;
				continue; /* drain once more: qemu published before it went */
			}
			struct timespec ts = {0, idle < 100 ? 20000 : 200000}, t0;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			nanosleep(&ts, NULL);
			q->sched.idle_ns += (uint64_t)elapsed_ns(&t0);
			idle++;
			continue;
		}
		break;
	}
	if (q->run_rc) {
		/* a decoding or monitor error: stop the program, keep the message */
		if (!q->exited) {
			kill(q->pid, SIGKILL);
			q->live_pid = 0;
			waitpid(q->pid, &q->status, 0);
			q->exited = true;
		}
		rc = q->run_rc;
	}
	/* Lossless means every record published was collected intact. */
	for (unsigned i = 0; !rc && i < DPMU_QEMU_MAX_VCPUS; i++) {
		struct dpmu_ring_stats st;
		dpmu_ring_stats(ring_of(q, i), &st);
		if (st.mismatched || st.in_flight || st.dropped)
			rc = dpmu_err_set(err, DPMU_EIO,
					  "qemu plugin: vCPU %u's ring lost records (%llu torn, %llu "
					  "left, %llu dropped)",
					  i, (unsigned long long)st.mismatched,
					  (unsigned long long)st.in_flight, (unsigned long long)st.dropped);
	}
	if (!rc) {
		for (unsigned i = 0; i < DPMU_QEMU_MAX_VCPUS; i++) {
			if (q->vs[i].open)
				core_take(q, i);
			finish_block(q, &q->vs[i], 0);
		}
		rc = q->run_rc;
	}
	if (!rc && atomic_load(&q->shm->failed))
		rc = dpmu_err_set(err, DPMU_ERANGE, "qemu plugin: %s", q->shm->errmsg);
	uint64_t total = 0;
	for (unsigned c = 0; c < DPMU_MAX_CORES; c++)
		total += q->per_core[c];
	if (!rc && WIFEXITED(q->status) && WEXITSTATUS(q->status) == 127 && total == 0)
		rc = dpmu_err_set(err, DPMU_EIO,
				  "qemu-aarch64 did not start %s (see its message above)", q->program);
	if (!rc && tick)
		rc = tick_now(q);
	rc = dpmu_backend_end_el1(q->model, q->uarch, q->b.cores, rc, err);
	q->tick = NULL;
	return rc;
}

static int qemu_run(struct dpmu_backend *b, uint64_t interval, dpmu_backend_tick_fn tick,
		    void *ctx, struct dpmu_err *err)
{
	return qemu_run_timed(b, interval, 0, tick, ctx, err);
}

static uint64_t qemu_time_ns(struct dpmu_backend *b)
{
	return dpmu_uarch_time_ns(((struct qemu_be *)b)->uarch);
}

static void qemu_destroy(struct dpmu_backend *b)
{
	struct qemu_be *q = (struct qemu_be *)b;
	if (!q)
		return;
	if (q->pid && !q->exited) {
		kill(q->pid, SIGKILL);
		q->live_pid = 0;
		waitpid(q->pid, NULL, 0);
	}
	if (q->shm_base)
		munmap(q->shm_base, dpmu_qemu_shm_bytes());
	if (q->fd >= 0)
		close(q->fd);
	if (q->tmpl)
		munmap(q->tmpl, (size_t)DPMU_QEMU_MAX_CODE * sizeof *q->tmpl);
	if (q->tmem)
		munmap(q->tmem, DPMU_QEMU_MAX_CODE);
	if (q->tcheck)
		munmap(q->tcheck, (size_t)DPMU_QEMU_MAX_CODE * sizeof *q->tcheck);
	if (q->texp)
		munmap(q->texp, TEXP_BYTES);
	if (q->bdec) {
		for (uint32_t i = 0; i < q->bdec_end; i++)
			dpmu_ublock_destroy(q->bdec[i].sum);
		munmap(q->bdec, (size_t)DPMU_QEMU_MAX_BLOCKS * sizeof *q->bdec);
	}
	for (unsigned i = 0; i < DPMU_QEMU_MAX_VCPUS; i++) {
		free(q->vs[i].abyidx); /* and aidx (stream_alloc) */
		free(q->wq[i].w);
		free(q->vs[i].sh);
	}
	free(q->bsym);
	free(q->sym);
	free(q->evmap);
	dpmu_drv_destroy(q->b.drv);
	dpmu_uarch_destroy(q->uarch);
	dpmu_model_destroy(q->model);
	dpmu_profile_free(q->profile);
	free(q);
}

static int qemu_amu_setup(struct dpmu_backend *b, unsigned cpu, const uint16_t *events,
			  unsigned count, struct dpmu_err *err)
{
	struct qemu_be *q = (struct qemu_be *)b;
	return dpmu_backend_amu_firmware(q->b.drv, q->model, q->uarch, cpu, events, count, err);
}

static void qemu_on_switch(struct dpmu_backend *b, dpmu_backend_switch_fn fn, void *ctx)
{
	struct qemu_be *q = (struct qemu_be *)b;
	q->on_switch = fn;
	q->switch_ctx = ctx;
}

static const struct dpmu_backend_ops qemu_ops = {
	.name = "qemu",
	.run = qemu_run,
	.time_ns = qemu_time_ns,
	.destroy = qemu_destroy,
	.run_timed = qemu_run_timed,
	.amu_setup = qemu_amu_setup,
	.where = dpmu_qemu_where,
	.on_switch = qemu_on_switch,
};

/* ---- setup -------------------------------------------------------------------- */

int dpmu_qemu_create(const struct dpmu_qemu_options *opt, struct dpmu_backend **out,
		     struct dpmu_err *err)
{
	*out = NULL;
	if (!opt || !opt->program)
		return dpmu_err_set(err, DPMU_EINVAL, "no program given after --");
	struct qemu_be *q = calloc(1, sizeof *q);
	if (!q)
		return dpmu_err_set(err, DPMU_ENOMEM, "qemu backend: out of memory");
	q->b.ops = &qemu_ops;
	q->fd = -1;
	for (unsigned c = 0; c < DPMU_MAX_CORES; c++)
		q->core_vcpu[c] = q->core_thread[c] = -1;
	for (unsigned i = 0; i < DPMU_QEMU_MAX_VCPUS; i++)
		q->vs[i].thread = -1;
	q->argv = opt->argv;
	q->by_symbol = opt->by_symbol;
	q->sample = opt->sample;
	q->skid = opt->skid;
	q->per_thread = opt->per_thread;
	q->stdout_fd = opt->stdout_fd;
	int rc = dpmu_qemu_parse_quantum(getenv("DPMU_QEMU_QUANTUM"), &q->quantum, err);
	if (!rc)
		rc = dpmu_qemu_parse_drain(getenv("DPMU_QEMU_DRAIN"), &q->drain, err);
	if (rc) {
		qemu_destroy(&q->b);
		return rc;
	}
	/* the report that follows counts nothing of the program's */
	if (q->drain != QEMU_DRAIN_MODEL)
		fprintf(stderr,
			"dynpmu: DPMU_QEMU_DRAIN=%s: the records are %s, not modelled; the "
			"counts below are not the program's\n",
			q->drain == QEMU_DRAIN_READ ? "read" : "discard",
			q->drain == QEMU_DRAIN_READ ? "read and dropped" : "dropped unread");
	if (opt->sysroot)
		snprintf(q->sysroot, sizeof q->sysroot, "%s", opt->sysroot);
	rc = dpmu_qemu_check_program(opt->program, opt->sysroot, q->program, sizeof q->program, err);
	if (!rc)
		rc = dpmu_qemu_find_qemu(q->qemu, sizeof q->qemu, err);
	if (!rc)
		rc = dpmu_qemu_find_plugin(q->plugin, sizeof q->plugin, err);
	if (!rc)
		rc = dpmu_profile_load(opt->profile ? opt->profile : DPMU_PROFILE_DEFAULT, &q->profile,
				       err);
	if (!rc)
		rc = dpmu_model_create(q->profile, &q->model, err);
	if (!rc)
		rc = dpmu_uarch_create(q->model, q->profile, &q->uarch, err);
	if (rc) {
		qemu_destroy(&q->b);
		return rc;
	}
	q->b.profile = q->profile;
	unsigned ncores = dpmu_model_ncores(q->model);
	uint64_t mask = ncores >= 64 ? ~0ull : (1ull << ncores) - 1;
	if (opt->cpus && (rc = dpmu_qemu_parse_cpus(opt->cpus, ncores, &mask, err))) {
		qemu_destroy(&q->b);
		return rc;
	}
	dpmu_qemu_placement(q, mask, opt->place);
	for (unsigned i = 0; i < DPMU_QEMU_MAX_VCPUS; i++) {
		q->vs[i].core = q->place[i % q->nplace];
		q->vs[i].unborn = i > 0; /* every thread but the first is cloned */
		q->vs[i].uc = dpmu_uarch_core(q->uarch, q->vs[i].core);
		if (!q->vs[i].uc) {
			qemu_destroy(&q->b);
			return dpmu_err_set(err, DPMU_ESTATE,
					    "qemu backend: the engine has no cpu%u of the profile",
					    q->vs[i].core);
		}
		unsigned cl, idx;
		const struct dpmu_core_type *t = dpmu_profile_core(q->profile, q->vs[i].core, &cl, &idx);
		q->vs[i].freq_hz = t ? (double)t->freq_hz : 0;
	}
	q->b.cores = mask;
	const char *base = strrchr(q->program, '/');
	snprintf(q->b.workload, sizeof q->b.workload, "%.200s", base ? base + 1 : q->program);
	for (size_t i = 1; opt->argv && opt->argv[0] && opt->argv[i]; i++) {
		size_t u = strlen(q->b.workload);
		if (u + 2 < sizeof q->b.workload)
			snprintf(q->b.workload + u, sizeof q->b.workload - u, " %.*s",
				 (int)(sizeof q->b.workload - u - 2), opt->argv[i]);
	}
	/* per translated instruction: its template, made on first execution */
	q->tmpl = mmap(NULL, (size_t)DPMU_QEMU_MAX_CODE * sizeof *q->tmpl, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	q->tmem = mmap(NULL, DPMU_QEMU_MAX_CODE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	q->tcheck = mmap(NULL, (size_t)DPMU_QEMU_MAX_CODE * sizeof *q->tcheck,
			 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	q->texp = mmap(NULL, TEXP_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	q->bdec = mmap(NULL, (size_t)DPMU_QEMU_MAX_BLOCKS * sizeof *q->bdec, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (q->tmpl == MAP_FAILED || q->tmem == MAP_FAILED || q->tcheck == MAP_FAILED ||
	    q->texp == MAP_FAILED || q->bdec == MAP_FAILED) {
		if (q->tmpl == MAP_FAILED)
			q->tmpl = NULL;
		if (q->tmem == MAP_FAILED)
			q->tmem = NULL;
		if (q->tcheck == MAP_FAILED)
			q->tcheck = NULL;
		if (q->texp == MAP_FAILED)
			q->texp = NULL;
		if (q->bdec == MAP_FAILED)
			q->bdec = NULL;
		qemu_destroy(&q->b);
		return dpmu_err_set(err, DPMU_ENOMEM, "qemu backend: out of memory");
	}
	dpmu_uarch_set_observer(q->uarch, observe, wants, q);
	dpmu_regio_model_init(&q->rm, q->model, flush_engine, q->uarch);
	rc = dpmu_drv_create(&q->rm.io, &q->b.drv, err);
	if (rc) {
		qemu_destroy(&q->b);
		return rc;
	}
	*out = &q->b;
	return 0;
}

int dpmu_qemu_wait_status(const struct dpmu_backend *b)
{
	return ((const struct qemu_be *)b)->status;
}

void dpmu_qemu_sched_stats(const struct dpmu_backend *b, struct dpmu_qemu_sched_stats *out)
{
	*out = ((const struct qemu_be *)b)->sched;
}

uint64_t dpmu_qemu_insns(const struct dpmu_backend *b, unsigned core)
{
	const struct qemu_be *q = (const struct qemu_be *)b;
	return core < DPMU_MAX_CORES ? q->per_core[core] : 0;
}

int dpmu_qemu_exit_code(const struct dpmu_backend *b)
{
	const struct qemu_be *q = (const struct qemu_be *)b;
	if (!q->exited)
		return 1;
	if (WIFEXITED(q->status))
		return WEXITSTATUS(q->status);
	if (WIFSIGNALED(q->status))
		return 128 + WTERMSIG(q->status);
	return 1;
}

/* ---- report -------------------------------------------------------------------- */

int dpmu_qemu_set_region_events(struct dpmu_backend *b, const struct dpmu_qemu_report_event *ev,
				unsigned nev, struct dpmu_err *err)
{
	struct qemu_be *q = (struct qemu_be *)b;
	if (nev > NEV_MAX)
		return dpmu_err_set(err, DPMU_ERANGE, "regions count at most %u events; %u given",
				    NEV_MAX, nev);
	if (!q->evmap) {
		q->evmap = malloc(65536 * sizeof *q->evmap);
		if (!q->evmap)
			return dpmu_err_set(err, DPMU_ENOMEM, "qemu backend: out of memory");
	}
	memset(q->evmap, 0xff, 65536 * sizeof *q->evmap); /* -1: not reported */
	for (unsigned e = 0; e < nev; e++)
		if (ev[e].code >= 0 && ev[e].code < 65536)
			q->evmap[ev[e].code] = (int16_t)e;
	q->nev = nev;
	/* the engine's delivery lists hold wants()'s earlier answers */
	dpmu_uarch_set_observer(q->uarch, observe, wants, q);
	return 0;
}
