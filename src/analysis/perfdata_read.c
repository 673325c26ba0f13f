/*
 * perf.data in (include/dynpmu/perfdata.h): a file perf record or dynpmu
 * record wrote, checked as it is read. Every length and offset is checked
 * against what holds it before it is used; a problem is a message naming
 * the file, the byte offset and what is wrong there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/perfdata_internal.h"

#define MAX_ATTRS 64u

struct attr {
	uint64_t sample_type;
	bool sample_id_all;
	uint64_t id[64];
	unsigned nid;
};

struct reader {
	const uint8_t *p;
	size_t size;
	const char *name;
	struct dpmu_err *err;
	struct attr attr[MAX_ATTRS];
	unsigned nattr;
	struct dpmu_perf_file *f;
	size_t cap_samples, cap_chains, cap_maps, cap_comms;
};

static int bad(struct reader *r, uint64_t off, const char *what)
{
	return dpmu_err_set(r->err, DPMU_EINVAL, "%s: offset %llu: %s", r->name,
			    (unsigned long long)off, what);
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* Whether [off, off + n) lies in the file. */
static bool within(const struct reader *r, uint64_t off, uint64_t n)
{
	return off <= r->size && n <= r->size - off;
}

static int grow(struct reader *r, void **v, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 256;
	void *nv = realloc(*v, c * elem);
	if (!nv)
		return dpmu_err_set(r->err, DPMU_ENOMEM, "%s: out of memory", r->name);
	*v = nv;
	*cap = c;
	return 0;
}

static int read_attrs(struct reader *r, uint64_t attr_size, uint64_t off, uint64_t size)
{
	if (attr_size < DPMU_PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096)
		return bad(r, 16, "the attribute size is not one perf writes");
	if (!within(r, off, size))
		return bad(r, 24, "the attributes section lies beyond the end of the file");
	if (size % attr_size)
		return bad(r, 32, "the attributes section is not a whole number of attributes");
	uint64_t n = size / attr_size;
	if (n == 0)
		return bad(r, 32, "the file has no event attribute");
	if (n > MAX_ATTRS || n > sizeof r->f->desc.ev / sizeof r->f->desc.ev[0])
		return bad(r, 32, "more event attributes than a report reads (16)");
	r->nattr = (unsigned)n;
	r->f->desc.nevents = (unsigned)n;
	for (unsigned i = 0; i < n; i++) {
		uint64_t a = off + i * attr_size;
		const uint8_t *p = r->p + a;
		uint32_t asize = rd32(p + 4);
		if (asize && (asize < DPMU_PERF_ATTR_SIZE_VER0 || asize > attr_size - 16))
			return bad(r, a + 4, "the event attribute's size does not fit its place");
		struct dpmu_perf_event *e = &r->f->desc.ev[i];
		e->type = rd32(p);
		e->config = rd64(p + 8);
		e->period = rd64(p + 16);
		uint64_t flags = rd64(p + 40);
		e->freq = flags & DPMU_PERF_ATTR_FREQ;
		e->precise = (unsigned)(flags >> DPMU_PERF_ATTR_PRECISE_SHIFT) & 3;
		if (e->type == DPMU_PERF_TYPE_HARDWARE && e->config == 0)
			snprintf(e->name, sizeof e->name, "cycles");
		else
			snprintf(e->name, sizeof e->name, "%s%llx",
				 e->type == DPMU_PERF_TYPE_RAW ? "r" : "event", (unsigned long long)e->config);
		r->attr[i].sample_type = rd64(p + 24);
		r->attr[i].sample_id_all = flags & DPMU_PERF_ATTR_SAMPLE_ID_ALL;
		if (r->attr[i].sample_type & DPMU_PERF_SAMPLE_READ)
			return bad(r, a + 24, "samples with PERF_SAMPLE_READ are not read here");
		uint64_t ids = rd64(p + attr_size - 16), idsz = rd64(p + attr_size - 8);
		if (idsz % 8 || !within(r, ids, idsz))
			return bad(r, a + attr_size - 16, "an event's id list lies outside the file");
		for (uint64_t k = 0; k < idsz / 8 && r->attr[i].nid < 64; k++)
			r->attr[i].id[r->attr[i].nid++] = rd64(r->p + ids + 8 * k);
	}
	for (unsigned i = 1; i < n; i++)
		if (r->attr[i].sample_type != r->attr[0].sample_type &&
		    !(r->attr[0].sample_type & DPMU_PERF_SAMPLE_IDENTIFIER))
			return bad(r, off + i * attr_size + 24,
				   "events sample different fields without PERF_SAMPLE_IDENTIFIER");
	return 0;
}

/* The event whose id is `id`; the only one when the file has one. */
static int event_of(const struct reader *r, uint64_t id)
{
	if (r->nattr == 1)
		return 0;
	for (unsigned i = 0; i < r->nattr; i++)
		for (unsigned k = 0; k < r->attr[i].nid; k++)
			if (r->attr[i].id[k] == id)
				return (int)i;
	return -1;
}

static int read_sample(struct reader *r, uint64_t off, const uint8_t *p, uint64_t n)
{
	uint64_t st = r->attr[0].sample_type;
	uint64_t at = 0;
	struct dpmu_perf_sample s = {0};
#define NEED(k)                                                                         \
	do {                                                                            \
		if (n - at < (k))                                                       \
			return bad(r, off + 8 + at, "a sample ends before its fields do");      \
	} while (0)
	int ev = 0;
	if (st & DPMU_PERF_SAMPLE_IDENTIFIER) {
		NEED(8);
		ev = event_of(r, rd64(p + at));
		at += 8;
		if (ev < 0)
			return bad(r, off + 8, "a sample's id names no event of the file");
		st = r->attr[ev].sample_type; /* the rest is that event's */
	}
	if (st & DPMU_PERF_SAMPLE_IP) {
		NEED(8);
		s.ip = rd64(p + at);
		at += 8;
	}
	if (st & DPMU_PERF_SAMPLE_TID) {
		NEED(8);
		s.pid = rd32(p + at);
		s.tid = rd32(p + at + 4);
		at += 8;
	}
	if (st & DPMU_PERF_SAMPLE_TIME) {
		NEED(8);
		s.time = rd64(p + at);
		at += 8;
	}
	if (st & DPMU_PERF_SAMPLE_ADDR) {
		NEED(8);
		at += 8;
	}
	if (st & DPMU_PERF_SAMPLE_ID) {
		NEED(8);
		if (!(st & DPMU_PERF_SAMPLE_IDENTIFIER))
			ev = event_of(r, rd64(p + at));
		at += 8;
	}
	if (st & DPMU_PERF_SAMPLE_STREAM_ID) {
		NEED(8);
		at += 8;
	}
	if (st & DPMU_PERF_SAMPLE_CPU) {
		NEED(8);
		s.cpu = rd32(p + at);
		at += 8;
	}
	s.period = 1;
	if (st & DPMU_PERF_SAMPLE_PERIOD) {
		NEED(8);
		s.period = rd64(p + at);
		at += 8;
	}
	if (ev < 0)
		return bad(r, off + 8, "a sample's id names no event of the file");
	s.event = (unsigned)ev;
	struct dpmu_perf_file *f = r->f;
	s.chain = (uint32_t)f->nchains;
	if (st & DPMU_PERF_SAMPLE_CALLCHAIN) {
		NEED(8);
		uint64_t nr = rd64(p + at);
		at += 8;
		if (nr > (n - at) / 8)
			return bad(r, off + 8 + at - 8, "a call chain runs past its sample");
		bool user = true;
		bool first = true;
		for (uint64_t k = 0; k < nr; k++) {
			uint64_t ip = rd64(p + at + 8 * k);
			if (ip >= (uint64_t)-4095) { /* PERF_CONTEXT_* markers */
				user = ip == DPMU_PERF_CONTEXT_USER;
				continue;
			}
			/* the sampled address heads a chain: not a caller */
			if (first && ip == s.ip) {
				first = false;
				continue;
			}
			first = false;
			if (!user || s.nchain >= DPMU_PERF_MAX_CHAIN)
				continue;
			int rc = grow(r, (void **)&f->chains, &r->cap_chains, f->nchains + 1, 8);
			if (rc)
				return rc;
			f->chains[f->nchains++] = ip;
			s.nchain++;
		}
	}
#undef NEED
	int rc = grow(r, (void **)&f->samples, &r->cap_samples, f->nsamples + 1, sizeof s);
	if (rc)
		return rc;
	f->samples[f->nsamples++] = s;
	return 0;
}

/* A NUL-terminated name within [p, p + n). */
static int name_in(struct reader *r, uint64_t off, const uint8_t *p, uint64_t n, char **out)
{
	const uint8_t *z = memchr(p, 0, n);
	if (!z)
		return bad(r, off, "a file name is not terminated within its record");
	*out = strdup((const char *)p);
	return *out ? 0 : dpmu_err_set(r->err, DPMU_ENOMEM, "%s: out of memory", r->name);
}

static int read_map(struct reader *r, uint64_t off, uint32_t type, uint16_t misc,
		    const uint8_t *p, uint64_t n)
{
	uint64_t fixed = type == DPMU_PERF_RECORD_MMAP ? 32 : 32 + 24 + 8;
	if (n < fixed + 1)
		return bad(r, off, "a mapping record is shorter than its fields");
	(void)misc; /* a build id or the device and inode: the same 24 bytes */
	struct dpmu_perf_map m = {rd32(p), rd64(p + 8), rd64(p + 16), rd64(p + 24), NULL};
	int rc = name_in(r, off + 8 + fixed, p + fixed, n - fixed, &m.path);
	if (rc)
		return rc;
	struct dpmu_perf_file *f = r->f;
	rc = grow(r, (void **)&f->maps, &r->cap_maps, f->nmaps + 1, sizeof m);
	if (rc) {
		free(m.path);
		return rc;
	}
	f->maps[f->nmaps++] = m;
	return 0;
}

static int read_comm(struct reader *r, uint64_t off, const uint8_t *p, uint64_t n)
{
	if (n < 9 || !memchr(p + 8, 0, n - 8))
		return bad(r, off, "a COMM record's name is not terminated within it");
	struct dpmu_perf_comm c = {rd32(p), rd32(p + 4), {0}};
	snprintf(c.comm, sizeof c.comm, "%s", (const char *)p + 8);
	struct dpmu_perf_file *f = r->f;
	int rc = grow(r, (void **)&f->comms, &r->cap_comms, f->ncomms + 1, sizeof c);
	if (rc)
		return rc;
	f->comms[f->ncomms++] = c;
	return 0;
}

static int read_data(struct reader *r, uint64_t off, uint64_t size)
{
	if (!within(r, off, size))
		return bad(r, 40, "the data section lies beyond the end of the file (truncated?)");
	uint64_t at = off, end = off + size;
	while (at < end) {
		if (end - at < 8)
			return bad(r, at, "a record header is cut off at the end of the data");
		const uint8_t *h = r->p + at;
		uint32_t type = rd32(h);
		uint16_t misc, sz;
		memcpy(&misc, h + 4, 2);
		memcpy(&sz, h + 6, 2);
		if (sz < 8 || sz % 8)
			return bad(r, at, "a record's size is not a multiple of 8 of at least 8");
		if (sz > end - at)
			return bad(r, at, "a record runs past the end of the data (truncated?)");
		const uint8_t *p = h + 8;
		uint64_t n = sz - 8u;
		int rc = 0;
		switch (type) {
		case DPMU_PERF_RECORD_SAMPLE:
			rc = read_sample(r, at, p, n);
			break;
		case DPMU_PERF_RECORD_MMAP:
		case DPMU_PERF_RECORD_MMAP2:
			rc = read_map(r, at, type, misc, p, n);
			break;
		case DPMU_PERF_RECORD_COMM:
			rc = read_comm(r, at, p, n);
			break;
		default:
			if (type == 0 || type > 200)
				return bad(r, at, "a record of no type perf knows");
			break; /* others carry nothing a report reads */
		}
		if (rc)
			return rc;
		at += sz;
	}
	return 0;
}

/* perf's string in a feature section (u32 length with padding, bytes). */
static bool feat_string(const struct reader *r, uint64_t *at, uint64_t end, char *out, size_t cap)
{
	if (end - *at < 4)
		return false;
	uint32_t len = rd32(r->p + *at);
	if (len > end - *at - 4)
		return false;
	const char *s = (const char *)r->p + *at + 4;
	size_t k = strnlen(s, len);
	snprintf(out, cap, "%.*s", (int)k, s);
	*at += 4 + (uint64_t)len;
	return true;
}

/* The features a report uses: the event names and the architecture. A
 * damaged feature is reported; a missing one is not needed. */
static int read_features(struct reader *r, const uint8_t *bits, uint64_t idx)
{
	unsigned k = 0;
	for (unsigned feat = 0; feat < 256; feat++) {
		if (!(bits[feat / 8] >> (feat % 8) & 1))
			continue;
		uint64_t e = idx + 16ull * k++;
		if (!within(r, e, 16))
			return bad(r, e, "the feature index lies beyond the end of the file");
		uint64_t off = rd64(r->p + e), size = rd64(r->p + e + 8);
		if (!within(r, off, size))
			return bad(r, e, "a feature section lies beyond the end of the file");
		uint64_t at = off, end = off + size;
		if (feat == DPMU_PERF_FEAT_ARCH) {
			if (!feat_string(r, &at, end, r->f->arch, sizeof r->f->arch))
				return bad(r, off, "the arch feature is not a string");
		} else if (feat == DPMU_PERF_FEAT_EVENT_DESC) {
			if (size < 8)
				return bad(r, off, "the event_desc feature is cut short");
			uint32_t nev = rd32(r->p + at), asz = rd32(r->p + at + 4);
			at += 8;
			for (uint32_t i = 0; i < nev; i++) {
				if (asz > end - at || end - at - asz < 4)
					return bad(r, at, "the event_desc feature is cut short");
				uint64_t id0 = 0;
				uint32_t nids = rd32(r->p + at + asz);
				at += asz + 4;
				char name[64];
				if (!feat_string(r, &at, end, name, sizeof name))
					return bad(r, at, "an event name in event_desc is cut short");
				if (nids > (end - at) / 8)
					return bad(r, at, "event_desc's ids run past the feature");
				if (nids)
					id0 = rd64(r->p + at);
				at += 8ull * nids;
				int ev = nids ? event_of(r, id0) : (int)i;
				if (ev >= 0 && (unsigned)ev < r->f->desc.nevents)
					snprintf(r->f->desc.ev[ev].name, sizeof r->f->desc.ev[ev].name,
						 "%s", name);
			}
		}
	}
	return 0;
}

int dpmu_perf_parse(const void *data, size_t size, const char *name, struct dpmu_perf_file **out,
		    struct dpmu_err *err)
{
	*out = NULL;
	struct reader r = {.p = data, .size = size, .name = name, .err = err};
	if (size < 8 || memcmp(data, "PERFILE2", 8) != 0) {
		if (size >= 8 && memcmp(data, "2ELIFREP", 8) == 0)
			return bad(&r, 0, "a big-endian perf.data: only little-endian files are read");
		if (size >= 8 && memcmp(data, "PERFFILE", 8) == 0)
			return bad(&r, 0, "a perf.data of the old format (PERFFILE): not read");
		return bad(&r, 0, "not a perf.data file (no PERFILE2 magic)");
	}
	if (size < DPMU_PERF_HEADER_SIZE)
		return bad(&r, 8, "the header is cut short (truncated file)");
	const uint8_t *p = data;
	uint64_t hsize = rd64(p + 8);
	if (hsize == 16)
		return bad(&r, 8, "a perf.data written to a pipe (perf record -o -): not read");
	if (hsize != DPMU_PERF_HEADER_SIZE)
		return bad(&r, 8, "the header's size is not 104");
	r.f = calloc(1, sizeof *r.f);
	if (!r.f)
		return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory", name);
	int rc = read_attrs(&r, rd64(p + 16), rd64(p + 24), rd64(p + 32));
	if (!rc)
		rc = read_data(&r, rd64(p + 40), rd64(p + 48));
	if (!rc)
		rc = read_features(&r, p + 72, rd64(p + 40) + rd64(p + 48));
	if (rc) {
		dpmu_perf_free(r.f);
		return rc;
	}
	*out = r.f;
	return 0;
}

int dpmu_perf_read(const char *path, struct dpmu_perf_file **out, struct dpmu_err *err)
{
	*out = NULL;
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return dpmu_err_set(err, errno == ENOENT ? DPMU_ENOENT : DPMU_EIO, "%s: %s", path,
				    strerror(errno));
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			uint8_t *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(fp);
				return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory", path);
			}
			buf = nb;
		}
		size_t k = fread(buf + n, 1, cap - n, fp);
		n += k;
		if (k == 0)
			break;
	}
	bool failed = ferror(fp);
	fclose(fp);
	int rc = failed ? dpmu_err_set(err, DPMU_EIO, "%s: read failed", path)
			: dpmu_perf_parse(buf, n, path, out, err);
	free(buf);
	return rc;
}

void dpmu_perf_free(struct dpmu_perf_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nmaps; i++)
		free(f->maps[i].path);
	free(f->maps);
	free(f->samples);
	free(f->chains);
	free(f->comms);
	free(f);
}
