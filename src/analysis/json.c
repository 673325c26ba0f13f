/*
 * --json: one JSON object per line (a "run" header, then "count",
 * "metric" and "advice" rows), written with jansson. docs/output.md is the
 * schema.
 */
#include <jansson.h>
#include <string.h>

#include "analysis/an_internal.h"

static int emit(FILE *f, json_t *o, struct dpmu_err *err)
{
	if (!o)
		return dpmu_err_set(err, DPMU_ENOMEM, "out of memory building a JSON row");
	int rc = json_dumpf(o, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (rc || fputc('\n', f) == EOF)
		return dpmu_err_set(err, DPMU_EIO, "writing a JSON row failed");
	return 0;
}

static json_t *uint_json(uint64_t v)
{
	/* JSON integers here are signed 64-bit; counts never get near 2^63 */
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *row(const char *type, const struct dpmu_an_table *t,
		   const struct dpmu_an_sample *s, const char *unit)
{
	json_t *o = json_object();
	json_object_set_new(o, "type", json_string(type));
	if (t->intervals) {
		json_object_set_new(o, "time", json_real((double)(s->start_ns + s->length_ns) / 1e9));
		json_object_set_new(o, "interval_ns", uint_json(s->length_ns));
	}
	json_object_set_new(o, "unit", json_string(unit));
	return o;
}

static const char *kind_name(enum dpmu_an_unit_kind k)
{
	switch (k) {
	case DPMU_AN_CPU:
		return "cpu";
	case DPMU_AN_CLUSTER:
		return "cluster";
	case DPMU_AN_CORE_TYPE:
		return "core_type";
	case DPMU_AN_SYSTEM:
		return "system";
	}
	return "?";
}

int dpmu_an_write_json(FILE *f, const struct dpmu_an_table *t, const struct dpmu_an_report *r,
		       struct dpmu_err *err)
{
	json_t *h = json_object();
	json_object_set_new(h, "type", json_string("run"));
	json_object_set_new(h, "workload", json_string(t->workload));
	json_object_set_new(h, "elapsed_ns", uint_json(dpmu_an_table_end_ns(t)));
	json_object_set_new(h, "samples", uint_json(t->nsamples));
	json_object_set_new(h, "intervals", json_boolean(t->intervals));
	int rc = emit(f, h, err);
	for (size_t si = 0; !rc && si < t->nsamples; si++) {
		const struct dpmu_an_sample *s = &t->samples[si];
		for (size_t ui = 0; !rc && ui < s->nunits; ui++) {
			const struct dpmu_an_unit *u = &s->units[ui];
			for (size_t ci = 0; !rc && ci < u->ncounts; ci++) {
				const struct dpmu_an_count *c = &u->counts[ci];
				json_t *o = row("count", t, s, u->name);
				json_object_set_new(o, "unit_kind", json_string(kind_name(u->kind)));
				json_object_set_new(o, "event", json_string(c->event));
				const char *status = !c->supported ? "not supported"
						     : dpmu_an_not_counted(c) ? "not counted"
						     : "counted";
				json_object_set_new(o, "status", json_string(status));
				json_object_set_new(o, "value", strcmp(status, "counted")
									? json_null()
									: uint_json(dpmu_an_round_estimate(c)));
				json_object_set_new(o, "raw", uint_json(c->value));
				json_object_set_new(o, "enabled_ns", uint_json(c->enabled_ns));
				json_object_set_new(o, "running_ns", uint_json(c->running_ns));
				json_object_set_new(o, "running_pct", json_real(dpmu_an_running_pct(c)));
				rc = emit(f, o, err);
			}
			for (size_t mi = 0; !rc && r && mi < r->nmetrics; mi++) {
				const struct dpmu_an_metric *m = r->metrics[mi];
				struct dpmu_an_value v;
				rc = dpmu_an_metric_eval(m, t, s, u, &v, err);
				if (rc)
					break;
				json_t *o = row("metric", t, s, u->name);
				json_object_set_new(o, "unit_kind", json_string(kind_name(u->kind)));
				json_object_set_new(o, "metric", json_string(m->name));
				json_object_set_new(o, "available", json_boolean(v.available));
				json_object_set_new(o, "value", v.available ? json_real(v.value) : json_null());
				json_object_set_new(o, "metric_unit", json_string(m->unit));
				json_object_set_new(o, "running_pct", json_real(100.0 * v.running));
				if (!v.available)
					json_object_set_new(o, "reason", json_string(v.why));
				rc = emit(f, o, err);
			}
		}
		if (!rc && r && r->advice) {
			struct dpmu_an_advice adv[32];
			size_t n = 0;
			rc = dpmu_an_advise(t, si, adv, sizeof adv / sizeof adv[0], &n, err);
			for (size_t i = 0; !rc && i < n; i++) {
				const struct dpmu_an_rule *ru = adv[i].rule;
				json_t *o = row("advice", t, s, adv[i].unit);
				json_object_set_new(o, "rule", json_string(ru->name));
				json_object_set_new(o, "message", json_string(adv[i].text));
				json_object_set_new(o, "source", json_string(ru->source));
				json_t *vals = json_object(), *thr = json_object();
				for (unsigned c = 0; c < DPMU_AN_RULE_CONDS; c++) {
					if (!ru->cond[c].metric)
						continue;
					json_object_set_new(vals, ru->cond[c].metric, json_real(adv[i].value[c]));
					json_object_set_new(thr, ru->cond[c].metric,
							    json_real(ru->cond[c].threshold));
				}
				json_object_set_new(o, "values", vals);
				json_object_set_new(o, "thresholds", thr);
				rc = emit(f, o, err);
			}
		}
	}
	return rc;
}
