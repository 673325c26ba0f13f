/*
 * Shared by the files of src/arch only.
 *
 *   jcheck.c    reading hand-written JSON with messages that name the file,
 *               the key path and the problem ("x.json: clusters[0].l3.ways:
 *               must be a power of two, got 3")
 *   catalog.c   event catalogs (data/events/NAME.json)
 *   profile.c   cluster profiles (data/profiles/NAME.json)
 *   sysreg.c    system-register name table
 */
#ifndef DPMU_ARCH_INTERNAL_H
#define DPMU_ARCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "dynpmu/arch.h"

#define DPMU_JC_PATH_MAX 200

/* Where we are in a document: the file name and the key path so far. */
struct dpmu_jc {
	const char *source;          /* "myprof.json" */
	char path[DPMU_JC_PATH_MAX]; /* "clusters[0].cores[2]" */
	struct dpmu_err *err;
};

/* Descend into a key or an index; returns the mark dpmu_jc_pop restores. */
size_t dpmu_jc_push_key(struct dpmu_jc *j, const char *key);
size_t dpmu_jc_push_index(struct dpmu_jc *j, size_t i);
void dpmu_jc_pop(struct dpmu_jc *j, size_t mark);

/* Record "<source>: <path>: <problem>" and return code. */
int dpmu_jc_fail(struct dpmu_jc *j, int code, const char *fmt, ...) DPMU_PRINTF(3, 4);
/* Parse text; syntax errors give line and column. */
int dpmu_jc_load(struct dpmu_jc *j, const char *text, json_t **out);
const char *dpmu_jc_type(const json_t *v);

/* `v` (at the current path) must be an object whose keys are all in the
 * NULL-terminated `allowed` list. */
int dpmu_jc_object(struct dpmu_jc *j, const json_t *v, const char *const *allowed);

/* Member readers: `key` of object `obj`. When the key is absent and
 * `required` is false, *out gets `def` and 0 is returned. */
int dpmu_jc_u32(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		uint32_t def, uint32_t min, uint32_t max, uint32_t *out);
/* Integer or "0x..." hex string. */
int dpmu_jc_hex(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		uint64_t def, uint64_t max, uint64_t *out);
/* Bytes: integer or "64KiB", "2MiB", "512B" (KB/MB/GB mean KiB/MiB/GiB). */
int dpmu_jc_size(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		 uint64_t def, uint64_t min, uint64_t max, uint64_t *out);
/* Hz: integer or "2.8GHz", "25MHz", "32768Hz"; must be > 0. */
int dpmu_jc_freq(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		 uint64_t def, uint64_t *out);
/* Bytes per second: integer or "29.8GB/s" (decimal), "1GiB/s" (binary). */
int dpmu_jc_rate(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		 uint64_t def, uint64_t *out);
/* Number (integer or real) in [min, max], returned x 1000, rounded. */
int dpmu_jc_milli(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		  uint32_t def, double min, double max, uint32_t *out);
int dpmu_jc_bool(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		 bool def, bool *out);
/* A string of at most cap-1 bytes, copied into buf. */
int dpmu_jc_string(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		   const char *def, char *buf, size_t cap);
/* One of the NULL-terminated `names`; *out is its index. */
int dpmu_jc_enum(struct dpmu_jc *j, const json_t *obj, const char *key, bool required,
		 unsigned def, const char *const *names, unsigned *out);

bool dpmu_arch_pow2(uint64_t x);

#endif
