/*
 * Collector throughput: records per second through the collector (one ring
 * per producer, collector thread, drain thread, sink) with 1, 2 and 4
 * producers, against a mutex + condition-variable queue doing the same job,
 * and memcpy bandwidth on the same machine, all in one run. Prints one JSON
 * object per measurement (DESIGN.md); it never fails on a time.
 *
 * usage: bench_collect [total-records]   (default 4000000 per measurement)
 * Each figure is the median of REPEAT runs; "pinned" puts the producer on
 * CPU 0 and the consumer (collector thread, or the mutex queue's consumer)
 * on CPU 1.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "dynpmu/collect.h"

#define REPEAT 5
/* Both queues get the same capacity and the same consumer batch. */
#define CAPACITY 16384
#define BATCH_OUT 4096

/* Pin the calling thread to cpu (-1: leave it where the scheduler puts it). */
static void pin(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void unpin(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void fill(struct dpmu_record *r, uint64_t i)
{
	r->time = i;
	r->kind = 1;
	for (int k = 0; k < 5; k++)
		r->val[k] = i + (uint64_t)k;
}

/* ---- the collector ---- */

struct count_sink {
	uint64_t n, sum;
};

static int count_write(void *ctx, const struct dpmu_record *recs, size_t n)
{
	struct count_sink *s = ctx;
	s->n += n;
	s->sum += recs[n - 1].val[0]; /* touch the data */
	return 0;
}

struct ring_prod {
	struct dpmu_ring *r;
	uint64_t n;
	int claim; /* fill slots in place (claim/commit) instead of push */
	int cpu;
};

/* p->n records filled in place (claim/commit). */
static void produce_in_place(struct ring_prod *p)
{
	for (uint64_t i = 0; i < p->n; i++) {
		struct dpmu_record *s;
		if (dpmu_ring_claim(p->r, &s) == 0) {
			fill(s, i);
			dpmu_ring_commit(p->r);
		}
	}
}

static void *ring_producer(void *arg)
{
	struct ring_prod *p = arg;
	pin(p->cpu);
	struct dpmu_record rec;
	memset(&rec, 0, sizeof rec);
	if (p->claim) {
		produce_in_place(p);
	} else {
		for (uint64_t i = 0; i < p->n; i++) {
			fill(&rec, i);
			dpmu_ring_push(p->r, &rec);
		}
	}
	dpmu_ring_flush(p->r);
	while (!dpmu_ring_poll(p->r))
		sched_yield();
	return NULL;
}

/* The same producer for a ring no collector retires: it flushes and ends. */
static void *direct_producer(void *arg)
{
	struct ring_prod *p = arg;
	pin(p->cpu);
	produce_in_place(p);
	dpmu_ring_flush(p->r);
	return NULL;
}

static double run_ring(unsigned producers, uint64_t total, int claim, int pinned)
{
	struct count_sink sink = {0, 0};
	struct dpmu_collect_config cfg;
	dpmu_collect_config_default(&cfg);
	cfg.producers = producers;
	cfg.ring_slots = CAPACITY;
	cfg.batch = 64;
	cfg.buffer_records = BATCH_OUT;
	cfg.buffers = 4;
	cfg.sink = DPMU_COLLECT_SINK_CALLBACK;
	cfg.write = count_write;
	cfg.ctx = &sink;
	cfg.collector_cpu = pinned ? 1 : -1;
	struct dpmu_collector *c;
	struct dpmu_err err;
	if (dpmu_collect_create(&c, &cfg, &err)) {
		fprintf(stderr, "bench_collect: %s\n", dpmu_errmsg(&err));
		exit(1);
	}
	struct ring_prod ps[8];
	pthread_t t[8];
	double t0 = bench_now();
	dpmu_collect_start(c);
	for (unsigned i = 0; i < producers; i++) {
		ps[i].r = dpmu_collect_ring(c, i);
		ps[i].n = total / producers;
		ps[i].claim = claim;
		ps[i].cpu = pinned ? 0 : -1;
		pthread_create(&t[i], NULL, ring_producer, &ps[i]);
	}
	/* Stop once everything is produced: stop retires, collects the rest. */
	for (;;) {
		uint64_t produced = 0;
		for (unsigned i = 0; i < producers; i++) {
			struct dpmu_ring_stats st;
			dpmu_collect_stats(c, i, &st);
			produced += st.produced;
		}
		if (produced >= (total / producers) * producers)
			break;
		struct timespec ts = {0, 200000};
		nanosleep(&ts, NULL);
	}
	dpmu_collect_stop(c, 10000000000ull, NULL);
	double dt = bench_now() - t0;
	for (unsigned i = 0; i < producers; i++)
		pthread_join(t[i], NULL);
	if (sink.n != (total / producers) * producers)
		fprintf(stderr, "bench_collect: ring lost records (%llu)\n", (unsigned long long)sink.n);
	dpmu_collect_destroy(c);
	return (double)sink.n / dt;
}

/* ---- a ring read directly by its one consumer (the qemu front end's case) ---- */

/* One producer filling slots in place into one lossless ring, the calling
 * thread consuming it with pop (copying up to 64 records out) or with
 * peek/release (reading them in the ring's slots); the consumer touches
 * every record's first value either way. */
static double run_direct(uint64_t total, int peek, int pinned)
{
	struct dpmu_ring *r;
	struct dpmu_err err;
	if (dpmu_ring_create(&r, 0, CAPACITY, 64, DPMU_RING_LOSSLESS, NULL, &err)) {
		fprintf(stderr, "bench_collect: %s\n", dpmu_errmsg(&err));
		exit(1);
	}
	struct ring_prod prod = {r, total, 1, pinned ? 0 : -1};
	pthread_t t;
	pin(pinned ? 1 : -1);
	double t0 = bench_now();
	pthread_create(&t, NULL, direct_producer, &prod);
	uint64_t got = 0, sum = 0;
	struct dpmu_record buf[64];
	while (got < total) {
		size_t n;
		if (peek) {
			const struct dpmu_record *recs;
			n = dpmu_ring_peek(r, &recs, 64);
			for (size_t i = 0; i < n; i++)
				sum += recs[i].val[0];
			dpmu_ring_release(r, n);
		} else {
			n = dpmu_ring_pop(r, buf, 64);
			for (size_t i = 0; i < n; i++)
				sum += buf[i].val[0];
		}
		got += n;
		if (!n)
			sched_yield();
	}
	double dt = bench_now() - t0;
	pthread_join(t, NULL);
	unpin();
	dpmu_ring_destroy(r);
	if (sum == 0)
		fprintf(stderr, "bench_collect: no data read\n");
	return (double)got / dt;
}

/* ---- the mutex + condition variable queue doing the same job ---- */

#define MQ_CAP CAPACITY

struct mutex_queue {
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full;
	struct dpmu_record *slots;
	size_t first, count;
	unsigned producers_left;
};

struct mq_prod {
	struct mutex_queue *q;
	uint64_t n;
	int cpu;
};

static void *mq_producer(void *arg)
{
	struct mq_prod *p = arg;
	pin(p->cpu);
	struct mutex_queue *q = p->q;
	struct dpmu_record rec;
	memset(&rec, 0, sizeof rec);
	for (uint64_t i = 0; i < p->n; i++) {
		fill(&rec, i);
		pthread_mutex_lock(&q->mu);
		while (q->count == MQ_CAP)
			pthread_cond_wait(&q->not_full, &q->mu);
		q->slots[(q->first + q->count) % MQ_CAP] = rec;
		if (q->count++ == 0)
			pthread_cond_signal(&q->not_empty);
		pthread_mutex_unlock(&q->mu);
	}
	pthread_mutex_lock(&q->mu);
	q->producers_left--;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

static double run_mutex(unsigned producers, uint64_t total, int pinned)
{
	struct mutex_queue q;
	pthread_mutex_init(&q.mu, NULL);
	pthread_cond_init(&q.not_empty, NULL);
	pthread_cond_init(&q.not_full, NULL);
	q.slots = aligned_alloc(64, MQ_CAP * sizeof *q.slots);
	q.first = q.count = 0;
	q.producers_left = producers;
	struct dpmu_record *buf = aligned_alloc(64, BATCH_OUT * sizeof *buf);
	struct count_sink sink = {0, 0};
	struct mq_prod ps[8];
	pthread_t t[8];
	if (pinned)
		pin(1); /* the consumer is this thread */
	double t0 = bench_now();
	for (unsigned i = 0; i < producers; i++) {
		ps[i].q = &q;
		ps[i].n = total / producers;
		ps[i].cpu = pinned ? 0 : -1;
		pthread_create(&t[i], NULL, mq_producer, &ps[i]);
	}
	/* The consumer takes everything available per lock, up to a buffer,
	 * which is the kindest batching a lock-based queue allows. */
	for (;;) {
		pthread_mutex_lock(&q.mu);
		while (q.count == 0 && q.producers_left)
			pthread_cond_wait(&q.not_empty, &q.mu);
		if (q.count == 0 && !q.producers_left) {
			pthread_mutex_unlock(&q.mu);
			break;
		}
		size_t n = q.count < BATCH_OUT ? q.count : BATCH_OUT;
		for (size_t k = 0; k < n; k++)
			buf[k] = q.slots[(q.first + k) % MQ_CAP];
		q.first = (q.first + n) % MQ_CAP;
		q.count -= n;
		pthread_cond_broadcast(&q.not_full);
		pthread_mutex_unlock(&q.mu);
		count_write(&sink, buf, n);
	}
	double dt = bench_now() - t0;
	for (unsigned i = 0; i < producers; i++)
		pthread_join(t[i], NULL);
	if (pinned)
		unpin();
	free(buf);
	free(q.slots);
	pthread_cond_destroy(&q.not_full);
	pthread_cond_destroy(&q.not_empty);
	pthread_mutex_destroy(&q.mu);
	return (double)sink.n / dt;
}

/* ---- memcpy bandwidth, as records of 64 bytes ---- */

static double run_memcpy(uint64_t total)
{
	size_t bytes = (size_t)64 << 20;
	unsigned char *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes);
	memset(a, 1, bytes);
	memset(b, 2, bytes);
	uint64_t want = total * 64, done = 0;
	double t0 = bench_now();
	while (done < want) {
		memcpy(b, a, bytes);
		done += bytes;
		a[done % bytes] ^= b[(done / 64) % bytes];
	}
	double dt = bench_now() - t0;
	free(a);
	free(b);
	return (double)done / 64.0 / dt;
}

int main(int argc, char **argv)
{
	uint64_t total = bench_count_arg(argc, argv, "bench_collect", "records", 4000000);
	/* 1, 2 and 4 producers where the scheduler puts them, then one producer
	 * on CPU 0 and the consumer on CPU 1 (the collector's own case). */
	const unsigned counts[] = {1, 2, 4, 1};
	double v[REPEAT];
	for (int k = 0; k < 4; k++) {
		unsigned p = counts[k];
		int pinned = k == 3;
		double res[3];
		for (int impl = 0; impl < 3; impl++) {
			for (int r = 0; r < REPEAT; r++)
				v[r] = impl == 2 ? run_mutex(p, total, pinned)
						 : run_ring(p, total, impl, pinned);
			res[impl] = bench_median(v, REPEAT);
			static const char *const names[] = {"ring_push", "ring_claim", "mutex_cond"};
			printf("{\"bench\":\"collect\",\"impl\":\"%s\",\"producers\":%u,"
			       "\"pinned\":%s,\"records\":%llu,\"records_per_s\":%.0f}\n",
			       names[impl], p, pinned ? "true" : "false", (unsigned long long)total,
			       res[impl]);
		}
		printf("{\"bench\":\"collect\",\"impl\":\"ratio\",\"producers\":%u,\"pinned\":%s,"
		       "\"push_over_mutex\":%.2f,\"claim_over_mutex\":%.2f}\n",
		       p, pinned ? "true" : "false", res[0] / res[2], res[1] / res[2]);
		fflush(stdout);
	}
	for (int pinned = 0; pinned < 2; pinned++) {
		double res[2];
		for (int peek = 0; peek < 2; peek++) {
			for (int r = 0; r < REPEAT; r++)
				v[r] = run_direct(total, peek, pinned);
			res[peek] = bench_median(v, REPEAT);
			printf("{\"bench\":\"collect\",\"impl\":\"%s\",\"producers\":1,"
			       "\"pinned\":%s,\"records\":%llu,\"records_per_s\":%.0f}\n",
			       peek ? "direct_peek" : "direct_pop", pinned ? "true" : "false",
			       (unsigned long long)total, res[peek]);
		}
		printf("{\"bench\":\"collect\",\"impl\":\"ratio\",\"pinned\":%s,"
		       "\"peek_over_pop\":%.2f}\n", pinned ? "true" : "false", res[1] / res[0]);
		fflush(stdout);
	}
	for (int r = 0; r < REPEAT; r++)
		v[r] = run_memcpy(total);
	double mc = bench_median(v, REPEAT);
	printf("{\"bench\":\"collect\",\"impl\":\"memcpy\",\"records_per_s\":%.0f,"
	       "\"bytes_per_s\":%.0f}\n", mc, mc * 64.0);
	printf("{\"bench\":\"collect\",\"platform\":\"%s\",\"line\":%zu}\n", dpmu_collect_platform(),
	       dpmu_cache_line_size());
	return 0;
}
