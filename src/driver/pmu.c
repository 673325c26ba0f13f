/*
 * Core PMU and Activity Monitors of one CPU, through its system registers
 * (reference sections 1 and 4).
 */
#include "driver/drv_internal.h"

static int check_counter(struct dpmu_drv *d, unsigned cpu, unsigned i, bool cycle_ok,
			 struct dpmu_err *err)
{
	int rc = dpmu_drv_check_cpu(d, cpu, err);
	return rc ? rc
		  : dpmu_drv_check_index(d->cpus[cpu].pmu_n, i, cycle_ok, "cpu", cpu, "PMCR_EL0", err);
}

static int check_mask(struct dpmu_drv *d, unsigned cpu, uint32_t mask, struct dpmu_err *err)
{
	int rc = dpmu_drv_check_cpu(d, cpu, err);
	return rc ? rc : dpmu_drv_check_mask(d->cpus[cpu].pmu_n, mask, "cpu", cpu, "PMCR_EL0", err);
}

int dpmu_drv_pmu_read_pmcr(struct dpmu_drv *d, unsigned cpu, uint32_t *pmcr, struct dpmu_err *err)
{
	uint64_t v = 0;
	int rc = dpmu_drv_sysread(d, cpu, R_PMCR_EL0, &v, err);
	*pmcr = (uint32_t)v;
	return rc;
}

int dpmu_drv_pmu_write_pmcr(struct dpmu_drv *d, unsigned cpu, uint32_t pmcr, struct dpmu_err *err)
{
	return dpmu_drv_syswrite(d, cpu, R_PMCR_EL0, pmcr, err);
}

int dpmu_drv_pmu_reset(struct dpmu_drv *d, unsigned cpu, uint32_t pmcr_extra, struct dpmu_err *err)
{
	int rc = dpmu_drv_check_cpu(d, cpu, err);
	if (rc)
		return rc;
	const uint64_t all = 0xffffffffu; /* unimplemented bits are RAZ/WI */
	/* Stop first (E = 0), then clear: no counter moves between the steps. */
	if ((rc = dpmu_drv_wr(d, cpu, R_PMCR_EL0,
			      (pmcr_extra & ~DPMU_DRV_PMCR_E) | DPMU_DRV_PMCR_P | DPMU_DRV_PMCR_C, err)) ||
	    (rc = dpmu_drv_wr(d, cpu, R_PMCNTENCLR_EL0, all, err)) ||
	    (rc = dpmu_drv_wr(d, cpu, R_PMINTENCLR_EL1, all, err)) ||
	    (rc = dpmu_drv_wr(d, cpu, R_PMOVSCLR_EL0, all, err)))
		return rc;
	return 0;
}

int dpmu_drv_pmu_enable(struct dpmu_drv *d, unsigned cpu, bool on, struct dpmu_err *err)
{
	uint32_t pmcr;
	int rc = dpmu_drv_pmu_read_pmcr(d, cpu, &pmcr, err);
	if (rc)
		return rc;
	/* P and C read as zero, so writing back resets nothing. */
	pmcr = on ? pmcr | DPMU_DRV_PMCR_E : pmcr & ~DPMU_DRV_PMCR_E;
	return dpmu_drv_wr(d, cpu, R_PMCR_EL0, pmcr & ~(DPMU_DRV_PMCR_P | DPMU_DRV_PMCR_C), err);
}

static int write_type(struct dpmu_drv *d, unsigned cpu, unsigned i, uint32_t type,
		      struct dpmu_err *err)
{
	if (d->access == DPMU_DRV_SELECTED) {
		int rc = dpmu_drv_wr(d, cpu, R_PMSELR_EL0, i, err);
		return rc ? rc : dpmu_drv_wr(d, cpu, R_PMXEVTYPER_EL0, type, err);
	}
	return dpmu_drv_wr(d, cpu, R_PMEVTYPER_EL0(i), type, err);
}

int dpmu_drv_pmu_program(struct dpmu_drv *d, unsigned cpu, unsigned i, uint16_t event, unsigned els,
			 struct dpmu_err *err)
{
	int rc = check_counter(d, cpu, i, false, err);
	if (rc)
		return rc;
	return write_type(d, cpu, i, dpmu_drv_filter_bits(els) | event, err);
}

int dpmu_drv_pmu_program_cycles(struct dpmu_drv *d, unsigned cpu, unsigned els, struct dpmu_err *err)
{
	return dpmu_drv_syswrite(d, cpu, R_PMCCFILTR_EL0, dpmu_drv_filter_bits(els), err);
}

int dpmu_drv_pmu_read_type(struct dpmu_drv *d, unsigned cpu, unsigned i, uint32_t *type,
			   struct dpmu_err *err)
{
	uint64_t v = 0;
	int rc = check_counter(d, cpu, i, false, err);
	if (!rc && d->access == DPMU_DRV_SELECTED) {
		if (!(rc = dpmu_drv_wr(d, cpu, R_PMSELR_EL0, i, err)))
			rc = dpmu_drv_rd(d, cpu, R_PMXEVTYPER_EL0, &v, err);
	} else if (!rc) {
		rc = dpmu_drv_rd(d, cpu, R_PMEVTYPER_EL0(i), &v, err);
	}
	*type = (uint32_t)v;
	return rc;
}

int dpmu_drv_pmu_start(struct dpmu_drv *d, unsigned cpu, uint32_t mask, struct dpmu_err *err)
{
	int rc = check_mask(d, cpu, mask, err);
	return rc ? rc : dpmu_drv_wr(d, cpu, R_PMCNTENSET_EL0, mask, err);
}

int dpmu_drv_pmu_stop(struct dpmu_drv *d, unsigned cpu, uint32_t mask, struct dpmu_err *err)
{
	int rc = check_mask(d, cpu, mask, err);
	return rc ? rc : dpmu_drv_wr(d, cpu, R_PMCNTENCLR_EL0, mask, err);
}

int dpmu_drv_pmu_enabled(struct dpmu_drv *d, unsigned cpu, uint32_t *mask, struct dpmu_err *err)
{
	uint64_t v = 0;
	int rc = dpmu_drv_sysread(d, cpu, R_PMCNTENSET_EL0, &v, err);
	*mask = (uint32_t)v;
	return rc;
}

int dpmu_drv_pmu_read(struct dpmu_drv *d, unsigned cpu, unsigned i, uint64_t *value,
		      struct dpmu_err *err)
{
	*value = 0;
	int rc = check_counter(d, cpu, i, true, err);
	if (rc)
		return rc;
	if (i == DPMU_DRV_CYCLE)
		return dpmu_drv_rd(d, cpu, R_PMCCNTR_EL0, value, err);
	if (d->access == DPMU_DRV_SELECTED) {
		rc = dpmu_drv_wr(d, cpu, R_PMSELR_EL0, i, err);
		return rc ? rc : dpmu_drv_rd(d, cpu, R_PMXEVCNTR_EL0, value, err);
	}
	return dpmu_drv_rd(d, cpu, R_PMEVCNTR_EL0(i), value, err);
}

int dpmu_drv_pmu_write(struct dpmu_drv *d, unsigned cpu, unsigned i, uint64_t value,
		       struct dpmu_err *err)
{
	int rc = check_counter(d, cpu, i, true, err);
	if (rc)
		return rc;
	if (i == DPMU_DRV_CYCLE)
		return dpmu_drv_wr(d, cpu, R_PMCCNTR_EL0, value, err);
	if (d->access == DPMU_DRV_SELECTED) {
		rc = dpmu_drv_wr(d, cpu, R_PMSELR_EL0, i, err);
		return rc ? rc : dpmu_drv_wr(d, cpu, R_PMXEVCNTR_EL0, value, err);
	}
	return dpmu_drv_wr(d, cpu, R_PMEVCNTR_EL0(i), value, err);
}

int dpmu_drv_pmu_overflow(struct dpmu_drv *d, unsigned cpu, uint32_t *mask, struct dpmu_err *err)
{
	uint64_t v = 0;
	int rc = dpmu_drv_sysread(d, cpu, R_PMOVSSET_EL0, &v, err);
	*mask = (uint32_t)v;
	return rc;
}

int dpmu_drv_pmu_overflow_clear(struct dpmu_drv *d, unsigned cpu, uint32_t mask,
				struct dpmu_err *err)
{
	int rc = check_mask(d, cpu, mask, err);
	return rc ? rc : dpmu_drv_wr(d, cpu, R_PMOVSCLR_EL0, mask, err);
}

int dpmu_drv_pmu_irq_enable(struct dpmu_drv *d, unsigned cpu, uint32_t mask, bool on,
			    struct dpmu_err *err)
{
	int rc = check_mask(d, cpu, mask, err);
	return rc ? rc : dpmu_drv_wr(d, cpu, on ? R_PMINTENSET_EL1 : R_PMINTENCLR_EL1, mask, err);
}

int dpmu_drv_pmu_swinc(struct dpmu_drv *d, unsigned cpu, uint32_t mask, struct dpmu_err *err)
{
	int rc = check_mask(d, cpu, mask & ~DPMU_DRV_CYCLE_BIT, err);
	return rc ? rc : dpmu_drv_wr(d, cpu, R_PMSWINC_EL0, mask & ~DPMU_DRV_CYCLE_BIT, err);
}

int dpmu_drv_pmu_userenr(struct dpmu_drv *d, unsigned cpu, uint32_t value, struct dpmu_err *err)
{
	if (value & ~0xfu)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "PMUSERENR_EL0 value 0x%x: only EN, SW, CR, ER (bits 0-3) exist", value);
	return dpmu_drv_syswrite(d, cpu, R_PMUSERENR_EL0, value, err);
}

static int check_pair(struct dpmu_drv *d, unsigned cpu, unsigned even, struct dpmu_err *err)
{
	if (even & 1)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "counter %u on cpu%u: a chained pair starts at an even counter "
				    "(CHAIN counts on the odd one)",
				    even, cpu);
	return check_counter(d, cpu, even + 1, false, err);
}

int dpmu_drv_pmu_chain(struct dpmu_drv *d, unsigned cpu, unsigned even, uint16_t event,
		       unsigned els, struct dpmu_err *err)
{
	int rc = check_pair(d, cpu, even, err);
	if (rc)
		return rc;
	uint32_t f = dpmu_drv_filter_bits(els);
	/* The odd counter counts CHAIN: one per 32-bit overflow of the even
	 * counter (reference section 1). */
	if ((rc = write_type(d, cpu, even + 1, f | EV_CHAIN, err)))
		return rc;
	return write_type(d, cpu, even, f | event, err);
}

int dpmu_drv_pmu_read_pair(struct dpmu_drv *d, unsigned cpu, unsigned even, uint64_t *value,
			   struct dpmu_err *err)
{
	*value = 0;
	int rc = check_pair(d, cpu, even, err);
	if (rc)
		return rc;
	return dpmu_drv_read_pair(d, cpu, even, dpmu_drv_pmu_read, value, err);
}

/* ---- Activity Monitors ------------------------------------------------ */

static int check_amu(struct dpmu_drv *d, unsigned cpu, unsigned group, unsigned i,
		     struct dpmu_err *err)
{
	int rc = dpmu_drv_check_cpu(d, cpu, err);
	if (rc)
		return rc;
	const struct dpmu_drv_cpuinfo *ci = &d->cpus[cpu];
	if (!ci->amu)
		return dpmu_err_set(err, DPMU_ENOTSUP,
				    "cpu%u has no accessible AMU (AMCGCR_EL0 was not readable at discovery)",
				    cpu);
	if (group > 1)
		return dpmu_err_set(err, DPMU_EINVAL, "AMU group %u on cpu%u: groups are 0 and 1",
				    group, cpu);
	unsigned n = group ? ci->amu_cg1nc : ci->amu_cg0nc;
	if (i >= n || i >= 16)
		return dpmu_err_set(err, DPMU_ERANGE,
				    "AMU group %u counter %u on cpu%u: AMCGCR_EL0.CG%uNC is %u", group, i,
				    cpu, group, n);
	return 0;
}

int dpmu_drv_amu_read(struct dpmu_drv *d, unsigned cpu, unsigned group, unsigned i,
		      uint64_t *value, struct dpmu_err *err)
{
	*value = 0;
	int rc = check_amu(d, cpu, group, i, err);
	if (rc)
		return rc;
	return dpmu_drv_rd(d, cpu, group ? R_AMEVCNTR1_EL0(i) : R_AMEVCNTR0_EL0(i), value, err);
}

int dpmu_drv_amu_type(struct dpmu_drv *d, unsigned cpu, unsigned group, unsigned i,
		      uint16_t *event, struct dpmu_err *err)
{
	uint64_t v = 0;
	*event = 0;
	int rc = check_amu(d, cpu, group, i, err);
	if (rc)
		return rc;
	rc = dpmu_drv_rd(d, cpu, group ? R_AMEVTYPER1_EL0(i) : R_AMEVTYPER0_EL0(i), &v, err);
	*event = (uint16_t)(v & EVTYPER_EVT);
	return rc;
}

int dpmu_drv_amu_select(struct dpmu_drv *d, unsigned cpu, unsigned i, uint16_t event,
			struct dpmu_err *err)
{
	int rc = check_amu(d, cpu, 1, i, err);
	if (rc)
		return rc;
	uint64_t back;
	if ((rc = dpmu_drv_wr(d, cpu, R_AMEVTYPER1_EL0(i), event, err)) ||
	    (rc = dpmu_drv_rd(d, cpu, R_AMEVTYPER1_EL0(i), &back, err)))
		return rc;
	/* A group-1 counter selects from a fixed set (seed 003 section 5.2);
	 * an event outside it is not taken. */
	if ((back & EVTYPER_EVT) != event)
		return dpmu_err_set(err, DPMU_ENOTSUP,
				    "AMEVTYPER1%u_EL0 on cpu%u: event 0x%x not accepted (reads back 0x%x)",
				    i, cpu, event, (unsigned)(back & EVTYPER_EVT));
	return 0;
}

int dpmu_drv_amu_enable(struct dpmu_drv *d, unsigned cpu, unsigned group, uint32_t mask, bool on,
			struct dpmu_err *err)
{
	int rc = check_amu(d, cpu, group, 0, err);
	if (rc == DPMU_ERANGE)
		rc = 0; /* an empty group: only mask 0 makes sense, checked below */
	if (rc)
		return rc;
	const struct dpmu_drv_cpuinfo *ci = &d->cpus[cpu];
	unsigned n = group ? ci->amu_cg1nc : ci->amu_cg0nc;
	uint32_t ok = n >= 32 ? 0xffffffffu : (1u << n) - 1;
	if (mask & ~ok)
		return dpmu_err_set(err, DPMU_ERANGE,
				    "AMU group %u mask 0x%x on cpu%u: AMCGCR_EL0.CG%uNC is %u", group,
				    mask, cpu, group, n);
	uint32_t enc = group ? (on ? R_AMCNTENSET1_EL0 : R_AMCNTENCLR1_EL0)
			     : (on ? R_AMCNTENSET0_EL0 : R_AMCNTENCLR0_EL0);
	return dpmu_drv_wr(d, cpu, enc, mask, err);
}
