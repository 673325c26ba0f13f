/*
 * A flame graph of a perf.data's stacks (dynpmu report --flame): the
 * collapsed stacks in key order, so that stacks sharing a prefix lie
 * together; each run of equal frames at a depth is one box, as wide as
 * the events under it, the outermost at the bottom ("all" below them),
 * its name in it when it fits and in its tooltip always. Plain SVG 1.1.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/an_internal.h"
#include "analysis/profile_internal.h"

#define WIDTH 1200.0
#define ROW 16.0
#define PAD 10.0
#define TOP 34.0
#define MAX_DEPTH 260u

/* A warm colour from the name, so a function keeps its colour. */
static void colour(const char *name, unsigned *r, unsigned *g, unsigned *b)
{
	uint32_t h = 2166136261u;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	*r = 205 + (h % 50);
	*g = 80 + ((h >> 8) % 150);
	*b = 20 + ((h >> 16) % 50);
}

struct box {
	char name[256];
	uint64_t start;
};

static void emit(FILE *out, const char *name, unsigned depth, uint64_t start, uint64_t end,
		 uint64_t total, double height)
{
	double w = (double)(end - start) / (double)total * (WIDTH - 2 * PAD);
	if (w < 0.1)
		return; /* too narrow to see; its events are in its parent's box */
	double x = PAD + (double)start / (double)total * (WIDTH - 2 * PAD);
	double y = height - PAD - ROW * (depth + 1);
	unsigned r, g, b;
	colour(name, &r, &g, &b);
	fprintf(out, "<g><title>");
	dpmu_an_xml_text(out, name);
	char tb[32];
	fprintf(out, " (%s events, %.2f%%)</title>", dpmu_an_thousands(end - start, tb, sizeof tb),
		100.0 * (double)(end - start) / (double)total);
	fprintf(out,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"rgb(%u,%u,%u)\" "
		"rx=\"2\"/>",
		x, y, w, ROW - 1, r, g, b);
	size_t fit = (size_t)((w - 6) / 7.0); /* about 7 px a character at 12 px */
	if (fit >= 3) {
		size_t n = strlen(name);
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + ROW - 4);
		if (n <= fit) {
			dpmu_an_xml_textn(out, name, n);
		} else {
			dpmu_an_xml_textn(out, name, fit - 2);
			fputs("..", out);
		}
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

int dpmu_an_profile_flame(FILE *out, const struct dpmu_perf_file *f, struct dpmu_an_syms *s,
			  unsigned event, const char *title, struct dpmu_err *err)
{
	struct dpmu_an_tally t = {0};
	if (dpmu_an_profile_stacks(f, s, event, &t)) {
		dpmu_an_tally_free(&t);
		return dpmu_err_set(err, DPMU_ENOMEM, "report: out of memory");
	}
	size_t n = dpmu_an_tally_sorted(&t, false);
	uint64_t total = 0;
	unsigned maxd = 0;
	for (size_t i = 0; i < n; i++) {
		total += t.rows[i].weight;
		unsigned d = 1;
		for (const char *p = t.rows[i].key; *p; p++)
			d += *p == ';';
		if (d > maxd)
			maxd = d;
	}
	if (!total) {
		dpmu_an_tally_free(&t);
		return dpmu_err_set(err, DPMU_EINVAL, "--flame: event '%s' has no samples",
				    event < f->desc.nevents ? f->desc.ev[event].name : "?");
	}
	if (maxd > MAX_DEPTH - 1)
		maxd = MAX_DEPTH - 1;
	double height = TOP + ROW * (maxd + 1) + 2 * PAD;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}"
		"rect{stroke:#fff;stroke-width:0.5}</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f8\"/>\n"
		"<text x=\"%.0f\" y=\"22\" text-anchor=\"middle\" style=\"font-size:16px\">",
		WIDTH, height, WIDTH, height, WIDTH / 2);
	dpmu_an_xml_text(out, title);
	char tb[32];
	fprintf(out, " (%s: %s events)</text>\n", f->desc.ev[event].name,
		dpmu_an_thousands(total, tb, sizeof tb));
	struct box *open = calloc(MAX_DEPTH, sizeof *open);
	if (!open) {
		dpmu_an_tally_free(&t);
		return dpmu_err_set(err, DPMU_ENOMEM, "report: out of memory");
	}
	unsigned nopen = 0;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		/* the stack's frames, outermost first */
		const char *p = t.rows[i].key;
		unsigned d = 0, common = 0;
		bool same = true;
		while (*p && d < MAX_DEPTH - 1) {
			size_t len = strcspn(p, ";");
			char name[256];
			snprintf(name, sizeof name, "%.*s", (int)len, p);
			if (same && d < nopen && strcmp(open[d].name, name) == 0) {
				common = d + 1;
			} else {
				if (same)
					/* the open frames from here on end where this stack starts */
					for (unsigned k = nopen; k-- > d;)
						emit(out, open[k].name, k + 1, open[k].start, x, total, height);
				same = false;
				snprintf(open[d].name, sizeof open[d].name, "%s", name);
				open[d].start = x;
			}
			d++;
			p += len + (p[len] ? 1 : 0);
		}
		if (same)
			for (unsigned k = nopen; k-- > common;)
				emit(out, open[k].name, k + 1, open[k].start, x, total, height);
		nopen = d;
		x += t.rows[i].weight;
	}
	for (unsigned k = nopen; k-- > 0;)
		emit(out, open[k].name, k + 1, open[k].start, x, total, height);
	emit(out, "all", 0, 0, total, total, height);
	fputs("</svg>\n", out);
	free(open);
	dpmu_an_tally_free(&t);
	if (fflush(out) || ferror(out))
		return dpmu_err_set(err, DPMU_EIO, "--flame: write failed");
	return 0;
}
