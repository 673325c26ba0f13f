/*
 * perf stat's two text layouts over the sample table: the table for
 * people and -x SEP's CSV (docs/output.md). Counts are printed as perf
 * prints them: the estimate value * enabled / running, with the running
 * percentage when it is below 100 % (reference section 7).
 */
#include <math.h>
#include <string.h>

#include "analysis/an_internal.h"

const char *dpmu_an_thousands(uint64_t v, char *buf, size_t cap)
{
	char digits[32];
	int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
	size_t k = 0;
	for (int i = 0; i < n && k + 2 < cap; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = digits[i];
	}
	buf[k] = '\0';
	return buf;
}

double dpmu_an_running_pct(const struct dpmu_an_count *c)
{
	if (!c->enabled_ns)
		return c->supported ? 100.0 : 0.0;
	return 100.0 * (double)c->running_ns / (double)c->enabled_ns;
}

/* Whether rows need a unit column: anything but one system-wide unit. */
static bool has_unit_column(const struct dpmu_an_table *t)
{
	for (size_t i = 0; i < t->nsamples; i++)
		for (size_t k = 0; k < t->samples[i].nunits; k++)
			if (t->samples[i].units[k].kind != DPMU_AN_SYSTEM || t->samples[i].nunits > 1)
				return true;
	return false;
}

uint64_t dpmu_an_round_estimate(const struct dpmu_an_count *c)
{
	/* Not scaled: the value itself, exact beyond the 2^53 a double holds. */
	if (!c->supported || c->running_ns == 0 || c->running_ns >= c->enabled_ns)
		return c->value;
	double e = dpmu_an_count_estimate(c);
	/* 2^64 is the first double a uint64_t cannot hold (UINT64_MAX itself
	 * rounds up to it). llround would stop at LONG_MAX, 2^63 - 1. */
	if (!(e < 18446744073709551616.0))
		return UINT64_MAX;
	return (uint64_t)round(e);
}

bool dpmu_an_not_counted(const struct dpmu_an_count *c)
{
	return c->supported && c->enabled_ns > 0 && c->running_ns == 0;
}

static int check_write(FILE *f, struct dpmu_err *err)
{
	if (ferror(f))
		return dpmu_err_set(err, DPMU_EIO, "writing the report failed");
	return 0;
}

uint64_t dpmu_an_table_end_ns(const struct dpmu_an_table *t)
{
	uint64_t end_ns = 0;
	for (size_t i = 0; i < t->nsamples; i++)
		if (t->samples[i].start_ns + t->samples[i].length_ns > end_ns)
			end_ns = t->samples[i].start_ns + t->samples[i].length_ns;
	return end_ns;
}

static double sample_end_s(const struct dpmu_an_sample *s)
{
	return (double)(s->start_ns + s->length_ns) / 1e9;
}

int dpmu_an_write_text(FILE *f, const struct dpmu_an_table *t, const struct dpmu_an_report *r,
		       struct dpmu_err *err)
{
	bool units = has_unit_column(t);
	fprintf(f, "\n Performance counter stats for '%s':\n\n", t->workload[0] ? t->workload : "?");
	if (t->intervals)
		fprintf(f, "#%14s %s%s\n", "time", units ? "unit       " : "", "counts / metric");
	for (size_t si = 0; si < t->nsamples; si++) {
		const struct dpmu_an_sample *s = &t->samples[si];
		char prefix[96] = "";
		for (size_t ui = 0; ui < s->nunits; ui++) {
			const struct dpmu_an_unit *u = &s->units[ui];
			int k = 0;
			if (t->intervals)
				k = snprintf(prefix, sizeof prefix, "%15.9f ", sample_end_s(s));
			if (units)
				snprintf(prefix + k, sizeof prefix - (size_t)k, "%-10s ", u->name);
			for (size_t ci = 0; ci < u->ncounts; ci++) {
				const struct dpmu_an_count *c = &u->counts[ci];
				char num[40];
				const char *shown =
					!c->supported		 ? "<not supported>"
					: dpmu_an_not_counted(c) ? "<not counted>"
					: dpmu_an_thousands(dpmu_an_round_estimate(c), num, sizeof num);
				double pct = dpmu_an_running_pct(c);
				if (c->supported && !dpmu_an_not_counted(c) && pct < 100.0)
					fprintf(f, "%s%18s      %-32s (%.2f%%)\n", prefix, shown, c->event, pct);
				else
					fprintf(f, "%s%18s      %s\n", prefix, shown, c->event);
			}
			for (size_t mi = 0; r && mi < r->nmetrics; mi++) {
				struct dpmu_an_value v;
				int rc = dpmu_an_metric_eval(r->metrics[mi], t, s, u, &v, err);
				if (rc)
					return rc;
				char val[64];
				if (!v.available) {
					fprintf(f, "%s%18s      %-32s # %s\n", prefix, "<not available>",
						r->metrics[mi]->name, v.why);
					continue;
				}
				dpmu_an_format_value(r->metrics[mi], v.value, val, sizeof val);
				if (v.running < 1.0)
					fprintf(f, "%s%18s      %-32s (%.2f%%)\n", prefix, val,
						r->metrics[mi]->name, 100.0 * v.running);
				else
					fprintf(f, "%s%18s      %s\n", prefix, val, r->metrics[mi]->name);
			}
		}
		if (r && r->advice) {
			struct dpmu_an_advice adv[32];
			size_t n = 0;
			int rc = dpmu_an_advise(t, si, adv, sizeof adv / sizeof adv[0], &n, err);
			if (rc)
				return rc;
			if (n)
				fprintf(f, "\n");
			for (size_t i = 0; i < n; i++) {
				if (t->intervals)
					fprintf(f, "%15.9f ", sample_end_s(s));
				fprintf(f, "  advice [%s]: %s (%s)\n", adv[i].rule->name, adv[i].text,
					adv[i].rule->source);
			}
		}
	}
	fprintf(f, "\n%18.9f seconds time elapsed\n\n", (double)dpmu_an_table_end_ns(t) / 1e9);
	return check_write(f, err);
}

int dpmu_an_write_csv(FILE *f, const struct dpmu_an_table *t, const struct dpmu_an_report *r,
		      struct dpmu_err *err)
{
	const char *sep = r && r->sep ? r->sep : ",";
	bool units = has_unit_column(t);
	for (size_t si = 0; si < t->nsamples; si++) {
		const struct dpmu_an_sample *s = &t->samples[si];
		for (size_t ui = 0; ui < s->nunits; ui++) {
			const struct dpmu_an_unit *u = &s->units[ui];
			char prefix[96] = "";
			int k = 0;
			if (t->intervals)
				k = snprintf(prefix, sizeof prefix, "%.9f%s", sample_end_s(s), sep);
			if (units)
				snprintf(prefix + k, sizeof prefix - (size_t)k, "%s%s", u->name, sep);
			for (size_t ci = 0; ci < u->ncounts; ci++) {
				const struct dpmu_an_count *c = &u->counts[ci];
				fputs(prefix, f);
				if (!c->supported)
					fputs("<not supported>", f);
				else if (dpmu_an_not_counted(c))
					fputs("<not counted>", f);
				else
					fprintf(f, "%llu", (unsigned long long)dpmu_an_round_estimate(c));
				fprintf(f, "%s%s%s%s%llu%s%.2f\n", sep, sep, c->event, sep,
					(unsigned long long)c->running_ns, sep, dpmu_an_running_pct(c));
			}
			for (size_t mi = 0; r && mi < r->nmetrics; mi++) {
				const struct dpmu_an_metric *m = r->metrics[mi];
				struct dpmu_an_value v;
				int rc = dpmu_an_metric_eval(m, t, s, u, &v, err);
				if (rc)
					return rc;
				fputs(prefix, f);
				if (v.available)
					fprintf(f, "%.6g", v.value);
				else
					fputs("<not available>", f);
				/* metric rows: the metric's unit in the unit field, no running time */
				fprintf(f, "%s%s%s%s%s", sep, m->unit, sep, m->name, sep);
				if (v.available)
					fprintf(f, "%s%.2f\n", sep, 100.0 * v.running);
				else
					fprintf(f, "%s\n", sep);
			}
		}
	}
	return check_write(f, err);
}
