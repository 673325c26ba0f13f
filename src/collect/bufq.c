#include <stdlib.h>

#include "collect/bufq.h"

int dpmu_bufq_init(struct dpmu_bufq *q, size_t cap)
{
	q->items = calloc(cap ? cap : 1, sizeof *q->items);
	if (!q->items)
		return -1;
	q->cap = cap;
	q->first = q->count = 0;
	q->closed = 0;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	return 0;
}

void dpmu_bufq_fini(struct dpmu_bufq *q)
{
	if (!q->items)
		return;
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free(q->items);
	q->items = NULL;
}

int dpmu_bufq_push(struct dpmu_bufq *q, void *item)
{
	int rc = 0;
	pthread_mutex_lock(&q->mu);
	if (q->count == q->cap) {
		rc = -1;
	} else {
		q->items[(q->first + q->count) % q->cap] = item;
		q->count++;
		pthread_cond_signal(&q->cv);
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

void *dpmu_bufq_pop(struct dpmu_bufq *q)
{
	void *item = NULL;
	pthread_mutex_lock(&q->mu);
	while (q->count == 0 && !q->closed)
		pthread_cond_wait(&q->cv, &q->mu);
	if (q->count) {
		item = q->items[q->first];
		q->first = (q->first + 1) % q->cap;
		q->count--;
	}
	pthread_mutex_unlock(&q->mu);
	return item;
}

void dpmu_bufq_close(struct dpmu_bufq *q)
{
	pthread_mutex_lock(&q->mu);
	q->closed = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

void dpmu_bufq_reset(struct dpmu_bufq *q)
{
	pthread_mutex_lock(&q->mu);
	q->first = q->count = 0;
	q->closed = 0;
	pthread_mutex_unlock(&q->mu);
}
