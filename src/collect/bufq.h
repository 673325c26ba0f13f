/*
 * Internal: a bounded queue of buffer pointers between the collector thread
 * and the drain thread (full buffers one way, empty ones back). It moves one
 * pointer per buffer of hundreds of records, so a mutex and a condition
 * variable cost nothing that matters, and they let an idle drain thread sleep.
 */
#ifndef DPMU_COLLECT_BUFQ_H
#define DPMU_COLLECT_BUFQ_H

#include <pthread.h>
#include <stddef.h>

struct dpmu_bufq {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	void **items;
	size_t cap, first, count;
	int closed;
};

int dpmu_bufq_init(struct dpmu_bufq *q, size_t cap);
void dpmu_bufq_fini(struct dpmu_bufq *q);
/* Never blocks: the queue holds every buffer there is. Returns -1 if full. */
int dpmu_bufq_push(struct dpmu_bufq *q, void *item);
/* Blocks until an item is there; NULL once the queue is closed and empty. */
void *dpmu_bufq_pop(struct dpmu_bufq *q);
void dpmu_bufq_close(struct dpmu_bufq *q);
/* Empty and reopen (between runs, with no thread using the queue). */
void dpmu_bufq_reset(struct dpmu_bufq *q);

#endif
