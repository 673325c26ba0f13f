/*
 * Trace reader: the text and binary forms of docs/trace-format.md, parsed
 * block by block from a fixed buffer so a trace of any length streams
 * through constant memory.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dynpmu/frontend.h"

/* Input is read in blocks of this size; a text line must fit in one. */
#define TRACE_BUF 65536
/* Instructions handed out per dpmu_trace_next call at most. */
#define TRACE_RUN 4096
/* Longest binary record: a tag and three 10-byte varints. */
#define TRACE_REC_MAX 31
/* Fields of a text line after the record keyword, at most. */
#define TRACE_FIELDS 6

struct trace_core_state {
	uint64_t next_pc;    /* PC a sequential instruction would have */
	uint64_t addr;       /* last load/store address */
};

struct dpmu_trace_reader {
	FILE *f;
	bool own;
	char name[256];
	enum dpmu_trace_format format;
	unsigned ncores;

	unsigned char buf[TRACE_BUF];
	size_t len, pos;
	bool eof;
	uint64_t base;       /* file offset of buf[0] */
	uint64_t line;       /* text: number of the last line read */

	unsigned core;       /* core the next instruction retires on */
	struct trace_core_state st[DPMU_MAX_CORES];
	struct dpmu_insn run[TRACE_RUN];
};

const char *dpmu_trace_check_insn(const struct dpmu_insn *in)
{
	if (in->pc & 3)
		return "PC is not 4-byte aligned (AArch64 instructions are 4 bytes)";
	switch (in->kind) {
	case DPMU_INSN_OTHER:
		break;
	case DPMU_INSN_LOAD:
	case DPMU_INSN_STORE:
		if (in->size == 0 || in->size > DPMU_TRACE_SIZE_MAX)
			return "access size out of range 1..0x1000 bytes";
		break;
	case DPMU_INSN_BRANCH:
		if (in->br_kind > DPMU_BR_IND)
			return "branch kind out of range";
		if (in->taken > 1)
			return "branch direction must be taken or not taken";
		/* Only a conditional branch can fall through (Arm ARM C6.2:
		 * B, BL, BR, BLR, RET always write the PC). */
		if (!in->taken && in->br_kind != DPMU_BR_COND)
			return "only a cond branch can be not taken (N)";
		break;
	default:
		return "instruction kind out of range";
	}
	return NULL;
}

static void reader_init(struct dpmu_trace_reader *r, FILE *f, bool own, const char *name)
{
	r->f = f;
	r->own = own;
	snprintf(r->name, sizeof r->name, "%s", name ? name : "(trace)");
	r->ncores = DPMU_TRACE_CORE_MAX + 1;
}

/* Keep the unread bytes, read up to a full buffer. */
static int reader_fill(struct dpmu_trace_reader *r, struct dpmu_err *err)
{
	if (r->eof)
		return 0;
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->base += r->pos;
		r->len -= r->pos;
		r->pos = 0;
	}
	size_t want = sizeof r->buf - r->len;
	size_t got = fread(r->buf + r->len, 1, want, r->f);
	r->len += got;
	if (got < want) {
		if (ferror(r->f))
			return dpmu_err_set(err, DPMU_EIO, "%s: read error: %s", r->name,
					    strerror(errno ? errno : EIO));
		r->eof = true;
	}
	return 0;
}

static int reader_start(struct dpmu_trace_reader *r, enum dpmu_trace_format format,
			struct dpmu_err *err)
{
	int rc = reader_fill(r, err);
	if (rc)
		return rc;
	bool magic = r->len >= DPMU_TRACE_MAGIC_LEN &&
		     memcmp(r->buf, DPMU_TRACE_MAGIC, DPMU_TRACE_MAGIC_LEN) == 0;
	if (format == DPMU_TRACE_AUTO)
		format = magic ? DPMU_TRACE_BINARY : DPMU_TRACE_TEXT;
	if (format == DPMU_TRACE_BINARY) {
		if (!magic)
			return dpmu_err_set(err, DPMU_EINVAL,
					    "%s: not a binary trace (no %s header)", r->name,
					    DPMU_TRACE_MAGIC);
		r->pos = DPMU_TRACE_MAGIC_LEN;
	} else if (format != DPMU_TRACE_TEXT) {
		return dpmu_err_set(err, DPMU_EINVAL, "%s: unknown trace format %d", r->name,
				    (int)format);
	}
	r->format = format;
	return 0;
}

int dpmu_trace_open_stream(FILE *f, const char *name, enum dpmu_trace_format format,
			   struct dpmu_trace_reader **out, struct dpmu_err *err)
{
	*out = NULL;
	if (!f)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: no stream", name ? name : "(trace)");
	struct dpmu_trace_reader *r = calloc(1, sizeof *r);
	if (!r)
		return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory", name ? name : "(trace)");
	reader_init(r, f, false, name);
	int rc = reader_start(r, format, err);
	if (rc) {
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int dpmu_trace_open(const char *path, enum dpmu_trace_format format,
		    struct dpmu_trace_reader **out, struct dpmu_err *err)
{
	*out = NULL;
	if (!path || !*path)
		return dpmu_err_set(err, DPMU_EINVAL, "no trace file given");
	FILE *f = fopen(path, "rb");
	if (!f)
		return dpmu_err_set(err, errno == ENOENT ? DPMU_ENOENT : DPMU_EIO,
				    "%s: cannot open: %s", path, strerror(errno));
	int rc = dpmu_trace_open_stream(f, path, format, out, err);
	if (rc) {
		fclose(f);
		return rc;
	}
	(*out)->own = true;
	return 0;
}

void dpmu_trace_close(struct dpmu_trace_reader *r)
{
	if (!r)
		return;
	if (r->own && r->f)
		fclose(r->f);
	free(r);
}

void dpmu_trace_set_ncores(struct dpmu_trace_reader *r, unsigned ncores)
{
	if (ncores == 0 || ncores > DPMU_TRACE_CORE_MAX + 1)
		ncores = DPMU_TRACE_CORE_MAX + 1;
	r->ncores = ncores;
}

enum dpmu_trace_format dpmu_trace_format_of(const struct dpmu_trace_reader *r)
{
	return r->format;
}

uint64_t dpmu_trace_position(const struct dpmu_trace_reader *r)
{
	return r->format == DPMU_TRACE_BINARY ? r->base + r->pos : r->line;
}

/* ---- text ---------------------------------------------------------------- */

struct field {
	const char *s;
	size_t n;
};

/* A field as it may be quoted in a message: printable, at most 40 bytes. */
static const char *field_show(struct field f, char *out, size_t cap)
{
	size_t n = f.n < 40 ? f.n : 40, k = 0;
	for (size_t i = 0; i < n && k + 1 < cap; i++)
		out[k++] = isprint((unsigned char)f.s[i]) ? f.s[i] : '?';
	if (f.n > n && k + 4 < cap) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
	return out;
}

static bool field_is(struct field f, const char *word)
{
	size_t n = strlen(word);
	return f.n == n && strncasecmp(f.s, word, n) == 0;
}

static int text_error(struct dpmu_trace_reader *r, struct dpmu_err *err, const char *fmt,
		      const char *arg)
{
	char what[256];
	snprintf(what, sizeof what, fmt, arg);
	return dpmu_err_set(err, DPMU_EINVAL, "%s:%llu: %s", r->name,
			    (unsigned long long)r->line, what);
}

/* Hex, with or without 0x (docs/trace-format.md "Numbers"). */
static int parse_hex(struct dpmu_trace_reader *r, struct field f, const char *what,
		     uint64_t *v, struct dpmu_err *err)
{
	char shown[64], msg[160];
	size_t i = 0;
	if (f.n >= 2 && f.s[0] == '0' && (f.s[1] == 'x' || f.s[1] == 'X'))
		i = 2;
	if (i == f.n) {
		snprintf(msg, sizeof msg, "%s '%%s' is not a hex number", what);
		return text_error(r, err, msg, field_show(f, shown, sizeof shown));
	}
	uint64_t x = 0;
	for (; i < f.n; i++) {
		int c = (unsigned char)f.s[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else {
			snprintf(msg, sizeof msg, "%s '%%s' is not a hex number", what);
			return text_error(r, err, msg, field_show(f, shown, sizeof shown));
		}
		if (x >> 60) {
			snprintf(msg, sizeof msg, "%s '%%s' does not fit in 64 bits", what);
			return text_error(r, err, msg, field_show(f, shown, sizeof shown));
		}
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return 0;
}

/* Core numbers are decimal like perf's cpu numbers; 0x selects hex. */
static int parse_core(struct dpmu_trace_reader *r, struct field f, unsigned *core,
		      struct dpmu_err *err)
{
	char shown[64];
	uint64_t v = 0;
	if (f.n >= 2 && f.s[0] == '0' && (f.s[1] == 'x' || f.s[1] == 'X')) {
		int rc = parse_hex(r, f, "core number", &v, err);
		if (rc)
			return rc;
	} else {
		for (size_t i = 0; i < f.n; i++) {
			if (!isdigit((unsigned char)f.s[i]))
				return text_error(r, err, "core number '%s' is not a number",
						  field_show(f, shown, sizeof shown));
			v = v * 10 + (uint64_t)(f.s[i] - '0');
			if (v > 1000000)
				break;
		}
	}
	if (v >= r->ncores) {
		char msg[160];
		snprintf(msg, sizeof msg, "cpu %%s out of range: there are %u cores (0-%u)",
			 r->ncores, r->ncores - 1);
		return text_error(r, err, msg, field_show(f, shown, sizeof shown));
	}
	*core = (unsigned)v;
	return 0;
}

/* The next line (newline and a trailing CR removed), or 0 at the end. */
static int text_line(struct dpmu_trace_reader *r, const char **line, size_t *len,
		     struct dpmu_err *err)
{
	for (;;) {
		const unsigned char *p = r->buf + r->pos;
		size_t avail = r->len - r->pos;
		const unsigned char *nl = memchr(p, '\n', avail);
		size_t n = nl ? (size_t)(nl - p) : avail;
		if (n > DPMU_TRACE_LINE_MAX) {
			r->line++;
			char lim[32];
			snprintf(lim, sizeof lim, "%d", DPMU_TRACE_LINE_MAX);
			return text_error(r, err, "line longer than %s bytes", lim);
		}
		if (nl || (r->eof && avail > 0)) {
			r->pos += n + (nl ? 1 : 0);
			r->line++;
			if (n > 0 && p[n - 1] == '\r')
				n--;
			*line = (const char *)p;
			*len = n;
			return 1;
		}
		if (r->eof)
			return 0;
		int rc = reader_fill(r, err);
		if (rc)
			return rc;
	}
}

/* Split at blanks, stop at '#'. Returns the field count or -1 if too many. */
static int split(const char *s, size_t n, struct field *out, int max)
{
	int k = 0;
	size_t i = 0;
	for (;;) {
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == n || s[i] == '#')
			return k;
		if (k == max)
			return -1;
		size_t b = i;
		while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '#')
			i++;
		out[k].s = s + b;
		out[k].n = i - b;
		k++;
	}
}

const char *const dpmu_trace_br_kinds[DPMU_BR_IND + 1] = {"cond", "uncond", "call", "ret", "ind"};

/* One instruction line. Returns 1 with *insn filled, 2 for a cpu switch
 * (*core set), 0 for a blank or comment line, negative on error. */
static int text_record(struct dpmu_trace_reader *r, const char *s, size_t n,
		       struct dpmu_insn *insn, unsigned *core, struct dpmu_err *err)
{
	struct field f[TRACE_FIELDS + 1];
	char shown[64];
	int k = split(s, n, f, TRACE_FIELDS + 1);
	if (k == 0)
		return 0;
	if (k < 0)
		return text_error(r, err, "too many fields%s", "");
	memset(insn, 0, sizeof *insn);
	insn->isize = 4;
	int want, rc;
	const char *usage;
	if (field_is(f[0], "cpu")) {
		if (k != 2)
			return text_error(r, err, "'cpu' needs one core number (cpu N)%s", "");
		rc = parse_core(r, f[1], core, err);
		return rc ? rc : 2;
	} else if (f[0].n == 1 && f[0].s[0] == 'i') {
		insn->kind = DPMU_INSN_OTHER;
		want = 2, usage = "'i' needs PC (i PC)";
	} else if (f[0].n == 1 && f[0].s[0] == 'l') {
		insn->kind = DPMU_INSN_LOAD;
		want = 4, usage = "'l' needs PC ADDR SIZE (l PC ADDR SIZE)";
	} else if (f[0].n == 1 && f[0].s[0] == 's') {
		insn->kind = DPMU_INSN_STORE;
		want = 4, usage = "'s' needs PC ADDR SIZE (s PC ADDR SIZE)";
	} else if (f[0].n == 1 && f[0].s[0] == 'b') {
		insn->kind = DPMU_INSN_BRANCH;
		want = 5, usage = "'b' needs PC TARGET T|N KIND (b PC TARGET T|N KIND)";
	} else {
		return text_error(r, err, "unknown record '%s' (expected i, l, s, b or cpu)",
				  field_show(f[0], shown, sizeof shown));
	}
	if (k != want) {
		char msg[160];
		snprintf(msg, sizeof msg, "%s, got %d field%s", usage, k - 1, k - 1 == 1 ? "" : "s");
		return text_error(r, err, "%s", msg);
	}
	if ((rc = parse_hex(r, f[1], "PC", &insn->pc, err)))
		return rc;
	if (insn->kind == DPMU_INSN_LOAD || insn->kind == DPMU_INSN_STORE) {
		uint64_t size;
		if ((rc = parse_hex(r, f[2], "address", &insn->addr, err)) ||
		    (rc = parse_hex(r, f[3], "size", &size, err)))
			return rc;
		if (size == 0 || size > DPMU_TRACE_SIZE_MAX)
			return text_error(r, err, "size '%s' out of range 1..0x1000 bytes",
					  field_show(f[3], shown, sizeof shown));
		insn->size = (uint16_t)size;
	} else if (insn->kind == DPMU_INSN_BRANCH) {
		if ((rc = parse_hex(r, f[2], "target", &insn->addr, err)))
			return rc;
		if (field_is(f[3], "T"))
			insn->taken = 1;
		else if (field_is(f[3], "N"))
			insn->taken = 0;
		else
			return text_error(r, err, "branch direction '%s' must be T or N",
					  field_show(f[3], shown, sizeof shown));
		size_t b;
		for (b = 0; b <= DPMU_BR_IND; b++)
			if (field_is(f[4], dpmu_trace_br_kinds[b]))
				break;
		if (b > DPMU_BR_IND)
			return text_error(r, err,
					  "branch kind '%s' must be cond, uncond, call, ret or ind",
					  field_show(f[4], shown, sizeof shown));
		insn->br_kind = (uint8_t)b;
		/* Direct branches carry the immediate flag (BR_IMMED_RETIRED);
		 * a call is taken as BL (docs/trace-format.md "Branches"). */
		if (b == DPMU_BR_COND || b == DPMU_BR_UNCOND || b == DPMU_BR_CALL)
			insn->flags |= DPMU_IC_IMMED;
	}
	const char *bad = dpmu_trace_check_insn(insn);
	if (bad)
		return text_error(r, err, "%s", bad);
	return 1;
}

static long text_next(struct dpmu_trace_reader *r, unsigned *core, struct dpmu_err *err)
{
	size_t n = 0;
	*core = r->core;
	while (n < TRACE_RUN) {
		const char *line = NULL;
		size_t len = 0;
		int rc = text_line(r, &line, &len, err);
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
		unsigned c = r->core;
		rc = text_record(r, line, len, &r->run[n], &c, err);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			n++;
		} else if (rc == 2 && c != r->core) {
			r->core = c;
			if (n > 0)
				return (long)n;
			*core = c;
		}
	}
	return (long)n;
}

/* ---- binary ----------------------------------------------------------------- */

static int bin_error(struct dpmu_trace_reader *r, uint64_t at, struct dpmu_err *err,
		     const char *what)
{
	return dpmu_err_set(err, DPMU_EINVAL, "%s: byte %llu: %s", r->name,
			    (unsigned long long)at, what);
}

/* LEB128, at most 10 bytes. Returns bytes used, 0 if truncated, -1 if it
 * does not fit in 64 bits. */
static int get_varint(const unsigned char *p, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	for (int i = 0; i < 10; i++) {
		if ((size_t)i >= n)
			return 0;
		uint64_t b = p[i];
		if (i == 9 && b > 1)
			return -1;
		x |= (b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = x;
			return i + 1;
		}
	}
	return -1;
}

static uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

static long bin_next(struct dpmu_trace_reader *r, unsigned *core, struct dpmu_err *err)
{
	size_t n = 0;
	*core = r->core;
	while (n < TRACE_RUN) {
		if (r->len - r->pos < TRACE_REC_MAX && !r->eof) {
			int rc = reader_fill(r, err);
			if (rc)
				return rc;
		}
		if (r->pos == r->len)
			break;
		const unsigned char *p = r->buf + r->pos;
		size_t avail = r->len - r->pos, k = 1;
		uint64_t at = r->base + r->pos;
		unsigned tag = p[0];
		uint64_t v;
		int u;
		if (tag & 0x80) {
			if (tag != DPMU_TRACE_TAG_CPU) {
				char msg[64];
				snprintf(msg, sizeof msg, "unknown record tag 0x%02x", tag);
				return bin_error(r, at, err, msg);
			}
			u = get_varint(p + 1, avail - 1, &v);
			if (u == 0)
				return bin_error(r, at, err, "truncated cpu record");
			if (u < 0 || v >= r->ncores) {
				char msg[96];
				snprintf(msg, sizeof msg, "cpu out of range: there are %u cores (0-%u)",
					 r->ncores, r->ncores - 1);
				return bin_error(r, at, err, msg);
			}
			r->pos += 1 + (size_t)u;
			if (v != r->core) {
				r->core = (unsigned)v;
				if (n > 0)
					return (long)n;
				*core = r->core;
			}
			continue;
		}
		struct trace_core_state *st = &r->st[r->core];
		struct dpmu_insn *in = &r->run[n];
		memset(in, 0, sizeof *in);
		in->isize = 4;
		in->kind = tag & 3;
		in->taken = (tag >> 2) & 1;
		in->br_kind = (tag >> 3) & 7;
		if (in->kind != DPMU_INSN_BRANCH && (tag & 0x3c))
			return bin_error(r, at, err, "branch bits set on a non-branch record");
		in->pc = st->next_pc;
		if (!(tag & DPMU_TRACE_TAG_SEQ)) {
			u = get_varint(p + k, avail - k, &v);
			if (u <= 0)
				return bin_error(r, at, err, u ? "PC delta does not fit in 64 bits"
							    : "truncated record");
			in->pc += unzigzag(v);
			k += (size_t)u;
		}
		if (in->kind == DPMU_INSN_LOAD || in->kind == DPMU_INSN_STORE) {
			u = get_varint(p + k, avail - k, &v);
			if (u <= 0)
				return bin_error(r, at, err, u ? "address delta does not fit in 64 bits"
							    : "truncated record");
			in->addr = st->addr + unzigzag(v);
			k += (size_t)u;
			u = get_varint(p + k, avail - k, &v);
			if (u <= 0)
				return bin_error(r, at, err, u ? "size does not fit in 64 bits"
							    : "truncated record");
			if (v == 0 || v > DPMU_TRACE_SIZE_MAX)
				return bin_error(r, at, err, "access size out of range 1..0x1000 bytes");
			in->size = (uint16_t)v;
			k += (size_t)u;
			st->addr = in->addr;
		} else if (in->kind == DPMU_INSN_BRANCH) {
			u = get_varint(p + k, avail - k, &v);
			if (u <= 0)
				return bin_error(r, at, err, u ? "target delta does not fit in 64 bits"
							    : "truncated record");
			in->addr = in->pc + unzigzag(v);
			k += (size_t)u;
			if (in->br_kind == DPMU_BR_COND || in->br_kind == DPMU_BR_UNCOND ||
			    in->br_kind == DPMU_BR_CALL)
				in->flags |= DPMU_IC_IMMED;
		}
		const char *bad = dpmu_trace_check_insn(in);
		if (bad)
			return bin_error(r, at, err, bad);
		st->next_pc = in->pc + 4;
		r->pos += k;
		n++;
	}
	return (long)n;
}

long dpmu_trace_next(struct dpmu_trace_reader *r, unsigned *core,
		     const struct dpmu_insn **insns, struct dpmu_err *err)
{
	*insns = r->run;
	*core = r->core;
	return r->format == DPMU_TRACE_BINARY ? bin_next(r, core, err) : text_next(r, core, err);
}

/* ---- whole-trace scan --------------------------------------------------------- */

void dpmu_trace_summary_add(struct dpmu_trace_summary *sum, unsigned core, uint64_t n)
{
	sum->insns += n;
	sum->per_core[core] += n;
	sum->cores_used |= UINT64_C(1) << core;
}

int dpmu_trace_scan(struct dpmu_trace_reader *r, struct dpmu_trace_summary *sum,
		    struct dpmu_err *err)
{
	memset(sum, 0, sizeof *sum);
	for (;;) {
		unsigned core;
		const struct dpmu_insn *insns;
		long n = dpmu_trace_next(r, &core, &insns, err);
		if (n <= 0)
			return (int)n;
		dpmu_trace_summary_add(sum, core, (uint64_t)n);
	}
}

