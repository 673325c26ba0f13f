/*
 * Shared by the files of src/analysis:
 *   table.c     the sample table, aggregation, the monitor adapter
 *   metrics.c   the metric table and its formula evaluator
 *   advice.c    the advice rules
 *   report.c    perf-like table and CSV
 *   json.c      JSON lines (jansson)
 *   svg.c       the interval chart
 */
#ifndef DPMU_AN_INTERNAL_H
#define DPMU_AN_INTERNAL_H

#include "dynpmu/analysis.h"

/* A metric value in its unit, for people: "1.23", "45.00 %", "2.10 GB/s". */
void dpmu_an_format_value(const struct dpmu_an_metric *m, double v, char *buf, size_t cap);
/* The running percentage of a count, 100 when it ran all the time it was
 * enabled (or was never enabled). */
double dpmu_an_running_pct(const struct dpmu_an_count *c);
/* Enabled but never on a counter: perf's <not counted>. */
bool dpmu_an_not_counted(const struct dpmu_an_count *c);
/* The estimate as the writers print it: the value when it was not scaled,
 * else rounded to nearest (halves away from zero), UINT64_MAX when beyond
 * it. */
uint64_t dpmu_an_round_estimate(const struct dpmu_an_count *c);

/* svg.c: XML text with the entities escaped (timeline.c and flame.c too). */
void dpmu_an_xml_text(FILE *f, const char *s);
/* The same for at most the first n bytes of s. */
void dpmu_an_xml_textn(FILE *f, const char *s, size_t n);

#endif
