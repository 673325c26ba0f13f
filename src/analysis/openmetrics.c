/*
 * OpenMetrics snapshots, their text rendering and the publisher between the
 * thread that measures and the threads that serve (include/dynpmu/openmetrics.h).
 *
 * The format is Prometheus's text exposition format 0.0.4: a family is
 * `# HELP name text`, `# TYPE name counter|gauge`, then one line per
 * sample `name{label="value",...} value`, all lines of a family together.
 * HELP text escapes backslash and newline; label values escape backslash,
 * double quote and newline.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynpmu/openmetrics.h"

struct om_family {
	char *name, *help;
	enum dpmu_om_type type;
	int first, last; /* sample chain, -1: none */
};

struct om_sample {
	int next;        /* the family's next sample, -1: none */
	size_t labels;   /* offset of its rendered label text in the arena */
	bool integer;
	uint64_t u;
	double d;
};

struct dpmu_om_snapshot {
	atomic_uint refs;
	struct om_family *fam;
	size_t nfam, capfam;
	struct om_sample *smp;
	size_t nsmp, capsmp;
	char *arena;     /* label texts, each NUL-terminated */
	size_t used, cap;
};

int dpmu_om_snapshot_create(struct dpmu_om_snapshot **out, struct dpmu_err *err)
{
	struct dpmu_om_snapshot *s = calloc(1, sizeof *s);
	if (!s)
		return dpmu_err_set(err, DPMU_ENOMEM, "openmetrics: out of memory");
	atomic_init(&s->refs, 1);
	*out = s;
	return 0;
}

static void snapshot_free(struct dpmu_om_snapshot *s)
{
	for (size_t i = 0; i < s->nfam; i++) {
		free(s->fam[i].name);
		free(s->fam[i].help);
	}
	free(s->fam);
	free(s->smp);
	free(s->arena);
	free(s);
}

void dpmu_om_snapshot_release(struct dpmu_om_snapshot *s)
{
	/* acq_rel: the freeing thread must see every write of the builder
	 * and of the other readers before it frees */
	if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
		snapshot_free(s);
}

static void snapshot_ref(struct dpmu_om_snapshot *s)
{
	atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

size_t dpmu_om_snapshot_samples(const struct dpmu_om_snapshot *s)
{
	return s ? s->nsmp : 0;
}

/* The exposition format's grammar for names (metric: also ':'). */
static bool valid_name(const char *n, bool metric)
{
	if (!n || !*n)
		return false;
	for (const char *c = n; *c; c++) {
		bool alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
			     (metric && *c == ':');
		if (!alpha && !(c > n && *c >= '0' && *c <= '9'))
			return false;
	}
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

int dpmu_om_family(struct dpmu_om_snapshot *s, const char *name, enum dpmu_om_type type,
		   const char *help, struct dpmu_err *err)
{
	if (!valid_name(name, true))
		return dpmu_err_set(err, DPMU_EINVAL, "openmetrics: '%s' is not a metric name",
				    name ? name : "(null)");
	if (type != DPMU_OM_COUNTER && type != DPMU_OM_GAUGE)
		return dpmu_err_set(err, DPMU_EINVAL, "openmetrics: %s: unknown type %d", name,
				    (int)type);
	/* Prometheus's naming rule, which promtool's lint checks */
	if (type == DPMU_OM_COUNTER && !ends_with(name, "_total"))
		return dpmu_err_set(err, DPMU_EINVAL, "openmetrics: counter %s must end in _total",
				    name);
	if (!help)
		help = "";
	for (size_t i = 0; i < s->nfam; i++) {
		if (strcmp(s->fam[i].name, name))
			continue;
		if (s->fam[i].type != type || strcmp(s->fam[i].help, help))
			return dpmu_err_set(err, DPMU_EINVAL,
					    "openmetrics: %s declared again with another type or "
					    "HELP", name);
		return (int)i;
	}
	if (s->nfam == s->capfam) {
		size_t cap = s->capfam ? 2 * s->capfam : 16;
		struct om_family *f = realloc(s->fam, cap * sizeof *f);
		if (!f)
			return dpmu_err_set(err, DPMU_ENOMEM, "openmetrics: out of memory");
		s->fam = f;
		s->capfam = cap;
	}
	struct om_family *f = &s->fam[s->nfam];
	f->name = strdup(name);
	f->help = strdup(help);
	if (!f->name || !f->help) {
		free(f->name);
		free(f->help);
		return dpmu_err_set(err, DPMU_ENOMEM, "openmetrics: out of memory");
	}
	f->type = type;
	f->first = f->last = -1;
	return (int)s->nfam++;
}

static int arena_reserve(struct dpmu_om_snapshot *s, size_t more)
{
	if (s->used + more <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap : 4096;
	while (cap < s->used + more)
		cap *= 2;
	char *a = realloc(s->arena, cap);
	if (!a)
		return -1;
	s->arena = a;
	s->cap = cap;
	return 0;
}

/* Append text to the arena; esc: escape it as a label value. One
 * reservation for the worst case (every byte escaped), since this runs on
 * the measuring thread for every label of every sample. */
static int arena_put(struct dpmu_om_snapshot *s, const char *t, bool esc)
{
	size_t n = strlen(t);
	if (arena_reserve(s, 2 * n + 1))
		return -1;
	char *d = s->arena + s->used;
	if (!esc || !strpbrk(t, "\\\"\n")) {
		memcpy(d, t, n);
		s->used += n;
		return 0;
	}
	for (; *t; t++) {
		if (*t == '\\' || *t == '"' || *t == '\n') {
			*d++ = '\\';
			*d++ = *t == '\n' ? 'n' : *t;
		} else {
			*d++ = *t;
		}
	}
	s->used = (size_t)(d - s->arena);
	return 0;
}

static int add_sample(struct dpmu_om_snapshot *s, int family, const struct dpmu_om_label *l,
		      size_t nl, bool integer, uint64_t u, double d, struct dpmu_err *err)
{
	if (family < 0 || (size_t)family >= s->nfam)
		return dpmu_err_set(err, DPMU_EINVAL, "openmetrics: no family %d", family);
	struct om_family *f = &s->fam[family];
	if (!integer && f->type == DPMU_OM_COUNTER && !(isfinite(d) && d >= 0))
		return dpmu_err_set(err, DPMU_EINVAL,
				    "openmetrics: counter %s given %g (must be finite, >= 0)",
				    f->name, d);
	for (size_t i = 0; i < nl; i++) {
		/* names starting __ are Prometheus's own */
		if (!valid_name(l[i].name, false) || strncmp(l[i].name, "__", 2) == 0 ||
		    !l[i].value)
			return dpmu_err_set(err, DPMU_EINVAL, "openmetrics: %s: bad label '%s'",
					    f->name, l[i].name ? l[i].name : "(null)");
		for (size_t k = 0; k < i; k++)
			if (strcmp(l[k].name, l[i].name) == 0)
				return dpmu_err_set(err, DPMU_EINVAL,
						    "openmetrics: %s: label %s given twice",
						    f->name, l[i].name);
	}
	if (s->nsmp == s->capsmp) {
		size_t cap = s->capsmp ? 2 * s->capsmp : 64;
		struct om_sample *n = realloc(s->smp, cap * sizeof *n);
		if (!n)
			return dpmu_err_set(err, DPMU_ENOMEM, "openmetrics: out of memory");
		s->smp = n;
		s->capsmp = cap;
	}
	size_t start = s->used;
	int bad = 0;
	for (size_t i = 0; i < nl && !bad; i++)
		bad = arena_put(s, i ? "," : "", false) || arena_put(s, l[i].name, false) ||
		      arena_put(s, "=\"", false) || arena_put(s, l[i].value, true) ||
		      arena_put(s, "\"", false);
	if (bad || arena_reserve(s, 1)) {
		s->used = start;
		return dpmu_err_set(err, DPMU_ENOMEM, "openmetrics: out of memory");
	}
	s->arena[s->used++] = '\0';
	int idx = (int)s->nsmp++;
	s->smp[idx] = (struct om_sample){.next = -1, .labels = start, .integer = integer,
					 .u = u, .d = d};
	if (f->last >= 0)
		s->smp[f->last].next = idx;
	else
		f->first = idx;
	f->last = idx;
	return 0;
}

int dpmu_om_add_u64(struct dpmu_om_snapshot *s, int family, const struct dpmu_om_label *labels,
		    size_t nlabels, uint64_t value, struct dpmu_err *err)
{
	return add_sample(s, family, labels, nlabels, true, value, 0, err);
}

int dpmu_om_add_double(struct dpmu_om_snapshot *s, int family,
		       const struct dpmu_om_label *labels, size_t nlabels, double value,
		       struct dpmu_err *err)
{
	return add_sample(s, family, labels, nlabels, false, 0, value, err);
}

int dpmu_om_format_double(double v, char *buf, size_t cap)
{
	if (isnan(v))
		return snprintf(buf, cap, "NaN");
	if (isinf(v))
		return snprintf(buf, cap, v > 0 ? "+Inf" : "-Inf");
	/* Go's strconv reads what %g writes; the shortest of 15 and 17
	 * significant digits that reads back exactly keeps 0.1 as "0.1" */
	int n = snprintf(buf, cap, "%.15g", v);
	if (strtod(buf, NULL) != v)
		n = snprintf(buf, cap, "%.17g", v);
	return n;
}

/* A growing output buffer. */
struct out {
	char *p;
	size_t n, cap;
	bool oom;
};

static void out_put(struct out *o, const char *t, size_t n)
{
	if (o->oom)
		return;
	if (o->n + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap < o->n + n + 1)
			cap *= 2;
		char *p = realloc(o->p, cap);
		if (!p) {
			o->oom = true;
			return;
		}
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->n, t, n);
	o->n += n;
	o->p[o->n] = '\0';
}

static void out_str(struct out *o, const char *t)
{
	out_put(o, t, strlen(t));
}

/* HELP escapes only backslash and newline (format 0.0.4). */
static void out_help(struct out *o, const char *t)
{
	for (; *t; t++) {
		if (*t == '\\')
			out_put(o, "\\\\", 2);
		else if (*t == '\n')
			out_put(o, "\\n", 2);
		else
			out_put(o, t, 1);
	}
}

int dpmu_om_render(const struct dpmu_om_snapshot *s, char **text, size_t *len,
		   struct dpmu_err *err)
{
	struct out o = {0};
	out_put(&o, "", 0);
	for (size_t fi = 0; s && fi < s->nfam; fi++) {
		const struct om_family *f = &s->fam[fi];
		/* a family without samples says nothing: HELP and TYPE alone
		 * would describe a series that does not exist */
		if (f->first < 0)
			continue;
		out_str(&o, "# HELP ");
		out_str(&o, f->name);
		out_str(&o, " ");
		out_help(&o, f->help);
		out_str(&o, "\n# TYPE ");
		out_str(&o, f->name);
		out_str(&o, f->type == DPMU_OM_COUNTER ? " counter\n" : " gauge\n");
		for (int i = f->first; i >= 0; i = s->smp[i].next) {
			const struct om_sample *m = &s->smp[i];
			const char *labels = s->arena + m->labels;
			char num[64];
			out_str(&o, f->name);
			if (*labels) {
				out_str(&o, "{");
				out_str(&o, labels);
				out_str(&o, "}");
			}
			if (m->integer)
				snprintf(num, sizeof num, " %llu\n", (unsigned long long)m->u);
			else {
				num[0] = ' ';
				int n = dpmu_om_format_double(m->d, num + 1, sizeof num - 2);
				num[n + 1] = '\n';
				num[n + 2] = '\0';
			}
			out_str(&o, num);
		}
	}
	if (o.oom) {
		free(o.p);
		return dpmu_err_set(err, DPMU_ENOMEM, "openmetrics: out of memory rendering");
	}
	*text = o.p;
	*len = o.n;
	return 0;
}

/* ---- publisher ------------------------------------------------------------- */

struct dpmu_om_publisher {
	/* guards cur only: held for a pointer swap or a reference, never
	 * while rendering or writing to a client */
	pthread_mutex_t lock;
	struct dpmu_om_snapshot *cur;
	atomic_uint_fast64_t published;
};

int dpmu_om_publisher_create(struct dpmu_om_publisher **out, struct dpmu_err *err)
{
	struct dpmu_om_publisher *p = calloc(1, sizeof *p);
	if (!p)
		return dpmu_err_set(err, DPMU_ENOMEM, "openmetrics: out of memory");
	if (pthread_mutex_init(&p->lock, NULL)) {
		free(p);
		return dpmu_err_set(err, DPMU_ENOMEM, "openmetrics: cannot create a mutex");
	}
	atomic_init(&p->published, 0);
	*out = p;
	return 0;
}

void dpmu_om_publisher_destroy(struct dpmu_om_publisher *p)
{
	if (!p)
		return;
	dpmu_om_snapshot_release(p->cur);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

void dpmu_om_publish(struct dpmu_om_publisher *p, struct dpmu_om_snapshot *s)
{
	pthread_mutex_lock(&p->lock);
	struct dpmu_om_snapshot *old = p->cur;
	p->cur = s;
	pthread_mutex_unlock(&p->lock);
	atomic_fetch_add_explicit(&p->published, 1, memory_order_relaxed);
	/* outside the lock: freeing a large snapshot is the publisher's
	 * own time, not a scrape's */
	dpmu_om_snapshot_release(old);
}

struct dpmu_om_snapshot *dpmu_om_acquire(struct dpmu_om_publisher *p)
{
	pthread_mutex_lock(&p->lock);
	struct dpmu_om_snapshot *s = p->cur;
	if (s)
		snapshot_ref(s);
	pthread_mutex_unlock(&p->lock);
	return s;
}

uint64_t dpmu_om_publications(struct dpmu_om_publisher *p)
{
	return atomic_load_explicit(&p->published, memory_order_relaxed);
}
