/*
 * Where a perf.data's samples went (dynpmu report, docs/record.md): the
 * table by sort keys, each function's callers and callees, the collapsed
 * stacks, and the per-instruction annotation. Every figure weighs a sample
 * by its period, as perf report does, so a file sampled at an adaptive
 * period (-F) still gives each function its share of the events.
 */
#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/an_internal.h"
#include "analysis/profile_internal.h"
#include "dynpmu/perfdata.h"

/* ---- a tally: string keys to weights -------------------------------------------- */

int dpmu_an_tally_add(struct dpmu_an_tally *t, const char *key, uint64_t w)
{
	if (t->n * 2 >= t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct dpmu_an_tally_row *n = calloc(cap, sizeof *n);
		if (!n)
			return DPMU_ENOMEM;
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->rows[i].key)
				continue;
			size_t j = t->rows[i].hash & (cap - 1);
			while (n[j].key)
				j = (j + 1) & (cap - 1);
			n[j] = t->rows[i];
		}
		free(t->rows);
		t->rows = n;
		t->cap = cap;
	}
	uint64_t h = 1469598103934665603ull;
	for (const char *p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	size_t j = h & (t->cap - 1);
	while (t->rows[j].key) {
		if (t->rows[j].hash == h && strcmp(t->rows[j].key, key) == 0) {
			t->rows[j].weight += w;
			t->rows[j].samples++;
			return 0;
		}
		j = (j + 1) & (t->cap - 1);
	}
	char *k = strdup(key);
	if (!k)
		return DPMU_ENOMEM;
	t->rows[j] = (struct dpmu_an_tally_row){k, h, w, 1};
	t->n++;
	return 0;
}

static int by_weight(const void *a, const void *b)
{
	const struct dpmu_an_tally_row *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return strcmp(x->key, y->key);
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct dpmu_an_tally_row *)a)->key,
		      ((const struct dpmu_an_tally_row *)b)->key);
}

size_t dpmu_an_tally_sorted(struct dpmu_an_tally *t, bool weight)
{
	if (!t->rows) /* nothing added */
		return t->n = t->cap = 0;
	size_t k = 0;
	for (size_t i = 0; i < t->cap; i++)
		if (t->rows[i].key)
			t->rows[k++] = t->rows[i];
	memset(t->rows + k, 0, (t->cap - k) * sizeof *t->rows);
	qsort(t->rows, k, sizeof *t->rows, weight ? by_weight : by_key);
	t->n = k;
	t->cap = 0; /* sorted: no more adds */
	return k;
}

void dpmu_an_tally_free(struct dpmu_an_tally *t)
{
	for (size_t i = 0; i < t->cap || i < t->n; i++)
		if (t->rows && t->rows[i].key)
			free(t->rows[i].key);
	free(t->rows);
	memset(t, 0, sizeof *t);
}

/* ---- sort keys ------------------------------------------------------------------- */

enum key { K_COMM, K_DSO, K_SYM, K_TID, K_CPU, K_SRCLINE };
static const char *const key_names[] = {"comm", "dso", "sym", "tid", "cpu", "srcline"};
static const char *const key_heads[] = {"Command", "Shared Object", "Symbol", "Pid:Tid", "CPU",
					"Source:Line"};
#define NKEYS (sizeof key_names / sizeof key_names[0])
#define MAX_SORT 6

static int parse_sort(const char *sort, enum key *keys, unsigned *n, struct dpmu_err *err)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", sort && *sort ? sort : "comm,dso,sym");
	*n = 0;
	for (char *save = NULL, *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		unsigned i = 0;
		while (i < NKEYS && strcmp(k, key_names[i]) != 0)
			i++;
		if (i == NKEYS)
			return dpmu_err_set(err, DPMU_EINVAL,
					    "--sort: unknown key '%s' (comm, dso, sym, tid, cpu, "
					    "srcline)",
					    k);
		if (*n == MAX_SORT)
			return dpmu_err_set(err, DPMU_EINVAL, "--sort: at most %u keys", MAX_SORT);
		keys[(*n)++] = (enum key)i;
	}
	if (!*n)
		return dpmu_err_set(err, DPMU_EINVAL, "--sort: no key given");
	return 0;
}

const char *dpmu_an_comm_of(const struct dpmu_perf_file *f, uint32_t pid, uint32_t tid)
{
	const char *c = NULL;
	for (size_t i = 0; i < f->ncomms; i++)
		if (f->comms[i].pid == pid && (f->comms[i].tid == tid || !c))
			c = f->comms[i].comm;
	return c ? c : "[unknown]";
}

static void key_text(const struct dpmu_perf_file *f, const struct dpmu_perf_sample *smp,
		     const struct dpmu_an_loc *loc, enum key k, char *out, size_t cap)
{
	switch (k) {
	case K_COMM:
		snprintf(out, cap, "%s", dpmu_an_comm_of(f, smp->pid, smp->tid));
		break;
	case K_DSO:
		snprintf(out, cap, "%s", loc->dso);
		break;
	case K_SYM:
		snprintf(out, cap, "%s", loc->sym);
		break;
	case K_TID:
		snprintf(out, cap, "%u:%u", smp->pid, smp->tid);
		break;
	case K_CPU:
		snprintf(out, cap, "%03u", smp->cpu);
		break;
	case K_SRCLINE:
		if (loc->file) {
			const char *b = strrchr(loc->file, '/');
			snprintf(out, cap, "%s:%d", b ? b + 1 : loc->file, loc->line);
		} else {
			snprintf(out, cap, "%s", "[unknown]");
		}
		break;
	}
}

/* The function (and object) at caller level `depth` of a sample: 0 the
 * sampled instruction's, then its callers'. NULL past the chain. */
const struct dpmu_an_loc *dpmu_an_frame(struct dpmu_an_syms *s, const struct dpmu_perf_file *f,
					const struct dpmu_perf_sample *smp, uint32_t depth)
{
	if (depth > smp->nchain)
		return NULL;
	uint64_t ip = depth ? f->chains[smp->chain + depth - 1] : smp->ip;
	return dpmu_an_syms_lookup(s, f, smp->pid, ip);
}

/* ---- the table --------------------------------------------------------------------- */

#define SEP "\x1f" /* joins a row's keys: no name holds it */

static int print_callgraph(FILE *out, const struct dpmu_perf_file *f, struct dpmu_an_syms *s,
			   unsigned ev, const char *sym, uint64_t total)
{
	struct dpmu_an_tally callers = {0}, callees = {0};
	int rc = 0;
	for (size_t i = 0; i < f->nsamples && !rc; i++) {
		const struct dpmu_perf_sample *smp = &f->samples[i];
		if (smp->event != ev)
			continue;
		const struct dpmu_an_loc *self = dpmu_an_frame(s, f, smp, 0);
		if (strcmp(self->sym, sym) == 0) {
			const struct dpmu_an_loc *c = dpmu_an_frame(s, f, smp, 1);
			rc = dpmu_an_tally_add(&callers, c ? c->sym : "[root]", smp->period);
		}
		/* the innermost frame in sym below which the sample ran: what
		 * sym called on the way to it (a sample counts once) */
		for (uint32_t d = 1; !rc && d <= smp->nchain; d++) {
			const struct dpmu_an_loc *l = dpmu_an_frame(s, f, smp, d);
			if (strcmp(l->sym, sym) != 0)
				continue;
			const struct dpmu_an_loc *callee = dpmu_an_frame(s, f, smp, d - 1);
			if (strcmp(callee->sym, sym) != 0)
				rc = dpmu_an_tally_add(&callees, callee->sym, smp->period);
			break;
		}
	}
	if (rc) {
		dpmu_an_tally_free(&callers);
		dpmu_an_tally_free(&callees);
		return rc;
	}
	size_t nc = dpmu_an_tally_sorted(&callers, true), ne = dpmu_an_tally_sorted(&callees, true);
	for (size_t i = 0; i < nc && i < 8; i++)
		fprintf(out, "            %-10s %6.2f%%  %s\n", i ? "" : "called by",
			100.0 * (double)callers.rows[i].weight / (double)total, callers.rows[i].key);
	for (size_t i = 0; i < ne && i < 8; i++)
		fprintf(out, "            %-10s %6.2f%%  %s\n", i ? "" : "calls",
			100.0 * (double)callees.rows[i].weight / (double)total, callees.rows[i].key);
	dpmu_an_tally_free(&callers);
	dpmu_an_tally_free(&callees);
	return 0;
}

int dpmu_an_profile_report(FILE *out, const struct dpmu_perf_file *f, struct dpmu_an_syms *s,
			   const struct dpmu_an_profile_opts *o, struct dpmu_err *err)
{
	enum key keys[MAX_SORT];
	unsigned nk;
	int rc = parse_sort(o->sort, keys, &nk, err);
	if (rc)
		return rc;
	int symk = -1;
	for (unsigned k = 0; k < nk; k++)
		if (keys[k] == K_SYM)
			symk = (int)k;
	if (o->callgraph && symk < 0)
		return dpmu_err_set(err, DPMU_EINVAL, "-g: the call graph needs sym among the "
						      "--sort keys");
	for (unsigned ev = 0; ev < f->desc.nevents; ev++) {
		struct dpmu_an_tally t = {0};
		uint64_t total = 0, nsamples = 0;
		for (size_t i = 0; i < f->nsamples && !rc; i++) {
			const struct dpmu_perf_sample *smp = &f->samples[i];
			if (smp->event != ev)
				continue;
			const struct dpmu_an_loc *loc = dpmu_an_syms_lookup(s, f, smp->pid, smp->ip);
			char key[1024] = "";
			size_t used = 0;
			for (unsigned k = 0; k < nk && used < sizeof key; k++) {
				char part[512];
				key_text(f, smp, loc, keys[k], part, sizeof part);
				used += (size_t)snprintf(key + used, sizeof key - used, "%s%s",
							 k ? SEP : "", part);
			}
			rc = dpmu_an_tally_add(&t, key, smp->period);
			total += smp->period;
			nsamples++;
		}
		if (rc) {
			dpmu_an_tally_free(&t);
			return dpmu_err_set(err, DPMU_ENOMEM, "report: out of memory");
		}
		if (!nsamples) {
			dpmu_an_tally_free(&t);
			continue;
		}
		size_t n = dpmu_an_tally_sorted(&t, true);
		char tb[32];
		fprintf(out, "# Samples: %llu of event '%s'\n# Event count: %s\n#\n",
			(unsigned long long)nsamples, f->desc.ev[ev].name,
			dpmu_an_thousands(total, tb, sizeof tb));
		/* column widths from the rows shown */
		size_t w[MAX_SORT];
		for (unsigned k = 0; k < nk; k++)
			w[k] = strlen(key_heads[keys[k]]);
		for (size_t i = 0; i < n; i++) {
			const char *p = t.rows[i].key;
			for (unsigned k = 0; k < nk; k++) {
				size_t len = strcspn(p, SEP);
				if (k + 1 < nk && len > w[k])
					w[k] = len;
				p += len + (p[len] ? 1 : 0);
			}
		}
		fprintf(out, "# Overhead   Samples");
		for (unsigned k = 0; k < nk; k++)
			fprintf(out, "  %-*s", (int)w[k], key_heads[keys[k]]);
		fprintf(out, "\n#\n");
		for (size_t i = 0; i < n && !rc; i++) {
			double pct = 100.0 * (double)t.rows[i].weight / (double)total;
			if (pct < o->percent_limit)
				continue;
			fprintf(out, "%9.2f%%  %8llu", pct, (unsigned long long)t.rows[i].samples);
			const char *p = t.rows[i].key;
			char sym[512] = "";
			for (unsigned k = 0; k < nk; k++) {
				int len = (int)strcspn(p, SEP);
				fprintf(out, "  %-*.*s", k + 1 < nk ? (int)w[k] : 0, len, p);
				if ((int)k == symk)
					snprintf(sym, sizeof sym, "%.*s", len, p);
				p += len + (p[len] ? 1 : 0);
			}
			fprintf(out, "\n");
			if (o->callgraph)
				rc = print_callgraph(out, f, s, ev, sym, total);
		}
		fprintf(out, "\n");
		dpmu_an_tally_free(&t);
		if (rc)
			return dpmu_err_set(err, DPMU_ENOMEM, "report: out of memory");
	}
	return 0;
}

/* ---- collapsed stacks ------------------------------------------------------------------ */

int dpmu_an_profile_stacks(const struct dpmu_perf_file *f, struct dpmu_an_syms *s, unsigned event,
			   struct dpmu_an_tally *t)
{
	size_t cap = 4096;
	char *buf = malloc(cap);
	if (!buf)
		return DPMU_ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < f->nsamples && !rc; i++) {
		const struct dpmu_perf_sample *smp = &f->samples[i];
		if (smp->event != event)
			continue;
		size_t used = 0;
		for (uint32_t d = smp->nchain + 1; d-- > 0;) {
			const char *name = dpmu_an_frame(s, f, smp, d)->sym;
			size_t len = strlen(name);
			if (used + len + 2 > cap) {
				char *nb = realloc(buf, cap * 2 + len);
				if (!nb) {
					rc = DPMU_ENOMEM;
					break;
				}
				buf = nb;
				cap = cap * 2 + len;
			}
			if (used)
				buf[used++] = ';';
			/* the format's separators may not be in a name */
			for (size_t k = 0; k < len; k++)
				buf[used++] = name[k] == ';' || name[k] == ' ' ? '_' : name[k];
			buf[used] = '\0';
		}
		if (!rc)
			rc = dpmu_an_tally_add(t, buf, smp->period);
	}
	free(buf);
	return rc;
}

int dpmu_an_profile_folded(FILE *out, const struct dpmu_perf_file *f, struct dpmu_an_syms *s,
			   unsigned event, struct dpmu_err *err)
{
	struct dpmu_an_tally t = {0};
	if (dpmu_an_profile_stacks(f, s, event, &t)) {
		dpmu_an_tally_free(&t);
		return dpmu_err_set(err, DPMU_ENOMEM, "report: out of memory");
	}
	size_t n = dpmu_an_tally_sorted(&t, false);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s %llu\n", t.rows[i].key, (unsigned long long)t.rows[i].weight);
	dpmu_an_tally_free(&t);
	return 0;
}

/* ---- annotation ------------------------------------------------------------------------------ */

int dpmu_an_profile_annotate(FILE *out, const struct dpmu_perf_file *f, struct dpmu_an_syms *s,
			     const char *symbol, struct dpmu_err *err)
{
	/* the function: the sampled one of that name with the most samples */
	const struct dpmu_an_loc *fn = NULL;
	uint32_t pid = 0;
	for (size_t i = 0; i < f->nsamples && !fn; i++) {
		const struct dpmu_an_loc *l = dpmu_an_syms_lookup(s, f, f->samples[i].pid, f->samples[i].ip);
		if (strcmp(l->sym, symbol) == 0 && l->sym_size) {
			fn = l;
			pid = f->samples[i].pid;
		}
	}
	if (!fn)
		return dpmu_err_set(err, DPMU_ENOENT,
				    "--annotate: no sample in a function '%s' with a known size "
				    "(the top symbols of dynpmu report are the ones to name)",
				    symbol);
	uint64_t lo = fn->sym_addr, len = fn->sym_size;
	if (len > (1u << 20))
		return dpmu_err_set(err, DPMU_ERANGE, "--annotate: '%s' is %llu bytes long", symbol,
				    (unsigned long long)len);
	uint8_t *code = malloc(len);
	if (!code || dpmu_an_syms_code(s, f, pid, lo, len, code)) {
		free(code);
		return dpmu_err_set(err, DPMU_EIO, "--annotate: the code of '%s' is not in %s", symbol,
				    fn->dso);
	}
	csh cs;
	if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &cs) != CS_ERR_OK) {
		free(code);
		return dpmu_err_set(err, DPMU_ENOTSUP, "--annotate: capstone has no AArch64");
	}
	cs_insn *ins = NULL;
	size_t n = cs_disasm(cs, code, len, lo, 0, &ins);
	for (unsigned ev = 0; ev < f->desc.nevents; ev++) {
		uint64_t total = 0;
		uint64_t *w = calloc(n ? n : 1, sizeof *w);
		if (!w)
			break;
		for (size_t i = 0; i < f->nsamples; i++) {
			const struct dpmu_perf_sample *smp = &f->samples[i];
			if (smp->event != ev || smp->pid != pid || smp->ip < lo || smp->ip >= lo + len)
				continue;
			size_t k = (size_t)(smp->ip - lo) / 4; /* A64: fixed 4-byte instructions */
			if (k < n && ins[k].address == smp->ip) {
				w[k] += smp->period;
				total += smp->period;
			}
		}
		if (total) {
			fprintf(out, " Percent | %s of %s (%s), event '%s'\n", symbol, fn->dso,
				f->desc.ev[ev].name, f->desc.ev[ev].name);
			fprintf(out, "---------+-------------------------------------------------\n");
			const char *last_file = NULL;
			int last_line = -1;
			for (size_t k = 0; k < n; k++) {
				const struct dpmu_an_loc *l = dpmu_an_syms_lookup(s, f, pid, ins[k].address);
				if (l->file && (l->line != last_line || last_file != l->file)) {
					const char *b = strrchr(l->file, '/');
					fprintf(out, "         :   %s:%d\n", b ? b + 1 : l->file, l->line);
					last_file = l->file;
					last_line = l->line;
				}
				if (w[k])
					fprintf(out, " %7.2f :", 100.0 * (double)w[k] / (double)total);
				else
					fprintf(out, "         :");
				fprintf(out, "   %llx:  %-8s %s\n", (unsigned long long)ins[k].address,
					ins[k].mnemonic, ins[k].op_str);
			}
			fprintf(out, "\n");
		}
		free(w);
	}
	cs_free(ins, n);
	cs_close(&cs);
	free(code);
	return 0;
}
