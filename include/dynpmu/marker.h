/*
 * Region markers for guest programs run with `dynpmu stat -- PROGRAM`
 * (docs/frontend.md "Regions"): counts are reported per named region, the
 * way LIKWID's marker API reports them.
 *
 *     #include <dynpmu/marker.h>
 *     DPMU_REGION_BEGIN("compress");
 *     ... work ...
 *     DPMU_REGION_END("compress");
 *
 * Each marker is a two-instruction sequence with no architectural effect
 * that dynpmu's qemu plugin recognises when it translates the code:
 *
 *     orr  x3, x3, x3      BEGIN  (0xaa030063)   or   orr x4, x4, x4  END (0xaa040084)
 *     ldrb wzr, [xN]       xN holds the address of the region's name
 *
 * `orr xD, xD, xD` leaves xD unchanged and compilers never emit it (their
 * register move is `orr xD, xzr, xM`), so it cannot be mistaken for program
 * code. The byte load into the zero register discards its value; the plugin
 * takes the name's address from the load's memory callback. Both
 * instructions retire and count (INST_RETIRED, and the load in LD_RETIRED /
 * MEM_ACCESS): a marker pair costs two instructions and one L1D access.
 *
 * Names are NUL-terminated strings of at most DPMU_MARKER_NAME_MAX - 1
 * bytes (longer ones are cut); a region may be entered many times and
 * regions may nest. On a non-aarch64 build (for example the native build of
 * a workload run under another tool) the markers compile to nothing.
 */
#ifndef DYNPMU_MARKER_H
#define DYNPMU_MARKER_H

#define DPMU_MARKER_NAME_MAX 48

/* The marker instructions' encodings, shared by the plugin's decoder. */
#define DPMU_MARKER_BEGIN_INSN 0xaa030063u  /* orr x3, x3, x3 */
#define DPMU_MARKER_END_INSN 0xaa040084u    /* orr x4, x4, x4 */
#define DPMU_MARKER_LOAD_MASK 0xfffffc1fu   /* ldrb wzr, [xN, #0]: any xN */
#define DPMU_MARKER_LOAD_INSN 0x3940001fu

#if defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define DPMU_MARKER_(magic, name)                                                   \
	__asm__ __volatile__(magic "\n\tldrb wzr, [%0]" : : "r"((const char *)(name)) \
			     : "memory")
#define DPMU_REGION_BEGIN(name) DPMU_MARKER_("orr x3, x3, x3", name)
#define DPMU_REGION_END(name) DPMU_MARKER_("orr x4, x4, x4", name)
#else
#define DPMU_REGION_BEGIN(name) ((void)(name))
#define DPMU_REGION_END(name) ((void)(name))
#endif

#endif
