/*
 * A monitoring session: groups of events scheduled onto the counters of
 * every measured core PMU, AMU and cluster PMU, programmed, read, rotated
 * and snapshotted through the driver only (DESIGN.md "Data flow": the
 * monitor touches counters only through the driver).
 *
 * Multiplexing (seed 003 section 4.2, perf's rotation): when a PMU's
 * groups need more event counters than it has, each turn puts on as many
 * whole groups as fit, starting with the first group the previous turn
 * left off, so every group gets the same share of turns. Every event
 * keeps perf's two clocks: enabled (the whole session) and running (the
 * turns it was on a counter); the estimate is value x enabled / running.
 *
 * Widening: a 32-bit counter is read at every tick, with its overflow
 * flag, and its overflow interrupt is enabled so that the backend calls
 * the monitor when it wraps; a CHAIN pair (--long) is read as 64 bits.
 */
#include <stdlib.h>
#include <string.h>

#include "dynpmu/backend.h"
#include "dynpmu/ext32.h"
#include "dynpmu/monitor.h"

#include "monitor/mon_internal.h"

/* ---- counter access, core or cluster ------------------------------------- */

static bool is_cluster(const struct dpmu_mon_pmu *pmu)
{
	return pmu->target == DPMU_MON_CLUSTER;
}

static int hw_read(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, unsigned c,
		   uint64_t *v, struct dpmu_err *err)
{
	if (pmu->target == DPMU_MON_AMU)
		return dpmu_drv_amu_read(s->drv, pmu->cpu, c >= AMU_G1, c >= AMU_G1 ? c - AMU_G1 : c,
					 v, err);
	if (pmu->wide >> c & 1)
		return is_cluster(pmu) ? dpmu_drv_cluster_read_pair(s->drv, pmu->cpu, c, v, err)
				       : dpmu_drv_pmu_read_pair(s->drv, pmu->cpu, c, v, err);
	return is_cluster(pmu) ? dpmu_drv_cluster_read(s->drv, pmu->cpu, c, v, err)
			       : dpmu_drv_pmu_read(s->drv, pmu->cpu, c, v, err);
}

static int hw_overflow(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, uint32_t *m,
		       struct dpmu_err *err)
{
	return is_cluster(pmu) ? dpmu_drv_cluster_overflow(s->drv, pmu->cpu, m, err)
			       : dpmu_drv_pmu_overflow(s->drv, pmu->cpu, m, err);
}

static int hw_overflow_clear(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, uint32_t m,
			     struct dpmu_err *err)
{
	return is_cluster(pmu) ? dpmu_drv_cluster_overflow_clear(s->drv, pmu->cpu, m, err)
			       : dpmu_drv_pmu_overflow_clear(s->drv, pmu->cpu, m, err);
}

static int hw_stop(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, uint32_t m,
		   struct dpmu_err *err)
{
	return is_cluster(pmu) ? dpmu_drv_cluster_stop(s->drv, pmu->cpu, m, err)
			       : dpmu_drv_pmu_stop(s->drv, pmu->cpu, m, err);
}

static int hw_start(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, uint32_t m,
		    struct dpmu_err *err)
{
	return is_cluster(pmu) ? dpmu_drv_cluster_start(s->drv, pmu->cpu, m, err)
			       : dpmu_drv_pmu_start(s->drv, pmu->cpu, m, err);
}

static int hw_irq(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, uint32_t m, bool on,
		  struct dpmu_err *err)
{
	return is_cluster(pmu) ? dpmu_drv_cluster_irq_enable(s->drv, pmu->cpu, m, on, err)
			       : dpmu_drv_pmu_irq_enable(s->drv, pmu->cpu, m, on, err);
}

static int hw_write(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, unsigned c, uint64_t v,
		    struct dpmu_err *err)
{
	return is_cluster(pmu) ? dpmu_drv_cluster_write(s->drv, pmu->cpu, c, v, err)
			       : dpmu_drv_pmu_write(s->drv, pmu->cpu, c, v, err);
}

/* Program event i on counter c (a pair c, c+1 when chained). */
static int hw_program(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, unsigned i,
		      unsigned c, struct dpmu_err *err)
{
	uint16_t code = pmu->code[i];
	unsigned els = s->ev.ev[i].els;
	if (pmu->need[i] == 2)
		return is_cluster(pmu) ? dpmu_drv_cluster_chain(s->drv, pmu->cpu, c, code, err)
				       : dpmu_drv_pmu_chain(s->drv, pmu->cpu, c, code, els, err);
	return is_cluster(pmu) ? dpmu_drv_cluster_program(s->drv, pmu->cpu, c, code, err)
			       : dpmu_drv_pmu_program(s->drv, pmu->cpu, c, code, els, err);
}

/* ---- scheduling --------------------------------------------------------- */

/* CPU_CYCLES on a core PMU and CYCLES (same number, 0x11) on the DSU go on
 * the dedicated cycle counter (PMCCNTR_EL0, CLUSTERPMCCNTR_EL1): it leaves
 * the event counters free and is 64 bits wide. */
static bool is_cycles(int32_t code)
{
	return code == DPMU_EV_CPU_CYCLES;
}

/* An event's group: its {...}, or a group of its own. */
static unsigned group_of(const struct dpmu_mon_session *s, unsigned i)
{
	return s->ev.ev[i].grouped ? s->ev.ev[i].group : DPMU_MON_MAX_EVENTS + i;
}

/* The groups that take part in a PMU's rotation, in list order: those with
 * at least one counted event that needs an event counter. */
static unsigned rotation_groups(const struct dpmu_mon_session *s, const struct dpmu_mon_pmu *pmu,
				unsigned *groups, unsigned *need)
{
	unsigned n = 0;
	for (unsigned i = 0; i < s->ev.n; i++) {
		if (!pmu->counted[i] || pmu->need[i] == 0)
			continue;
		unsigned g = group_of(s, i), k;
		for (k = 0; k < n && groups[k] != g; k++)
			;
		if (k == n) {
			groups[n] = g;
			need[n] = 0;
			n++;
		}
		need[k] += pmu->need[i];
	}
	return n;
}

/* Which counters the events of group g take in this turn, given `used`. */
static bool place_group(const struct dpmu_mon_session *s, const struct dpmu_mon_pmu *pmu,
			unsigned g, uint32_t *used, uint8_t *counter)
{
	uint32_t u = *used;
	uint8_t tmp[DPMU_MON_MAX_EVENTS];
	memcpy(tmp, counter, sizeof tmp);
	for (unsigned i = 0; i < s->ev.n; i++) {
		if (!pmu->counted[i] || group_of(s, i) != g || pmu->need[i] == 0)
			continue;
		unsigned step = pmu->need[i], c;
		/* a CHAIN pair is an even counter and the odd one after it */
		for (c = 0; c + step <= pmu->nslots; c += step)
			if (!(u >> c & ((1u << step) - 1)))
				break;
		if (c + step > pmu->nslots)
			return false;
		u |= ((1u << step) - 1) << c;
		tmp[i] = (uint8_t)c;
	}
	*used = u;
	memcpy(counter, tmp, sizeof tmp);
	return true;
}

/* The assignment of one turn, from pmu->head; returns the next head. */
static unsigned plan_turn(const struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu,
			  uint8_t *counter)
{
	unsigned groups[DPMU_MON_MAX_EVENTS], need[DPMU_MON_MAX_EVENTS];
	unsigned n = rotation_groups(s, pmu, groups, need);
	for (unsigned i = 0; i < DPMU_MON_MAX_EVENTS; i++)
		counter[i] = DPMU_MON_UNSCHEDULED;
	/* The cycle counter's owner counts with its group; alone, always. */
	int owner = -1;
	for (unsigned i = 0; i < s->ev.n; i++)
		if (pmu->counted[i] && pmu->need[i] == 0)
			owner = (int)i;
	uint32_t used = 0;
	unsigned k = 0, head = n ? pmu->head % n : 0;
	for (; k < n; k++) {
		if (!place_group(s, pmu, groups[(head + k) % n], &used, counter))
			break;
	}
	if (owner >= 0) {
		unsigned g = group_of(s, (unsigned)owner);
		bool on = true;
		for (unsigned j = 0; j < n; j++) {
			if (groups[j] != g)
				continue;
			/* in the rotation: on when its group was placed */
			unsigned pos = (j + n - head) % n;
			on = pos < k;
		}
		if (on)
			counter[owner] = DPMU_DRV_CYCLE;
	}
	return n ? (head + (k ? k : 1)) % n : 0;
}

static int group_too_big(const struct dpmu_mon_session *s, const struct dpmu_mon_pmu *pmu,
			 unsigned g, unsigned need, const char *pmu_name, struct dpmu_err *err)
{
	char members[256];
	size_t len = 0;
	members[0] = '\0';
	for (unsigned i = 0; i < s->ev.n && len + 2 < sizeof members; i++) {
		if (group_of(s, i) != g)
			continue;
		int w = snprintf(members + len, sizeof members - len, "%s%s", len ? "," : "",
				 s->ev.ev[i].name);
		if (w < 0)
			break;
		len += (size_t)w;
		if (len >= sizeof members)
			len = sizeof members - 1;
	}
	return dpmu_err_set(err, DPMU_EBUSY,
			    "group {%s} needs %u event counters at once, but the %s PMU of %s%u "
			    "has %u%s: a group is always counted together, so split it",
			    members, need, pmu_name, is_cluster(pmu) ? "cluster" : "cpu", pmu->cpu,
			    pmu->nslots, pmu->chain ? " (--long takes a CHAIN pair per event)" : "");
}

struct impl_ctx {
	struct dpmu_drv *drv;
	unsigned unit;
};

/* What PMCEID advertises (the driver's discovery); events outside the
 * PMCEID ranges are taken on the catalog's word. */
static bool core_implements(void *ctx, uint16_t code)
{
	struct impl_ctx *c = ctx;
	return dpmu_drv_cpu_event(c->drv, c->unit, code) != DPMU_DRV_EVENT_NO;
}

static bool cluster_implements(void *ctx, uint16_t code)
{
	struct impl_ctx *c = ctx;
	return dpmu_drv_cluster_event(c->drv, c->unit, code) != DPMU_DRV_EVENT_NO;
}

/* Counted events, their counter needs, and the group-size check. */
static int schedule(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, const int32_t *codes,
		    bool (*implemented)(void *, uint16_t), void *ictx, const char *pmu_name,
		    struct dpmu_err *err)
{
	bool cycle_used = false;
	for (unsigned i = 0; i < s->ev.n; i++) {
		pmu->counter[i] = DPMU_MON_UNSCHEDULED;
		if (s->ev.ev[i].target != pmu->target)
			continue;
		int32_t code = codes[i];
		if (code == DPMU_MON_NO_CODE || !implemented(ictx, (uint16_t)code))
			continue;
		pmu->counted[i] = true;
		pmu->code[i] = (uint16_t)code;
		if (is_cycles(code) && !cycle_used) {
			pmu->need[i] = 0;
			cycle_used = true;
		} else {
			pmu->need[i] = pmu->chain ? 2 : 1;
		}
	}
	unsigned groups[DPMU_MON_MAX_EVENTS], need[DPMU_MON_MAX_EVENTS];
	unsigned n = rotation_groups(s, pmu, groups, need), total = 0;
	for (unsigned k = 0; k < n; k++) {
		if (need[k] > pmu->nslots)
			return group_too_big(s, pmu, groups[k], need[k], pmu_name, err);
		total += need[k];
	}
	pmu->rotates = total > pmu->nslots;
	if (pmu->rotates)
		s->rotating = true;
	pmu->head = plan_turn(s, pmu, pmu->counter);
	return 0;
}

/* AMU: group-0 events sit on the fixed counter AMEVTYPER0<n> names; the
 * others take the group-1 counters in list order (the backend selects them
 * as EL3 firmware would). */
static int schedule_amu(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, unsigned ti,
			const struct dpmu_drv_cpuinfo *ci, const char *type_name,
			struct dpmu_err *err)
{
	uint16_t g0[DPMU_AMU_GROUP0_MAX + 12];
	unsigned n0 = ci->amu_cg0nc < sizeof g0 / sizeof g0[0] ? ci->amu_cg0nc : 0;
	for (unsigned k = 0; k < n0; k++) {
		int rc = dpmu_drv_amu_type(s->drv, pmu->cpu, 0, k, &g0[k], err);
		if (rc)
			return rc;
	}
	unsigned n1 = 0, want1 = 0;
	for (unsigned i = 0; i < s->ev.n; i++) {
		pmu->counter[i] = DPMU_MON_UNSCHEDULED;
		if (s->ev.ev[i].target != DPMU_MON_AMU || s->ev.ev[i].code[ti] == DPMU_MON_NO_CODE)
			continue;
		uint16_t code = (uint16_t)s->ev.ev[i].code[ti];
		unsigned c = DPMU_MON_UNSCHEDULED;
		for (unsigned k = 0; k < n0; k++)
			if (g0[k] == code)
				c = k;
		for (unsigned j = 0; c == DPMU_MON_UNSCHEDULED && j < s->ev.n; j++)
			if (j < i && pmu->counted[j] && pmu->code[j] == code)
				c = pmu->counter[j]; /* asked for twice: one counter */
		if (c == DPMU_MON_UNSCHEDULED) {
			want1++;
			if (n1 < ci->amu_cg1nc)
				c = AMU_G1 + n1++;
		}
		if (c == DPMU_MON_UNSCHEDULED)
			continue;
		pmu->counted[i] = true;
		pmu->code[i] = code;
		pmu->counter[i] = (uint8_t)c;
		pmu->mask |= 1u << c;
	}
	if (want1 > ci->amu_cg1nc)
		return dpmu_err_set(err, DPMU_EBUSY,
				    "too many AMU events for cpu%u: %u need group-1 counters, the "
				    "%s AMU has %u (AMCGCR_EL0.CG1NC), and AMU counters are not "
				    "multiplexed",
				    pmu->cpu, want1, type_name, ci->amu_cg1nc);
	return 0;
}

int dpmu_mon_session_create_opts(struct dpmu_drv *drv, const struct dpmu_profile *p,
				 const struct dpmu_mon_events *ev, uint64_t cores,
				 const struct dpmu_mon_options *opt,
				 struct dpmu_mon_session **out, struct dpmu_err *err)
{
	*out = NULL;
	if (!drv || !p || !ev)
		return dpmu_err_set(err, DPMU_EINVAL, "monitor session: no driver, profile or events");
	for (unsigned i = 0; i < ev->n; i++)
		if (ev->ev[i].target == DPMU_MON_SOFTWARE)
			return dpmu_err_set(err, DPMU_ENOTSUP,
					    "%s is a Linux software event: it is counted by the "
					    "kernel, with --backend perf, not by a PMU the "
					    "simulation models",
					    ev->ev[i].name);
	struct dpmu_mon_session *s = calloc(1, sizeof *s);
	if (!s)
		return dpmu_err_set(err, DPMU_ENOMEM, "monitor session: out of memory");
	s->drv = drv;
	s->p = p;
	s->ev = *ev;
	if (opt)
		s->opt = *opt;
	if (!s->opt.mux_ns)
		s->opt.mux_ns = DPMU_MON_MUX_DEFAULT_NS;
	int rc = 0;
	unsigned ncores = dpmu_drv_ncpus(drv);
	int32_t codes[DPMU_MON_MAX_EVENTS];
	for (unsigned core = 0; !rc && core < ncores && core < DPMU_MAX_CORES; core++) {
		if (!(cores >> core & 1))
			continue;
		const struct dpmu_drv_cpuinfo *ci = dpmu_drv_cpuinfo(drv, core);
		unsigned cl, idx;
		const struct dpmu_core_type *t = dpmu_profile_core(p, core, &cl, &idx);
		if (!ci || !t) {
			rc = dpmu_err_set(err, DPMU_EINVAL, "monitor session: no cpu%u", core);
			break;
		}
		unsigned ti = (unsigned)(t - p->core_types);
		struct dpmu_mon_pmu *pmu = &s->core[core];
		pmu->used = true;
		pmu->target = DPMU_MON_CORE;
		pmu->cpu = core;
		pmu->nslots = ci->pmu_n < DPMU_DRV_MAX_COUNTERS ? ci->pmu_n : DPMU_DRV_MAX_COUNTERS;
		pmu->width = t->pmuv3p5 ? 64 : 32;
		/* a sampled event overflows its own counter: no CHAIN */
		pmu->chain = s->opt.long_counters && pmu->width == 32 && !s->opt.on_sample;
		for (unsigned i = 0; i < ev->n; i++)
			codes[i] = ev->ev[i].code[ti];
		struct impl_ctx ic = {drv, core};
		rc = schedule(s, pmu, codes, core_implements, &ic, t->name, err);
		struct dpmu_mon_pmu *am = &s->amu[core];
		am->used = true;
		am->target = DPMU_MON_AMU;
		am->cpu = core;
		am->width = 64;
		for (unsigned i = 0; i < ev->n; i++)
			am->counter[i] = DPMU_MON_UNSCHEDULED;
		if (!rc && ci->amu)
			rc = schedule_amu(s, am, ti, ci, t->name, err);
		if (am->mask)
			s->has_amu = true;
		s->cores |= UINT64_C(1) << core;
		s->clusters |= UINT64_C(1) << cl;
	}
	for (unsigned cl = 0; !rc && cl < dpmu_drv_nclusters(drv) && cl < DPMU_MAX_CLUSTERS; cl++) {
		if (!(s->clusters >> cl & 1))
			continue;
		const struct dpmu_drv_clusterinfo *ci = dpmu_drv_clusterinfo(drv, cl);
		struct dpmu_mon_pmu *pmu = &s->cluster[cl];
		pmu->used = true;
		pmu->target = DPMU_MON_CLUSTER;
		pmu->cpu = cl;
		pmu->nslots = ci ? ci->pmu_n : 0;
		if (pmu->nslots > DPMU_DRV_MAX_COUNTERS)
			pmu->nslots = DPMU_DRV_MAX_COUNTERS;
		pmu->width = cl < p->nclusters && p->clusters[cl].counters64 ? 64 : 32;
		/* The classic DSU has no CHAIN: its counts are widened in
		 * software even with --long (docs/stat.md). */
		pmu->chain = s->opt.long_counters && pmu->width == 32 &&
			     dpmu_drv_cluster_event(drv, cl, DPMU_EV_CHAIN) == DPMU_DRV_EVENT_YES;
		for (unsigned i = 0; i < ev->n; i++)
			codes[i] = ev->ev[i].cluster_code[cl];
		struct impl_ctx ic = {drv, cl};
		rc = schedule(s, pmu, codes, cluster_implements, &ic, "DSU", err);
	}
	if (!rc)
		rc = dpmu_mon_sample_check(s, err);
	if (rc) {
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int dpmu_mon_session_create(struct dpmu_drv *drv, const struct dpmu_profile *p,
			    const struct dpmu_mon_events *ev, uint64_t cores,
			    struct dpmu_mon_session **out, struct dpmu_err *err)
{
	return dpmu_mon_session_create_opts(drv, p, ev, cores, NULL, out, err);
}

void dpmu_mon_session_destroy(struct dpmu_mon_session *s)
{
	free(s);
}

/* ---- reading ------------------------------------------------------------- */

/* Add what counter c counted since the last read to the event it holds.
 * A 32-bit counter whose overflow flag is set and whose value did not go
 * down wrapped once more than the modular difference shows. */
static void credit(struct dpmu_mon_pmu *pmu, unsigned nev, unsigned c, uint64_t now, bool ovf)
{
	unsigned bits = c == DPMU_DRV_CYCLE || pmu->target == DPMU_MON_AMU || (pmu->wide >> c & 1)
				? 64
				: pmu->width;
	uint64_t m = bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
	uint64_t delta = (now - pmu->last[c]) & m;
	if (bits == 32 && ovf && now >= pmu->last[c])
		delta += UINT64_C(1) << 32;
	pmu->last[c] = now;
	for (unsigned i = 0; i < nev; i++)
		if (pmu->counter[i] == c) {
			pmu->total[i] += delta;
			return;
		}
}

/* Running time of the events on counters up to now. */
static void clock_running(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, uint64_t now)
{
	for (unsigned i = 0; i < s->ev.n; i++)
		if (pmu->counter[i] != DPMU_MON_UNSCHEDULED && now > pmu->since)
			pmu->running[i] += now - pmu->since;
	if (now > pmu->since)
		pmu->since = now;
}

/* Counters of the mask, each once (a pair by its even index). */
static bool next_counter(const struct dpmu_mon_pmu *pmu, unsigned *c)
{
	for (unsigned k = *c; k < 32; k++) {
		if (!(pmu->mask >> k & 1))
			continue;
		if (k & 1 && k != DPMU_DRV_CYCLE && (pmu->wide >> (k - 1) & 1))
			continue;
		*c = k;
		return true;
	}
	return false;
}

static int read_pmu(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, uint64_t now,
		    struct dpmu_err *err)
{
	uint32_t ovs = 0;
	int rc = 0;
	if (pmu->target != DPMU_MON_AMU)
		rc = hw_overflow(s, pmu, &ovs, err);
	for (unsigned c = 0; !rc && next_counter(pmu, &c); c++) {
		uint64_t v;
		rc = hw_read(s, pmu, c, &v, err);
		if (!rc)
			credit(pmu, s->ev.n, c, v, ovs >> c & 1);
		/* a sampled counter's overflow is a sample; it is re-armed */
		uint64_t preset;
		if (!rc && s->opt.on_sample && (ovs >> c & 1) && pmu->target == DPMU_MON_CORE) {
			rc = dpmu_mon_sample_overflow(s, pmu, c, v, now, &preset, err);
			if (!rc)
				rc = hw_write(s, pmu, c, preset, err);
			pmu->last[c] = preset;
		}
	}
	if (!rc && (ovs & pmu->mask))
		rc = hw_overflow_clear(s, pmu, ovs & pmu->mask, err);
	if (!rc)
		clock_running(s, pmu, now);
	return rc;
}

/* ---- programming a turn --------------------------------------------------- */

/* Put the assignment `counter` on the PMU: stop its event counters, program
 * the new events from zero, enable them with their overflow interrupts
 * (32-bit counters only: a pair does not wrap). */
static int apply_turn(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, const uint8_t *counter,
		      struct dpmu_err *err)
{
	uint32_t ev_mask = pmu->mask & ~DPMU_DRV_CYCLE_BIT;
	int rc = 0;
	if (ev_mask) {
		rc = hw_stop(s, pmu, ev_mask, err);
		if (!rc)
			rc = hw_irq(s, pmu, ev_mask, false, err);
	}
	uint32_t mask = 0, wide = 0, irq = 0;
	bool cycles = false;
	for (unsigned i = 0; i < s->ev.n; i++) {
		if (pmu->counted[i] && pmu->need[i] == 0)
			cycles = true;
		if (counter[i] == DPMU_MON_UNSCHEDULED || counter[i] == DPMU_DRV_CYCLE)
			continue;
		unsigned c = counter[i];
		mask |= 1u << c;
		if (pmu->need[i] == 2) {
			mask |= 1u << (c + 1);
			wide |= 1u << c;
		} else if (pmu->width == 32) {
			irq |= 1u << c;
		}
	}
	memcpy(pmu->counter, counter, sizeof pmu->counter);
	pmu->wide = wide;
	for (unsigned i = 0; !rc && i < s->ev.n; i++) {
		unsigned c = counter[i];
		if (c == DPMU_MON_UNSCHEDULED || c == DPMU_DRV_CYCLE)
			continue;
		rc = hw_program(s, pmu, i, c, err);
		uint64_t preset = 0;
		if (dpmu_mon_sample_arm(s, pmu, i, c, pmu->since, &preset))
			irq |= 1u << c; /* every sampled counter interrupts */
		for (unsigned k = 0; !rc && k < pmu->need[i]; k++)
			rc = hw_write(s, pmu, c + k, k ? 0 : preset, err);
		pmu->last[c] = preset;
	}
	if (!rc && mask)
		rc = hw_overflow_clear(s, pmu, mask, err);
	if (cycles) {
		mask |= DPMU_DRV_CYCLE_BIT;
		/* a sampled CPU_CYCLES: on the cycle counter, 64-bit (PMCR.LC) */
		for (unsigned i = 0; !rc && i < s->ev.n; i++) {
			uint64_t preset;
			if (!pmu->counted[i] || pmu->need[i] != 0 ||
			    !dpmu_mon_sample_arm(s, pmu, i, DPMU_DRV_CYCLE, pmu->since, &preset))
				continue;
			rc = hw_write(s, pmu, DPMU_DRV_CYCLE, preset, err);
			if (!rc)
				rc = hw_overflow_clear(s, pmu, DPMU_DRV_CYCLE_BIT, err);
			pmu->last[DPMU_DRV_CYCLE] = preset;
			irq |= DPMU_DRV_CYCLE_BIT;
		}
	}
	pmu->mask = mask;
	if (!rc && irq)
		rc = hw_irq(s, pmu, irq, true, err);
	if (!rc && mask)
		rc = hw_start(s, pmu, mask, err);
	return rc;
}

static int rotate(struct dpmu_mon_session *s, uint64_t now, struct dpmu_err *err)
{
	for (unsigned k = 0; k < NPMUS; k++) {
		struct dpmu_mon_pmu *pmu = pmu_at(s, k);
		if (!pmu->used || !pmu->rotates)
			continue;
		uint8_t counter[DPMU_MON_MAX_EVENTS];
		pmu->head = plan_turn(s, pmu, counter);
		int rc = apply_turn(s, pmu, counter, err);
		if (rc)
			return rc;
		pmu->since = now;
		pmu->rotations++;
	}
	return 0;
}

/* ---- start / poll / stop ----------------------------------------------------- */

static struct dpmu_drv_frame frame_of(const struct dpmu_mon_pmu *pmu)
{
	return is_cluster(pmu) ? DPMU_DRV_CLUSTER_FRAME(pmu->cpu) : DPMU_DRV_CORE_FRAME(pmu->cpu);
}

static int start_pmu(struct dpmu_mon_session *s, struct dpmu_mon_pmu *pmu, struct dpmu_err *err)
{
	int rc;
	if (pmu->target == DPMU_MON_AMU) {
		/* The AMU counts on its own (64-bit, no reset from EL1): the
		 * start values are the baseline. */
		rc = 0;
		for (unsigned c = 0; !rc && next_counter(pmu, &c); c++)
			rc = hw_read(s, pmu, c, &pmu->last[c], err);
		return rc;
	}
	unsigned cpu = pmu->cpu;
	if (is_cluster(pmu)) {
		rc = dpmu_drv_cluster_reset(s->drv, cpu, err);
	} else {
		/* LC: the cycle counter overflows at 64 bits, so a widened read
		 * of it never needs a wrap correction (reference section 1,
		 * PMCR.LC); LP likewise for PMUv3p5 event counters. */
		uint32_t extra = DPMU_DRV_PMCR_LC | (pmu->width == 64 ? DPMU_DRV_PMCR_LP : 0);
		rc = dpmu_drv_pmu_reset(s->drv, cpu, extra, err);
		for (unsigned i = 0; !rc && i < s->ev.n; i++)
			if (pmu->counted[i] && pmu->need[i] == 0)
				rc = dpmu_drv_pmu_program_cycles(s->drv, cpu, s->ev.ev[i].els, err);
	}
	uint8_t counter[DPMU_MON_MAX_EVENTS];
	memcpy(counter, pmu->counter, sizeof counter);
	pmu->mask = 0;
	if (!rc)
		rc = apply_turn(s, pmu, counter, err);
	if (!rc && (pmu->mask & DPMU_DRV_CYCLE_BIT))
		rc = hw_read(s, pmu, DPMU_DRV_CYCLE, &pmu->last[DPMU_DRV_CYCLE], err);
	if (!rc && s->opt.interval_ns) {
		/* Seed 001 section 4.1 step 2: PMSSRR resets every counter after
		 * each capture, so each snapshot is one interval's delta. */
		uint32_t all = (pmu->nslots >= 31 ? 0x7fffffffu : (1u << pmu->nslots) - 1) |
			       DPMU_DRV_CYCLE_BIT;
		rc = dpmu_drv_frame_unlock(s->drv, frame_of(pmu), true, err);
		if (!rc)
			rc = dpmu_drv_snapshot_reset_mask(s->drv, frame_of(pmu), all, err);
		/* Bits of counters a frame cannot reset read as zero (RAZ/WI). */
		if (!rc)
			rc = dpmu_drv_extread(s->drv, frame_of(pmu), DPMU_EXT_PMSSRR, &pmu->ssrr, err);
	}
	if (!rc)
		rc = is_cluster(pmu) ? dpmu_drv_cluster_enable(s->drv, cpu, true, err)
				     : dpmu_drv_pmu_enable(s->drv, cpu, true, err);
	return rc;
}

int dpmu_mon_start(struct dpmu_mon_session *s, uint64_t now_ns, struct dpmu_err *err)
{
	if (s->started)
		return dpmu_err_set(err, DPMU_ESTATE, "monitor session already started");
	for (unsigned k = 0; !s->counting && k < NPMUS; k++) {
		struct dpmu_mon_pmu *pmu = pmu_at(s, k);
		if (!pmu->used)
			continue;
		pmu->since = now_ns;
		int rc = start_pmu(s, pmu, err);
		if (rc)
			return rc;
	}
	if (s->counting) {
		int rc = s->counting->enable(s->counting->ctx, true, err);
		if (rc)
			return rc;
	}
	s->started = true;
	s->t_start = s->t_stop = s->interval_start = now_ns;
	s->next_rotate = now_ns + s->opt.mux_ns;
	s->next_interval = now_ns + s->opt.interval_ns;
	return 0;
}

/* Seed 001 section 4.1 step 3: trigger every frame's capture first (the
 * seed's synchronised multi-core capture), then collect each; the values
 * are the interval's counts and the counters restart from zero. */
static int snapshot_all(struct dpmu_mon_session *s, uint64_t now, struct dpmu_err *err)
{
	uint32_t ovs[NPMUS] = {0};
	for (unsigned k = 0; k < NPMUS; k++) {
		struct dpmu_mon_pmu *pmu = pmu_at(s, k);
		if (!pmu->used || pmu->target == DPMU_MON_AMU)
			continue;
		int rc = hw_overflow(s, pmu, &ovs[k], err);
		if (!rc)
			rc = dpmu_drv_snapshot_trigger(s->drv, frame_of(pmu), err);
		if (rc)
			return rc;
	}
	for (unsigned k = 0; k < NPMUS; k++) {
		struct dpmu_mon_pmu *pmu = pmu_at(s, k);
		if (!pmu->used)
			continue;
		if (pmu->target == DPMU_MON_AMU) {
			int rc = read_pmu(s, pmu, now, err);
			if (rc)
				return rc;
			continue;
		}
		struct dpmu_drv_snapshot snap;
		int rc = dpmu_drv_snapshot_collect_mask(s->drv, frame_of(pmu), pmu->mask, &snap, err);
		if (rc)
			return rc;
		for (unsigned c = 0; next_counter(pmu, &c); c++) {
			uint64_t v;
			if (c == DPMU_DRV_CYCLE)
				v = snap.cc;
			else if (pmu->wide >> c & 1)
				v = (snap.ev[c] & 0xffffffffu) | (snap.ev[c + 1] << 32);
			else
				v = snap.ev[c];
			credit(pmu, s->ev.n, c, v, ovs[k] >> c & 1);
		}
		/* PMSSRR: the counters it names restarted from zero. */
		for (unsigned c = 0; c < 32; c++)
			if (pmu->ssrr >> c & 1)
				pmu->last[c] = 0;
		if (ovs[k] & pmu->mask) {
			rc = hw_overflow_clear(s, pmu, ovs[k] & pmu->mask, err);
			if (rc)
				return rc;
		}
		clock_running(s, pmu, now);
	}
	return 0;
}

static int end_interval(struct dpmu_mon_session *s, uint64_t now, struct dpmu_err *err)
{
	int rc = 0;
	s->intervals++;
	if (s->opt.on_interval) {
		s->in_interval = true;
		s->interval_len = now - s->interval_start;
		rc = s->opt.on_interval(s->opt.ctx, s, s->interval_start, now, err);
		s->in_interval = false;
	}
	for (unsigned k = 0; k < NPMUS; k++) {
		struct dpmu_mon_pmu *pmu = pmu_at(s, k);
		if (!pmu->used)
			continue; /* its counts stay 0 */
		memcpy(pmu->mark_total, pmu->total, sizeof pmu->total);
		memcpy(pmu->mark_running, pmu->running, sizeof pmu->running);
		memcpy(pmu->mark_enabled, pmu->enabled, sizeof pmu->enabled);
	}
	s->interval_start = now;
	return rc;
}

static int read_all(struct dpmu_mon_session *s, uint64_t now, struct dpmu_err *err)
{
	for (unsigned k = 0; k < NPMUS; k++) {
		struct dpmu_mon_pmu *pmu = pmu_at(s, k);
		if (!pmu->used)
			continue;
		int rc = read_pmu(s, pmu, now, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Whether any counter counted since the last interval ended. */
static bool counted_since_mark(struct dpmu_mon_session *s)
{
	for (unsigned k = 0; k < NPMUS; k++) {
		const struct dpmu_mon_pmu *pmu = pmu_at(s, k);
		if (pmu->used && memcmp(pmu->total, pmu->mark_total, sizeof pmu->total) != 0)
			return true;
	}
	return false;
}

static int poll_at(struct dpmu_mon_session *s, uint64_t now, bool last, struct dpmu_err *err)
{
	if (!s->started || s->stopped)
		return dpmu_err_set(err, DPMU_ESTATE, "monitor session is not running");
	if (now < s->t_stop)
		now = s->t_stop; /* time does not go back */
	/* The stop always reads through the snapshot sequence in interval
	 * mode: counts delivered after an interval that ended at this very
	 * time (a core behind the others in simulated time, its last batch
	 * flushed at the stop) still belong to an interval, so the intervals
	 * add up to the run's totals. */
	bool interval_due = s->opt.interval_ns && (now >= s->next_interval || last);
	/* The kernel's counters have no snapshot: a read at the boundary is
	 * the interval's end (perf stat -I reads the same way). */
	int rc = s->counting     ? dpmu_mon_counting_read(s, now, err)
		 : interval_due ? snapshot_all(s, now, err)
				: read_all(s, now, err);
	if (rc)
		return rc;
	s->t_stop = now;
	if (interval_due && last && now == s->interval_start && !counted_since_mark(s))
		interval_due = false; /* nothing since the last interval ended */
	if (interval_due) {
		rc = end_interval(s, now, err);
		if (rc)
			return rc;
		while (s->next_interval <= now)
			s->next_interval += s->opt.interval_ns;
	}
	if (s->rotating && !last && now >= s->next_rotate) {
		rc = rotate(s, now, err);
		while (s->next_rotate <= now)
			s->next_rotate += s->opt.mux_ns;
	}
	return rc;
}

int dpmu_mon_poll(struct dpmu_mon_session *s, uint64_t now_ns, struct dpmu_err *err)
{
	return poll_at(s, now_ns, false, err);
}

int dpmu_mon_stop(struct dpmu_mon_session *s, uint64_t now_ns, struct dpmu_err *err)
{
	int rc = poll_at(s, now_ns, true, err);
	if (rc)
		return rc;
	if (s->counting) {
		s->stopped = true;
		return s->counting->enable(s->counting->ctx, false, err);
	}
	for (unsigned k = 0; k < NPMUS && !rc; k++) {
		struct dpmu_mon_pmu *pmu = pmu_at(s, k);
		if (!pmu->used || pmu->target == DPMU_MON_AMU)
			continue;
		rc = is_cluster(pmu) ? dpmu_drv_cluster_enable(s->drv, pmu->cpu, false, err)
				     : dpmu_drv_pmu_enable(s->drv, pmu->cpu, false, err);
		if (!rc && s->opt.interval_ns)
			rc = dpmu_drv_frame_unlock(s->drv, frame_of(pmu), false, err);
	}
	s->stopped = true;
	return rc;
}

static int run_tick(void *ctx, uint64_t now_ns, struct dpmu_err *err)
{
	return dpmu_mon_poll(ctx, now_ns, err);
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

int dpmu_mon_run(struct dpmu_mon_session *s, struct dpmu_backend *b, struct dpmu_err *err)
{
	if (s->has_amu) {
		if (!b->ops->amu_setup)
			return dpmu_err_set(err, DPMU_ENOTSUP,
					    "the %s backend cannot set up the Activity Monitors "
					    "(amu/ events)",
					    b->ops->name);
		for (unsigned c = 0; c < DPMU_MAX_CORES; c++) {
			const struct dpmu_mon_pmu *am = &s->amu[c];
			if (!am->used || !am->mask)
				continue;
			uint16_t sel[16];
			unsigned n = 0;
			for (unsigned g = AMU_G1; g < 32; g++)
				for (unsigned i = 0; i < s->ev.n; i++)
					if (am->counted[i] && am->counter[i] == g) {
						sel[n++] = am->code[i];
						break;
					}
			int rc = b->ops->amu_setup(b, c, sel, n, err);
			if (rc)
				return rc;
		}
	}
	int rc = dpmu_mon_start(s, b->ops->time_ns(b), err);
	if (rc)
		return rc;
	uint64_t period = s->opt.interval_ns;
	if (s->rotating)
		period = period ? gcd(period, s->opt.mux_ns) : s->opt.mux_ns;
	if (b->ops->run_timed)
		rc = b->ops->run_timed(b, DPMU_MON_POLL_INSNS, period, run_tick, s, err);
	else
		rc = b->ops->run(b, DPMU_MON_POLL_INSNS, run_tick, s, err);
	if (rc)
		return rc;
	return dpmu_mon_stop(s, b->ops->time_ns(b), err);
}
