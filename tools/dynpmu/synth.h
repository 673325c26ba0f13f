/*
 * A SYNTHETIC activity source for `dynpmu demo`: it stands in for the
 * microarchitectural engine, which is not wired into the demo yet. It feeds
 * a varying, deterministic mix of events and cycles to every core and
 * cluster through the model's event input API (dpmu_model_*_event/cycles).
 * Its numbers are made up to look plausible; they measure nothing. Replace
 * this file with the engine, not the demo.
 */
#ifndef DPMU_TOOL_SYNTH_H
#define DPMU_TOOL_SYNTH_H

#include <stdint.h>

#include "dynpmu/model.h"

/* Name of the workload phase a core runs in an interval ("compute", ...). */
const char *dpmu_synth_phase(unsigned interval, unsigned core);
/* Run `ns` nanoseconds of simulated time of interval `interval` on every
 * core and cluster of the model. */
void dpmu_synth_run(struct dpmu_model *m, unsigned interval, uint64_t ns);

#endif
