/*
 * DPMU_PERF_ONLY builds (cmake/perf_only.cmake): the parts of the command
 * that need the simulation of programs (qemu-aarch64, capstone) or the
 * HTTP endpoint (libmicrohttpd) are not in the binary. stat.c keeps one
 * path for every backend; these stand in for what it calls there, and say
 * why when asked to do it.
 */
#include <stdio.h>

#include "dynpmu/backend.h"
#include "dynpmu/openmetrics.h"
#include "dynpmu/qemu.h"

#define ABSENT "this dynpmu is the perf-only build (DPMU_PERF_ONLY): "

int dpmu_sim_create(const struct dpmu_sim_options *opt, struct dpmu_backend **out,
		    struct dpmu_err *err)
{
	(void)opt;
	*out = NULL;
	return dpmu_err_set(err, DPMU_ENOTSUP, ABSENT "no simulation; use --backend perf");
}

int dpmu_qemu_create(const struct dpmu_qemu_options *opt, struct dpmu_backend **out,
		     struct dpmu_err *err)
{
	(void)opt;
	*out = NULL;
	return dpmu_err_set(err, DPMU_ENOTSUP,
			    ABSENT "no simulated programs; use --backend perf");
}

int dpmu_qemu_place_parse(const char *s, enum dpmu_qemu_place *out, struct dpmu_err *err)
{
	(void)s;
	(void)out;
	return dpmu_err_set(err, DPMU_ENOTSUP, ABSENT "--place is the simulation's");
}

int dpmu_qemu_set_region_events(struct dpmu_backend *b, const struct dpmu_qemu_report_event *ev,
				unsigned nev, struct dpmu_err *err)
{
	(void)b;
	(void)ev;
	(void)nev;
	(void)err;
	return 0;
}

void dpmu_qemu_report(const struct dpmu_backend *b, const struct dpmu_qemu_report_event *ev,
		      unsigned nev, const char *sep, FILE *out)
{
	(void)b;
	(void)ev;
	(void)nev;
	(void)sep;
	(void)out;
}

size_t dpmu_qemu_symbols(const struct dpmu_backend *b, struct dpmu_qemu_symbol *out, size_t cap)
{
	(void)b;
	(void)out;
	(void)cap;
	return 0;
}

bool dpmu_qemu_signal(struct dpmu_backend *b, int sig)
{
	(void)b;
	(void)sig;
	return false;
}

int dpmu_qemu_exit_code(const struct dpmu_backend *b)
{
	(void)b;
	return 0;
}

void dpmu_qemu_sched_stats(const struct dpmu_backend *b, struct dpmu_qemu_sched_stats *out)
{
	(void)b;
	*out = (struct dpmu_qemu_sched_stats){0};
}

int dpmu_om_server_start(const char *hostport, struct dpmu_om_publisher *p,
			 const struct dpmu_om_server_opts *o, struct dpmu_om_server **out,
			 struct dpmu_err *err)
{
	(void)hostport;
	(void)p;
	(void)o;
	*out = NULL;
	return dpmu_err_set(err, DPMU_ENOTSUP, ABSENT "no --listen (no libmicrohttpd)");
}

unsigned dpmu_om_server_port(const struct dpmu_om_server *s)
{
	(void)s;
	return 0;
}

void dpmu_om_server_stop(struct dpmu_om_server *s)
{
	(void)s;
}
