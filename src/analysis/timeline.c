/*
 * The monitor's timeline (dynpmu monitor --svg FILE): one panel per core,
 * its CPI per interval over simulated time, the baseline's band shaded,
 * each anomaly a tinted span labelled with its number and cause. Plain
 * SVG 1.1 text, as svg.c writes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/an_internal.h"

#define W 900.0
#define PANEL_H 240.0
#define ML 70.0
#define MR 20.0
#define MT 34.0
#define MB 42.0
#define TOP 56.0

/* A step of 1, 2 or 5 times a power of ten giving about n ticks. */
static double tick_step(double range, unsigned n)
{
	if (!(range > 0))
		return 1;
	double raw = range / n, p = pow(10, floor(log10(raw))), m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void panel(FILE *f, const struct dpmu_an_timeline_core *c, double y0, double t_max)
{
	double x0 = ML, x1 = W - MR, top = y0 + MT, bot = y0 + PANEL_H - MB;
	double ymax = 0;
	for (size_t i = 0; i < c->n; i++)
		ymax = fmax(ymax, c->cpi[i]);
	if (c->have_base)
		ymax = fmax(ymax, c->base + c->band);
	ymax = ymax > 0 ? ymax * 1.1 : 1;
	double ystep = tick_step(ymax, 5);
	ymax = ceil(ymax / ystep) * ystep;
#define X(t) (x0 + (x1 - x0) * ((double)(t) / (t_max > 0 ? t_max : 1)))
#define Y(v) (bot - (bot - top) * ((v) / ymax))
	fprintf(f, "<g>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"14\" font-weight=\"bold\">", x0,
		y0 + 20);
	dpmu_an_xml_text(f, c->name);
	fputs("</text>\n", f);
	/* the anomalies, under everything else */
	for (size_t i = 0; i < c->nanom; i++) {
		const struct dpmu_an_timeline_anomaly *a = &c->anom[i];
		double xa = X(a->start_ns), xb = X(a->end_ns ? a->end_ns : (uint64_t)t_max);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#d62728\" "
			   "fill-opacity=\"0.12\"/>\n",
			xa, top, fmax(xb - xa, 1), bot - top);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" "
			   "stroke-width=\"1\"/>\n",
			xa, top, xa, bot);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#a01010\">%u: ", xa + 3,
			top + 12 + 13.0 * (double)(i % 2), a->n);
		dpmu_an_xml_text(f, a->cause[0] ? a->cause : "diagnosing");
		fputs("</text>\n", f);
	}
	if (c->have_base) {
		double ya = Y(fmin(c->base + c->band, ymax)), yb = Y(fmax(c->base - c->band, 0));
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#2ca02c\" "
			   "fill-opacity=\"0.18\"/>\n",
			X(c->base_ns), ya, x1 - X(c->base_ns), fmax(yb - ya, 1));
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#2ca02c\" "
			   "stroke-dasharray=\"4 3\"/>\n",
			X(c->base_ns), Y(c->base), x1, Y(c->base));
	}
	/* axes and ticks */
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", x0, bot,
		x1, bot);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", x0, top,
		x0, bot);
	for (double v = 0; v <= ymax + ystep / 2; v += ystep)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%g</text>\n",
			x0 - 6, Y(v) + 4, v);
	double ms = t_max / 1e6, tstep = tick_step(ms, 8);
	for (double v = 0; v <= ms + tstep / 2; v += tstep)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%g</text>\n",
			X(v * 1e6), bot + 16, v);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">simulated time (ms)"
		   "</text>\n",
		(x0 + x1) / 2, bot + 34);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
		   "transform=\"rotate(-90 %.1f %.1f)\">CPI</text>\n",
		x0 - 46, (top + bot) / 2, x0 - 46, (top + bot) / 2);
	/* the CPI */
	if (c->n) {
		fputs("<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.6\" points=\"", f);
		for (size_t i = 0; i < c->n; i++)
			fprintf(f, "%.1f,%.1f ", X(c->t_ns[i]), Y(c->cpi[i]));
		fputs("\"/>\n", f);
	}
	fputs("</g>\n", f);
#undef X
#undef Y
}

int dpmu_an_write_timeline(FILE *f, const char *title, const struct dpmu_an_timeline_core *cores,
			   size_t ncores, struct dpmu_err *err)
{
	double t_max = 0;
	for (size_t k = 0; k < ncores; k++)
		for (size_t i = 0; i < cores[k].n; i++)
			t_max = fmax(t_max, (double)cores[k].t_ns[i]);
	double h = TOP + PANEL_H * (double)(ncores ? ncores : 1) + 10;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
		   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		   "<text x=\"%.1f\" y=\"24\" font-size=\"16\" font-weight=\"bold\">",
		W, h, W, h, ML);
	dpmu_an_xml_text(f, title);
	fprintf(f, "</text>\n<text x=\"%.1f\" y=\"44\" font-size=\"12\" fill=\"#444\">CPI per interval "
		   "(blue), the baseline and its band (green), anomalies and their causes (red)</text>\n",
		ML);
	if (!ncores)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\">no core ran a whole interval</text>\n",
			ML, TOP + 40);
	for (size_t k = 0; k < ncores; k++)
		panel(f, &cores[k], TOP + PANEL_H * (double)k, t_max);
	fputs("</svg>\n", f);
	if (ferror(f))
		return dpmu_err_set(err, DPMU_EIO, "cannot write the timeline");
	return 0;
}
