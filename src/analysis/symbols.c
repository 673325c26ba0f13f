/*
 * Addresses of a perf.data's samples to functions, objects and source
 * lines (dynpmu report), through elfutils' libdwfl: each file a process
 * mapped is reported at the load bias its MMAP record implies, then an
 * address is looked up in the symbol tables (.symtab, else .dynsym) and
 * the DWARF line table. Answers are kept per address: a report looks the
 * same few thousand addresses up again and again.
 */
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/an_internal.h"
#include "dynpmu/perfdata.h"

struct cached {
	uint64_t ip;
	uint32_t pid;
	bool used;
	struct dpmu_an_loc loc;
};

struct proc {
	uint32_t pid;
	Dwfl *dwfl;
};

struct dpmu_an_syms {
	Dwfl_Callbacks cb;
	struct proc *procs;
	size_t nprocs;
	struct cached *cache;
	size_t cap; /* a power of two */
	size_t used;
	char **names; /* names made here (unknown addresses), freed at the end */
	size_t nnames, capnames;
};

/* Where vaddr 0 of the file lands when file offset pgoff is at start: the
 * loadable segment holding that offset says (address of offset o is
 * start + o - pgoff; vaddr v is at offset v - p_vaddr + p_offset). */
static bool load_bias(const char *path, uint64_t start, uint64_t pgoff, uint64_t *bias, bool *exec)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	bool ok = false;
	size_t n;
	GElf_Ehdr eh;
	if (e && gelf_getehdr(e, &eh) && elf_getphdrnum(e, &n) == 0) {
		*exec = eh.e_type == ET_EXEC;
		for (size_t i = 0; i < n && !ok; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			uint64_t lo = ph.p_offset & ~(uint64_t)0xfff, hi = ph.p_offset + ph.p_filesz;
			if (pgoff < lo || pgoff >= hi)
				continue;
			*bias = start - pgoff + ph.p_offset - ph.p_vaddr;
			ok = true;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return ok;
}

static Dwfl *proc_dwfl(struct dpmu_an_syms *s, const struct dpmu_perf_file *f, uint32_t pid)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return s->procs[i].dwfl;
	struct proc *np = realloc(s->procs, (s->nprocs + 1) * sizeof *np);
	if (!np)
		return NULL;
	s->procs = np;
	Dwfl *d = dwfl_begin(&s->cb);
	s->procs[s->nprocs++] = (struct proc){pid, d};
	if (!d)
		return NULL;
	dwfl_report_begin(d);
	for (size_t i = 0; i < f->nmaps; i++) {
		const struct dpmu_perf_map *m = &f->maps[i];
		if (m->pid != pid || m->path[0] != '/')
			continue;
		bool dup = false;
		for (size_t k = 0; k < i && !dup; k++)
			dup = f->maps[k].pid == pid && strcmp(f->maps[k].path, m->path) == 0;
		uint64_t bias;
		bool exec = false;
		if (dup || !load_bias(m->path, m->start, m->pgoff, &bias, &exec))
			continue;
		const char *base = strrchr(m->path, '/');
		/* add_p_vaddr: base is the bias (where vaddr 0 lands) */
		dwfl_report_elf(d, base ? base + 1 : m->path, m->path, -1, exec ? 0 : bias, true);
	}
	dwfl_report_end(d, NULL, NULL);
	return d;
}

int dpmu_an_syms_create(struct dpmu_an_syms **out, struct dpmu_err *err)
{
	struct dpmu_an_syms *s = calloc(1, sizeof *s);
	if (!s)
		return dpmu_err_set(err, DPMU_ENOMEM, "symbols: out of memory");
	s->cb.find_elf = dwfl_build_id_find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	s->cap = 4096;
	s->cache = calloc(s->cap, sizeof *s->cache);
	if (!s->cache) {
		free(s);
		return dpmu_err_set(err, DPMU_ENOMEM, "symbols: out of memory");
	}
	*out = s;
	return 0;
}

void dpmu_an_syms_destroy(struct dpmu_an_syms *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].dwfl)
			dwfl_end(s->procs[i].dwfl);
	for (size_t i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->names);
	free(s->procs);
	free(s->cache);
	free(s);
}

static const char *keep_name(struct dpmu_an_syms *s, const char *name)
{
	if (s->nnames == s->capnames) {
		size_t c = s->capnames ? s->capnames * 2 : 64;
		char **n = realloc(s->names, c * sizeof *n);
		if (!n)
			return "[unknown]";
		s->names = n;
		s->capnames = c;
	}
	char *d = strdup(name);
	if (!d)
		return "[unknown]";
	s->names[s->nnames++] = d;
	return d;
}

static void resolve(struct dpmu_an_syms *s, const struct dpmu_perf_file *f, uint32_t pid,
		    uint64_t ip, struct dpmu_an_loc *loc)
{
	memset(loc, 0, sizeof *loc);
	loc->sym = "[unknown]";
	loc->dso = "[unknown]";
	Dwfl *d = proc_dwfl(s, f, pid);
	Dwfl_Module *m = d ? dwfl_addrmodule(d, ip) : NULL;
	if (!m)
		return;
	Dwarf_Addr lo;
	const char *mname = dwfl_module_info(m, NULL, &lo, NULL, NULL, NULL, NULL, NULL);
	loc->dso = mname ? mname : "[unknown]";
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(m, ip, &off, &sym, NULL, NULL, NULL);
	if (name) {
		loc->sym = name;
		loc->sym_addr = ip - off;
		loc->sym_size = sym.st_size;
	} else {
		/* as perf names an address with no symbol: its place in the object */
		char buf[40];
		snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)(ip - lo));
		loc->sym = keep_name(s, buf);
	}
	Dwfl_Line *line = dwfl_module_getsrc(m, ip);
	int ln = 0;
	const char *file = line ? dwfl_lineinfo(line, NULL, &ln, NULL, NULL, NULL) : NULL;
	if (file) {
		loc->file = file;
		loc->line = ln;
	}
}

static size_t slot_of(uint32_t pid, uint64_t ip, size_t cap)
{
	uint64_t h = (ip ^ ((uint64_t)pid << 40)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20) & (cap - 1);
}

const struct dpmu_an_loc *dpmu_an_syms_lookup(struct dpmu_an_syms *s,
					      const struct dpmu_perf_file *f, uint32_t pid,
					      uint64_t ip)
{
	if (s->used * 2 >= s->cap) {
		size_t cap = s->cap * 2;
		struct cached *n = calloc(cap, sizeof *n);
		if (n) {
			for (size_t i = 0; i < s->cap; i++) {
				if (!s->cache[i].used)
					continue;
				size_t j = slot_of(s->cache[i].pid, s->cache[i].ip, cap);
				while (n[j].used)
					j = (j + 1) & (cap - 1);
				n[j] = s->cache[i];
			}
			free(s->cache);
			s->cache = n;
			s->cap = cap;
		}
	}
	size_t j = slot_of(pid, ip, s->cap);
	while (s->cache[j].used) {
		if (s->cache[j].ip == ip && s->cache[j].pid == pid)
			return &s->cache[j].loc;
		j = (j + 1) & (s->cap - 1);
	}
	struct cached *c = &s->cache[j];
	c->used = true;
	c->ip = ip;
	c->pid = pid;
	resolve(s, f, pid, ip, &c->loc);
	s->used++;
	return &c->loc;
}

int dpmu_an_syms_code(struct dpmu_an_syms *s, const struct dpmu_perf_file *f, uint32_t pid,
		      uint64_t addr, uint64_t len, uint8_t *out)
{
	Dwfl *d = proc_dwfl(s, f, pid);
	Dwfl_Module *m = d ? dwfl_addrmodule(d, addr) : NULL;
	GElf_Addr bias = 0;
	Elf *e = m ? dwfl_module_getelf(m, &bias) : NULL;
	if (!e)
		return -1;
	uint64_t v = addr - bias;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || v < sh.sh_addr || v + len > sh.sh_addr + sh.sh_size)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || v - sh.sh_addr + len > data->d_size)
			return -1;
		memcpy(out, (const uint8_t *)data->d_buf + (v - sh.sh_addr), len);
		return 0;
	}
	return -1;
}

int dpmu_an_elf_function(const char *path, const char *name, uint64_t *start, uint64_t *size,
			 struct dpmu_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: cannot open", path);
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	int rc = dpmu_err_set(err, DPMU_EINVAL, "%s: no function '%s' in its symbol table", path,
			      name);
	if (!e || !gelf_getehdr(e, &eh)) {
		rc = dpmu_err_set(err, DPMU_EINVAL, "%s: not an ELF file", path);
	} else if (eh.e_type != ET_EXEC) {
		/* a position-independent program's addresses are known only
		 * once it is loaded; the comparators are set before */
		rc = dpmu_err_set(err, DPMU_EINVAL,
				  "%s: position-independent: its functions' run-time addresses are "
				  "not known before it runs; give --range START-END",
				  path);
	} else {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
				continue;
			Elf_Data *d = elf_getdata(scn, NULL);
			size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; d && i < n; i++) {
				GElf_Sym sym;
				const char *s;
				if (!gelf_getsym(d, (int)i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size ||
				    !(s = elf_strptr(e, sh.sh_link, sym.st_name)) || strcmp(s, name))
					continue;
				*start = sym.st_value;
				*size = sym.st_size;
				rc = 0;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}
