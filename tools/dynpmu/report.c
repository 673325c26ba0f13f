/*
 * dynpmu report: where the samples of a perf.data went, as perf report
 * shows them (docs/record.md): the top entries per event by the sort keys,
 * with -g each function's callers and callees, --annotate a function's
 * instructions, --folded the collapsed stacks and --flame a flame graph.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "dynpmu/analysis.h"
#include "dynpmu/perfdata.h"

struct report_opts {
	const char *input, *sort, *annotate, *flame, *event;
	bool callgraph, folded;
	double percent_limit;
};

static void report_usage(FILE *out)
{
	fprintf(out,
		"usage: dynpmu report [-i FILE] [--sort KEYS] [-g] [--stdio] [--percent-limit P]\n"
		"                     [--annotate SYMBOL] [--folded] [--flame FILE.svg]\n"
		"                     [-e EVENT]\n\n"
		"Where the samples of a perf.data (dynpmu record, perf record) went.\n\n"
		"  -i, --input FILE     the file (default: perf.data)\n"
		"  -s, --sort KEYS      comm, dso, sym, tid, cpu, srcline (default comm,dso,sym)\n"
		"  -g                   each function's callers and callees\n"
		"  --stdio              text on standard output (the only form)\n"
		"  --percent-limit P    leave out entries below P %%\n"
		"  --annotate SYMBOL    the function's instructions with their share of samples\n"
		"  --folded             collapsed stacks, the flame-graph tools' input\n"
		"  --flame FILE         a flame graph (SVG)\n"
		"  -e, --event NAME     the event of --folded and --flame (default: the first)\n");
}

static int parse_opts(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
		{"input", required_argument, NULL, 'i'},
		{"sort", required_argument, NULL, 's'},
		{"call-graph", no_argument, NULL, 'g'},
		{"stdio", no_argument, NULL, 'S'},
		{"percent-limit", required_argument, NULL, 'P'},
		{"annotate", required_argument, NULL, 'a'},
		{"folded", no_argument, NULL, 'F'},
		{"flame", required_argument, NULL, 'f'},
		{"event", required_argument, NULL, 'e'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	memset(o, 0, sizeof *o);
	o->input = "perf.data";
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":i:s:ge:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->input = optarg;
			break;
		case 's':
			o->sort = optarg;
			break;
		case 'g':
			o->callgraph = true;
			break;
		case 'S':
			break;
		case 'P': {
			char *end;
			o->percent_limit = strtod(optarg, &end);
			if (end == optarg || *end || !(o->percent_limit >= 0) || o->percent_limit > 100) {
				fprintf(stderr, "dynpmu report: --percent-limit '%s': give a share "
						"from 0 to 100\n", optarg);
				return DPMU_EXIT_USAGE;
			}
			break;
		}
		case 'a':
			o->annotate = optarg;
			break;
		case 'F':
			o->folded = true;
			break;
		case 'f':
			o->flame = optarg;
			break;
		case 'e':
			o->event = optarg;
			break;
		case 'h':
			report_usage(stdout);
			return -1;
		case ':':
			fprintf(stderr, "dynpmu report: option '%s' needs a value\n", argv[optind - 1]);
			return DPMU_EXIT_USAGE;
		default:
			fprintf(stderr, "dynpmu report: unknown option '%s'\n", argv[optind - 1]);
			report_usage(stderr);
			return DPMU_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dynpmu report: unexpected argument '%s' (the file is -i FILE)\n",
			argv[optind]);
		return DPMU_EXIT_USAGE;
	}
	return 0;
}

static int event_index(const struct dpmu_perf_file *f, const char *name, struct dpmu_err *err)
{
	if (!name)
		return 0;
	for (unsigned i = 0; i < f->desc.nevents; i++)
		if (strcasecmp(f->desc.ev[i].name, name) == 0)
			return (int)i;
	char list[512] = "";
	size_t used = 0;
	for (unsigned i = 0; i < f->desc.nevents && used < sizeof list; i++)
		used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
					 f->desc.ev[i].name);
	return dpmu_err_set(err, DPMU_ENOENT, "-e '%s': the file has no such event (it has %s)",
			    name, list);
}

int dpmu_cmd_report(int argc, char **argv)
{
	struct report_opts o;
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc < 0 ? DPMU_EXIT_OK : rc;
	struct dpmu_err err;
	dpmu_err_clear(&err);
	struct dpmu_perf_file *f = NULL;
	struct dpmu_an_syms *s = NULL;
	rc = dpmu_perf_read(o.input, &f, &err);
	if (!rc)
		rc = dpmu_an_syms_create(&s, &err);
	int ev = 0;
	if (!rc && (ev = event_index(f, o.event, &err)) < 0)
		rc = ev;
	if (!rc && !f->nsamples)
		rc = dpmu_err_set(&err, DPMU_EINVAL, "%s: the file holds no samples", o.input);
	if (!rc && o.flame) {
		FILE *svg = fopen(o.flame, "w");
		if (!svg) {
			rc = dpmu_err_set(&err, DPMU_EIO, "--flame %s: cannot write", o.flame);
		} else {
			char title[300];
			snprintf(title, sizeof title, "Flame graph of %s", o.input);
			rc = dpmu_an_profile_flame(svg, f, s, (unsigned)ev, title, &err);
			if (fclose(svg) && !rc)
				rc = dpmu_err_set(&err, DPMU_EIO, "--flame %s: write failed", o.flame);
		}
	}
	if (!rc && o.folded)
		rc = dpmu_an_profile_folded(stdout, f, s, (unsigned)ev, &err);
	if (!rc && o.annotate)
		rc = dpmu_an_profile_annotate(stdout, f, s, o.annotate, &err);
	if (!rc && !o.folded && !o.annotate && !o.flame) {
		struct dpmu_an_profile_opts po = {o.sort, o.callgraph, o.percent_limit};
		rc = dpmu_an_profile_report(stdout, f, s, &po, &err);
	}
	dpmu_an_syms_destroy(s);
	dpmu_perf_free(f);
	if (rc) {
		fprintf(stderr, "dynpmu report: %s\n", dpmu_errmsg(&err));
		return rc == DPMU_EINVAL || rc == DPMU_ENOENT ? DPMU_EXIT_USAGE : DPMU_EXIT_FAIL;
	}
	return fflush(stdout) == 0 ? DPMU_EXIT_OK : DPMU_EXIT_FAIL;
}
