/*
 * Trace front end: how fast a trace is parsed (text and binary forms), how
 * compact the binary form is, and how fast `dynpmu stat --trace` replays it
 * (parse + engine + model + monitor polls through the driver). Prints one
 * JSON object per measurement (DESIGN.md); it never fails on a time.
 *
 * usage: bench_trace [instructions]   (default 2000000)
 * The trace is synthetic but shaped like a loop nest: 60 % other
 * instructions, 25 % loads and 8 % stores striding through a 1 MiB array,
 * 7 % branches (mostly taken loop branches), on cpu0 and cpu4 in turn.
 * Each figure is the median of REPEAT runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "dynpmu/backend.h"
#include "dynpmu/frontend.h"
#include "dynpmu/monitor.h"

#define REPEAT 3

static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void make_trace(const char *path, unsigned long n)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	uint64_t pc = 0x400000, addr = 0x10000000;
	unsigned seed = 1;
	for (unsigned long i = 0; i < n; i++) {
		if (i % 100000 == 0)
			fprintf(f, "cpu %u\n", (unsigned)(i / 100000 % 2) * 4);
		seed = seed * 1103515245u + 12345u;
		unsigned r = (seed >> 16) % 100;
		if (r < 60) {
			fprintf(f, "i %llx\n", (unsigned long long)pc);
		} else if (r < 85) {
			fprintf(f, "l %llx %llx 8\n", (unsigned long long)pc, (unsigned long long)addr);
			addr = 0x10000000 + ((addr + 8 - 0x10000000) & 0xfffff);
		} else if (r < 93) {
			fprintf(f, "s %llx %llx 8\n", (unsigned long long)pc,
				(unsigned long long)(addr + 0x200000));
		} else {
			bool taken = r < 99;
			fprintf(f, "b %llx %llx %c cond\n", (unsigned long long)pc,
				(unsigned long long)(pc - 0x40), taken ? 'T' : 'N');
			if (taken) {
				pc -= 0x40;
				continue;
			}
		}
		pc += 4;
		if (pc > 0x480000)
			pc = 0x400000;
	}
	fclose(f);
}

static void bench_parse(const char *path, const char *form, unsigned long n)
{
	double t[REPEAT];
	struct dpmu_err err;
	for (int k = 0; k < REPEAT; k++) {
		struct dpmu_trace_reader *r;
		struct dpmu_trace_summary sum;
		double t0 = bench_now();
		if (dpmu_trace_open(path, DPMU_TRACE_AUTO, &r, &err) || dpmu_trace_scan(r, &sum, &err)) {
			fprintf(stderr, "bench_trace: %s\n", err.msg);
			exit(1);
		}
		t[k] = bench_now() - t0;
		dpmu_trace_close(r);
	}
	double s = bench_median(t, REPEAT);
	long bytes = file_size(path);
	printf("{\"bench\":\"trace_parse\",\"form\":\"%s\",\"insns\":%lu,\"bytes\":%ld,"
	       "\"bytes_per_insn\":%.2f,\"seconds\":%.4f,\"minsn_per_s\":%.1f,\"mb_per_s\":%.1f}\n",
	       form, n, bytes, (double)bytes / (double)n, s, (double)n / s / 1e6,
	       (double)bytes / s / 1e6);
}

static void bench_replay(const char *path, const char *form, unsigned long n)
{
	double t[REPEAT];
	struct dpmu_err err;
	for (int k = 0; k < REPEAT; k++) {
		struct dpmu_backend *b;
		struct dpmu_sim_options so = {.trace = path};
		static struct dpmu_mon_events ev;
		struct dpmu_mon_session *s;
		double t0 = bench_now();
		if (dpmu_sim_create(&so, &b, &err) ||
		    dpmu_mon_events_default(b->profile, b->cores, &ev, &err) ||
		    dpmu_mon_session_create(b->drv, b->profile, &ev, b->cores, &s, &err) ||
		    dpmu_mon_run(s, b, &err)) {
			fprintf(stderr, "bench_trace: %s\n", err.msg);
			exit(1);
		}
		t[k] = bench_now() - t0;
		dpmu_mon_session_destroy(s);
		dpmu_backend_destroy(b);
	}
	double s = bench_median(t, REPEAT);
	printf("{\"bench\":\"trace_stat\",\"form\":\"%s\",\"insns\":%lu,\"events\":\"default\","
	       "\"seconds\":%.3f,\"minsn_per_s\":%.2f}\n",
	       form, n, s, (double)n / s / 1e6);
}

int main(int argc, char **argv)
{
	unsigned long n =
		(unsigned long)bench_count_arg(argc, argv, "bench_trace", "instructions", 2000000ul);
	char dir[] = "/tmp/bench-trace-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char text[64], bin[64];
	snprintf(text, sizeof text, "%s/t.trace", dir);
	snprintf(bin, sizeof bin, "%s/t.bin", dir);
	make_trace(text, n);
	struct dpmu_err err;
	if (dpmu_trace_convert(text, bin, DPMU_TRACE_BINARY, &err)) {
		fprintf(stderr, "bench_trace: %s\n", err.msg);
		return 1;
	}
	bench_parse(text, "text", n);
	bench_parse(bin, "binary", n);
	bench_replay(text, "text", n);
	bench_replay(bin, "binary", n);
	unlink(text);
	unlink(bin);
	rmdir(dir);
	return 0;
}
