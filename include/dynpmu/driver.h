/*
 * The driver (src/driver): programs and reads the core PMU, the Activity
 * Monitors and the DSU cluster PMU of every CPU and cluster, through a struct
 * dpmu_regio only (regio.h). It knows registers, not where they live: the same
 * code runs on the model (regio_model.h), on aarch64 system registers and on
 * memory-mapped frames.
 *
 * Creating a driver discovers the system by register reads: for every CPU
 * MIDR_EL1, MPIDR_EL1 (cluster = Aff2, core = Aff1), PMCR_EL0.N, PMCEID0/1_EL0
 * and AMCGCR_EL0 (no AMU when it is UNDEFINED); for every cluster
 * CLUSTERPMCR_EL1.N and CLUSTERPMCEID0/1_EL1, read through a CPU of that
 * cluster.
 *
 * Every function returns 0 or a negative DPMU_E* code and fills err. A
 * register access that traps, is UNDEFINED or is refused by the external
 * access rule is an error whose message names the register, the cpu or frame
 * and the rule, e.g. "PMCCNTR_EL0 on cpu2: trapped to EL1 (EL0 access needs
 * PMUSERENR_EL0.EN or .CR)"; its code is DPMU_ESTATE (trap, UNDEFINED) or
 * DPMU_EIO (external access refused). Bad arguments are DPMU_EINVAL or
 * DPMU_ERANGE and touch no register.
 *
 * A driver is not thread-safe; one thread uses it (as one CPU would).
 */
#ifndef DYNPMU_DRIVER_H
#define DYNPMU_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "dynpmu/error.h"
#include "dynpmu/regio.h"

struct dpmu_drv;

/* Counter index of the cycle counter, as in the PMCNTENSET/PMOVSSET masks. */
#define DPMU_DRV_CYCLE 31u
#define DPMU_DRV_CYCLE_BIT (1u << DPMU_DRV_CYCLE)
#define DPMU_DRV_MAX_COUNTERS 31u

/* PMCR_EL0 / CLUSTERPMCR_EL1 bits (reference sections 1 and 3). */
#define DPMU_DRV_PMCR_E (1u << 0)   /* enable */
#define DPMU_DRV_PMCR_P (1u << 1)   /* write 1: reset event counters */
#define DPMU_DRV_PMCR_C (1u << 2)   /* write 1: reset the cycle counter */
#define DPMU_DRV_PMCR_D (1u << 3)   /* cycle counter counts every 64th cycle */
#define DPMU_DRV_PMCR_LC (1u << 6)  /* cycle counter overflows at 64 bits */
#define DPMU_DRV_PMCR_LP (1u << 7)  /* PMUv3p5: event counters overflow at 64 bits */

/* Exception levels a counter counts at (the perf :u / :k modifiers). Each
 * set bit includes that level; the PMEVTYPER P/U/NSH bits are derived. */
enum {
	DPMU_DRV_EL0 = 1u << 0,          /* :u */
	DPMU_DRV_EL1 = 1u << 1,          /* :k */
	DPMU_DRV_EL2 = 1u << 2,          /* :h (NSH) */
	DPMU_DRV_EL01 = DPMU_DRV_EL0 | DPMU_DRV_EL1,
};

/* How event counters are reached: PMEVCNTR<n>_EL0/PMEVTYPER<n>_EL0
 * directly, or PMSELR_EL0.SEL then PMXEVCNTR_EL0/PMXEVTYPER_EL0. The
 * cluster PMU is always reached through CLUSTERPMSELR_EL1. */
enum dpmu_drv_access { DPMU_DRV_DIRECT = 0, DPMU_DRV_SELECTED = 1 };

/* What discovery found about one CPU. */
struct dpmu_drv_cpuinfo {
	uint64_t midr;                /* MIDR_EL1 */
	uint64_t mpidr;               /* MPIDR_EL1 */
	unsigned cluster;             /* MPIDR.Aff2 */
	unsigned core;                /* MPIDR.Aff1 */
	unsigned pmu_n;               /* PMCR_EL0.N: event counters */
	uint8_t pmcr_imp, pmcr_idcode;
	uint64_t pmceid0, pmceid1;    /* PMCEID0/1_EL0 */
	bool amu;                     /* AMCGCR_EL0 readable */
	unsigned amu_cg0nc, amu_cg1nc;/* AMCGCR_EL0.CG0NC / CG1NC */
};

/* What discovery found about one cluster. */
struct dpmu_drv_clusterinfo {
	unsigned ncpus;               /* CPUs whose MPIDR.Aff2 is this cluster */
	unsigned cpu;                 /* CPU used for CLUSTERPM* accesses */
	unsigned pmu_n;               /* CLUSTERPMCR_EL1.N */
	uint64_t pmceid0, pmceid1;    /* CLUSTERPMCEID0/1_EL1 */
};

/* An EXT32 frame: a core PMU frame (index = cpu) or a cluster PMU frame. */
struct dpmu_drv_frame {
	enum dpmu_regio_frame_kind kind;
	unsigned index;
};
#define DPMU_DRV_CORE_FRAME(i) ((struct dpmu_drv_frame){ DPMU_REGIO_FRAME_CORE, (i) })
#define DPMU_DRV_CLUSTER_FRAME(i) ((struct dpmu_drv_frame){ DPMU_REGIO_FRAME_CLUSTER, (i) })

/* Values captured by one snapshot (PMEVCNTSVR<n>, PMCCNTSVR). */
struct dpmu_drv_snapshot {
	unsigned n;                   /* event counters in the frame (PMCFGR.N) */
	uint64_t ev[DPMU_DRV_MAX_COUNTERS];
	uint64_t cc;
	unsigned polls;               /* PMSSCR reads until SS read 0 */
};

/* Default bound on PMSSCR polls before a snapshot times out. */
#define DPMU_DRV_SNAPSHOT_POLLS 1000u

/* ---- lifetime and discovery ------------------------------------------- */

/* io must outlive the driver. Fails when a discovery read fails (message
 * names the register and cpu) or MPIDR names a cluster >= io->nclusters. */
int dpmu_drv_create(const struct dpmu_regio *io, struct dpmu_drv **out, struct dpmu_err *err);
void dpmu_drv_destroy(struct dpmu_drv *d);

unsigned dpmu_drv_ncpus(const struct dpmu_drv *d);
unsigned dpmu_drv_nclusters(const struct dpmu_drv *d);
/* NULL when cpu / cluster is out of range. */
const struct dpmu_drv_cpuinfo *dpmu_drv_cpuinfo(const struct dpmu_drv *d, unsigned cpu);
const struct dpmu_drv_clusterinfo *dpmu_drv_clusterinfo(const struct dpmu_drv *d,
							 unsigned cluster);

/* Whether PMCEID0/1 (core) or CLUSTERPMCEID0/1 (cluster) advertise an event.
 * They describe events 0x00-0x3F and 0x4000-0x403F only; for any other
 * (implementation defined) event the answer is DPMU_DRV_EVENT_UNKNOWN. */
enum dpmu_drv_event_status { DPMU_DRV_EVENT_NO = 0, DPMU_DRV_EVENT_YES = 1,
			     DPMU_DRV_EVENT_UNKNOWN = 2 };
enum dpmu_drv_event_status dpmu_drv_cpu_event(const struct dpmu_drv *d, unsigned cpu,
					      uint16_t event);
enum dpmu_drv_event_status dpmu_drv_cluster_event(const struct dpmu_drv *d, unsigned cluster,
						  uint16_t event);

/* Event counter access path for the core PMU (default DPMU_DRV_DIRECT). */
void dpmu_drv_set_access(struct dpmu_drv *d, enum dpmu_drv_access how);
/* CPU through which a cluster's CLUSTERPM* registers are accessed (default:
 * the first CPU of the cluster); it must belong to the cluster. */
int dpmu_drv_cluster_set_cpu(struct dpmu_drv *d, unsigned cluster, unsigned cpu,
			     struct dpmu_err *err);
/* Called between PMSSCR polls (poll = 1, 2, ...): a delay on hardware; on
 * the model, a place to let simulated time pass. NULL: poll back to back. */
void dpmu_drv_set_wait(struct dpmu_drv *d, void (*wait)(void *ctx, unsigned poll), void *ctx);
/* Bound on PMSSCR polls (0 restores DPMU_DRV_SNAPSHOT_POLLS). */
void dpmu_drv_set_snapshot_polls(struct dpmu_drv *d, unsigned polls);

/* ---- raw access with the driver's error messages ------------------------ */

int dpmu_drv_sysread(struct dpmu_drv *d, unsigned cpu, uint32_t enc, uint64_t *value,
		     struct dpmu_err *err);
int dpmu_drv_syswrite(struct dpmu_drv *d, unsigned cpu, uint32_t enc, uint64_t value,
		      struct dpmu_err *err);
int dpmu_drv_extread(struct dpmu_drv *d, struct dpmu_drv_frame f, uint32_t offset,
		     uint32_t *value, struct dpmu_err *err);
int dpmu_drv_extwrite(struct dpmu_drv *d, struct dpmu_drv_frame f, uint32_t offset,
		      uint32_t value, struct dpmu_err *err);

/* ---- core PMU (system registers of `cpu`) ------------------------------- */

/* Stop and clear: PMCR.E = 0 with P and C (counters to zero), every counter
 * disabled (PMCNTENCLR), overflow interrupts disabled (PMINTENCLR) and
 * overflow status cleared (PMOVSCLR). `pmcr_extra` adds stored PMCR bits
 * (DPMU_DRV_PMCR_LC, _D, _LP). */
int dpmu_drv_pmu_reset(struct dpmu_drv *d, unsigned cpu, uint32_t pmcr_extra,
		       struct dpmu_err *err);
/* Set or clear PMCR.E, keeping the other stored bits. */
int dpmu_drv_pmu_enable(struct dpmu_drv *d, unsigned cpu, bool on, struct dpmu_err *err);
int dpmu_drv_pmu_read_pmcr(struct dpmu_drv *d, unsigned cpu, uint32_t *pmcr,
			   struct dpmu_err *err);
int dpmu_drv_pmu_write_pmcr(struct dpmu_drv *d, unsigned cpu, uint32_t pmcr,
			    struct dpmu_err *err);
/* Program event counter i (< PMCR.N) with `event`, counting at the levels in
 * `els` (DPMU_DRV_EL0 | ...). Does not enable it. */
int dpmu_drv_pmu_program(struct dpmu_drv *d, unsigned cpu, unsigned i, uint16_t event,
			 unsigned els, struct dpmu_err *err);
/* PMCCFILTR_EL0: levels the cycle counter counts at. */
int dpmu_drv_pmu_program_cycles(struct dpmu_drv *d, unsigned cpu, unsigned els,
				struct dpmu_err *err);
/* Read back PMEVTYPER<i> (event and filter bits). */
int dpmu_drv_pmu_read_type(struct dpmu_drv *d, unsigned cpu, unsigned i, uint32_t *type,
			   struct dpmu_err *err);
/* PMCNTENSET / PMCNTENCLR with `mask` (bit 31: cycle counter); _mask reads it. */
int dpmu_drv_pmu_start(struct dpmu_drv *d, unsigned cpu, uint32_t mask, struct dpmu_err *err);
int dpmu_drv_pmu_stop(struct dpmu_drv *d, unsigned cpu, uint32_t mask, struct dpmu_err *err);
int dpmu_drv_pmu_enabled(struct dpmu_drv *d, unsigned cpu, uint32_t *mask,
			 struct dpmu_err *err);
/* Counter i (0..N-1, or DPMU_DRV_CYCLE for PMCCNTR_EL0). */
int dpmu_drv_pmu_read(struct dpmu_drv *d, unsigned cpu, unsigned i, uint64_t *value,
		      struct dpmu_err *err);
int dpmu_drv_pmu_write(struct dpmu_drv *d, unsigned cpu, unsigned i, uint64_t value,
		       struct dpmu_err *err);
/* PMOVSSET (read) and PMOVSCLR (write 1 to clear). */
int dpmu_drv_pmu_overflow(struct dpmu_drv *d, unsigned cpu, uint32_t *mask,
			  struct dpmu_err *err);
int dpmu_drv_pmu_overflow_clear(struct dpmu_drv *d, unsigned cpu, uint32_t mask,
				struct dpmu_err *err);
/* PMINTENSET (on) / PMINTENCLR (off) for the counters in mask. */
int dpmu_drv_pmu_irq_enable(struct dpmu_drv *d, unsigned cpu, uint32_t mask, bool on,
			    struct dpmu_err *err);
/* PMSWINC_EL0. */
int dpmu_drv_pmu_swinc(struct dpmu_drv *d, unsigned cpu, uint32_t mask, struct dpmu_err *err);
/* PMUSERENR_EL0 (EN bit0, SW bit1, CR bit2, ER bit3), written from EL1. */
int dpmu_drv_pmu_userenr(struct dpmu_drv *d, unsigned cpu, uint32_t value,
			 struct dpmu_err *err);
/* A 64-bit counter from a pair (reference section 1, CHAIN): counter `even`
 * (even, even+1 < N) counts `event`, counter even+1 counts CHAIN (0x1E),
 * both with the filter `els`. Does not enable them. */
int dpmu_drv_pmu_chain(struct dpmu_drv *d, unsigned cpu, unsigned even, uint16_t event,
		       unsigned els, struct dpmu_err *err);
/* Read the pair as one 64-bit value: high, low, high again, so a carry
 * between the two reads is never mixed into the result. */
int dpmu_drv_pmu_read_pair(struct dpmu_drv *d, unsigned cpu, unsigned even, uint64_t *value,
			   struct dpmu_err *err);

/* ---- cluster PMU (CLUSTERPM*_EL1 through the cluster's chosen CPU) ------- */

int dpmu_drv_cluster_reset(struct dpmu_drv *d, unsigned cluster, struct dpmu_err *err);
int dpmu_drv_cluster_enable(struct dpmu_drv *d, unsigned cluster, bool on,
			    struct dpmu_err *err);
/* CLUSTERPMSELR = i, then CLUSTERPMXEVTYPER = event. */
int dpmu_drv_cluster_program(struct dpmu_drv *d, unsigned cluster, unsigned i, uint16_t event,
			     struct dpmu_err *err);
int dpmu_drv_cluster_start(struct dpmu_drv *d, unsigned cluster, uint32_t mask,
			   struct dpmu_err *err);
int dpmu_drv_cluster_stop(struct dpmu_drv *d, unsigned cluster, uint32_t mask,
			  struct dpmu_err *err);
/* Counter i through CLUSTERPMXEVCNTR, or DPMU_DRV_CYCLE: CLUSTERPMCCNTR. */
int dpmu_drv_cluster_read(struct dpmu_drv *d, unsigned cluster, unsigned i, uint64_t *value,
			  struct dpmu_err *err);
int dpmu_drv_cluster_write(struct dpmu_drv *d, unsigned cluster, unsigned i, uint64_t value,
			   struct dpmu_err *err);
int dpmu_drv_cluster_overflow(struct dpmu_drv *d, unsigned cluster, uint32_t *mask,
			      struct dpmu_err *err);
int dpmu_drv_cluster_overflow_clear(struct dpmu_drv *d, unsigned cluster, uint32_t mask,
				    struct dpmu_err *err);
int dpmu_drv_cluster_irq_enable(struct dpmu_drv *d, unsigned cluster, uint32_t mask, bool on,
				struct dpmu_err *err);
/* DPMU_ENOTSUP unless CLUSTERPMCEID advertises CHAIN (the classic DSU
 * does not implement it). */
int dpmu_drv_cluster_chain(struct dpmu_drv *d, unsigned cluster, unsigned even, uint16_t event,
			   struct dpmu_err *err);
int dpmu_drv_cluster_read_pair(struct dpmu_drv *d, unsigned cluster, unsigned even,
			       uint64_t *value, struct dpmu_err *err);

/* ---- Activity Monitors (system registers of `cpu`) ----------------------- */

/* AMEVCNTR0<i>_EL0 (group 0) or AMEVCNTR1<i>_EL0 (group 1). */
int dpmu_drv_amu_read(struct dpmu_drv *d, unsigned cpu, unsigned group, unsigned i,
		      uint64_t *value, struct dpmu_err *err);
/* AMEVTYPER0<i>/AMEVTYPER1<i>: the event a counter counts. */
int dpmu_drv_amu_type(struct dpmu_drv *d, unsigned cpu, unsigned group, unsigned i,
		      uint16_t *event, struct dpmu_err *err);
/* Group-1 event selection: AMEVTYPER1<i>_EL0 = event (read back to check
 * the event was accepted; DPMU_ENOTSUP when it was not). */
int dpmu_drv_amu_select(struct dpmu_drv *d, unsigned cpu, unsigned i, uint16_t event,
			struct dpmu_err *err);
/* AMCNTENSET0/1 (on) or AMCNTENCLR0/1 (off). */
int dpmu_drv_amu_enable(struct dpmu_drv *d, unsigned cpu, unsigned group, uint32_t mask,
			bool on, struct dpmu_err *err);

/* ---- snapshots over the external frame (seed 001 section 4.1) ------------ */

/* PMSSRR: counters (bit n, bit 31 the cycle counter where implemented) reset
 * to zero after each capture. */
int dpmu_drv_snapshot_reset_mask(struct dpmu_drv *d, struct dpmu_drv_frame f, uint32_t mask,
				 struct dpmu_err *err);
/* Write PMSSCR.SS = 1 to start a capture. */
int dpmu_drv_snapshot_trigger(struct dpmu_drv *d, struct dpmu_drv_frame f,
			      struct dpmu_err *err);
/* Poll PMSSCR until SS reads 0 (bounded; DPMU_ETIMEDOUT), calling the wait
 * hook between polls; then read PMCFGR.N, every PMEVCNTSVR<n> and PMCCNTSVR. */
int dpmu_drv_snapshot_collect(struct dpmu_drv *d, struct dpmu_drv_frame f,
			      struct dpmu_drv_snapshot *out, struct dpmu_err *err);
/* The same reading only the captured counters mask names (bit n:
 * PMEVCNTSVR<n>, bit 31: PMCCNTSVR); the others read as 0. A monitor
 * reads what it programmed: each capture register is two 32-bit reads
 * through the frame. */
int dpmu_drv_snapshot_collect_mask(struct dpmu_drv *d, struct dpmu_drv_frame f, uint32_t mask,
				   struct dpmu_drv_snapshot *out, struct dpmu_err *err);
/* trigger + collect. */
int dpmu_drv_snapshot(struct dpmu_drv *d, struct dpmu_drv_frame f, struct dpmu_drv_snapshot *out,
		      struct dpmu_err *err);
/* Unlock (PMLAR = 0xC5ACCE55) or lock the frame's software lock. */
int dpmu_drv_frame_unlock(struct dpmu_drv *d, struct dpmu_drv_frame f, bool unlock,
			  struct dpmu_err *err);

/* ---- trace unit (ETMv4, through its external frame, src/driver/etm.c) ---- */

/* What dpmu_drv_etm_start writes (field layouts: dynpmu/etm.h). */
struct dpmu_drv_etm_config {
	uint32_t configr, traceidr, syncpr, tsctlr, ccctlr;
	uint32_t extinselr;                  /* TRCEXTINSELR.SEL0-3: PMU event numbers */
	uint32_t victlr, viiectlr, vissctlr; /* ViewInst */
	uint32_t cntrldvr[2], cntctlr[2], cntvr[2];
	uint32_t rsctlr[16];                 /* TRCRSCTLR2-15 (0 and 1 are fixed) */
	uint64_t acvr[8];
	uint32_t acatr[8];
};
/* Unlock the frame and the trace unit's OS lock, stop the trace unit and
 * wait until it is idle, program `c`, enable it and wait until it runs. */
int dpmu_drv_etm_start(struct dpmu_drv *d, unsigned cpu, const struct dpmu_drv_etm_config *c,
		       struct dpmu_err *err);
/* TRCPRGCTLR.EN = 0 and wait for TRCSTATR.IDLE. */
int dpmu_drv_etm_stop(struct dpmu_drv *d, unsigned cpu, struct dpmu_err *err);
/* A capture as dynpmu trace record makes it: EL0 instruction trace with
 * timestamps and context IDs, started once `trigger_event` (a PMU event
 * number, an external input) has counted more than trigger_count (without
 * a trigger: at once), for `window` instructions (0: no end), inside
 * [range_start, range_end) when range_end > range_start, with cycle
 * counts when `cycles`. Counts are 16-bit (TRCCNTVR): at most 65534 and
 * 65535. */
struct dpmu_drv_etm_window {
	unsigned cpu;
	bool trigger;
	uint8_t trigger_event;
	uint32_t trigger_count, window;
	uint64_t range_start, range_end;
	bool cycles;
};
#define DPMU_DRV_ETM_TRACE_ID(cpu) (0x10u + (cpu)) /* TRCTRACEIDR */
void dpmu_drv_etm_window_config(const struct dpmu_drv_etm_window *w,
				struct dpmu_drv_etm_config *c);
/* TRCIDR0-13, what a decoder needs to know of the unit, after unlocking
 * the frame and the trace unit's OS lock as a debugger attaching would. */
int dpmu_drv_etm_ids(struct dpmu_drv *d, unsigned cpu, uint32_t idr[14], struct dpmu_err *err);
/* A 32-bit word of the trace unit's frame (TRCIDRn, TRCCNTVRn, ...). */
int dpmu_drv_etm_read(struct dpmu_drv *d, unsigned cpu, uint32_t offset, uint32_t *value,
		      struct dpmu_err *err);

#endif
