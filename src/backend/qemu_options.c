/* What a qemu run is given besides the program: where the threads go
 * (--place, --cpus), where qemu-aarch64 and the plugin are, and the
 * environment's measurement settings (DPMU_QEMU_QUANTUM, DPMU_QEMU_DRAIN).
 * Each bad value is refused naming it, before the program starts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/qemu_internal.h"
#include "dynpmu/qemu.h"

int dpmu_qemu_place_parse(const char *s, enum dpmu_qemu_place *out, struct dpmu_err *err)
{
	static const struct {
		const char *name;
		enum dpmu_qemu_place p;
	} names[] = {{"spread", DPMU_QEMU_PLACE_SPREAD},
		     {"big", DPMU_QEMU_PLACE_BIG},
		     {"little", DPMU_QEMU_PLACE_LITTLE}};
	for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++) {
		if (strcmp(s, names[i].name) == 0) {
			*out = names[i].p;
			return 0;
		}
	}
	return dpmu_err_set(err, DPMU_EINVAL, "--place '%s': use big, little or spread",
			    s ? s : "");
}

int dpmu_qemu_parse_cpus(const char *s, unsigned ncores, uint64_t *mask, struct dpmu_err *err)
{
	*mask = 0;
	const char *p = s;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b2 = a;
		if (end == p || a < 0)
			return dpmu_err_set(err, DPMU_EINVAL, "--cpus '%s': expected a list like 0-3,6",
					    s);
		p = end;
		if (*p == '-') {
			b2 = strtol(p + 1, &end, 10);
			if (end == p + 1 || b2 < a)
				return dpmu_err_set(err, DPMU_EINVAL,
						    "--cpus '%s': expected a list like 0-3,6", s);
			p = end;
		}
		if ((unsigned long)b2 >= ncores)
			return dpmu_err_set(err, DPMU_ERANGE,
					    "--cpus '%s': cpu%ld does not exist (the profile has "
					    "cpu0-cpu%u)",
					    s, b2, ncores - 1);
		for (long c = a; c <= b2; c++)
			*mask |= 1ull << c;
		if (*p == ',')
			p++;
		else if (*p)
			return dpmu_err_set(err, DPMU_EINVAL, "--cpus '%s': expected a list like 0-3,6",
					    s);
	}
	if (!*mask)
		return dpmu_err_set(err, DPMU_EINVAL, "--cpus '%s': no cpu given", s);
	return 0;
}

/* The order in which guest threads take cores. big/little: by core type
 * frequency (the fastest or slowest first), then core number; spread:
 * alternate between clusters and core types so two threads share nothing
 * below the DSU when they can. */
void dpmu_qemu_placement(struct qemu_be *q, uint64_t mask, enum dpmu_qemu_place place)
{
	unsigned ncores = dpmu_profile_ncores(q->profile);
	unsigned list[DPMU_MAX_CORES], n = 0;
	uint64_t freq[DPMU_MAX_CORES];
	unsigned group[DPMU_MAX_CORES];
	for (unsigned c = 0; c < ncores && c < DPMU_MAX_CORES && c < 64; c++) {
		if (!(mask >> c & 1))
			continue;
		unsigned cl, idx;
		const struct dpmu_core_type *t = dpmu_profile_core(q->profile, c, &cl, &idx);
		freq[c] = t ? t->freq_hz : 0;
		group[c] = cl * DPMU_MAX_CORE_TYPES + (unsigned)(t ? t - q->profile->core_types : 0);
		list[n++] = c;
	}
	if (place != DPMU_QEMU_PLACE_SPREAD) {
		/* stable insertion sort by frequency */
		for (unsigned i = 1; i < n; i++) {
			unsigned c = list[i], j = i;
			while (j > 0 && (place == DPMU_QEMU_PLACE_BIG ? freq[list[j - 1]] < freq[c]
								       : freq[list[j - 1]] > freq[c])) {
				list[j] = list[j - 1];
				j--;
			}
			list[j] = c;
		}
		memcpy(q->place, list, n * sizeof list[0]);
		q->nplace = n;
		return;
	}
	/* round robin over groups (cluster x core type), in core order */
	bool used[DPMU_MAX_CORES] = {false};
	q->nplace = 0;
	while (q->nplace < n) {
		unsigned seen_groups[DPMU_MAX_CORES], ng = 0;
		for (unsigned i = 0; i < n; i++) {
			unsigned c = list[i];
			if (used[i])
				continue;
			bool dup = false;
			for (unsigned g = 0; g < ng; g++)
				dup |= seen_groups[g] == group[c];
			if (dup)
				continue;
			seen_groups[ng++] = group[c];
			used[i] = true;
			q->place[q->nplace++] = c;
		}
	}
}

/* A tool's path from environment variable var, which overrides the
 * search: 1 and the path in out when var is set and the file can be used
 * (access mode), an error naming var when it cannot, 0 when var is unset. */
static int path_from_env(const char *var, int mode, char *out, size_t cap, struct dpmu_err *err)
{
	const char *env = getenv(var);
	if (!env || !*env)
		return 0;
	if (access(env, mode) != 0)
		return dpmu_err_set(err, DPMU_ENOENT, "%s=%s: %s", var, env, strerror(errno));
	snprintf(out, cap, "%s", env);
	return 1;
}

int dpmu_qemu_find_qemu(char *out, size_t cap, struct dpmu_err *err)
{
	int rc = path_from_env("DPMU_QEMU", X_OK, out, cap, err);
	if (rc)
		return rc < 0 ? rc : 0;
	if (dpmu_qemu_find_in_path("qemu-aarch64", out, cap) == 0)
		return 0;
	return dpmu_err_set(err, DPMU_ENOENT,
			    "qemu-aarch64 not found in PATH: install the Debian package qemu-user "
			    "(or set DPMU_QEMU to its path)");
}

int dpmu_qemu_find_plugin(char *out, size_t cap, struct dpmu_err *err)
{
	int rc = path_from_env("DPMU_PLUGIN", R_OK, out, cap, err);
	if (rc)
		return rc < 0 ? rc : 0;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return dpmu_err_set(err, DPMU_ENOENT,
				    "cannot find dynpmu's own path to locate libdpmu_qemu.so: set "
				    "DPMU_PLUGIN");
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	if (snprintf(out, cap, "%s/libdpmu_qemu.so", exe) >= (int)cap)
		return dpmu_err_set(err, DPMU_ERANGE, "the path of dynpmu (%s) is too long", exe);
	if (access(out, R_OK) != 0)
		return dpmu_err_set(err, DPMU_ENOENT,
				    "the qemu plugin %s is missing (build the dpmu_qemu target, or set "
				    "DPMU_PLUGIN)",
				    out);
	return 0;
}

/* DPMU_QEMU_QUANTUM: instructions per scheduling turn, for measurements of
 * the interleaving's cost (docs/frontend.md "Threads and interleaving").
 * Unset or empty: 1, so a turn is one block. Anything else must be a
 * decimal count of at least 1: a typo must not silently measure the default. */
int dpmu_qemu_parse_quantum(const char *s, uint64_t *out, struct dpmu_err *err)
{
	*out = 1;
	if (!s || !*s)
		return 0;
	/* strtoull would take leading blanks and a minus sign (wrapping it) */
	if (*s < '0' || *s > '9')
		return dpmu_err_set(err, DPMU_EINVAL,
				    "DPMU_QEMU_QUANTUM='%s': not a number (give instructions per "
				    "turn, 1 or more)",
				    s);
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	/* The monitor's checks (interval ends, rotation, overflow interrupts)
	 * fall between turns: a turn longer than a delivery batch's bound
	 * would let a 32-bit counter wrap unseen. */
	if (errno == ERANGE || (!*end && v > QEMU_QUANTUM_MAX))
		return dpmu_err_set(err, DPMU_ERANGE,
				    "DPMU_QEMU_QUANTUM='%s': too large (at most %u instructions "
				    "per turn)",
				    s, QEMU_QUANTUM_MAX);
	if (*end)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "DPMU_QEMU_QUANTUM='%s': unexpected '%s' after the number (give "
				    "instructions per turn, 1 or more)",
				    s, end);
	if (v == 0)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "DPMU_QEMU_QUANTUM='%s': a turn must be at least 1 instruction", s);
	*out = v;
	return 0;
}

/* DPMU_QEMU_DRAIN: what becomes of the records, for measurements of where
 * the time goes (docs/benchmarks.md). Unset, empty or model: modelled. */
int dpmu_qemu_parse_drain(const char *s, enum qemu_drain *out, struct dpmu_err *err)
{
	*out = QEMU_DRAIN_MODEL;
	if (!s || !*s || !strcmp(s, "model"))
		return 0;
	if (!strcmp(s, "read"))
		*out = QEMU_DRAIN_READ;
	else if (!strcmp(s, "discard"))
		*out = QEMU_DRAIN_DISCARD;
	else
		return dpmu_err_set(err, DPMU_EINVAL,
				    "DPMU_QEMU_DRAIN='%s': not a drain (give model, the default, "
				    "or read or discard)",
				    s);
	return 0;
}
