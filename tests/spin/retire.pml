/*
 * Retirement by nonce, seed 002 "Unified COND nonce", over two runs of the
 * collector. The producer alone writes COND; COND survives from one epoch to
 * the next. In each epoch the collector resets the request, reads the
 * producer's retained COND, picks the nonce that differs from it, stores the
 * request and accepts only COND == that nonce before one shared deadline.
 * The producer answers epoch 1; before epoch 2 it may go silent for good (a core
 * that skipped the launch).
 *
 * A producer that misses the deadline ends the sequence of runs: reusing its
 * ring needs its owner's recovery first, which dpmu_collect_start enforces.
 *
 * Properties: an accepted echo was written in this epoch, not left over from
 * an earlier one (seen == epoch), and everything the producer published before it is there
 * (head == produced). The collector always finishes: a silent producer is
 * reported at the deadline, never waited on forever.
 *
 * Variant that must fail: -DREUSE_NONCE (one fixed nonce for every epoch).
 */
#define IDLE 0
#define NONCE_A 241
#define NONCE_B 242
#define RUNS 2

byte cond = IDLE;     /* producer-written, retained across runs */
byte request = 0;     /* collector-written */
byte epoch = 0;         /* ghost: the current epoch */
byte seen = 0;        /* ghost: the epoch in which COND was last written */
byte head = 0;        /* producer-published records */
byte produced = 0;    /* ghost: records the producer wrote */
bit silent_run2;      /* ghost: chosen once, the producer skips epoch 2 */
bit done = 0;

active proctype producer()
{
	byte req, echoed = IDLE;
	if
	:: silent_run2 = 1
	:: silent_run2 = 0
	fi;
end_loop:
	do
	:: done -> break
	:: !done && !(silent_run2 && epoch == 2) ->
		if
		:: produced < 4 && request == 0 ->
			produced++                  /* stage a record (push) */
		:: skip
		fi;
		req = request;
		if
		:: req != 0 && req != echoed ->
			head = produced;            /* complete preceding writes */
			atomic {
				seen = epoch;       /* ghost: when this echo was written */
				cond = req          /* publish the nonce once */
			};
			echoed = req
		:: else -> skip
		fi
	od
}

active proctype collector()
{
	byte nonce, obs;
	do
	:: epoch < RUNS ->
		request = 0;                        /* reset before the epoch */
		epoch++;
		obs = cond;                         /* the retained COND */
#ifdef REUSE_NONCE
		nonce = NONCE_A;
#else
		if
		:: obs == NONCE_A -> nonce = NONCE_B
		:: else -> nonce = NONCE_A
		fi;
#endif
		request = nonce;
		do
		:: cond == nonce ->                 /* only the matching echo counts */
			assert(seen == epoch);
			assert(head == produced);
			break
		:: true ->                          /* the shared deadline expired */
			/* The producer is reported silent. Its ring is not reused
			 * until its owner recovers it (seed 002: "Descriptor reuse
			 * still requires the previous generation to have completed
			 * or been recovered"): without that, a late answer to this
			 * request could be taken for the next one. */
			goto finish
		od
	:: else -> break
	od;
finish:
	done = 1
}
