/*
 * perf.data out (include/dynpmu/perfdata.h). The file is laid out as perf
 * record leaves it: the header (rewritten at the close, when the sections'
 * places are known), the attributes with their ids, the data (records in
 * the order they come), then the feature sections' index and payloads.
 * Layouts: Linux's include/uapi/linux/perf_event.h (perf_event_attr at
 * PERF_ATTR_SIZE_VER7, the records) and tools/perf/util/header.c (the
 * header, the features); facts only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/perfdata_internal.h"

struct dpmu_perf_writer {
	/* f: the file, where the task records (COMM, MMAP2, FORK) go at
	 * once; body: the samples and EXITs, appended to them at the close,
	 * so that a task's records come before its samples whenever the
	 * caller learns of them */
	FILE *f, *body, *cur;
	char path[1024];
	struct dpmu_perf_desc d;
	char **cmdline;
	unsigned ncmd;
	uint64_t data_off, data_size;
	uint64_t first_time, last_time;
	bool any_time;
	int rc;
	struct dpmu_err err;
};

static void put(struct dpmu_perf_writer *w, const void *p, size_t n)
{
	if (w->rc)
		return;
	if (fwrite(p, 1, n, w->cur) != n)
		w->rc = dpmu_err_set(&w->err, DPMU_EIO, "%s: write failed: %s", w->path,
				     strerror(errno));
}

static void put64(struct dpmu_perf_writer *w, uint64_t v)
{
	put(w, &v, 8);
}

static void put32(struct dpmu_perf_writer *w, uint32_t v)
{
	put(w, &v, 4);
}

static void pad(struct dpmu_perf_writer *w, size_t n)
{
	static const char zero[64];
	while (n) {
		size_t k = n < sizeof zero ? n : sizeof zero;
		put(w, zero, k);
		n -= k;
	}
}

static void attr_of(const struct dpmu_perf_event *e, bool callchain,
		    uint8_t out[DPMU_PERF_ATTR_SIZE])
{
	memset(out, 0, DPMU_PERF_ATTR_SIZE);
	uint32_t size = DPMU_PERF_ATTR_SIZE;
	uint64_t flags = DPMU_PERF_ATTR_EXCLUDE_KERNEL | DPMU_PERF_ATTR_EXCLUDE_HV |
			 DPMU_PERF_ATTR_SAMPLE_ID_ALL | DPMU_PERF_ATTR_MMAP | DPMU_PERF_ATTR_COMM |
			 DPMU_PERF_ATTR_MMAP2 | DPMU_PERF_ATTR_COMM_EXEC | DPMU_PERF_ATTR_TASK |
			 DPMU_PERF_ATTR_DISABLED | DPMU_PERF_ATTR_INHERIT |
			 DPMU_PERF_ATTR_ENABLE_ON_EXEC |
			 (uint64_t)(e->precise & 3) << DPMU_PERF_ATTR_PRECISE_SHIFT;
	if (e->freq)
		flags |= DPMU_PERF_ATTR_FREQ;
	uint64_t st = DPMU_PERF_SAMPLE_TYPE | (callchain ? DPMU_PERF_SAMPLE_CALLCHAIN : 0);
	memcpy(out + 0, &e->type, 4);
	memcpy(out + 4, &size, 4);
	memcpy(out + 8, &e->config, 8);
	memcpy(out + 16, &e->period, 8);
	memcpy(out + 24, &st, 8);
	memcpy(out + 40, &flags, 8);
	uint16_t max_stack = DPMU_PERF_MAX_CHAIN - 1;
	memcpy(out + 108, &max_stack, 2);
}

/* The trailer of a non-sample record (sample_id_all): TID, TIME, CPU,
 * IDENTIFIER of the sample type, in that order. */
#define ID_TRAILER 32u

static void trailer(struct dpmu_perf_writer *w, uint32_t pid, uint32_t tid, uint64_t time)
{
	put32(w, pid);
	put32(w, tid);
	put64(w, time);
	put32(w, 0);
	put32(w, 0);
	put64(w, DPMU_PERF_ID(0));
}

static void header(struct dpmu_perf_writer *w, uint32_t type, uint16_t misc, size_t size)
{
	put32(w, type);
	uint16_t m = misc, sz = (uint16_t)size;
	put(w, &m, 2);
	put(w, &sz, 2);
	w->data_size += size;
}

static void seen(struct dpmu_perf_writer *w, uint64_t t)
{
	if (!w->any_time || t < w->first_time)
		w->first_time = t;
	if (!w->any_time || t > w->last_time)
		w->last_time = t;
	w->any_time = true;
}

int dpmu_perf_create(const char *path, const struct dpmu_perf_desc *d,
		     struct dpmu_perf_writer **out, struct dpmu_err *err)
{
	*out = NULL;
	if (!d->nevents || d->nevents > sizeof d->ev / sizeof d->ev[0])
		return dpmu_err_set(err, DPMU_EINVAL, "%s: %u events (1 to %zu in a file)", path,
				    d->nevents, sizeof d->ev / sizeof d->ev[0]);
	struct dpmu_perf_writer *w = calloc(1, sizeof *w);
	if (!w)
		return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory", path);
	snprintf(w->path, sizeof w->path, "%s", path);
	w->d = *d;
	w->d.cmdline = NULL;
	for (const char *const *a = d->cmdline; a && *a; a++)
		w->ncmd++;
	w->cmdline = calloc(w->ncmd + 1, sizeof *w->cmdline);
	for (unsigned i = 0; w->cmdline && i < w->ncmd; i++)
		w->cmdline[i] = strdup(d->cmdline[i]);
	w->f = fopen(path, "wb");
	w->body = w->f ? tmpfile() : NULL;
	w->cur = w->f;
	if (!w->f || !w->body || !w->cmdline) {
		int rc = dpmu_err_set(err, DPMU_EIO, "%s: cannot write: %s", path,
				      !w->f || !w->body ? strerror(errno) : "out of memory");
		if (w->f)
			fclose(w->f);
		if (w->body)
			fclose(w->body);
		free(w->cmdline);
		free(w);
		return rc;
	}
	/* the header's place, then the attributes and their ids */
	pad(w, DPMU_PERF_HEADER_SIZE);
	for (unsigned i = 0; i < d->nevents; i++) {
		uint8_t a[DPMU_PERF_ATTR_SIZE];
		attr_of(&d->ev[i], d->callchain, a);
		put(w, a, sizeof a);
		uint64_t ids_off = DPMU_PERF_HEADER_SIZE + (uint64_t)d->nevents * DPMU_PERF_FILE_ATTR_SIZE +
				   8ull * i;
		put64(w, ids_off);
		put64(w, 8);
	}
	for (unsigned i = 0; i < d->nevents; i++)
		put64(w, DPMU_PERF_ID(i));
	w->data_off = DPMU_PERF_HEADER_SIZE + (uint64_t)d->nevents * (DPMU_PERF_FILE_ATTR_SIZE + 8);
	if (w->rc) {
		int rc = dpmu_err_set(err, w->rc, "%s", dpmu_errmsg(&w->err));
		dpmu_perf_close(w, NULL);
		return rc;
	}
	*out = w;
	return 0;
}

static size_t padded(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

int dpmu_perf_comm(struct dpmu_perf_writer *w, uint32_t pid, uint32_t tid, const char *comm,
		   bool exec, uint64_t time_ns)
{
	char name[16] = {0}; /* TASK_COMM_LEN */
	snprintf(name, sizeof name, "%s", comm);
	size_t len = padded(strlen(name) + 1);
	w->cur = w->f;
	header(w, DPMU_PERF_RECORD_COMM, exec ? DPMU_PERF_MISC_COMM_EXEC : 0, 8 + 8 + len + ID_TRAILER);
	put32(w, pid);
	put32(w, tid);
	put(w, name, strlen(name));
	pad(w, len - strlen(name));
	trailer(w, pid, tid, time_ns);
	seen(w, time_ns);
	return w->rc;
}

int dpmu_perf_mmap2(struct dpmu_perf_writer *w, uint32_t pid, uint32_t tid, uint64_t start,
		    uint64_t len, uint64_t pgoff, const char *path, uint64_t time_ns)
{
	struct stat st;
	memset(&st, 0, sizeof st);
	stat(path, &st); /* the file's identity, as the kernel gives it; 0s when gone */
	size_t n = strlen(path), plen = padded(n + 1);
	w->cur = w->f;
	header(w, DPMU_PERF_RECORD_MMAP2, DPMU_PERF_MISC_USER, 8 + 8 + 24 + 8 + 16 + 8 + plen + ID_TRAILER);
	put32(w, pid);
	put32(w, tid);
	put64(w, start);
	put64(w, len);
	put64(w, pgoff);
	put32(w, (uint32_t)(st.st_dev >> 8) & 0xfff);  /* major */
	put32(w, (uint32_t)(st.st_dev & 0xff));         /* minor */
	put64(w, st.st_ino);
	put64(w, 0); /* ino_generation */
	put32(w, 5); /* PROT_READ | PROT_EXEC */
	put32(w, 2); /* MAP_PRIVATE */
	put(w, path, n);
	pad(w, plen - n);
	trailer(w, pid, tid, time_ns);
	seen(w, time_ns);
	return w->rc;
}

static int task(struct dpmu_perf_writer *w, uint32_t type, uint32_t pid, uint32_t ppid,
		uint32_t tid, uint32_t ptid, uint64_t time_ns)
{
	w->cur = type == DPMU_PERF_RECORD_EXIT ? w->body : w->f;
	header(w, type, 0, 8 + 16 + 8 + ID_TRAILER);
	put32(w, pid);
	put32(w, ppid);
	put32(w, tid);
	put32(w, ptid);
	put64(w, time_ns);
	trailer(w, pid, tid, time_ns);
	seen(w, time_ns);
	return w->rc;
}

int dpmu_perf_fork(struct dpmu_perf_writer *w, uint32_t pid, uint32_t ppid, uint32_t tid,
		   uint32_t ptid, uint64_t time_ns)
{
	return task(w, DPMU_PERF_RECORD_FORK, pid, ppid, tid, ptid, time_ns);
}

int dpmu_perf_exit(struct dpmu_perf_writer *w, uint32_t pid, uint32_t ppid, uint32_t tid,
		   uint32_t ptid, uint64_t time_ns)
{
	return task(w, DPMU_PERF_RECORD_EXIT, pid, ppid, tid, ptid, time_ns);
}

int dpmu_perf_sample(struct dpmu_perf_writer *w, unsigned event, uint64_t ip, uint32_t pid,
		     uint32_t tid, uint64_t time_ns, uint32_t cpu, uint64_t period,
		     const uint64_t *chain, unsigned nchain)
{
	if (event >= w->d.nevents)
		return w->rc ? w->rc
			     : (w->rc = dpmu_err_set(&w->err, DPMU_EINVAL,
						     "%s: a sample of event %u (the file has %u)",
						     w->path, event, w->d.nevents));
	if (nchain > DPMU_PERF_MAX_CHAIN - 2)
		nchain = DPMU_PERF_MAX_CHAIN - 2;
	/* the chain: the context, the sampled ip, then the callers */
	uint64_t nr = 2 + (uint64_t)nchain;
	bool cc = w->d.callchain;
	w->cur = w->body;
	header(w, DPMU_PERF_RECORD_SAMPLE, DPMU_PERF_MISC_USER,
	       8 + 8 + 8 + 8 + 8 + 8 + 8 + (cc ? 8 + 8 * nr : 0));
	put64(w, DPMU_PERF_ID(event)); /* IDENTIFIER */
	put64(w, ip);
	put32(w, pid);
	put32(w, tid);
	put64(w, time_ns);
	put32(w, cpu);
	put32(w, 0);
	put64(w, period);
	if (cc) {
		put64(w, nr);
		put64(w, DPMU_PERF_CONTEXT_USER);
		put64(w, ip);
		for (unsigned i = 0; i < nchain; i++)
			put64(w, chain[i]);
	}
	seen(w, time_ns);
	return w->rc;
}

/* perf's string: its length with the NUL, padded to 64, then the bytes. */
static void feat_string(struct dpmu_perf_writer *w, const char *s)
{
	size_t n = strlen(s) + 1, len = (n + 63) & ~(size_t)63;
	put32(w, (uint32_t)len);
	put(w, s, n - 1);
	pad(w, len - (n - 1));
}

static void feature(struct dpmu_perf_writer *w, unsigned feat)
{
	switch (feat) {
	case DPMU_PERF_FEAT_HOSTNAME:
		feat_string(w, w->d.hostname ? w->d.hostname : "dynpmu");
		break;
	case DPMU_PERF_FEAT_OSRELEASE:
		feat_string(w, w->d.osrelease ? w->d.osrelease : "dynpmu");
		break;
	case DPMU_PERF_FEAT_VERSION:
		feat_string(w, "dynpmu");
		break;
	case DPMU_PERF_FEAT_ARCH:
		feat_string(w, "aarch64");
		break;
	case DPMU_PERF_FEAT_NRCPUS:
		put32(w, w->d.ncpus); /* available */
		put32(w, w->d.ncpus); /* online */
		break;
	case DPMU_PERF_FEAT_CMDLINE:
		put32(w, w->ncmd);
		for (unsigned i = 0; i < w->ncmd; i++)
			feat_string(w, w->cmdline[i] ? w->cmdline[i] : "");
		break;
	case DPMU_PERF_FEAT_EVENT_DESC:
		put32(w, w->d.nevents);
		put32(w, DPMU_PERF_ATTR_SIZE);
		for (unsigned i = 0; i < w->d.nevents; i++) {
			uint8_t a[DPMU_PERF_ATTR_SIZE];
			attr_of(&w->d.ev[i], w->d.callchain, a);
			put(w, a, sizeof a);
			put32(w, 1);
			feat_string(w, w->d.ev[i].name);
			put64(w, DPMU_PERF_ID(i));
		}
		break;
	case DPMU_PERF_FEAT_SAMPLE_TIME:
		put64(w, w->first_time);
		put64(w, w->last_time);
		break;
	default:
		break;
	}
}

/* No HEADER_ARCH: perf 6.1 on an arm64 file sets up DWARF unwinding even
 * for frame-pointer call chains (callchain_param_setup, for the caller of
 * a leaf), and a perf built without arm64 libunwind (Debian's) then warns
 * for every file. The chains here are exact: nothing needs unwinding. */
static const unsigned features[] = {
	DPMU_PERF_FEAT_HOSTNAME, DPMU_PERF_FEAT_OSRELEASE, DPMU_PERF_FEAT_VERSION,
	DPMU_PERF_FEAT_NRCPUS,   DPMU_PERF_FEAT_CMDLINE,   DPMU_PERF_FEAT_EVENT_DESC,
	DPMU_PERF_FEAT_SAMPLE_TIME,
};
#define NFEAT (sizeof features / sizeof features[0])

int dpmu_perf_error(const struct dpmu_perf_writer *w, struct dpmu_err *err)
{
	if (w->rc && err)
		dpmu_err_set(err, w->rc, "%s", dpmu_errmsg(&w->err));
	return w->rc;
}

int dpmu_perf_close(struct dpmu_perf_writer *w, struct dpmu_err *err)
{
	if (!w)
		return 0;
	/* the samples after the task records */
	w->cur = w->f;
	if (!w->rc && fflush(w->body) == 0 && fseek(w->body, 0, SEEK_SET) == 0) {
		char buf[65536];
		size_t k;
		while ((k = fread(buf, 1, sizeof buf, w->body)) > 0)
			put(w, buf, k);
		if (ferror(w->body) && !w->rc)
			w->rc = dpmu_err_set(&w->err, DPMU_EIO, "%s: the samples' spool failed",
					     w->path);
	}
	fclose(w->body);
	/* the features after the data: their index, then each payload */
	uint64_t idx_off = w->data_off + w->data_size;
	pad(w, NFEAT * 16);
	uint64_t sec[NFEAT][2];
	uint64_t at = idx_off + NFEAT * 16;
	for (unsigned i = 0; i < NFEAT; i++) {
		long before = ftell(w->f);
		feature(w, features[i]);
		long after = ftell(w->f);
		sec[i][0] = at;
		sec[i][1] = (uint64_t)(after - before);
		at += sec[i][1];
	}
	if (!w->rc && fseek(w->f, (long)idx_off, SEEK_SET) != 0)
		w->rc = dpmu_err_set(&w->err, DPMU_EIO, "%s: seek failed", w->path);
	for (unsigned i = 0; i < NFEAT; i++) {
		put64(w, sec[i][0]);
		put64(w, sec[i][1]);
	}
	if (!w->rc && fseek(w->f, 0, SEEK_SET) != 0)
		w->rc = dpmu_err_set(&w->err, DPMU_EIO, "%s: seek failed", w->path);
	put64(w, DPMU_PERF_MAGIC);
	put64(w, DPMU_PERF_HEADER_SIZE);
	put64(w, DPMU_PERF_FILE_ATTR_SIZE);
	put64(w, DPMU_PERF_HEADER_SIZE); /* attrs */
	put64(w, (uint64_t)w->d.nevents * DPMU_PERF_FILE_ATTR_SIZE);
	put64(w, w->data_off);
	put64(w, w->data_size);
	put64(w, 0); /* event types: unused */
	put64(w, 0);
	uint64_t bits[4] = {0};
	for (unsigned i = 0; i < NFEAT; i++)
		bits[features[i] / 64] |= UINT64_C(1) << (features[i] % 64);
	put(w, bits, sizeof bits);
	if (fclose(w->f) != 0 && !w->rc)
		w->rc = dpmu_err_set(&w->err, DPMU_EIO, "%s: write failed: %s", w->path,
				     strerror(errno));
	int rc = w->rc;
	if (rc && err)
		dpmu_err_set(err, rc, "%s", dpmu_errmsg(&w->err));
	for (unsigned i = 0; i < w->ncmd; i++)
		free(w->cmdline[i]);
	free(w->cmdline);
	free(w);
	return rc;
}
