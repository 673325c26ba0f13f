/*
 * Trace writer and converter: the inverse of trace_read.c for both forms of
 * docs/trace-format.md. The text writer emits the canonical spelling (0x
 * prefixes, a `cpu N` line whenever the core changes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dynpmu/frontend.h"

struct dpmu_trace_writer {
	FILE *f;
	bool own;
	char name[256];
	enum dpmu_trace_format format;
	unsigned core;
	struct {
		uint64_t next_pc;
		uint64_t addr;
	} st[DPMU_MAX_CORES];
};

int dpmu_trace_writer_open_stream(FILE *f, const char *name, enum dpmu_trace_format format,
				  struct dpmu_trace_writer **out, struct dpmu_err *err)
{
	*out = NULL;
	name = name ? name : "(trace)";
	if (!f)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: no stream", name);
	if (format != DPMU_TRACE_TEXT && format != DPMU_TRACE_BINARY)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: write format must be text or binary",
				    name);
	struct dpmu_trace_writer *w = calloc(1, sizeof *w);
	if (!w)
		return dpmu_err_set(err, DPMU_ENOMEM, "%s: out of memory", name);
	w->f = f;
	w->format = format;
	snprintf(w->name, sizeof w->name, "%s", name);
	if (format == DPMU_TRACE_BINARY)
		fwrite(DPMU_TRACE_MAGIC, 1, DPMU_TRACE_MAGIC_LEN, f);
	else
		fputs("# dynpmu trace (docs/trace-format.md)\n", f);
	*out = w;
	return 0;
}

int dpmu_trace_writer_open(const char *path, enum dpmu_trace_format format,
			   struct dpmu_trace_writer **out, struct dpmu_err *err)
{
	*out = NULL;
	if (!path || !*path)
		return dpmu_err_set(err, DPMU_EINVAL, "no output file given");
	FILE *f = fopen(path, format == DPMU_TRACE_BINARY ? "wb" : "w");
	if (!f)
		return dpmu_err_set(err, DPMU_EIO, "%s: cannot create: %s", path, strerror(errno));
	int rc = dpmu_trace_writer_open_stream(f, path, format, out, err);
	if (rc) {
		fclose(f);
		return rc;
	}
	(*out)->own = true;
	return 0;
}

static size_t put_varint(unsigned char *p, uint64_t v)
{
	size_t k = 0;
	while (v >= 0x80) {
		p[k++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[k++] = (unsigned char)v;
	return k;
}

static uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (0 - (d >> 63));
}

static void write_binary(struct dpmu_trace_writer *w, const struct dpmu_insn *in)
{
	unsigned char rec[32];
	size_t k = 1;
	unsigned tag = in->kind & 3;
	if (in->kind == DPMU_INSN_BRANCH)
		tag |= (unsigned)(in->taken & 1) << 2 | (unsigned)(in->br_kind & 7) << 3;
	if (in->pc == w->st[w->core].next_pc)
		tag |= DPMU_TRACE_TAG_SEQ;
	else
		k += put_varint(rec + k, zigzag(in->pc - w->st[w->core].next_pc));
	if (in->kind == DPMU_INSN_LOAD || in->kind == DPMU_INSN_STORE) {
		k += put_varint(rec + k, zigzag(in->addr - w->st[w->core].addr));
		k += put_varint(rec + k, in->size);
		w->st[w->core].addr = in->addr;
	} else if (in->kind == DPMU_INSN_BRANCH) {
		k += put_varint(rec + k, zigzag(in->addr - in->pc));
	}
	rec[0] = (unsigned char)tag;
	w->st[w->core].next_pc = in->pc + 4;
	fwrite(rec, 1, k, w->f);
}

static void write_text(struct dpmu_trace_writer *w, const struct dpmu_insn *in)
{
	unsigned long long pc = in->pc, a = in->addr;
	switch (in->kind) {
	case DPMU_INSN_LOAD:
	case DPMU_INSN_STORE:
		fprintf(w->f, "%c 0x%llx 0x%llx 0x%x\n", in->kind == DPMU_INSN_LOAD ? 'l' : 's', pc,
			a, in->size);
		break;
	case DPMU_INSN_BRANCH:
		fprintf(w->f, "b 0x%llx 0x%llx %c %s\n", pc, a, in->taken ? 'T' : 'N',
			dpmu_trace_br_kinds[in->br_kind]);
		break;
	default:
		fprintf(w->f, "i 0x%llx\n", pc);
		break;
	}
}

int dpmu_trace_write(struct dpmu_trace_writer *w, unsigned core, const struct dpmu_insn *insns,
		     size_t n, struct dpmu_err *err)
{
	if (core > DPMU_TRACE_CORE_MAX)
		return dpmu_err_set(err, DPMU_ERANGE, "%s: core %u out of range 0-%d", w->name, core,
				    DPMU_TRACE_CORE_MAX);
	for (size_t i = 0; i < n; i++) {
		const char *bad = dpmu_trace_check_insn(&insns[i]);
		if (bad)
			return dpmu_err_set(err, DPMU_EINVAL,
					    "%s: instruction at PC 0x%llx: %s", w->name,
					    (unsigned long long)insns[i].pc, bad);
	}
	if (n > 0 && core != w->core) {
		w->core = core;
		if (w->format == DPMU_TRACE_BINARY) {
			unsigned char rec[16];
			rec[0] = DPMU_TRACE_TAG_CPU;
			size_t k = 1 + put_varint(rec + 1, core);
			fwrite(rec, 1, k, w->f);
		} else {
			fprintf(w->f, "cpu %u\n", core);
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (w->format == DPMU_TRACE_BINARY)
			write_binary(w, &insns[i]);
		else
			write_text(w, &insns[i]);
	}
	if (ferror(w->f))
		return dpmu_err_set(err, DPMU_EIO, "%s: write error: %s", w->name,
				    strerror(errno ? errno : EIO));
	return 0;
}

int dpmu_trace_writer_close(struct dpmu_trace_writer *w, struct dpmu_err *err)
{
	if (!w)
		return 0;
	int rc = 0;
	if (fflush(w->f) != 0 || ferror(w->f))
		rc = dpmu_err_set(err, DPMU_EIO, "%s: write error: %s", w->name,
				  strerror(errno ? errno : EIO));
	if (w->own && fclose(w->f) != 0 && rc == 0)
		rc = dpmu_err_set(err, DPMU_EIO, "%s: write error: %s", w->name, strerror(errno));
	free(w);
	return rc;
}

int dpmu_trace_convert(const char *in_path, const char *out_path, enum dpmu_trace_format to,
		       struct dpmu_err *err)
{
	struct dpmu_trace_reader *r;
	struct dpmu_trace_writer *w;
	int rc = dpmu_trace_open(in_path, DPMU_TRACE_AUTO, &r, err);
	if (rc)
		return rc;
	rc = dpmu_trace_writer_open(out_path, to, &w, err);
	if (rc) {
		dpmu_trace_close(r);
		return rc;
	}
	for (;;) {
		unsigned core;
		const struct dpmu_insn *insns;
		long n = dpmu_trace_next(r, &core, &insns, err);
		if (n < 0) {
			rc = (int)n;
			break;
		}
		if (n == 0)
			break;
		rc = dpmu_trace_write(w, core, insns, (size_t)n, err);
		if (rc)
			break;
	}
	struct dpmu_err cerr;
	int crc = dpmu_trace_writer_close(w, &cerr);
	if (!rc && crc) {
		rc = crc;
		if (err)
			*err = cerr;
	}
	dpmu_trace_close(r);
	return rc;
}
