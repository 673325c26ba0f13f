/*
 * Sampling on overflow (dynpmu record). Seed 003 section 2: a counter
 * preset to overflow after N events raises the PMU interrupt, whose
 * handler records where the core was and re-arms the counter. Each
 * sampled event has its counter, preset to 2^bits - period with its
 * overflow interrupt enabled (PMINTENSET); at the interrupt the monitor
 * reads it as at any tick (so the counts stay exact), hands the sample to
 * on_sample, and writes the next preset.
 *
 * A sample's weight is the events counted since the previous sample of
 * that counter, not the period asked for: the events an instruction adds
 * past the overflow (the counter reads them after the wrap) belong to the
 * next period, so the weights of all samples add up to the count.
 *
 * -F (sample_freq): the period adapts, as perf's frequency mode does, to
 * the rate measured between the last two samples; a cycles event starts
 * at the core's clock / F, any other event at 1.
 */
#include "monitor/mon_internal.h"

#define PERIOD_MAX ((UINT64_C(1) << 31) - 1) /* below a 32-bit counter's range */

static bool is_sampled_core(const struct dpmu_mon_session *s, const struct dpmu_mon_pmu *pmu)
{
	return s->opt.on_sample && pmu->target == DPMU_MON_CORE;
}

int dpmu_mon_sample_check(const struct dpmu_mon_session *s, struct dpmu_err *err)
{
	if (!s->opt.on_sample)
		return 0;
	if (s->opt.interval_ns)
		return dpmu_err_set(err, DPMU_EINVAL, "sampling takes no snapshot interval (-I)");
	if (s->opt.sample_period && s->opt.sample_freq)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "sampling takes a period (-c) or a frequency (-F), not both");
	for (unsigned i = 0; i < s->ev.n; i++) {
		const struct dpmu_mon_event *e = &s->ev.ev[i];
		if (e->target != DPMU_MON_CORE)
			return dpmu_err_set(err, DPMU_EINVAL,
					    "event '%s' is on the %s: it cannot be sampled (its "
					    "counter's interrupt names no core; Linux refuses "
					    "to sample it too)",
					    e->name,
					    e->target == DPMU_MON_AMU ? "Activity Monitors"
								      : "DSU cluster PMU");
	}
	for (unsigned c = 0; c < DPMU_MAX_CORES; c++) {
		const struct dpmu_mon_pmu *pmu = &s->core[c];
		if (pmu->used && pmu->rotates)
			return dpmu_err_set(err, DPMU_EBUSY,
					    "sampling %u events on cpu%u needs more than its %u "
					    "event counters: a sampled event keeps its counter "
					    "(no rotation); sample fewer events",
					    s->ev.n, c, pmu->nslots);
	}
	return 0;
}

static unsigned counter_bits(const struct dpmu_mon_pmu *pmu, unsigned c)
{
	return c == DPMU_DRV_CYCLE ? 64 : pmu->width;
}

/* The preset that overflows counter c after `period` more events, of which
 * `done` have counted already (since the wrap). */
static uint64_t preset_for(const struct dpmu_mon_pmu *pmu, unsigned c, uint64_t period,
			   uint64_t done)
{
	unsigned bits = counter_bits(pmu, c);
	uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
	uint64_t left = done < period ? period - done : 1;
	return (0 - left) & mask;
}

static uint64_t target_ns(const struct dpmu_mon_session *s)
{
	uint64_t f = s->opt.sample_freq ? s->opt.sample_freq : DPMU_MON_SAMPLE_FREQ_DEFAULT;
	uint64_t t = 1000000000ull / f;
	return t ? t : 1;
}

bool dpmu_mon_sample_arm(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, unsigned i,
			 unsigned c, uint64_t now, uint64_t *preset)
{
	if (!is_sampled_core(s, pmu))
		return false;
	uint64_t p = s->opt.sample_period;
	if (!p) {
		p = 1;
		unsigned cl, idx;
		const struct dpmu_core_type *t = dpmu_profile_core(s->p, pmu->cpu, &cl, &idx);
		if (pmu->code[i] == DPMU_EV_CPU_CYCLES && t && t->freq_hz)
			p = t->freq_hz / (1000000000ull / target_ns(s));
	}
	if (p < 1)
		p = 1;
	if (p > PERIOD_MAX)
		p = PERIOD_MAX;
	pmu->period[i] = p;
	pmu->sampled_total[i] = pmu->total[i];
	pmu->sampled_ns[i] = now;
	*preset = preset_for(pmu, c, p, 0);
	return true;
}

int dpmu_mon_sample_overflow(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, unsigned c,
			     uint64_t value, uint64_t now, uint64_t *preset, struct dpmu_err *err)
{
	unsigned i = 0;
	while (i < s->ev.n && pmu->counter[i] != c)
		i++;
	if (i == s->ev.n || !is_sampled_core(s, pmu))
		return DPMU_EINVAL;
	/* value: what the counter counted since it wrapped */
	uint64_t upto = pmu->total[i] - value;
	uint64_t weight = upto - pmu->sampled_total[i];
	uint64_t dt = now - pmu->sampled_ns[i];
	pmu->sampled_total[i] = upto;
	pmu->sampled_ns[i] = now;
	pmu->samples[i]++;
	struct dpmu_mon_sample smp = {i, pmu->cpu, weight, now};
	int rc = s->opt.on_sample(s->opt.sample_ctx, &smp, err);
	if (rc)
		return rc;
	uint64_t p = pmu->period[i];
	if (!s->opt.sample_period) {
		/* the rate of the last period, halfway towards its target */
		long double want = dt ? (long double)weight * (long double)target_ns(s) / dt
				      : 2.0L * (long double)p;
		long double next = ((long double)p + want) / 2.0L;
		p = next < 1.0L ? 1 : next > (long double)PERIOD_MAX ? PERIOD_MAX : (uint64_t)next;
	}
	pmu->period[i] = p;
	*preset = preset_for(pmu, c, p, value);
	return 0;
}
