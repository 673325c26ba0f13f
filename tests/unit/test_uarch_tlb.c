/*
 * The engine's translation side: each core's L1 data and instruction TLBs,
 * the L2 TLB they share and the table walks behind it, sized by the
 * profile (data/profiles, "tlb") and counted as PMUv3 defines
 * (L1D_TLB_REFILL: a data access that missed the L1 data TLB and refilled
 * it; L2D_TLB_REFILL and DTLB_WALK: it missed the L2 TLB too and needed a
 * walk). Every core type of the default profile is checked, with sizes
 * read from its profile, so the counts below follow from capacity and LRU
 * alone (the engine's TLBs replace by LRU).
 */
#include "unit/uarch_fixture.h"

enum { L1I_TLB_REFILL = 0x02, L1D_TLB_REFILL = 0x05, L1D_TLB = 0x25, L1I_TLB = 0x26,
       L2D_TLB_REFILL = 0x2D, L2I_TLB_REFILL = 0x2E, L2D_TLB = 0x2F, DTLB_WALK = 0x34,
       ITLB_WALK = 0x35 };

/* Data pages far from the code page every load below runs at (0x1000). */
#define DATA_BASE 0x40000000ull

/* Run check on a fresh engine once per core type of the default profile,
 * on the first core of that type. */
static void for_each_core_type(void (*check)(struct fx *f, const struct dpmu_core_type *ct,
					     unsigned core))
{
	struct fx *probe = fx_new();
	unsigned ntypes = probe->p->n_core_types, seen = 0;
	fx_free(probe);
	for (unsigned t = 0; t < ntypes; t++) {
		struct fx *f = fx_new();
		unsigned id = 0;
		int core = -1;
		for (unsigned c = 0; c < f->p->nclusters && core < 0; c++)
			for (unsigned k = 0; k < f->p->clusters[c].ncores; k++, id++)
				if (f->p->clusters[c].core_type[k] == t) {
					core = (int)id;
					break;
				}
		if (core >= 0) {
			check(f, &f->p->core_types[t], (unsigned)core);
			seen++;
		}
		fx_free(f);
	}
	assert_true(seen >= 2); /* the default profile: big and little cores */
}

/* One load at the start of each of `pages` pages `stride` pages apart. */
static void touch_pages(struct fx *f, unsigned core, uint64_t page, uint64_t pages,
			uint64_t stride)
{
	for (uint64_t i = 0; i < pages; i++) {
		struct dpmu_insn in = ld(0x1000, DATA_BASE + i * stride * page);
		dpmu_uarch_retire(f->u, core, &in, 1);
	}
	dpmu_uarch_flush(f->u);
}

static void reset_counts(struct fx *f)
{
	memset(f->core, 0, sizeof f->core);
}

/* As many pages as the L1 DTLB holds: the first pass refills the L1 and the
 * L2 TLB and walks once per page; the second finds every page in the L1. */
static void fit_l1_dtlb(struct fx *f, const struct dpmu_core_type *ct, unsigned c)
{
	uint64_t n = ct->l1dtlb.entries;
	touch_pages(f, c, ct->page_size, n, 1);
	assert_int_equal(f->core[c][L1D_TLB], n);
	assert_int_equal(f->core[c][L1D_TLB_REFILL], n);
	assert_int_equal(f->core[c][L2D_TLB], n);
	assert_int_equal(f->core[c][L2D_TLB_REFILL], n);
	assert_int_equal(f->core[c][DTLB_WALK], n);
	reset_counts(f);
	touch_pages(f, c, ct->page_size, n, 1);
	assert_int_equal(f->core[c][L1D_TLB], n);
	assert_int_equal(f->core[c][L1D_TLB_REFILL], 0);
	assert_int_equal(f->core[c][L2D_TLB], 0);
	assert_int_equal(f->core[c][DTLB_WALK], 0);
}

static void pages_that_fit_the_l1_dtlb_walk_once(void **state)
{
	(void)state;
	for_each_core_type(fit_l1_dtlb);
}

/* As many pages as the L1 DTLB holds, 4096 pages (16 MiB of 4 KiB pages)
 * apart, so that every one takes the same slot of the L1 DTLB's and the
 * L2 TLB's first hint (at most 4096 slots): each lookup of the second pass
 * finds its page through the second hint or the search, never a wrong
 * page, and refills nothing; the L2 TLB, whose sets they also share, is
 * not asked. */
static void fit_l1_dtlb_one_hint_slot(struct fx *f, const struct dpmu_core_type *ct, unsigned c)
{
	uint64_t n = ct->l1dtlb.entries;
	touch_pages(f, c, ct->page_size, n, 4096);
	assert_int_equal(f->core[c][L1D_TLB], n);
	assert_int_equal(f->core[c][L1D_TLB_REFILL], n);
	reset_counts(f);
	for (unsigned pass = 0; pass < 3; pass++)
		touch_pages(f, c, ct->page_size, n, 4096);
	assert_int_equal(f->core[c][L1D_TLB], 3 * n);
	assert_int_equal(f->core[c][L1D_TLB_REFILL], 0);
	assert_int_equal(f->core[c][L2D_TLB], 0);
	assert_int_equal(f->core[c][DTLB_WALK], 0);
}

static void pages_of_one_hint_slot_hit_the_l1_dtlb(void **state)
{
	(void)state;
	for_each_core_type(fit_l1_dtlb_one_hint_slot);
}

/* One page more than the L1 DTLB holds, in a cycle: LRU evicts each page
 * just before it comes back, so every access refills the L1, but the L2
 * TLB holds them all: no walk after the first pass. */
static void beyond_l1_dtlb(struct fx *f, const struct dpmu_core_type *ct, unsigned c)
{
	uint64_t n = ct->l1dtlb.entries + 1;
	assert_true(n < ct->l2tlb.entries);
	touch_pages(f, c, ct->page_size, n, 1);
	reset_counts(f);
	touch_pages(f, c, ct->page_size, n, 1);
	assert_int_equal(f->core[c][L1D_TLB_REFILL], n);
	assert_int_equal(f->core[c][L2D_TLB], n);
	assert_int_equal(f->core[c][L2D_TLB_REFILL], 0);
	assert_int_equal(f->core[c][DTLB_WALK], 0);
}

static void pages_beyond_the_l1_dtlb_hit_the_l2_tlb(void **state)
{
	(void)state;
	for_each_core_type(beyond_l1_dtlb);
}

/* Pages that share one L2 TLB set, one more than its ways, each followed
 * by enough pages of other sets to push them out of the L1 DTLB: in a
 * cycle, each of them misses both levels and walks every time, while the
 * others, alone in their sets, hit the L2 TLB (set index from the page
 * number, sets = entries / ways). */
static void beyond_l2_tlb_set(struct fx *f, const struct dpmu_core_type *ct, unsigned c)
{
	uint64_t page = ct->page_size;
	uint64_t ways = ct->l2tlb.ways ? ct->l2tlb.ways : ct->l2tlb.entries;
	uint64_t sets = ct->l2tlb.entries / ways, fill = ct->l1dtlb.entries;
	assert_true(sets > fill + 1); /* the fillers get sets of their own */
	uint64_t n = ways + 1;
	for (unsigned pass = 0; pass < 2; pass++) {
		reset_counts(f);
		/* set 0: n pages; then pages 1..fill (sets 1..fill) */
		touch_pages(f, c, page, n, sets);
		for (uint64_t i = 1; i <= fill; i++) {
			struct dpmu_insn in = ld(0x1000, DATA_BASE + (i + 2 * sets * n) * page);
			dpmu_uarch_retire(f->u, c, &in, 1);
		}
		dpmu_uarch_flush(f->u);
	}
	assert_int_equal(f->core[c][L1D_TLB_REFILL], n + fill);
	assert_int_equal(f->core[c][L2D_TLB], n + fill);
	assert_int_equal(f->core[c][L2D_TLB_REFILL], n);
	assert_int_equal(f->core[c][DTLB_WALK], n);
}

static void pages_beyond_an_l2_tlb_set_walk_every_time(void **state)
{
	(void)state;
	for_each_core_type(beyond_l2_tlb_set);
}

/* Accesses within one page look the TLB up each time and refill it once. */
static void accesses_in_one_page_refill_once(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	uint64_t page = f->p->core_types[0].page_size;
	for (uint64_t a = 0; a < page; a += 64) {
		struct dpmu_insn in = ld(0x1000, DATA_BASE + a);
		dpmu_uarch_retire(f->u, 0, &in, 1);
	}
	dpmu_uarch_flush(f->u);
	assert_int_equal(f->core[0][L1D_TLB], page / 64);
	assert_int_equal(f->core[0][L1D_TLB_REFILL], 1);
	assert_int_equal(f->core[0][DTLB_WALK], 1);
	fx_free(f);
}

/* A plain LRU model of an L1 TLB: set = page % sets, ages per entry. */
struct tlb_ref {
	uint64_t sets, ways, clock;
	uint64_t page[64 * 64], age[64 * 64];
	bool valid[64 * 64];
};

/* Look `vpn` up; returns whether it refilled. */
static bool tlb_ref_access(struct tlb_ref *r, uint64_t vpn)
{
	uint64_t base = (vpn % r->sets) * r->ways, victim = base;
	for (uint64_t w = base; w < base + r->ways; w++) {
		if (r->valid[w] && r->page[w] == vpn) {
			r->age[w] = ++r->clock;
			return false;
		}
		if (r->valid[victim] && (!r->valid[w] || r->age[w] < r->age[victim]))
			victim = w;
	}
	r->valid[victim] = true;
	r->page[victim] = vpn;
	r->age[victim] = ++r->clock;
	return true;
}

/* A program alternating between a stack page and heap pages, with now and
 * then a page of a pool larger than the L1 DTLB, loads and stores: every
 * access refills the L1 DTLB exactly when an LRU TLB of its geometry
 * misses, so the order of the entries is the LRU order at every step,
 * including across the returns to the page before the last. */
static void alternating_pages(struct fx *f, const struct dpmu_core_type *ct, unsigned c)
{
	struct tlb_ref *r = calloc(1, sizeof *r);
	assert_non_null(r);
	r->ways = ct->l1dtlb.ways ? ct->l1dtlb.ways : ct->l1dtlb.entries;
	r->sets = ct->l1dtlb.entries / r->ways;
	assert_true(r->sets * r->ways <= 64 * 64);
	uint64_t pool = ct->l1dtlb.entries + 6, x = 0x2545f4914f6cdd1dull ^ c;
	uint64_t stack = pool + 100, heap = 0, refills = 0;
	for (unsigned step = 0; step < 6000; step++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t vpn;
		unsigned pick = (unsigned)(x % 8);
		if (pick < 4) {
			vpn = stack;
		} else if (pick < 7) {
			vpn = heap;
		} else {
			heap = (x >> 8) % pool; /* the heap moves on */
			vpn = heap;
		}
		uint64_t a = DATA_BASE + vpn * ct->page_size + ((x >> 20) % 512) * 8;
		struct dpmu_insn in = (x >> 40) & 1 ? st(0x1000, a) : ld(0x1000, a);
		dpmu_uarch_retire(f->u, c, &in, 1);
		dpmu_uarch_flush(f->u);
		if (tlb_ref_access(r, (DATA_BASE / ct->page_size) + vpn))
			refills++;
		assert_int_equal(f->core[c][L1D_TLB_REFILL], refills);
	}
	assert_int_equal(f->core[c][L1D_TLB], 6000);
	assert_true(refills > 100); /* the pool does not fit */
	free(r);
}

static void alternating_pages_refill_as_lru(void **state)
{
	(void)state;
	for_each_core_type(alternating_pages);
}

/* The instruction side: code in more pages than the L1 ITLB holds, run in a
 * cycle, refills the L1 ITLB on every page change; its first pass walks
 * once per page (ITLB_WALK), later passes find the pages in the L2 TLB. */
static void code_beyond_the_l1_itlb_refills_it_per_page(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	const struct dpmu_core_type *ct = &f->p->core_types[f->p->clusters[0].core_type[0]];
	uint64_t page = ct->page_size, n = ct->l1itlb.entries + 1;
	struct dpmu_insn in = { .isize = 4, .kind = DPMU_INSN_OTHER };
	for (unsigned pass = 0; pass < 2; pass++) {
		if (pass == 1)
			reset_counts(f);
		for (uint64_t i = 0; i < n; i++) {
			in.pc = 0x80000000ull + i * page;
			dpmu_uarch_retire(f->u, 0, &in, 1);
		}
		dpmu_uarch_flush(f->u);
		if (pass == 0) {
			assert_int_equal(f->core[0][L1I_TLB_REFILL], n);
			assert_int_equal(f->core[0][ITLB_WALK], n);
		}
	}
	assert_int_equal(f->core[0][L1I_TLB], n);
	assert_int_equal(f->core[0][L1I_TLB_REFILL], n);
	assert_int_equal(f->core[0][L2I_TLB_REFILL], 0);
	assert_int_equal(f->core[0][ITLB_WALK], 0);
	/* the data side saw none of it */
	assert_int_equal(f->core[0][L1D_TLB], 0);
	assert_int_equal(f->core[0][DTLB_WALK], 0);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pages_that_fit_the_l1_dtlb_walk_once),
		cmocka_unit_test(pages_of_one_hint_slot_hit_the_l1_dtlb),
		cmocka_unit_test(pages_beyond_the_l1_dtlb_hit_the_l2_tlb),
		cmocka_unit_test(pages_beyond_an_l2_tlb_set_walk_every_time),
		cmocka_unit_test(accesses_in_one_page_refill_once),
		cmocka_unit_test(alternating_pages_refill_as_lru),
		cmocka_unit_test(code_beyond_the_l1_itlb_refills_it_per_page),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
