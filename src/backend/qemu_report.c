/*
 * The qemu backend's part of the report: the regions (marker.h), the
 * threads (which core each vCPU ran on) and the functions (--by-symbol),
 * and what the run's end says of the counts (a fork, a fatal signal).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "backend/qemu_internal.h"

static int cmp_sym(const void *a, const void *b)
{
	const struct symstat *x = a, *y = b;
	if (x->cycles != y->cycles)
		return x->cycles < y->cycles ? 1 : -1;
	return x->insns < y->insns ? 1 : x->insns > y->insns ? -1 : 0;
}

size_t dpmu_qemu_symbols(const struct dpmu_backend *b, struct dpmu_qemu_symbol *out, size_t cap)
{
	const struct qemu_be *q = (const struct qemu_be *)b;
	if (!q->by_symbol || !q->nsym)
		return 0;
	struct symstat *v = malloc(q->nsym * sizeof *v);
	if (!v)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < q->symcap; i++)
		if (q->sym[i].insns || q->sym[i].name)
			v[n++] = q->sym[i];
	qsort(v, n, sizeof *v, cmp_sym);
	for (size_t i = 0; i < n && i < cap; i++) {
		const char *name = name_at(q, v[i].name);
		out[i] = (struct dpmu_qemu_symbol){ name ? name : "[unknown]", v[i].cycles, v[i].insns,
						    v[i].loads, v[i].stores, v[i].branches };
	}
	free(v);
	return n;
}

/* The report's tables (regions, threads) share their cells: a text row
 * has a column per report event, "-" for a cluster or AMU event (those
 * counters are not split: "-", not 0); a CSV row is KIND,A,B,VALUE,EVENT,
 * one per core event. */
static unsigned report_columns(const struct qemu_be *q, unsigned nev)
{
	return q->nev < nev ? q->nev : nev;
}

static void event_heads(FILE *out, const struct dpmu_qemu_report_event *ev, unsigned ne)
{
	for (unsigned e = 0; e < ne; e++)
		fprintf(out, " %18s", ev[e].name);
	fprintf(out, "\n");
}

static void event_cells(FILE *out, const struct dpmu_qemu_report_event *ev, unsigned ne,
			const uint64_t *val)
{
	for (unsigned e = 0; e < ne; e++) {
		if (ev[e].code < 0)
			fprintf(out, " %18s", "-");
		else
			fprintf(out, " %18llu", (unsigned long long)val[e]);
	}
	fprintf(out, "\n");
}

static void csv_row(FILE *out, const char *sep, const char *kind, const char *a, const char *b,
		    uint64_t value, const char *event)
{
	fprintf(out, "%s%s%s%s%s%s%llu%s%s\n", kind, sep, a, sep, b, sep, (unsigned long long)value,
		sep, event);
}

static void event_rows(FILE *out, const char *sep, const char *kind, const char *a, const char *b,
		       const struct dpmu_qemu_report_event *ev, unsigned ne, const uint64_t *val)
{
	for (unsigned e = 0; e < ne; e++)
		if (ev[e].code >= 0)
			csv_row(out, sep, kind, a, b, val[e], ev[e].name);
}

static const char *plural(uint64_t n, const char *one, const char *more)
{
	return n == 1 ? one : more;
}

/* A line of the report's notes, the first after a blank line. */
static __attribute__((format(printf, 3, 4))) void note_line(FILE *out, bool *head,
							   const char *fmt, ...)
{
	if (!*head)
		fputc('\n', out);
	*head = true;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
}

/* Markers that did not pair up, or were not counted: each region's counts
 * are what the table says, and why they may not be what was meant. In CSV,
 * rows region,NAME,,N,WHAT and regions,,,N,markers_not_counted. */
static void report_region_notes(const struct qemu_be *q, const char *sep, FILE *out)
{
	bool head = false;
	for (unsigned r = 0; r < q->nregion; r++) {
		const struct region *g = &q->region[r];
		uint64_t at_exit = 0;
		for (unsigned i = 0, nv = nvcpus(q); i < nv; i++)
			for (unsigned d = 0; d < q->vs[i].depth; d++)
				if (q->vs[i].stack[d] == r)
					at_exit += q->vs[i].nest[d];
		const char *name = name_at(q, g->name);
		if (!name)
			name = "?";
		struct {
			uint64_t n;
			const char *one, *more, *what, *csv;
		} note[] = {
			{at_exit, "entry", "entries", "still open at the program's exit, counted to it",
			 "open_at_exit"},
			{g->left_open, "entry", "entries",
			 "left open by a thread that ended, counted to its end", "left_open"},
			{g->stray_ends, "end", "ends", "with no entry open, not counted", "stray_ends"},
		};
		for (unsigned k = 0; k < sizeof note / sizeof note[0]; k++) {
			if (!note[k].n)
				continue;
			if (sep) {
				csv_row(out, sep, "region", name, "", note[k].n, note[k].csv);
				continue;
			}
			note_line(out, &head, " region %s: %llu %s %s\n", name,
				  (unsigned long long)note[k].n,
				  plural(note[k].n, note[k].one, note[k].more), note[k].what);
		}
	}
	uint64_t lost = q->region_refused + q->markers_dropped;
	if (sep && lost)
		csv_row(out, sep, "regions", "", "", lost, "markers_not_counted");
	if (sep)
		return;
	if (q->region_refused)
		note_line(out, &head, " %llu region %s of names beyond the first %u not counted\n",
			  (unsigned long long)q->region_refused,
			  plural(q->region_refused, "marker", "markers"), REGION_MAX);
	if (q->markers_dropped)
		note_line(out, &head, " %llu region %s beyond %zu in one block not counted\n",
			  (unsigned long long)q->markers_dropped,
			  plural(q->markers_dropped, "marker", "markers"),
			  sizeof q->vs[0].rev / sizeof q->vs[0].rev[0]);
}

/* Which core each vCPU ran on and the instructions it retired, when more
 * than one ran (one thread's are the totals), and with per_thread every
 * core event of the report too, whatever ran: what -A's rows are made of
 * (docs/frontend.md "Threads and interleaving"). */
static void report_threads(const struct qemu_be *q, const struct dpmu_qemu_report_event *ev,
			   unsigned nev, const char *sep, FILE *out)
{
	unsigned nv = nvcpus(q), ran = 0;
	for (unsigned i = 0; i < nv; i++)
		ran += q->vs[i].insns != 0;
	if (ran == 0 || (ran < 2 && !q->per_thread))
		return;
	unsigned ne = q->per_thread ? report_columns(q, nev) : 0;
	if (!sep) {
		fprintf(out, "\n Threads (qemu's vCPUs: a thread started after another ended may "
			     "take its index):\n\n  %6s %6s %18s",
			"vcpu", "core", "instructions");
		event_heads(out, ev, ne);
	}
	for (unsigned i = 0; i < nv; i++) {
		const struct vstream *v = &q->vs[i];
		if (!v->insns)
			continue;
		char vcpu[16], core[16];
		snprintf(vcpu, sizeof vcpu, "vcpu%u", i);
		snprintf(core, sizeof core, "cpu%u", v->core);
		if (sep) {
			csv_row(out, sep, "thread", vcpu, core, v->insns, "instructions");
			event_rows(out, sep, "thread", vcpu, core, ev, ne, q->vev[i]);
			continue;
		}
		fprintf(out, "  %6u %6s %18llu", i, core, (unsigned long long)v->insns);
		event_cells(out, ev, ne, q->vev[i]);
	}
}

void dpmu_qemu_report(const struct dpmu_backend *b, const struct dpmu_qemu_report_event *ev,
		      unsigned nev, const char *sep, FILE *out)
{
	const struct qemu_be *q = (const struct qemu_be *)b;
	unsigned ne = report_columns(q, nev);
	if (q->nregion && !sep) {
		fprintf(out, "\n Regions (DPMU_REGION_BEGIN/END):\n\n");
		fprintf(out, "  %-24s %10s %18s", "region", "entries", "instructions");
		event_heads(out, ev, ne);
	}
	for (unsigned r = 0; r < q->nregion; r++) {
		const char *name = name_at(q, q->region[r].name);
		if (!name)
			name = "?";
		if (sep) {
			csv_row(out, sep, "region", name, "", q->region[r].insns, "instructions");
			event_rows(out, sep, "region", name, "", ev, ne, q->region[r].ev);
			continue;
		}
		fprintf(out, "  %-24s %10llu %18llu", name, (unsigned long long)q->region[r].entries,
			(unsigned long long)q->region[r].insns);
		event_cells(out, ev, ne, q->region[r].ev);
	}
	report_region_notes(q, sep, out);
	report_threads(q, ev, nev, sep, out);
	size_t n = dpmu_qemu_symbols(b, NULL, 0);
	struct dpmu_qemu_symbol *v = n ? malloc(n * sizeof *v) : NULL;
	if (v) {
		dpmu_qemu_symbols(b, v, n);
		if (!sep)
			fprintf(out, "\n Per function (by core cycles):\n\n  %14s %14s %6s %12s "
				     "%12s %12s  %s\n",
				"cycles", "instructions", "IPC", "loads", "stores", "branches", "function");
		/* the table stays readable: the 40 costliest, the rest summed */
		size_t shown = sep || n <= 40 ? n : 40;
		for (size_t i = 0; i < shown; i++) {
			if (sep)
				fprintf(out, "symbol%s%s%s%llu%s%llu%s%llu%s%llu%s%llu\n", sep, v[i].name,
					sep, (unsigned long long)v[i].cycles, sep,
					(unsigned long long)v[i].insns, sep,
					(unsigned long long)v[i].loads, sep,
					(unsigned long long)v[i].stores, sep,
					(unsigned long long)v[i].branches);
			else
				fprintf(out, "  %14llu %14llu %6.2f %12llu %12llu %12llu  %s\n",
					(unsigned long long)v[i].cycles, (unsigned long long)v[i].insns,
					v[i].cycles ? (double)v[i].insns / (double)v[i].cycles : 0.0,
					(unsigned long long)v[i].loads, (unsigned long long)v[i].stores,
					(unsigned long long)v[i].branches, v[i].name);
		}
		if (shown < n) {
			uint64_t cy = 0, in = 0;
			for (size_t i = shown; i < n; i++) {
				cy += v[i].cycles;
				in += v[i].insns;
			}
			fprintf(out, "  %14llu %14llu %6s %12s %12s %12s  (%zu more functions)\n",
				(unsigned long long)cy, (unsigned long long)in, "", "", "", "", n - shown);
		}
		free(v);
	}
	unsigned forks = atomic_load_explicit(&q->shm->forks, memory_order_relaxed);
	if (forks)
		fprintf(out, "\n the program forked %u process%s: the counts are its own process's, "
			     "without what %s ran (docs/frontend.md \"Limits\")\n",
			forks, forks == 1 ? "" : "es", forks == 1 ? "that child" : "those children");
	if (q->exited && WIFSIGNALED(q->status)) {
		int sig = WTERMSIG(q->status);
		fprintf(out, "\n the program was killed by signal %d (SIG%s: %s); the counts are up "
			     "to that point\n",
			sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", strsignal(sig));
	}
}
