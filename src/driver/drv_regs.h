/*
 * System-register encodings the driver uses (reference sections 1, 3, 4;
 * Arm ARM D13 / DSU TRM for CLUSTERPM*). Only the header-only DPMU_SYSREG
 * macro of arch.h is used: the driver layer links against nothing else.
 */
#ifndef DPMU_DRV_REGS_H
#define DPMU_DRV_REGS_H

#include "dynpmu/arch.h"

/* identification */
#define R_MIDR_EL1 DPMU_SYSREG(3, 0, 0, 0, 0)
#define R_MPIDR_EL1 DPMU_SYSREG(3, 0, 0, 0, 5)

/* core PMU */
#define R_PMCR_EL0 DPMU_SYSREG(3, 3, 9, 12, 0)
#define R_PMCNTENSET_EL0 DPMU_SYSREG(3, 3, 9, 12, 1)
#define R_PMCNTENCLR_EL0 DPMU_SYSREG(3, 3, 9, 12, 2)
#define R_PMOVSCLR_EL0 DPMU_SYSREG(3, 3, 9, 12, 3)
#define R_PMSWINC_EL0 DPMU_SYSREG(3, 3, 9, 12, 4)
#define R_PMSELR_EL0 DPMU_SYSREG(3, 3, 9, 12, 5)
#define R_PMCEID0_EL0 DPMU_SYSREG(3, 3, 9, 12, 6)
#define R_PMCEID1_EL0 DPMU_SYSREG(3, 3, 9, 12, 7)
#define R_PMCCNTR_EL0 DPMU_SYSREG(3, 3, 9, 13, 0)
#define R_PMXEVTYPER_EL0 DPMU_SYSREG(3, 3, 9, 13, 1)
#define R_PMXEVCNTR_EL0 DPMU_SYSREG(3, 3, 9, 13, 2)
#define R_PMUSERENR_EL0 DPMU_SYSREG(3, 3, 9, 14, 0)
#define R_PMOVSSET_EL0 DPMU_SYSREG(3, 3, 9, 14, 3)
#define R_PMINTENSET_EL1 DPMU_SYSREG(3, 0, 9, 14, 1)
#define R_PMINTENCLR_EL1 DPMU_SYSREG(3, 0, 9, 14, 2)
#define R_PMEVCNTR_EL0(n) DPMU_SYSREG(3, 3, 14, 8 + ((n) >> 3), (n) & 7)
#define R_PMEVTYPER_EL0(n) DPMU_SYSREG(3, 3, 14, 12 + ((n) >> 3), (n) & 7)
#define R_PMCCFILTR_EL0 DPMU_SYSREG(3, 3, 14, 15, 7)

/* DSU cluster PMU */
#define R_CLUSTERPMCR_EL1 DPMU_SYSREG(3, 0, 15, 5, 0)
#define R_CLUSTERPMCNTENSET_EL1 DPMU_SYSREG(3, 0, 15, 5, 1)
#define R_CLUSTERPMCNTENCLR_EL1 DPMU_SYSREG(3, 0, 15, 5, 2)
#define R_CLUSTERPMOVSSET_EL1 DPMU_SYSREG(3, 0, 15, 5, 3)
#define R_CLUSTERPMOVSCLR_EL1 DPMU_SYSREG(3, 0, 15, 5, 4)
#define R_CLUSTERPMSELR_EL1 DPMU_SYSREG(3, 0, 15, 5, 5)
#define R_CLUSTERPMINTENSET_EL1 DPMU_SYSREG(3, 0, 15, 5, 6)
#define R_CLUSTERPMINTENCLR_EL1 DPMU_SYSREG(3, 0, 15, 5, 7)
#define R_CLUSTERPMCCNTR_EL1 DPMU_SYSREG(3, 0, 15, 6, 0)
#define R_CLUSTERPMXEVTYPER_EL1 DPMU_SYSREG(3, 0, 15, 6, 1)
#define R_CLUSTERPMXEVCNTR_EL1 DPMU_SYSREG(3, 0, 15, 6, 2)
#define R_CLUSTERPMCEID0_EL1 DPMU_SYSREG(3, 0, 15, 6, 4)
#define R_CLUSTERPMCEID1_EL1 DPMU_SYSREG(3, 0, 15, 6, 5)

/* Activity Monitors */
#define R_AMCGCR_EL0 DPMU_SYSREG(3, 3, 13, 2, 2)
#define R_AMCNTENCLR0_EL0 DPMU_SYSREG(3, 3, 13, 2, 4)
#define R_AMCNTENSET0_EL0 DPMU_SYSREG(3, 3, 13, 2, 5)
#define R_AMCNTENCLR1_EL0 DPMU_SYSREG(3, 3, 13, 3, 0)
#define R_AMCNTENSET1_EL0 DPMU_SYSREG(3, 3, 13, 3, 1)
#define R_AMEVCNTR0_EL0(n) DPMU_SYSREG(3, 3, 13, 4 + ((n) >> 3), (n) & 7)
#define R_AMEVTYPER0_EL0(n) DPMU_SYSREG(3, 3, 13, 6 + ((n) >> 3), (n) & 7)
#define R_AMEVCNTR1_EL0(n) DPMU_SYSREG(3, 3, 13, 12 + ((n) >> 3), (n) & 7)
#define R_AMEVTYPER1_EL0(n) DPMU_SYSREG(3, 3, 13, 14 + ((n) >> 3), (n) & 7)

/* PMEVTYPER filter bits (reference section 1). */
#define EVTYPER_P (1u << 31)
#define EVTYPER_U (1u << 30)
#define EVTYPER_NSH (1u << 27)
#define EVTYPER_EVT 0xffffu

#define EV_CHAIN 0x1eu

#endif
