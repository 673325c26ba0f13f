/* Files from data/ compiled into the binary (cmake/embed_run.cmake). */
#ifndef DYNPMU_EMBEDDED_H
#define DYNPMU_EMBEDDED_H
#include <stddef.h>

struct dpmu_embedded_file {
	const char *path; /* relative to data/, e.g. "profiles/a75x4-a55x4.json" */
	const char *data; /* NUL-terminated */
	size_t len;
};

/* Terminated by an entry whose path is NULL. */
extern const struct dpmu_embedded_file dpmu_embedded_files[];
const struct dpmu_embedded_file *dpmu_embedded_find(const char *path);

#endif
