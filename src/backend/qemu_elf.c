/*
 * What dynpmu checks before it starts qemu-aarch64 on a program, so that
 * bad input gets a message that says what to do instead of qemu's (or the
 * guest loader's) terse one: the file exists, is an ELF file, is for
 * aarch64, and a dynamic program finds its loader and libraries in the
 * sysroot (qemu -L).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/qemu_internal.h"
#include "dynpmu/qemu.h"

/* e_machine values a user is likely to hand us by mistake, with the
 * compiler that builds for the simulated cluster instead. */
static const struct {
	unsigned machine;
	const char *what;
} machines[] = {
	{EM_X86_64, "an x86-64"},
	{EM_386, "an x86 (32-bit)"},
	{EM_ARM, "a 32-bit Arm (AArch32)"},
	{EM_RISCV, "a RISC-V"},
	{EM_PPC64, "a POWER"},
	{EM_S390, "an s390x"},
	{EM_MIPS, "a MIPS"},
};

int dpmu_qemu_find_in_path(const char *name, char *out, size_t cap)
{
	if (!name || !out || cap == 0)
		return -1;
	char def[256];
	const char *path = getenv("PATH");
	if (!path) {
		size_t n = confstr(_CS_PATH, def, sizeof def);
		path = n > 0 && n <= sizeof def ? def : "/bin:/usr/bin";
	}
	for (;;) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);
		int n = snprintf(out, cap, "%.*s/%s", (int)(len ? len : 1), len ? path : ".", name);
		struct stat st;
		if (n > 0 && (size_t)n < cap && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(out, X_OK) == 0)
			return 0;
		if (!colon)
			return -1;
		path = colon + 1;
	}
}

/* The directories the aarch64 glibc loader searches, under the sysroot. */
static const char *const libdirs[] = {
	"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib", "/usr/lib", "/lib64",
	"/usr/lib64",
};

static bool lib_present(const char *sysroot, const char *lib)
{
	char p[4096];
	for (size_t i = 0; i < sizeof libdirs / sizeof libdirs[0]; i++) {
		snprintf(p, sizeof p, "%s%s/%s", sysroot, libdirs[i], lib);
		if (access(p, F_OK) == 0)
			return true;
	}
	return false;
}

static int check_dynamic(Elf *e, const char *prog, const char *interp, const char *sysroot,
			 struct dpmu_err *err)
{
	/* the libraries the program names (DT_NEEDED) */
	char needed[1024] = "";
	char missing[1024] = "";
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			const char *lib = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (!lib)
				continue;
			size_t u = strlen(needed);
			snprintf(needed + u, sizeof needed - u, "%s%s", u ? ", " : "", lib);
			if (sysroot && !lib_present(sysroot, lib)) {
				u = strlen(missing);
				snprintf(missing + u, sizeof missing - u, "%s%s", u ? ", " : "", lib);
			}
		}
	}
	if (!sysroot)
		return dpmu_err_set(err, DPMU_ENOENT,
				    "%s is a dynamically linked aarch64 program: it needs its loader %s "
				    "and %s; give their root with --sysroot DIR (for example "
				    "/usr/aarch64-linux-gnu from the Debian package "
				    "libc6-dev-arm64-cross), or link it with -static",
				    prog, interp, needed[0] ? needed : "its libraries");
	char p[4096];
	snprintf(p, sizeof p, "%s%s", sysroot, interp);
	if (access(p, F_OK) != 0) {
		/* Debian's cross sysroot keeps the loader in lib/, not /lib */
		const char *base = strrchr(interp, '/');
		if (!base || !lib_present(sysroot, base + 1))
			return dpmu_err_set(err, DPMU_ENOENT,
					    "%s needs its loader %s (PT_INTERP), which is not under "
					    "the sysroot %s",
					    prog, interp, sysroot);
	}
	if (missing[0])
		return dpmu_err_set(err, DPMU_ENOENT,
				    "%s needs %s (DT_NEEDED), not found under the sysroot %s", prog,
				    missing, sysroot);
	return 0;
}

/* The program headers and every segment's file bytes lie within the file,
 * and something is loadable: a truncated or damaged program is named here,
 * not run into a crash of qemu's loader that would read as the program's
 * own SIGSEGV. The one pass over the headers also finds the PT_INTERP
 * header, if any (*interp, left as it is without one). */
static int check_segments(Elf *e, const GElf_Ehdr *eh, const char *prog, off_t size,
			  GElf_Phdr *interp, struct dpmu_err *err)
{
	size_t nph = 0;
	if (elf_getphdrnum(e, &nph) != 0)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: a damaged ELF file: its program headers "
				    "cannot be read (%s)", prog, elf_errmsg(-1));
	/* From the ELF header, not nph: libelf counts none of a table that
	 * lies past the file's end. PN_XNUM: the count is in section 0. */
	uint64_t count = eh->e_phnum == PN_XNUM ? nph : eh->e_phnum;
	uint64_t ph_end = eh->e_phoff + count * eh->e_phentsize;
	if (eh->e_phoff > (uint64_t)size || ph_end > (uint64_t)size)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "%s: a damaged ELF file: its program headers end at byte %llu, "
				    "past the end of its %lld bytes (truncated?)",
				    prog, (unsigned long long)ph_end, (long long)size);
	bool load = false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph))
			return dpmu_err_set(err, DPMU_EINVAL,
					    "%s: a damaged ELF file: program header %zu cannot be "
					    "read (%s)",
					    prog, i, elf_errmsg(-1));
		load |= ph.p_type == PT_LOAD;
		if (ph.p_type == PT_INTERP && interp->p_type != PT_INTERP)
			*interp = ph;
		if (ph.p_filesz && (ph.p_offset > (uint64_t)size ||
				    ph.p_filesz > (uint64_t)size - ph.p_offset))
			return dpmu_err_set(err, DPMU_EINVAL,
					    "%s: a damaged ELF file: segment %zu ends at byte %llu, "
					    "past the end of its %lld bytes (truncated?)",
					    prog, i,
					    (unsigned long long)(ph.p_offset + ph.p_filesz),
					    (long long)size);
	}
	if (!load)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "%s: an ELF file with no loadable segment (PT_LOAD): nothing to run",
				    prog);
	return 0;
}

int dpmu_qemu_check_program(const char *program, const char *sysroot, char *resolved,
			    size_t cap, struct dpmu_err *err)
{
	if (!program || !*program)
		return dpmu_err_set(err, DPMU_EINVAL, "no program given after --");
	if (!resolved || cap == 0)
		return dpmu_err_set(err, DPMU_EINVAL, "no room for the program's resolved path");
	if (strchr(program, '/')) {
		snprintf(resolved, cap, "%s", program);
	} else if (dpmu_qemu_find_in_path(program, resolved, cap) != 0) {
		return dpmu_err_set(err, DPMU_ENOENT, "%s: no such executable in PATH", program);
	}
	struct stat st;
	if (stat(resolved, &st) != 0)
		return dpmu_err_set(err, DPMU_ENOENT, "%s: %s", resolved, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return dpmu_err_set(err, DPMU_EINVAL, "%s is a directory, not a program", resolved);
	if (sysroot && access(sysroot, F_OK) != 0)
		return dpmu_err_set(err, DPMU_ENOENT, "sysroot %s: %s", sysroot, strerror(errno));
	int fd = open(resolved, O_RDONLY);
	if (fd < 0)
		return dpmu_err_set(err, DPMU_EIO, "%s: %s", resolved, strerror(errno));
	unsigned char ident[EI_NIDENT] = {0};
	ssize_t got = read(fd, ident, sizeof ident);
	if (got < SELFMAG || memcmp(ident, ELFMAG, SELFMAG) != 0) {
		close(fd);
		const char *hint = got >= 2 && ident[0] == '#' && ident[1] == '!'
					   ? " (it is a script: run its interpreter's aarch64 build on it)"
					   : "";
		return dpmu_err_set(err, DPMU_EINVAL,
				    "%s is not an ELF file%s; the simulated cluster runs aarch64 "
				    "Linux programs",
				    resolved, hint);
	}
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	if (!e || !gelf_getehdr(e, &eh)) {
		if (e)
			elf_end(e);
		close(fd);
		return dpmu_err_set(err, DPMU_EINVAL, "%s: a damaged ELF file (%s)", resolved,
				    elf_errmsg(-1));
	}
	int rc = 0;
	if (eh.e_machine != EM_AARCH64 || ident[EI_CLASS] != ELFCLASS64) {
		const char *what = "a non-aarch64";
		for (size_t i = 0; i < sizeof machines / sizeof machines[0]; i++)
			if (machines[i].machine == eh.e_machine)
				what = machines[i].what;
		rc = dpmu_err_set(err, DPMU_EINVAL,
				  "%s is %s program; the simulated cluster runs aarch64 programs: "
				  "build it with aarch64-linux-gnu-gcc",
				  resolved, what);
	} else if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		rc = dpmu_err_set(err, DPMU_EINVAL,
				  "%s is an ELF object or core file, not a program (link it first)",
				  resolved);
	} else {
		GElf_Phdr ip = {.p_type = PT_NULL};
		rc = check_segments(e, &eh, resolved, st.st_size, &ip, err);
		if (!rc && ip.p_type == PT_INTERP) {
			char interp[512] = "";
			size_t len = ip.p_filesz < sizeof interp ? ip.p_filesz : sizeof interp - 1;
			if (pread(fd, interp, len, (off_t)ip.p_offset) != (ssize_t)len) {
				rc = dpmu_err_set(err, DPMU_EIO, "%s: cannot read its PT_INTERP",
						  resolved);
			} else {
				interp[len] = '\0';
				rc = check_dynamic(e, resolved, interp, sysroot, err);
			}
		}
	}
	elf_end(e);
	close(fd);
	return rc;
}
