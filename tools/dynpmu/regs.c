/*
 * dynpmu regs: a register console on the model, for people debugging a
 * driver sequence and for end-to-end conformance scripts (docs/regs.md).
 * One command per line; `#` starts a comment. Values, traps and errors are
 * printed to stdout in line order, so a script's output is a transcript.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

#define MAX_TOKENS 8

/* What the last command printed, for `expect`. */
enum last_kind { LAST_NONE, LAST_VALUE, LAST_TRAP, LAST_UNDEF, LAST_ERROR };

struct console {
	struct dpmu_model *m;
	const struct dpmu_profile *p;
	unsigned line;
	enum last_kind last;
	uint64_t last_value;
	unsigned last_el;
	char last_text[32];
	int bad_lines;
	int failed_expects;
	unsigned first_bad, first_failed; /* their first lines */
};

/* A target named on a line: cpuN or clusterN. */
struct target {
	bool cluster;
	unsigned index;
};

static int bad(struct console *c, const char *fmt, ...) DPMU_PRINTF(2, 3);
static int bad(struct console *c, const char *fmt, ...)
{
	va_list ap;
	printf("line %u: ", c->line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!c->bad_lines++)
		c->first_bad = c->line;
	return -1;
}

static void set_last(struct console *c, enum last_kind k, uint64_t v, unsigned el, const char *text)
{
	c->last = k;
	c->last_value = v;
	c->last_el = el;
	snprintf(c->last_text, sizeof c->last_text, "%s", text);
	printf("%s\n", text);
}

static int parse_u64(struct console *c, const char *s, const char *what, uint64_t *out)
{
	char *end;
	if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return bad(c, "bad number '%s' for %s (decimal or 0x-hex)", s, what);
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	/* strtoull base 0 takes a leading 0 as octal; decimal is what people mean. */
	if (s[0] == '0' && s[1] && s[1] != 'x' && s[1] != 'X') {
		errno = 0;
		v = strtoull(s, &end, 10);
	}
	if (*end || errno == ERANGE)
		return bad(c, "bad number '%s' for %s (decimal or 0x-hex, at most 64 bits)", s, what);
	*out = v;
	return 0;
}

/* The N of cpuN, clusterN, etmN: 1 to 4 decimal digits. */
static bool parse_index(const char *digits, unsigned *out)
{
	if (!digits || !*digits || strspn(digits, "0123456789") != strlen(digits) ||
	    strlen(digits) > 4)
		return false;
	*out = (unsigned)atoi(digits);
	return true;
}

static int parse_target(struct console *c, const char *s, bool cluster_ok, struct target *t)
{
	const char *digits = NULL;
	if (strncmp(s, "cpu", 3) == 0) {
		t->cluster = false;
		digits = s + 3;
	} else if (strncmp(s, "cluster", 7) == 0) {
		t->cluster = true;
		digits = s + 7;
	}
	if (!parse_index(digits, &t->index)) {
		if (cluster_ok)
			return bad(c, "bad target '%s' (cpuN or clusterN)", s);
		return bad(c, "bad cpu '%s' (cpuN)", s);
	}
	if (t->cluster && !cluster_ok)
		return bad(c, "'%s' is a cluster; this command takes a cpu (cpuN)", s);
	unsigned ncores = dpmu_model_ncores(c->m), ncl = dpmu_model_nclusters(c->m);
	if (!t->cluster && t->index >= ncores)
		return bad(c, "no such cpu '%s' (the profile has cpu0-cpu%u)", s, ncores - 1);
	if (t->cluster && t->index >= ncl) {
		if (ncl == 1)
			return bad(c, "no such cluster '%s' (the profile has only cluster0)", s);
		return bad(c, "no such cluster '%s' (the profile has cluster0-cluster%u)", s, ncl - 1);
	}
	return 0;
}

static int parse_cpu(struct console *c, const char *s, unsigned *cpu)
{
	struct target t;
	if (parse_target(c, s, false, &t))
		return -1;
	*cpu = t.index;
	return 0;
}

static int parse_reg(struct console *c, const char *s, uint32_t *enc)
{
	struct dpmu_err err;
	dpmu_err_clear(&err);
	if (dpmu_sysreg_parse(s, enc, &err) != 0)
		return bad(c, "unknown register: %s", dpmu_errmsg(&err));
	return 0;
}

static void print_access(struct console *c, struct dpmu_access a, const uint64_t *value)
{
	char text[32];
	if (a.kind == DPMU_ACCESS_TRAP) {
		snprintf(text, sizeof text, "trap EL%u", a.el);
		set_last(c, LAST_TRAP, 0, a.el, text);
	} else if (a.kind != DPMU_ACCESS_OK) {
		set_last(c, LAST_UNDEF, 0, 0, "undef");
	} else if (value) {
		snprintf(text, sizeof text, "0x%016" PRIx64, *value);
		set_last(c, LAST_VALUE, *value, 0, text);
	}
}

static int want_args(struct console *c, int n, int lo, int hi, const char *usage)
{
	if (n < lo || n > hi)
		return bad(c, "wrong argument count: usage: %s", usage);
	return 0;
}

/* ---- commands ------------------------------------------------------------ */

static int cmd_sysread(struct console *c, int n, char **tok)
{
	unsigned cpu;
	uint32_t enc;
	if (want_args(c, n, 3, 3, "sysread CPU REG") || parse_cpu(c, tok[1], &cpu) ||
	    parse_reg(c, tok[2], &enc))
		return -1;
	uint64_t v = 0;
	print_access(c, dpmu_model_sysreg_read(c->m, cpu, enc, &v), &v);
	return 0;
}

static int cmd_syswrite(struct console *c, int n, char **tok)
{
	unsigned cpu;
	uint32_t enc;
	uint64_t v;
	if (want_args(c, n, 4, 4, "syswrite CPU REG VALUE") || parse_cpu(c, tok[1], &cpu) ||
	    parse_reg(c, tok[2], &enc) || parse_u64(c, tok[3], "VALUE", &v))
		return -1;
	struct dpmu_access a = dpmu_model_sysreg_write(c->m, cpu, enc, v);
	if (a.kind == DPMU_ACCESS_OK)
		c->last = LAST_NONE; /* prints nothing: nothing to expect */
	else
		print_access(c, a, NULL);
	return 0;
}

static int parse_ext(struct console *c, int n, char **tok, int nfixed, struct dpmu_frame *f,
		     uint32_t *offset, bool *secure)
{
	struct target t;
	uint64_t off;
	bool etm = strncmp(tok[1], "etm", 3) == 0;
	if (etm) {
		/* etmN: core N's trace unit frame. */
		t.cluster = false;
		if (!parse_index(tok[1] + 3, &t.index))
			return bad(c, "bad frame '%s' (cpuN, clusterN or etmN)", tok[1]);
		unsigned ncores = dpmu_model_ncores(c->m);
		if (t.index >= ncores)
			return bad(c, "no such trace unit '%s' (the profile has etm0-etm%u)", tok[1],
				   ncores - 1);
	} else if (parse_target(c, tok[1], true, &t)) {
		return -1;
	}
	if (parse_u64(c, tok[2], "OFFSET", &off))
		return -1;
	if (off >= 0x1000 || (off & 3))
		return bad(c, "offset '%s': external accesses are 32-bit and 4-byte aligned, below 0x1000",
			   tok[2]);
	*secure = false;
	if (n == nfixed + 1) {
		if (strcmp(tok[nfixed], "secure") != 0)
			return bad(c, "unexpected '%s' (only 'secure' may follow)", tok[nfixed]);
		*secure = true;
	}
	*f = (struct dpmu_frame){ etm ? DPMU_FRAME_ETM
				      : t.cluster ? DPMU_FRAME_CLUSTER : DPMU_FRAME_CORE, t.index };
	*offset = (uint32_t)off;
	return 0;
}

static int cmd_extread(struct console *c, int n, char **tok)
{
	struct dpmu_frame f;
	uint32_t off = 0, v = 0;
	bool secure;
	if (want_args(c, n, 3, 4, "extread FRAME OFFSET [secure]") ||
	    parse_ext(c, n, tok, 3, &f, &off, &secure))
		return -1;
	if (dpmu_model_ext_read(c->m, f, off, secure, &v) != 0) {
		set_last(c, LAST_ERROR, 0, 0, "error");
	} else {
		char text[16];
		snprintf(text, sizeof text, "0x%08" PRIx32, v);
		set_last(c, LAST_VALUE, v, 0, text);
	}
	return 0;
}

static int cmd_extwrite(struct console *c, int n, char **tok)
{
	struct dpmu_frame f;
	uint32_t off = 0;
	uint64_t v;
	bool secure;
	if (want_args(c, n, 4, 5, "extwrite FRAME OFFSET VALUE [secure]") ||
	    parse_ext(c, n, tok, 4, &f, &off, &secure) || parse_u64(c, tok[3], "VALUE", &v))
		return -1;
	if (v > 0xffffffffu)
		return bad(c, "value '%s' does not fit the 32-bit external access", tok[3]);
	if (dpmu_model_ext_write(c->m, f, off, secure, (uint32_t)v) != 0)
		set_last(c, LAST_ERROR, 0, 0, "error");
	else
		c->last = LAST_NONE;
	return 0;
}

/* The catalog describing a target's events: the core type's, or the
 * cluster's DSU catalog. */
static const struct dpmu_event_catalog *target_catalog(struct console *c, struct target t,
						       const char **name)
{
	struct dpmu_err err;
	if (t.cluster) {
		*name = c->p->clusters[t.index].catalog;
	} else {
		unsigned cl, idx;
		*name = dpmu_profile_core(c->p, t.index, &cl, &idx)->catalog;
	}
	return dpmu_catalog_get(*name, &err);
}

static int parse_event(struct console *c, struct target t, const char *s, uint16_t *code)
{
	if (isdigit((unsigned char)s[0])) {
		uint64_t v;
		if (parse_u64(c, s, "EVENT", &v))
			return -1;
		if (v > 0xffff)
			return bad(c, "event number '%s' is more than 16 bits", s);
		*code = (uint16_t)v;
		return 0;
	}
	const char *catname;
	const struct dpmu_event_catalog *cat = target_catalog(c, t, &catname);
	const struct dpmu_event_desc *e = cat ? dpmu_catalog_find_name(cat, s) : NULL;
	if (e) {
		*code = e->code;
		return 0;
	}
	const char *best = NULL;
	unsigned best_d = 1000;
	for (size_t i = 0; cat && i < cat->count; i++) {
		unsigned d = dpmu_name_distance(s, cat->events[i].name);
		if (d < best_d) {
			best_d = d;
			best = cat->events[i].name;
		}
	}
	size_t len = strlen(s);
	if (best && best_d <= (len > 9 ? len / 3 : 3))
		return bad(c, "unknown event '%s' for %s%u (%s catalog); did you mean %s?", s,
			   t.cluster ? "cluster" : "cpu", t.index, catname, best);
	return bad(c, "unknown event '%s' for %s%u (%s catalog; 'dynpmu list' shows them, or give a number)",
		   s, t.cluster ? "cluster" : "cpu", t.index, catname);
}

static int cmd_event(struct console *c, int n, char **tok)
{
	struct target t;
	uint16_t code = 0;
	uint64_t count;
	if (want_args(c, n, 4, 4, "event CPU|clusterN EVENT COUNT") ||
	    parse_target(c, tok[1], true, &t) || parse_event(c, t, tok[2], &code) ||
	    parse_u64(c, tok[3], "COUNT", &count))
		return -1;
	if (t.cluster)
		dpmu_model_cluster_event(c->m, t.index, code, count);
	else
		dpmu_model_core_event(c->m, t.index, code, count);
	return 0;
}

static int cmd_cycles(struct console *c, int n, char **tok)
{
	struct target t;
	uint64_t k = 0;
	if (want_args(c, n, 3, 3, "cycles CPU|clusterN COUNT") ||
	    parse_target(c, tok[1], true, &t) || parse_u64(c, tok[2], "COUNT", &k))
		return -1;
	if (t.cluster)
		dpmu_model_cluster_cycles(c->m, t.index, k);
	else
		dpmu_model_core_cycles(c->m, t.index, k);
	return 0;
}

static int model_result(struct console *c, int rc, struct dpmu_err *err)
{
	return rc ? bad(c, "%s", dpmu_errmsg(err)) : 0;
}

static int cmd_el(struct console *c, int n, char **tok)
{
	unsigned cpu;
	uint64_t el;
	struct dpmu_err err;
	if (want_args(c, n, 3, 4, "el CPU 0|1|2|3 [secure|nonsecure]") ||
	    parse_cpu(c, tok[1], &cpu) || parse_u64(c, tok[2], "EL", &el))
		return -1;
	if (el > 3)
		return bad(c, "EL%" PRIu64 " does not exist (0 to 3)", el);
	/* EL3 is always Secure; otherwise Non-secure unless said. */
	enum dpmu_security sec = el == 3 ? DPMU_SECURE : DPMU_NONSECURE;
	if (n == 4) {
		if (strcmp(tok[3], "secure") == 0)
			sec = DPMU_SECURE;
		else if (strcmp(tok[3], "nonsecure") == 0)
			sec = DPMU_NONSECURE;
		else
			return bad(c, "bad security state '%s' (secure or nonsecure)", tok[3]);
	}
	return model_result(c, dpmu_model_set_el(c->m, cpu, (unsigned)el, sec, &err), &err);
}

static int parse_choice(struct console *c, const char *s, const char *yes, const char *no, bool *out)
{
	if (strcmp(s, yes) == 0)
		*out = true;
	else if (strcmp(s, no) == 0)
		*out = false;
	else
		return bad(c, "bad argument '%s' (%s or %s)", s, strcmp(yes, "1") == 0 ? no : yes,
			   strcmp(yes, "1") == 0 ? yes : no);
	return 0;
}

static int cmd_power(struct console *c, int n, char **tok)
{
	unsigned cpu;
	bool on = false;
	struct dpmu_err err;
	if (want_args(c, n, 3, 3, "power CPU on|off") || parse_cpu(c, tok[1], &cpu) ||
	    parse_choice(c, tok[2], "on", "off", &on))
		return -1;
	return model_result(c, dpmu_model_set_power(c->m, cpu, on, &err), &err);
}

static int cmd_wfi(struct console *c, int n, char **tok)
{
	unsigned cpu;
	bool on = false;
	struct dpmu_err err;
	if (want_args(c, n, 3, 3, "wfi CPU on|off") || parse_cpu(c, tok[1], &cpu) ||
	    parse_choice(c, tok[2], "on", "off", &on))
		return -1;
	return model_result(c, dpmu_model_set_wfi(c->m, cpu, on, &err), &err);
}

/* oslock, doublelock, extauth: a core's debug state or the cluster frame's. */
static int cmd_debugstate(struct console *c, int n, char **tok)
{
	struct target t;
	bool v;
	struct dpmu_err err;
	bool auth = strcmp(tok[0], "extauth") == 0;
	char usage[64];
	snprintf(usage, sizeof usage, "%s CPU|clusterN %s", tok[0], auth ? "allow|deny" : "0|1");
	if (want_args(c, n, 3, 3, usage) || parse_target(c, tok[1], true, &t) ||
	    parse_choice(c, tok[2], auth ? "allow" : "1", auth ? "deny" : "0", &v))
		return -1;
	int rc;
	if (auth)
		rc = t.cluster ? dpmu_model_cluster_set_extauth(c->m, t.index, v, &err)
			       : dpmu_model_set_extauth(c->m, t.index, v, &err);
	else if (strcmp(tok[0], "oslock") == 0)
		rc = t.cluster ? dpmu_model_cluster_set_oslock(c->m, t.index, v, &err)
			       : dpmu_model_set_oslock(c->m, t.index, v, &err);
	else
		rc = t.cluster ? dpmu_model_cluster_set_doublelock(c->m, t.index, v, &err)
			       : dpmu_model_set_doublelock(c->m, t.index, v, &err);
	return model_result(c, rc, &err);
}

static int cmd_edprsr(struct console *c, int n, char **tok)
{
	struct target t;
	if (want_args(c, n, 2, 2, "edprsr CPU|clusterN") || parse_target(c, tok[1], true, &t))
		return -1;
	struct dpmu_frame f = { t.cluster ? DPMU_FRAME_CLUSTER : DPMU_FRAME_CORE, t.index };
	uint32_t v = dpmu_model_edprsr_read(c->m, f);
	char text[16];
	snprintf(text, sizeof text, "0x%08" PRIx32, v);
	set_last(c, LAST_VALUE, v, 0, text);
	return 0;
}

static int cmd_irq(struct console *c, int n, char **tok)
{
	struct target t;
	if (want_args(c, n, 2, 2, "irq CPU|clusterN") || parse_target(c, tok[1], true, &t))
		return -1;
	bool v = t.cluster ? dpmu_model_cluster_irq(c->m, t.index) : dpmu_model_core_irq(c->m, t.index);
	set_last(c, LAST_VALUE, v, 0, v ? "1" : "0");
	return 0;
}

static int cmd_expect(struct console *c, int n, char **tok)
{
	const char *usage = "expect VALUE [mask MASK] | expect trap ELn | expect undef | expect error";
	if (n < 2 || n > 4)
		return bad(c, "wrong argument count: usage: %s", usage);
	enum last_kind want;
	uint64_t want_v = 0, mask = UINT64_MAX;
	unsigned want_el = 0;
	char want_text[64];
	if (strcmp(tok[1], "trap") == 0) {
		if (n != 3 || strncmp(tok[2], "EL", 2) != 0 || !tok[2][2] || tok[2][2] < '0' ||
		    tok[2][2] > '3' || tok[2][3])
			return bad(c, "wrong arguments: usage: expect trap EL1|EL2|EL3");
		want = LAST_TRAP;
		want_el = (unsigned)(tok[2][2] - '0');
		snprintf(want_text, sizeof want_text, "trap EL%u", want_el);
	} else if (strcmp(tok[1], "undef") == 0 || strcmp(tok[1], "error") == 0) {
		if (n != 2)
			return bad(c, "wrong argument count: usage: expect %s", tok[1]);
		want = tok[1][0] == 'u' ? LAST_UNDEF : LAST_ERROR;
		snprintf(want_text, sizeof want_text, "%s", tok[1]);
	} else {
		if (n == 3 || (n == 4 && strcmp(tok[2], "mask") != 0))
			return bad(c, "wrong arguments: usage: %s", usage);
		if (parse_u64(c, tok[1], "VALUE", &want_v) ||
		    (n == 4 && parse_u64(c, tok[3], "MASK", &mask)))
			return -1;
		want = LAST_VALUE;
		snprintf(want_text, sizeof want_text, "%s", tok[1]);
	}
	if (c->last == LAST_NONE)
		return bad(c, "expect: the previous command printed nothing to compare");
	bool ok = c->last == want;
	if (ok && want == LAST_VALUE)
		ok = (c->last_value & mask) == want_v;
	if (ok && want == LAST_TRAP)
		ok = c->last_el == want_el;
	if (!ok) {
		if (c->last == LAST_VALUE && mask != UINT64_MAX)
			printf("line %u: expect failed: got %s (masked 0x%" PRIx64 ") want %s\n", c->line,
			       c->last_text, c->last_value & mask, want_text);
		else
			printf("line %u: expect failed: got %s want %s\n", c->line, c->last_text,
			       want_text);
		if (!c->failed_expects++)
			c->first_failed = c->line;
	}
	return 0;
}

static const struct {
	const char *name;
	int (*run)(struct console *c, int n, char **tok);
} console_cmds[] = {
	{ "sysread", cmd_sysread },   { "syswrite", cmd_syswrite },
	{ "extread", cmd_extread },   { "extwrite", cmd_extwrite },
	{ "event", cmd_event },       { "cycles", cmd_cycles },
	{ "el", cmd_el },             { "power", cmd_power },
	{ "oslock", cmd_debugstate }, { "doublelock", cmd_debugstate },
	{ "extauth", cmd_debugstate },{ "wfi", cmd_wfi },
	{ "edprsr", cmd_edprsr },     { "irq", cmd_irq },
	{ "expect", cmd_expect },
};

static void run_line(struct console *c, char *text)
{
	char *hash = strchr(text, '#');
	if (hash)
		*hash = '\0';
	/* Commands are ASCII (a comment may be anything): a binary file, or a
	 * stray control byte, is named, not echoed back */
	for (size_t i = 0; text[i]; i++) {
		unsigned char ch = (unsigned char)text[i];
		if (!isprint(ch) && !isspace(ch)) {
			bad(c, "byte 0x%02x at column %zu is not text", ch, i + 1);
			return;
		}
	}
	char *tok[MAX_TOKENS + 1];
	int n = 0;
	for (char *s = strtok(text, " \t\r\n"); s; s = strtok(NULL, " \t\r\n")) {
		if (n == MAX_TOKENS) {
			bad(c, "too many words (at most %d)", MAX_TOKENS);
			return;
		}
		tok[n++] = s;
	}
	if (n == 0)
		return;
	for (size_t i = 0; i < sizeof console_cmds / sizeof console_cmds[0]; i++)
		if (strcmp(console_cmds[i].name, tok[0]) == 0) {
			console_cmds[i].run(c, n, tok);
			return;
		}
	const char *best = NULL;
	unsigned best_d = 3;
	for (size_t i = 0; i < sizeof console_cmds / sizeof console_cmds[0]; i++) {
		unsigned d = dpmu_name_distance(tok[0], console_cmds[i].name);
		if (d < best_d) {
			best_d = d;
			best = console_cmds[i].name;
		}
	}
	if (best)
		bad(c, "unknown command '%s'; did you mean %s?", tok[0], best);
	else
		bad(c, "unknown command '%s' (see docs/regs.md)", tok[0]);
}

static void regs_usage(FILE *out)
{
	fprintf(out,
		"usage: dynpmu regs [--profile NAME|FILE] [SCRIPT]\n\n"
		"Register console on the model. Reads commands from SCRIPT (or stdin, or '-'),\n"
		"one per line; '#' starts a comment. Numbers are decimal or 0x-hex.\n\n"
		"  sysread CPU REG              syswrite CPU REG VALUE\n"
		"  extread FRAME OFFSET [secure]  extwrite FRAME OFFSET VALUE [secure]\n"
		"  event CPU|clusterN EVENT COUNT  cycles CPU|clusterN COUNT\n"
		"  el CPU 0|1|2|3 [secure|nonsecure]  power CPU on|off  wfi CPU on|off\n"
		"  oslock|doublelock CPU|clusterN 0|1  extauth CPU|clusterN allow|deny\n"
		"  edprsr CPU|clusterN  irq CPU|clusterN\n"
		"  expect VALUE [mask MASK] | expect trap ELn | expect undef | expect error\n\n"
		"CPU is cpuN, FRAME cpuN or clusterN, REG a name (PMCR_EL0) or op0:op1:CRn:CRm:op2.\n"
		"Exit status: 0, 1 when an expect failed, 2 on a bad line or bad arguments.\n"
		"Reference: docs/regs.md\n");
}

int dpmu_cmd_regs(int argc, char **argv)
{
	const char *profile = NULL, *script = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			regs_usage(stdout);
			return DPMU_EXIT_OK;
		} else if (strcmp(argv[i], "--profile") == 0) {
			if (++i == argc) {
				fprintf(stderr, "dynpmu regs: --profile needs a NAME or FILE\n");
				return DPMU_EXIT_USAGE;
			}
			profile = argv[i];
		} else if (strncmp(argv[i], "--profile=", 10) == 0) {
			profile = argv[i] + 10;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "dynpmu regs: unknown option '%s'\n", argv[i]);
			regs_usage(stderr);
			return DPMU_EXIT_USAGE;
		} else if (script) {
			fprintf(stderr, "dynpmu regs: one SCRIPT at most ('%s' and '%s')\n", script,
				argv[i]);
			return DPMU_EXIT_USAGE;
		} else {
			script = argv[i];
		}
	}
	FILE *in = stdin;
	if (script && strcmp(script, "-") != 0) {
		in = fopen(script, "r");
		if (!in) {
			fprintf(stderr, "dynpmu regs: cannot open script '%s': %s\n", script,
				strerror(errno));
			return DPMU_EXIT_USAGE;
		}
	}
	struct dpmu_profile *p;
	struct console c = { 0 };
	int rc = dpmu_tool_open_model("regs", profile, &p, &c.m);
	if (rc) {
		if (in != stdin)
			fclose(in);
		return rc;
	}
	c.p = dpmu_model_profile(c.m);
	char buf[1024];
	while (fgets(buf, sizeof buf, in)) {
		c.line++;
		size_t len = strlen(buf);
		if (len == sizeof buf - 1 && buf[len - 1] != '\n') {
			bad(&c, "line longer than %zu characters", sizeof buf - 2);
			int ch;
			while ((ch = fgetc(in)) != EOF && ch != '\n')
				;
			continue;
		}
		run_line(&c, buf);
		fflush(stdout);
	}
	if (in != stdin)
		fclose(in);
	dpmu_model_destroy(c.m);
	dpmu_profile_free(p);
	/* The transcript is on stdout; why the exit status is not 0, with the
	 * script's name, on stderr */
	const char *name = script && strcmp(script, "-") != 0 ? script : "standard input";
	if (c.bad_lines)
		fprintf(stderr, "dynpmu regs: %s: %d bad line%s, the first at line %u\n", name,
			c.bad_lines, c.bad_lines == 1 ? "" : "s", c.first_bad);
	if (c.failed_expects)
		fprintf(stderr, "dynpmu regs: %s: %d expect%s failed, the first at line %u\n", name,
			c.failed_expects, c.failed_expects == 1 ? "" : "s", c.first_failed);
	if (c.bad_lines)
		return DPMU_EXIT_USAGE;
	return c.failed_expects ? DPMU_EXIT_FAIL : DPMU_EXIT_OK;
}
