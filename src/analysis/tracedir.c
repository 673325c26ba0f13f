/*
 * Trace directories (include/dynpmu/tracedir.h): meta.json through
 * jansson, trace.bin as raw bytes. The reader trusts nothing: every field
 * is checked for presence, type and range, and trace.bin must hold exactly
 * the bytes the sink held.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dynpmu/tracedir.h"

#define META "meta.json"
#define TRACE "trace.bin"
#define MAX_FILE (1ull << 32)   /* a sink is at most 4 GiB */

/* ---- writing ---------------------------------------------------------------- */

static json_t *idx(uint64_t v)
{
	return v == DPMU_TRACEDIR_NONE ? json_null() : json_integer((json_int_t)v);
}

static json_t *to_json(const struct dpmu_tracedir *t)
{
	json_t *idr = json_array();
	for (unsigned i = 0; i < 14; i++)
		json_array_append_new(idr, json_integer(t->regs.idr[i]));
	json_t *maps = json_array();
	for (unsigned i = 0; i < t->nmaps; i++)
		json_array_append_new(maps, json_pack("{s:I,s:I,s:I,s:s}", "start",
						      (json_int_t)t->maps[i].start, "len",
						      (json_int_t)t->maps[i].len, "pgoff",
						      (json_int_t)t->maps[i].pgoff, "path",
						      t->maps[i].path));
	json_t *snaps = json_array();
	for (size_t i = 0; i < t->nsnap; i++) {
		json_t *counts = json_object();
		for (unsigned k = 0; k < t->snap[i].n; k++)
			json_object_set_new(counts, t->snap[i].name[k],
					    json_integer((json_int_t)t->snap[i].value[k]));
		json_array_append_new(snaps, json_pack("{s:I,s:o}", "time_ns",
						       (json_int_t)t->snap[i].time_ns, "counts",
						       counts));
	}
	json_t *trigger = t->trigger_event[0]
				  ? json_pack("{s:s,s:I}", "event", t->trigger_event, "count",
					      (json_int_t)t->trigger_count)
				  : json_null();
	json_t *range = t->range_name[0]
				? json_pack("{s:s,s:I,s:I}", "name", t->range_name, "start",
					    (json_int_t)t->range_start, "end",
					    (json_int_t)t->range_end)
				: json_null();
	return json_pack("{s:s,s:i,s:i,s:s,s:{s:o,s:I,s:I},s:{s:I,s:I,s:I,s:b},s:o,s:I,s:o,"
			 "s:{s:I,s:I,s:o,s:o,s:o},s:s,s:o,s:o}",
			 "format", "dynpmu-trace", "version", DPMU_TRACEDIR_VERSION, "cpu",
			 (int)t->cpu, "core_type", t->core_type, "trace_unit", "trcidr", idr,
			 "trcconfigr", (json_int_t)t->regs.configr, "trctraceidr",
			 (json_int_t)t->regs.traceidr, "sink", "size", (json_int_t)t->sink_size,
			 "bytes", (json_int_t)t->trace_len, "written", (json_int_t)t->sink_written,
			 "wrapped", t->wrapped, "trigger", trigger, "window",
			 (json_int_t)t->window, "range", range, "instructions", "given",
			 (json_int_t)t->given, "traced", (json_int_t)t->traced, "first",
			 idx(t->first), "last", idx(t->last), "event_at", idx(t->event_at),
			 "program", t->program ? t->program : "", "mappings", maps, "snapshots",
			 snaps);
}

int dpmu_tracedir_write(const char *dir, const struct dpmu_tracedir *t, struct dpmu_err *err)
{
	if (mkdir(dir, 0777) && errno != EEXIST)
		return dpmu_err_set(err, DPMU_EIO, "%s: cannot create the directory: %s", dir,
				    strerror(errno));
	char path[4096];
	snprintf(path, sizeof path, "%s/" TRACE, dir);
	FILE *f = fopen(path, "wb");
	if (!f)
		return dpmu_err_set(err, DPMU_EIO, "%s: cannot write: %s", path, strerror(errno));
	bool ok = !t->trace_len || fwrite(t->trace, 1, t->trace_len, f) == t->trace_len;
	int e = errno;
	if (fclose(f))
		ok = false, e = errno;
	if (!ok)
		return dpmu_err_set(err, DPMU_EIO, "%s: cannot write: %s", path, strerror(e));
	json_t *j = to_json(t);
	if (!j)
		return dpmu_err_set(err, DPMU_ENOMEM, "%s/" META ": out of memory", dir);
	snprintf(path, sizeof path, "%s/" META, dir);
	int rc = json_dump_file(j, path, JSON_INDENT(1) | JSON_SORT_KEYS);
	json_decref(j);
	if (rc)
		return dpmu_err_set(err, DPMU_EIO, "%s: cannot write", path);
	return 0;
}

/* ---- reading ---------------------------------------------------------------- */

struct rd {
	const char *name;
	struct dpmu_err *err;
	int rc;
};

static int bad(struct rd *r, const char *field, const char *what)
{
	if (!r->rc)
		r->rc = dpmu_err_set(r->err, DPMU_EINVAL, "%s: %s: %s", r->name, field, what);
	return r->rc;
}

static json_t *get(struct rd *r, json_t *o, const char *field, json_type type, bool nullable)
{
	json_t *v = json_object_get(o, field);
	if (v && nullable && json_is_null(v))
		return v;
	if (!v || json_typeof(v) != type) {
		static const char *const names[] = { "an object", "an array", "a string",
						     "an integer", "a number", "true or false",
						     "true or false", "null" };
		char what[64];
		snprintf(what, sizeof what, "%s %s", v ? "is not" : "is missing: it must be",
			 type < sizeof names / sizeof names[0] ? names[type] : "a value");
		bad(r, field, what);
		return NULL;
	}
	return v;
}

static uint64_t num(struct rd *r, json_t *o, const char *field, uint64_t max)
{
	json_t *v = get(r, o, field, JSON_INTEGER, false);
	if (!v)
		return 0;
	json_int_t x = json_integer_value(v);
	if (x < 0 || (uint64_t)x > max) {
		char what[80];
		snprintf(what, sizeof what, "%lld is out of range (0 to %llu)", (long long)x,
			 (unsigned long long)max);
		bad(r, field, what);
		return 0;
	}
	return (uint64_t)x;
}

static uint64_t index_of(struct rd *r, json_t *o, const char *field)
{
	json_t *v = get(r, o, field, JSON_INTEGER, true);
	if (!v || json_is_null(v))
		return DPMU_TRACEDIR_NONE;
	return num(r, o, field, INT64_MAX);
}

static void str(struct rd *r, json_t *o, const char *field, char *out, size_t cap)
{
	json_t *v = get(r, o, field, JSON_STRING, false);
	if (!v)
		return;
	const char *s = json_string_value(v);
	if (strlen(s) >= cap) {
		bad(r, field, "is too long");
		return;
	}
	memcpy(out, s, strlen(s) + 1);
}

static void read_snapshots(struct rd *r, json_t *arr, struct dpmu_tracedir *t)
{
	size_t n = json_array_size(arr);
	if (n > DPMU_TRACEDIR_MAX_SNAPSHOTS) {
		bad(r, "snapshots", "too many");
		return;
	}
	t->snap = n ? calloc(n, sizeof *t->snap) : NULL;
	if (n && !t->snap) {
		bad(r, "snapshots", "out of memory");
		return;
	}
	for (size_t i = 0; i < n && !r->rc; i++) {
		json_t *s = json_array_get(arr, i);
		if (!json_is_object(s)) {
			bad(r, "snapshots", "an element is not an object");
			return;
		}
		struct dpmu_tracedir_snapshot *sn = &t->snap[t->nsnap++];
		sn->time_ns = num(r, s, "time_ns", INT64_MAX);
		json_t *c = get(r, s, "counts", JSON_OBJECT, false);
		if (!c)
			return;
		if (json_object_size(c) > DPMU_TRACEDIR_MAX_COUNTS) {
			bad(r, "snapshots.counts", "too many events");
			return;
		}
		const char *key;
		json_t *val;
		json_object_foreach(c, key, val) {
			if (strlen(key) >= sizeof sn->name[0] || !json_is_integer(val) ||
			    json_integer_value(val) < 0) {
				bad(r, "snapshots.counts",
				    "each must be an event name (under 48 characters) and a count");
				return;
			}
			memcpy(sn->name[sn->n], key, strlen(key) + 1);
			sn->value[sn->n++] = (uint64_t)json_integer_value(val);
		}
	}
}

static void read_maps(struct rd *r, json_t *arr, struct dpmu_tracedir *t)
{
	if (json_array_size(arr) > DPMU_TRACEDIR_MAX_MAPS) {
		bad(r, "mappings", "too many");
		return;
	}
	for (size_t i = 0; i < json_array_size(arr) && !r->rc; i++) {
		json_t *m = json_array_get(arr, i);
		if (!json_is_object(m)) {
			bad(r, "mappings", "an element is not an object");
			return;
		}
		struct dpmu_tracedir_map *d = &t->maps[t->nmaps];
		d->start = num(r, m, "start", INT64_MAX);
		d->len = num(r, m, "len", INT64_MAX);
		d->pgoff = num(r, m, "pgoff", INT64_MAX);
		json_t *p = get(r, m, "path", JSON_STRING, false);
		if (r->rc)
			return;
		if (d->start + d->len < d->start) {
			bad(r, "mappings", "a mapping wraps around the address space");
			return;
		}
		d->path = strdup(json_string_value(p));
		if (!d->path) {
			bad(r, "mappings", "out of memory");
			return;
		}
		t->nmaps++;
	}
}

static void from_json(struct rd *r, json_t *j, struct dpmu_tracedir *t, size_t trace_len)
{
	char fmt[32] = "";
	str(r, j, "format", fmt, sizeof fmt);
	if (!r->rc && strcmp(fmt, "dynpmu-trace") != 0)
		bad(r, "format", "is not \"dynpmu-trace\"");
	if (!r->rc && num(r, j, "version", 1000) != DPMU_TRACEDIR_VERSION)
		bad(r, "version", "is not a version this reader knows (1)");
	t->cpu = (unsigned)num(r, j, "cpu", 4095);
	str(r, j, "core_type", t->core_type, sizeof t->core_type);
	json_t *tu = get(r, j, "trace_unit", JSON_OBJECT, false);
	json_t *idr = tu ? get(r, tu, "trcidr", JSON_ARRAY, false) : NULL;
	if (idr && json_array_size(idr) != 14)
		bad(r, "trace_unit.trcidr", "must hold TRCIDR0-13 (14 values)");
	for (unsigned i = 0; idr && !r->rc && i < 14; i++) {
		json_t *v = json_array_get(idr, i);
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > UINT32_MAX)
			bad(r, "trace_unit.trcidr", "values must be 32-bit register values");
		else
			t->regs.idr[i] = (uint32_t)json_integer_value(v);
	}
	if (tu) {
		t->regs.configr = (uint32_t)num(r, tu, "trcconfigr", UINT32_MAX);
		t->regs.traceidr = (uint32_t)num(r, tu, "trctraceidr", 0x7f);
	}
	json_t *sink = get(r, j, "sink", JSON_OBJECT, false);
	if (sink) {
		t->sink_size = num(r, sink, "size", MAX_FILE);
		uint64_t bytes = num(r, sink, "bytes", MAX_FILE);
		t->sink_written = num(r, sink, "written", INT64_MAX);
		json_t *w = json_object_get(sink, "wrapped");
		if (!json_is_boolean(w))
			bad(r, "sink.wrapped", "must be true or false");
		t->wrapped = json_is_true(w);
		if (!r->rc && (bytes != trace_len || bytes > t->sink_size || bytes > t->sink_written))
			bad(r, "sink.bytes",
			    "does not match " TRACE " (its size, the sink's size and what was written)");
	}
	json_t *trig = get(r, j, "trigger", JSON_OBJECT, true);
	if (trig && json_is_object(trig)) {
		str(r, trig, "event", t->trigger_event, sizeof t->trigger_event);
		t->trigger_count = num(r, trig, "count", INT64_MAX);
		if (!r->rc && !t->trigger_event[0])
			bad(r, "trigger.event", "is empty");
	}
	t->window = num(r, j, "window", INT64_MAX);
	json_t *range = get(r, j, "range", JSON_OBJECT, true);
	if (range && json_is_object(range)) {
		str(r, range, "name", t->range_name, sizeof t->range_name);
		t->range_start = num(r, range, "start", INT64_MAX);
		t->range_end = num(r, range, "end", INT64_MAX);
		if (!r->rc && (!t->range_name[0] || t->range_end <= t->range_start))
			bad(r, "range", "needs a name and start < end");
	}
	json_t *ins = get(r, j, "instructions", JSON_OBJECT, false);
	if (ins) {
		t->given = num(r, ins, "given", INT64_MAX);
		t->traced = num(r, ins, "traced", INT64_MAX);
		t->first = index_of(r, ins, "first");
		t->last = index_of(r, ins, "last");
		t->event_at = index_of(r, ins, "event_at");
		if (!r->rc && (t->traced > t->given ||
			       (t->traced && (t->first > t->last || t->last >= t->given))))
			bad(r, "instructions", "the counts and indexes do not agree");
	}
	json_t *prog = get(r, j, "program", JSON_STRING, false);
	if (prog && !(t->program = strdup(json_string_value(prog))))
		bad(r, "program", "out of memory");
	json_t *maps = get(r, j, "mappings", JSON_ARRAY, false);
	if (maps && !r->rc)
		read_maps(r, maps, t);
	json_t *snaps = get(r, j, "snapshots", JSON_ARRAY, false);
	if (snaps && !r->rc)
		read_snapshots(r, snaps, t);
}

int dpmu_tracedir_parse(const char *name, const char *meta, size_t meta_len, const uint8_t *trace,
			size_t trace_len, struct dpmu_tracedir *t, struct dpmu_err *err)
{
	memset(t, 0, sizeof *t);
	struct rd r = { name, err, 0 };
	json_error_t je;
	json_t *j = json_loadb(meta, meta_len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: line %d: %s", name, je.line, je.text);
	if (!json_is_object(j))
		bad(&r, "meta", "is not a JSON object");
	else
		from_json(&r, j, t, trace_len);
	json_decref(j);
	if (!r.rc && trace_len) {
		t->trace = malloc(trace_len);
		if (!t->trace)
			r.rc = dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory", name);
		else
			memcpy(t->trace, trace, trace_len);
		t->trace_len = trace_len;
	}
	if (r.rc)
		dpmu_tracedir_free(t);
	return r.rc;
}

static int slurp(const char *path, uint8_t **out, size_t *len, struct dpmu_err *err)
{
	*out = NULL;
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return dpmu_err_set(err, errno == ENOENT ? DPMU_EINVAL : DPMU_EIO,
				    "%s: cannot open: %s (not a trace directory from dynpmu trace record?)",
				    path, strerror(errno));
	struct stat st;
	if (fstat(fileno(f), &st) || (uint64_t)st.st_size > MAX_FILE) {
		fclose(f);
		return dpmu_err_set(err, DPMU_EINVAL, "%s: unreadable or larger than 4 GiB", path);
	}
	size_t n = (size_t)st.st_size;
	uint8_t *b = malloc(n ? n : 1);
	if (!b || fread(b, 1, n, f) != n) {
		free(b);
		fclose(f);
		return dpmu_err_set(err, DPMU_EIO, "%s: cannot read", path);
	}
	fclose(f);
	*out = b;
	*len = n;
	return 0;
}

int dpmu_tracedir_read(const char *dir, struct dpmu_tracedir *t, struct dpmu_err *err)
{
	memset(t, 0, sizeof *t);
	char mpath[4096], tpath[4096];
	snprintf(mpath, sizeof mpath, "%s/" META, dir);
	snprintf(tpath, sizeof tpath, "%s/" TRACE, dir);
	uint8_t *meta, *trace;
	size_t mlen, tlen;
	int rc = slurp(mpath, &meta, &mlen, err);
	if (rc)
		return rc;
	rc = slurp(tpath, &trace, &tlen, err);
	if (!rc)
		rc = dpmu_tracedir_parse(mpath, (const char *)meta, mlen, trace, tlen, t, err);
	free(meta);
	free(trace);
	return rc;
}

void dpmu_tracedir_free(struct dpmu_tracedir *t)
{
	free(t->program);
	for (unsigned i = 0; i < t->nmaps; i++)
		free(t->maps[i].path);
	free(t->snap);
	free(t->trace);
	memset(t, 0, sizeof *t);
}
