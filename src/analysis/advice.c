/*
 * Advice: the seeds' rules of thumb as table rows. Each row names the
 * metrics it reads, its thresholds (this table is the one place they are
 * defined; docs/metrics.md lists them) and the message, which prints the
 * numbers that made it fire.
 */
#include <string.h>
#include <strings.h>

#include "analysis/an_internal.h"

static const struct dpmu_an_rule rules[] = {
	{"little_l3_hit_rate", DPMU_AN_RULE_METRICS, true,
	 {{"l3_hit_rate", DPMU_AN_LT, 40.0}, {NULL, DPMU_AN_LT, 0}}, NULL,
	 "{unit}: L3 hit rate {v0} is below {t0} on a LITTLE unit: consider moving the task to "
	 "the big cores",
	 "seed 001 section 4.2"},
	{"false_sharing", DPMU_AN_RULE_METRICS, false,
	 /* The seed gives no number for "abnormally high coherency traffic":
	  * a tenth of the L3 requests answered by another core's cache, at a
	  * rate that matters (100 MB/s), is this project's choice. */
	 {{"coherency_ratio", DPMU_AN_GE, 10.0}, {"coherency_bandwidth", DPMU_AN_GE, 100e6}}, NULL,
	 "{unit}: heavy coherency traffic, {v0} of L3 requests served by another core's cache "
	 "({v1}): suspect false sharing{symbols}",
	 "seed 001 section 4.2"},
	{"data_locality", DPMU_AN_RULE_METRICS, false,
	 {{"backend_stalled_cycles", DPMU_AN_GE, 30.0}, {"l1d_cache_mpki", DPMU_AN_GE, 10.0}}, NULL,
	 "{unit}: back end stalled {v0} of cycles with {v1} L1D refills: improve data locality "
	 "(blocking to fit L1, structure layout, prefetch)",
	 "seed 003 sections 3.2 and 6.1"},
	{"branch_layout", DPMU_AN_RULE_METRICS, false,
	 /* 5 % lies between the seed's before (8.1 %) and after (3.0 %) figures. */
	 {{"branch_misprediction_ratio", DPMU_AN_GE, 5.0}, {NULL, DPMU_AN_LT, 0}}, NULL,
	 "{unit}: {v0} of branches mispredicted (threshold {t0}): make hot branches predictable "
	 "(branchless code, jump tables for switch, branch layout)",
	 "seed 003 section 6.2"},
	{"zero_counter", DPMU_AN_RULE_ZERO, false, {{NULL, DPMU_AN_LT, 0}, {NULL, DPMU_AN_LT, 0}},
	 /* events that count whenever the unit runs and its counter is enabled */
	 "CPU_CYCLES,INST_RETIRED,CYCLES,BUS_CYCLES",
	 "{unit}: {events} stayed 0 over {time}: check PMCR.E, PMCNTENSET and the access level "
	 "(PMUSERENR_EL0, the filter bits of PMEVTYPER)",
	 "seed 003 section 8.3"},
};

#define NRULES (sizeof rules / sizeof rules[0])

const struct dpmu_an_rule *dpmu_an_rule_table(size_t *n)
{
	*n = NRULES;
	return rules;
}

/* Append text to buf (bounded). */
static void put(char *buf, size_t cap, size_t *k, const char *s)
{
	size_t n = strlen(s);
	if (*k + n >= cap)
		n = cap - *k - 1;
	memcpy(buf + *k, s, n);
	*k += n;
	buf[*k] = '\0';
}

static void symbols_text(const struct dpmu_an_table *t, char *buf, size_t cap)
{
	if (t->nsymbols == 0) {
		snprintf(buf, cap, " (no symbol information)");
		return;
	}
	/* the three hottest, by count */
	size_t order[DPMU_AN_MAX_SYMBOLS];
	size_t n = t->nsymbols < DPMU_AN_MAX_SYMBOLS ? t->nsymbols : DPMU_AN_MAX_SYMBOLS;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && t->symbols[order[j]].count > t->symbols[order[j - 1]].count;
		     j--) {
			size_t tmp = order[j];
			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	size_t k = 0;
	buf[0] = '\0';
	put(buf, cap, &k, "; hottest symbols: ");
	for (size_t i = 0; i < n && i < 3; i++) {
		char one[DPMU_NAME_MAX + 32];
		snprintf(one, sizeof one, "%s%s (%llu)", i ? ", " : "", t->symbols[order[i]].name,
			 (unsigned long long)t->symbols[order[i]].count);
		put(buf, cap, &k, one);
	}
}

static void expand(const struct dpmu_an_table *t, const struct dpmu_an_sample *s,
		   const struct dpmu_an_rule *r, const struct dpmu_an_unit *u, const double *v,
		   const char *events, char *out, size_t cap)
{
	size_t k = 0;
	out[0] = '\0';
	for (const char *p = r->message; *p;) {
		if (*p != '{') {
			char one[2] = {*p++, '\0'};
			put(out, cap, &k, one);
			continue;
		}
		const char *e = strchr(p, '}');
		if (!e) {
			put(out, cap, &k, p);
			break;
		}
		char key[16];
		snprintf(key, sizeof key, "%.*s", (int)(e - p - 1), p + 1);
		char val[256] = "";
		if (strcmp(key, "unit") == 0) {
			snprintf(val, sizeof val, "%s", u->name);
		} else if ((key[0] == 'v' || key[0] == 't') && (key[1] == '0' || key[1] == '1') &&
			   !key[2]) {
			unsigned i = (unsigned)(key[1] - '0');
			const struct dpmu_an_metric *m =
				r->cond[i].metric ? dpmu_an_metric_find(r->cond[i].metric) : NULL;
			if (m)
				dpmu_an_format_value(m, key[0] == 'v' ? v[i] : r->cond[i].threshold, val,
						     sizeof val);
		} else if (strcmp(key, "events") == 0) {
			snprintf(val, sizeof val, "%s", events);
		} else if (strcmp(key, "symbols") == 0) {
			symbols_text(t, val, sizeof val);
		} else if (strcmp(key, "time") == 0) {
			snprintf(val, sizeof val, "%.6f s", (double)s->length_ns / 1e9);
		}
		put(out, cap, &k, val);
		p = e + 1;
	}
}

/* The next name of a comma-separated list into name; false at its end. */
static bool next_name(const char **p, char name[DPMU_NAME_MAX])
{
	if (!*p || !**p)
		return false;
	const char *e = strchr(*p, ',');
	snprintf(name, DPMU_NAME_MAX, "%.*s", (int)(e ? (size_t)(e - *p) : strlen(*p)), *p);
	*p = e ? e + 1 : NULL;
	return true;
}

/* The count of event `name` of unit u if it was on a counter (else NULL). */
static const struct dpmu_an_count *counted(const struct dpmu_an_unit *u, const char *name)
{
	const struct dpmu_an_count *c = dpmu_an_count_find(u, name);
	return c && c->supported && c->running_ns > 0 ? c : NULL;
}

/* Whether unit u read a non-zero value for one of the listed events. */
static bool any_counted(const struct dpmu_an_unit *u, const char *events)
{
	char name[DPMU_NAME_MAX];
	for (const char *p = events; next_name(&p, name);) {
		const struct dpmu_an_count *c = counted(u, name);
		if (c && c->value)
			return true;
	}
	return false;
}

/* DPMU_AN_RULE_ZERO: the listed events counted (on a counter for some of
 * the time) and read 0, on a sample of non-zero length. A unit on which
 * all of them read 0 while another unit of its kind counted one was idle
 * (dynpmu programs every unit alike, and a core that runs nothing, as one
 * in WFI, counts no cycles): no advice for it. */
static bool zero_events(const struct dpmu_an_rule *r, const struct dpmu_an_sample *s,
			const struct dpmu_an_unit *u, char *names, size_t cap)
{
	if (s->length_ns == 0)
		return false;
	size_t k = 0;
	names[0] = '\0';
	char name[DPMU_NAME_MAX];
	for (const char *p = r->zero_events; next_name(&p, name);) {
		const struct dpmu_an_count *c = counted(u, name);
		if (c && c->value == 0) {
			if (k)
				put(names, cap, &k, ", ");
			put(names, cap, &k, c->event);
		}
	}
	if (!k || any_counted(u, r->zero_events))
		return k > 0;
	for (size_t i = 0; i < s->nunits; i++)
		if (&s->units[i] != u && s->units[i].kind == u->kind &&
		    any_counted(&s->units[i], r->zero_events))
			return false; /* idle */
	return true;
}

int dpmu_an_advise(const struct dpmu_an_table *t, size_t sample, struct dpmu_an_advice *out,
		   size_t cap, size_t *n, struct dpmu_err *err)
{
	*n = 0;
	if (sample >= t->nsamples)
		return dpmu_err_set(err, DPMU_ERANGE, "sample %zu out of range (the table has %zu)",
				    sample, t->nsamples);
	const struct dpmu_an_sample *s = &t->samples[sample];
	for (size_t ui = 0; ui < s->nunits; ui++) {
		const struct dpmu_an_unit *u = &s->units[ui];
		for (size_t ri = 0; ri < NRULES; ri++) {
			const struct dpmu_an_rule *r = &rules[ri];
			if (r->little_only && !u->little)
				continue;
			double v[DPMU_AN_RULE_CONDS] = {0, 0};
			char events[256] = "";
			bool fire = true;
			if (r->kind == DPMU_AN_RULE_ZERO) {
				fire = zero_events(r, s, u, events, sizeof events);
			} else {
				for (unsigned c = 0; c < DPMU_AN_RULE_CONDS && fire; c++) {
					if (!r->cond[c].metric)
						continue;
					const struct dpmu_an_metric *m = dpmu_an_metric_find(r->cond[c].metric);
					if (!m)
						return dpmu_err_set(err, DPMU_EINVAL,
								    "rule %s reads unknown metric %s",
								    r->name, r->cond[c].metric);
					struct dpmu_an_value val;
					int rc = dpmu_an_metric_eval(m, t, s, u, &val, err);
					if (rc)
						return rc;
					v[c] = val.value;
					fire = val.available &&
					       (r->cond[c].op == DPMU_AN_LT ? val.value < r->cond[c].threshold
									    : val.value >= r->cond[c].threshold);
				}
			}
			if (!fire)
				continue;
			if (*n < cap) {
				struct dpmu_an_advice *a = &out[*n];
				memset(a, 0, sizeof *a);
				a->rule = r;
				a->sample = sample;
				snprintf(a->unit, sizeof a->unit, "%s", u->name);
				memcpy(a->value, v, sizeof v);
				expand(t, s, r, u, v, events, a->text, sizeof a->text);
			}
			(*n)++;
		}
	}
	if (*n > cap)
		*n = cap;
	return 0;
}
