/*
 * The staging-slot hand-off of seed 002 "The AICore -> AICPU path", over
 * several rounds of reuse of one slot:
 *
 *   writer: store fields + seq (into its own, non-coherent cache line);
 *           dcci (push the line to memory); dsb; write FIN(seq) to COND
 *   reader: dispatch seq; read COND until FIN(seq); rmb; read the slot
 *
 * The reader's slot load may be satisfied speculatively before the COND read
 * unless a load-load barrier separates them (seed 002: Device COND and a
 * Normal slot are not ordered without a dependency). The property: whatever
 * the reader reads after seeing FIN(r) is round r's record.
 *
 * Variants that must fail:  -DNO_RMB   the reader drops the barrier
 *                           -DNO_CLEAN the writer signals without dcci
 */
#define ROUNDS 3

byte dispatch = 0;  /* reader-owned: the round the writer may fill */
byte mem_slot = 0;  /* the slot's line in memory (Normal cacheable) */
byte cond = 0;      /* COND (Device memory): the FIN of the last round */
byte wline = 0;     /* the writer's private cached copy of the slot line */

active proctype writer()
{
	byte r = 1;
	do
	:: r <= ROUNDS ->
		dispatch == r;          /* wait for the dispatch of round r */
		wline = r;              /* fields, then seq last, in its cache */
#ifndef NO_CLEAN
		mem_slot = wline;       /* dcci: the whole line reaches memory */
#endif
		/* dsb: the clean completes before FIN is written */
		cond = r;
		r++
	:: else -> break
	od;
	/* A non-coherent line may still be evicted eventually. */
	mem_slot = wline
}

active proctype reader()
{
	byte r = 1;
	byte v, c;
	bit early;
	do
	:: r <= ROUNDS ->
		dispatch = r;
again:
		early = 0;
#ifdef NO_RMB
		/* Without rmb the slot load may be satisfied before COND's. */
		if
		:: v = mem_slot; early = 1
		:: skip
		fi;
#endif
		c = cond;
		if
		:: c != r -> goto again
		:: else -> skip
		fi;
		/* rmb (dsb ld) here in the protocol */
		if
		:: !early -> v = mem_slot
		:: else -> skip
		fi;
		assert(v == r);         /* the record is this round's */
		r++
	:: else -> break
	od
}
