/*
 * traversal aos|sparse [ENTITIES] [PASSES]: the game "AI thread" of seed 001
 * section 5.2 (an L3 hit-rate collapse in battle scenes, traced to the AI
 * traversal; storing the data sparsely fixed it).
 *
 * The AI visits every entity once per pass in a fixed pseudo-random order
 * (a single cycle through all entities, so each visit's address depends on
 * the previous load: pointer chasing, no prefetcher can run ahead). Per
 * visit it reads and updates a few hot fields.
 *
 * aos keeps the entities as a 256-byte array of structs, as the game engine
 * does: the hot fields of one entity sit on two different cache lines (the
 * movement state at the head, the AI state further down, behind cold data),
 * so each visit touches two lines. At the default 32768 entities that is
 * 65536 lines, 4 MiB, twice the 2 MiB L3 of the default profile; visited in
 * the same cyclic order every pass, an LRU-like L3 evicts each line before
 * its next use and nearly every L3 access misses (L3D_CACHE_REFILL,
 * cluster L3_MISS / BUS_ACCESS).
 *
 * sparse is the rewrite: the hot fields of every entity packed into one
 * 16-byte record in their own array (the cold fields stay in the array of
 * structs, untouched by the AI). 32768 * 16 = 512 KiB: larger than L2, well
 * inside L3, so after the first pass the L3 serves almost every L2 miss and
 * the L3 hit rate rises from near zero to near (PASSES - 1) / PASSES.
 *
 * Both variants run the same update in the same order from the same initial
 * values, so they print the same checksum.
 */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>

#include "workload.h"

#define DPMU_TRAVERSAL_DEFAULT_ENTITIES 32768
#define DPMU_TRAVERSAL_DEFAULT_PASSES 4

/* The game's entity: 256 bytes, 4 lines. The AI touches pos_x, pos_y,
 * next (line 0) and health, state (line 3). */
struct dpmu_entity {
	int32_t pos_x, pos_y;
	uint32_t next;
	uint32_t flags;
	char name[48];          /* cold: rest of line 0 */
	float mesh_bounds[16];  /* cold: line 1 */
	uint32_t inventory[24]; /* cold: line 2 and the head of line 3 */
	uint16_t health;
	uint16_t state;
	char pad[28];
};

_Static_assert(sizeof(struct dpmu_entity) == 256, "an entity is four 64-byte lines");
_Static_assert(offsetof(struct dpmu_entity, health) / 64 == 3,
	       "the AI state sits three lines after the movement state");

/* The sparse rewrite's hot record: four per cache line. */
struct dpmu_hot {
	int32_t pos_x, pos_y;
	uint32_t next;
	uint16_t health;
	uint16_t state;
};

_Static_assert(sizeof(struct dpmu_hot) == 16, "four hot records per line");

static const struct dpmu_wl_variant variants[] = {
	{"aos", "256-byte array of structs, hot fields on two lines per entity"},
	{"sparse", "hot fields packed densely, 16 bytes per entity"},
};

/* One AI step on an entity's hot fields (x, y, health, state; health and
 * state are 16-bit in both layouts): move toward the origin, update, fold
 * into the checksum. Pure integer arithmetic, identical for both layouts. */
#define DPMU_TRAVERSAL_STEP(c, acc)                                              \
	do {                                                                     \
		(c)->pos_x -= ((c)->pos_x > 0) - ((c)->pos_x < 0);               \
		(c)->pos_y -= ((c)->pos_y > 0) - ((c)->pos_y < 0);               \
		(c)->health = (uint16_t)((c)->health * 5 + (c)->pos_x - (c)->pos_y); \
		(c)->state = (uint16_t)((c)->state * 31u + (c)->health);         \
		(acc) += (uint64_t)((c)->health ^ ((uint32_t)(c)->state << 16)); \
	} while (0)

static uint64_t traverse_aos(struct dpmu_entity *e, uint64_t passes)
{
	uint64_t acc = 0;
	for (uint64_t p = 0; p < passes; p++) {
		uint32_t i = 0;
		do {
			struct dpmu_entity *cur = &e[i];
			DPMU_TRAVERSAL_STEP(cur, acc);
			i = cur->next;
		} while (i != 0);
	}
	return acc;
}

static uint64_t traverse_sparse(struct dpmu_hot *h, uint64_t passes)
{
	uint64_t acc = 0;
	for (uint64_t p = 0; p < passes; p++) {
		uint32_t i = 0;
		do {
			struct dpmu_hot *cur = &h[i];
			DPMU_TRAVERSAL_STEP(cur, acc);
			i = cur->next;
		} while (i != 0);
	}
	return acc;
}

int main(int argc, char **argv)
{
	const char *args = "[ENTITIES] [PASSES]   (default 32768 entities = 8 MiB, 4 passes)";
	size_t nv = sizeof variants / sizeof variants[0];
	size_t v = dpmu_wl_variant(argc, argv, args, variants, nv);
	uint32_t n = (uint32_t)dpmu_wl_size(argc, argv, 2, "ENTITIES",
					    DPMU_TRAVERSAL_DEFAULT_ENTITIES, 2, UINT32_C(1) << 22);
	uint64_t passes = dpmu_wl_size(argc, argv, 3, "PASSES", DPMU_TRAVERSAL_DEFAULT_PASSES,
				       1, 1000);
	dpmu_wl_max_args(argc, argv, 4, args);

	/* One cycle through all entities (Sattolo's shuffle), starting at 0. */
	uint32_t *order = dpmu_wl_alloc(argv[0], (size_t)n * sizeof *order);
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	struct dpmu_wl_rng r;
	dpmu_wl_rng_seed(&r, 0x74726176ull);
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)dpmu_wl_rng_below(&r, i);
		uint32_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	/* order[] is now a cyclic permutation: entity i's successor is order[i]. */

	struct dpmu_entity *e = dpmu_wl_alloc(argv[0], (size_t)n * sizeof *e);
	for (uint32_t i = 0; i < n; i++) {
		e[i].pos_x = (int32_t)dpmu_wl_rng_below(&r, 2001) - 1000;
		e[i].pos_y = (int32_t)dpmu_wl_rng_below(&r, 2001) - 1000;
		e[i].health = (uint16_t)(dpmu_wl_rng_below(&r, 100) + 1);
		e[i].state = (uint16_t)i;
		e[i].next = order[i];
	}
	free(order);

	uint64_t acc;
	if (v == 0) {
		DPMU_REGION_BEGIN("traversal_aos");
		acc = traverse_aos(e, passes);
		DPMU_REGION_END("traversal_aos");
	} else {
		/* The rewrite's layout is built once, outside the measured region,
		 * as the game would keep it. */
		struct dpmu_hot *h = dpmu_wl_alloc(argv[0], (size_t)n * sizeof *h);
		for (uint32_t i = 0; i < n; i++) {
			h[i].pos_x = e[i].pos_x;
			h[i].pos_y = e[i].pos_y;
			h[i].health = e[i].health;
			h[i].next = e[i].next;
			h[i].state = e[i].state;
		}
		DPMU_REGION_BEGIN("traversal_sparse");
		acc = traverse_sparse(h, passes);
		DPMU_REGION_END("traversal_sparse");
		free(h);
	}
	dpmu_wl_report("traversal", variants[v].name, n, acc);
	free(e);
	return 0;
}
