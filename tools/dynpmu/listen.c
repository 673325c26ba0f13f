/*
 * --listen HOST:PORT and --linger S, shared by the subcommands that serve
 * /metrics (stat, monitor; docs/openmetrics.md): the publisher and its
 * server started before the run, and the wait after it that keeps the
 * final snapshot served.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "dynpmu/openmetrics.h"

int dpmu_tool_linger_parse(const char *cmd, const char *arg, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (end == arg || *end || errno || !(v >= 0) || v > 86400) {
		fprintf(stderr, "dynpmu %s: --linger '%s': give seconds from 0 to 86400 (fractions "
				"allowed)\n", cmd, arg);
		return DPMU_EXIT_USAGE;
	}
	*out = v;
	return 0;
}

int dpmu_tool_listen_start(const char *cmd, const char *hostport,
			   struct dpmu_om_publisher **pub, struct dpmu_om_server **srv)
{
	struct dpmu_err err;
	dpmu_err_clear(&err);
	*srv = NULL;
	int rc = dpmu_om_publisher_create(pub, &err);
	if (!rc)
		rc = dpmu_om_server_start(hostport, *pub, NULL, srv, &err);
	if (rc) {
		fprintf(stderr, "dynpmu %s: %s\n", cmd, dpmu_errmsg(&err));
		dpmu_om_publisher_destroy(*pub);
		*pub = NULL;
		/* a malformed address or unknown host is the command line's */
		return rc == DPMU_EINVAL || rc == DPMU_ENOENT ? DPMU_EXIT_USAGE : DPMU_EXIT_FAIL;
	}
	/* the port, for PORT 0 (the system's pick) and for scripts */
	fprintf(stderr, "dynpmu %s: serving /metrics on port %u\n", cmd, dpmu_om_server_port(*srv));
	return 0;
}

/* SIGINT or SIGTERM ends the wait (and dynpmu, normally). */
static volatile sig_atomic_t linger_stop;

static void linger_on_signal(int sig)
{
	(void)sig;
	linger_stop = 1;
}

void dpmu_tool_linger(double seconds)
{
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = linger_on_signal;
	linger_stop = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	struct timespec end, now;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)seconds;
	end.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	while (!linger_stop) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			break;
		/* short naps: a signal between the check and the sleep costs at
		 * most one of them */
		struct timespec nap = {0, 50 * 1000 * 1000};
		nanosleep(&nap, NULL);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
}
