/*
 * Internal: the ring's layout, shared by ring.c, collect.c and the tests that
 * check it. Every line has one writer (seed 002 "dcci is whole-cache-line"):
 *
 *   cfg    immutable after create          read by both
 *   prod   producer: head, COND, counters  read by the consumer
 *   pp     producer-private                 never read by others
 *   cons   consumer: tail, counters        read by the producer
 *   cp     consumer-private                 never read by others
 *   req    consumer: retirement request    read by the producer
 *   slots  producer                        read by the consumer after head
 */
#ifndef DPMU_COLLECT_RING_H
#define DPMU_COLLECT_RING_H

#include "dynpmu/collect.h"

struct dpmu_ring_prod {
	_Alignas(DPMU_COLLECT_LINE) _Atomic uint64_t head; /* positions published */
	_Atomic uint64_t cond;     /* retirement echo; retained across runs */
	_Atomic uint64_t produced; /* published counters, stored at each publication */
	_Atomic uint64_t dropped;
};

struct dpmu_ring_prod_priv {
	_Alignas(DPMU_COLLECT_LINE) uint64_t pos; /* next position to write */
	uint64_t pub;         /* positions published so far */
	uint64_t cached_tail; /* consumer's tail as last read */
	uint64_t produced;
	uint64_t dropped;
	uint64_t echoed;      /* last nonce this producer echoed */
};

struct dpmu_ring_cons {
	_Alignas(DPMU_COLLECT_LINE) _Atomic uint64_t tail; /* positions consumed */
	_Atomic uint64_t collected;
	_Atomic uint64_t mismatched;
};

struct dpmu_ring_cons_priv {
	_Alignas(DPMU_COLLECT_LINE) uint64_t tail;
	uint64_t cached_head;
	uint64_t collected;
	uint64_t mismatched;
};

struct dpmu_ring_req {
	_Alignas(DPMU_COLLECT_LINE) _Atomic uint64_t request; /* 0 or a nonce */
};

struct dpmu_ring {
	_Alignas(DPMU_COLLECT_LINE) struct dpmu_record *slots;
	uint64_t mask;
	unsigned batch;
	enum dpmu_ring_mode mode;
	uint32_t producer;
	struct dpmu_coh_rule rule;
	struct dpmu_ring_prod prod;
	struct dpmu_ring_prod_priv pp;
	struct dpmu_ring_cons cons;
	struct dpmu_ring_cons_priv cp;
	struct dpmu_ring_req req;
};

#endif
