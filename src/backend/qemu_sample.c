/*
 * The qemu backend's part of sampling (dynpmu record, docs/record.md):
 * instructions retired one at a time so that the monitor's tick comes
 * right after the one whose event overflows a counter, each thread's
 * shadow call stack, and where a core was for the sample.
 *
 * The shadow stack (docs/frontend.md "Call stacks") follows the branches
 * as they retire, each with its target (the next block's address) and
 * the target's function:
 *   a call (BL, BLR) pushes its site, its return address and the callee;
 *   a register branch (RET, BR) to the return address of a frame pops
 *     down to that frame: a return, or an unwinding past several;
 *   a register branch to a function with a live frame, not the current
 *     one, pops down to that frame: longjmp into it;
 *   anything else (a tail call, a jump within the function, a signal
 *     handler's return to its trampoline) leaves the stack as it is: a
 *     handler entered without a call runs on top of the frames it
 *     interrupted, and the trampoline's sigreturn resumes them;
 *   a thread's end empties its stack.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/qemu_internal.h"

#define SHADOW_MAX (1u << 16) /* frames kept; deeper ones are only counted */

void dpmu_qemu_shadow_reset(struct vstream *v)
{
	v->sh_n = 0;
	v->sh_lost = 0;
	v->skid_left = 0;
}

static void shadow_push(struct vstream *v, uint64_t site, uint64_t ret, uint32_t fn)
{
	if (v->sh_lost || v->sh_n == SHADOW_MAX) {
		v->sh_lost++;
		return;
	}
	if (v->sh_n == v->sh_cap) {
		uint32_t cap = v->sh_cap ? v->sh_cap * 2 : 64;
		struct shadow_frame *n = realloc(v->sh, cap * sizeof *n);
		if (!n) {
			v->sh_lost++; /* counted: the chain is marked truncated */
			return;
		}
		v->sh = n;
		v->sh_cap = cap;
	}
	v->sh[v->sh_n++] = (struct shadow_frame){site, ret, fn};
}

/* The current function: the callee of the innermost frame (0: unknown). */
static uint32_t shadow_fn(const struct vstream *v)
{
	return v->sh_n && !v->sh_lost ? v->sh[v->sh_n - 1].fn : 0;
}

/* A branch retired, for `to` in the function `to_fn`. */
static void shadow_branch(struct vstream *v, const struct dpmu_insn *in, uint64_t to, uint32_t to_fn)
{
	if (in->br_kind == DPMU_BR_CALL) {
		shadow_push(v, in->pc, in->pc + in->isize, to_fn);
		return;
	}
	if (!(in->flags & DPMU_IC_REG_BRANCH))
		return; /* a direct branch: within the function, or a tail call */
	if (v->sh_lost) {
		/* frames beyond the stack's room: only a plain return is followed */
		if (in->br_kind == DPMU_BR_RET)
			v->sh_lost--;
		return;
	}
	for (uint32_t k = v->sh_n; k-- > 0;)
		if (v->sh[k].ret == to) {
			v->sh_n = k;
			return;
		}
	if (!to_fn || to_fn == shadow_fn(v))
		return;
	for (uint32_t k = v->sh_n; k-- > 0;)
		if (v->sh[k].fn == to_fn) {
			v->sh_n = k + 1; /* longjmp: back in frame k's function */
			return;
		}
}

static void take_sample(struct qemu_be *q, struct vstream *v, const struct dpmu_insn *in)
{
	q->at[v->core].v = v;
	q->at[v->core].pc = in->pc;
	int rc = dpmu_qemu_tick_now(q);
	if (rc && !q->run_rc)
		q->run_rc = rc;
	q->at[v->core].v = NULL;
}

void dpmu_qemu_retire_sampled(struct qemu_be *q, struct vstream *v, const struct dpmu_insn *in,
			      size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t m;
		bool ovf = false;
		if (v->skid_left) {
			/* the interrupt is on its way: one at a time */
			m = dpmu_uarch_retire_watched(q->uarch, v->core, in + i, 1, &ovf);
			if (--v->skid_left == 0)
				ovf = true;
			else if (ovf)
				ovf = false; /* the pending interrupt takes it too */
		} else {
			m = dpmu_uarch_retire_watched(q->uarch, v->core, in + i, n - i, &ovf);
			if (ovf && q->skid) {
				v->skid_left = q->skid;
				ovf = false;
			}
		}
		/* the branches retired before the sampled instruction */
		size_t last = i + m - 1;
		for (size_t k = i; k < last; k++)
			if (in[k].kind == DPMU_INSN_BRANCH)
				shadow_branch(v, &in[k], in[k].addr, k + 1 == n ? v->next_sym : 0);
		if (ovf)
			take_sample(q, v, &in[last]);
		if (in[last].kind == DPMU_INSN_BRANCH)
			shadow_branch(v, &in[last], in[last].addr, last + 1 == n ? v->next_sym : 0);
		q->last[v->core].v = v;
		q->last[v->core].pc = in[last].pc;
		i += m;
	}
}

/* ---- the block path (dpmu_uarch_watch_arm) ---- */

static size_t bsym_slot(uint64_t vaddr, size_t cap)
{
	return (size_t)((vaddr >> 2) * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
}

void dpmu_qemu_sample_block(struct qemu_be *q, uint64_t vaddr, uint32_t sym)
{
	if (q->nbsym * 2 >= q->bsymcap) {
		size_t cap = q->bsymcap ? q->bsymcap * 2 : 4096;
		struct block_sym *n = calloc(cap, sizeof *n);
		if (!n)
			return; /* its calls and returns are then followed without it */
		for (size_t i = 0; i < q->bsymcap; i++) {
			if (!q->bsym[i].vaddr)
				continue;
			size_t j = bsym_slot(q->bsym[i].vaddr, cap);
			while (n[j].vaddr)
				j = (j + 1) & (cap - 1);
			n[j] = q->bsym[i];
		}
		free(q->bsym);
		q->bsym = n;
		q->bsymcap = cap;
	}
	size_t j = bsym_slot(vaddr, q->bsymcap);
	while (q->bsym[j].vaddr && q->bsym[j].vaddr != vaddr)
		j = (j + 1) & (q->bsymcap - 1);
	if (!q->bsym[j].vaddr)
		q->nbsym++;
	q->bsym[j] = (struct block_sym){vaddr, sym};
}

/* The function of the block at vaddr (0: not known). */
static uint32_t block_sym_at(const struct qemu_be *q, uint64_t vaddr)
{
	if (!q->bsymcap || !vaddr)
		return 0;
	for (size_t j = bsym_slot(vaddr, q->bsymcap); q->bsym[j].vaddr; j = (j + 1) & (q->bsymcap - 1))
		if (q->bsym[j].vaddr == vaddr)
			return q->bsym[j].sym;
	return 0;
}

static void on_overflow(void *ctx, unsigned core, const struct dpmu_insn *in)
{
	struct qemu_be *q = ctx;
	if (q->hook_v && q->hook_v->core == core)
		take_sample(q, q->hook_v, in);
}

static void on_branch(void *ctx, unsigned core, const struct dpmu_insn *in, uint64_t next_pc)
{
	struct qemu_be *q = ctx;
	if (q->hook_v && q->hook_v->core == core)
		shadow_branch(q->hook_v, in, next_pc ? next_pc : in->pc + in->isize,
			      block_sym_at(q, next_pc));
}

void dpmu_qemu_sample_start(struct qemu_be *q)
{
	/* the block path stops where the clock or INST_RETIRED overflows a
	 * counter (dpmu_uarch_watch_arm), not where another event or the two
	 * together do: then every block retires one instruction at a time;
	 * with skid, likewise (the interrupt comes instructions after) */
	bool all = q->skid == 0;
	for (unsigned c = 0; all && c < DPMU_MAX_CORES; c++)
		if (q->b.cores >> c & 1)
			all = dpmu_uarch_watch_arm(q->uarch, c);
	q->sample_blocks = all;
	if (all) {
		static const struct dpmu_uarch_sample_hooks hooks = {on_overflow, on_branch};
		dpmu_uarch_set_sample_hooks(q->uarch, &hooks, q);
	}
}

void dpmu_qemu_sample_rearm(struct qemu_be *q)
{
	for (unsigned c = 0; c < DPMU_MAX_CORES; c++)
		if (q->b.cores >> c & 1)
			dpmu_uarch_watch_arm(q->uarch, c);
}

int dpmu_qemu_where(struct dpmu_backend *b, unsigned cpu, struct dpmu_backend_where *out,
		    struct dpmu_err *err)
{
	struct qemu_be *q = (struct qemu_be *)b;
	memset(out, 0, sizeof *out);
	const struct vstream *v = NULL;
	uint64_t pc = 0;
	if (cpu < DPMU_MAX_CORES) {
		/* the sampled instruction, else where the core is (a tick that
		 * came before the skid ran out) */
		v = q->at[cpu].v ? q->at[cpu].v : q->last[cpu].v;
		pc = q->at[cpu].v ? q->at[cpu].pc : q->last[cpu].pc;
	}
	if (!q->sample || !v)
		return dpmu_err_set(err, DPMU_ESTATE,
				    "cpu%u: no sample is being taken there (sampling %s)", cpu,
				    q->sample ? "is on, but nothing ran there yet"
					      : "is off: dynpmu record turns it on");
	out->pc = pc;
	out->pid = (uint32_t)q->pid;
	size_t idx = (size_t)(v - q->vs);
	uint32_t tid = atomic_load_explicit(&q->shm->tid[idx], memory_order_relaxed);
	/* a thread's id is known from its first system call on (glibc's
	 * thread start makes one at once); before it, the process's */
	out->tid = tid ? tid : (uint32_t)q->pid;
	uint32_t k = v->sh_n;
	while (k > 0 && out->depth < DPMU_BACKEND_CHAIN_MAX)
		out->call[out->depth++] = v->sh[--k].site;
	out->truncated = k > 0 || v->sh_lost;
	return 0;
}

size_t dpmu_qemu_mappings(const struct dpmu_backend *b, struct dpmu_qemu_mapping *out, size_t cap)
{
	struct qemu_be *q = (struct qemu_be *)b;
	if (!q || !q->shm)
		return 0;
	uint32_t n = atomic_load_explicit(&q->shm->nmaps, memory_order_acquire);
	if (n > DPMU_QEMU_MAX_MAPS)
		n = DPMU_QEMU_MAX_MAPS;
	for (uint32_t i = 0; i < n && i < cap; i++) {
		const struct dpmu_qemu_map *m = &q->shm->maps[i];
		const char *path = name_at(q, m->path);
		out[i] = (struct dpmu_qemu_mapping){m->start, m->len, m->pgoff,
						    path ? path : "[unknown]"};
	}
	return n;
}

uint32_t dpmu_qemu_pid(const struct dpmu_backend *b)
{
	return b ? (uint32_t)((const struct qemu_be *)b)->pid : 0;
}
