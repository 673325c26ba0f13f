/*
 * The OpenMetrics endpoint's costs (docs/openmetrics.md), for N series
 * (a sample per cpu and event, as stat --listen publishes):
 *   publish   build a snapshot and hand it to the publisher: what the
 *             measuring thread pays each interval
 *   render    the text exposition of one snapshot: a scrape's CPU
 *   scrape    GET /metrics over loopback, a new connection each (no
 *             keep-alive), one client, while nothing publishes
 * Usage: bench_openmetrics [SERIES] (default: 100, 1000 and 10000).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_util.h"
#include "dynpmu/openmetrics.h"

static const char *const events[] = {"CPU_CYCLES", "INST_RETIRED", "BR_RETIRED",
				     "BR_MIS_PRED_RETIRED", "L1D_CACHE", "L1D_CACHE_REFILL",
				     "L2D_CACHE", "L2D_CACHE_REFILL"};

static struct dpmu_om_snapshot *build(unsigned n, uint64_t seq)
{
	struct dpmu_om_snapshot *s;
	struct dpmu_err err;
	if (dpmu_om_snapshot_create(&s, &err))
		exit(1);
	int f = dpmu_om_family(s, "dynpmu_events_total", DPMU_OM_COUNTER, "events", &err);
	for (unsigned i = 0; i < n; i++) {
		char cpu[16];
		snprintf(cpu, sizeof cpu, "%u", i / 8);
		struct dpmu_om_label l[] = {{"cpu", cpu}, {"core_type", "Cortex-A75"},
					    {"cluster", "0"}, {"event", events[i % 8]}};
		if (dpmu_om_add_u64(s, f, l, 4, seq * 1000003 + i, &err))
			exit(1);
	}
	return s;
}

static size_t scrape(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a))
		exit(1);
	const char *req = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0)
		exit(1);
	static char buf[1 << 16];
	size_t got = 0;
	for (ssize_t r; (r = recv(fd, buf, sizeof buf, 0)) > 0;)
		got += (size_t)r;
	close(fd);
	return got;
}

static void measure(unsigned n, struct dpmu_om_publisher *p, unsigned port)
{
	/* about the same work per size: fewer rounds for more series */
	unsigned rounds = 2000000 / n < 20 ? 20 : 2000000 / n;
	double t0 = bench_now();
	for (unsigned i = 0; i < rounds; i++)
		dpmu_om_publish(p, build(n, i));
	double publish = (bench_now() - t0) / rounds;

	struct dpmu_om_snapshot *s = dpmu_om_acquire(p);
	size_t bytes = 0;
	t0 = bench_now();
	for (unsigned i = 0; i < rounds; i++) {
		char *text;
		size_t len;
		if (dpmu_om_render(s, &text, &len, NULL))
			exit(1);
		bytes = len;
		free(text);
	}
	double render = (bench_now() - t0) / rounds;
	dpmu_om_snapshot_release(s);

	unsigned scrapes = rounds / 4 < 10 ? 10 : rounds / 4;
	size_t got = 0;
	t0 = bench_now();
	for (unsigned i = 0; i < scrapes; i++)
		got += scrape(port);
	double per_scrape = (bench_now() - t0) / scrapes;
	printf("{\"bench\":\"openmetrics\",\"series\":%u,\"bytes\":%zu,\"publish_us\":%.2f,"
	       "\"render_us\":%.2f,\"scrape_us\":%.2f,\"scrapes_per_s\":%.0f,\"check\":%zu}\n",
	       n, bytes, publish * 1e6, render * 1e6, per_scrape * 1e6, 1 / per_scrape,
	       got / scrapes);
}

int main(int argc, char **argv)
{
	uint64_t one = bench_count_arg(argc, argv, "bench_openmetrics", "series", 0);
	struct dpmu_om_publisher *p;
	struct dpmu_om_server *srv;
	struct dpmu_err err;
	if (dpmu_om_publisher_create(&p, &err) ||
	    dpmu_om_server_start("127.0.0.1:0", p, NULL, &srv, &err)) {
		fprintf(stderr, "bench_openmetrics: %s\n", err.msg);
		return 1;
	}
	unsigned port = dpmu_om_server_port(srv);
	if (one)
		measure((unsigned)one, p, port);
	else
		for (unsigned n = 100; n <= 10000; n *= 10)
			measure(n, p, port);
	dpmu_om_server_stop(srv);
	dpmu_om_publisher_destroy(p);
	return 0;
}
