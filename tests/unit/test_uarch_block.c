/*
 * Translated blocks (dpmu_ublock_create, dpmu_uarch_run_block): running a
 * block's summary must give exactly the events and timing of retiring its
 * instructions one by one (include/dynpmu/uarch.h), on every core type,
 * with the prefetchers of the shipped profile, and across delivery points.
 * A summary holds its class events until the delivery of the core that ran
 * it: every delivery must still see what one-by-one retirement delivers
 * then, also when another core, another engine or the summary's destruction
 * comes between.
 */
#include "unit/uarch_fixture.h"

#define NBLOCKS 160
#define MAXLEN 12
#define RUNS 20000

struct blk {
	struct dpmu_insn in[MAXLEN];
	uint32_t n;
	struct dpmu_ublock *sum;
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Register operands from a small pool (X0-X5, V0, NZCV), so that values
 * flow between instructions and blocks and the timing's waits, reorder
 * window and pending registers are exercised; a load or store always
 * reads its base. A quarter of the blocks carry none, as a trace's. */
static void random_regs(struct dpmu_insn *in)
{
	static const uint8_t pool[] = {DPMU_REG_X(0), DPMU_REG_X(1), DPMU_REG_X(2),
				       DPMU_REG_X(3), DPMU_REG_X(4), DPMU_REG_X(5),
				       DPMU_REG_V(0), DPMU_REG_NZCV};
	const unsigned np = sizeof pool / sizeof pool[0];
	unsigned ns = (unsigned)(next() % 3), nd = (unsigned)(next() % 2);
	if (in->kind == DPMU_INSN_LOAD || in->kind == DPMU_INSN_STORE)
		ns += !ns;
	if (in->kind == DPMU_INSN_LOAD)
		nd = 1;
	for (unsigned k = 0; k < ns; k++)
		in->src[k] = pool[next() % np]; /* a repeat is harmless */
	for (unsigned k = 0; k < nd; k++)
		in->dst[k] = pool[next() % np];
	/* at times pre- or post-index: the base written back as well */
	if ((in->kind == DPMU_INSN_LOAD || in->kind == DPMU_INSN_STORE) && next() % 4 == 0) {
		in->flags |= DPMU_IC_WRITEBACK;
		in->dst[nd] = in->src[0];
	}
}

/* A random block at pc: integer (some multiplies and divides), SIMD/FP
 * (some with an FP latency) and barrier instructions, loads
 * and stores (pairs, exclusives), not-taken conditional branches, ending
 * in a branch of a random kind. */
static void make_block(struct blk *b, uint64_t pc)
{
	const bool regs = next() % 4 != 0;
	static const uint32_t classes[] = {DPMU_IC_DP, 0, DPMU_IC_ASE, DPMU_IC_VFP, DPMU_IC_CRYPTO,
					   DPMU_IC_DMB, DPMU_IC_ISB, DPMU_IC_DSB, DPMU_IC_SVC};
	b->n = 1 + (uint32_t)(next() % MAXLEN);
	for (uint32_t i = 0; i < b->n; i++) {
		struct dpmu_insn *in = &b->in[i];
		memset(in, 0, sizeof *in);
		in->pc = pc + 4ull * i;
		in->isize = 4;
		uint64_t r = next() % 10;
		if (i + 1 == b->n) {
			in->kind = DPMU_INSN_BRANCH;
			in->br_kind = (uint8_t)(next() % 5);
			if (in->br_kind == DPMU_BR_CALL && next() % 2)
				in->flags = DPMU_IC_REG_BRANCH;
			else if (in->br_kind == DPMU_BR_RET || in->br_kind == DPMU_BR_IND)
				in->flags = DPMU_IC_REG_BRANCH;
			else
				in->flags = DPMU_IC_IMMED;
		} else if (r < 3) {
			in->kind = DPMU_INSN_LOAD;
			in->size = (uint16_t)(1u << (next() % 5));
			if (next() % 8 == 0)
				in->flags = DPMU_IC_PAIR;
			else if (next() % 16 == 0)
				in->flags = DPMU_IC_LDREX;
		} else if (r < 5) {
			in->kind = DPMU_INSN_STORE;
			in->size = (uint16_t)(1u << (next() % 5));
			if (next() % 16 == 0)
				in->flags = DPMU_IC_STREX;
		} else if (r == 9 && next() % 4 == 0) {
			/* a conditional branch inside the block, not taken
			 * (as a block's template has it) */
			in->kind = DPMU_INSN_BRANCH;
			in->br_kind = DPMU_BR_COND;
			in->flags = DPMU_IC_IMMED;
		} else {
			in->flags = classes[next() % (sizeof classes / sizeof classes[0])];
			/* at times with an execution latency (multiply, divide,
			 * FP: the shipped profile's classes) */
			if (in->flags & (DPMU_IC_DP | DPMU_IC_VFP) && next() % 3 == 0)
				in->exec = (uint8_t)(1 + next() % (DPMU_EX_COUNT - 1));
		}
		if (regs)
			random_regs(in);
	}
}

/* One execution of bk followed by nx: its instructions as retirement
 * takes them (in) and its loads' and stores' addresses (addr), in a
 * working set of `reach` bytes; returns where execution went next: nx,
 * or the fall-through for a not-taken conditional branch. */
static uint64_t execution(const struct blk *bk, const struct blk *nx, uint32_t reach,
			  struct dpmu_insn *in, uint64_t *addr)
{
	memcpy(in, bk->in, bk->n * sizeof in[0]);
	for (uint32_t i = 0; i < bk->n; i++)
		if (in[i].kind == DPMU_INSN_LOAD || in[i].kind == DPMU_INSN_STORE)
			in[i].addr = addr[i] = 0x10000000 + (next() % reach);
	struct dpmu_insn *last = &in[bk->n - 1];
	uint64_t fall = last->pc + 4;
	uint64_t to = last->br_kind == DPMU_BR_COND && next() % 3 == 0 ? fall : nx->in[0].pc;
	last->taken = to != fall || last->br_kind != DPMU_BR_COND;
	last->addr = to;
	return to;
}

/* After the runs, one engine one by one (a), the other with summaries
 * (b): once both have delivered everything, every core's cycles and
 * events and every cluster's events are the same. */
static void assert_same_at_the_end(struct fx *a, struct fx *b, unsigned batch)
{
	dpmu_uarch_flush(a->u);
	dpmu_uarch_flush(b->u);
	for (unsigned c = 0; c < dpmu_model_ncores(a->m); c++) {
		assert_int_equal(dpmu_uarch_core_cycles(a->u, c), dpmu_uarch_core_cycles(b->u, c));
		for (unsigned e = 0; e < 256; e++)
			if (a->core[c][e] != b->core[c][e])
				fail_msg("batch %u cpu%u event 0x%x: %llu one by one, %llu as blocks",
					 batch, c, e, (unsigned long long)a->core[c][e],
					 (unsigned long long)b->core[c][e]);
	}
	for (unsigned k = 0; k < dpmu_model_nclusters(a->m); k++)
		assert_memory_equal(a->cl[k], b->cl[k], sizeof a->cl[k]);
}

/* The blocks of a run and its two fixtures go. */
static void run_free(struct blk *blocks, unsigned n, struct fx *a, struct fx *b)
{
	for (unsigned k = 0; k < n; k++)
		dpmu_ublock_destroy(blocks[k].sum);
	fx_free(a);
	fx_free(b);
}

/* The line size of every cache, or 0: the shipped profile's. */
static uint32_t line_size;

/* The data the blocks' loads and stores reach (bytes). */
static uint32_t footprint = 256 * 1024;

static struct fx *start(unsigned batch)
{
	struct fx *f = calloc(1, sizeof *f);
	struct dpmu_err err;
	assert_non_null(f);
	/* the shipped profile as it is: its prefetchers and replacement */
	if (dpmu_profile_load(DPMU_PROFILE_DEFAULT, &f->p, &err) != 0)
		fail_msg("profile: %s", dpmu_errmsg(&err));
	for (unsigned t = 0; line_size && t < f->p->n_core_types; t++) {
		f->p->core_types[t].l1i.line = line_size;
		f->p->core_types[t].l1d.line = line_size;
		f->p->core_types[t].l2.line = line_size;
	}
	for (unsigned c = 0; line_size && c < f->p->nclusters; c++)
		f->p->clusters[c].l3.line = line_size;
	fx_start(f);
	assert_int_equal(dpmu_uarch_set_batch(f->u, batch, &err), 0);
	return f;
}

static void run_both(unsigned batch)
{
	static struct blk blocks[NBLOCKS];
	rng = 0x9e3779b97f4a7c15ull;
	struct dpmu_err err;
	for (unsigned k = 0; k < NBLOCKS; k++) {
		/* blocks spread over pages and lines, some sharing a line */
		make_block(&blocks[k], 0x400000 + 0x1000 * (k % 37) + 0x2c * k);
		assert_int_equal(dpmu_ublock_create(blocks[k].in, blocks[k].n, &blocks[k].sum, &err), 0);
	}
	struct fx *a = start(batch), *b = start(batch);
	unsigned cores = dpmu_model_ncores(a->m);
	unsigned cur = 0, core = 0;
	for (unsigned r = 0; r < RUNS; r++) {
		struct blk *bk = &blocks[cur];
		unsigned nx = (unsigned)(next() % NBLOCKS);
		uint64_t addr[MAXLEN] = {0};
		struct dpmu_insn in[MAXLEN];
		/* by default a 256 KiB working set: L1, L2 and L3 hits and
		 * misses, aligned and not, some crossing a line */
		uint64_t to = execution(bk, &blocks[nx], footprint, in, addr);
		dpmu_uarch_retire(a->u, core, in, bk->n);
		/* the checked entry and the core handle's, in turn: the same */
		if (r % 2)
			dpmu_uarch_run_block_on(b->u, dpmu_uarch_core(b->u, core), bk->sum, addr, to);
		else
			dpmu_uarch_run_block(b->u, core, bk->sum, addr, to);
		cur = nx;
		if (next() % 64 == 0)
			core = (unsigned)(next() % cores); /* big and LITTLE */
		if (next() % 97 == 0) {
			/* a delivery of one core outside the batch (an EL
			 * change) while other cores hold blocks */
			unsigned fc = (unsigned)(next() % cores);
			dpmu_uarch_flush_core(a->u, fc);
			dpmu_uarch_flush_core(b->u, fc);
		}
		/* Both engines deliver at the same points: what the observer
		 * has seen so far is the same after every block. */
		if (memcmp(a->core, b->core, sizeof a->core) || memcmp(a->cl, b->cl, sizeof a->cl))
			fail_msg("batch %u: deliveries differ after run %u", batch, r);
	}
	assert_same_at_the_end(a, b, batch);
	/* the events were there to compare */
	assert_true(a->core[0][0x08] > 0);
	run_free(blocks, NBLOCKS, a, b);
}

static void blocks_match_one_by_one(void **state)
{
	(void)state;
	run_both(DPMU_UARCH_BATCH_DEFAULT);
}

/* Small batches put delivery points inside blocks. */
static void blocks_match_one_by_one_across_delivery_points(void **state)
{
	(void)state;
	run_both(5);
	run_both(1);
}

/* Large batches: more distinct blocks run between two deliveries than a
 * core holds (NBLOCKS > the core's list), so the list fills. */
static void blocks_match_one_by_one_in_large_batches(void **state)
{
	(void)state;
	run_both(4096);
	run_both(DPMU_UARCH_BATCH_MAX);
}

/* A working set far beyond the L3: loads that miss to DRAM fill the
 * out-of-order core's reorder window and its miss buffers inside blocks
 * (the block path's waits for the window, rob_steps), and their values
 * reach the next blocks late. */
static void blocks_match_one_by_one_missing_to_dram(void **state)
{
	(void)state;
	footprint = 64u << 20;
	run_both(DPMU_UARCH_BATCH_DEFAULT);
	footprint = 256 * 1024;
}

/* A loop of two blocks in one line on cpu0 (the out-of-order A75) that
 * dispatches fast: loads over 64 MiB, independent ones, a chase through
 * the value of the one before, a gather through an add, and a store,
 * with adds between and a predictable branch. The misses' values come
 * hundreds of cycles late, so the reorder window fills inside the
 * blocks and each wait moves the issue of what follows in the block. */
static void window_full_inside_blocks_matches_one_by_one(void **state)
{
	(void)state;
	static const struct {
		uint8_t kind, src, dst;
	} tmpl[2][9] = {
		{{DPMU_INSN_LOAD, 2, 1},  {0, 3, 3},  {0, 3, 3},	{DPMU_INSN_LOAD, 4, 5},
		 {0, 6, 6},		  {DPMU_INSN_LOAD, 1, 7}, {0, 7, 8},	{DPMU_INSN_LOAD, 8, 9},
		 {DPMU_INSN_BRANCH, 65, 0}},
		{{0, 3, 3},		  {DPMU_INSN_STORE, 9, 0}, {0, 6, 6},	{0, 6, 6},
		 {DPMU_INSN_LOAD, 5, 5},  {0, 3, 3},		  {0, 3, 65},	{0, 6, 6},
		 {DPMU_INSN_BRANCH, 65, 0}}};
	struct blk blocks[2];
	struct dpmu_err err;
	rng = 0x5851f42d4c957f2dull;
	for (unsigned k = 0; k < 2; k++) {
		blocks[k].n = 9;
		for (uint32_t i = 0; i < 9; i++) {
			struct dpmu_insn *in = &blocks[k].in[i];
			memset(in, 0, sizeof *in);
			in->pc = 0x400000 + 36ull * k + 4ull * i;
			in->isize = 4;
			in->kind = tmpl[k][i].kind;
			in->size = 8;
			in->flags = in->kind == DPMU_INSN_BRANCH ? DPMU_IC_IMMED : DPMU_IC_DP;
			in->br_kind = DPMU_BR_COND;
			in->src[0] = tmpl[k][i].src;
			in->dst[0] = tmpl[k][i].dst;
		}
		assert_int_equal(dpmu_ublock_create(blocks[k].in, 9, &blocks[k].sum, &err), 0);
	}
	struct fx *a = start(DPMU_UARCH_BATCH_DEFAULT), *b = start(DPMU_UARCH_BATCH_DEFAULT);
	for (unsigned r = 0; r < RUNS; r++) {
		struct blk *bk = &blocks[r % 2];
		uint64_t addr[MAXLEN] = {0};
		struct dpmu_insn in[MAXLEN];
		memcpy(in, bk->in, bk->n * sizeof in[0]);
		for (uint32_t i = 0; i < bk->n; i++)
			if (in[i].kind == DPMU_INSN_LOAD || in[i].kind == DPMU_INSN_STORE)
				in[i].addr = addr[i] = 0x10000000 + (next() % (64u << 20) & ~7ull);
		/* on to the other block: block 0 falls through, block 1
		 * branches back */
		struct dpmu_insn *last = &in[bk->n - 1];
		uint64_t to = r % 2 ? blocks[0].in[0].pc : last->pc + 4;
		last->taken = r % 2;
		last->addr = to;
		dpmu_uarch_retire(a->u, 0, in, bk->n);
		dpmu_uarch_run_block_on(b->u, dpmu_uarch_core(b->u, 0), bk->sum, addr, to);
		if (memcmp(a->core, b->core, sizeof a->core))
			fail_msg("deliveries differ after run %u", r);
	}
	assert_same_at_the_end(a, b, DPMU_UARCH_BATCH_DEFAULT);
	/* the misses stalled the back end (the window was full) */
	assert_true(a->core[0][0x24] > a->core[0][0x11] / 2); /* STALL_BACKEND, CPU_CYCLES */
	run_free(blocks, 2, a, b);
}

/* An instruction of compare_loop's blocks: kind, size, sources, destination
 * (register numbers DPMU_REG_X(n) = n + 1, NZCV 65). */
struct cl_insn {
	uint8_t kind, size, src0, src1, dst;
};

/* A byte-compare loop as LZ77's (bench/frontend_compress.c): block A loads
 * two bytes that a compare uses (its loads' values wait for nothing
 * pending: the block's template, until a miss or a mispredicted exit
 * departs from it), B and C count and bound the match (plain), D uses a
 * loaded byte after the loop (no load, a pending register read: its value
 * passed on), E loads the next candidate's base through D's result, and
 * A's first run then reads it pending (the dependence summary load by
 * load). On the
 * out-of-order and the in-order core, with L1D hits and misses: the same
 * counts and cycles as one by one after every block. */
static void compare_loop_matches_one_by_one(void **state)
{
	(void)state;
	static const struct cl_insn prog[5][5] = {
		/* A: ldrb w5,[x6,x1]; ldrb w4,[x20,x1]; add x1,x1,1; cmp w5,w4; b.eq */
		{{DPMU_INSN_LOAD, 1, 7, 2, 6}, {DPMU_INSN_LOAD, 1, 21, 2, 5}, {0, 0, 2, 0, 2},
		 {0, 0, 6, 5, 65}, {DPMU_INSN_BRANCH, 0, 65, 0, 0}},
		/* B: add w3,w3,1; cmp w3,255; b.eq */
		{{0, 0, 4, 0, 4}, {0, 0, 4, 0, 65}, {DPMU_INSN_BRANCH, 0, 65, 0, 0}},
		/* C: cmp x19,x1; b.ls */
		{{0, 0, 20, 2, 65}, {DPMU_INSN_BRANCH, 0, 65, 0, 0}},
		/* D: add x7,x5,x1; eor x8,x7,x1; cmp x8,0; b.ne */
		{{0, 0, 6, 2, 8}, {0, 0, 8, 2, 9}, {0, 0, 9, 0, 65}, {DPMU_INSN_BRANCH, 0, 65, 0, 0}},
		/* E: ldr x6,[x8]; mov x1,0; b */
		{{DPMU_INSN_LOAD, 8, 9, 0, 7}, {0, 0, 0, 0, 2}, {DPMU_INSN_BRANCH, 0, 0, 0, 0}}};
	static const uint32_t len[5] = {5, 3, 2, 4, 3};
	struct blk blocks[5];
	struct dpmu_err err;
	for (unsigned k = 0; k < 5; k++) {
		blocks[k].n = len[k];
		for (uint32_t i = 0; i < len[k]; i++) {
			const struct cl_insn *c = &prog[k][i];
			struct dpmu_insn *in = &blocks[k].in[i];
			memset(in, 0, sizeof *in);
			in->pc = 0x600000 + 0x40ull * k + 4ull * i;
			in->isize = 4;
			in->kind = c->kind;
			in->size = c->size;
			in->flags = c->kind == DPMU_INSN_BRANCH ? DPMU_IC_IMMED : DPMU_IC_DP;
			in->br_kind = k == 4 ? DPMU_BR_UNCOND : DPMU_BR_COND;
			in->src[0] = c->src0;
			in->src[1] = c->src1;
			in->dst[0] = c->dst;
		}
		assert_int_equal(dpmu_ublock_create(blocks[k].in, len[k], &blocks[k].sum, &err), 0);
	}
	for (unsigned core = 0; core < 8; core += 4) {
		rng = 0x3c6ef372fe94f82bull;
		struct fx *a = start(DPMU_UARCH_BATCH_DEFAULT), *b = start(DPMU_UARCH_BATCH_DEFAULT);
		unsigned cur = 4, left = 0;
		uint64_t base0 = 0, base1 = 0, l = 0;
		for (unsigned r = 0; r < RUNS; r++) {
			struct blk *bk = &blocks[cur];
			unsigned nx;
			/* E picks a match of 1 to 24 bytes at another place; the
			 * loop runs A, B, C per byte, then D */
			if (cur == 4) {
				left = 1 + (unsigned)(next() % 24);
				/* a small window mostly (L1D hits), at times far */
				uint64_t reach = next() % 8 ? 8192 : 32u << 20;
				base0 = 0x10000000 + next() % reach;
				base1 = 0x10000000 + next() % reach;
				l = 0;
				nx = 0;
			} else if (cur == 0) {
				nx = --left ? 1 : 3;
			} else if (cur == 1) {
				nx = 2;
			} else if (cur == 2) {
				nx = 0;
				l++;
			} else {
				nx = 4;
			}
			struct dpmu_insn in[MAXLEN];
			uint64_t addr[MAXLEN] = {0};
			memcpy(in, bk->in, bk->n * sizeof in[0]);
			if (cur == 0) {
				in[0].addr = addr[0] = base0 + l;
				in[1].addr = addr[1] = base1 + l;
			} else if (cur == 4) {
				in[0].addr = addr[0] = 0x20000000 + (next() % (1u << 20) & ~7ull);
			}
			struct dpmu_insn *last = &in[bk->n - 1];
			const uint64_t to = blocks[nx].in[0].pc;
			last->taken = to != last->pc + 4;
			last->addr = to;
			dpmu_uarch_retire(a->u, core, in, bk->n);
			dpmu_uarch_run_block_on(b->u, dpmu_uarch_core(b->u, core), bk->sum, addr, to);
			if (memcmp(a->core, b->core, sizeof a->core))
				fail_msg("cpu%u: deliveries differ after run %u", core, r);
			cur = nx;
		}
		assert_same_at_the_end(a, b, DPMU_UARCH_BATCH_DEFAULT);
		/* misses and mispredictions were there to match */
		assert_true(a->core[core][0x03] > 0 && a->core[core][0x10] > 0);
		fx_free(a);
		fx_free(b);
	}
	for (unsigned k = 0; k < 5; k++)
		dpmu_ublock_destroy(blocks[k].sum);
}

/* Other L1I lines than the shipped 64 bytes: a summary's fetch steps are
 * planned for the line of the core that runs it (the smallest, 16 bytes,
 * is what a summary starts with). */
static void blocks_match_one_by_one_with_other_lines(void **state)
{
	(void)state;
	static const uint32_t lines[] = { 16, 32, 128 };
	for (unsigned i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		line_size = lines[i];
		run_both(DPMU_UARCH_BATCH_DEFAULT);
	}
	line_size = 0;
}

/* Plain blocks (no load, store or inner branch; a conditional branch at
 * the end), most in the line the previous one ran in: the block path runs
 * most of them without its steps, and they must match one by one as any
 * block does, across deliveries, mispredictions and a change of core.
 * A third of the blocks start with a load over 1 MiB, some instructions
 * have an execution latency: those are not plain, and they leave values
 * pending that the plain blocks after them read. */
static void plain_blocks_run(unsigned batch)
{
	enum { NPLAIN = 24 };
	static struct blk blocks[NPLAIN];
	static const uint32_t classes[] = {DPMU_IC_DP, DPMU_IC_ASE, DPMU_IC_VFP, DPMU_IC_CRYPTO};
	rng = 0x2545f4914f6cdd1dull;
	struct dpmu_err err;
	for (unsigned k = 0; k < NPLAIN; k++) {
		struct blk *b = &blocks[k];
		/* 1 to 4 instructions, 16 bytes apart: 4 blocks a 64-byte
		 * line, some crossing into the next */
		uint64_t pc = 0x500000 + 16ull * k + (k % 5 == 4 ? 8 : 0);
		b->n = 1 + (uint32_t)(next() % 4);
		for (uint32_t i = 0; i < b->n; i++) {
			struct dpmu_insn *in = &b->in[i];
			memset(in, 0, sizeof *in);
			in->pc = pc + 4ull * i;
			in->isize = 4;
			in->flags = classes[next() % (sizeof classes / sizeof classes[0])];
			if (i == 0 && k % 3 == 2 && b->n > 1) {
				in->kind = DPMU_INSN_LOAD;
				in->flags = 0;
				in->size = 8;
			} else if (i + 1 < b->n && in->flags & (DPMU_IC_DP | DPMU_IC_VFP) &&
				   next() % 6 == 0) {
				/* (not the branch: no branch has a latency class) */
				in->exec = (uint8_t)(1 + next() % (DPMU_EX_COUNT - 1));
			}
			random_regs(in);
		}
		struct dpmu_insn *last = &b->in[b->n - 1];
		last->kind = DPMU_INSN_BRANCH;
		last->br_kind = DPMU_BR_COND;
		last->flags = DPMU_IC_IMMED;
		assert_int_equal(dpmu_ublock_create(b->in, b->n, &b->sum, &err), 0);
	}
	struct fx *a = start(batch), *b = start(batch);
	unsigned cores = dpmu_model_ncores(a->m), core = 0, cur = 0;
	for (unsigned r = 0; r < RUNS; r++) {
		struct blk *bk = &blocks[cur];
		/* mostly a near block (the same line or the next), at times
		 * a far one, and a loop that is mostly taken */
		unsigned nx = next() % 8 ? (cur + 1 + (unsigned)(next() % 2)) % NPLAIN
					 : (unsigned)(next() % NPLAIN);
		struct dpmu_insn in[MAXLEN];
		memcpy(in, bk->in, bk->n * sizeof in[0]);
		struct dpmu_insn *last = &in[bk->n - 1];
		uint64_t fall = last->pc + 4, to = blocks[nx].in[0].pc;
		if (next() % 4 == 0)
			to = 0; /* not known: the fall-through */
		last->taken = to != 0 && to != fall;
		last->addr = to ? to : fall;
		uint64_t addr[MAXLEN] = {0};
		if (in[0].kind == DPMU_INSN_LOAD)
			in[0].addr = addr[0] = 0x10000000 + (next() % (1u << 20));
		dpmu_uarch_retire(a->u, core, in, bk->n);
		dpmu_uarch_run_block_on(b->u, dpmu_uarch_core(b->u, core), bk->sum, addr, to);
		cur = to == 0 || to == fall ? (cur + 1) % NPLAIN : nx;
		if (next() % 512 == 0)
			core = (unsigned)(next() % cores);
		if (memcmp(a->core, b->core, sizeof a->core) || memcmp(a->cl, b->cl, sizeof a->cl))
			fail_msg("batch %u: deliveries differ after run %u", batch, r);
	}
	assert_same_at_the_end(a, b, batch);
	/* the predictor was wrong at times: the penalty was there to match */
	assert_true(a->core[0][0x10] > 0); /* BR_MIS_PRED */
	run_free(blocks, NPLAIN, a, b);
}

static void plain_blocks_match_one_by_one(void **state)
{
	(void)state;
	plain_blocks_run(DPMU_UARCH_BATCH_DEFAULT);
	plain_blocks_run(4096);
	plain_blocks_run(3); /* a delivery point at or inside most blocks */
}

/* A two-instruction block: an add and a load. */
static void small_block(struct dpmu_insn in[2], uint64_t pc)
{
	memset(in, 0, 2 * sizeof in[0]);
	in[0] = (struct dpmu_insn){ .pc = pc, .isize = 4, .flags = DPMU_IC_DP };
	in[1] = ld(pc + 4, 0x20000);
}

/* The class events of a summary destroyed before the delivery of its runs
 * are delivered with the rest; a summary that outlives its engine is
 * destroyed without touching it. */
static void destroyed_summary_still_counts(void **state)
{
	(void)state;
	struct dpmu_insn in[2];
	small_block(in, 0x4000);
	struct dpmu_err err;
	struct dpmu_ublock *sum;
	struct fx *a = fx_new(), *b = fx_new();
	assert_int_equal(dpmu_ublock_create(in, 2, &sum, &err), 0);
	uint64_t addr[2] = { 0, 0x20000 };
	for (unsigned r = 0; r < 10; r++) {
		dpmu_uarch_retire(a->u, 0, in, 2);
		dpmu_uarch_run_block(b->u, 0, sum, addr, 0);
	}
	dpmu_ublock_destroy(sum);
	dpmu_uarch_flush(a->u);
	dpmu_uarch_flush(b->u);
	assert_int_equal(b->core[0][0x08], 20); /* INST_RETIRED */
	assert_int_equal(b->core[0][0x73], 10); /* DP_SPEC: the held-back class event */
	assert_memory_equal(a->core, b->core, sizeof a->core);
	/* the other order: the engine goes first */
	assert_int_equal(dpmu_ublock_create(in, 2, &sum, &err), 0);
	dpmu_uarch_run_block(b->u, 0, sum, addr, 0);
	fx_free(b);
	dpmu_ublock_destroy(sum);
	fx_free(a);
}

/* One summary run by two engines: each engine's deliveries get the runs
 * it made, whichever ran the summary last. */
static void summary_shared_by_two_engines(void **state)
{
	(void)state;
	struct dpmu_insn in[2];
	small_block(in, 0x8000);
	struct dpmu_err err;
	struct dpmu_ublock *sum;
	struct fx *a = fx_new(), *b = fx_new();
	assert_int_equal(dpmu_ublock_create(in, 2, &sum, &err), 0);
	uint64_t addr[2] = { 0, 0x20000 };
	for (unsigned r = 0; r < 7; r++)
		dpmu_uarch_run_block(a->u, 1, sum, addr, 0);
	for (unsigned r = 0; r < 3; r++)
		dpmu_uarch_run_block(b->u, 1, sum, addr, 0);
	dpmu_uarch_run_block(a->u, 1, sum, addr, 0);
	dpmu_uarch_flush(a->u);
	dpmu_uarch_flush(b->u);
	assert_int_equal(a->core[1][0x73], 8);
	assert_int_equal(b->core[1][0x73], 3);
	assert_int_equal(a->core[1][0x08], 16);
	assert_int_equal(b->core[1][0x08], 6);
	dpmu_ublock_destroy(sum);
	fx_free(a);
	fx_free(b);
}

static bool wants_nothing(void *ctx, bool cluster, unsigned index, uint16_t event)
{
	(void)ctx;
	(void)cluster;
	(void)index;
	(void)event;
	return false;
}

/* Runs of a block, as a summary (b) and one by one (a). */
static void run_pair(struct fx *a, struct fx *b, unsigned core, struct blk *bk, unsigned runs)
{
	uint64_t addr[MAXLEN] = {0};
	struct dpmu_insn in[MAXLEN];
	for (unsigned r = 0; r < runs; r++) {
		memcpy(in, bk->in, bk->n * sizeof in[0]);
		struct dpmu_insn *last = &in[bk->n - 1];
		uint64_t to = bk->in[0].pc; /* round the loop */
		last->taken = true;
		last->addr = to;
		dpmu_uarch_retire(a->u, core, in, bk->n);
		dpmu_uarch_run_block(b->u, core, bk->sum, addr, to);
	}
}

/* With only what the model counts to deliver, a summary's class events
 * that wait for a delivery must still count on counters programmed before
 * it, on each core that ran it, whatever the last delivery counted. */
static void held_class_events_count_on_counters_programmed_before_the_delivery(void **state)
{
	(void)state;
	static struct blk bk;
	rng = 0x2545f4914f6cdd1dull;
	struct dpmu_err err;
	/* integer, SIMD and FP data processing and an immediate branch */
	bk.n = 4;
	memset(bk.in, 0, sizeof bk.in);
	const uint32_t cls[3] = { DPMU_IC_DP, DPMU_IC_ASE, DPMU_IC_VFP };
	for (unsigned i = 0; i < 3; i++)
		bk.in[i] = (struct dpmu_insn){ .pc = 0x9000 + 4 * i, .isize = 4, .flags = cls[i] };
	bk.in[3] = (struct dpmu_insn){ .pc = 0x900c, .isize = 4, .kind = DPMU_INSN_BRANCH,
				       .br_kind = DPMU_BR_UNCOND, .flags = DPMU_IC_IMMED };
	assert_int_equal(dpmu_ublock_create(bk.in, bk.n, &bk.sum, &err), 0);
	struct fx *a = start(256), *b = start(256);
	dpmu_uarch_set_observer(a->u, observe, wants_nothing, a);
	dpmu_uarch_set_observer(b->u, observe, wants_nothing, b);
	const uint16_t first[1] = { 0x08 }; /* INST_RETIRED */
	const uint16_t more[4] = { 0x08, 0x73 /* DP_SPEC */, 0x74 /* ASE_SPEC */,
				   0x21 /* BR_RETIRED */ };
	/* big core 0 and LITTLE core 4 share the summary */
	for (unsigned core = 0; core < 8; core += 4) {
		program(a, core, first, 1);
		program(b, core, first, 1);
	}
	run_pair(a, b, 0, &bk, 100); /* past a delivery: the summary settles */
	run_pair(a, b, 4, &bk, 100);
	run_pair(a, b, 0, &bk, 10);  /* held: fewer than the batch */
	for (unsigned core = 0; core < 8; core += 4) {
		program(a, core, more, 4); /* no delivery before */
		program(b, core, more, 4);
	}
	run_pair(a, b, 4, &bk, 10);
	dpmu_uarch_flush(a->u);
	dpmu_uarch_flush(b->u);
	for (unsigned core = 0; core < 8; core += 4)
		for (unsigned i = 0; i < 4; i++) {
			uint64_t want = counter(a, core, i);
			if (counter(b, core, i) != want)
				fail_msg("cpu%u counter %u (event 0x%x): %llu one by one, %llu as a summary",
					 core, i, more[i], (unsigned long long)want,
					 (unsigned long long)counter(b, core, i));
			assert_true(want > 0); /* there were events to count */
		}
	dpmu_ublock_destroy(bk.sum);
	fx_free(a);
	fx_free(b);
}

static void empty_block_is_refused(void **state)
{
	(void)state;
	struct dpmu_ublock *b = (struct dpmu_ublock *)&b;
	struct dpmu_err err;
	struct dpmu_insn in = ld(0x1000, 0x2000);
	assert_int_equal(dpmu_ublock_create(&in, 0, &b, &err), DPMU_EINVAL);
	assert_null(b);
	assert_non_null(strstr(dpmu_errmsg(&err), "0 instructions"));
}

static void run_without_a_summary_is_an_error(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	uint64_t addr[1] = {0};
	dpmu_uarch_run_block(f->u, 0, NULL, addr, 0);
	dpmu_uarch_flush(f->u);
	assert_non_null(strstr(dpmu_uarch_errmsg(f->u), "no block summary"));
	assert_int_equal(f->core[0][0x08], 0); /* nothing retired */
	fx_free(f);
}

/* The core handle exists for each core of the engine, and only for them. */
static void core_handle_only_for_cores_of_the_engine(void **state)
{
	(void)state;
	struct fx *f = start(DPMU_UARCH_BATCH_DEFAULT);
	unsigned cores = dpmu_model_ncores(f->m);
	for (unsigned c = 0; c < cores; c++)
		assert_non_null(dpmu_uarch_core(f->u, c));
	assert_ptr_not_equal(dpmu_uarch_core(f->u, 0), dpmu_uarch_core(f->u, cores - 1));
	assert_null(dpmu_uarch_core(f->u, cores));
	assert_null(dpmu_uarch_core(NULL, 0));
	fx_free(f);
}


/* ---- sampling on the block path (dpmu_uarch_watch_arm) ---- */

#define S_PMCR DPMU_SYSREG(3, 3, 9, 12, 0)
#define S_PMCNTENSET DPMU_SYSREG(3, 3, 9, 12, 1)
#define S_PMOVSCLR DPMU_SYSREG(3, 3, 9, 12, 3)
#define S_PMINTENSET DPMU_SYSREG(3, 0, 9, 14, 1)
#define S_PMCCNTR DPMU_SYSREG(3, 3, 9, 13, 0)
#define S_PMEVCNTR0 DPMU_SYSREG(3, 3, 14, 8, 0)
#define S_PMEVTYPER0 DPMU_SYSREG(3, 3, 14, 12, 0)
#define MAX_SAMPLES 4096u

struct sampled {
	struct fx *f;
	unsigned core;
	uint64_t pc[MAX_SAMPLES];
	unsigned n;
	unsigned calls; /* the branch hook: calls and register branches */
	uint32_t period; /* events between samples */
	bool insns;      /* INST_RETIRED on event counter 0, else the clock */
};

/* The sampled counter: the cycle counter (64-bit) or event counter 0
 * (32-bit), and its bit in the PMU's set and clear registers. */
static uint32_t s_reg(const struct sampled *x)
{
	return x->insns ? S_PMEVCNTR0 : S_PMCCNTR;
}

static uint32_t s_bit(const struct sampled *x)
{
	return x->insns ? 1u : 1u << 31;
}

/* The sampled counter interrupting `period` events on. */
static void s_arm(const struct sampled *x)
{
	struct fx *f = x->f;
	wr(f, x->core, S_PMCR, 1 | 2 | 4 | (1u << 6)); /* E, P, C, LC */
	if (x->insns)
		wr(f, x->core, S_PMEVTYPER0, DPMU_EV_INST_RETIRED);
	wr(f, x->core, S_PMCNTENSET, s_bit(x));
	wr(f, x->core, s_reg(x),
	   x->insns ? (uint32_t)(0 - x->period) : 0 - (uint64_t)x->period);
	wr(f, x->core, S_PMINTENSET, s_bit(x));
}

/* A sample as the monitor takes it: the counts delivered, the events past
 * the wrap counting towards the next period. */
static void s_take(struct sampled *x, uint64_t pc)
{
	dpmu_uarch_flush_core(x->f->u, x->core);
	uint64_t v = rd(x->f, x->core, s_reg(x));
	/* it wrapped, less than a period ago (the rest of a block at most) */
	if (v >= x->period)
		fail_msg("cpu%u: the sampled counter at %llu after its overflow", x->core,
			 (unsigned long long)v);
	wr(x->f, x->core, S_PMOVSCLR, s_bit(x));
	wr(x->f, x->core, s_reg(x), x->insns ? (uint32_t)(v - x->period) : v - x->period);
	if (x->n < MAX_SAMPLES)
		x->pc[x->n++] = pc;
}

static void s_overflow(void *ctx, unsigned core, const struct dpmu_insn *in)
{
	struct sampled *x = ctx;
	assert_int_equal(core, x->core);
	s_take(x, in->pc);
	assert_true(dpmu_uarch_watch_arm(x->f->u, core));
}

static void s_branch(void *ctx, unsigned core, const struct dpmu_insn *in, uint64_t next_pc)
{
	struct sampled *x = ctx;
	(void)core, (void)next_pc;
	assert_true(in->br_kind == DPMU_BR_CALL || (in->flags & DPMU_IC_REG_BRANCH));
	x->calls++;
}

/* Sampling on the block path finds the same instructions as retiring one
 * at a time with the watch: the overflow is where the per-instruction
 * path has it, in every kind of block, on both core types (out of order
 * and in order), with delivery points inside blocks too, and with data
 * that misses (4 MiB), mostly hits the L1D (16 KiB: executions that keep
 * to their templates) or hits the L2 (256 KiB: ones that depart from them
 * at a miss). `insns`: sampling INST_RETIRED, with every seventh block
 * retired one instruction at a time on the block path's engine too (as
 * the qemu backend retires a block that ran in part). Half-way the batch
 * changes, the watch armed. */
static void sampled_run(bool insns)
{
	static struct blk blocks[NBLOCKS];
	static struct sampled a, b;
	rng = 0x2545f4914f6cdd1dull;
	struct dpmu_err err;
	for (unsigned k = 0; k < NBLOCKS; k++) {
		make_block(&blocks[k], 0x400000 + 0x1000 * (k % 37) + 0x2c * k);
		assert_int_equal(dpmu_ublock_create(blocks[k].in, blocks[k].n, &blocks[k].sum, &err), 0);
	}
	const unsigned cores[] = {0, 4}; /* Cortex-A75, Cortex-A55 */
	/* batch 5: delivery points inside blocks (the split path) */
	const unsigned batches[] = {DPMU_UARCH_BATCH_DEFAULT, 5};
	const uint32_t reaches[] = {4u << 20, 16u << 10, 256u << 10};
	for (unsigned ci = 0; ci < 12; ci++) {
		unsigned core = cores[ci % 2], batch = batches[ci / 2 % 2];
		uint32_t reach = reaches[ci / 4];
		memset(&a, 0, sizeof a);
		memset(&b, 0, sizeof b);
		a.f = start(batch);
		b.f = start(batch);
		a.core = b.core = core;
		a.insns = b.insns = insns;
		/* a period longer than any block (one that misses to DRAM
		 * and walks the page tables; MAXLEN instructions); where the
		 * loads hit, more runs for about as many samples */
		a.period = b.period = insns ? 97 : 4000;
		const unsigned runs = reach > (1u << 20) ? RUNS / 4 : 2 * RUNS;
		s_arm(&a);
		s_arm(&b);
		static const struct dpmu_uarch_sample_hooks hooks = {s_overflow, s_branch};
		dpmu_uarch_set_sample_hooks(b.f->u, &hooks, &b);
		assert_true(dpmu_uarch_watch_arm(b.f->u, core));
		unsigned cur = 0, nbranch = 0;
		for (unsigned r = 0; r < runs; r++) {
			struct blk *bk = &blocks[cur];
			unsigned nx = (unsigned)(next() % NBLOCKS);
			uint64_t addr[MAXLEN] = {0};
			struct dpmu_insn in[MAXLEN];
			if (r == runs / 2) {
				/* a batch changed while the watch is armed (as the
				 * qemu backend sets its batch after arming) */
				const uint32_t nb = batch == 5 ? DPMU_UARCH_BATCH_DEFAULT : 7;
				assert_int_equal(dpmu_uarch_set_batch(a.f->u, nb, &err), 0);
				assert_int_equal(dpmu_uarch_set_batch(b.f->u, nb, &err), 0);
			}
			uint64_t to = execution(bk, &blocks[nx], reach, in, addr);
			struct dpmu_insn *last = &in[bk->n - 1];
			nbranch += last->br_kind == DPMU_BR_CALL || (last->flags & DPMU_IC_REG_BRANCH);
			for (size_t done = 0; done < bk->n;) {
				bool ovf;
				done += dpmu_uarch_retire_watched(a.f->u, core, in + done, bk->n - done, &ovf);
				if (ovf)
					s_take(&a, in[done - 1].pc);
			}
			if (insns && r % 7 == 3) {
				for (size_t done = 0; done < bk->n;) {
					bool ovf;
					done += dpmu_uarch_retire_watched(b.f->u, core, in + done,
									  bk->n - done, &ovf);
					if (ovf) {
						s_take(&b, in[done - 1].pc);
						assert_true(dpmu_uarch_watch_arm(b.f->u, core));
					}
				}
				/* (the hook's calls and returns: the backend's own) */
				nbranch -= last->br_kind == DPMU_BR_CALL ||
					   (last->flags & DPMU_IC_REG_BRANCH);
			} else {
				dpmu_uarch_run_block(b.f->u, core, bk->sum, addr, to);
			}
			cur = nx;
		}
		print_message("%s, cpu%u, batch %u, %u KiB: %u samples one by one, %u on the block "
			      "path\n", insns ? "instructions" : "cycles", core, batch, reach >> 10, a.n,
			      b.n);
		assert_true(a.n > 100);
		assert_int_equal(a.n, b.n);
		for (unsigned i = 0; i < a.n; i++)
			if (a.pc[i] != b.pc[i])
				fail_msg("cpu%u, %u KiB, sample %u: at 0x%llx one by one, 0x%llx on the block path",
					 core, reach >> 10, i, (unsigned long long)a.pc[i],
					 (unsigned long long)b.pc[i]);
		assert_int_equal(b.calls, nbranch);
		assert_int_equal(dpmu_uarch_core_cycles(a.f->u, core), dpmu_uarch_core_cycles(b.f->u, core));
		fx_free(a.f);
		fx_free(b.f);
	}
	for (unsigned k = 0; k < NBLOCKS; k++)
		dpmu_ublock_destroy(blocks[k].sum);
}

static void sampled_blocks_overflow_where_one_by_one_does(void **state)
{
	(void)state;
	sampled_run(false);
}

static void sampled_instructions_overflow_where_one_by_one_does(void **state)
{
	(void)state;
	sampled_run(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(blocks_match_one_by_one),
		cmocka_unit_test(blocks_match_one_by_one_across_delivery_points),
		cmocka_unit_test(blocks_match_one_by_one_in_large_batches),
		cmocka_unit_test(blocks_match_one_by_one_with_other_lines),
		cmocka_unit_test(blocks_match_one_by_one_missing_to_dram),
		cmocka_unit_test(window_full_inside_blocks_matches_one_by_one),
		cmocka_unit_test(compare_loop_matches_one_by_one),
		cmocka_unit_test(plain_blocks_match_one_by_one),
		cmocka_unit_test(sampled_blocks_overflow_where_one_by_one_does),
		cmocka_unit_test(sampled_instructions_overflow_where_one_by_one_does),
		cmocka_unit_test(destroyed_summary_still_counts),
		cmocka_unit_test(summary_shared_by_two_engines),
		cmocka_unit_test(held_class_events_count_on_counters_programmed_before_the_delivery),
		cmocka_unit_test(empty_block_is_refused),
		cmocka_unit_test(run_without_a_summary_is_an_error),
		cmocka_unit_test(core_handle_only_for_cores_of_the_engine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
