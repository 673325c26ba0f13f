/*
 * dynpmu: subcommand dispatch. Each subcommand lives in its own file and has
 * one row in the table below.
 */
#include <string.h>

#include "commands.h"

static const struct dpmu_cmd commands[] = {
	{ "help", dpmu_cmd_help, "this list" },
	{ "profiles", dpmu_cmd_profiles, "list the built-in cluster profiles" },
#ifndef DPMU_PERF_ONLY
	{ "regs", dpmu_cmd_regs, "register console on the model: [--profile NAME|FILE] [SCRIPT]" },
	{ "demo", dpmu_cmd_demo, "periodic snapshots of every PMU on the simulated cluster" },
#endif
	/* ---- other subcommands: one row each, keep this order ---- */
	{ "stat", dpmu_cmd_stat, "counts like perf stat, of a trace or an aarch64 program: --trace FILE | -- PROGRAM [ARGS]; --backend perf: this machine" },
#ifndef DPMU_PERF_ONLY
	{ "record", dpmu_cmd_record, "samples of an aarch64 program on counter overflow, into a perf.data: -- PROGRAM [ARGS]" },
	{ "report", dpmu_cmd_report, "where the samples of a perf.data went: top symbols, call graph, --annotate, --flame" },
	{ "monitor", dpmu_cmd_monitor, "seed 003's automated monitor: AMU baseline, anomalies, PMU diagnosis: -- PROGRAM [ARGS]" },
	{ "trace", dpmu_cmd_trace, "ETMv4 trace: record, show; instruction traces: convert" },
#endif
	{ "list", dpmu_cmd_list, "events of a profile: code, PMU, implemented, simulated: [--profile P] [--json]" },
	/* ---- end of other subcommands ---- */
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
	fprintf(out, "usage: dynpmu <command> [options]\n\n"
		     "dynpmu monitors Arm DynamIQ clusters: core PMU, AMU and DSU cluster PMU.\n\n"
		     "commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "\n'dynpmu <command> --help' describes a command's options.\n");
}

int dpmu_cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return DPMU_EXIT_OK;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return DPMU_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
		return dpmu_cmd_help(argc - 1, argv + 1);
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "dynpmu: unknown command '%s'\n\n", name);
	usage(stderr);
	return DPMU_EXIT_USAGE;
}
