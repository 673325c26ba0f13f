/*
 * The trace unit's output: the ETMv4 instruction-trace protocol (Arm IHI
 * 0064 chapter 6) written into a circular trace sink. The packets, with
 * their IHI 0064 header values:
 *   A-sync          0x00 x 11, 0x80
 *   Trace Info      0x01, PLCTL (INFO present; CYCT too with cycle counting),
 *                   INFO (bit 0: cycle counting), CYCT (the threshold)
 *   Trace On        0x04
 *   Timestamp       0x02, the value 7 bits a byte, low first, bit 7 "more"
 *                   (the ninth byte carries 8 bits)
 *   Address with    0x85 (64-bit, IS0): A[8:2] and A[15:9] in 7 bits each,
 *   context         then A[63:16] a byte at a time; then the context byte
 *                   (EL [1:0], SF [4], NS [5], V [6], C [7]), the VMID if V,
 *                   the 4-byte context ID if C
 *   Long address    0x9D (64-bit, IS0), the address as above
 *   Atom format 1   0xF6 (N) / 0xF7 (E)
 *   Cycle Count     0x0E (format 1, TRCIDR0.COMMOPT = 1: no commit field), the
 *                   count less the threshold, 7 bits a byte, low first;
 *                   0x0F when the 12-bit counter (TRCIDR2.CCSIZE) saturated
 *   Exception       0x06, the info byte (E1:E0 0b01: the address that follows
 *                   is the preferred return address; TYPE 0x02: Call, an SVC,
 *                   or 0x0E: IRQ), then the long address packet of that
 *                   return address
 * A decoder walks the program image from the last address to the next
 * branch and takes one atom for it; a taken indirect branch is followed by
 * the address of its target.
 */
#include <stdlib.h>
#include <string.h>

#include "dynpmu/etm.h"
#include "dynpmu/model.h"

#define HDR_TRACE_INFO 0x01u
#define HDR_TIMESTAMP 0x02u
#define HDR_EXCEPTION 0x06u
#define HDR_CCOUNT_F1 0x0Eu
#define HDR_CCOUNT_F1_UNKNOWN 0x0Fu
#define CC_MAX 0xFFFu           /* TRCIDR2.CCSIZE: 12 bits */
#define EXC_TYPE_CALL 0x02u /* SVC, HVC, SMC */
#define EXC_TYPE_IRQ 0x0Eu
#define HDR_TRACE_ON 0x04u
#define HDR_ADDR_CTXT_L_64IS0 0x85u
#define HDR_ADDR_L_64IS0 0x9Du
#define HDR_ATOM_F1_N DPMU_ETM_HDR_ATOM_F1_N
#define HDR_ATOM_F1_E DPMU_ETM_HDR_ATOM_F1_E
#define ASYNC_ZEROS 11

int dpmu_etm_sink_init(struct dpmu_etm_sink *s, size_t size, struct dpmu_err *err)
{
	*s = (struct dpmu_etm_sink){ 0 };
	if (size < 64)
		return dpmu_err_set(err, DPMU_EINVAL, "trace buffer of %zu bytes: at least 64", size);
	s->buf = malloc(size);
	if (!s->buf)
		return dpmu_err_set(err, DPMU_ENOMEM, "trace buffer of %zu bytes: out of memory", size);
	s->size = size;
	return 0;
}

void dpmu_etm_sink_free(struct dpmu_etm_sink *s)
{
	free(s->buf);
	*s = (struct dpmu_etm_sink){ 0 };
}

void dpmu_etm_sink_reset(struct dpmu_etm_sink *s)
{
	s->wr = 0;
	s->written = 0;
	s->wrapped = false;
}

size_t dpmu_etm_sink_fill(const struct dpmu_etm_sink *s)
{
	return s->wrapped ? s->size : s->wr;
}

void dpmu_etm_sink_copy(const struct dpmu_etm_sink *s, uint8_t *out)
{
	if (!s->wrapped) {
		memcpy(out, s->buf, s->wr);
		return;
	}
	memcpy(out, s->buf + s->wr, s->size - s->wr);
	memcpy(out + (s->size - s->wr), s->buf, s->wr);
}

static void put(struct dpmu_etm_encoder *e, const uint8_t *p, size_t n)
{
	struct dpmu_etm_sink *s = e->sink;
	for (size_t i = 0; i < n; i++) {
		s->buf[s->wr++] = p[i];
		if (s->wr == s->size) {
			s->wr = 0;
			s->wrapped = true;
		}
	}
	s->written += n;
	e->since_sync += n;
	if (e->since_sync >= (1ull << e->sync_log2))
		e->sync_due = true;
}

/* A 64-bit IS0 address payload: 8 bytes. */
static size_t addr64(uint8_t *p, uint64_t a)
{
	p[0] = (uint8_t)((a >> 2) & 0x7f);
	p[1] = (uint8_t)((a >> 9) & 0x7f);
	for (int i = 2; i < 8; i++)
		p[i] = (uint8_t)(a >> (8 * i));
	return 8;
}

static size_t context(const struct dpmu_etm_encoder *e, uint8_t *p)
{
	size_t n = 0;
	p[n++] = (uint8_t)((e->el & 3) | 1u << 4 /* SF: AArch64 */ | (e->ns ? 1u << 5 : 0) |
			   (e->vmid ? 1u << 6 : 0) | (e->cid ? 1u << 7 : 0));
	if (e->vmid)
		p[n++] = e->vmid_value;
	if (e->cid)
		for (int i = 0; i < 4; i++)
			p[n++] = (uint8_t)(e->context_id >> (8 * i));
	return n;
}

static void sync(struct dpmu_etm_encoder *e)
{
	uint8_t p[ASYNC_ZEROS + 1 + 3 + 2];
	memset(p, 0, ASYNC_ZEROS);
	p[ASYNC_ZEROS] = 0x80;
	size_t n = ASYNC_ZEROS + 1;
	/* Trace Info: PLCTL names the sections that follow: INFO (bit 0 set
	 * with cycle counting; no conditional or data trace), and with cycle
	 * counting CYCT, the threshold (at most 12 bits: two 7-bit bytes). */
	p[n++] = HDR_TRACE_INFO;
	p[n++] = e->cci ? 0x09 : 0x01;
	p[n++] = e->cci ? 0x01 : 0x00;
	if (e->cci) {
		p[n++] = (uint8_t)((e->cc_threshold & 0x7f) | (e->cc_threshold > 0x7f ? 0x80 : 0));
		if (e->cc_threshold > 0x7f)
			p[n++] = (uint8_t)(e->cc_threshold >> 7);
	}
	e->since_sync = 0;
	e->sync_due = false;
	e->synced = true;
	put(e, p, n);
}

static void addr_ctxt(struct dpmu_etm_encoder *e, uint64_t a)
{
	uint8_t p[1 + 8 + 6];
	size_t n = 0;
	p[n++] = HDR_ADDR_CTXT_L_64IS0;
	n += addr64(p + n, a);
	n += context(e, p + n);
	put(e, p, n);
}

bool dpmu_etm_encoder_timestamp(struct dpmu_etm_encoder *e, uint64_t ts)
{
	if (!e->ts || !e->on)
		return false;
	uint8_t p[10];
	size_t n = 0;
	p[n++] = HDR_TIMESTAMP;
	/* Bytes 1-8 carry 7 bits each with bit 7 "another byte follows";
	 * a ninth carries the last 8 bits. At least one byte. */
	for (int i = 0; i < 8; i++) {
		uint8_t b = (uint8_t)(ts & 0x7f);
		ts >>= 7;
		if (ts)
			b |= 0x80;
		p[n++] = b;
		if (!ts)
			break;
		if (i == 7)
			p[n++] = (uint8_t)ts;
	}
	put(e, p, n);
	return true;
}

void dpmu_etm_encoder_cycles(struct dpmu_etm_encoder *e, uint64_t cycles)
{
	e->cc_now = cycles;
	/* also while tracing is off: the count of the P0 elements before an
	 * exception or a gap belongs to them */
	if (!e->cc_pending || cycles - e->cc_last < e->cc_threshold)
		return;
	uint64_t count = cycles - e->cc_last;
	uint8_t p[4];
	size_t n = 0;
	if (count > CC_MAX) {
		p[n++] = HDR_CCOUNT_F1_UNKNOWN;
	} else {
		p[n++] = HDR_CCOUNT_F1;
		uint64_t v = count - e->cc_threshold;
		do {
			p[n] = (uint8_t)(v & 0x7f);
			v >>= 7;
			if (v)
				p[n] |= 0x80;
			n++;
		} while (v);
	}
	put(e, p, n);
	e->cc_last = cycles;
	e->cc_pending = false;
}

void dpmu_etm_encoder_init(struct dpmu_etm_encoder *e, struct dpmu_etm_sink *sink,
			   uint32_t trcconfigr, uint32_t trcsyncpr, uint32_t trcccctlr)
{
	*e = (struct dpmu_etm_encoder){ 0 };
	e->sink = sink;
	e->cci = trcconfigr & DPMU_TRCCONFIGR_CCI;
	/* below TRCIDR3.CCITMIN the threshold is CCITMIN */
	uint32_t th = trcccctlr & CC_MAX;
	e->cc_threshold = th < dpmu_etm_default.ccitmin ? dpmu_etm_default.ccitmin : th;
	e->ts = trcconfigr & DPMU_TRCCONFIGR_TS;
	e->cid = trcconfigr & DPMU_TRCCONFIGR_CID;
	e->vmid = trcconfigr & DPMU_TRCCONFIGR_VMID;
	e->ns = true;
	/* TRCSYNCPR.PERIOD: 0 turns periodic sync off (we keep 2^20, the
	 * largest period, so a wrapped buffer still has syncs to find);
	 * 8..20 is 2^PERIOD bytes. */
	unsigned period = trcsyncpr & 0x1f;
	e->sync_log2 = period == 0 || period > 20 ? 20 : period < 8 ? 8 : period;
}

/* An exception of `type` with its preferred return address. The handler
 * runs at a level ViewInst does not trace (and under qemu-user not at
 * all): the return restarts the trace with Trace On and an address, as
 * after any gap. */
static void exception(struct dpmu_etm_encoder *e, unsigned type, uint64_t ret)
{
	uint8_t p[2 + 1 + 8];
	size_t n = 0;
	p[n++] = HDR_EXCEPTION;
	p[n++] = (uint8_t)(type << 1 | 0x01u); /* E1:E0 = 0b01 */
	p[n++] = HDR_ADDR_L_64IS0;
	n += addr64(p + n, ret);
	put(e, p, n);
	e->on = false;
	e->cc_pending = e->cci;
}

void dpmu_etm_encoder_interrupt(struct dpmu_etm_encoder *e, uint64_t ret_addr)
{
	if (e->on)
		exception(e, EXC_TYPE_IRQ, ret_addr);
}

void dpmu_etm_encoder_gap(struct dpmu_etm_encoder *e)
{
	e->on = false;
}

void dpmu_etm_encoder_insn(struct dpmu_etm_encoder *e, const struct dpmu_etm_insn *in,
			   uint64_t timestamp)
{
	if (in->branch == DPMU_ETM_DIRECT && dpmu_etm_encoder_atom(e, in->taken))
		return;
	if (!e->on) {
		/* The first trace after reset gets the sync it needs; a later
		 * start after a gap says so with Trace On. */
		bool first = !e->synced;
		if (first || e->sync_due)
			sync(e);
		if (!first) {
			uint8_t on = HDR_TRACE_ON;
			put(e, &on, 1);
		}
		addr_ctxt(e, in->pc);
		e->on = true;
		e->cc_last = e->cc_now; /* counting starts with the trace */
		e->cc_pending = false;
		dpmu_etm_encoder_timestamp(e, timestamp);
	}
	if (in->branch == DPMU_ETM_NOT_BRANCH)
		return;
	uint8_t p[2 + 1 + 8];
	size_t n = 0;
	if (in->branch == DPMU_ETM_EXCEPTION) {
		exception(e, EXC_TYPE_CALL, in->next);
		return;
	}
	p[n++] = in->taken ? HDR_ATOM_F1_E : HDR_ATOM_F1_N;
	if (in->branch == DPMU_ETM_INDIRECT && in->taken) {
		p[n++] = HDR_ADDR_L_64IS0;
		n += addr64(p + n, in->next);
	}
	put(e, p, n);
	e->cc_pending = e->cci;
	if (e->sync_due) {
		/* After a P0 element nothing is pending: resynchronise at the
		 * next instruction, with its address. */
		sync(e);
		addr_ctxt(e, in->next);
		dpmu_etm_encoder_timestamp(e, timestamp);
	}
}
