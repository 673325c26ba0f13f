/*
 * --svg FILE: the metrics of an interval run over time, one small-multiple
 * panel per metric (shared time axis), one line per unit (cpuN, clusterN,
 * core type, system) with a legend. Plain SVG 1.1 text, no library.
 */
#include <math.h>
#include <string.h>

#include "analysis/an_internal.h"

#define PANEL_W 520.0
#define PANEL_H 210.0
#define MARGIN_L 78.0     /* room for y tick labels */
#define MARGIN_R 16.0
#define MARGIN_T 30.0     /* panel title */
#define MARGIN_B 40.0     /* x ticks and label */
#define COLS 2
#define TOP 74.0          /* figure title and legend */
#define MAX_SERIES 48

/* Ten colours distinguishable on screen and in print. */
static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};
#define NCOLOURS (sizeof palette / sizeof palette[0])

/* XML 1.0 text: the five entities escaped, control characters as spaces
 * (svg.c's charts and the monitor's timeline). */
void dpmu_an_xml_textn(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			/* control characters are not allowed in XML 1.0 */
			fputc((unsigned char)s[i] < 0x20 ? ' ' : s[i], f);
		}
	}
}

void dpmu_an_xml_text(FILE *f, const char *s)
{
	dpmu_an_xml_textn(f, s, SIZE_MAX);
}

/* A tick label: 3 significant figures with an SI prefix. */
static void tick_label(double v, char *buf, size_t cap)
{
	static const char *const pre[] = {"", "k", "M", "G", "T"};
	unsigned k = 0;
	while (fabs(v) >= 1000.0 && k + 1 < sizeof pre / sizeof pre[0]) {
		v /= 1000.0;
		k++;
	}
	snprintf(buf, cap, "%.3g%s", v, pre[k]);
}

/* Step of about `n` round (1, 2, 5 x 10^k) ticks over [0, range]. */
static double nice_step(double range, unsigned n)
{
	if (!(range > 0))
		return 1.0;
	double raw = range / n;
	double mag = pow(10.0, floor(log10(raw)));
	double r = raw / mag;
	return (r <= 1.0 ? 1.0 : r <= 2.0 ? 2.0 : r <= 5.0 ? 5.0 : 10.0) * mag;
}

struct series {
	char unit[DPMU_NAME_MAX];
};

static size_t collect_units(const struct dpmu_an_table *t, struct series *out, size_t cap)
{
	size_t n = 0;
	for (size_t si = 0; si < t->nsamples; si++)
		for (size_t ui = 0; ui < t->samples[si].nunits; ui++) {
			const char *name = t->samples[si].units[ui].name;
			bool seen = false;
			for (size_t k = 0; k < n && !seen; k++)
				seen = strcmp(out[k].unit, name) == 0;
			if (!seen && n < cap)
				snprintf(out[n++].unit, sizeof out[0].unit, "%s", name);
		}
	return n;
}

int dpmu_an_write_svg(FILE *f, const struct dpmu_an_table *t, const struct dpmu_an_report *r,
		      struct dpmu_err *err)
{
	if (!r || r->nmetrics == 0)
		return dpmu_err_set(err, DPMU_EINVAL, "an SVG chart needs at least one metric (-M)");
	if (t->nsamples == 0)
		return dpmu_err_set(err, DPMU_EINVAL, "an SVG chart needs at least one sample");
	struct series ser[MAX_SERIES];
	size_t nser = collect_units(t, ser, MAX_SERIES);

	double t_end = (double)dpmu_an_table_end_ns(t);
	/* time axis in s, ms or us, whichever keeps the numbers readable */
	double tscale = 1e9;
	const char *tunit = "s";
	if (t_end < 1e6) {
		tscale = 1e3;
		tunit = "us";
	} else if (t_end < 1e9) {
		tscale = 1e6;
		tunit = "ms";
	}
	double xmax = t_end / tscale;
	double xstep = nice_step(xmax, 5);
	xmax = xstep * ceil(xmax / xstep - 1e-9);
	if (xmax <= 0)
		xmax = xstep;

	size_t rows = (r->nmetrics + COLS - 1) / COLS;
	size_t cols = r->nmetrics < COLS ? r->nmetrics : COLS;
	double width = cols * PANEL_W + 20, height = TOP + rows * PANEL_H + 10;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
		"height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Arial, "
		"sans-serif\" font-size=\"12\">\n",
		width, height, width, height);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
		width, height);
	fprintf(f, "<title>dynpmu metrics: ");
	dpmu_an_xml_text(f, t->workload);
	fprintf(f, "</title>\n<text x=\"12\" y=\"22\" font-size=\"16\" font-weight=\"bold\">"
		   "dynpmu metrics over time: ");
	dpmu_an_xml_text(f, t->workload[0] ? t->workload : "?");
	fprintf(f, "</text>\n");

	/* legend: one swatch per unit */
	fprintf(f, "<g class=\"legend\">\n");
	double lx = 12;
	for (size_t k = 0; k < nser; k++) {
		double ly = 44 + 18.0 * (double)(k / 12);
		double x = lx + 90.0 * (double)(k % 12);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			"stroke-width=\"3\"/><text x=\"%.1f\" y=\"%.1f\">",
			x, ly, x + 22, ly, palette[k % NCOLOURS], x + 27, ly + 4);
		dpmu_an_xml_text(f, ser[k].unit);
		fprintf(f, "</text>\n");
	}
	fprintf(f, "</g>\n");

	for (size_t mi = 0; mi < r->nmetrics; mi++) {
		const struct dpmu_an_metric *m = r->metrics[mi];
		double ox = 10 + PANEL_W * (double)(mi % COLS);
		double oy = TOP + PANEL_H * (double)(mi / COLS);
		double px = ox + MARGIN_L, py = oy + MARGIN_T;
		double pw = PANEL_W - MARGIN_L - MARGIN_R, ph = PANEL_H - MARGIN_T - MARGIN_B;

		/* the value range over every available point, always including 0 */
		double lo = 0, hi = 0;
		bool any = false;
		char why[160] = "";
		for (size_t si = 0; si < t->nsamples; si++)
			for (size_t ui = 0; ui < t->samples[si].nunits; ui++) {
				struct dpmu_an_value v;
				int rc = dpmu_an_metric_eval(m, t, &t->samples[si],
							     &t->samples[si].units[ui], &v, err);
				if (rc)
					return rc;
				if (!v.available) {
					if (!why[0])
						snprintf(why, sizeof why, "%s", v.why);
					continue;
				}
				any = true;
				if (v.value < lo)
					lo = v.value;
				if (v.value > hi)
					hi = v.value;
			}
		double ystep = nice_step(hi - lo, 4);
		double ymax = ystep * ceil(hi / ystep - 1e-9);
		double ymin = lo < 0 ? -ystep * ceil(-lo / ystep - 1e-9) : 0;
		if (ymax <= ymin)
			ymax = ymin + ystep;

		fprintf(f, "<g class=\"panel\" data-metric=\"%s\">\n", m->name);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\">%s (",
			px, oy + 18, m->name);
		dpmu_an_xml_text(f, m->unit);
		fprintf(f, ")</text>\n");
		fprintf(f,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fafafa\" "
			"stroke=\"#444444\"/>\n",
			px, py, pw, ph);
		/* y grid and ticks */
		for (double yv = ymin; yv <= ymax + ystep * 1e-6; yv += ystep) {
			double y = py + ph - (yv - ymin) / (ymax - ymin) * ph;
			char lab[32];
			tick_label(fabs(yv) < ystep * 1e-9 ? 0 : yv, lab, sizeof lab);
			fprintf(f,
				"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>"
				"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
				px, y, px + pw, y, px - 6, y + 4, lab);
		}
		/* x ticks */
		for (double xv = 0; xv <= xmax + xstep * 1e-6; xv += xstep) {
			double x = px + xv / xmax * pw;
			char lab[32];
			tick_label(xv, lab, sizeof lab);
			fprintf(f,
				"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444444\"/>"
				"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
				x, py + ph, x, py + ph + 5, x, py + ph + 18, lab);
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (%s)</text>\n",
			px + pw / 2, py + ph + 34, tunit);
		fprintf(f,
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
			"transform=\"rotate(-90 %.1f %.1f)\">",
			ox + 14, py + ph / 2, ox + 14, py + ph / 2);
		dpmu_an_xml_text(f, m->unit);
		fprintf(f, "</text>\n");
		if (!any) {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#a00000\">"
				   "not available: ",
				px + pw / 2, py + ph / 2);
			dpmu_an_xml_text(f, why);
			fprintf(f, "</text>\n</g>\n");
			continue;
		}
		/* one line per unit, a dot on each point when there are few */
		for (size_t k = 0; k < nser; k++) {
			size_t npts = 0;
			for (size_t si = 0; si < t->nsamples; si++) {
				const struct dpmu_an_sample *s = &t->samples[si];
				const struct dpmu_an_unit *u = dpmu_an_unit_find(s, ser[k].unit);
				if (!u)
					continue;
				struct dpmu_an_value v;
				int rc = dpmu_an_metric_eval(m, t, s, u, &v, err);
				if (rc)
					return rc;
				if (!v.available)
					continue;
				double x = px + (double)(s->start_ns + s->length_ns) / tscale / xmax * pw;
				double y = py + ph - (v.value - ymin) / (ymax - ymin) * ph;
				if (npts == 0) {
					fprintf(f, "<polyline data-unit=\"");
					dpmu_an_xml_text(f, ser[k].unit);
					fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
						palette[k % NCOLOURS]);
				}
				fprintf(f, "%s%.1f,%.1f", npts ? " " : "", x, y);
				npts++;
			}
			if (npts)
				fprintf(f, "\"/>\n");
			if (!npts || t->nsamples > 40)
				continue;
			for (size_t si = 0; si < t->nsamples; si++) {
				const struct dpmu_an_sample *s = &t->samples[si];
				const struct dpmu_an_unit *u = dpmu_an_unit_find(s, ser[k].unit);
				struct dpmu_an_value v;
				if (!u || dpmu_an_metric_eval(m, t, s, u, &v, err) || !v.available)
					continue;
				double x = px + (double)(s->start_ns + s->length_ns) / tscale / xmax * pw;
				double y = py + ph - (v.value - ymin) / (ymax - ymin) * ph;
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", x, y,
					palette[k % NCOLOURS]);
			}
		}
		fprintf(f, "</g>\n");
	}
	fprintf(f, "</svg>\n");
	if (ferror(f))
		return dpmu_err_set(err, DPMU_EIO, "writing the SVG failed");
	return 0;
}
