/*
 * The /metrics endpoint: libmicrohttpd serving a publisher's latest
 * snapshot (include/dynpmu/openmetrics.h).
 *
 * The library runs its own threads (a small pool with an internal poll
 * loop each); the measuring thread only ever publishes. A request takes a
 * reference to the latest snapshot, renders it on the serving thread and
 * hands the text to the library, so a client that reads slowly, or not at
 * all, holds its connection slot and its own rendered copy until the
 * connection timeout, and never the publisher's lock.
 *
 * The listening socket is bound here rather than by the library, so that a
 * port in use or an address that is not local is reported with the
 * system's reason instead of a bare failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "dynpmu/openmetrics.h"

struct dpmu_om_server {
	struct MHD_Daemon *d;
	struct dpmu_om_publisher *pub;
	int fd;
	unsigned port;
	atomic_uint_fast64_t scrapes;
};

int dpmu_om_listen_parse(const char *hostport, void *sockaddr, unsigned *socklen,
			 struct dpmu_err *err)
{
	const char *in = hostport ? hostport : "";
	char host[256];
	const char *colon;
	if (in[0] == '[') {
		/* [V6ADDR]:PORT, RFC 3986's form, since the address has colons */
		const char *close = strchr(in, ']');
		if (!close || close[1] != ':')
			return dpmu_err_set(err, DPMU_EINVAL,
					    "--listen '%s': give [ADDRESS]:PORT for IPv6", in);
		colon = close + 1;
		if ((size_t)(close - in - 1) >= sizeof host)
			return dpmu_err_set(err, DPMU_EINVAL, "--listen '%s': host too long", in);
		memcpy(host, in + 1, (size_t)(close - in - 1));
		host[close - in - 1] = '\0';
	} else {
		colon = strrchr(in, ':');
		if (!colon)
			return dpmu_err_set(err, DPMU_EINVAL,
					    "--listen '%s': give HOST:PORT (e.g. 127.0.0.1:9464)",
					    in);
		if ((size_t)(colon - in) >= sizeof host)
			return dpmu_err_set(err, DPMU_EINVAL, "--listen '%s': host too long", in);
		memcpy(host, in, (size_t)(colon - in));
		host[colon - in] = '\0';
		if (strchr(host, ':'))
			return dpmu_err_set(err, DPMU_EINVAL,
					    "--listen '%s': an IPv6 address goes in brackets, "
					    "[ADDRESS]:PORT", in);
	}
	const char *port = colon + 1;
	char *end;
	errno = 0;
	long v = strtol(port, &end, 10);
	if (!*port || *end || errno || v < 0 || v > 65535 || port[0] == '-' || port[0] == '+')
		return dpmu_err_set(err, DPMU_EINVAL,
				    "--listen '%s': port '%s' is not a number from 0 to 65535", in,
				    port);
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	int rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (rc || !res) {
		if (res)
			freeaddrinfo(res);
		return dpmu_err_set(err, DPMU_ENOENT, "--listen '%s': host '%s': %s", in, host,
				    gai_strerror(rc));
	}
	/* the first answer, as a client connecting to the name would take */
	if (res->ai_addrlen > sizeof(struct sockaddr_storage)) {
		freeaddrinfo(res);
		return dpmu_err_set(err, DPMU_EINVAL, "--listen '%s': unusable address", in);
	}
	memcpy(sockaddr, res->ai_addr, res->ai_addrlen);
	*socklen = (unsigned)res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *body,
			     const char *allow)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	enum MHD_Result ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	(void)version;
	(void)upload_data;
	(void)con_cls;
	struct dpmu_om_server *s = cls;
	bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;
	bool head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	/* Answered on the first call, before any body: nothing here reads
	 * one, so a request with a body costs no memory beyond the
	 * library's connection buffer. */
	*upload_data_size = 0;
	if (strcmp(url, "/metrics") != 0)
		return reply(c, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n", NULL);
	if (!get && !head)
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics\n", "GET, HEAD");
	struct dpmu_om_snapshot *snap = dpmu_om_acquire(s->pub);
	char *text = NULL;
	size_t len = 0;
	int rc = dpmu_om_render(snap, &text, &len, NULL);
	dpmu_om_snapshot_release(snap);
	if (rc)
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, DPMU_OM_CONTENT_TYPE);
	enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	if (ok == MHD_YES)
		atomic_fetch_add_explicit(&s->scrapes, 1, memory_order_relaxed);
	return ok;
}

int dpmu_om_server_start(const char *hostport, struct dpmu_om_publisher *p,
			 const struct dpmu_om_server_opts *o, struct dpmu_om_server **out,
			 struct dpmu_err *err)
{
	struct sockaddr_storage ss;
	unsigned sl = 0;
	int rc = dpmu_om_listen_parse(hostport, &ss, &sl, err);
	if (rc)
		return rc;
	struct dpmu_om_server_opts d = o ? *o : (struct dpmu_om_server_opts){0};
	if (!d.max_connections)
		d.max_connections = 32;
	if (!d.per_ip)
		d.per_ip = 8;
	if (!d.timeout_s)
		d.timeout_s = 10;
	if (!d.threads)
		d.threads = 2;
	struct dpmu_om_server *s = calloc(1, sizeof *s);
	if (!s)
		return dpmu_err_set(err, DPMU_ENOMEM, "openmetrics: out of memory");
	s->pub = p;
	atomic_init(&s->scrapes, 0);
	s->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (s->fd < 0 ||
	    setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
	    bind(s->fd, (struct sockaddr *)&ss, sl) || listen(s->fd, 64)) {
		rc = dpmu_err_set(err, DPMU_EIO, "--listen %s: %s", hostport, strerror(errno));
		goto fail;
	}
	struct sockaddr_storage bound;
	socklen_t bl = sizeof bound;
	if (getsockname(s->fd, (struct sockaddr *)&bound, &bl)) {
		rc = dpmu_err_set(err, DPMU_EIO, "--listen %s: %s", hostport, strerror(errno));
		goto fail;
	}
	s->port = ntohs(bound.ss_family == AF_INET6
				? ((struct sockaddr_in6 *)&bound)->sin6_port
				: ((struct sockaddr_in *)&bound)->sin_port);
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->d = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, s->fd,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)d.threads, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned)d.max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned)d.per_ip, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)d.timeout_s,
		/* a request's headers must fit this; larger ones get 431 */
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768, MHD_OPTION_END);
	if (!s->d) {
		rc = dpmu_err_set(err, DPMU_EIO, "--listen %s: the HTTP server did not start",
				  hostport);
		goto fail;
	}
	/* the daemon owns the socket now: MHD_stop_daemon closes it */
	s->fd = -1;
	*out = s;
	return 0;
fail:
	if (s->fd >= 0)
		close(s->fd);
	free(s);
	return rc;
}

unsigned dpmu_om_server_port(const struct dpmu_om_server *s)
{
	return s->port;
}

uint64_t dpmu_om_server_scrapes(const struct dpmu_om_server *s)
{
	return atomic_load_explicit(&((struct dpmu_om_server *)s)->scrapes,
				    memory_order_relaxed);
}

void dpmu_om_server_stop(struct dpmu_om_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d);
	free(s);
}
