/*
 * State of the monitoring hardware, shared by the files of src/model only.
 *
 *   bank.c        a bank of event counters + cycle counter + overflow +
 *                 snapshot: the part the core PMU and the cluster PMU share
 *   model.c       topology, execution/debug state, event delivery
 *   sysreg.c      MRS/MSR dispatch, the EL2/EL3 control registers
 *   pmu.c         core PMU system registers, filters, PMUSERENR traps
 *   amu.c         Activity Monitors
 *   clusterpmu.c  DSU cluster PMU system registers
 *   ext.c         external (EXT32) view of core and cluster frames, the
 *                 access rule, software lock, identification registers
 *   etm.c         the trace unit (ETMv4) of a core: its registers by both
 *                 interfaces and their access rule
 *   etm_run.c     the trace unit at work: ViewInst (resources, counters,
 *                 address comparators), external inputs, the encoder
 *   etm_encode.c  the ETMv4 packets and the trace sink
 */
#ifndef DPMU_MODEL_INTERNAL_H
#define DPMU_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dynpmu/etm.h"
#include "dynpmu/model.h"

#define DPMU_BANK_MAX 31        /* event counters a PMUv3 bank can have */
#define DPMU_CC 31              /* cycle counter bit in the enable/overflow masks */

/* PMCR_EL0 fields (reference section 1) */
#define DPMU_PMCR_E (1u << 0)
#define DPMU_PMCR_P (1u << 1)
#define DPMU_PMCR_C (1u << 2)
#define DPMU_PMCR_D (1u << 3)
#define DPMU_PMCR_X (1u << 4)
#define DPMU_PMCR_DP (1u << 5)
#define DPMU_PMCR_LC (1u << 6)
#define DPMU_PMCR_LP (1u << 7)
#define DPMU_PMCR_N_SHIFT 11
#define DPMU_PMCR_IDCODE_SHIFT 16
#define DPMU_PMCR_IMP_SHIFT 24
#define DPMU_IMP_ARM 0x41u

/* PMEVTYPER / PMCCFILTR filter bits */
#define DPMU_EVTYPER_P (1u << 31)
#define DPMU_EVTYPER_U (1u << 30)
#define DPMU_EVTYPER_NSK (1u << 29)
#define DPMU_EVTYPER_NSU (1u << 28)
#define DPMU_EVTYPER_NSH (1u << 27)
#define DPMU_EVTYPER_M (1u << 26)
#define DPMU_EVTYPER_EVT 0xffffu
/* The writable filter bits of a core's PMEVTYPER<n> and PMCCFILTR, by
 * either interface. MT (bit 25) is not writable: the cores modelled are not
 * multithreaded (MPIDR.MT describes affinity, not SMT). */
#define DPMU_EVTYPER_FILTER                                                     \
	(DPMU_EVTYPER_P | DPMU_EVTYPER_U | DPMU_EVTYPER_NSK | DPMU_EVTYPER_NSU |   \
	 DPMU_EVTYPER_NSH | DPMU_EVTYPER_M)

/* A set of implemented event numbers (the whole 16-bit space). */
struct dpmu_evset {
	uint64_t bits[65536 / 64];
};

static inline bool dpmu_evset_has(const struct dpmu_evset *s, uint16_t ev)
{
	return (s->bits[ev >> 6] >> (ev & 63)) & 1;
}

/* Events base..base+31 (base a multiple of 32) as a PMCEID word: bit k is
 * event base + k. The set is stored 64 events per word. */
static inline uint32_t dpmu_evset_word32(const struct dpmu_evset *s, uint16_t base)
{
	uint64_t w = s->bits[base >> 6];
	return (uint32_t)(base & 32 ? w >> 32 : w);
}

/* PMCEID0/1 and CLUSTERPMCEID0/1 (base 0x00 / 0x20): the low word is events
 * base..base+31, the high word events 0x4000+base..+31 (reference section 1). */
static inline uint64_t dpmu_evset_ceid(const struct dpmu_evset *s, uint16_t base)
{
	return dpmu_evset_word32(s, base) |
	       (uint64_t)dpmu_evset_word32(s, (uint16_t)(0x4000u + base)) << 32;
}

/*
 * A counter bank: PMUv3 event counters, the cycle counter, their enables,
 * overflow status and interrupt enables, and the snapshot registers of
 * seed 001 section 2.2-2.3. Registers keep only their writable bits.
 */
struct dpmu_bank {
	unsigned n;                     /* event counters implemented (PMCR.N) */
	bool ev64;                      /* 64-bit event counters (PMUv3p5 / newer DSU) */
	bool has_lp;                    /* PMCR.LP implemented (PMUv3p5) */
	bool has_lc;                    /* PMCR.LC implemented; without it the cycle
	                                   counter overflows at 64 bits (DSU) */
	uint32_t pmcr_rw;               /* PMCR bits that are writable and stored */
	uint32_t pmcr;                  /* stored PMCR bits (E, D, X, DP, LC, LP) */

	uint64_t evcnt[DPMU_BANK_MAX];
	uint32_t evtyper[DPMU_BANK_MAX];
	uint16_t ev[DPMU_BANK_MAX];     /* evtyper & EVT, for the delivery loop */
	uint64_t ccnt;
	uint32_t ccfiltr;
	uint32_t cnten;                 /* PMCNTENSET: bits [n-1:0] and 31 */
	uint32_t inten;                 /* PMINTENSET */
	uint32_t ovs;                   /* PMOVSSET */
	uint32_t selr;                  /* PMSELR.SEL */
	unsigned divider;               /* PMCR.D prescaler: cycles since last tick */

	/* Counters allowed to count in the current state (filters, implemented
	 * events), maintained by the owner; `active` = allowed & enabled & E. */
	uint32_t allowed;
	uint32_t active;
	/* The delivery loop's index: active event counters by the low byte of
	 * their event number (candidates; the full number is compared). */
	uint32_t by_low[256];
	/* Event numbers of the active counters when `active` was last
	 * computed: tells dpmu_bank_update_active whether what counts changed. */
	uint16_t live_ev[DPMU_BANK_MAX];

	/* Snapshots: PMSSCR.SS starts a capture; the values latch at once
	 * (and PMSSRR resets apply at once), and become visible in the SVR
	 * registers when snap_remaining cycles have passed. */
	uint64_t evsvr[DPMU_BANK_MAX];
	uint64_t ccsvr;
	uint64_t pend_ev[DPMU_BANK_MAX];
	uint64_t pend_cc;
	uint32_t ssrr;                  /* PMSSRR.RP<n>, implemented bits only */
	uint64_t snap_remaining;
	bool snap_busy;                 /* PMSSCR.SS reads 1 */

	/* The owning model's interrupt-line generation (NULL: a bank of
	 * nobody's, as in unit tests), moved by every write that may change
	 * dpmu_bank_irq: of ovs, inten or pmcr, and a reset. */
	uint64_t *irq_gen;
};

/* After a write that may change the bank's interrupt line. */
static inline void dpmu_bank_irq_changed(struct dpmu_bank *b)
{
	if (b->irq_gen)
		++*b->irq_gen;
}

/* Mask of implemented counters: bits [n-1:0] and the cycle counter. */
static inline uint32_t dpmu_bank_mask(const struct dpmu_bank *b)
{
	return (uint32_t)((b->n >= 32 ? 0x7fffffffu : ((1u << b->n) - 1)) | (1u << DPMU_CC));
}

void dpmu_bank_init(struct dpmu_bank *b, unsigned n, bool ev64, bool has_lp, bool has_lc);
/* Reset values (Cold reset): everything 0 except what the owner sets. */
void dpmu_bank_reset(struct dpmu_bank *b);
/* Recompute `active` after PMCR.E, the enables or `allowed` changed.
 * Returns whether the set of (event counter, event number) pairs that
 * count changed since the last call (the owner's live generation). */
bool dpmu_bank_update_active(struct dpmu_bank *b);
/* Write the stored PMCR bits; P and C reset the counters. The caller
 * refreshes `allowed` and calls dpmu_bank_update_active after it (PMCR.E
 * decides `active`). */
void dpmu_bank_write_pmcr(struct dpmu_bank *b, uint32_t value);
/* The caller refreshes `allowed` and calls dpmu_bank_update_active after
 * it (the filter and the delivery index follow the new event). */
void dpmu_bank_write_evtyper(struct dpmu_bank *b, unsigned i, uint32_t value);
/* Counter values as software reads them (32-bit counters masked). */
uint64_t dpmu_bank_read_evcnt(const struct dpmu_bank *b, unsigned i);
void dpmu_bank_write_evcnt(struct dpmu_bank *b, unsigned i, uint64_t value);
/* Add n to one counter (which the caller has checked is active): wraps,
 * overflow status, CHAIN into the odd neighbour. Cold: dpmu_bank_count
 * takes the usual case itself. */
__attribute__((cold)) void dpmu_bank_add(struct dpmu_bank *b, unsigned i, uint64_t n);
/* n occurrences of an event: every active counter programmed with it.
 * Inline, with the usual case of dpmu_bank_add done here: every delivery
 * of an event comes through. */
static inline void dpmu_bank_count(struct dpmu_bank *b, uint16_t event, uint64_t n)
{
	/* Most deliveries match no counter: one table load decides that. */
	uint32_t act = b->by_low[event & 0xff];
	while (act) {
		unsigned i = (unsigned)__builtin_ctz(act);
		act &= act - 1;
		if (b->ev[i] != event)
			continue;
		/* The counter stays below its overflow boundary: bit 63 with
		 * PMCR.LP = 1 (PMUv3p5), else bit 31 (32-bit counters keep
		 * bits [31:0] only, so old + n is their value too). */
		uint64_t old = b->evcnt[i];
		bool lp = b->ev64 && (b->pmcr & DPMU_PMCR_LP);
		if (__builtin_expect(lp ? old + n >= old
					: n <= 0xffffffffu && (old & 0xffffffffu) + n <= 0xffffffffu,
				     1))
			b->evcnt[i] = old + n;
		else
			dpmu_bank_add(b, i, n);
	}
}
/* Whether an active event counter is programmed with `event`: whether
 * dpmu_bank_count would change anything. */
bool dpmu_bank_counts(const struct dpmu_bank *b, uint16_t event);
/* k clock cycles for the cycle counter; cc_allowed is the PMCCFILTR filter
 * result in the current state. Also advances a pending snapshot. */
void dpmu_bank_cycles(struct dpmu_bank *b, uint64_t k, bool cc_allowed);
/* PMSWINC: each counter in `mask` that is active and programmed with
 * SW_INCR (0x00) increments by one. */
void dpmu_bank_swinc(struct dpmu_bank *b, uint32_t mask);
/* PMSSCR.SS = 1: capture every counter; latency 0 completes at once. */
void dpmu_bank_snapshot(struct dpmu_bank *b, uint64_t latency);
/* The counters whose overflow would raise the interrupt (PMCR.E, active,
 * PMINTENSET), each as its event and how many more of it overflow it:
 * the cycle counter as CPU_CYCLES, in cycles through the PMCR.D divider
 * (cc_allowed: PMCCFILTR lets it count now). Returns how many were
 * written (at most cap). */
unsigned dpmu_bank_overflow_watch(const struct dpmu_bank *b, bool cc_allowed, uint16_t *event,
				  uint64_t *left, unsigned cap);
/* Interrupt request: PMCR.E and an enabled overflow. */
bool dpmu_bank_irq(const struct dpmu_bank *b);

/* Activity Monitors of one core (reference section 4). */
struct dpmu_amu {
	unsigned n0, n1;                /* group 0 / group 1 counters */
	uint64_t cnt0[DPMU_AMU_GROUP0_MAX];
	uint64_t cnt1[DPMU_AMU_GROUP1_MAX];
	uint16_t type0[DPMU_AMU_GROUP0_MAX];   /* fixed by the profile */
	uint16_t type1[DPMU_AMU_GROUP1_MAX];
	uint32_t cnten0, cnten1;
	uint32_t amcr;
	uint32_t amuserenr;
	uint64_t const_rem;             /* remainder of core cycles x f_const / f_core */
};

/* The trace unit of one core (etm.c). Registers keep only their stored
 * bits (dpmu_etm_reg.wmask), by word offset in the frame (a 64-bit register
 * whole, at its low word). */
struct dpmu_etm {
	uint64_t reg[DPMU_ETM_FRAME_SIZE / 4];
	bool oslk;                      /* TRCOSLSR.OSLK */
	bool slk;                       /* TRCLSR.SLK (external frame) */
	bool stickypd;                  /* TRCPDSR.STICKYPD */
	uint32_t claim;                 /* claim tags (TRCCLAIMCLR reads them) */
};

/* The trace unit at work (etm_run.c): what TRCPRGCTLR.EN = 1 set up from
 * the registers, and where the trace goes. Outside the core power domain:
 * a Cold reset disables the trace unit but keeps the sink and the watcher. */
struct dpmu_etm_run {
	struct dpmu_etm_sink *sink;     /* attached trace sink (not owned), or NULL */
	dpmu_etm_watch_fn watch;        /* told when `active` changes */
	dpmu_etm_clock_fn clock;        /* the timestamps */
	dpmu_etm_cycles_fn cycles;      /* the core's cycles (TRCCONFIGR.CCI) */
	void *watch_ctx;
	dpmu_etm_seen_fn seen;          /* told of every instruction given */
	void *seen_ctx;
	bool active;                    /* enabled with a sink: instructions are given */
	struct dpmu_etm_encoder enc;
	uint8_t extin[DPMU_ETM_EXTINSEL];/* TRCEXTINSELR.SELn: PMU event numbers */
	uint8_t extin_used;             /* selectors some resource reads */
	uint8_t per_insn;               /* what ViewInst must look at per instruction */
	uint8_t instret_sel;            /* the selectors INST_RETIRED fires */
	uint8_t instret_cnt;            /* counters INST_RETIRED decrements now */
	bool event_on;                  /* TRCVICTLR.EVENT's resource, at the last change */
	bool ss_on;                     /* the start/stop logic's state */
	bool open;                      /* ViewInst at the last instruction */
	bool mid_block;                 /* the last traced instruction was not a P0 element */
	uint64_t next_pc;               /* where the last traced instruction went */
	uint64_t seen_n, traced;        /* instructions given and traced since enable */
	uint64_t first, last;           /* index (in seen_n) of the first and last traced */
	uint64_t event_at;              /* index at which EVENT first became true */
};

struct dpmu_core {
	unsigned id;                    /* global core number */
	unsigned cluster, index;        /* cluster and core-in-cluster */
	const struct dpmu_core_type *type;
	const struct dpmu_evset *implemented;
	uint64_t mpidr;

	unsigned el;
	enum dpmu_security sec;
	bool powered, wfi;
	bool oslock, doublelock, extauth;
	uint32_t edprsr_sticky;         /* EDPRSR sticky bits (SPMAD) */

	struct dpmu_bank pmu;
	uint32_t pmuserenr;
	bool cc_allowed;                /* PMCCFILTR passes in the current state */
	bool pmlsr_slk;                 /* external frame software lock */

	/* EL2/EL3 controls of the monitors (sysreg.c) */
	uint64_t mdcr_el2, mdcr_el3;    /* TPM, TPMCR */
	uint64_t cptr_el2, cptr_el3;    /* TAM */
	uint64_t actlr_el2, actlr_el3;  /* CLUSTERPMUEN (DynamIQ) */

	struct dpmu_amu amu;
	struct dpmu_etm etm;
	struct dpmu_etm_run etm_run;

	/* Bumped whenever dpmu_model_core_event_live may answer differently
	 * for some event. Never reset (a reset bumps it), so a value a caller
	 * saw never comes back. */
	uint64_t live_gen;
};

struct dpmu_cluster {
	unsigned id;
	unsigned first_core, ncores;
	const struct dpmu_cluster_params *params;
	const struct dpmu_evset *implemented;
	struct dpmu_bank pmu;
	uint32_t pmmdcr;                /* CLUSTERPMMDCR_EL1 */
	bool oslock, doublelock, extauth;
	bool pmlsr_slk;
	uint32_t edprsr_sticky;
	uint64_t live_gen;              /* as dpmu_core.live_gen, for the cluster PMU */
};

struct dpmu_model {
	struct dpmu_profile profile;    /* private copy */
	unsigned ncores, nclusters;
	struct dpmu_core cores[DPMU_MAX_CORES];
	struct dpmu_cluster clusters[DPMU_MAX_CLUSTERS];
	struct dpmu_evset core_events[DPMU_MAX_CORE_TYPES];
	struct dpmu_evset cluster_events[DPMU_MAX_CLUSTERS];
	uint64_t irq_gen;               /* dpmu_model_irq_gen: the banks move it */
};

/* Result of a register-file handler: the access outcome, or "not mine". */
#define DPMU_ACCESS_NOTMINE ((enum dpmu_access_kind)99)

static inline struct dpmu_access dpmu_access_ok(void)
{
	return (struct dpmu_access){ DPMU_ACCESS_OK, 0 };
}
static inline struct dpmu_access dpmu_access_trap(unsigned el)
{
	return (struct dpmu_access){ DPMU_ACCESS_TRAP, el };
}
static inline struct dpmu_access dpmu_access_undef(void)
{
	return (struct dpmu_access){ DPMU_ACCESS_UNDEF, 0 };
}
static inline struct dpmu_access dpmu_access_notmine(void)
{
	return (struct dpmu_access){ DPMU_ACCESS_NOTMINE, 0 };
}

/* Register files. Each handles its own encodings (and returns "not mine"
 * for others); `write` selects MSR, *value is in/out. */
struct dpmu_access dpmu_pmu_sysreg(struct dpmu_model *m, struct dpmu_core *c, uint32_t enc,
				   bool write, uint64_t *value);
struct dpmu_access dpmu_amu_sysreg(struct dpmu_model *m, struct dpmu_core *c, uint32_t enc,
				   bool write, uint64_t *value);
struct dpmu_access dpmu_clusterpmu_sysreg(struct dpmu_model *m, struct dpmu_core *c,
					  uint32_t enc, bool write, uint64_t *value);

/* EL2/EL3 traps of monitor registers (sysreg.c), checked after the EL0
 * PMUSERENR/AMUSERENR check: MDCR_EL2.TPM (and TPMCR when pmcr, an access to
 * PMCR_EL0) and MDCR_EL3.TPM for the core PMU; CPTR_EL2.TAM and CPTR_EL3.TAM
 * for the AMU. Return an OK or a trap access. */
struct dpmu_access dpmu_sysreg_pmu_traps(const struct dpmu_core *c, bool pmcr);
struct dpmu_access dpmu_sysreg_amu_traps(const struct dpmu_core *c);
/* CPTR_EL2.TTA and CPTR_EL3.TTA for the trace unit's System registers. */
struct dpmu_access dpmu_sysreg_trace_traps(const struct dpmu_core *c);

/* Trace unit: the System register file, the external frame (the frame's
 * own access rule), and the Cold reset of the core power domain. */
struct dpmu_access dpmu_etm_sysreg(struct dpmu_core *c, uint32_t enc, bool write, uint64_t *value);
int dpmu_etm_ext_read(struct dpmu_model *m, unsigned core, uint32_t offset, bool secure,
		      uint32_t *value);
int dpmu_etm_ext_write(struct dpmu_model *m, unsigned core, uint32_t offset, bool secure,
		       uint32_t value);
void dpmu_etm_reset(struct dpmu_core *c);
/* TRCPRGCTLR.EN written (etm_run.c): start or stop the trace unit. */
void dpmu_etm_run_enable(struct dpmu_core *c, bool on);
/* External inputs (the PMU event bus): n occurrences of a delivered
 * event; dpmu_etm_extin_live says whether the trace unit reads it. */
void dpmu_etm_extin(struct dpmu_core *c, uint16_t event, uint64_t n);
bool dpmu_etm_extin_live(const struct dpmu_core *c, uint16_t event);

/* CoreSight identification of a component (PIDR0-4, CIDR0-3 at 0xFD0-
 * 0xFFC), shared by the PMU and trace frames: the core's MIDR part number,
 * variant and revision, or `part` when there is no core (0 otherwise). */
uint32_t dpmu_ext_coresight_id(const struct dpmu_core *c, uint32_t part, uint32_t offset);
/* PMAUTHSTATUS / TRCAUTHSTATUS: non-secure non-invasive debug as `extauth`
 * says, secure non-invasive enabled, invasive not implemented. */
uint32_t dpmu_ext_authstatus(bool extauth);

/* Core PMU: reset values, and the filters after an EL or PMEVTYPER change. */
void dpmu_pmu_reset(struct dpmu_core *c);
void dpmu_pmu_refresh(struct dpmu_core *c);
/* AMU: reset values, and counting. */
void dpmu_amu_reset(struct dpmu_core *c, const struct dpmu_profile *p);
void dpmu_amu_event(struct dpmu_core *c, uint16_t event, uint64_t n);
/* Whether dpmu_amu_event(c, event, n > 0) would change a counter. */
bool dpmu_amu_counts(const struct dpmu_core *c, uint16_t event);
void dpmu_amu_cycles(struct dpmu_core *c, const struct dpmu_profile *p, uint64_t k);
/* Cluster PMU: reset values and `allowed` mask after an event-type change. */
void dpmu_clusterpmu_reset(struct dpmu_cluster *cl);
void dpmu_clusterpmu_refresh(struct dpmu_cluster *cl);

/* A 64-bit register with one 32-bit word of an external write replaced
 * (word 1: bits [63:32]). */
static inline uint64_t dpmu_set_word(uint64_t old, unsigned word, uint32_t v)
{
	return word ? (old & 0xffffffffull) | ((uint64_t)v << 32) : (old & ~0xffffffffull) | v;
}

/* Exception level and security of the access, for trap checks. */
static inline bool dpmu_core_secure(const struct dpmu_core *c)
{
	return c->sec == DPMU_SECURE;
}

#endif
