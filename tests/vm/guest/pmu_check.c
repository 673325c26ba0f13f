/* pmu_check: inside the real arm64 kernel (tests/vm/run.sh), check with
 * perf_event_open itself the facts dynpmu's perf backend builds on:
 *  - discovery: the PMUv3 PMU in /sys/bus/event_source/devices (its type,
 *    the CPUs it covers, the event field of its config, INST_RETIRED among
 *    its named events);
 *  - exact counts: INST_RETIRED (raw 0x08 under the sysfs type, and
 *    PERF_COUNT_HW_INSTRUCTIONS) over the known loop is 2N+1 plus a
 *    constant, the same constant for every N;
 *  - capacity: a group holds six INST_RETIRED events (the six event
 *    counters) plus CPU_CYCLES (the cycle counter), and no more;
 *  - multiplexing: eight INST_RETIRED events on six counters run less than
 *    they are enabled, and each one's scaled estimate is within 10 % of
 *    the exact count.
 * Prints one "ok"/"not ok" line per check (TAP-like) and "figure NAME VALUE"
 * lines with what it measured; exits 0 when every check held, 1 otherwise,
 * 2 on bad usage.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "loop.h"

#define SYSFS_PMUS "/sys/bus/event_source/devices"
/* Arm ARM D17 (PMUv3 common events): INST_RETIRED and CPU_CYCLES. */
#define INST_RETIRED 0x08
#define CPU_CYCLES 0x11
/* PMUv3 in QEMU's -cpu max: PMCR_EL0.N = 6 event counters. */
#define EVENT_COUNTERS 6
#define MUX_EVENTS 8

static int checks, failures;

static __attribute__((format(printf, 3, 4))) void check(int ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	char detail[512] = "";

	checks++;
	if (!ok)
		failures++;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(detail, sizeof detail, fmt, ap);
		va_end(ap);
	}
	printf("%sok %d - %s%s%s\n", ok ? "" : "not ", checks, what, *detail ? ": " : "", detail);
	fflush(stdout);
}

/* Reads a small sysfs file into buf without its trailing newline; -1 if absent. */
static int read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static long perf_open(struct perf_event_attr *attr, int group_fd)
{
	return syscall(SYS_perf_event_open, attr, 0 /* this thread */, -1 /* any CPU */,
		       group_fd, 0UL);
}

static void attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config, int disabled)
{
	memset(a, 0, sizeof *a);
	a->size = sizeof *a;
	a->type = type;
	a->config = config;
	a->disabled = disabled;
	/* EL0 only: the loop and the wrapper around it, nothing the kernel
	 * does on the way (which varies with interrupts). */
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
}

struct reading {
	uint64_t value, enabled, running;
};

static int read_event(int fd, struct reading *r)
{
	return read(fd, r, sizeof *r) == (ssize_t)sizeof *r ? 0 : -1;
}

/* The PMU's type and INST_RETIRED's code as sysfs gives them; 0 on success. */
static int discover(char *name, size_t name_size, uint32_t *type)
{
	DIR *d = opendir(SYSFS_PMUS);
	struct dirent *e;
	char path[512], text[256], online[256];
	int found = 0;

	check(d != NULL, "sysfs lists the PMUs", d ? "" : "%s: %s", SYSFS_PMUS, strerror(errno));
	if (!d)
		return -1;
	/* The kernel's arm_pmuv3 driver names its PMU armv8_pmuv3 (ACPI:
	 * armv8_pmuv3_N) or after the core (armv8_cortex_a75); it is the one
	 * with a cpus file and an event field of config:0-15. */
	while ((e = readdir(d)) != NULL && !found) {
		if (strncmp(e->d_name, "armv8_", 6) != 0)
			continue;
		snprintf(path, sizeof path, SYSFS_PMUS "/%s/cpus", e->d_name);
		if (access(path, R_OK) == 0) {
			snprintf(name, name_size, "%s", e->d_name);
			found = 1;
		}
	}
	closedir(d);
	check(found, "a PMUv3 PMU (armv8_*, with cpus) is in sysfs", found ? "%s" : "none in " SYSFS_PMUS, name);
	if (!found)
		return -1;
	printf("figure pmu %s\n", name);

	snprintf(path, sizeof path, SYSFS_PMUS "/%s/type", name);
	char *end = NULL;
	long t = -1;
	if (read_text(path, text, sizeof text) == 0)
		t = strtol(text, &end, 10);
	/* Dynamic PMU types come after the fixed PERF_TYPE_* ones. */
	check(end && end != text && *end == '\0' && t >= PERF_TYPE_MAX, "its type is a dynamic PMU type",
	      "%s = '%s'", path, t < 0 ? "(unreadable)" : text);
	if (t < PERF_TYPE_MAX)
		return -1;
	*type = (uint32_t)t;
	printf("figure type %ld\n", t);

	snprintf(path, sizeof path, SYSFS_PMUS "/%s/cpus", name);
	int rc = read_text(path, text, sizeof text);
	int rc2 = read_text("/sys/devices/system/cpu/online", online, sizeof online);
	/* One CPU type in QEMU's virt machine: one PMU covers every CPU. */
	check(rc == 0 && rc2 == 0 && strcmp(text, online) == 0, "its cpus are the online CPUs",
	      "cpus '%s', online '%s'", rc ? "?" : text, rc2 ? "?" : online);

	snprintf(path, sizeof path, SYSFS_PMUS "/%s/format/event", name);
	rc = read_text(path, text, sizeof text);
	check(rc == 0 && strcmp(text, "config:0-15") == 0, "format/event is config:0-15",
	      "'%s'", rc ? "(absent)" : text);

	snprintf(path, sizeof path, SYSFS_PMUS "/%s/events/inst_retired", name);
	rc = read_text(path, text, sizeof text);
	unsigned code = 0;
	int parsed = rc == 0 && sscanf(text, "event=%x", &code) == 1;
	check(parsed && code == INST_RETIRED, "events/inst_retired is event 0x08", "'%s'",
	      rc ? "(absent)" : text);

	snprintf(path, sizeof path, SYSFS_PMUS "/%s/perf_event_mux_interval_ms", name);
	rc = read_text(path, text, sizeof text);
	long ms = rc == 0 ? strtol(text, NULL, 10) : -1;
	check(ms > 0, "perf_event_mux_interval_ms is positive", "'%s'", rc ? "(absent)" : text);
	if (ms > 0)
		printf("figure mux_interval_ms %ld\n", ms);
	return 0;
}

/* One event over one run of the loop: its count, or -1 on an error
 * (errno says which). The same code for every n, so what it counts
 * besides the loop does not depend on n. */
static __attribute__((noinline)) int64_t count_loop(int fd, uint64_t n)
{
	struct reading r;

	if (ioctl(fd, PERF_EVENT_IOC_RESET, 0) != 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
		return -1;
	dpmu_vm_loop(n);
	if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) != 0 || read_event(fd, &r) != 0)
		return -1;
	return (int64_t)r.value;
}

/* The count minus the loop's 2N+1, the same for two N and three runs of
 * each; returns it (or INT64_MIN when it was not constant). */
static int64_t exact(const char *label, uint32_t type, uint64_t config)
{
	static const uint64_t ns[2] = { 1000, 1000000 };
	struct perf_event_attr a;
	int64_t c[2][3], constant = INT64_MIN;
	int ok = 1, i, j;
	long fd;

	attr_init(&a, type, config, 1);
	fd = perf_open(&a, -1);
	check(fd >= 0, label, fd >= 0 ? "opened" : "perf_event_open: %s", strerror(errno));
	if (fd < 0)
		return INT64_MIN;
	for (i = 0; i < 2; i++)
		for (j = 0; j < 3; j++) {
			int64_t v = count_loop((int)fd, ns[i]);
			c[i][j] = v < 0 ? INT64_MIN : v - (int64_t)(2 * ns[i] + 1);
			if (v < 0 || c[i][j] != c[0][0])
				ok = 0;
		}
	close((int)fd);
	if (ok)
		constant = c[0][0];
	/* The constant is what runs at EL0 between the two ioctls' system
	 * calls besides the loop: a few instructions, never negative. */
	ok = ok && constant >= 0 && constant < 100;
	check(ok, "count of the loop is exactly 2N+1 + a constant independent of N",
	      "%s: N=%" PRIu64 ": +%" PRId64 " +%" PRId64 " +%" PRId64 ", N=%" PRIu64
	      ": +%" PRId64 " +%" PRId64 " +%" PRId64,
	      label, ns[0], c[0][0], c[0][1], c[0][2], ns[1], c[1][0], c[1][1], c[1][2]);
	return ok ? constant : INT64_MIN;
}

/* Groups must fit the counters at once: six INST_RETIRED (the event
 * counters), one CPU_CYCLES more (the cycle counter), then nothing.
 * Every member is opened enabled: the kernel checks that a group fits when
 * a member is opened, and counts only the members that are not disabled
 * (a disabled leader would let a seventh INST_RETIRED through, to a group
 * that can then never be scheduled). */
static void capacity(uint32_t type, int64_t constant)
{
	struct perf_event_attr a;
	long fds[EVENT_COUNTERS + 2];
	int opened = 0, i, errno7 = 0, errno_last = 0;
	const uint64_t n = 100000;

	for (i = 0; i < EVENT_COUNTERS + 1; i++) {
		attr_init(&a, type, INST_RETIRED, 0);
		fds[i] = perf_open(&a, i == 0 ? -1 : (int)fds[0]);
		if (fds[i] < 0) {
			errno7 = errno;
			break;
		}
		opened++;
	}
	check(opened == EVENT_COUNTERS && errno7 == EINVAL,
	      "a group holds six INST_RETIRED events, a seventh is refused with EINVAL",
	      "%d opened, then %s", opened, errno7 ? strerror(errno7) : "no refusal");
	if (opened < 1)
		return;
	for (i = opened; i > EVENT_COUNTERS; i--)
		close((int)fds[i - 1]);
	if (opened > EVENT_COUNTERS)
		opened = EVENT_COUNTERS;

	attr_init(&a, type, CPU_CYCLES, 0);
	fds[opened] = perf_open(&a, (int)fds[0]);
	int cycles_ok = fds[opened] >= 0;
	check(cycles_ok, "the cycle counter takes CPU_CYCLES beside six INST_RETIRED", "%s",
	      cycles_ok ? "" : strerror(errno));
	if (cycles_ok) {
		opened++;
		attr_init(&a, type, CPU_CYCLES, 0);
		long fd = perf_open(&a, (int)fds[0]);
		errno_last = fd < 0 ? errno : 0;
		check(fd < 0 && errno_last == EINVAL, "an eighth event (a second CPU_CYCLES) is refused with EINVAL",
		      "%s", fd < 0 ? strerror(errno_last) : "it opened");
		if (fd >= 0)
			close((int)fd);
	}

	/* The group counts together: every INST_RETIRED member exactly. */
	ioctl((int)fds[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	ioctl((int)fds[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	ioctl((int)fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	dpmu_vm_loop(n);
	ioctl((int)fds[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	int same = 1, always_on = 1;
	struct reading r0 = { 0, 0, 0 }, r;
	for (i = 0; i < EVENT_COUNTERS; i++) {
		if (read_event((int)fds[i], &r) != 0) {
			same = 0;
			break;
		}
		if (i == 0)
			r0 = r;
		if (r.value != r0.value)
			same = 0;
		if (r.running != r.enabled || r.enabled == 0)
			always_on = 0;
	}
	int64_t extra = (int64_t)r0.value - (int64_t)(2 * n + 1);
	check(same && always_on && extra >= 0 && (constant == INT64_MIN || extra < constant + 100),
	      "the six members count the loop alike, running all the time they are enabled",
	      "INST_RETIRED %" PRIu64 " = 2N+1 + %" PRId64 ", enabled %" PRIu64 " ns, running %" PRIu64 " ns",
	      r0.value, extra, r0.enabled, r0.running);
	for (i = 0; i < opened; i++)
		close((int)fds[i]);
}

/* Eight INST_RETIRED events, each in a group of its own, on six counters:
 * the kernel rotates them (perf_event_mux_interval_ms), each runs part of
 * the time, and value * enabled / running estimates the full count. */
static void multiplex(uint32_t type, int64_t constant)
{
	const uint64_t n = 50000000; /* 10^8 instructions: ~100 ms of guest time */
	struct perf_event_attr a;
	long fds[MUX_EVENTS];
	struct reading r[MUX_EVENTS];
	int i, opened = 0;

	for (i = 0; i < MUX_EVENTS; i++) {
		attr_init(&a, type, INST_RETIRED, 1);
		fds[i] = perf_open(&a, -1);
		if (fds[i] < 0)
			break;
		opened++;
	}
	check(opened == MUX_EVENTS, "eight INST_RETIRED events open beside each other", "%d opened%s%s",
	      opened, opened < MUX_EVENTS ? ": " : "", opened < MUX_EVENTS ? strerror(errno) : "");
	if (opened < MUX_EVENTS) {
		for (i = 0; i < opened; i++)
			close((int)fds[i]);
		return;
	}
	/* All of this thread's events start and stop together. */
	prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0);
	dpmu_vm_loop(n);
	prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0);

	double want = (double)(2 * n + 1) + (double)(constant == INT64_MIN ? 0 : constant);
	double worst = 0;
	int below = 1, read_ok = 1, all_ran = 1;
	uint64_t running_sum = 0;
	for (i = 0; i < MUX_EVENTS; i++) {
		if (read_event((int)fds[i], &r[i]) != 0) {
			read_ok = 0;
			break;
		}
		if (!(r[i].running < r[i].enabled))
			below = 0;
		if (r[i].running == 0) {
			all_ran = 0;
			continue;
		}
		running_sum += r[i].running;
		double est = (double)r[i].value * (double)r[i].enabled / (double)r[i].running;
		double err = est > want ? est / want - 1 : 1 - est / want;
		if (err > worst)
			worst = err;
		printf("figure mux_event%d value=%" PRIu64 " enabled=%" PRIu64 " running=%" PRIu64
		       " estimate=%.0f\n",
		       i, r[i].value, r[i].enabled, r[i].running, est);
	}
	for (i = 0; i < MUX_EVENTS; i++)
		close((int)fds[i]);
	check(read_ok, "the eight events read", "%s", read_ok ? "" : strerror(errno));
	if (!read_ok)
		return;
	check(below, "each of the eight runs less than it is enabled (time_running < time_enabled)", NULL);
	check(all_ran, "each of the eight ran for part of the time", NULL);
	check(all_ran && worst <= 0.10, "each estimate (value * enabled / running) is within 10 % of the exact count",
	      "exact %.0f, worst error %.3f %%", want, worst * 100);
	printf("figure mux_worst_error_pct %.3f\n", worst * 100);
	/* Six counters busy all along: the running times add up to about six
	 * times the enabled time. Reported, not checked: the kernel's own
	 * scheduling points decide the exact share. */
	printf("figure mux_counters_busy %.2f\n", (double)running_sum / (double)r[0].enabled);
}

int main(int argc, char **argv)
{
	char name[256] = "";
	uint32_t type = 0;
	int64_t c_raw, c_hw;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: pmu_check (no arguments; run it in the VM, tests/vm/run.sh)\n");
		return 2;
	}
	/* Stay on CPU 0: under QEMU, counts taken across a move to the other
	 * vCPU are not exact (docs/hardware.md); the checks here are about
	 * the kernel's PMU, not about migration. */
	cpu_set_t cpu0;
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof cpu0, &cpu0) != 0) {
		printf("not ok - sched_setaffinity to CPU 0: %s\n", strerror(errno));
		return 1;
	}
	if (discover(name, sizeof name, &type) != 0) {
		printf("summary %d checks, %d failed (no PMU to go on with)\n", checks, failures);
		return 1;
	}
	c_raw = exact("raw INST_RETIRED (sysfs type, config 0x08)", type, INST_RETIRED);
	if (c_raw != INT64_MIN)
		printf("figure constant_raw %" PRId64 "\n", c_raw);
	c_hw = exact("PERF_COUNT_HW_INSTRUCTIONS", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	if (c_hw != INT64_MIN)
		printf("figure constant_hw %" PRId64 "\n", c_hw);
	/* The generic event maps onto INST_RETIRED on this PMU: the same code
	 * around the loop, so the same constant. */
	check(c_raw != INT64_MIN && c_raw == c_hw, "PERF_COUNT_HW_INSTRUCTIONS counts as raw INST_RETIRED does",
	      "constants %" PRId64 " and %" PRId64, c_raw, c_hw);
	capacity(type, c_raw);
	multiplex(type, c_raw);
	printf("summary %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
