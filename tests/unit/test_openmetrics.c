/*
 * The OpenMetrics endpoint (src/analysis/openmetrics.c, om_server.c):
 * the text exposition format 0.0.4 as rendered (HELP and TYPE once per
 * family, counters named _total, label and HELP escaping, numbers that
 * read back exactly), the publisher's hand-over, and the HTTP server
 * under the clients a fleet's network brings: several scrapes at once,
 * malformed requests, clients that stop reading or vanish mid-reply,
 * while a publisher keeps publishing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "dynpmu/openmetrics.h"

static char *render(const struct dpmu_om_snapshot *s)
{
	char *text;
	size_t len;
	struct dpmu_err err;
	assert_int_equal(dpmu_om_render(s, &text, &len, &err), 0);
	assert_int_equal(strlen(text), len);
	return text;
}

/* memmem with lengths: strstr would scan the rest of a megabyte reply
 * for its end at every match (the sanitizer's strstr does) */
static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0, hl = strlen(hay), nl = strlen(needle);
	for (const char *p = hay, *end = hay + hl; (p = memmem(p, (size_t)(end - p), needle, nl));
	     p += nl)
		n++;
	return n;
}

/* ---- rendering --------------------------------------------------------------- */

static void test_render_families(void **state)
{
	(void)state;
	struct dpmu_err err;
	struct dpmu_om_snapshot *s;
	assert_int_equal(dpmu_om_snapshot_create(&s, &err), 0);
	int ev = dpmu_om_family(s, "dynpmu_events_total", DPMU_OM_COUNTER, "Events counted", &err);
	int ipc = dpmu_om_family(s, "dynpmu_ipc", DPMU_OM_GAUGE, "Instructions per cycle", &err);
	assert_true(ev >= 0 && ipc >= 0 && ev != ipc);
	/* declaring again finds the family; another type or HELP is refused */
	assert_int_equal(dpmu_om_family(s, "dynpmu_events_total", DPMU_OM_COUNTER,
					"Events counted", &err), ev);
	assert_int_equal(dpmu_om_family(s, "dynpmu_events_total", DPMU_OM_GAUGE,
					"Events counted", &err), DPMU_EINVAL);
	assert_int_equal(dpmu_om_family(s, "dynpmu_ipc", DPMU_OM_GAUGE, "other", &err),
			 DPMU_EINVAL);
	/* samples of a family interleaved with another's are still rendered
	 * together, as the format requires */
	struct dpmu_om_label c0[] = {{"cpu", "0"}, {"event", "CPU_CYCLES"}};
	struct dpmu_om_label c1[] = {{"cpu", "1"}, {"event", "CPU_CYCLES"}};
	assert_int_equal(dpmu_om_add_u64(s, ev, c0, 2, 1000, &err), 0);
	assert_int_equal(dpmu_om_add_double(s, ipc, c0, 1, 1.5, &err), 0);
	assert_int_equal(dpmu_om_add_u64(s, ev, c1, 2, 2000, &err), 0);
	assert_int_equal(dpmu_om_snapshot_samples(s), 3);
	/* a family without samples is left out */
	assert_true(dpmu_om_family(s, "dynpmu_unused", DPMU_OM_GAUGE, "never", &err) >= 0);
	char *t = render(s);
	assert_string_equal(t, "# HELP dynpmu_events_total Events counted\n"
			       "# TYPE dynpmu_events_total counter\n"
			       "dynpmu_events_total{cpu=\"0\",event=\"CPU_CYCLES\"} 1000\n"
			       "dynpmu_events_total{cpu=\"1\",event=\"CPU_CYCLES\"} 2000\n"
			       "# HELP dynpmu_ipc Instructions per cycle\n"
			       "# TYPE dynpmu_ipc gauge\n"
			       "dynpmu_ipc{cpu=\"0\"} 1.5\n");
	free(t);
	dpmu_om_snapshot_release(s);
}

static void test_render_names_refused(void **state)
{
	(void)state;
	struct dpmu_err err;
	struct dpmu_om_snapshot *s;
	assert_int_equal(dpmu_om_snapshot_create(&s, &err), 0);
	/* a counter not named _total: promtool's lint and Prometheus's rule */
	assert_int_equal(dpmu_om_family(s, "dynpmu_events", DPMU_OM_COUNTER, "x", &err),
			 DPMU_EINVAL);
	assert_non_null(strstr(err.msg, "dynpmu_events"));
	assert_int_equal(dpmu_om_family(s, "9lives", DPMU_OM_GAUGE, "x", &err), DPMU_EINVAL);
	assert_int_equal(dpmu_om_family(s, "a-b", DPMU_OM_GAUGE, "x", &err), DPMU_EINVAL);
	assert_int_equal(dpmu_om_family(s, "", DPMU_OM_GAUGE, "x", &err), DPMU_EINVAL);
	/* colons are allowed in metric names (recording rules' convention) */
	int g = dpmu_om_family(s, "job:dynpmu_ipc", DPMU_OM_GAUGE, "x", &err);
	assert_true(g >= 0);
	struct dpmu_om_label bad[][2] = {
		{{"cpu:0", "x"}, {"event", "y"}}, /* no colon in label names */
		{{"__name__", "x"}, {"event", "y"}}, /* Prometheus's own */
		{{"0cpu", "x"}, {"event", "y"}},
		{{"cpu", "0"}, {"cpu", "1"}},    /* twice */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(dpmu_om_add_double(s, g, bad[i], 2, 1, &err), DPMU_EINVAL);
	int c = dpmu_om_family(s, "x_total", DPMU_OM_COUNTER, "x", &err);
	assert_true(c >= 0);
	/* counters are finite and never negative */
	assert_int_equal(dpmu_om_add_double(s, c, NULL, 0, -1, &err), DPMU_EINVAL);
	assert_int_equal(dpmu_om_add_double(s, c, NULL, 0, NAN, &err), DPMU_EINVAL);
	assert_int_equal(dpmu_om_add_double(s, c, NULL, 0, INFINITY, &err), DPMU_EINVAL);
	assert_int_equal(dpmu_om_add_double(s, 99, NULL, 0, 1, &err), DPMU_EINVAL);
	assert_int_equal(dpmu_om_snapshot_samples(s), 0);
	dpmu_om_snapshot_release(s);
}

static void test_render_escaping(void **state)
{
	(void)state;
	struct dpmu_err err;
	struct dpmu_om_snapshot *s;
	assert_int_equal(dpmu_om_snapshot_create(&s, &err), 0);
	/* HELP escapes backslash and newline only; a quote stays */
	int f = dpmu_om_family(s, "m", DPMU_OM_GAUGE, "a \"q\" back\\slash\nnext", &err);
	assert_true(f >= 0);
	/* label values escape backslash, double quote and newline */
	struct dpmu_om_label l[] = {{"workload", "C:\\x \"y\"\nz"}, {"core_type", "Cortex-A75"}};
	assert_int_equal(dpmu_om_add_double(s, f, l, 2, 2, &err), 0);
	char *t = render(s);
	assert_string_equal(t, "# HELP m a \"q\" back\\\\slash\\nnext\n"
			       "# TYPE m gauge\n"
			       "m{workload=\"C:\\\\x \\\"y\\\"\\nz\",core_type=\"Cortex-A75\"} 2\n");
	free(t);
	dpmu_om_snapshot_release(s);
}

static void test_render_numbers(void **state)
{
	(void)state;
	char b[64];
	struct {
		double v;
		const char *text;
	} cases[] = {
		{0, "0"},           {1, "1"},           {0.1, "0.1"},
		{-2.5, "-2.5"},     {1e-7, "1e-07"},    {1.0 / 3, "0.33333333333333331"},
		{NAN, "NaN"},       {INFINITY, "+Inf"}, {-INFINITY, "-Inf"},
		{123456789012.0, "123456789012"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int n = dpmu_om_format_double(cases[i].v, b, sizeof b);
		assert_int_equal(n, strlen(cases[i].text));
		assert_string_equal(b, cases[i].text);
		/* every finite value reads back as the same double */
		if (isfinite(cases[i].v))
			assert_true(strtod(b, NULL) == cases[i].v);
	}
	/* integers stay exact beyond a double's 53 bits */
	struct dpmu_err err;
	struct dpmu_om_snapshot *s;
	assert_int_equal(dpmu_om_snapshot_create(&s, &err), 0);
	int c = dpmu_om_family(s, "big_total", DPMU_OM_COUNTER, "h", &err);
	assert_int_equal(dpmu_om_add_u64(s, c, NULL, 0, 9007199254740993ull, &err), 0);
	assert_int_equal(dpmu_om_add_u64(s, c, (struct dpmu_om_label[]){{"a", ""}}, 1,
					 UINT64_MAX, &err), 0);
	char *t = render(s);
	assert_non_null(strstr(t, "\nbig_total 9007199254740993\n"));
	assert_non_null(strstr(t, "\nbig_total{a=\"\"} 18446744073709551615\n"));
	free(t);
	dpmu_om_snapshot_release(s);
	/* nothing published renders as an empty exposition */
	t = render(NULL);
	assert_string_equal(t, "");
	free(t);
}

/* ---- publisher ------------------------------------------------------------------ */

/* A snapshot whose gauge `seq` is `seq` and whose n samples of family
 * s_total all hold seq: a scrape that mixed two snapshots would show it. */
static struct dpmu_om_snapshot *numbered(uint64_t seq, unsigned n)
{
	struct dpmu_err err;
	struct dpmu_om_snapshot *s;
	assert_int_equal(dpmu_om_snapshot_create(&s, &err), 0);
	int g = dpmu_om_family(s, "seq", DPMU_OM_GAUGE, "publication number", &err);
	int c = dpmu_om_family(s, "s_total", DPMU_OM_COUNTER, "one per cpu", &err);
	assert_int_equal(dpmu_om_add_u64(s, g, NULL, 0, seq, &err), 0);
	for (unsigned i = 0; i < n; i++) {
		char cpu[16];
		snprintf(cpu, sizeof cpu, "%u", i);
		struct dpmu_om_label l[] = {{"cpu", cpu}, {"event", "INST_RETIRED"}};
		assert_int_equal(dpmu_om_add_u64(s, c, l, 2, seq, &err), 0);
	}
	return s;
}

static void test_publisher_references(void **state)
{
	(void)state;
	struct dpmu_err err;
	struct dpmu_om_publisher *p;
	assert_int_equal(dpmu_om_publisher_create(&p, &err), 0);
	assert_null(dpmu_om_acquire(p));
	dpmu_om_publish(p, numbered(1, 4));
	struct dpmu_om_snapshot *held = dpmu_om_acquire(p);
	assert_non_null(held);
	/* a newer snapshot replaces it; the reader's stays valid (ASan
	 * would see a use after free otherwise) */
	dpmu_om_publish(p, numbered(2, 4));
	char *t = render(held);
	assert_non_null(strstr(t, "\nseq 1\n"));
	free(t);
	dpmu_om_snapshot_release(held);
	held = dpmu_om_acquire(p);
	t = render(held);
	assert_non_null(strstr(t, "\nseq 2\n"));
	free(t);
	dpmu_om_snapshot_release(held);
	assert_int_equal(dpmu_om_publications(p), 2);
	dpmu_om_publisher_destroy(p);
}

/* ---- HTTP --------------------------------------------------------------------- */

/* rcvbuf: a small receive buffer (set before connecting, so the window
 * stays small) for a client that reads slowly; 0: the system's */
static int connect_small(unsigned port, int rcvbuf)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	if (rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	/* a stuck server shows as a failed read, not a hung test */
	struct timeval tv = {30, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return fd;
}

static int connect_to(unsigned port)
{
	return connect_small(port, 0);
}

static void send_all(int fd, const char *data, size_t n)
{
	while (n) {
		ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
		if (w <= 0)
			return; /* the server may close first on a bad request */
		data += w;
		n -= (size_t)w;
	}
}

struct reply {
	int status;
	char *head, *body; /* head: status line and headers */
	size_t body_len;
};

/* Send `request` as is, read the whole reply (the server closes). */
static struct reply exchange(unsigned port, const char *request, size_t len)
{
	int fd = connect_to(port);
	send_all(fd, request, len);
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	for (;;) {
		if (n + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		ssize_t r = recv(fd, buf + n, cap - n - 1, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	close(fd);
	struct reply rep = {0};
	char *sep = strstr(buf, "\r\n\r\n");
	if (sscanf(buf, "HTTP/1.%*d %d", &rep.status) != 1 || !sep) {
		free(buf);
		return rep; /* closed without a reply: status 0 */
	}
	*sep = '\0';
	rep.head = buf;
	rep.body = sep + 4;
	rep.body_len = n - (size_t)(rep.body - buf);
	return rep;
}

static struct reply get(unsigned port, const char *method, const char *path)
{
	char req[256];
	int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: localhost\r\n"
				      "Connection: close\r\n\r\n", method, path);
	return exchange(port, req, (size_t)n);
}

static bool has_header(const struct reply *r, const char *line)
{
	return r->head && strstr(r->head, line) != NULL;
}

struct fixture {
	struct dpmu_om_publisher *pub;
	struct dpmu_om_server *srv;
	unsigned port;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	struct dpmu_err err;
	if (!f || dpmu_om_publisher_create(&f->pub, &err))
		return -1;
	struct dpmu_om_server_opts o = {.max_connections = 16, .per_ip = 12, .timeout_s = 3};
	if (dpmu_om_server_start("127.0.0.1:0", f->pub, &o, &f->srv, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	f->port = dpmu_om_server_port(f->srv);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	dpmu_om_server_stop(f->srv);
	dpmu_om_publisher_destroy(f->pub);
	free(f);
	return 0;
}

static void test_http_routes(void **state)
{
	struct fixture *f = *state;
	assert_true(f->port > 0);
	/* before any publish: 200 and an empty exposition */
	struct reply r = get(f->port, "GET", "/metrics");
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, 0);
	free(r.head);
	dpmu_om_publish(f->pub, numbered(7, 3));
	r = get(f->port, "GET", "/metrics");
	assert_int_equal(r.status, 200);
	assert_true(has_header(&r, "Content-Type: " DPMU_OM_CONTENT_TYPE "\r\n") ||
		    has_header(&r, "Content-Type: " DPMU_OM_CONTENT_TYPE));
	struct dpmu_om_snapshot *s = dpmu_om_acquire(f->pub);
	char *want = render(s);
	dpmu_om_snapshot_release(s);
	assert_int_equal(r.body_len, strlen(want));
	assert_memory_equal(r.body, want, r.body_len);
	free(want);
	free(r.head);
	/* a query string is not part of the path */
	r = get(f->port, "GET", "/metrics?x=1");
	assert_int_equal(r.status, 200);
	free(r.head);
	r = get(f->port, "GET", "/");
	assert_int_equal(r.status, 404);
	free(r.head);
	r = get(f->port, "GET", "/metrics/extra");
	assert_int_equal(r.status, 404);
	free(r.head);
	r = get(f->port, "POST", "/metrics");
	assert_int_equal(r.status, 405);
	assert_true(has_header(&r, "Allow: GET, HEAD"));
	free(r.head);
	r = get(f->port, "DELETE", "/metrics");
	assert_int_equal(r.status, 405);
	free(r.head);
	/* HEAD: the headers of GET and no body */
	r = get(f->port, "HEAD", "/metrics");
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, 0);
	free(r.head);
	assert_true(dpmu_om_server_scrapes(f->srv) >= 3);
}

/* After a malformed request the server still answers the next one. */
static void assert_still_serving(unsigned port)
{
	struct reply r = get(port, "GET", "/metrics");
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\nseq "));
	free(r.head);
}

static void test_http_malformed(void **state)
{
	struct fixture *f = *state;
	dpmu_om_publish(f->pub, numbered(1, 2));
	/* garbage bytes, with NULs and no line end */
	char junk[512];
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (char)(i * 37 + 11);
	struct reply r = exchange(f->port, junk, sizeof junk);
	assert_true(r.status == 0 || r.status >= 400);
	free(r.head);
	assert_still_serving(f->port);
	/* a request line that is not HTTP */
	const char *bad = "GARBAGE\r\n\r\n";
	r = exchange(f->port, bad, strlen(bad));
	assert_true(r.status == 0 || r.status >= 400);
	free(r.head);
	/* a header larger than a connection's memory (32 KiB): refused, not buffered */
	size_t big = 256 * 1024;
	char *huge = malloc(big + 128);
	assert_non_null(huge);
	int n = snprintf(huge, 128, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ");
	memset(huge + n, 'a', big);
	memcpy(huge + n + big, "\r\n\r\n", 5);
	r = exchange(f->port, huge, (size_t)n + big + 4);
	assert_true(r.status == 0 || r.status == 431 || r.status == 413 || r.status == 400);
	free(r.head);
	free(huge);
	assert_still_serving(f->port);
	/* a POST with a body it never needed */
	const char *post = "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
			   "Connection: close\r\n\r\nhello";
	r = exchange(f->port, post, strlen(post));
	assert_int_equal(r.status, 405);
	free(r.head);
	/* a request cut off before its headers end, then the client closes
	 * its side: the server drops it without waiting for its timeout */
	const char *cut = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Half: ab";
	int fd = connect_to(f->port);
	send_all(fd, cut, strlen(cut));
	shutdown(fd, SHUT_WR);
	char buf[256];
	while (recv(fd, buf, sizeof buf, 0) > 0)
		;
	close(fd);
	assert_still_serving(f->port);
}

/* ---- concurrency ----------------------------------------------------------------- */

#define SERIES 200

struct publisher_thread {
	struct dpmu_om_publisher *pub;
	atomic_bool stop;
	atomic_uint_fast64_t done; /* publishes that returned */
	uint64_t limit;            /* 0: until stop */
};

static void *publish_loop(void *arg)
{
	struct publisher_thread *pt = arg;
	for (uint64_t seq = 1; !atomic_load(&pt->stop) && (!pt->limit || seq <= pt->limit);
	     seq++) {
		dpmu_om_publish(pt->pub, numbered(seq, SERIES));
		atomic_fetch_add(&pt->done, 1);
	}
	return NULL;
}

struct scraper {
	unsigned port;
	int ok, torn;
};

/* Each reply must be one whole snapshot: every s_total sample holds the
 * reply's seq. */
static void *scrape_loop(void *arg)
{
	struct scraper *sc = arg;
	for (int i = 0; i < 25; i++) {
		struct reply r = get(sc->port, "GET", "/metrics");
		if (r.status == 200) {
			unsigned long long seq;
			const char *p = strstr(r.body, "\nseq ");
			if (p && sscanf(p, "\nseq %llu", &seq) == 1) {
				char want[64];
				snprintf(want, sizeof want, "event=\"INST_RETIRED\"} %llu\n", seq);
				if (count_of(r.body, want) == SERIES &&
				    count_of(r.body, "\ns_total{") == SERIES)
					sc->ok++;
				else
					sc->torn++;
			} else if (r.body_len == 0) {
				sc->ok++; /* before the first publish */
			} else {
				sc->torn++;
			}
		}
		free(r.head);
	}
	return NULL;
}

static void test_http_concurrent_scrapes(void **state)
{
	struct fixture *f = *state;
	struct publisher_thread pt = {.pub = f->pub};
	pthread_t pth, sth[4];
	struct scraper sc[4];
	assert_int_equal(pthread_create(&pth, NULL, publish_loop, &pt), 0);
	for (int i = 0; i < 4; i++) {
		sc[i] = (struct scraper){.port = f->port};
		assert_int_equal(pthread_create(&sth[i], NULL, scrape_loop, &sc[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(sth[i], NULL);
	atomic_store(&pt.stop, true);
	pthread_join(pth, NULL);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(sc[i].torn, 0);
		assert_int_equal(sc[i].ok, 25);
	}
	assert_true(atomic_load(&pt.done) > 0);
}

/* A client that asks for a large snapshot and never reads, one that
 * connects and says nothing, and one that reads a little and resets the
 * connection: meanwhile every publish completes, a normal scrape is
 * answered, and the server lives on. */
static void test_http_stuck_and_vanishing_clients(void **state)
{
	struct fixture *f = *state;
	/* ~100k samples, megabytes of text: more than the socket buffers
	 * hold, so the server's send to a client that does not read blocks */
	dpmu_om_publish(f->pub, numbered(1, 100000));
	const char *req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
	int stuck[3];
	for (int i = 0; i < 3; i++) {
		stuck[i] = connect_small(f->port, 4096);
		send_all(stuck[i], req, strlen(req));
	}
	int silent = connect_to(f->port);
	/* give the server time to be stuck in the sends (not a bound on
	 * anything: if it had not got there yet, the test is weaker, not wrong) */
	struct timespec nap = {0, 200 * 1000 * 1000};
	nanosleep(&nap, NULL);

	struct publisher_thread pt = {.pub = f->pub, .limit = 200};
	pthread_t pth;
	assert_int_equal(pthread_create(&pth, NULL, publish_loop, &pt), 0);
	/* The publishes must finish while the stuck clients are still
	 * connected: they are closed only after this loop. A publish that
	 * waited for a client would stall here until the server's timeout
	 * dropped them (3 s), and well before the 20 s this allows. */
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (atomic_load(&pt.done) < pt.limit && now.tv_sec - t0.tv_sec < 20);
	assert_int_equal(atomic_load(&pt.done), pt.limit);
	pthread_join(pth, NULL);

	/* a normal scrape gets the latest snapshot meanwhile */
	struct reply r = get(f->port, "GET", "/metrics");
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\nseq 200\n"));
	free(r.head);

	/* a big reply again, and the client resets the connection after
	 * reading a little of it */
	dpmu_om_publish(f->pub, numbered(201, 100000));
	for (int i = 0; i < 3; i++) {
		int fd = connect_to(f->port);
		send_all(fd, req, strlen(req));
		char buf[1000];
		assert_true(recv(fd, buf, sizeof buf, MSG_WAITALL) > 0);
		struct linger lg = {1, 0}; /* close with RST, mid-reply */
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
		close(fd);
	}
	/* The first stuck client reads now: it gets all of the snapshot it
	 * asked for, published 200 publishes ago. Its reply was still being
	 * sent while they happened, so they did not wait for it. */
	size_t cap = 16 << 20, got = 0;
	char *all = malloc(cap);
	assert_non_null(all);
	for (ssize_t n; got + 1 < cap && (n = recv(stuck[0], all + got, cap - got - 1, 0)) > 0;)
		got += (size_t)n;
	all[got] = '\0';
	assert_non_null(strstr(all, "\nseq 1\n"));
	assert_int_equal(count_of(all, "\ns_total{"), 100000);
	assert_int_equal(count_of(all, "event=\"INST_RETIRED\"} 1\n"), 100000);
	free(all);
	for (int i = 0; i < 3; i++)
		close(stuck[i]);
	close(silent);
	assert_still_serving(f->port);
}

/* ---- addresses ------------------------------------------------------------------- */

static void test_listen_addresses(void **state)
{
	(void)state;
	struct sockaddr_storage ss;
	unsigned len;
	struct dpmu_err err;
	assert_int_equal(dpmu_om_listen_parse("127.0.0.1:9464", &ss, &len, &err), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9464);
	assert_int_equal(dpmu_om_listen_parse("[::1]:0", &ss, &len, &err), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(dpmu_om_listen_parse(":9464", &ss, &len, &err), 0);
	assert_int_equal(dpmu_om_listen_parse("localhost:80", &ss, &len, &err), 0);
	const char *bad[] = {"", "9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:x",
			     "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+5", "::1:80",
			     "[::1", "[::1]80"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(dpmu_om_listen_parse(bad[i], &ss, &len, &err), DPMU_EINVAL);
		/* the message names the input */
		char quoted[64];
		snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
		assert_non_null(strstr(err.msg, quoted));
	}
	assert_int_equal(dpmu_om_listen_parse("no.such.host.invalid:80", &ss, &len, &err),
			 DPMU_ENOENT);
	assert_non_null(strstr(err.msg, "no.such.host.invalid"));
}

static void test_listen_port_in_use(void **state)
{
	struct fixture *f = *state;
	char addr[32];
	snprintf(addr, sizeof addr, "127.0.0.1:%u", f->port);
	struct dpmu_om_server *second = NULL;
	struct dpmu_err err;
	assert_int_equal(dpmu_om_server_start(addr, f->pub, NULL, &second, &err), DPMU_EIO);
	assert_null(second);
	assert_non_null(strstr(err.msg, addr));
	assert_non_null(strstr(err.msg, strerror(EADDRINUSE)));
	/* an address this machine does not have */
	assert_int_equal(dpmu_om_server_start("192.0.2.1:0", f->pub, NULL, &second, &err),
			 DPMU_EIO);
	assert_non_null(strstr(err.msg, "192.0.2.1:0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render_families),
		cmocka_unit_test(test_render_names_refused),
		cmocka_unit_test(test_render_escaping),
		cmocka_unit_test(test_render_numbers),
		cmocka_unit_test(test_publisher_references),
		cmocka_unit_test(test_listen_addresses),
		cmocka_unit_test_setup_teardown(test_http_routes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_concurrent_scrapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_stuck_and_vanishing_clients, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_listen_port_in_use, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
