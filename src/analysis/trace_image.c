/*
 * A trace directory's program image and symbols (include/dynpmu/tracedir.h):
 * the bytes each mapping maps, read from its file, are the decoder's
 * memory image; the same mappings name the functions (symbols.c). And the
 * hot functions of a trace: its decoded instructions tallied by function.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynpmu/analysis.h"
#include "dynpmu/perfdata.h"
#include "dynpmu/tracedir.h"

int dpmu_tracedir_image(const struct dpmu_tracedir *t, struct dpmu_tracedir_image *out,
			struct dpmu_err *err)
{
	memset(out, 0, sizeof *out);
	for (unsigned i = 0; i < t->nmaps; i++) {
		const struct dpmu_tracedir_map *m = &t->maps[i];
		FILE *f = fopen(m->path, "rb");
		if (!f) {
			dpmu_tracedir_image_free(out);
			return dpmu_err_set(err, DPMU_EINVAL,
					    "%s: cannot open (a file the traced program mapped at 0x%llx; "
					    "the decoder needs it)",
					    m->path, (unsigned long long)m->start);
		}
		uint8_t *b = m->len && m->len < (1ull << 32) ? malloc(m->len) : NULL;
		size_t got = 0;
		if (b && fseek(f, (long)m->pgoff, SEEK_SET) == 0)
			got = fread(b, 1, m->len, f);
		fclose(f);
		if (!b)
			continue;
		out->buf[out->n] = b;
		out->img[out->n] = (struct dpmu_etm_image){ m->start, b, got };
		out->n++;
	}
	return 0;
}

void dpmu_tracedir_image_free(struct dpmu_tracedir_image *im)
{
	for (size_t i = 0; i < im->n; i++)
		free(im->buf[i]);
	memset(im, 0, sizeof *im);
}

struct hot_ctx {
	struct dpmu_an_syms *syms;
	struct dpmu_perf_file *pf;
	struct dpmu_an_hot *hot;
	size_t cap, n;
	uint64_t total;
};

static int tally(void *ctx, const struct dpmu_etm_elem *el)
{
	struct hot_ctx *x = ctx;
	if (el->kind != DPMU_ETM_ELEM_RANGE)
		return 0;
	for (uint64_t pc = el->start; pc < el->end; pc += 4) {
		const struct dpmu_an_loc *l = dpmu_an_syms_lookup(x->syms, x->pf, 1, pc);
		const char *name = l->sym ? l->sym : "[unknown]";
		x->total++;
		size_t i = 0;
		while (i < x->n && strcmp(x->hot[i].name, name) != 0)
			i++;
		if (i == x->n) {
			if (x->n == x->cap)
				continue; /* more functions than kept: counted in the total */
			snprintf(x->hot[x->n].name, sizeof x->hot[0].name, "%s", name);
			x->hot[x->n++].insns = 0;
		}
		x->hot[i].insns++;
	}
	return 0;
}

static int by_insns(const void *a, const void *b)
{
	const struct dpmu_an_hot *x = a, *y = b;
	return (x->insns < y->insns) - (x->insns > y->insns);
}

int dpmu_an_trace_hot(const struct dpmu_tracedir *t, struct dpmu_an_hot *out, size_t cap, size_t *n,
		      uint64_t *total, struct dpmu_err *err)
{
	*n = 0;
	*total = 0;
	struct dpmu_tracedir_image im;
	int rc = dpmu_tracedir_image(t, &im, err);
	if (rc)
		return rc;
	struct dpmu_perf_map pm[DPMU_TRACEDIR_MAX_MAPS];
	for (unsigned i = 0; i < t->nmaps; i++)
		pm[i] = (struct dpmu_perf_map){ 1, t->maps[i].start, t->maps[i].len, t->maps[i].pgoff,
						t->maps[i].path };
	struct dpmu_perf_file pf = { 0 };
	pf.maps = pm;
	pf.nmaps = t->nmaps;
	struct hot_ctx x = { .pf = &pf, .hot = out, .cap = cap };
	rc = dpmu_an_syms_create(&x.syms, err);
	if (!rc)
		rc = dpmu_etm_decode("trace", t->trace, t->trace_len, &t->regs, im.img, im.n, tally, &x,
				     err);
	dpmu_an_syms_destroy(x.syms);
	dpmu_tracedir_image_free(&im);
	qsort(out, x.n, sizeof *out, by_insns);
	*n = x.n;
	*total = x.total;
	return rc;
}
