/*
 * The `dynpmu` subcommands: one file per subcommand, each exporting one
 * dpmu_cmd_<name>(argc, argv) (argv[0] is the subcommand name). Exit status:
 * 0 success, 1 a check failed or the run failed, 2 bad usage or bad input.
 */
#ifndef DPMU_TOOL_COMMANDS_H
#define DPMU_TOOL_COMMANDS_H

#include <stdbool.h>
#include <stdio.h>

#include "dynpmu/arch.h"
#include "dynpmu/model.h"

#define DPMU_EXIT_OK 0
#define DPMU_EXIT_FAIL 1
#define DPMU_EXIT_USAGE 2

struct dpmu_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;            /* one line */
};

int dpmu_cmd_help(int argc, char **argv);       /* main.c */
int dpmu_cmd_profiles(int argc, char **argv);   /* profiles.c */
int dpmu_cmd_regs(int argc, char **argv);       /* regs.c */
int dpmu_cmd_demo(int argc, char **argv);       /* demo.c */
int dpmu_cmd_stat(int argc, char **argv);       /* stat.c */
int dpmu_cmd_list(int argc, char **argv);       /* list.c */
int dpmu_list_perf(bool json);                  /* list_perf.c: list --backend perf */
int dpmu_cmd_trace(int argc, char **argv);      /* trace.c */
int dpmu_cmd_trace_record(int argc, char **argv); /* trace_record.c */
int dpmu_cmd_trace_show(int argc, char **argv); /* trace_show.c */
int dpmu_cmd_record(int argc, char **argv);     /* record.c */
int dpmu_cmd_report(int argc, char **argv);     /* report.c */
int dpmu_cmd_monitor(int argc, char **argv);    /* monitor.c */

/* Load a profile (built-in name or JSON file; NULL: the default) and a model
 * of it. On failure prints "dynpmu <cmd>: <message>" to stderr and returns
 * non-zero; the caller owns both on success (util.c). */
int dpmu_tool_open_model(const char *cmd, const char *profile, struct dpmu_profile **p,
			 struct dpmu_model **m);

/* Say on stderr how the measured program ended (status as wait(2) gives
 * it), when not with exit status 0 (util.c). */
void dpmu_tool_program_status(const char *cmd, int status);

/* On an aarch64 Linux host with a core PMU in sysfs, a note on stderr that
 * --backend perf counts on the hardware (util.c). */
void dpmu_tool_perf_hint(const char *cmd);

/* --listen and --linger (listen.c, docs/openmetrics.md), for the
 * subcommands that serve /metrics. linger_parse: seconds from 0 to 86400,
 * else a message naming the input and DPMU_EXIT_USAGE. listen_start: a
 * publisher and its server on HOSTPORT, the port told on stderr; 0, or
 * the exit status (2 for a malformed address or unknown host, 1 for one
 * that cannot be bound), with the message printed. linger: serve on for
 * that many seconds of host time; SIGINT or SIGTERM ends the wait. */
struct dpmu_om_publisher;
struct dpmu_om_server;
int dpmu_tool_linger_parse(const char *cmd, const char *arg, double *out);
int dpmu_tool_listen_start(const char *cmd, const char *hostport,
			   struct dpmu_om_publisher **pub, struct dpmu_om_server **srv);
void dpmu_tool_linger(double seconds);

#endif
