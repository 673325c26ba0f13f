/*
 * dynpmu monitor's diagnosis (seed 003 section 7.2, steps 2 and 3): on an
 * anomaly, the PMU groups count in turn, one interval each (the state
 * machine is src/monitor/diagnosis.c's, behind the driver); here the cause
 * is named from their counts (src/analysis/diagnose.c) with the seeds'
 * advice and logged, and the trace unit captures the next instructions,
 * its decode naming the hot functions.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor.h"
#include "dynpmu/driver.h"
#include "dynpmu/etm.h"
#include "dynpmu/qemu.h"
#include "dynpmu/tracedir.h"

/* A capture that failed (the trace unit, its decode, its directory) is an
 * event of the log, not the monitor's end: the diagnosis has its cause
 * without it, and the run goes on. */
static void capture_failed(struct mon *m, struct core_mon *c, uint64_t now, const char *what,
			   struct dpmu_err *err)
{
	char text[600], json[700], esc[400];
	snprintf(text, sizeof text, "  capture %u failed (%s): %s", c->d.s.anomaly, what,
		 dpmu_errmsg(err));
	dpmu_mon_json_escape(dpmu_errmsg(err), esc, sizeof esc);
	snprintf(json, sizeof json, "\"anomaly\":%u,\"stage\":\"%s\",\"error\":\"%s\"", c->d.s.anomaly,
		 what, esc);
	dpmu_mon_log(m, now, c, "capture_error", json, text);
	dpmu_err_clear(err);
}

/* The trace unit captures the next --window instructions (a program run
 * only: a replayed trace has no program image). */
static int capture_start(struct mon *m, struct core_mon *c, struct dpmu_err *err)
{
	if (!c->sink.buf || c->tracing || !m->o->window)
		return 0;
	dpmu_etm_sink_reset(&c->sink);
	struct dpmu_drv_etm_window win = { .cpu = c->cpu, .window = (uint32_t)m->o->window };
	struct dpmu_drv_etm_config cfg;
	dpmu_drv_etm_window_config(&win, &cfg);
	int rc = dpmu_drv_etm_start(m->b->drv, c->cpu, &cfg, err);
	c->tracing = !rc;
	if (!rc)
		dpmu_qemu_trace_context(m->b, c->cpu);
	return rc;
}

/* The capture's hot functions, and the capture kept with --capture; what
 * failed goes to *what. */
static int capture_keep(struct mon *m, struct core_mon *c, uint64_t now, const char **what,
			struct dpmu_err *err)
{
	*what = "stop";
	int rc = dpmu_drv_etm_stop(m->b->drv, c->cpu, err);
	if (rc)
		return rc;
	struct dpmu_tracedir t;
	memset(&t, 0, sizeof t);
	t.cpu = c->cpu;
	memcpy(t.regs.idr, c->idr, sizeof c->idr);
	struct dpmu_drv_etm_window win = { .cpu = c->cpu, .window = (uint32_t)m->o->window };
	struct dpmu_drv_etm_config cfg;
	dpmu_drv_etm_window_config(&win, &cfg);
	t.regs.configr = cfg.configr;
	t.regs.traceidr = cfg.traceidr;
	t.window = m->o->window;
	t.sink_size = c->sink.size;
	t.sink_written = c->sink.written;
	t.wrapped = c->sink.wrapped;
	t.trace_len = dpmu_etm_sink_fill(&c->sink);
	uint8_t *bytes = malloc(t.trace_len ? t.trace_len : 1);
	if (!bytes)
		return dpmu_err_set(err, DPMU_ENOMEM, "out of memory copying a capture");
	dpmu_etm_sink_copy(&c->sink, bytes);
	t.trace = bytes;
	struct dpmu_etm_status st;
	dpmu_qemu_trace_status(m->b, c->cpu, &st);
	t.given = st.seen;
	t.traced = st.traced;
	t.first = st.first;
	t.last = st.last;
	t.event_at = st.event_at;
	const struct dpmu_profile *p = m->b->profile;
	snprintf(t.core_type, sizeof t.core_type, "%.47s", p->core_types[c->type].name);
	t.program = m->program; /* resolved: PROGRAM may have been found in PATH */
	struct dpmu_qemu_mapping maps[DPMU_TRACEDIR_MAX_MAPS];
	size_t nm = dpmu_qemu_mappings(m->b, maps, DPMU_TRACEDIR_MAX_MAPS);
	for (size_t i = 0; i < nm && i < DPMU_TRACEDIR_MAX_MAPS; i++)
		t.maps[t.nmaps++] = (struct dpmu_tracedir_map){ maps[i].start, maps[i].len,
								maps[i].pgoff, (char *)maps[i].path };
	struct dpmu_an_hot hot[32];
	size_t nh = 0;
	uint64_t total = 0;
	*what = "decode";
	rc = dpmu_an_trace_hot(&t, hot, 32, &nh, &total, err);
	if (!rc && total) {
		char text[400] = "", json[600] = "", esc[200];
		size_t k = (size_t)snprintf(text, sizeof text, "  hot:");
		size_t j = (size_t)snprintf(json, sizeof json, "\"anomaly\":%u,\"insns\":%" PRIu64
								",\"functions\":[",
					    c->d.s.anomaly, total);
		for (size_t i = 0; i < nh && i < HOT_SHOWN && k < sizeof text && j < sizeof json; i++) {
			double share = 100.0 * (double)hot[i].insns / (double)total;
			k += (size_t)snprintf(text + k, sizeof text - k, "%s %s %.1f%%", i ? "," : "",
					      hot[i].name, share);
			dpmu_mon_json_escape(hot[i].name, esc, sizeof esc);
			j += (size_t)snprintf(json + j, sizeof json - j, "%s{\"name\":\"%s\",\"share\":%.2f}",
					      i ? "," : "", esc, share);
		}
		if (k < sizeof text)
			snprintf(text + k, sizeof text - k, " (of %" PRIu64 " instructions traced)", total);
		if (j < sizeof json)
			snprintf(json + j, sizeof json - j, "]");
		dpmu_mon_log(m, now, c, "hot", json, text);
	}
	if (!rc && m->o->capture) {
		char dir[2048];
		snprintf(dir, sizeof dir, "%.2000s/anomaly-%u", m->o->capture, c->d.s.anomaly);
		*what = "write";
		rc = dpmu_tracedir_write(dir, &t, err);
		if (!rc) {
			char text[4200], json[4200], esc[4096];
			snprintf(text, sizeof text, "  trace: %s (dynpmu trace show %s)", dir, dir);
			dpmu_mon_json_escape(dir, esc, sizeof esc);
			snprintf(json, sizeof json, "\"anomaly\":%u,\"dir\":\"%s\"", c->d.s.anomaly, esc);
			dpmu_mon_log(m, now, c, "trace", json, text);
		}
	}
	free(bytes);
	return rc;
}

static void capture_end(struct mon *m, struct core_mon *c, uint64_t now, struct dpmu_err *err)
{
	if (!c->tracing)
		return;
	c->tracing = false;
	const char *what;
	if (capture_keep(m, c, now, &what, err))
		capture_failed(m, c, now, what, err);
}

/* The analysis table of a diagnosis's counts: one sample of a cpuN and a
 * clusterM unit, each count estimated over all the groups' intervals as
 * perf scales a multiplexed count (running: its group's interval;
 * enabled: the diagnosis's), with the AMU's instructions and cycles over
 * the same intervals on both units (the cluster's snoops per instruction
 * of this core). */
static int diag_table(const struct dpmu_mon_diagnosis *d, struct dpmu_an_table *t,
		      struct dpmu_err *err)
{
	struct dpmu_an_sample *s;
	struct dpmu_an_unit *u[2];
	char name[32];
	int rc = dpmu_an_sample_add(t, d->start_ns, d->counted_ns, &s, err);
	snprintf(name, sizeof name, "cpu%u", d->cpu);
	if (!rc)
		rc = dpmu_an_unit_add(s, DPMU_AN_CPU, d->cpu, name, 0, &u[0], err);
	snprintf(name, sizeof name, "cluster%u", d->cluster);
	if (!rc)
		rc = dpmu_an_unit_add(s, DPMU_AN_CLUSTER, d->cluster, name, 0, &u[1], err);
	if (!rc) /* the units may have moved as the second was added */
		u[0] = &s->units[0], u[1] = &s->units[1];
	for (unsigned i = 0; !rc && i < d->ncounts; i++) {
		const struct dpmu_mon_diag_count *k = &d->counts[i];
		rc = dpmu_an_count_add(u[k->cluster], k->event, true, k->value, d->counted_ns,
				       k->running_ns, err);
	}
	for (unsigned k = 0; !rc && k < 2; k++) {
		rc = dpmu_an_count_add(u[k], "INST_RETIRED", true, d->insns, 1, 1, err);
		if (!rc)
			rc = dpmu_an_count_add(u[k], "CPU_CYCLES", true, d->cycles, 1, 1, err);
	}
	return rc;
}

/* The state machine skipped the cluster's group in its last call. */
static void diag_skipped(struct mon *m, struct core_mon *c, uint64_t now)
{
	const struct dpmu_mon_diagnosis *d = &c->d.s;
	if (!d->skipped_group)
		return;
	char text[300], json[300];
	snprintf(text, sizeof text,
		 "  diagnosis %u: %s group skipped: cluster%u's PMU counts for cpu%u's diagnosis",
		 d->anomaly, d->skipped_group, d->cluster, d->skipped_owner);
	snprintf(json, sizeof json, "\"anomaly\":%u,\"group\":\"%s\",\"cluster\":%u,\"owner\":%u",
		 d->anomaly, d->skipped_group, d->cluster, d->skipped_owner);
	dpmu_mon_log(m, now, c, "group_skipped", json, text);
}

/* The cause named from the diagnosis's table t, logged with the seeds'
 * advice; the timeline's anomaly gets it. */
static int diag_cause(struct mon *m, struct core_mon *c, uint64_t now,
		      const struct dpmu_an_table *t, const char *partial, struct dpmu_err *err)
{
	const struct dpmu_mon_diagnosis *d = &c->d.s;
	struct dpmu_an_cause cause;
	int rc = d->counted ? dpmu_an_diagnose(t, 0, t->samples[0].units[0].name,
					     t->samples[0].units[1].name, &cause, err)
			      : DPMU_ENOENT;
	/* cut short, the groups that counted may give no metric at all */
	if (rc == DPMU_ENOENT && partial) {
		memset(&cause, 0, sizeof cause);
		cause.group = cause.metric = "";
		snprintf(cause.text, sizeof cause.text, "no metric (%u of %u groups counted)",
			 d->counted, DPMU_MON_DIAG_GROUPS);
		dpmu_err_clear(err);
	} else if (rc) {
		return rc;
	}
	if (c->d.anom < c->nanom && cause.group[0])
		snprintf(c->anom[c->d.anom].cause, sizeof c->anom[0].cause, "%s%s", cause.group,
			 cause.found ? "" : "?");
	char text[700], json[800], esc[300], note[160] = "", jnote[200] = "";
	if (partial) {
		snprintf(note, sizeof note, " (partial: %u of %u groups counted before %s)",
			 d->counted, DPMU_MON_DIAG_GROUPS, partial);
		snprintf(jnote, sizeof jnote, ",\"partial\":true,\"groups_counted\":%u,\"cut_by\":\"%s\"",
			 d->counted, partial);
	}
	snprintf(text, sizeof text, "diagnosis %u%s: %s%s", d->anomaly, note,
		 cause.found || !cause.group[0] ? "" : "no clear cause; nearest: ", cause.text);
	dpmu_mon_json_escape(cause.text, esc, sizeof esc);
	snprintf(json, sizeof json,
		 "\"anomaly\":%u,\"cause\":\"%s\",\"found\":%s,\"metric\":\"%s\",\"value\":%.4g,"
		 "\"threshold\":%.4g,\"text\":\"%s\"%s",
		 d->anomaly, cause.group, cause.found ? "true" : "false", cause.metric, cause.value,
		 cause.threshold, esc, jnote);
	dpmu_mon_log(m, now, c, "diagnosis", json, text);
	/* the seeds' advice on the same counts */
	struct dpmu_an_advice adv[8];
	size_t na = 0;
	if (dpmu_an_advise(t, 0, adv, 8, &na, err) == 0)
		for (size_t i = 0; i < na && i < 8; i++) {
			dpmu_mon_json_escape(adv[i].text, esc, sizeof esc);
			snprintf(json, sizeof json, "\"anomaly\":%u,\"rule\":\"%s\",\"text\":\"%s\"",
				 d->anomaly, adv[i].rule->name, esc);
			snprintf(text, sizeof text, "  advice: %s", adv[i].text);
			dpmu_mon_log(m, now, c, "advice", json, text);
		}
	return 0;
}

static int diag_end(struct mon *m, struct core_mon *c, uint64_t now, const char *partial,
		    struct dpmu_err *err);

int dpmu_mon_diag_begin(struct mon *m, struct core_mon *c, uint64_t now, struct dpmu_err *err)
{
	/* a diagnosis still running is the last anomaly's: it ends with what
	 * it has counted, so that each anomaly gets its own cause */
	char why[64];
	snprintf(why, sizeof why, "anomaly %u began", c->anomaly);
	int rc = dpmu_mon_diag_finish(m, c, now, why, err);
	if (rc)
		return rc;
	c->d.anom = c->nanom - 1;
	rc = dpmu_mon_diagnosis_begin(&m->dx, &c->d.s, c->anomaly, now, err);
	if (rc < 0)
		return rc;
	diag_skipped(m, c, now);
	if (capture_start(m, c, err))
		capture_failed(m, c, now, "start", err);
	return rc == 1 ? diag_end(m, c, now, NULL, err) : 0;
}

/* The groups have counted (all, or those before `partial` said why the
 * diagnosis ended early): the cause, the advice, the capture. */
static int diag_end(struct mon *m, struct core_mon *c, uint64_t now, const char *partial,
		    struct dpmu_err *err)
{
	struct dpmu_an_table t;
	dpmu_an_table_init(&t);
	int rc = diag_table(&c->d.s, &t, err);
	if (!rc)
		rc = diag_cause(m, c, now, &t, partial, err);
	dpmu_an_table_free(&t);
	if (!rc)
		capture_end(m, c, now, err);
	return rc;
}

int dpmu_mon_diag_interval(struct mon *m, struct core_mon *c, uint64_t now, uint64_t insns,
			   uint64_t cycles, struct dpmu_err *err)
{
	int rc = dpmu_mon_diagnosis_interval(&m->dx, &c->d.s, now, insns, cycles, err);
	if (rc < 0)
		return rc;
	diag_skipped(m, c, now);
	return rc == 1 ? diag_end(m, c, now, NULL, err) : 0;
}

int dpmu_mon_diag_finish(struct mon *m, struct core_mon *c, uint64_t now, const char *why,
			 struct dpmu_err *err)
{
	if (c->d.s.group < 0)
		return 0;
	/* the group counting now has counted part of an interval: left out */
	int rc = dpmu_mon_diagnosis_stop(&m->dx, &c->d.s, err);
	return rc ? rc : diag_end(m, c, now, why, err);
}
