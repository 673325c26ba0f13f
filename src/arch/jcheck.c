/*
 * Reading hand-written JSON (profiles, catalogs) so that every problem is
 * reported with the file, the key path and what is wrong, the way a user
 * needs it to fix the file: "myprof.json: core_types[1].l1d.ways: must be a
 * power of two, got 3".
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arch/arch_internal.h"

bool dpmu_arch_pow2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

size_t dpmu_jc_push_key(struct dpmu_jc *j, const char *key)
{
	size_t mark = strlen(j->path);
	snprintf(j->path + mark, sizeof j->path - mark, "%s%s", mark ? "." : "", key);
	return mark;
}

size_t dpmu_jc_push_index(struct dpmu_jc *j, size_t i)
{
	size_t mark = strlen(j->path);
	snprintf(j->path + mark, sizeof j->path - mark, "[%zu]", i);
	return mark;
}

void dpmu_jc_pop(struct dpmu_jc *j, size_t mark)
{
	if (mark < sizeof j->path)
		j->path[mark] = '\0';
}

int dpmu_jc_fail(struct dpmu_jc *j, int code, const char *fmt, ...)
{
	char what[DPMU_ERRMSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (j->path[0])
		return dpmu_err_set(j->err, code, "%s: %s: %s", j->source, j->path, what);
	return dpmu_err_set(j->err, code, "%s: %s", j->source, what);
}

int dpmu_jc_load(struct dpmu_jc *j, const char *text, json_t **out)
{
	json_error_t je;
	/* Duplicate keys are almost always a copy-paste slip: refuse them. */
	*out = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!*out)
		return dpmu_err_set(j->err, DPMU_EINVAL, "%s:%d:%d: JSON syntax error: %s",
				    j->source, je.line, je.column, je.text);
	return 0;
}

const char *dpmu_jc_type(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE: return "true";
	case JSON_FALSE: return "false";
	case JSON_NULL: return "null";
	}
	return "unknown";
}

int dpmu_jc_object(struct dpmu_jc *j, const json_t *v, const char *const *allowed)
{
	if (!json_is_object(v))
		return dpmu_jc_fail(j, DPMU_EINVAL, "must be an object, got %s", dpmu_jc_type(v));
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)v, key, val) {
		bool ok = false;
		for (const char *const *a = allowed; *a; a++)
			if (strcmp(*a, key) == 0)
				ok = true;
		if (!ok) {
			char list[300] = "";
			size_t n = 0;
			for (const char *const *a = allowed; *a && n < sizeof list; a++)
				n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
						      a == allowed ? "" : ", ", *a);
			return dpmu_jc_fail(j, DPMU_EINVAL, "unknown key '%s' (known: %s)", key, list);
		}
	}
	return 0;
}

/* Fetch a member; 1 = present (path pushed), 0 = absent and optional. */
static int member(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		  json_t **v, size_t *mark)
{
	*mark = SIZE_MAX; /* no key pushed: dpmu_jc_pop leaves the path */
	*v = json_object_get(obj, key);
	if (!*v) {
		if (required)
			return dpmu_jc_fail(j, DPMU_EINVAL, "missing required key '%s'", key);
		return 0;
	}
	*mark = dpmu_jc_push_key(j, key);
	return 1;
}

int dpmu_jc_u32(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		uint32_t def, uint32_t min, uint32_t max, uint32_t *out)
{
	json_t *v;
	size_t mark;
	int rc = member(j, obj, key, required, &v, &mark);
	if (rc <= 0) {
		*out = def;
		return rc;
	}
	if (!json_is_integer(v))
		return dpmu_jc_fail(j, DPMU_EINVAL, "must be an integer, got %s", dpmu_jc_type(v));
	json_int_t x = json_integer_value(v);
	if (x < (json_int_t)min || x > (json_int_t)max)
		return dpmu_jc_fail(j, DPMU_ERANGE, "must be %u to %u, got %lld", min, max,
				    (long long)x);
	*out = (uint32_t)x;
	dpmu_jc_pop(j, mark);
	return 0;
}

int dpmu_jc_hex(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		uint64_t def, uint64_t max, uint64_t *out)
{
	json_t *v;
	size_t mark;
	int rc = member(j, obj, key, required, &v, &mark);
	if (rc <= 0) {
		*out = def;
		return rc;
	}
	uint64_t x;
	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0)
			return dpmu_jc_fail(j, DPMU_ERANGE, "must not be negative, got %lld",
					    (long long)json_integer_value(v));
		x = (uint64_t)json_integer_value(v);
	} else if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *end;
		errno = 0;
		if (strncasecmp(s, "0x", 2) != 0 || !isxdigit((unsigned char)s[2]))
			return dpmu_jc_fail(j, DPMU_EINVAL,
					    "must be an integer or a \"0x...\" hex string, got \"%s\"", s);
		x = strtoull(s, &end, 16);
		if (*end || errno)
			return dpmu_jc_fail(j, DPMU_EINVAL, "not a hex number: \"%s\"", s);
	} else {
		return dpmu_jc_fail(j, DPMU_EINVAL,
				    "must be an integer or a \"0x...\" hex string, got %s",
				    dpmu_jc_type(v));
	}
	if (x > max)
		return dpmu_jc_fail(j, DPMU_ERANGE, "must be at most 0x%llx, got 0x%llx",
				    (unsigned long long)max, (unsigned long long)x);
	*out = x;
	dpmu_jc_pop(j, mark);
	return 0;
}

struct unit {
	const char *name;
	double mult;
};

/* "<number><unit>" with optional space; unit matched case-insensitively
 * except where the table says otherwise. Returns false if malformed. */
static bool parse_with_unit(const char *s, const struct unit *units, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (end == s || errno || !isfinite(x))
		return false;
	while (*end == ' ')
		end++;
	for (const struct unit *u = units; u->name; u++)
		if (strcasecmp(end, u->name) == 0) {
			*out = x * u->mult;
			return true;
		}
	return false;
}

static const struct unit size_units[] = {
	{"", 1}, {"B", 1},
	{"KiB", 1024.0}, {"MiB", 1024.0 * 1024}, {"GiB", 1024.0 * 1024 * 1024},
	{"KB", 1024.0}, {"MB", 1024.0 * 1024}, {"GB", 1024.0 * 1024 * 1024},
	{"K", 1024.0}, {"M", 1024.0 * 1024},
	{NULL, 0},
};

static const struct unit freq_units[] = {
	{"", 1}, {"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}, {NULL, 0},
};

static const struct unit rate_units[] = {
	{"", 1}, {"B/s", 1}, {"kB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9},
	{"KiB/s", 1024.0}, {"MiB/s", 1024.0 * 1024}, {"GiB/s", 1024.0 * 1024 * 1024},
	{NULL, 0},
};

/* A number with a unit, as an integer quantity in [min, max]. */
static int quantity(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		    uint64_t def, uint64_t min, uint64_t max, const struct unit *units,
		    const char *example, uint64_t *out)
{
	json_t *v;
	size_t mark;
	int rc = member(j, obj, key, required, &v, &mark);
	if (rc <= 0) {
		*out = def;
		return rc;
	}
	double x;
	if (json_is_integer(v)) {
		x = (double)json_integer_value(v);
	} else if (json_is_string(v)) {
		if (!parse_with_unit(json_string_value(v), units, &x))
			return dpmu_jc_fail(j, DPMU_EINVAL, "cannot read \"%s\" (write e.g. %s)",
					    json_string_value(v), example);
	} else {
		return dpmu_jc_fail(j, DPMU_EINVAL, "must be a number or a string like %s, got %s",
				    example, dpmu_jc_type(v));
	}
	double r = floor(x + 0.5);
	if (fabs(x - r) > 1e-6 * (fabs(x) + 1))
		return dpmu_jc_fail(j, DPMU_EINVAL, "must be a whole number of units, got %g", x);
	if (r < (double)min || r > (double)max)
		return dpmu_jc_fail(j, DPMU_ERANGE, "must be %llu to %llu, got %.0f",
				    (unsigned long long)min, (unsigned long long)max, r);
	*out = (uint64_t)r;
	dpmu_jc_pop(j, mark);
	return 0;
}

int dpmu_jc_size(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		 uint64_t def, uint64_t min, uint64_t max, uint64_t *out)
{
	return quantity(j, obj, key, required, def, min, max, size_units, "\"64KiB\"", out);
}

int dpmu_jc_freq(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		 uint64_t def, uint64_t *out)
{
	/* 1 Hz to 100 GHz: anything outside is a typo, not a clock. */
	return quantity(j, obj, key, required, def, 1, 100000000000ull, freq_units,
			"\"2.8GHz\"", out);
}

int dpmu_jc_rate(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		 uint64_t def, uint64_t *out)
{
	return quantity(j, obj, key, required, def, 1, 100000000000000ull, rate_units,
			"\"29.8GB/s\"", out);
}

int dpmu_jc_milli(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		  uint32_t def, double min, double max, uint32_t *out)
{
	json_t *v;
	size_t mark;
	int rc = member(j, obj, key, required, &v, &mark);
	if (rc <= 0) {
		*out = def;
		return rc;
	}
	if (!json_is_number(v))
		return dpmu_jc_fail(j, DPMU_EINVAL, "must be a number, got %s", dpmu_jc_type(v));
	double x = json_number_value(v);
	if (!(x >= min && x <= max))
		return dpmu_jc_fail(j, DPMU_ERANGE, "must be %g to %g, got %g", min, max, x);
	*out = (uint32_t)floor(x * 1000.0 + 0.5);
	dpmu_jc_pop(j, mark);
	return 0;
}

int dpmu_jc_bool(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		 bool def, bool *out)
{
	json_t *v;
	size_t mark;
	int rc = member(j, obj, key, required, &v, &mark);
	if (rc <= 0) {
		*out = def;
		return rc;
	}
	if (!json_is_boolean(v))
		return dpmu_jc_fail(j, DPMU_EINVAL, "must be true or false, got %s",
				    dpmu_jc_type(v));
	*out = json_is_true(v);
	dpmu_jc_pop(j, mark);
	return 0;
}

int dpmu_jc_string(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		   const char *def, char *buf, size_t cap)
{
	json_t *v;
	size_t mark;
	int rc = member(j, obj, key, required, &v, &mark);
	if (rc <= 0) {
		snprintf(buf, cap, "%s", def ? def : "");
		return rc;
	}
	if (!json_is_string(v))
		return dpmu_jc_fail(j, DPMU_EINVAL, "must be a string, got %s", dpmu_jc_type(v));
	size_t len = json_string_length(v);
	if (len >= cap)
		return dpmu_jc_fail(j, DPMU_ERANGE, "longer than %zu characters", cap - 1);
	if (strlen(json_string_value(v)) != len)
		return dpmu_jc_fail(j, DPMU_EINVAL, "contains a NUL character");
	memcpy(buf, json_string_value(v), len + 1);
	dpmu_jc_pop(j, mark);
	return 0;
}

int dpmu_jc_enum(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		 unsigned def, const char *const *names, unsigned *out)
{
	json_t *v;
	size_t mark;
	int rc = member(j, obj, key, required, &v, &mark);
	if (rc <= 0) {
		*out = def;
		return rc;
	}
	char list[200] = "";
	size_t n = 0;
	for (unsigned i = 0; names[i] && n < sizeof list; i++)
		n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", names[i]);
	if (!json_is_string(v))
		return dpmu_jc_fail(j, DPMU_EINVAL, "must be one of %s, got %s", list,
				    dpmu_jc_type(v));
	for (unsigned i = 0; names[i]; i++)
		if (strcasecmp(names[i], json_string_value(v)) == 0) {
			*out = i;
			dpmu_jc_pop(j, mark);
			return 0;
		}
	return dpmu_jc_fail(j, DPMU_EINVAL, "must be one of %s, got \"%s\"", list,
			    json_string_value(v));
}
