/*
 * ETMv4 instruction trace decoded by OpenCSD (Debian libopencsd, its C
 * API): a decode tree for one raw trace stream (no CoreSight frame
 * formatter), the ETMv4 instruction decoder configured from the trace
 * unit's TRCIDR/TRCCONFIGR/TRCTRACEIDR values, and the program image as
 * memory accessors. OpenCSD's generic elements become dpmu_etm_elem.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "dynpmu/etmdecode.h"

/* OpenCSD 1.3.3 does not free the callback object that
 * ocsd_dt_set_gen_elem_outfn makes when its tree is destroyed (its leak,
 * 32 bytes a decode): every program that decodes tells LeakSanitizer so,
 * from here, where the call is. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:ocsd_dt_set_gen_elem_outfn\n";
}

struct decode {
	dpmu_etm_elem_fn fn;
	void *ctx;
	int stopped;
};

static ocsd_datapath_resp_t on_elem(const void *p, const ocsd_trc_index_t index,
				    const uint8_t chan, const ocsd_generic_trace_elem *el)
{
	(void)chan;
	struct decode *d = (struct decode *)p;
	struct dpmu_etm_elem out = { .offset = index };
	switch (el->elem_type) {
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
		out.kind = DPMU_ETM_ELEM_RANGE;
		out.start = el->st_addr;
		out.end = el->en_addr;
		out.ninsns = el->num_instr_range;
		break;
	case OCSD_GEN_TRC_ELEM_TRACE_ON:
		out.kind = DPMU_ETM_ELEM_TRACE_ON;
		break;
	case OCSD_GEN_TRC_ELEM_TIMESTAMP:
		out.kind = DPMU_ETM_ELEM_TIMESTAMP;
		out.start = el->timestamp;
		break;
	case OCSD_GEN_TRC_ELEM_NO_SYNC:
		out.kind = DPMU_ETM_ELEM_NO_SYNC;
		break;
	case OCSD_GEN_TRC_ELEM_CYCLE_COUNT:
		out.kind = DPMU_ETM_ELEM_CYCLES;
		out.start = el->cycle_count;
		break;
	case OCSD_GEN_TRC_ELEM_EXCEPTION:
		out.kind = DPMU_ETM_ELEM_EXCEPTION;
		out.start = el->en_addr;
		out.end = el->exception_number;
		break;
	case OCSD_GEN_TRC_ELEM_PE_CONTEXT:
		if (!el->context.ctxt_id_valid)
			return OCSD_RESP_CONT;
		out.kind = DPMU_ETM_ELEM_CONTEXT;
		out.start = el->context.context_id;
		break;
	case OCSD_GEN_TRC_ELEM_ADDR_NACC:
		out.kind = DPMU_ETM_ELEM_NO_IMAGE;
		out.start = el->st_addr;
		break;
	default:
		return OCSD_RESP_CONT;
	}
	d->stopped = d->fn(d->ctx, &out);
	return d->stopped ? OCSD_RESP_FATAL_SYS_ERR : OCSD_RESP_CONT;
}

static int ocsd_fail(struct dpmu_err *err, const char *name, const char *what, ocsd_err_t rc)
{
	char msg[256];
	ocsd_err_str(rc, msg, (int)sizeof msg);
	return dpmu_err_set(err, DPMU_EIO, "%s: %s: %s", name, what, msg);
}

int dpmu_etm_decode(const char *name, const uint8_t *trace, size_t len,
		    const struct dpmu_etm_decode_regs *regs, const struct dpmu_etm_image *image,
		    size_t nimage, dpmu_etm_elem_fn fn, void *ctx, struct dpmu_err *err)
{
	if (len > UINT32_MAX)
		return dpmu_err_set(err, DPMU_EINVAL, "%s: %zu bytes of trace: at most 4 GiB", name,
				    len);
	/* Errors come back through ocsd_get_last_err, not printed. */
	ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 0);
	dcd_tree_handle_t t = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
	if (t == C_API_INVALID_TREE_HANDLE)
		return dpmu_err_set(err, DPMU_ENOMEM, "%s: OpenCSD could not create a decode tree",
				    name);
	ocsd_etmv4_cfg cfg = {
		.reg_idr0 = regs->idr[0], .reg_idr1 = regs->idr[1], .reg_idr2 = regs->idr[2],
		.reg_idr8 = regs->idr[8], .reg_idr9 = regs->idr[9], .reg_idr10 = regs->idr[10],
		.reg_idr11 = regs->idr[11], .reg_idr12 = regs->idr[12],
		.reg_idr13 = regs->idr[13], .reg_configr = regs->configr,
		.reg_traceidr = regs->traceidr, .arch_ver = ARCH_V8, .core_prof = profile_CortexA,
	};
	unsigned char csid;
	struct decode d = { fn, ctx, 0 };
	int rc = 0;
	/* A bad packet halts the decode with its error and offset, rather
	 * than OpenCSD's default of logging it and waiting for the next sync,
	 * which would drop instructions without a word. */
	ocsd_err_t e = ocsd_dt_create_decoder(t, OCSD_BUILTIN_DCD_ETMV4I,
					      OCSD_CREATE_FLG_FULL_DECODER |
						      OCSD_OPFLG_PKTPROC_ERR_BAD_PKTS |
						      OCSD_OPFLG_PKTDEC_ERROR_BAD_PKTS |
						      OCSD_OPFLG_PKTDEC_HALT_BAD_PKTS,
					      &cfg, &csid);
	if (e != OCSD_OK) {
		rc = ocsd_fail(err, name, "the ETMv4 decoder refused the trace unit's registers", e);
		goto out;
	}
	for (size_t i = 0; i < nimage; i++) {
		e = ocsd_dt_add_buffer_mem_acc(t, image[i].addr, OCSD_MEM_SPACE_ANY,
					       image[i].bytes, (uint32_t)image[i].len);
		if (e != OCSD_OK) {
			rc = ocsd_fail(err, name, "program image", e);
			goto out;
		}
	}
	ocsd_dt_set_gen_elem_outfn(t, on_elem, &d);
	uint32_t done = 0;
	while (done < len) {
		uint32_t used = 0;
		ocsd_datapath_resp_t r = ocsd_dt_process_data(t, OCSD_OP_DATA, done,
							      (uint32_t)(len - done), trace + done,
							      &used);
		done += used;
		if (d.stopped) {
			rc = d.stopped;
			goto out;
		}
		if (OCSD_DATA_RESP_IS_FATAL(r) || used == 0) {
			char msg[256] = "";
			ocsd_trc_index_t at = done;
			uint8_t chan;
			if (ocsd_get_last_err(&at, &chan, msg, (int)sizeof msg) == OCSD_OK || !*msg)
				snprintf(msg, sizeof msg, "the decoder stopped");
			rc = dpmu_err_set(err, DPMU_EINVAL, "%s: byte %" PRIu64 ": %s", name,
					  (uint64_t)at, msg);
			goto out;
		}
	}
	ocsd_dt_process_data(t, OCSD_OP_EOT, 0, 0, NULL, NULL);
	if (d.stopped)
		rc = d.stopped;
out:
	ocsd_destroy_dcd_tree(t);
	return rc;
}
