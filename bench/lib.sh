# Shared by the bench scripts (sourced): wall-clock timing.
# Needs RUNS (how many runs) and T/input (each run's stdin).
now() { date +%s.%N; }
# The best wall time of RUNS runs of CMD... (stdin from $T/input).
best() {
	b=
	for _ in $(seq "$RUNS"); do
		t0=$(now)
		"$@" <"$T/input" >/dev/null 2>&1
		t=$(echo "$(now) - $t0" | bc -l)
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
	done
	echo "$b"
}
