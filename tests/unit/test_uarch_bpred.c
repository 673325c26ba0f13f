/*
 * The engine's branch prediction: direction (bimodal, gshare), return stack,
 * and the branch events (Arm ARM D17: BR_PRED, BR_MIS_PRED, BR_RETIRED,
 * BR_IMMED_RETIRED, BR_RETURN_RETIRED, PC_WRITE_RETIRED).
 */
#include "unit/uarch_fixture.h"

enum { BR_MIS_PRED = 0x10, BR_PRED = 0x12, BR_RETIRED = 0x21, BR_MIS_PRED_RETIRED = 0x22,
       BR_IMMED_RETIRED = 0x0D, BR_RETURN_RETIRED = 0x0E, PC_WRITE_RETIRED = 0x0C,
       STALL_FRONTEND = 0x23, CPU_CYCLES = 0x11 };

static struct dpmu_insn br(uint64_t pc, uint64_t target, uint8_t kind, bool taken)
{
	return (struct dpmu_insn){ .pc = pc, .addr = target, .kind = DPMU_INSN_BRANCH,
				   .br_kind = kind, .taken = taken, .isize = 4 };
}

/* Mispredictions of one run of a loop of `iters` iterations, by iteration. */
static void loop_run(struct fx *f, unsigned iters, uint64_t *mis_at)
{
	for (unsigned i = 0; i < iters; i++) {
		struct dpmu_insn in = br(0x2000, 0x1ff0, DPMU_BR_COND, i + 1 < iters);
		uint64_t before = f->core[0][BR_MIS_PRED];
		dpmu_uarch_retire(f->u, 0, &in, 1);
		mis_at[i] += f->core[0][BR_MIS_PRED] - before;
	}
}

/* A loop branch, once learnt, mispredicts only at its exit: with 2-bit
 * counters (bimodal), and with global history (gshare) when the loop is
 * longer than the history (the exit looks like any other iteration). */
static void loop_branch_mispredicts_only_at_exit(void **state)
{
	(void)state;
	const enum dpmu_bp_kind kinds[] = { DPMU_BP_BIMODAL, DPMU_BP_GSHARE };
	for (unsigned k = 0; k < 2; k++) {
		struct fx *f = fx_load(DPMU_PROFILE_DEFAULT);
		f->p->core_types[0].bp.kind = kinds[k];
		fx_start(f);
		/* Deliver every instruction so each one's misprediction shows. */
		assert_int_equal(dpmu_uarch_set_batch(f->u, 1, NULL), 0);
		enum { ITERS = 40, WARM = 20, RUNS = 100 };
		uint64_t mis[ITERS] = { 0 };
		for (unsigned r = 0; r < WARM; r++)
			loop_run(f, ITERS, mis);
		memset(mis, 0, sizeof mis);
		for (unsigned r = 0; r < RUNS; r++)
			loop_run(f, ITERS, mis);
		for (unsigned i = 0; i + 1 < ITERS; i++)
			assert_int_equal(mis[i], 0);
		assert_int_equal(mis[ITERS - 1], RUNS);
		fx_free(f);
	}
}

/* With the whole loop in its history, gshare predicts the exit too. */
static void gshare_learns_exit_of_loop_shorter_than_history(void **state)
{
	(void)state;
	struct fx *f = fx_load(DPMU_PROFILE_DEFAULT);
	f->p->core_types[0].bp.kind = DPMU_BP_GSHARE;
	f->p->core_types[0].bp.history_bits = 13;
	fx_start(f);
	assert_int_equal(dpmu_uarch_set_batch(f->u, 1, NULL), 0);
	enum { ITERS = 8 };
	uint64_t mis[ITERS] = { 0 };
	for (unsigned r = 0; r < 20; r++)
		loop_run(f, ITERS, mis);
	memset(mis, 0, sizeof mis);
	for (unsigned r = 0; r < 100; r++)
		loop_run(f, ITERS, mis);
	for (unsigned i = 0; i < ITERS; i++)
		assert_int_equal(mis[i], 0);
	fx_free(f);
}

/* Branches whose direction is random mispredict about half the time. */
static void random_branches_mispredict_about_half(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	uint64_t x = 0x9e3779b97f4a7c15ull;
	const unsigned n = 20000;
	for (unsigned i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		struct dpmu_insn in = br(0x3000, 0x3100, DPMU_BR_COND, (x >> 32) & 1);
		dpmu_uarch_retire(f->u, 0, &in, 1);
	}
	dpmu_uarch_flush(f->u);
	double rate = (double)f->core[0][BR_MIS_PRED] / n;
	print_message("random branches: %.3f mispredicted\n", rate);
	assert_true(rate > 0.40 && rate < 0.60);
	assert_int_equal(f->core[0][BR_PRED], n);
	assert_int_equal(f->core[0][BR_RETIRED], n);
	assert_int_equal(f->core[0][BR_MIS_PRED_RETIRED], f->core[0][BR_MIS_PRED]);
	fx_free(f);
}

/* Calls and returns: the return stack predicts every return of nested
 * calls within its depth; the branch events count each kind. */
static void return_stack_predicts_returns(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	const unsigned depth = 8, reps = 50; /* the A75's stack holds 16 */
	for (unsigned r = 0; r < reps; r++) {
		for (unsigned d = 0; d < depth; d++) {
			struct dpmu_insn in = br(0x10000 + d * 0x100, 0x10000 + (d + 1) * 0x100,
						 DPMU_BR_CALL, true);
			dpmu_uarch_retire(f->u, 0, &in, 1);
		}
		for (unsigned d = depth; d-- > 0;) {
			struct dpmu_insn in = br(0x10000 + (d + 1) * 0x100 + 0x40,
						 0x10000 + d * 0x100 + 4, DPMU_BR_RET, true);
			dpmu_uarch_retire(f->u, 0, &in, 1);
		}
	}
	dpmu_uarch_flush(f->u);
	assert_int_equal(f->core[0][BR_MIS_PRED], 0);
	assert_int_equal(f->core[0][BR_RETURN_RETIRED], depth * reps);
	assert_int_equal(f->core[0][BR_IMMED_RETIRED], depth * reps); /* the BLs */
	assert_int_equal(f->core[0][PC_WRITE_RETIRED], 2 * depth * reps);
	fx_free(f);
}

/* A return stack of three entries (not a power of two) wraps: after five
 * nested calls it holds the innermost three, so the first three returns
 * are predicted and the last two, with the stack empty, are not. */
static void three_entry_return_stack_keeps_the_innermost_calls(void **state)
{
	(void)state;
	struct fx *f = fx_load(DPMU_PROFILE_DEFAULT);
	f->p->core_types[0].bp.ras_entries = 3;
	fx_start(f);
	const unsigned depth = 5;
	for (unsigned r = 0; r < 2; r++) {
		for (unsigned d = 0; d < depth; d++) {
			struct dpmu_insn in = br(0x20000 + d * 0x100, 0x20000 + (d + 1) * 0x100,
						 DPMU_BR_CALL, true);
			dpmu_uarch_retire(f->u, 0, &in, 1);
		}
		dpmu_uarch_flush(f->u);
		uint64_t before = f->core[0][BR_MIS_PRED];
		for (unsigned d = depth; d-- > 0;) {
			struct dpmu_insn in = br(0x20000 + (d + 1) * 0x100 + 0x40,
						 0x20000 + d * 0x100 + 4, DPMU_BR_RET, true);
			dpmu_uarch_retire(f->u, 0, &in, 1);
			dpmu_uarch_flush(f->u);
			bool predicted = d >= depth - 3;
			assert_int_equal(f->core[0][BR_MIS_PRED] - before, predicted ? 0 : 1);
			before = f->core[0][BR_MIS_PRED];
		}
	}
	fx_free(f);
}

/* A return to somewhere else than after its call is mispredicted. */
static void wrong_return_address_mispredicts(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct dpmu_insn call = br(0x4000, 0x5000, DPMU_BR_CALL, true);
	struct dpmu_insn ret = br(0x5040, 0x9999000, DPMU_BR_RET, true);
	dpmu_uarch_retire(f->u, 0, &call, 1);
	dpmu_uarch_retire(f->u, 0, &ret, 1);
	dpmu_uarch_flush(f->u);
	assert_int_equal(f->core[0][BR_MIS_PRED], 1);
	fx_free(f);
}

/* A misprediction costs the profile's penalty in front-end stall cycles. */
static void mispredict_penalty_is_frontend_stall(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct dpmu_insn in = br(0x6000, 0x6100, DPMU_BR_COND, true); /* cold: predicted not taken */
	dpmu_uarch_retire(f->u, 0, &in, 1);
	dpmu_uarch_flush(f->u);
	assert_int_equal(f->core[0][BR_MIS_PRED], 1);
	uint64_t fe = f->core[0][STALL_FRONTEND];
	uint32_t pen = f->p->core_types[0].pipeline.mispredict_penalty;
	assert_true(fe >= pen);
	assert_true(fe <= f->core[0][CPU_CYCLES]);
	fx_free(f);
}

/* Register-indirect branches: the BTB learns a stable target. */
static void indirect_branch_with_stable_target_is_learnt(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	for (unsigned i = 0; i < 100; i++) {
		struct dpmu_insn in = br(0x7000, 0x7800, DPMU_BR_IND, true);
		dpmu_uarch_retire(f->u, 0, &in, 1);
	}
	dpmu_uarch_flush(f->u);
	assert_int_equal(f->core[0][BR_MIS_PRED], 1);
	assert_int_equal(f->core[0][BR_IMMED_RETIRED], 0);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loop_branch_mispredicts_only_at_exit),
		cmocka_unit_test(gshare_learns_exit_of_loop_shorter_than_history),
		cmocka_unit_test(random_branches_mispredict_about_half),
		cmocka_unit_test(return_stack_predicts_returns),
		cmocka_unit_test(three_entry_return_stack_keeps_the_innermost_calls),
		cmocka_unit_test(wrong_return_address_mispredicts),
		cmocka_unit_test(mispredict_penalty_is_frontend_stall),
		cmocka_unit_test(indirect_branch_with_stable_target_is_learnt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
