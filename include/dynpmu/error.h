/*
 * Errors: functions return 0 or a negative DPMU_E* code, and fill the
 * caller's struct dpmu_err with a message that names the input and what is
 * wrong with it (DESIGN.md "Conventions").
 */
#ifndef DYNPMU_ERROR_H
#define DYNPMU_ERROR_H

#include <stdarg.h>
#include <stdio.h>

enum {
	DPMU_OK = 0,
	DPMU_EINVAL = -1,   /* bad argument or malformed input */
	DPMU_ENOMEM = -2,
	DPMU_EIO = -3,      /* a file or pipe could not be read or written */
	DPMU_ENOENT = -4,   /* no such profile, event, register, file */
	DPMU_ERANGE = -5,   /* a number out of its field's range */
	DPMU_EBUSY = -6,    /* out of counters, ring full (lossy), ... */
	DPMU_ETIMEDOUT = -7,
	DPMU_ENOTSUP = -8,  /* the profile or platform does not implement it */
	DPMU_ESTATE = -9,   /* not allowed in the current state */
};

#define DPMU_ERRMSG_MAX 512

struct dpmu_err {
	int code;
	char msg[DPMU_ERRMSG_MAX];
};

#if defined(__GNUC__)
#define DPMU_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define DPMU_PRINTF(f, a)
#endif

/* Record an error; returns code so callers can `return dpmu_err_set(...)`.
 * err may be NULL when the caller does not want the message. */
static inline int dpmu_err_set(struct dpmu_err *err, int code, const char *fmt, ...) DPMU_PRINTF(3, 4);
static inline int dpmu_err_set(struct dpmu_err *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

static inline void dpmu_err_clear(struct dpmu_err *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}

static inline const char *dpmu_errmsg(const struct dpmu_err *err)
{
	return err && err->msg[0] ? err->msg : "no error";
}

#endif
