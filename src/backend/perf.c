/*
 * The perf backend: events opened with perf_event_open(2) on the PMUs
 * perf_sysfs.c found, behind the monitor's counting interface
 * (include/dynpmu/monitor.h), so that stat's session, intervals and
 * reports are the simulation's. The kernel owns the counters: it
 * schedules and multiplexes them and keeps time_enabled / time_running,
 * which every read returns (PERF_FORMAT_TOTAL_TIME_ENABLED | _RUNNING,
 * reference section 7); the estimate value x enabled / running is the
 * monitor's (dpmu_mon_scaled), as on the simulation.
 *
 * Three ways to count (perf stat's): a program started here (its events
 * per task, inherited by its threads and children, enabled at its exec),
 * -p PID (every thread of a running process) and -a (per cpu, every task).
 * A task's events are opened with cpu = -1 on each core type's PMU, the
 * only way a task is counted wherever it runs on big.LITTLE (reference
 * section 7); so a task's counts are per core type, kept on the type's
 * first cpu, and per-cpu views need -a.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dynpmu/monitor.h"
#include "dynpmu/perf.h"

#define PERF_MAX_THREADS 64
/* Core units 0..DPMU_MAX_CORES-1, then the clusters. */
#define PERF_UNITS (DPMU_MAX_CORES + DPMU_MAX_CLUSTERS)

/* enum dpmu_mon_sw -> the perf ABI's software event numbers. */
static const uint64_t sw_config[DPMU_MON_SW_COUNT] = {
	[DPMU_MON_SW_CPU_CLOCK] = PERF_COUNT_SW_CPU_CLOCK,
	[DPMU_MON_SW_TASK_CLOCK] = PERF_COUNT_SW_TASK_CLOCK,
	[DPMU_MON_SW_PAGE_FAULTS] = PERF_COUNT_SW_PAGE_FAULTS,
	[DPMU_MON_SW_CONTEXT_SWITCHES] = PERF_COUNT_SW_CONTEXT_SWITCHES,
	[DPMU_MON_SW_CPU_MIGRATIONS] = PERF_COUNT_SW_CPU_MIGRATIONS,
	[DPMU_MON_SW_MINOR_FAULTS] = PERF_COUNT_SW_PAGE_FAULTS_MIN,
	[DPMU_MON_SW_MAJOR_FAULTS] = PERF_COUNT_SW_PAGE_FAULTS_MAJ,
	[DPMU_MON_SW_ALIGNMENT_FAULTS] = PERF_COUNT_SW_ALIGNMENT_FAULTS,
	[DPMU_MON_SW_EMULATION_FAULTS] = PERF_COUNT_SW_EMULATION_FAULTS,
};

struct perf_be {
	struct dpmu_backend b;
	struct dpmu_mon_counting counting;
	struct dpmu_perf_system *sys;
	struct dpmu_profile *profile;
	bool system_wide, task;
	pid_t pid;                 /* the task counted: the program or -p */
	pid_t tids[PERF_MAX_THREADS];
	unsigned ntids;            /* threads opened: 1 for a program (inherit) */
	pid_t child;               /* the program, held before its exec; 0 none */
	int go_fd, exec_err_fd;    /* releases it; tells a failed exec */
	int status;
	bool exited;
	uint64_t t0;
	uint64_t t_end;            /* when the run ended (0: not yet) */
	int fd[DPMU_MON_MAX_EVENTS][PERF_UNITS][PERF_MAX_THREADS];
	/* each opened event's target and group, for reads and leaders */
	enum dpmu_mon_target target[DPMU_MON_MAX_EVENTS];
	unsigned group[DPMU_MON_MAX_EVENTS];
	bool grouped[DPMU_MON_MAX_EVENTS];
	bool on_exec[DPMU_MON_MAX_EVENTS];   /* enabled by the program's exec */
	bool any_open;
	char notes[1024];
};

static struct perf_be *be_of(const struct dpmu_backend *b)
{
	return (struct perf_be *)(void *)b;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void note(struct perf_be *p, const char *fmt, ...) DPMU_PRINTF(2, 3);
static void note(struct perf_be *p, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	size_t used = strlen(p->notes);
	/* once per event and PMU, not per unit or thread */
	if (strstr(p->notes, line) || used + strlen(line) + 2 >= sizeof p->notes)
		return;
	snprintf(p->notes + used, sizeof p->notes - used, "%s\n", line);
}

static int paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = 99;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 99;
		fclose(f);
	}
	return v;
}

/* Put v into a format/ field of attr (config, config1 or config2). */
static void set_field(struct perf_event_attr *a, const struct dpmu_perf_field *f, uint64_t v)
{
	unsigned width = f->hi - f->lo + 1;
	uint64_t mask = width >= 64 ? ~UINT64_C(0) : ((UINT64_C(1) << width) - 1);
	__u64 *w = f->word == 1 ? &a->config1 : f->word == 2 ? &a->config2 : &a->config;
	*w = (*w & ~(__u64)(mask << f->lo)) | (__u64)((v & mask) << f->lo);
}

/* What perf_event_open's errno means for this event, as perf explains it. */
static int open_error(struct perf_be *p, int e, const struct dpmu_mon_event *ev, const char *pmu,
		      struct dpmu_err *err)
{
	switch (e) {
	case EACCES:
	case EPERM: {
		int par = paranoid();
		/* not DPMU_ENOTSUP: that is a PMU's <not supported>, and this
		 * must stop the run with its reason */
		bool cpu_wide = p->system_wide || ev->target == DPMU_MON_CLUSTER;
		return dpmu_err_set(err, DPMU_ESTATE,
				    "%s on %s: perf_event_open: %s; kernel.perf_event_paranoid is %d "
				    "(2: user-space counting of your own tasks only; 1: also the "
				    "kernel; 0: also -a and the DSU; -1: everything): %s",
				    ev->name, pmu, strerror(e), par,
				    cpu_wide ? "as root, sysctl -w kernel.perf_event_paranoid=0 (-a "
					       "and DSU events count for every task), or give the user "
					       "CAP_PERFMON"
					     : "as root, sysctl -w kernel.perf_event_paranoid=1, or count "
					       "user space only (:u)");
	}
	case ESRCH:
		return dpmu_err_set(err, DPMU_ENOENT, "-p %d: no such process", (int)p->pid);
	case ENOSYS:
		return dpmu_err_set(err, DPMU_EIO,
				    "%s: perf_event_open is not implemented here (a kernel without "
				    "CONFIG_PERF_EVENTS, or an emulator such as qemu-user)",
				    ev->name);
	case EMFILE:
	case ENFILE:
		return dpmu_err_set(err, DPMU_EBUSY,
				    "%s: perf_event_open: %s (one file per event, cpu and thread: "
				    "raise ulimit -n)",
				    ev->name, strerror(e));
	default:
		return dpmu_err_set(err, DPMU_EINVAL,
				    "%s on %s: the kernel refused the event: perf_event_open: %s",
				    ev->name, pmu, strerror(e));
	}
}

static int be_open(void *ctx, const struct dpmu_mon_event *ev, unsigned i, unsigned unit,
		   uint32_t code, bool long_counter, struct dpmu_err *err)
{
	struct perf_be *p = ctx;
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a.disabled = 1;
	char pmu[DPMU_NAME_MAX + 16];
	int cpu = p->system_wide ? (int)unit : -1;
	bool per_task = !p->system_wide;
	unsigned key = unit;
	if (ev->target == DPMU_MON_SOFTWARE) {
		/* a task's software events count once, on the first unit */
		if (per_task && unit != (unsigned)__builtin_ctzll(p->b.cores))
			return DPMU_ENOTSUP;
		a.type = PERF_TYPE_SOFTWARE;
		a.config = sw_config[code < DPMU_MON_SW_COUNT ? code : 0];
		snprintf(pmu, sizeof pmu, "software");
	} else if (ev->target == DPMU_MON_CORE) {
		int pi = unit < DPMU_MAX_CORES ? p->sys->core_pmu[unit] : -1;
		if (pi < 0) {
			note(p, "%s is not supported: no Arm core PMU for cpu%u in %s/bus/event_source/"
				"devices (it has: %s); Linux software events can be counted "
				"(task-clock, page-faults, context-switches, ...)",
			     ev->name, unit, p->sys->root, p->sys->others);
			return DPMU_ENOTSUP;
		}
		const struct dpmu_perf_pmu *cp = &p->sys->pmus[pi];
		a.type = cp->type;
		set_field(&a, &cp->event, code);
		/* --long: the PMUv3 driver's 64-bit (CHAIN) counter when it
		 * has the `long` format field (config1:0) */
		if (long_counter && cp->long_bit.present)
			set_field(&a, &cp->long_bit, 1);
		snprintf(pmu, sizeof pmu, "%s", cp->name);
	} else if (ev->target == DPMU_MON_CLUSTER) {
		unsigned first = 0, k = 0;
		for (; k < unit && k < p->profile->nclusters; k++)
			first += p->profile->clusters[k].ncores;
		const struct dpmu_perf_pmu *dsu = dpmu_perf_dsu_of(p->sys, first);
		if (!dsu) {
			note(p, "%s is not supported: no arm_dsu PMU for cluster%u (cpu%u) in "
				"%s/bus/event_source/devices (the kernel needs CONFIG_ARM_DSU_PMU "
				"and the DSU in its device tree or ACPI tables)",
			     ev->name, unit, first, p->sys->root);
			return DPMU_ENOTSUP;
		}
		a.type = dsu->type;
		set_field(&a, &dsu->event, code);
		/* the DSU counts for the whole cluster: system-wide only, on
		 * the cpu its cpumask names (Linux arm_dsu_pmu) */
		cpu = dsu->open_cpu;
		per_task = false;
		key = DPMU_MAX_CORES + unit;
		snprintf(pmu, sizeof pmu, "%s", dsu->name);
	} else {
		return dpmu_err_set(err, DPMU_ENOTSUP, "%s: not a perf event", ev->name);
	}
	if (ev->target != DPMU_MON_CLUSTER) {
		a.exclude_user = !(ev->els & DPMU_DRV_EL0);
		a.exclude_kernel = !(ev->els & DPMU_DRV_EL1);
		a.exclude_hv = !(ev->els & DPMU_DRV_EL2);
	}
	/* a program's events follow its threads and children and start at
	 * its exec, as perf stat's do */
	bool program = per_task && p->child;
	a.inherit = program;
	a.enable_on_exec = program;
	p->on_exec[i] = program;
	if (i >= DPMU_MON_MAX_EVENTS)
		return dpmu_err_set(err, DPMU_ERANGE, "perf: event %u out of range", i);
	p->target[i] = ev->target;
	p->group[i] = ev->group;
	p->grouped[i] = ev->grouped;
	unsigned nthreads = per_task ? p->ntids : 1;
	for (unsigned t = 0; t < nthreads; t++) {
		/* the group leader: its first member opened on this unit (the
		 * kernel schedules a group onto counters as a whole) */
		int group_fd = -1;
		for (unsigned j = 0; ev->grouped && j < i && group_fd < 0; j++)
			if (p->grouped[j] && p->group[j] == ev->group && p->fd[j][key][t] >= 0)
				group_fd = p->fd[j][key][t];
		pid_t pid = per_task ? p->tids[t] : -1;
		int fd = (int)syscall(SYS_perf_event_open, &a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
		/* perf's fallback: an event given without modifiers, refused at
		 * perf_event_paranoid >= 2 for counting the kernel, counts user
		 * space only, and a note says so */
		if (fd < 0 && (errno == EACCES || errno == EPERM) && !a.exclude_kernel &&
		    ev->target != DPMU_MON_CLUSTER && !p->system_wide && !strchr(ev->name, ':') &&
		    paranoid() >= 2) {
			a.exclude_kernel = a.exclude_hv = 1;
			fd = (int)syscall(SYS_perf_event_open, &a, pid, cpu, group_fd,
					  PERF_FLAG_FD_CLOEXEC);
			if (fd >= 0)
				note(p, "%s counts user space only: kernel.perf_event_paranoid is %d "
					"(as perf stat falls back)", ev->name, paranoid());
		}
		if (fd < 0) {
			int e = errno;
			if (e == ENOENT || e == EOPNOTSUPP || (e == ENODEV && per_task)) {
				/* the PMU does not count it: <not supported>, as perf */
				if (t == 0)
					note(p, "%s is not supported on %s (perf_event_open: %s)", ev->name,
					     pmu, strerror(e));
				return DPMU_ENOTSUP;
			}
			if (e == ESRCH && p->pid && t > 0)
				continue; /* a thread that ended since the listing */
			return open_error(p, e, ev, pmu, err);
		}
		p->fd[i][key][t] = fd;
		p->any_open = true;
	}
	return 0;
}

static int be_enable(void *ctx, bool on, struct dpmu_err *err)
{
	struct perf_be *p = ctx;
	for (unsigned i = 0; i < DPMU_MON_MAX_EVENTS; i++) {
		/* a program's own events start at its exec (enable_on_exec);
		 * -a's and the DSU's now */
		if (on && p->on_exec[i])
			continue;
		for (unsigned k = 0; k < PERF_UNITS; k++)
			for (unsigned t = 0; t < PERF_MAX_THREADS; t++)
				if (p->fd[i][k][t] >= 0 &&
				    ioctl(p->fd[i][k][t], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE,
					  0) < 0)
					return dpmu_err_set(err, DPMU_EIO, "perf: %s: %s",
							    on ? "enable" : "disable", strerror(errno));
	}
	return 0;
}

static int be_read(void *ctx, unsigned i, unsigned unit, uint64_t *value, uint64_t *enabled,
		   uint64_t *running, struct dpmu_err *err)
{
	struct perf_be *p = ctx;
	*value = *enabled = *running = 0;
	if (i >= DPMU_MON_MAX_EVENTS || unit >= DPMU_MAX_CORES)
		return dpmu_err_set(err, DPMU_ERANGE, "perf: event %u on unit %u out of range", i,
				    unit);
	unsigned key = p->target[i] == DPMU_MON_CLUSTER ? DPMU_MAX_CORES + unit : unit;
	if (key >= PERF_UNITS)
		return dpmu_err_set(err, DPMU_ERANGE, "perf: cluster %u out of range", unit);
	for (unsigned t = 0; t < PERF_MAX_THREADS; t++) {
		int fd = p->fd[i][key][t];
		if (fd < 0)
			continue;
		uint64_t v[3];
		ssize_t n = read(fd, v, sizeof v);
		if (n != (ssize_t)sizeof v)
			return dpmu_err_set(err, DPMU_EIO, "perf: reading event %u: %s", i,
					    n < 0 ? strerror(errno) : "short read");
		/* the threads of -p add up, as perf stat sums them */
		*value += v[0];
		*enabled += v[1];
		*running += v[2];
	}
	return 0;
}

/* ---- running ------------------------------------------------------------------ */

/* Wall-clock time since the backend was made; after the run, its end:
 * the monitor's stop then reads at the time of the run's last tick, so
 * that -I gets no empty interval after the program ended. */
static uint64_t be_time_ns(struct dpmu_backend *b)
{
	const struct perf_be *p = be_of(b);
	return p->t_end ? p->t_end : mono_ns() - p->t0;
}

/* Release the held program to its exec. dynpmu then sleeps until it
 * ends: under QEMU with -icount one vCPU's instruction counter counts
 * every vCPU's instructions (icount is global), so dynpmu running beside
 * the program's start would add to its count (docs/hardware.md). */
static int release_child(struct perf_be *p, struct dpmu_err *err)
{
	char go = 1;
	ssize_t w = write(p->go_fd, &go, 1);
	close(p->go_fd);
	p->go_fd = -1;
	if (w != 1)
		return dpmu_err_set(err, DPMU_EIO, "cannot run %s: %s", p->b.workload,
				    strerror(errno));
	return 0;
}

/* After the program ended: whether its exec failed (the error pipe closed
 * at a successful exec, or carries exec's errno). */
static int exec_result(struct perf_be *p, struct dpmu_err *err)
{
	if (p->exec_err_fd < 0)
		return 0;
	int e = 0;
	ssize_t n = read(p->exec_err_fd, &e, sizeof e);
	close(p->exec_err_fd);
	p->exec_err_fd = -1;
	if (n <= 0)
		return 0;
	return dpmu_err_set(err, DPMU_ENOENT, "cannot run %s: %s", p->b.workload,
			    n == (ssize_t)sizeof e ? strerror(e) : "it did not start");
}

static bool process_gone(pid_t pid)
{
	return kill(pid, 0) < 0 && errno == ESRCH;
}

/* Count until the program ends (or, for -p, the process; for -a alone,
 * SIGINT / SIGTERM), calling tick every period_ns of wall-clock time and
 * once at the end. SIGINT and SIGTERM sent to dynpmu alone pass on to the
 * program, whose counts up to its end are reported, as perf stat does. */
static int be_run_timed(struct dpmu_backend *b, uint64_t interval, uint64_t period_ns,
			dpmu_backend_tick_fn tick, void *ctx, struct dpmu_err *err)
{
	(void)interval;
	struct perf_be *p = be_of(b);
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	int rc = 0;
	if (p->child)
		rc = release_child(p, err);
	uint64_t next = period_ns ? be_time_ns(b) + period_ns : 0;
	bool done = p->exited;
	while (!rc && !done) {
		if (p->child && waitpid(p->child, &p->status, WNOHANG) == p->child) {
			p->exited = done = true;
			break;
		}
		if (!p->child && p->pid && process_gone(p->pid))
			break;
		uint64_t now = be_time_ns(b);
		if (next && now >= next) {
			rc = tick(ctx, now, err);
			while (next <= now)
				next += period_ns;
			continue;
		}
		/* wake for the next tick, a signal, or (-p) a look at the process */
		uint64_t wait = next ? next - now : 100000000u;
		if (!p->child && wait > 100000000u)
			wait = 100000000u;
		struct timespec ts = {(time_t)(wait / 1000000000u), (long)(wait % 1000000000u)};
		siginfo_t si;
		int sig = sigtimedwait(&set, &si, &ts);
		if (sig == SIGINT || sig == SIGTERM) {
			if (!p->child)
				break; /* -p and -a: the end of the measurement */
			/* si_code <= 0: sent by a process, to dynpmu alone */
			if (si.si_code <= 0)
				kill(p->child, sig);
		}
	}
	p->t_end = be_time_ns(b);
	if (!rc && p->exited)
		rc = exec_result(p, err);
	if (!rc)
		rc = tick(ctx, p->t_end, err);
	/* drop what arrived while blocked, then the caller's mask */
	struct timespec zero = {0, 0};
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	while (sigtimedwait(&chld, NULL, &zero) > 0)
		;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static int be_run(struct dpmu_backend *b, uint64_t interval, dpmu_backend_tick_fn tick,
		  void *ctx, struct dpmu_err *err)
{
	return be_run_timed(b, interval, 0, tick, ctx, err);
}

static void be_destroy(struct dpmu_backend *b)
{
	struct perf_be *p = be_of(b);
	for (unsigned i = 0; i < DPMU_MON_MAX_EVENTS; i++)
		for (unsigned k = 0; k < PERF_UNITS; k++)
			for (unsigned t = 0; t < PERF_MAX_THREADS; t++)
				if (p->fd[i][k][t] >= 0)
					close(p->fd[i][k][t]);
	if (p->go_fd >= 0)
		close(p->go_fd); /* a held program reads EOF and ends */
	if (p->exec_err_fd >= 0)
		close(p->exec_err_fd);
	if (p->child && !p->exited) {
		kill(p->child, SIGKILL);
		waitpid(p->child, NULL, 0);
	}
	dpmu_perf_system_free(p->sys);
	dpmu_profile_free(p->profile);
	free(p);
}

static const struct dpmu_backend_ops perf_ops = {
	.name = "perf",
	.run = be_run,
	.time_ns = be_time_ns,
	.destroy = be_destroy,
	.run_timed = be_run_timed,
};

/* Fork the program, held until release_child: it waits on go_fd before
 * its exec, so its events are opened on its pid first. */
static int start_child(struct perf_be *p, char **argv, struct dpmu_err *err)
{
	int go[2], ex[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return dpmu_err_set(err, DPMU_EIO, "perf: pipe: %s", strerror(errno));
	if (pipe2(ex, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return dpmu_err_set(err, DPMU_EIO, "perf: pipe: %s", strerror(errno));
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		close(ex[0]);
		close(ex[1]);
		return dpmu_err_set(err, DPMU_EIO, "perf: fork: %s", strerror(e));
	}
	if (pid == 0) {
		close(go[1]);
		close(ex[0]);
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* dynpmu gave up before the run */
		execvp(argv[0], argv);
		int e = errno;
		if (write(ex[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	p->child = pid;
	p->go_fd = go[1];
	p->exec_err_fd = ex[0];
	p->pid = pid;
	p->tids[0] = pid;
	p->ntids = 1;
	return 0;
}

/* -p: every thread of the process (/proc/PID/task), as perf stat -p. */
static int attach(struct perf_be *p, pid_t pid, struct dpmu_err *err)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return dpmu_err_set(err, DPMU_ENOENT, "-p %d: no such process", (int)pid);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (p->ntids == PERF_MAX_THREADS) {
			closedir(d);
			return dpmu_err_set(err, DPMU_ERANGE, "-p %d: more than %d threads", (int)pid,
					    PERF_MAX_THREADS);
		}
		p->tids[p->ntids++] = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	p->pid = pid;
	return 0;
}

int dpmu_perf_backend_create(const struct dpmu_perf_options *o, struct dpmu_backend **out,
		     struct dpmu_err *err)
{
	*out = NULL;
	if (!o->argv && !o->pid && !o->system_wide)
		return dpmu_err_set(err, DPMU_EINVAL,
				    "perf: nothing to count: give a program, -p PID or -a");
	if (o->pid && (o->argv || o->system_wide))
		return dpmu_err_set(err, DPMU_EINVAL, "perf: -p PID counts one process: no program "
						      "and no -a with it");
	struct perf_be *p = calloc(1, sizeof *p);
	if (!p)
		return dpmu_err_set(err, DPMU_ENOMEM, "perf: out of memory");
	memset(p->fd, 0xff, sizeof p->fd); /* -1: not open */
	p->go_fd = p->exec_err_fd = -1;
	p->t0 = mono_ns();
	p->b.ops = &perf_ops;
	p->counting.name = "perf";
	p->counting.ctx = p;
	p->counting.open = be_open;
	p->counting.enable = be_enable;
	p->counting.read = be_read;
	p->b.counting = &p->counting;
	p->system_wide = o->system_wide;
	p->task = !o->system_wide;
	int rc = dpmu_perf_discover(o->sysfs_root, &p->sys, err);
	if (!rc)
		rc = dpmu_perf_profile(p->sys, &p->profile, err);
	if (rc) {
		be_destroy(&p->b);
		return rc;
	}
	p->b.profile = p->profile;
	if (o->system_wide) {
		p->b.cores = p->sys->online;
	} else {
		/* a task: one unit per core type, its first cpu */
		unsigned n = dpmu_profile_ncores(p->profile);
		bool seen[DPMU_MAX_CORE_TYPES] = {false};
		for (unsigned c = 0; c < n; c++) {
			unsigned cl, idx;
			const struct dpmu_core_type *t = dpmu_profile_core(p->profile, c, &cl, &idx);
			unsigned ti = t ? (unsigned)(t - p->profile->core_types) : 0;
			if (t && !seen[ti]) {
				seen[ti] = true;
				p->b.cores |= UINT64_C(1) << c;
			}
		}
	}
	if (o->pid) {
		rc = attach(p, o->pid, err);
		snprintf(p->b.workload, sizeof p->b.workload, "process %d", (int)o->pid);
	} else if (o->argv) {
		snprintf(p->b.workload, sizeof p->b.workload, "%s", o->argv[0]);
		rc = start_child(p, o->argv, err);
	} else {
		snprintf(p->b.workload, sizeof p->b.workload, "system");
	}
	if (rc) {
		be_destroy(&p->b);
		return rc;
	}
	*out = &p->b;
	return 0;
}

int dpmu_perf_exit_code(const struct dpmu_backend *b)
{
	const struct perf_be *p = be_of(b);
	if (!p->child || !p->exited)
		return 0;
	if (WIFEXITED(p->status))
		return WEXITSTATUS(p->status);
	if (WIFSIGNALED(p->status))
		return 128 + WTERMSIG(p->status);
	return 1;
}

bool dpmu_perf_has_core_pmu(const struct dpmu_backend *b)
{
	const struct perf_be *p = be_of(b);
	for (unsigned i = 0; i < p->sys->npmus; i++)
		if (p->sys->pmus[i].kind == DPMU_PERF_PMU_CORE)
			return true;
	return false;
}

bool dpmu_perf_per_task(const struct dpmu_backend *b)
{
	return be_of(b)->task;
}

const char *dpmu_perf_notes(const struct dpmu_backend *b)
{
	return be_of(b)->notes;
}

void dpmu_perf_default_events(const struct dpmu_backend *b, char *list, size_t cap)
{
	const struct perf_be *p = be_of(b);
	/* perf stat's defaults: the software events, then the hardware ones */
	snprintf(list, cap, "task-clock,context-switches,cpu-migrations,page-faults");
	bool core = false, dsu = false;
	for (unsigned i = 0; i < p->sys->npmus; i++) {
		core = core || p->sys->pmus[i].kind == DPMU_PERF_PMU_CORE;
		dsu = dsu || p->sys->pmus[i].kind == DPMU_PERF_PMU_DSU;
	}
	struct dpmu_mon_events *ev = malloc(sizeof *ev);
	struct dpmu_err ignore;
	if (!ev || dpmu_mon_events_default(p->profile, b->cores, ev, &ignore)) {
		free(ev);
		return;
	}
	for (unsigned i = 0; i < ev->n; i++) {
		bool cl = ev->ev[i].target == DPMU_MON_CLUSTER;
		if (cl ? !dsu : !core)
			continue;
		size_t used = strlen(list);
		snprintf(list + used, cap - used, ",%s/%s/", cl ? "cluster" : "core", ev->ev[i].name);
	}
	free(ev);
}
