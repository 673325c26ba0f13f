/*
 * A load or store's data-side events by its size and address
 * (docs/events.md): UNALIGNED_LD_SPEC / UNALIGNED_ST_SPEC for a power-of-two
 * size whose address is not a multiple of it (Arm ARM D17), one L1D access
 * per line and one L1 DTLB lookup per page it touches, and a whole-line
 * store allocating without a refill. The engine serves these through
 * different paths (an access within one line inline, whether aligned or
 * not; one that crosses a line or a page, a cold line, another page out of
 * line), so each access is checked on its own, cold, warm in its page and
 * warm after an access to another page, through dpmu_uarch_retire and
 * through dpmu_uarch_run_block, against the rule computed here.
 */
#include "unit/uarch_fixture.h"

enum { L1D_CACHE_REFILL = 0x03, L1D_CACHE_ALLOCATE = 0x1F, L1D_CACHE_RD = 0x40,
       L1D_CACHE_WR = 0x41, L1D_TLB_RD = 0x4E, L1D_TLB_WR = 0x4F, UNALIGNED_LD_SPEC = 0x68,
       UNALIGNED_ST_SPEC = 0x69, LD_SPEC = 0x70, ST_SPEC = 0x71 };

#define LINE 64u
#define PAGE 4096u

/* The events checked per access, and what the rule expects of each. */
static const uint16_t checked[] = { L1D_CACHE_REFILL, L1D_CACHE_ALLOCATE, L1D_CACHE_RD,
				    L1D_CACHE_WR, L1D_TLB_RD, L1D_TLB_WR, UNALIGNED_LD_SPEC,
				    UNALIGNED_ST_SPEC, LD_SPEC, ST_SPEC };
#define NCHECKED (sizeof checked / sizeof checked[0])

struct eng {
	struct fx *f;
	bool blocks;               /* run one-instruction blocks, not dpmu_uarch_retire */
};

static struct fx *start(void)
{
	struct fx *f = fx_load(DPMU_PROFILE_DEFAULT);
	/* the line and page the rule below assumes, on every core type */
	for (unsigned t = 0; t < f->p->n_core_types; t++) {
		f->p->core_types[t].l1d.line = LINE;
		f->p->core_types[t].l1i.line = LINE;
		f->p->core_types[t].l2.line = LINE;
		f->p->core_types[t].page_size = PAGE;
	}
	for (unsigned c = 0; c < f->p->nclusters; c++)
		f->p->clusters[c].l3.line = LINE;
	fx_start(f);
	return f;
}

static struct dpmu_insn mem_insn(uint64_t addr, uint16_t size, bool write)
{
	return (struct dpmu_insn){ .pc = 0x400000, .addr = addr, .size = size,
				   .kind = write ? DPMU_INSN_STORE : DPMU_INSN_LOAD, .isize = 4 };
}

/* The events of one access, as the rule says, `cold`: none of its lines
 * is held anywhere. */
static void expect(const struct dpmu_insn *in, bool cold, uint64_t want[NCHECKED])
{
	bool wr = in->kind == DPMU_INSN_STORE;
	uint64_t n = in->size ? in->size : 1; /* size 0 is one byte */
	uint64_t a = in->addr, end = a + n - 1;
	bool pow2 = !(n & (n - 1));
	uint64_t lines = end / LINE - a / LINE + 1, pages = end / PAGE - a / PAGE + 1;
	/* lines the store covers whole (allocated, not refilled) */
	uint64_t whole = 0;
	for (uint64_t l = a / LINE; l <= end / LINE; l++)
		if (wr && l * LINE >= a && l * LINE + LINE - 1 <= end)
			whole++;
	for (unsigned i = 0; i < NCHECKED; i++) {
		uint64_t v = 0;
		switch (checked[i]) {
		case L1D_CACHE_REFILL: v = cold ? lines - whole : 0; break;
		case L1D_CACHE_ALLOCATE: v = cold ? whole : 0; break;
		case L1D_CACHE_RD: v = wr ? 0 : lines; break;
		case L1D_CACHE_WR: v = wr ? lines : 0; break;
		case L1D_TLB_RD: v = wr ? 0 : pages; break;
		case L1D_TLB_WR: v = wr ? pages : 0; break;
		case UNALIGNED_LD_SPEC: v = !wr && pow2 && a % n; break;
		case UNALIGNED_ST_SPEC: v = wr && pow2 && a % n; break;
		case LD_SPEC: v = !wr; break;
		case ST_SPEC: v = wr; break;
		}
		want[i] = v;
	}
}

/* Make the access on core 0, deliver, and compare what it added with the
 * rule. */
static void run(struct eng *e, const struct dpmu_insn *in, bool cold, const char *what)
{
	uint64_t before[NCHECKED], want[NCHECKED];
	for (unsigned i = 0; i < NCHECKED; i++)
		before[i] = e->f->core[0][checked[i]];
	if (e->blocks) {
		struct dpmu_ublock *b;
		struct dpmu_err err;
		assert_int_equal(dpmu_ublock_create(in, 1, &b, &err), 0);
		uint64_t addr = in->addr;
		dpmu_uarch_run_block(e->f->u, 0, b, &addr, 0);
		dpmu_uarch_flush(e->f->u);
		dpmu_ublock_destroy(b);
	} else {
		dpmu_uarch_retire(e->f->u, 0, in, 1);
		dpmu_uarch_flush(e->f->u);
	}
	expect(in, cold, want);
	for (unsigned i = 0; i < NCHECKED; i++) {
		uint64_t got = e->f->core[0][checked[i]] - before[i];
		if (got != want[i])
			fail_msg("%s, %s of %u bytes at 0x%llx (%s): event 0x%x counted %llu, the rule "
				 "says %llu",
				 e->blocks ? "block" : "retire",
				 in->kind == DPMU_INSN_STORE ? "store" : "load", (unsigned)in->size,
				 (unsigned long long)in->addr, what, checked[i],
				 (unsigned long long)got, (unsigned long long)want[i]);
	}
}

/* Every size and offset, in the middle of a page and at its end (so a
 * line-crossing access crosses a line there and a page here), loads and
 * stores, on fresh lines each. */
static void each_access(struct eng *e)
{
	static const uint16_t sizes[] = { 0, 1, 2, 4, 8, 16, 32, 64, 3, 12, 24, 48 };
	static const uint32_t offs[] = { 0, 1, 2, 3, 4, 7, 8, 12, 16, 31, 32, 33, 48, 56, 60, 61, 63 };
	static const uint32_t where[] = { 0x7c0, 0xfc0 };
	uint64_t region = 0x10000000;
	/* an aligned load far from the accesses, to leave their page */
	struct dpmu_insn away = mem_insn(0x8000000, 8, false);
	run(e, &away, true, "another page, first");
	for (unsigned w = 0; w < 2; w++)
		for (unsigned p = 0; p < 2; p++)
			for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
				for (unsigned o = 0; o < sizeof offs / sizeof offs[0]; o++) {
					region += 4 * PAGE;
					struct dpmu_insn in =
						mem_insn(region + where[p] + offs[o], sizes[s], w);
					run(e, &in, true, "cold");
					run(e, &in, false, "again, same page");
					run(e, &away, false, "another page");
					run(e, &in, false, "again, after another page");
					if (!w) {
						/* a store to the lines the load holds */
						struct dpmu_insn sto = in;
						sto.kind = DPMU_INSN_STORE;
						run(e, &sto, false, "store after the load");
					}
				}
}

static void data_events_follow_size_and_address(void **state)
{
	(void)state;
	struct eng a = { start(), false }, b = { start(), true };
	each_access(&a);
	each_access(&b);
	/* both paths agree on every event, not only the checked ones */
	for (unsigned e = 0; e < 256; e++)
		if (a.f->core[0][e] != b.f->core[0][e])
			fail_msg("event 0x%x: %llu retired one by one, %llu as blocks", e,
				 (unsigned long long)a.f->core[0][e],
				 (unsigned long long)b.f->core[0][e]);
	/* the rule was exercised: unaligned, line-crossing and aligned */
	assert_true(a.f->core[0][UNALIGNED_LD_SPEC] > 0 && a.f->core[0][UNALIGNED_ST_SPEC] > 0);
	assert_true(a.f->core[0][L1D_CACHE_ALLOCATE] > 0);
	fx_free(a.f);
	fx_free(b.f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(data_events_follow_size_and_address),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
