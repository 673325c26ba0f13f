/*
 * Names of the system registers the model implements, as the Arm ARM writes
 * them, and their (op0, op1, CRn, CRm, op2) encodings: one table, no code
 * per register. Sources: reference sections 1 (core PMU), 3 (cluster PMU),
 * 4 (AMU) and the Arm ARM register descriptions of the EL2/EL3 controls.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arch/arch_internal.h"

#define R(name, op0, op1, crn, crm, op2) {name, DPMU_SYSREG(op0, op1, crn, crm, op2)}

/* PMEVCNTR<n>_EL0 = 3,3,14,(8+(n>>3)),(n&7); PMEVTYPER<n>_EL0 = 3,3,14,(12+(n>>3)),(n&7) */
#define PMEV(n)                                                                \
	R("PMEVCNTR" #n "_EL0", 3, 3, 14, 8 + ((n) >> 3), (n) & 7),            \
	R("PMEVTYPER" #n "_EL0", 3, 3, 14, 12 + ((n) >> 3), (n) & 7)
/* AMEVCNTR0<n>_EL0 = 3,3,13,4+(n>>3),n&7 and AMEVTYPER0<n>_EL0 = 3,3,13,6+..;
 * group 1: CRm 12+ and 14+. n is written in decimal: AMEVCNTR012_EL0 is
 * group 0 counter 12, AMEVCNTR12_EL0 group 1 counter 2. */
#define AMEV(n)                                                                \
	R("AMEVCNTR0" #n "_EL0", 3, 3, 13, 4 + ((n) >> 3), (n) & 7),           \
	R("AMEVTYPER0" #n "_EL0", 3, 3, 13, 6 + ((n) >> 3), (n) & 7),          \
	R("AMEVCNTR1" #n "_EL0", 3, 3, 13, 12 + ((n) >> 3), (n) & 7),          \
	R("AMEVTYPER1" #n "_EL0", 3, 3, 13, 14 + ((n) >> 3), (n) & 7)

/* A trace unit register by its frame offset (dpmu_etm_sysreg_enc). */
#define ETM(name, off)                                                         \
	R(name, 2, 1, ((off) >> 9) & 7, ((off) >> 2) & 15, ((off) >> 6) & 7)

static const struct dpmu_sysreg_desc sysregs[] = {
	/* Core PMU, reference section 1 */
	R("PMCR_EL0", 3, 3, 9, 12, 0),
	R("PMCNTENSET_EL0", 3, 3, 9, 12, 1),
	R("PMCNTENCLR_EL0", 3, 3, 9, 12, 2),
	R("PMOVSCLR_EL0", 3, 3, 9, 12, 3),
	R("PMSWINC_EL0", 3, 3, 9, 12, 4),
	R("PMSELR_EL0", 3, 3, 9, 12, 5),
	R("PMCEID0_EL0", 3, 3, 9, 12, 6),
	R("PMCEID1_EL0", 3, 3, 9, 12, 7),
	R("PMCCNTR_EL0", 3, 3, 9, 13, 0),
	R("PMXEVTYPER_EL0", 3, 3, 9, 13, 1),
	R("PMXEVCNTR_EL0", 3, 3, 9, 13, 2),
	R("PMUSERENR_EL0", 3, 3, 9, 14, 0),
	R("PMINTENSET_EL1", 3, 0, 9, 14, 1),
	R("PMINTENCLR_EL1", 3, 0, 9, 14, 2),
	R("PMOVSSET_EL0", 3, 3, 9, 14, 3),
	R("PMMIR_EL1", 3, 0, 9, 14, 6),
	PMEV(0), PMEV(1), PMEV(2), PMEV(3), PMEV(4), PMEV(5), PMEV(6), PMEV(7),
	PMEV(8), PMEV(9), PMEV(10), PMEV(11), PMEV(12), PMEV(13), PMEV(14), PMEV(15),
	PMEV(16), PMEV(17), PMEV(18), PMEV(19), PMEV(20), PMEV(21), PMEV(22), PMEV(23),
	PMEV(24), PMEV(25), PMEV(26), PMEV(27), PMEV(28), PMEV(29), PMEV(30),
	R("PMCCFILTR_EL0", 3, 3, 14, 15, 7),

	/* Activity Monitors, reference section 4 */
	R("AMCR_EL0", 3, 3, 13, 2, 0),
	R("AMCFGR_EL0", 3, 3, 13, 2, 1),
	R("AMCGCR_EL0", 3, 3, 13, 2, 2),
	R("AMUSERENR_EL0", 3, 3, 13, 2, 3),
	R("AMCNTENCLR0_EL0", 3, 3, 13, 2, 4),
	R("AMCNTENSET0_EL0", 3, 3, 13, 2, 5),
	R("AMCNTENCLR1_EL0", 3, 3, 13, 3, 0),
	R("AMCNTENSET1_EL0", 3, 3, 13, 3, 1),
	AMEV(0), AMEV(1), AMEV(2), AMEV(3), AMEV(4), AMEV(5), AMEV(6), AMEV(7),
	AMEV(8), AMEV(9), AMEV(10), AMEV(11), AMEV(12), AMEV(13), AMEV(14), AMEV(15),

	/* DSU cluster PMU, reference section 3: 3,0,15,CRm,op2 */
	R("CLUSTERPMCR_EL1", 3, 0, 15, 5, 0),
	R("CLUSTERPMCNTENSET_EL1", 3, 0, 15, 5, 1),
	R("CLUSTERPMCNTENCLR_EL1", 3, 0, 15, 5, 2),
	R("CLUSTERPMOVSSET_EL1", 3, 0, 15, 5, 3),
	R("CLUSTERPMOVSCLR_EL1", 3, 0, 15, 5, 4),
	R("CLUSTERPMSELR_EL1", 3, 0, 15, 5, 5),
	R("CLUSTERPMINTENSET_EL1", 3, 0, 15, 5, 6),
	R("CLUSTERPMINTENCLR_EL1", 3, 0, 15, 5, 7),
	R("CLUSTERPMCCNTR_EL1", 3, 0, 15, 6, 0),
	R("CLUSTERPMXEVTYPER_EL1", 3, 0, 15, 6, 1),
	R("CLUSTERPMXEVCNTR_EL1", 3, 0, 15, 6, 2),
	R("CLUSTERPMMDCR_EL1", 3, 0, 15, 6, 3),
	R("CLUSTERPMCEID0_EL1", 3, 0, 15, 6, 4),
	R("CLUSTERPMCEID1_EL1", 3, 0, 15, 6, 5),

	/* Identification and the EL2/EL3 controls the model uses (Arm ARM
	 * D19: MDCR_ELx trap/enable PMU access, CPTR_ELx.TAM traps AMU access,
	 * ACTLR_ELx.CLUSTERPMUEN grants the cluster PMU) */
	R("MIDR_EL1", 3, 0, 0, 0, 0),
	R("MPIDR_EL1", 3, 0, 0, 0, 5),
	R("ACTLR_EL2", 3, 4, 1, 0, 1),
	R("MDCR_EL2", 3, 4, 1, 1, 1),
	R("CPTR_EL2", 3, 4, 1, 1, 2),
	R("ACTLR_EL3", 3, 6, 1, 0, 1),
	R("CPTR_EL3", 3, 6, 1, 1, 2),
	R("MDCR_EL3", 3, 6, 1, 3, 1),
	/* Trace unit (ETMv4, IHI 0064): 2,1,offset[11:9],offset[5:2],offset[8:6]
	 * for the registers that have a System register encoding */
	ETM("TRCPRGCTLR", 0x004), ETM("TRCSTATR", 0x00C), ETM("TRCCONFIGR", 0x010),
	ETM("TRCAUXCTLR", 0x018), ETM("TRCEVENTCTL0R", 0x020), ETM("TRCEVENTCTL1R", 0x024),
	ETM("TRCSTALLCTLR", 0x02C), ETM("TRCTSCTLR", 0x030), ETM("TRCSYNCPR", 0x034),
	ETM("TRCCCCTLR", 0x038), ETM("TRCBBCTLR", 0x03C), ETM("TRCTRACEIDR", 0x040),
	ETM("TRCVICTLR", 0x080), ETM("TRCVIIECTLR", 0x084), ETM("TRCVISSCTLR", 0x088),
	ETM("TRCEXTINSELR", 0x120), ETM("TRCCNTRLDVR0", 0x140), ETM("TRCCNTCTLR0", 0x150),
	ETM("TRCCNTVR0", 0x160), ETM("TRCCNTRLDVR1", 0x144), ETM("TRCCNTCTLR1", 0x154),
	ETM("TRCCNTVR1", 0x164), ETM("TRCIDR8", 0x180), ETM("TRCIDR9", 0x184),
	ETM("TRCIDR10", 0x188), ETM("TRCIDR11", 0x18C), ETM("TRCIDR12", 0x190),
	ETM("TRCIDR13", 0x194), ETM("TRCIDR0", 0x1E0), ETM("TRCIDR1", 0x1E4),
	ETM("TRCIDR2", 0x1E8), ETM("TRCIDR3", 0x1EC), ETM("TRCIDR4", 0x1F0),
	ETM("TRCIDR5", 0x1F4), ETM("TRCIDR6", 0x1F8), ETM("TRCIDR7", 0x1FC),
	ETM("TRCRSCTLR2", 0x208), ETM("TRCRSCTLR3", 0x20C), ETM("TRCRSCTLR4", 0x210),
	ETM("TRCRSCTLR5", 0x214), ETM("TRCRSCTLR6", 0x218), ETM("TRCRSCTLR7", 0x21C),
	ETM("TRCRSCTLR8", 0x220), ETM("TRCRSCTLR9", 0x224), ETM("TRCRSCTLR10", 0x228),
	ETM("TRCRSCTLR11", 0x22C), ETM("TRCRSCTLR12", 0x230), ETM("TRCRSCTLR13", 0x234),
	ETM("TRCRSCTLR14", 0x238), ETM("TRCRSCTLR15", 0x23C), ETM("TRCOSLAR", 0x300),
	ETM("TRCOSLSR", 0x304), ETM("TRCPDCR", 0x310), ETM("TRCPDSR", 0x314),
	ETM("TRCACVR0", 0x400), ETM("TRCACVR1", 0x408), ETM("TRCACVR2", 0x410),
	ETM("TRCACVR3", 0x418), ETM("TRCACVR4", 0x420), ETM("TRCACVR5", 0x428),
	ETM("TRCACVR6", 0x430), ETM("TRCACVR7", 0x438), ETM("TRCACATR0", 0x480),
	ETM("TRCACATR1", 0x488), ETM("TRCACATR2", 0x490), ETM("TRCACATR3", 0x498),
	ETM("TRCACATR4", 0x4A0), ETM("TRCACATR5", 0x4A8), ETM("TRCACATR6", 0x4B0),
	ETM("TRCACATR7", 0x4B8), ETM("TRCCIDCVR0", 0x600), ETM("TRCVMIDCVR0", 0x640),
	ETM("TRCCIDCCTLR0", 0x680), ETM("TRCVMIDCCTLR0", 0x688), ETM("TRCITCTRL", 0xF00),
	ETM("TRCCLAIMSET", 0xFA0), ETM("TRCCLAIMCLR", 0xFA4), ETM("TRCAUTHSTATUS", 0xFB8),
	ETM("TRCDEVARCH", 0xFBC),
};

const struct dpmu_sysreg_desc *dpmu_sysreg_table(size_t *n)
{
	*n = sizeof sysregs / sizeof sysregs[0];
	return sysregs;
}

const char *dpmu_sysreg_name(uint32_t enc)
{
	for (size_t i = 0; i < sizeof sysregs / sizeof sysregs[0]; i++)
		if (sysregs[i].enc == enc)
			return sysregs[i].name;
	return NULL;
}

/* One decimal field of an encoding; *s advances past it. */
static int field(const char **s, unsigned max, const char *what, const char *text,
		 unsigned *out, struct dpmu_err *err)
{
	if (!isdigit((unsigned char)**s))
		return dpmu_err_set(err, DPMU_EINVAL,
				    "'%s': %s must be a decimal number (write op0:op1:CRn:CRm:op2, "
				    "e.g. 3:3:9:12:0)", text, what);
	char *end;
	errno = 0;
	unsigned long v = strtoul(*s, &end, 10);
	if (errno || v > max)
		return DPMU_ERANGE; /* the caller names the digits */
	*out = (unsigned)v;
	*s = end;
	return 0;
}

static const char *const field_names[5] = {"op0", "op1", "CRn", "CRm", "op2"};
static const unsigned field_max[5] = {3, 7, 15, 15, 7};

/* "3:3:9:12:0" (or the assembler's generic "S3_3_C9_C12_0"). */
static int parse_encoding(const char *text, uint32_t *enc, struct dpmu_err *err)
{
	unsigned f[5];
	const char *s = text;
	bool generic = (*s == 's' || *s == 'S');
	if (generic)
		s++;
	for (int i = 0; i < 5; i++) {
		if (generic && (i == 2 || i == 3)) {
			if (*s != 'c' && *s != 'C')
				return dpmu_err_set(err, DPMU_EINVAL,
						    "'%s': expected 'C' before %s (write "
						    "S<op0>_<op1>_C<n>_C<m>_<op2>)", text, field_names[i]);
			s++;
		}
		const char *start = s;
		int rc = field(&s, field_max[i], field_names[i], text, &f[i], err);
		if (rc) {
			if (rc == DPMU_ERANGE) {
				/* Name the digits the user wrote, not the rest of the text. */
				int len = (int)strspn(start, "0123456789");
				return dpmu_err_set(err, DPMU_ERANGE, "'%s': %s must be 0 to %u, got %.*s",
						    text, field_names[i], field_max[i], len, start);
			}
			return rc;
		}
		char sep = generic ? '_' : ':';
		if (i < 4) {
			if (*s != sep)
				return dpmu_err_set(err, DPMU_EINVAL,
						    "'%s': expected '%c' after %s (five fields: "
						    "op0:op1:CRn:CRm:op2)", text, sep, field_names[i]);
			s++;
		} else if (*s) {
			return dpmu_err_set(err, DPMU_EINVAL,
					    "'%s': unexpected '%s' after op2 (five fields: "
					    "op0:op1:CRn:CRm:op2)", text, s);
		}
	}
	*enc = DPMU_SYSREG(f[0], f[1], f[2], f[3], f[4]);
	return 0;
}

int dpmu_sysreg_parse(const char *text, uint32_t *enc, struct dpmu_err *err)
{
	if (!text || !*text)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "no register given (a name such as PMCR_EL0, or op0:op1:CRn:CRm:op2)");
	for (size_t i = 0; i < sizeof sysregs / sizeof sysregs[0]; i++)
		if (strcasecmp(sysregs[i].name, text) == 0) {
			*enc = sysregs[i].enc;
			return 0;
		}
	if (isdigit((unsigned char)text[0]) ||
	    ((text[0] == 's' || text[0] == 'S') && isdigit((unsigned char)text[1])))
		return parse_encoding(text, enc, err);
	/* A near miss of a known name (PMCR_EL1, PMEVCNTR3_EL1, CLUSTERPMCR_EL0)
	 * is most likely that register. */
	const char *best = NULL;
	unsigned bestd = 3;
	for (size_t i = 0; i < sizeof sysregs / sizeof sysregs[0]; i++) {
		unsigned d = dpmu_name_distance(text, sysregs[i].name);
		if (d < bestd) {
			bestd = d;
			best = sysregs[i].name;
		}
	}
	if (best)
		return dpmu_err_set(err, DPMU_ENOENT,
				    "'%s' is not a register the model implements (did you mean %s?)",
				    text, best);
	return dpmu_err_set(err, DPMU_ENOENT,
			    "'%s' is not a register the model implements (give its architectural "
			    "name, e.g. PMEVCNTR3_EL0, or op0:op1:CRn:CRm:op2)", text);
}
