/*
 * Driver lifetime, discovery, and the register accesses every operation goes
 * through, with messages that say which register on which cpu or frame was
 * refused and by which rule.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "driver/drv_internal.h"
#include "dynpmu/ext32.h"

/* ---- messages --------------------------------------------------------- */

/* Names of the registers the driver touches, for its messages. The driver
 * layer links against nothing but regio (DESIGN.md), so it keeps this small
 * table instead of calling dpmu_sysreg_name() in src/arch. */
static const struct {
	uint32_t enc;
	const char *name;
} reg_names[] = {
	{ R_MIDR_EL1, "MIDR_EL1" },
	{ R_MPIDR_EL1, "MPIDR_EL1" },
	{ R_PMCR_EL0, "PMCR_EL0" },
	{ R_PMCNTENSET_EL0, "PMCNTENSET_EL0" },
	{ R_PMCNTENCLR_EL0, "PMCNTENCLR_EL0" },
	{ R_PMOVSCLR_EL0, "PMOVSCLR_EL0" },
	{ R_PMSWINC_EL0, "PMSWINC_EL0" },
	{ R_PMSELR_EL0, "PMSELR_EL0" },
	{ R_PMCEID0_EL0, "PMCEID0_EL0" },
	{ R_PMCEID1_EL0, "PMCEID1_EL0" },
	{ R_PMCCNTR_EL0, "PMCCNTR_EL0" },
	{ R_PMXEVTYPER_EL0, "PMXEVTYPER_EL0" },
	{ R_PMXEVCNTR_EL0, "PMXEVCNTR_EL0" },
	{ R_PMUSERENR_EL0, "PMUSERENR_EL0" },
	{ R_PMOVSSET_EL0, "PMOVSSET_EL0" },
	{ R_PMINTENSET_EL1, "PMINTENSET_EL1" },
	{ R_PMINTENCLR_EL1, "PMINTENCLR_EL1" },
	{ R_PMCCFILTR_EL0, "PMCCFILTR_EL0" },
	{ R_CLUSTERPMCR_EL1, "CLUSTERPMCR_EL1" },
	{ R_CLUSTERPMCNTENSET_EL1, "CLUSTERPMCNTENSET_EL1" },
	{ R_CLUSTERPMCNTENCLR_EL1, "CLUSTERPMCNTENCLR_EL1" },
	{ R_CLUSTERPMOVSSET_EL1, "CLUSTERPMOVSSET_EL1" },
	{ R_CLUSTERPMOVSCLR_EL1, "CLUSTERPMOVSCLR_EL1" },
	{ R_CLUSTERPMSELR_EL1, "CLUSTERPMSELR_EL1" },
	{ R_CLUSTERPMINTENSET_EL1, "CLUSTERPMINTENSET_EL1" },
	{ R_CLUSTERPMINTENCLR_EL1, "CLUSTERPMINTENCLR_EL1" },
	{ R_CLUSTERPMCCNTR_EL1, "CLUSTERPMCCNTR_EL1" },
	{ R_CLUSTERPMXEVTYPER_EL1, "CLUSTERPMXEVTYPER_EL1" },
	{ R_CLUSTERPMXEVCNTR_EL1, "CLUSTERPMXEVCNTR_EL1" },
	{ R_CLUSTERPMCEID0_EL1, "CLUSTERPMCEID0_EL1" },
	{ R_CLUSTERPMCEID1_EL1, "CLUSTERPMCEID1_EL1" },
	{ R_AMCGCR_EL0, "AMCGCR_EL0" },
	{ R_AMCNTENCLR0_EL0, "AMCNTENCLR0_EL0" },
	{ R_AMCNTENSET0_EL0, "AMCNTENSET0_EL0" },
	{ R_AMCNTENCLR1_EL0, "AMCNTENCLR1_EL0" },
	{ R_AMCNTENSET1_EL0, "AMCNTENSET1_EL0" },
};

/* Register arrays: base encoding of element 0 (n = CRm[1:0]:op2). */
static const struct {
	uint32_t enc0;
	unsigned count;
	const char *fmt;
} reg_arrays[] = {
	{ R_PMEVCNTR_EL0(0), 31, "PMEVCNTR%u_EL0" },
	{ R_PMEVTYPER_EL0(0), 31, "PMEVTYPER%u_EL0" },
	{ R_AMEVCNTR0_EL0(0), 16, "AMEVCNTR0%u_EL0" },
	{ R_AMEVTYPER0_EL0(0), 16, "AMEVTYPER0%u_EL0" },
	{ R_AMEVCNTR1_EL0(0), 16, "AMEVCNTR1%u_EL0" },
	{ R_AMEVTYPER1_EL0(0), 16, "AMEVTYPER1%u_EL0" },
};

static const char *reg_name(uint32_t enc, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof reg_names / sizeof reg_names[0]; i++)
		if (reg_names[i].enc == enc)
			return reg_names[i].name;
	for (size_t i = 0; i < sizeof reg_arrays / sizeof reg_arrays[0]; i++) {
		/* CRm:op2 are the low bits: element n is enc0 + n. */
		uint32_t n = enc - reg_arrays[i].enc0;
		if (enc >= reg_arrays[i].enc0 && n < reg_arrays[i].count) {
			snprintf(buf, len, reg_arrays[i].fmt, (unsigned)n);
			return buf;
		}
	}
	/* The generic assembler spelling for an encoding without a name. */
	snprintf(buf, len, "S%u_%u_C%u_C%u_%u", DPMU_SYSREG_OP0(enc), DPMU_SYSREG_OP1(enc),
		 DPMU_SYSREG_CRN(enc), DPMU_SYSREG_CRM(enc), DPMU_SYSREG_OP2(enc));
	return buf;
}

/* Register groups for trap explanations. */
enum grp { G_CCNT, G_EVCNT, G_SWINC, G_PMCR, G_PMU, G_AMU, G_CLUSTER, G_OTHER };

static enum grp reg_group(uint32_t enc)
{
	unsigned op0 = DPMU_SYSREG_OP0(enc), op1 = DPMU_SYSREG_OP1(enc);
	unsigned crn = DPMU_SYSREG_CRN(enc), crm = DPMU_SYSREG_CRM(enc);
	if (op0 != 3)
		return G_OTHER;
	if (enc == R_PMCCNTR_EL0)
		return G_CCNT;
	if (enc == R_PMXEVCNTR_EL0 || enc == R_PMSELR_EL0 ||
	    (op1 == 3 && crn == 14 && crm >= 8 && crm <= 11))
		return G_EVCNT;
	if (enc == R_PMSWINC_EL0)
		return G_SWINC;
	if (enc == R_PMCR_EL0)
		return G_PMCR;
	if ((crn == 9 && (op1 == 3 || op1 == 0) && crm >= 12) || (op1 == 3 && crn == 14))
		return G_PMU;
	if (op1 == 3 && crn == 13 && crm >= 2)
		return G_AMU;
	if (op1 == 0 && crn == 15 && (crm == 5 || crm == 6))
		return G_CLUSTER;
	return G_OTHER;
}

/* Why an access traps to a given EL: the enable or trap control that decides
 * it (Arm ARM D13.x PMUSERENR_EL0, MDCR_EL2/EL3.TPM/TPMCR, AMUSERENR_EL0,
 * CPTR_EL2/EL3.TAM; DSU TRM ACTLR_EL2/EL3.CLUSTERPMUEN). */
struct trap_why {
	enum grp grp;
	unsigned el;
	const char *read_why;
	const char *write_why;
};

static const struct trap_why trap_whys[] = {
	{ G_CCNT, 1, "EL0 access needs PMUSERENR_EL0.EN or .CR", "EL0 writes need PMUSERENR_EL0.EN" },
	{ G_EVCNT, 1, "EL0 access needs PMUSERENR_EL0.EN or .ER", "EL0 writes need PMUSERENR_EL0.EN" },
	{ G_SWINC, 1, "EL0 access needs PMUSERENR_EL0.EN", "EL0 access needs PMUSERENR_EL0.EN or .SW" },
	{ G_PMCR, 1, "EL0 access needs PMUSERENR_EL0.EN", "EL0 access needs PMUSERENR_EL0.EN" },
	{ G_PMU, 1, "EL0 access needs PMUSERENR_EL0.EN", "EL0 access needs PMUSERENR_EL0.EN" },
	{ G_PMCR, 2, "MDCR_EL2.TPM or MDCR_EL2.TPMCR is set", "MDCR_EL2.TPM or MDCR_EL2.TPMCR is set" },
	{ G_CCNT, 2, "MDCR_EL2.TPM is set", "MDCR_EL2.TPM is set" },
	{ G_EVCNT, 2, "MDCR_EL2.TPM is set", "MDCR_EL2.TPM is set" },
	{ G_SWINC, 2, "MDCR_EL2.TPM is set", "MDCR_EL2.TPM is set" },
	{ G_PMU, 2, "MDCR_EL2.TPM is set", "MDCR_EL2.TPM is set" },
	{ G_PMCR, 3, "MDCR_EL3.TPM is set", "MDCR_EL3.TPM is set" },
	{ G_CCNT, 3, "MDCR_EL3.TPM is set", "MDCR_EL3.TPM is set" },
	{ G_EVCNT, 3, "MDCR_EL3.TPM is set", "MDCR_EL3.TPM is set" },
	{ G_SWINC, 3, "MDCR_EL3.TPM is set", "MDCR_EL3.TPM is set" },
	{ G_PMU, 3, "MDCR_EL3.TPM is set", "MDCR_EL3.TPM is set" },
	{ G_AMU, 1, "EL0 access needs AMUSERENR_EL0.EN", "EL0 access needs AMUSERENR_EL0.EN" },
	{ G_AMU, 2, "CPTR_EL2.TAM is set", "CPTR_EL2.TAM is set" },
	{ G_AMU, 3, "CPTR_EL3.TAM is set", "CPTR_EL3.TAM is set" },
	{ G_CLUSTER, 2, "ACTLR_EL2.CLUSTERPMUEN is clear", "ACTLR_EL2.CLUSTERPMUEN is clear" },
	{ G_CLUSTER, 3, "ACTLR_EL3.CLUSTERPMUEN is clear", "ACTLR_EL3.CLUSTERPMUEN is clear" },
};

static const char *trap_reason(uint32_t enc, bool write, unsigned el)
{
	enum grp g = reg_group(enc);
	for (size_t i = 0; i < sizeof trap_whys / sizeof trap_whys[0]; i++)
		if (trap_whys[i].grp == g && trap_whys[i].el == el)
			return write ? trap_whys[i].write_why : trap_whys[i].read_why;
	return NULL;
}

static int sys_fail(unsigned cpu, uint32_t enc, bool write, int rc, unsigned el,
		    struct dpmu_err *err)
{
	char buf[32];
	const char *name = reg_name(enc, buf, sizeof buf);
	const char *op = write ? "write of " : "";
	if (rc == DPMU_REGIO_TRAP) {
		const char *why = trap_reason(enc, write, el);
		if (why)
			return dpmu_err_set(err, DPMU_ESTATE, "%s%s on cpu%u: trapped to EL%u (%s)",
					    op, name, cpu, el, why);
		return dpmu_err_set(err, DPMU_ESTATE, "%s%s on cpu%u: trapped to EL%u", op, name,
				    cpu, el);
	}
	if (rc == DPMU_REGIO_UNDEF) {
		size_t len = strlen(name);
		const char *why = len > 4 && strcmp(name + len - 4, "_EL1") == 0
					  ? "EL1 registers are UNDEFINED at EL0"
					  : "not implemented by this core at its current EL";
		return dpmu_err_set(err, DPMU_ESTATE, "%s%s on cpu%u: UNDEFINED (%s)", op, name, cpu,
				    why);
	}
	return dpmu_err_set(err, DPMU_EIO, "%s%s on cpu%u: the access failed (no such cpu)", op,
			    name, cpu);
}

int dpmu_drv_check_cpu(const struct dpmu_drv *d, unsigned cpu, struct dpmu_err *err)
{
	if (cpu >= d->ncpus)
		return dpmu_err_set(err, DPMU_EINVAL, "no cpu%u: the system has cpu0-cpu%u", cpu,
				    d->ncpus - 1);
	return 0;
}

int dpmu_drv_check_cluster(const struct dpmu_drv *d, unsigned cluster, struct dpmu_err *err)
{
	if (cluster >= d->nclusters)
		return dpmu_err_set(err, DPMU_EINVAL, "no cluster%u: the system has cluster0-cluster%u",
				    cluster, d->nclusters - 1);
	return 0;
}

int dpmu_drv_rd(struct dpmu_drv *d, unsigned cpu, uint32_t enc, uint64_t *v, struct dpmu_err *err)
{
	unsigned el = 0;
	*v = 0;
	int rc = d->io->ops->sysread(d->io->ctx, cpu, enc, v, &el);
	return rc == DPMU_REGIO_OK ? 0 : sys_fail(cpu, enc, false, rc, el, err);
}

int dpmu_drv_wr(struct dpmu_drv *d, unsigned cpu, uint32_t enc, uint64_t v, struct dpmu_err *err)
{
	unsigned el = 0;
	int rc = d->io->ops->syswrite(d->io->ctx, cpu, enc, v, &el);
	return rc == DPMU_REGIO_OK ? 0 : sys_fail(cpu, enc, true, rc, el, err);
}

int dpmu_drv_sysread(struct dpmu_drv *d, unsigned cpu, uint32_t enc, uint64_t *value,
		     struct dpmu_err *err)
{
	int rc = dpmu_drv_check_cpu(d, cpu, err);
	return rc ? rc : dpmu_drv_rd(d, cpu, enc, value, err);
}

int dpmu_drv_syswrite(struct dpmu_drv *d, unsigned cpu, uint32_t enc, uint64_t value,
		      struct dpmu_err *err)
{
	int rc = dpmu_drv_check_cpu(d, cpu, err);
	return rc ? rc : dpmu_drv_wr(d, cpu, enc, value, err);
}

int dpmu_drv_check_index(unsigned n, unsigned i, bool cycle_ok, const char *unit, unsigned idx,
			 const char *pmcr, struct dpmu_err *err)
{
	if ((cycle_ok && i == DPMU_DRV_CYCLE) || i < n)
		return 0;
	return dpmu_err_set(err, DPMU_ERANGE, "counter %u on %s%u: %s.N is %u (event counters 0-%u%s)",
			    i, unit, idx, pmcr, n, n ? n - 1 : 0, cycle_ok ? ", cycle counter 31" : "");
}

int dpmu_drv_check_mask(unsigned n, uint32_t mask, const char *unit, unsigned idx,
			const char *pmcr, struct dpmu_err *err)
{
	uint32_t ok = (n >= 31 ? 0x7fffffffu : (1u << n) - 1) | DPMU_DRV_CYCLE_BIT;
	if (!(mask & ~ok))
		return 0;
	return dpmu_err_set(err, DPMU_ERANGE,
			    "counter mask 0x%08x on %s%u: bits 0x%08x name no counter "
			    "(%s.N is %u; bit 31 is the cycle counter)",
			    mask, unit, idx, mask & ~ok, pmcr, n);
}

const char *dpmu_drv_frame_kind(struct dpmu_drv_frame f)
{
	return f.kind == DPMU_REGIO_FRAME_CORE ? "cpu" : f.kind == DPMU_REGIO_FRAME_ETM ? "etm"
										 : "cluster";
}

static int check_frame(const struct dpmu_drv *d, struct dpmu_drv_frame f, uint32_t offset,
		       struct dpmu_err *err)
{
	if (f.kind != DPMU_REGIO_FRAME_CORE && f.kind != DPMU_REGIO_FRAME_CLUSTER &&
	    f.kind != DPMU_REGIO_FRAME_ETM)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "frame kind %d: an external frame is a core's (%d), a cluster's (%d) "
				    "or a trace unit's (%d)",
				    (int)f.kind, DPMU_REGIO_FRAME_CORE, DPMU_REGIO_FRAME_CLUSTER,
				    DPMU_REGIO_FRAME_ETM);
	unsigned have = f.kind == DPMU_REGIO_FRAME_CLUSTER ? d->nclusters : d->ncpus;
	if (f.index >= have)
		return dpmu_err_set(err, DPMU_EINVAL, "no %s%u frame: the system has %s0-%s%u",
				    dpmu_drv_frame_kind(f), f.index, dpmu_drv_frame_kind(f),
				    dpmu_drv_frame_kind(f), have - 1);
	if (offset >= DPMU_EXT_FRAME_SIZE || (offset & 3))
		return dpmu_err_set(err, DPMU_EINVAL,
				    "offset 0x%x: external accesses are 32-bit, 4-byte aligned, below 0x%x",
				    offset, DPMU_EXT_FRAME_SIZE);
	return 0;
}

static int ext_fail(struct dpmu_drv_frame f, uint32_t offset, bool write, struct dpmu_err *err)
{
	char buf[32];
	bool etm = f.kind == DPMU_REGIO_FRAME_ETM;
	/* (the driver keeps no trace register names: the offset says it) */
	const char *name = etm ? "trace unit register" : dpmu_ext_name(offset, buf, sizeof buf);
	/* The external access rule (reference section 2): IsCorePowered(),
	 * !DoubleLockStatus(), !OSLockStatus(), AllowExternalPMUAccess(); the
	 * trace unit's frame has its own OS lock (TRCOSLAR). */
	return dpmu_err_set(err, DPMU_EIO,
			    "%s%s (offset 0x%03x) in the %s%u frame: external access refused (the "
			    "access rule needs the %s powered, %s and OS double lock clear, and "
			    "external %s access allowed by the authentication signals)",
			    write ? "write of " : "", name ? name : "unmapped word", offset,
			    dpmu_drv_frame_kind(f), f.index,
			    f.kind == DPMU_REGIO_FRAME_CLUSTER ? "cluster" : "core",
			    etm ? "the trace unit's OS lock (TRCOSLAR)" : "OS lock",
			    etm ? "trace" : "PMU");
}

int dpmu_drv_extread(struct dpmu_drv *d, struct dpmu_drv_frame f, uint32_t offset,
		     uint32_t *value, struct dpmu_err *err)
{
	*value = 0;
	int rc = check_frame(d, f, offset, err);
	if (rc)
		return rc;
	if (d->io->ops->extread(d->io->ctx, f.kind, f.index, offset, value) != DPMU_REGIO_OK)
		return ext_fail(f, offset, false, err);
	return 0;
}

int dpmu_drv_extwrite(struct dpmu_drv *d, struct dpmu_drv_frame f, uint32_t offset,
		      uint32_t value, struct dpmu_err *err)
{
	int rc = check_frame(d, f, offset, err);
	if (rc)
		return rc;
	if (d->io->ops->extwrite(d->io->ctx, f.kind, f.index, offset, value) != DPMU_REGIO_OK)
		return ext_fail(f, offset, true, err);
	return 0;
}

/* ---- lifetime and discovery ---------------------------------------------- */

static int discover_cpu(struct dpmu_drv *d, unsigned cpu, struct dpmu_err *err)
{
	struct dpmu_drv_cpuinfo *ci = &d->cpus[cpu];
	uint64_t pmcr, v;
	int rc;
	if ((rc = dpmu_drv_rd(d, cpu, R_MIDR_EL1, &ci->midr, err)) ||
	    (rc = dpmu_drv_rd(d, cpu, R_MPIDR_EL1, &ci->mpidr, err)) ||
	    (rc = dpmu_drv_rd(d, cpu, R_PMCR_EL0, &pmcr, err)) ||
	    (rc = dpmu_drv_rd(d, cpu, R_PMCEID0_EL0, &ci->pmceid0, err)) ||
	    (rc = dpmu_drv_rd(d, cpu, R_PMCEID1_EL0, &ci->pmceid1, err)))
		return rc;
	/* DynamIQ: one thread per core, Aff1 = core, Aff2 = cluster. */
	ci->core = (unsigned)(ci->mpidr >> 8) & 0xff;
	ci->cluster = (unsigned)(ci->mpidr >> 16) & 0xff;
	ci->pmu_n = (unsigned)(pmcr >> 11) & 0x1f;
	ci->pmcr_idcode = (uint8_t)(pmcr >> 16);
	ci->pmcr_imp = (uint8_t)(pmcr >> 24);
	if (ci->cluster >= d->nclusters)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "cpu%u: MPIDR_EL1 0x%" PRIx64 " names cluster %u, but the system "
				    "has %u cluster(s)",
				    cpu, ci->mpidr, ci->cluster, d->nclusters);
	/* No AMU (FEAT_AMUv1 absent, or trapped away): AMCGCR_EL0 is not
	 * readable. Not a discovery failure; AMU calls report it. */
	struct dpmu_err ignored;
	if (dpmu_drv_rd(d, cpu, R_AMCGCR_EL0, &v, &ignored) == 0) {
		ci->amu = true;
		ci->amu_cg0nc = (unsigned)v & 0xff;
		ci->amu_cg1nc = (unsigned)(v >> 8) & 0xff;
	}
	return 0;
}

static int discover_cluster(struct dpmu_drv *d, unsigned cl, struct dpmu_err *err)
{
	struct dpmu_drv_clusterinfo *ki = &d->clusters[cl];
	bool found = false;
	for (unsigned c = 0; c < d->ncpus; c++) {
		if (d->cpus[c].cluster != cl)
			continue;
		if (!found)
			ki->cpu = c;
		found = true;
		ki->ncpus++;
	}
	if (!found)
		return dpmu_err_set(err, DPMU_EINVAL, "cluster%u: no cpu reports it in MPIDR_EL1.Aff2",
				    cl);
	uint64_t pmcr;
	int rc;
	if ((rc = dpmu_drv_rd(d, ki->cpu, R_CLUSTERPMCR_EL1, &pmcr, err)) ||
	    (rc = dpmu_drv_rd(d, ki->cpu, R_CLUSTERPMCEID0_EL1, &ki->pmceid0, err)) ||
	    (rc = dpmu_drv_rd(d, ki->cpu, R_CLUSTERPMCEID1_EL1, &ki->pmceid1, err)))
		return rc;
	ki->pmu_n = (unsigned)(pmcr >> 11) & 0x1f;
	return 0;
}

int dpmu_drv_create(const struct dpmu_regio *io, struct dpmu_drv **out, struct dpmu_err *err)
{
	*out = NULL;
	if (!io || !io->ops || !io->ops->sysread || !io->ops->syswrite || !io->ops->extread ||
	    !io->ops->extwrite)
		return dpmu_err_set(err, DPMU_EINVAL, "driver: the register-access interface is incomplete");
	if (io->ncpus == 0 || io->nclusters == 0)
		return dpmu_err_set(err, DPMU_EINVAL, "driver: %u cpus and %u clusters (need at least one each)",
				    io->ncpus, io->nclusters);
	struct dpmu_drv *d = calloc(1, sizeof *d);
	if (d) {
		d->cpus = calloc(io->ncpus, sizeof *d->cpus);
		d->clusters = calloc(io->nclusters, sizeof *d->clusters);
	}
	if (!d || !d->cpus || !d->clusters) {
		dpmu_drv_destroy(d);
		return dpmu_err_set(err, DPMU_ENOMEM, "driver: out of memory");
	}
	d->io = io;
	d->ncpus = io->ncpus;
	d->nclusters = io->nclusters;
	d->access = DPMU_DRV_DIRECT;
	d->max_polls = DPMU_DRV_SNAPSHOT_POLLS;
	int rc = 0;
	for (unsigned c = 0; c < d->ncpus && !rc; c++)
		rc = discover_cpu(d, c, err);
	for (unsigned k = 0; k < d->nclusters && !rc; k++)
		rc = discover_cluster(d, k, err);
	if (rc) {
		dpmu_drv_destroy(d);
		return rc;
	}
	*out = d;
	return 0;
}

void dpmu_drv_destroy(struct dpmu_drv *d)
{
	if (!d)
		return;
	free(d->cpus);
	free(d->clusters);
	free(d);
}

unsigned dpmu_drv_ncpus(const struct dpmu_drv *d)
{
	return d->ncpus;
}

unsigned dpmu_drv_nclusters(const struct dpmu_drv *d)
{
	return d->nclusters;
}

const struct dpmu_drv_cpuinfo *dpmu_drv_cpuinfo(const struct dpmu_drv *d, unsigned cpu)
{
	return cpu < d->ncpus ? &d->cpus[cpu] : NULL;
}

const struct dpmu_drv_clusterinfo *dpmu_drv_clusterinfo(const struct dpmu_drv *d, unsigned cluster)
{
	return cluster < d->nclusters ? &d->clusters[cluster] : NULL;
}

/* PMCEID0[31:0] events 0x00-0x1F, PMCEID1[31:0] 0x20-0x3F, PMCEID0[63:32]
 * 0x4000-0x401F, PMCEID1[63:32] 0x4020-0x403F (reference section 1). */
static enum dpmu_drv_event_status ceid_lookup(uint64_t ceid0, uint64_t ceid1, uint16_t ev)
{
	unsigned base;
	if (ev < 0x40)
		base = 0;
	else if (ev >= 0x4000 && ev < 0x4040)
		base = 32, ev = (uint16_t)(ev - 0x4000);
	else
		return DPMU_DRV_EVENT_UNKNOWN;
	uint64_t word = ev < 0x20 ? ceid0 : ceid1;
	return ((word >> (base + (ev & 0x1f))) & 1) ? DPMU_DRV_EVENT_YES : DPMU_DRV_EVENT_NO;
}

enum dpmu_drv_event_status dpmu_drv_cpu_event(const struct dpmu_drv *d, unsigned cpu, uint16_t event)
{
	if (cpu >= d->ncpus)
		return DPMU_DRV_EVENT_NO;
	return ceid_lookup(d->cpus[cpu].pmceid0, d->cpus[cpu].pmceid1, event);
}

enum dpmu_drv_event_status dpmu_drv_cluster_event(const struct dpmu_drv *d, unsigned cluster,
						  uint16_t event)
{
	if (cluster >= d->nclusters)
		return DPMU_DRV_EVENT_NO;
	return ceid_lookup(d->clusters[cluster].pmceid0, d->clusters[cluster].pmceid1, event);
}

void dpmu_drv_set_access(struct dpmu_drv *d, enum dpmu_drv_access how)
{
	d->access = how;
}

int dpmu_drv_cluster_set_cpu(struct dpmu_drv *d, unsigned cluster, unsigned cpu,
			     struct dpmu_err *err)
{
	int rc;
	if ((rc = dpmu_drv_check_cluster(d, cluster, err)) || (rc = dpmu_drv_check_cpu(d, cpu, err)))
		return rc;
	if (d->cpus[cpu].cluster != cluster)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "cpu%u is in cluster%u: it cannot reach cluster%u's CLUSTERPM* registers",
				    cpu, d->cpus[cpu].cluster, cluster);
	d->clusters[cluster].cpu = cpu;
	return 0;
}

void dpmu_drv_set_wait(struct dpmu_drv *d, void (*wait)(void *ctx, unsigned poll), void *ctx)
{
	d->wait = wait;
	d->wait_ctx = ctx;
}

void dpmu_drv_set_snapshot_polls(struct dpmu_drv *d, unsigned polls)
{
	d->max_polls = polls ? polls : DPMU_DRV_SNAPSHOT_POLLS;
}

int dpmu_drv_read_pair(struct dpmu_drv *d, unsigned unit, unsigned even,
		       int (*read)(struct dpmu_drv *, unsigned, unsigned, uint64_t *,
				   struct dpmu_err *),
		       uint64_t *value, struct dpmu_err *err)
{
	uint64_t hi, lo, hi2;
	int rc;
	if ((rc = read(d, unit, even + 1, &hi, err)) || (rc = read(d, unit, even, &lo, err)) ||
	    (rc = read(d, unit, even + 1, &hi2, err)))
		return rc;
	/* The low half wrapped between the reads: its new value belongs with
	 * the second high read. */
	if ((hi2 & 0xffffffffu) != (hi & 0xffffffffu)) {
		if ((rc = read(d, unit, even, &lo, err)))
			return rc;
		hi = hi2;
	}
	*value = ((hi & 0xffffffffu) << 32) | (lo & 0xffffffffu);
	return 0;
}

uint32_t dpmu_drv_filter_bits(unsigned els)
{
	/* Non-secure with NSU = NSK = 0: EL0 is filtered by U, EL1 by P, EL2
	 * counted when NSH = 1 (reference section 1, filtering rule). */
	uint32_t bits = 0;
	if (!(els & DPMU_DRV_EL0))
		bits |= EVTYPER_U;
	if (!(els & DPMU_DRV_EL1))
		bits |= EVTYPER_P;
	if (els & DPMU_DRV_EL2)
		bits |= EVTYPER_NSH;
	return bits;
}
