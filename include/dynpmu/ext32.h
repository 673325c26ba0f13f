/*
 * The external (memory-mapped, EXT32) PMU frame: register offsets within the
 * 4 KiB frame of a core PMU or of the cluster PMU (reference section 2; seed
 * 001 sections 2.2-3.2 for PMSSCR, PMSSRR, PMDEVAFF, PMDEVARCH). One table for
 * every layer: the driver addresses registers with these macros, the model may
 * decode with them, the register console and its docs name offsets with
 * dpmu_ext_name().
 */
#ifndef DYNPMU_EXT32_H
#define DYNPMU_EXT32_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DPMU_EXT_FRAME_SIZE 0x1000u

/* 64-bit registers occupy two words: low word at the offset, high word at +4. */
#define DPMU_EXT_PMEVCNTR(n) (0x000u + 8u * (unsigned)(n))
#define DPMU_EXT_PMCCNTR 0x0F8u
#define DPMU_EXT_PMEVTYPER(n) (0x400u + 4u * (unsigned)(n))
#define DPMU_EXT_PMCCFILTR 0x47Cu
#define DPMU_EXT_PMEVCNTSVR(n) (0x600u + 8u * (unsigned)(n))
#define DPMU_EXT_PMCCNTSVR 0x6F8u
#define DPMU_EXT_PMCNTENSET 0xC00u
#define DPMU_EXT_PMCNTENCLR 0xC20u
#define DPMU_EXT_PMINTENSET 0xC40u
#define DPMU_EXT_PMINTENCLR 0xC60u
#define DPMU_EXT_PMOVSCLR 0xC80u
#define DPMU_EXT_PMSWINC 0xCA0u
#define DPMU_EXT_PMOVSSET 0xCC0u
#define DPMU_EXT_PMCFGR 0xE00u
#define DPMU_EXT_PMCR 0xE04u
#define DPMU_EXT_PMIIDR 0xE08u
#define DPMU_EXT_PMCEID0 0xE20u
#define DPMU_EXT_PMCEID1 0xE24u
#define DPMU_EXT_PMCEID2 0xE28u
#define DPMU_EXT_PMCEID3 0xE2Cu
#define DPMU_EXT_PMSSCR 0xE30u
#define DPMU_EXT_PMSSRR 0xE38u
#define DPMU_EXT_PMITCTRL 0xF00u
#define DPMU_EXT_PMDEVAFF0 0xFA8u
#define DPMU_EXT_PMDEVAFF1 0xFACu
#define DPMU_EXT_PMLAR 0xFB0u
#define DPMU_EXT_PMLSR 0xFB4u
#define DPMU_EXT_PMAUTHSTATUS 0xFB8u
#define DPMU_EXT_PMDEVARCH 0xFBCu
#define DPMU_EXT_PMDEVID 0xFC8u
#define DPMU_EXT_PMDEVTYPE 0xFCCu
#define DPMU_EXT_PIDR4 0xFD0u
#define DPMU_EXT_PIDR(n) (0xFE0u + 4u * (unsigned)(n))
#define DPMU_EXT_CIDR(n) (0xFF0u + 4u * (unsigned)(n))

/* Fields the driver uses. */
#define DPMU_EXT_PMSSCR_SS (1u << 0)        /* seed 001 section 2.2 */
#define DPMU_EXT_PMLAR_KEY 0xC5ACCE55u      /* unlocks the software lock */
#define DPMU_EXT_PMLSR_SLK (1u << 1)
#define DPMU_EXT_PMCFGR_N_MASK 0xFFu
#define DPMU_EXT_PMDEVARCH_PMUV3 0x47702A16u

/* The frame layout as a table: a register, or an array of `count` registers
 * `stride` bytes apart. `words` is 2 for 64-bit registers. */
struct dpmu_ext_reg {
	const char *name;
	uint32_t offset;
	unsigned count;
	unsigned stride;
	unsigned words;
};

static inline const struct dpmu_ext_reg *dpmu_ext_regs(size_t *n)
{
	static const struct dpmu_ext_reg regs[] = {
		{ "PMEVCNTR", 0x000, 31, 8, 2 },     { "PMCCNTR", 0x0F8, 1, 0, 2 },
		{ "PMEVTYPER", 0x400, 31, 4, 1 },    { "PMCCFILTR", 0x47C, 1, 0, 1 },
		{ "PMEVCNTSVR", 0x600, 31, 8, 2 },   { "PMCCNTSVR", 0x6F8, 1, 0, 2 },
		{ "PMCNTENSET", 0xC00, 1, 0, 1 },    { "PMCNTENCLR", 0xC20, 1, 0, 1 },
		{ "PMINTENSET", 0xC40, 1, 0, 1 },    { "PMINTENCLR", 0xC60, 1, 0, 1 },
		{ "PMOVSCLR", 0xC80, 1, 0, 1 },      { "PMSWINC", 0xCA0, 1, 0, 1 },
		{ "PMOVSSET", 0xCC0, 1, 0, 1 },      { "PMCFGR", 0xE00, 1, 0, 1 },
		{ "PMCR", 0xE04, 1, 0, 1 },          { "PMIIDR", 0xE08, 1, 0, 1 },
		{ "PMCEID", 0xE20, 4, 4, 1 },        { "PMSSCR", 0xE30, 1, 0, 1 },
		{ "PMSSRR", 0xE38, 1, 0, 1 },        { "PMITCTRL", 0xF00, 1, 0, 1 },
		{ "PMDEVAFF0", 0xFA8, 1, 0, 1 },     { "PMDEVAFF1", 0xFAC, 1, 0, 1 },
		{ "PMLAR", 0xFB0, 1, 0, 1 },         { "PMLSR", 0xFB4, 1, 0, 1 },
		{ "PMAUTHSTATUS", 0xFB8, 1, 0, 1 },  { "PMDEVARCH", 0xFBC, 1, 0, 1 },
		{ "PMDEVID", 0xFC8, 1, 0, 1 },       { "PMDEVTYPE", 0xFCC, 1, 0, 1 },
		{ "PIDR4", 0xFD0, 1, 0, 1 },         { "PIDR", 0xFE0, 4, 4, 1 },
		{ "CIDR", 0xFF0, 4, 4, 1 },
	};
	*n = sizeof regs / sizeof regs[0];
	return regs;
}

/* Name of the register word at `offset` ("PMEVCNTR3", "PMCCNTR[63:32]",
 * "PMCEID2"), written into buf; NULL when nothing is mapped there. */
static inline const char *dpmu_ext_name(uint32_t offset, char *buf, size_t len)
{
	size_t n;
	const struct dpmu_ext_reg *r = dpmu_ext_regs(&n);
	for (size_t i = 0; i < n; i++) {
		unsigned size = r[i].count > 1 ? r[i].count * r[i].stride : 4u * r[i].words;
		if (offset < r[i].offset || offset >= r[i].offset + size)
			continue;
		unsigned rel = offset - r[i].offset;
		unsigned idx = r[i].count > 1 ? rel / r[i].stride : 0;
		unsigned word = (rel - idx * (r[i].count > 1 ? r[i].stride : 0)) / 4;
		if (word >= r[i].words)
			return NULL; /* the gap between 32-bit array registers */
		const char *hi = r[i].words == 2 && word == 1 ? "[63:32]" : "";
		if (r[i].count > 1)
			snprintf(buf, len, "%s%u%s", r[i].name, idx, hi);
		else
			snprintf(buf, len, "%s%s", r[i].name, hi);
		return buf;
	}
	return NULL;
}

#endif
