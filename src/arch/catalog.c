/*
 * Event catalogs: data/events/<name>.json compiled into the binary
 * (include/dynpmu/embedded.h), parsed on first use and immutable afterwards.
 *
 * The only mutable state of src/arch is the cache of parsed catalogs below:
 * each entry is written once, under the lock, and never changed or freed, so
 * a returned catalog may be used from any thread for the life of the process.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arch/arch_internal.h"
#include "dynpmu/embedded.h"

#define DPMU_CATALOG_CACHE 16

static pthread_mutex_t catalog_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct dpmu_event_catalog *catalog_cache[DPMU_CATALOG_CACHE];

static const char *const pmu_names[] = {"core", "amu", "cluster", NULL};
static const char *const event_keys[] = {"name", "code", "pmu", "description", NULL};
static const char *const catalog_keys[] = {"name", "description", "source", "events", NULL};

/* Arm writes event names in upper case, digits and underscores. */
static bool valid_event_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!(isupper((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

static void catalog_free(struct dpmu_event_catalog *c)
{
	if (!c)
		return;
	struct dpmu_event_desc *ev = (struct dpmu_event_desc *)c->events;
	for (size_t i = 0; ev && i < c->count; i++) {
		free((char *)ev[i].name);
		free((char *)ev[i].description);
	}
	free(ev);
	free((char *)c->name);
	free(c);
}

static int parse_event(struct dpmu_jc *j, const json_t *e, struct dpmu_event_desc *d)
{
	char name[DPMU_NAME_MAX], desc[512];
	uint64_t code;
	unsigned pmu;
	int rc;
	if ((rc = dpmu_jc_object(j, e, event_keys)) ||
	    (rc = dpmu_jc_string(j, e, "name", true, NULL, name, sizeof name)) ||
	    (rc = dpmu_jc_hex(j, e, "code", true, 0, 0xffff, &code)) ||
	    (rc = dpmu_jc_enum(j, e, "pmu", true, 0, pmu_names, &pmu)) ||
	    (rc = dpmu_jc_string(j, e, "description", true, NULL, desc, sizeof desc)))
		return rc;
	if (!valid_event_name(name)) {
		size_t mark = dpmu_jc_push_key(j, "name");
		rc = dpmu_jc_fail(j, DPMU_EINVAL,
				  "'%s' is not an event name (upper case, digits, '_')", name);
		dpmu_jc_pop(j, mark);
		return rc;
	}
	d->name = strdup(name);
	d->description = strdup(desc);
	d->code = (uint16_t)code;
	d->pmu = (enum dpmu_pmu_kind)pmu;
	if (!d->name || !d->description)
		return dpmu_err_set(j->err, DPMU_ENOMEM, "%s: out of memory", j->source);
	return 0;
}

static int parse_catalog(const char *name, const char *text, struct dpmu_event_catalog **out,
			 struct dpmu_err *err)
{
	char source[DPMU_NAME_MAX + 16];
	snprintf(source, sizeof source, "events/%s.json", name);
	struct dpmu_jc j = {.source = source, .path = "", .err = err};
	json_t *root;
	int rc = dpmu_jc_load(&j, text, &root);
	if (rc)
		return rc;
	struct dpmu_event_catalog *c = calloc(1, sizeof *c);
	if (!c) {
		json_decref(root);
		return dpmu_err_set(err, DPMU_ENOMEM, "out of memory loading %s", source);
	}
	char cname[DPMU_NAME_MAX];
	const json_t *events = json_object_get(root, "events");
	if ((rc = dpmu_jc_object(&j, root, catalog_keys)) ||
	    (rc = dpmu_jc_string(&j, root, "name", true, NULL, cname, sizeof cname)))
		goto out;
	if (strcmp(cname, name) != 0) {
		rc = dpmu_jc_fail(&j, DPMU_EINVAL, "name is '%s', the file says '%s'", name, cname);
		goto out;
	}
	if (!json_is_array(events) || json_array_size(events) == 0) {
		rc = dpmu_jc_fail(&j, DPMU_EINVAL, "'events' must be a non-empty array");
		goto out;
	}
	c->name = strdup(name);
	struct dpmu_event_desc *ev = calloc(json_array_size(events), sizeof *ev);
	c->events = ev;
	if (!c->name || !ev) {
		rc = dpmu_err_set(err, DPMU_ENOMEM, "out of memory loading %s", source);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(events); i++) {
		size_t m0 = dpmu_jc_push_key(&j, "events");
		dpmu_jc_push_index(&j, i);
		rc = parse_event(&j, json_array_get(events, i), &ev[i]);
		c->count = i + 1;
		if (rc)
			goto out;
		/* Names and codes are both lookup keys: each must be unique. */
		for (size_t k = 0; k < i; k++) {
			if (strcasecmp(ev[k].name, ev[i].name) == 0) {
				rc = dpmu_jc_fail(&j, DPMU_EINVAL, "event name %s repeats events[%zu]",
						  ev[i].name, k);
				goto out;
			}
			if (ev[k].code == ev[i].code) {
				rc = dpmu_jc_fail(&j, DPMU_EINVAL,
						  "code 0x%x of %s repeats events[%zu] (%s)",
						  ev[i].code, ev[i].name, k, ev[k].name);
				goto out;
			}
		}
		dpmu_jc_pop(&j, m0);
	}
	*out = c;
	c = NULL;
out:
	catalog_free(c);
	json_decref(root);
	return rc;
}

const struct dpmu_event_catalog *dpmu_catalog_get(const char *name, struct dpmu_err *err)
{
	if (!name || !*name || strlen(name) >= DPMU_NAME_MAX) {
		dpmu_err_set(err, DPMU_EINVAL, "event catalog name must be 1 to %d characters",
			     DPMU_NAME_MAX - 1);
		return NULL;
	}
	for (const char *s = name; *s; s++)
		if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '-')) {
			dpmu_err_set(err, DPMU_ENOENT,
				     "no event catalog '%s' (names are lower case, e.g. cortex-a75)",
				     name);
			return NULL;
		}

	const struct dpmu_event_catalog *found = NULL;
	pthread_mutex_lock(&catalog_lock);
	size_t free_slot = DPMU_CATALOG_CACHE;
	for (size_t i = 0; i < DPMU_CATALOG_CACHE; i++) {
		if (!catalog_cache[i]) {
			if (free_slot == DPMU_CATALOG_CACHE)
				free_slot = i;
		} else if (strcmp(catalog_cache[i]->name, name) == 0) {
			found = catalog_cache[i];
			break;
		}
	}
	if (!found) {
		char path[DPMU_NAME_MAX + 16];
		snprintf(path, sizeof path, "events/%s.json", name);
		const struct dpmu_embedded_file *f = dpmu_embedded_find(path);
		struct dpmu_event_catalog *c = NULL;
		if (!f)
			dpmu_err_set(err, DPMU_ENOENT,
				     "no event catalog '%s' (built-in: cortex-a75, cortex-a55, armv8-pmuv3, "
				     "dsu, dsu-120, amu)", name);
		else if (free_slot == DPMU_CATALOG_CACHE)
			dpmu_err_set(err, DPMU_ENOMEM, "too many event catalogs (at most %d)",
				     DPMU_CATALOG_CACHE);
		else if (parse_catalog(name, f->data, &c, err) == 0)
			catalog_cache[free_slot] = found = c;
	}
	pthread_mutex_unlock(&catalog_lock);
	return found;
}

const struct dpmu_event_desc *dpmu_catalog_find_name(const struct dpmu_event_catalog *c,
						      const char *name)
{
	if (!c || !name)
		return NULL;
	for (size_t i = 0; i < c->count; i++)
		if (strcasecmp(c->events[i].name, name) == 0)
			return &c->events[i];
	return NULL;
}

const struct dpmu_event_desc *dpmu_catalog_find_code(const struct dpmu_event_catalog *c,
						      uint16_t code)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->count; i++)
		if (c->events[i].code == code)
			return &c->events[i];
	return NULL;
}
