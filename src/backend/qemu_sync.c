/*
 * The qemu backend's ordering of its threads' waits in simulated time:
 * futex waits and wakes, pipe writes and reads, sleeps and thread starts
 * (docs/frontend.md "Threads and interleaving"). The scheduler (qemu.c)
 * hands each sync word the decoder stopped at to dpmu_qemu_sync_word.
 *
 * qemu runs the threads at host speed, and a thread that a futex wake
 * brings back resumes in the host whenever the host runs it. In simulated
 * time it goes on no earlier than its waker's wake: a wait that returned
 * woken (DPMU_QEMU_TAG_WAITED) takes the oldest wake of its futex that no
 * wait has taken (DPMU_QEMU_TAG_WOKE, one per thread woken) and resumes at
 * its time; with none yet, the thread stalls until one comes. A thread set
 * aside in the wait is brought back by the wake, so that the scheduler
 * waits for its words instead of letting the waker run on alone. A
 * thread's end is the kernel's wake of its joiner (DPMU_QEMU_TAG_THREAD_END
 * names the futex). A wait whose wake the stream does not carry (a
 * requeue, another process's wake) is let go when nothing else can run. */
#include <string.h>

#include "backend/qemu_internal.h"

static void token_add(struct qemu_be *q, uint64_t addr, double t)
{
	if (q->ntok == SYNC_TOKENS) { /* the oldest, likely stale, goes */
		memmove(&q->tok[0], &q->tok[1], (SYNC_TOKENS - 1) * sizeof q->tok[0]);
		q->ntok--;
	}
	q->tok[q->ntok].addr = addr;
	q->tok[q->ntok].t = t;
	q->ntok++;
}

bool dpmu_qemu_token_has(const struct qemu_be *q, uint64_t addr)
{
	for (unsigned k = 0; k < q->ntok; k++)
		if (addr && q->tok[k].addr == addr)
			return true;
	return false;
}

/* The oldest wake of addr no wait has taken, taken; false: none. */
static bool token_take(struct qemu_be *q, uint64_t addr, double *t)
{
	for (unsigned k = 0; k < q->ntok; k++) {
		if (q->tok[k].addr != addr)
			continue;
		*t = q->tok[k].t;
		q->ntok--;
		memmove(&q->tok[k], &q->tok[k + 1], (q->ntok - k) * sizeof q->tok[0]);
		return true;
	}
	return false;
}

/* Whether vCPU k is set aside, words not come yet, in a wait that a wake
 * of addr (a futex, or a pipe's key) ends. */
static bool aside_in(const struct qemu_be *q, unsigned k, uint64_t addr)
{
	const struct vstream *v = &q->vs[k];
	return v->idle && !wq_len(&q->wq[k]) && !v->woken && v->aside_addr == addr;
}

/* vCPU k, set aside in a wait, is woken at simulated time t: a candidate
 * again, whose words the scheduler waits for. */
static void bring_back(struct qemu_be *q, unsigned k, double t)
{
	struct vstream *v = &q->vs[k];
	v->aside_addr = 0;
	v->woken = true;
	v->idle = false;
	dpmu_qemu_idle_to(q, k, t);
}

/* A wake of addr at simulated time t: to the wait stalled on it longest
 * in simulated time (the earliest), else kept for the wait that will take
 * it. A thread still set aside in a wait of addr is brought back to t. */
static void sync_wake(struct qemu_be *q, unsigned nv, uint64_t addr, double t)
{
	int st = -1, aside = -1;
	for (unsigned k = 0; k < nv; k++) {
		const struct vstream *v = &q->vs[k];
		if (v->stalled && v->stall_addr == addr && (st < 0 || q->vtime[k] < q->vtime[st]))
			st = (int)k;
		/* (its host thread may have left the wait already) */
		if (aside_in(q, k, addr) && (aside < 0 || q->vtime[k] < q->vtime[aside]))
			aside = (int)k;
	}
	if (st >= 0) {
		q->vs[st].stalled = false;
		dpmu_qemu_idle_to(q, (unsigned)st, t);
		q->sched.sync_waited++;
		return;
	}
	token_add(q, addr, t);
	if (aside >= 0)
		bring_back(q, (unsigned)aside, t);
}

/* A write of pipe k put its bytes up to `end` there at simulated time t:
 * kept for the reads of them, and the reads stalled on them go on, as do
 * readers set aside asleep in a read of the pipe. */
static void pipe_wrote(struct qemu_be *q, unsigned k, uint64_t end, double t)
{
	if (k >= DPMU_QEMU_MAX_PIPES)
		return;
	struct pipe_writes *p = &q->pipes[k];
	if (p->n == PIPE_WRITES) { /* the oldest, read long since, goes */
		memmove(&p->w[0], &p->w[1], (PIPE_WRITES - 1) * sizeof p->w[0]);
		p->n--;
	}
	p->w[p->n].end = end;
	p->w[p->n].t = t;
	p->n++;
	uint64_t key = DPMU_QEMU_PIPE_KEY(k);
	unsigned nv = nvcpus(q);
	for (unsigned r = 0; r < nv; r++) {
		struct vstream *v = &q->vs[r];
		if (v->stalled && v->stall_addr == key && v->stall_bytes <= end) {
			v->stalled = false;
			dpmu_qemu_idle_to(q, r, t);
			q->sched.pipe_paired++;
		} else if (aside_in(q, r, key)) {
			bring_back(q, r, t);
		}
	}
	q->resort = true;
}

/* vCPU i read pipe k's bytes up to `end`: it goes on no earlier than the
 * write of the last of them, and stalls until that write is in simulated
 * time. */
static void pipe_read(struct qemu_be *q, unsigned i, unsigned k, uint64_t end)
{
	if (k >= DPMU_QEMU_MAX_PIPES)
		return;
	const struct pipe_writes *p = &q->pipes[k];
	for (unsigned j = 0; j < p->n; j++)
		if (p->w[j].end >= end) {
			dpmu_qemu_idle_to(q, i, p->w[j].t);
			q->sched.pipe_paired++;
			return;
		}
	q->vs[i].stalled = true;
	q->vs[i].stall_addr = DPMU_QEMU_PIPE_KEY(k);
	q->vs[i].stall_bytes = end;
}

/* vCPU k's new thread starts at simulated time t, its parent's clone,
 * whatever the index's last thread reached: the core stays busy until
 * that one's end (core_free, which wait_core holds the new one to). */
static void birth(struct qemu_be *q, unsigned k, double t)
{
	struct vstream *v = &q->vs[k];
	v->unborn = v->birth_known = false;
	/* a candidate from now on, words or not: the scheduler waits for the
	 * thread's first words as for any laggard's, instead of letting the
	 * others run on past its start */
	v->started = true;
	v->ended = false; /* (the index's last thread's) */
	if (t < q->vtime[k])
		q->vtime[k] = t;
	dpmu_qemu_idle_to(q, k, t);
	q->sched.born++;
}

/* What vCPU i's decoder stopped at (v->sync), after its turn: the thread's
 * end, a thread's start, or a futex's wait or wake, at the vCPU's time
 * now. */
void dpmu_qemu_sync_word(struct qemu_be *q, unsigned i)
{
	struct vstream *v = &q->vs[i];
	uint64_t x = v->sync, addr = x & DPMU_QEMU_ADDR_MASK;
	v->sync = 0;
	switch (x >> DPMU_QEMU_TAG_SHIFT) {
	case DPMU_QEMU_TAG_THREAD_END:
		dpmu_qemu_thread_end(q, v);
		q->sched.aside_ended++;
		if (addr) /* the kernel's wake of its joiner */
			sync_wake(q, nvcpus(q), addr, q->vtime[i]);
		/* the next thread qemu gives the index: at its parent's clone */
		if (v->birth_known)
			birth(q, i, v->birth_t);
		else
			v->unborn = true;
		break;
	case DPMU_QEMU_TAG_CHILD: {
		unsigned k = (unsigned)addr;
		if (k >= DPMU_QEMU_MAX_VCPUS || k == i)
			break;
		if (q->vs[k].unborn) {
			birth(q, k, q->vtime[i]);
		} else { /* the index's last thread has not ended here yet */
			q->vs[k].birth_known = true;
			q->vs[k].birth_t = q->vtime[i];
		}
		break;
	}
	case DPMU_QEMU_TAG_SPAWN: {
		double t;
		while (token_take(q, addr, &t))
			;
		break;
	}
	case DPMU_QEMU_TAG_WOKE:
		sync_wake(q, nvcpus(q), addr, q->vtime[i]);
		break;
	case DPMU_QEMU_TAG_PIPE_WROTE:
		pipe_wrote(q, (unsigned)(addr >> DPMU_QEMU_PIPE_SHIFT),
			   addr & DPMU_QEMU_PIPE_BYTES_MASK, q->vtime[i]);
		break;
	case DPMU_QEMU_TAG_PIPE_READ:
		pipe_read(q, i, (unsigned)(addr >> DPMU_QEMU_PIPE_SHIFT),
			  addr & DPMU_QEMU_PIPE_BYTES_MASK);
		break;
	case DPMU_QEMU_TAG_WAIT_CALL: /* its SVC block retired */
		v->in_call = true;
		break;
	case DPMU_QEMU_TAG_NOT_WAITED: /* its own time: nothing to pair (collect) */
		break;
	case DPMU_QEMU_TAG_SLEEP:
		/* it goes on after the sleep (the scheduler waits for its
		 * words then, as its host thread wakes by itself); its core
		 * idles until then at its next turn, not now: the system's
		 * time stays where the running threads are, and a sleep the
		 * program's exit cuts short is not counted */
		v->in_call = true;
		if (!v->asleep) {
			v->asleep = true;
			v->asleep_from = q->vtime[i];
		}
		q->vtime[i] += (double)addr;
		q->sched.slept++;
		q->sched.slept_ns += addr;
		break;
	case DPMU_QEMU_TAG_WAITED: {
		double t;
		if (token_take(q, addr, &t)) {
			dpmu_qemu_idle_to(q, i, t);
			q->sched.sync_paired++;
		} else {
			v->stalled = true;
			v->stall_addr = addr;
		}
		break;
	}
	}
	q->resort = true;
}

/* Nothing can run but stalled waits: with nothing new from qemu (or qemu
 * gone), the one furthest behind goes on at the latest time any vCPU has
 * reached, as a wake the stream does not carry would have it. Returns
 * whether one went. */
bool dpmu_qemu_sync_let_go(struct qemu_be *q, unsigned nv)
{
	if (q->last_got && !q->exited)
		return false;
	int st = -1;
	double latest = 0;
	for (unsigned k = 0; k < nv; k++) {
		if (q->vs[k].started && q->vtime[k] > latest)
			latest = q->vtime[k];
		/* (an unborn vCPU with words: a thread whose clone the stream
		 * does not carry) */
		bool held = q->vs[k].stalled || (q->vs[k].unborn && wq_len(&q->wq[k]));
		if (held && (st < 0 || q->vtime[k] < q->vtime[st]))
			st = (int)k;
	}
	if (st < 0)
		return false;
	if (q->vs[st].unborn)
		q->sched.born_let_go++;
	else
		q->sched.sync_let_go++;
	q->vs[st].stalled = q->vs[st].unborn = q->vs[st].birth_known = false;
	dpmu_qemu_idle_to(q, (unsigned)st, latest);
	return true;
}
