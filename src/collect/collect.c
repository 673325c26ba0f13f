/*
 * The collector: one ring per producer, a collector thread that copies
 * published records into buffers taken from the free-buffer queue, and a
 * drain thread that writes full buffers to the sink and hands them back, so
 * a slow sink never sits on the path between producers and their rings.
 * Retirement follows seed 002 "Unified COND nonce".
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/bufq.h"
#include "collect/ring.h"

struct collect_buf {
	size_t n;
	struct dpmu_record *recs;
};

struct dpmu_collector {
	struct dpmu_collect_config cfg;
	struct dpmu_coh_rule rule;
	struct dpmu_ring **rings;
	unsigned char *silent;
	struct collect_buf *bufs;
	struct dpmu_bufq freeq, fullq;
	pthread_t collector_thr, drain_thr;
	int running;
	_Atomic int quit;
	FILE *file;
	/* Written by the drain thread only; read after it is joined. */
	struct dpmu_record *mem;
	size_t mem_n, mem_cap;
	int sink_failed;
	struct dpmu_err sink_err;
	struct dpmu_err err;
};

void dpmu_collect_config_default(struct dpmu_collect_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->producers = 1;
	cfg->ring_slots = 4096;
	cfg->batch = 32;
	cfg->mode = DPMU_RING_LOSSLESS;
	cfg->buffer_records = 1024;
	cfg->buffers = 4;
	cfg->platform = DPMU_COH_PLATFORM_SMP;
	cfg->writer = DPMU_COH_WRITER_COHERENT_CORE;
	cfg->signal = DPMU_COH_SIGNAL_FLAG;
	cfg->sink = DPMU_COLLECT_SINK_MEMORY;
	cfg->collector_cpu = -1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void free_all(struct dpmu_collector *c)
{
	if (c->rings)
		for (unsigned i = 0; i < c->cfg.producers; i++)
			dpmu_ring_destroy(c->rings[i]);
	free(c->rings);
	if (c->bufs)
		for (unsigned i = 0; i < c->cfg.buffers; i++)
			free(c->bufs[i].recs);
	free(c->bufs);
	free(c->silent);
	dpmu_bufq_fini(&c->freeq);
	dpmu_bufq_fini(&c->fullq);
	if (c->file)
		fclose(c->file);
	free(c->mem);
	free(c);
}

int dpmu_collect_create(struct dpmu_collector **out, const struct dpmu_collect_config *cfg,
			struct dpmu_err *err)
{
	if (!out || !cfg)
		return dpmu_err_set(err, DPMU_EINVAL, "dpmu_collect_create: NULL argument");
	*out = NULL;
	if (cfg->producers < 1 || cfg->producers > DPMU_COLLECT_MAX_PRODUCERS)
		return dpmu_err_set(err, DPMU_EINVAL, "collector of %u producers: need 1..%u",
				    cfg->producers, DPMU_COLLECT_MAX_PRODUCERS);
	if (cfg->buffer_records < 1 || cfg->buffers < 2)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "collector buffers %u of %zu records: need >= 2 of >= 1",
				    cfg->buffers, cfg->buffer_records);
	if (cfg->sink == DPMU_COLLECT_SINK_FILE && !cfg->path)
		return dpmu_err_set(err, DPMU_EINVAL, "file sink without a path");
	if (cfg->sink == DPMU_COLLECT_SINK_CALLBACK && !cfg->write)
		return dpmu_err_set(err, DPMU_EINVAL, "callback sink without a write function");
	if (cfg->sink != DPMU_COLLECT_SINK_MEMORY && cfg->sink != DPMU_COLLECT_SINK_FILE &&
	    cfg->sink != DPMU_COLLECT_SINK_CALLBACK)
		return dpmu_err_set(err, DPMU_EINVAL, "sink kind %d: need memory, file or callback",
				    (int)cfg->sink);

	struct dpmu_coh_rule rule;
	int rc = dpmu_coh_decide(cfg->platform, cfg->writer, cfg->signal, &rule, err);
	if (rc)
		return rc;

	struct dpmu_collector *c = calloc(1, sizeof *c);
	if (!c)
		return dpmu_err_set(err, DPMU_ENOMEM, "collector: out of memory");
	c->cfg = *cfg;
	c->cfg.path = NULL;
	c->rule = rule;
	atomic_init(&c->quit, 0);
	c->rings = calloc(cfg->producers, sizeof *c->rings);
	c->silent = calloc(cfg->producers, 1);
	c->bufs = calloc(cfg->buffers, sizeof *c->bufs);
	if (!c->rings || !c->silent || !c->bufs || dpmu_bufq_init(&c->freeq, cfg->buffers) ||
	    dpmu_bufq_init(&c->fullq, cfg->buffers)) {
		free_all(c);
		return dpmu_err_set(err, DPMU_ENOMEM, "collector: out of memory");
	}
	for (unsigned i = 0; i < cfg->buffers; i++) {
		c->bufs[i].recs = aligned_alloc(DPMU_COLLECT_LINE,
						cfg->buffer_records * sizeof(struct dpmu_record));
		if (!c->bufs[i].recs) {
			free_all(c);
			return dpmu_err_set(err, DPMU_ENOMEM, "collector buffers of %zu records: out of memory",
					    cfg->buffer_records);
		}
	}
	for (unsigned i = 0; i < cfg->producers; i++) {
		rc = dpmu_ring_create(&c->rings[i], i, cfg->ring_slots, cfg->batch, cfg->mode, &rule, err);
		if (rc) {
			free_all(c);
			return rc;
		}
	}
	if (cfg->sink == DPMU_COLLECT_SINK_FILE) {
		c->file = fopen(cfg->path, "wb");
		if (!c->file) {
			rc = dpmu_err_set(err, DPMU_EIO, "file sink %s: %s", cfg->path, strerror(errno));
			free_all(c);
			return rc;
		}
	}
	*out = c;
	return 0;
}

void dpmu_collect_destroy(struct dpmu_collector *c)
{
	if (!c)
		return;
	if (c->running)
		dpmu_collect_stop(c, 0, NULL);
	free_all(c);
}

struct dpmu_ring *dpmu_collect_ring(struct dpmu_collector *c, unsigned i)
{
	return c && i < c->cfg.producers ? c->rings[i] : NULL;
}

static void sink_fail(struct dpmu_collector *c, int code, const char *what)
{
	if (!c->sink_failed)
		dpmu_err_set(&c->sink_err, code, "sink: %s", what);
	c->sink_failed = 1;
}

static void sink_write(struct dpmu_collector *c, const struct collect_buf *b)
{
	if (c->sink_failed || b->n == 0)
		return;
	switch (c->cfg.sink) {
	case DPMU_COLLECT_SINK_MEMORY:
		if (c->mem_n + b->n > c->mem_cap) {
			size_t cap = c->mem_cap ? c->mem_cap : 4096;
			while (cap < c->mem_n + b->n)
				cap *= 2;
			struct dpmu_record *m = realloc(c->mem, cap * sizeof *m);
			if (!m) {
				sink_fail(c, DPMU_ENOMEM, "memory sink: out of memory");
				return;
			}
			c->mem = m;
			c->mem_cap = cap;
		}
		memcpy(c->mem + c->mem_n, b->recs, b->n * sizeof *b->recs);
		c->mem_n += b->n;
		break;
	case DPMU_COLLECT_SINK_FILE:
		if (fwrite(b->recs, sizeof *b->recs, b->n, c->file) != b->n)
			sink_fail(c, DPMU_EIO, strerror(errno));
		break;
	case DPMU_COLLECT_SINK_CALLBACK:
		if (c->cfg.write(c->cfg.ctx, b->recs, b->n))
			sink_fail(c, DPMU_EIO, "the write callback returned an error");
		break;
	}
}

static void *drain_main(void *arg)
{
	struct dpmu_collector *c = arg;
	struct collect_buf *b;
	while ((b = dpmu_bufq_pop(&c->fullq))) {
		sink_write(c, b);
		b->n = 0;
		dpmu_bufq_push(&c->freeq, b);
	}
	return NULL;
}

/* An idle collector spins briefly, then yields, and sleeps only after it has
 * seen nothing for a while: a sleep lets a busy producer fill its ring in
 * less time than the sleep takes, which caps throughput at ring size per
 * wake-up, so it is kept for producers that have really gone quiet. */
#define COLLECT_SPIN 128
#define COLLECT_YIELD_NS 2000000u
#define COLLECT_SLEEP_NS 50000

static void backoff(unsigned idle, uint64_t *idle_since)
{
	if (idle < COLLECT_SPIN)
		return;
	if (idle == COLLECT_SPIN)
		*idle_since = now_ns();
	if ((idle & 63) || now_ns() - *idle_since < COLLECT_YIELD_NS) {
		sched_yield();
		return;
	}
	struct timespec ts = {0, COLLECT_SLEEP_NS};
	nanosleep(&ts, NULL);
}

static void *collector_main(void *arg)
{
	struct dpmu_collector *c = arg;
	size_t cap = c->cfg.buffer_records;
	if (c->cfg.collector_cpu >= 0 && c->cfg.collector_cpu < CPU_SETSIZE) {
		/* Best effort: a CPU that is not ours leaves the thread unpinned. */
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(c->cfg.collector_cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	}
	struct collect_buf *b = dpmu_bufq_pop(&c->freeq);
	unsigned idle = 0;
	uint64_t idle_since = 0;
	for (;;) {
		/* Acquire pairs with stop's release after it accepted the echoes,
		 * so the pass below sees every record published before them. */
		int quitting = atomic_load_explicit(&c->quit, memory_order_acquire);
		int progress = 0;
		for (unsigned i = 0; i < c->cfg.producers; i++) {
			struct dpmu_ring *r = c->rings[i];
			for (;;) {
				uint64_t before = r->cp.tail;
				b->n += dpmu_ring_pop(r, b->recs + b->n, cap - b->n);
				if (b->n == cap) {
					dpmu_bufq_push(&c->fullq, b);
					b = dpmu_bufq_pop(&c->freeq);
				}
				if (r->cp.tail == before)
					break;
				progress = 1;
			}
		}
		if (quitting)
			break;
		idle = progress ? 0 : idle + 1;
		backoff(idle, &idle_since);
	}
	if (b->n)
		dpmu_bufq_push(&c->fullq, b);
	else
		dpmu_bufq_push(&c->freeq, b);
	dpmu_bufq_close(&c->fullq);
	return NULL;
}

int dpmu_collect_start(struct dpmu_collector *c)
{
	if (!c)
		return DPMU_EINVAL;
	if (c->running)
		return dpmu_err_set(&c->err, DPMU_ESTATE, "collector already started");
	for (unsigned i = 0; i < c->cfg.producers; i++)
		if (c->silent[i])
			return dpmu_err_set(&c->err, DPMU_ESTATE,
					    "producer %u did not answer the last retirement request; "
					    "recover it before the collector starts again", i);
	/* Seed 002 "Unified COND nonce" step 1: requests are reset before the
	 * run; each producer's COND keeps whatever it last published. */
	for (unsigned i = 0; i < c->cfg.producers; i++)
		dpmu_ring_retire_reset(c->rings[i]);
	dpmu_bufq_reset(&c->freeq);
	dpmu_bufq_reset(&c->fullq);
	for (unsigned i = 0; i < c->cfg.buffers; i++) {
		c->bufs[i].n = 0;
		dpmu_bufq_push(&c->freeq, &c->bufs[i]);
	}
	atomic_store_explicit(&c->quit, 0, memory_order_relaxed);
	if (pthread_create(&c->drain_thr, NULL, drain_main, c))
		return dpmu_err_set(&c->err, DPMU_ENOMEM, "collector: cannot start the drain thread");
	if (pthread_create(&c->collector_thr, NULL, collector_main, c)) {
		dpmu_bufq_close(&c->fullq);
		pthread_join(c->drain_thr, NULL);
		return dpmu_err_set(&c->err, DPMU_ENOMEM, "collector: cannot start the collector thread");
	}
	c->running = 1;
	return 0;
}

int dpmu_collect_stop(struct dpmu_collector *c, uint64_t timeout_ns,
		      struct dpmu_collect_report *rep)
{
	if (!c)
		return DPMU_EINVAL;
	if (!c->running)
		return dpmu_err_set(&c->err, DPMU_ESTATE, "collector not started");
	unsigned n = c->cfg.producers;
	uint64_t *nonce = calloc(n, sizeof *nonce);
	if (!nonce)
		return dpmu_err_set(&c->err, DPMU_ENOMEM, "collector stop: out of memory");

	/* Steps 2-3: each request differs from that producer's retained COND. */
	for (unsigned i = 0; i < n; i++) {
		nonce[i] = dpmu_ring_retire_request(c->rings[i]);
		c->silent[i] = 1;
	}
	/* Step 4: accept only the matching echo, within one shared absolute
	 * deadline; the collector thread keeps draining meanwhile, so a
	 * lossless producer waiting for room is not stuck. */
	uint64_t start = now_ns();
	/* Saturate: a timeout of UINT64_MAX means "as long as it takes", not a
	 * deadline that wrapped into the past. */
	uint64_t deadline = timeout_ns > UINT64_MAX - start ? UINT64_MAX : start + timeout_ns;
	unsigned left = n;
	for (;;) {
		for (unsigned i = 0; i < n; i++)
			if (c->silent[i] && dpmu_ring_retire_acked(c->rings[i], nonce[i])) {
				c->silent[i] = 0;
				left--;
			}
		if (!left || now_ns() >= deadline)
			break;
		struct timespec ts = {0, 20000};
		nanosleep(&ts, NULL);
	}
	free(nonce);

	atomic_store_explicit(&c->quit, 1, memory_order_release);
	pthread_join(c->collector_thr, NULL);
	pthread_join(c->drain_thr, NULL);
	c->running = 0;
	if (c->file && fflush(c->file) && !c->sink_failed)
		sink_fail(c, DPMU_EIO, strerror(errno));

	struct dpmu_collect_report r;
	memset(&r, 0, sizeof r);
	for (unsigned i = 0; i < n; i++) {
		struct dpmu_ring_stats st;
		dpmu_ring_stats(c->rings[i], &st);
		r.total.produced += st.produced;
		r.total.collected += st.collected;
		r.total.dropped += st.dropped;
		r.total.mismatched += st.mismatched;
		r.total.in_flight += st.in_flight;
		if (c->silent[i])
			r.silent++;
		else
			r.retired++;
	}
	if (rep)
		*rep = r;
	if (r.silent) {
		unsigned first = 0;
		while (!c->silent[first])
			first++;
		return dpmu_err_set(&c->err, DPMU_ETIMEDOUT,
				    "%u of %u producers did not answer the retirement request "
				    "within %llu ns (first: producer %u)",
				    r.silent, n, (unsigned long long)timeout_ns, first);
	}
	if (c->sink_failed) {
		c->err = c->sink_err;
		return c->err.code;
	}
	return 0;
}

int dpmu_collect_recover(struct dpmu_collector *c, unsigned i)
{
	if (!c)
		return DPMU_EINVAL;
	if (i >= c->cfg.producers)
		return dpmu_err_set(&c->err, DPMU_EINVAL, "producer %u: the collector has %u", i,
				    c->cfg.producers);
	if (c->running)
		return dpmu_err_set(&c->err, DPMU_ESTATE, "recover producer %u: collector running", i);
	c->silent[i] = 0;
	return 0;
}

int dpmu_collect_silent(const struct dpmu_collector *c, unsigned i)
{
	return c && i < c->cfg.producers ? c->silent[i] : 0;
}

int dpmu_collect_stats(struct dpmu_collector *c, unsigned i, struct dpmu_ring_stats *st)
{
	if (!c || !st)
		return DPMU_EINVAL;
	if (i >= c->cfg.producers)
		return dpmu_err_set(&c->err, DPMU_EINVAL, "producer %u: the collector has %u", i,
				    c->cfg.producers);
	dpmu_ring_stats(c->rings[i], st);
	return 0;
}

const struct dpmu_record *dpmu_collect_records(const struct dpmu_collector *c, size_t *n)
{
	if (n)
		*n = c ? c->mem_n : 0;
	return c ? c->mem : NULL;
}

const char *dpmu_collect_errmsg(const struct dpmu_collector *c)
{
	return c ? dpmu_errmsg(&c->err) : "no collector";
}
