# In the guest (tests/vm/run.sh, from tests/vm/dynpmu_perf.sh): run the
# static dynpmu's perf backend over the known loop and print each run as a
# section, for the host to check:
#   === NAME rc=N
#   (the report dynpmu wrote with -o)
#   --- stderr
#   (its standard error)
# Each section's name goes to standard error (the console) as it starts,
# so that a run which never ends names itself; each run has SECTION_S
# seconds before timeout ends it (rc 124 or 143; the host's check then
# names the section).
# Arguments: DYNPMU (its file name in /test) EVENTS8 N_MUX INTERVAL_MS
dynpmu=./$1 events8=$2 n=$3 ims=$4
section_s=60

section() { # NAME DYNPMU-ARGS...: one run of dynpmu, report in /tmp/r
	name=$1
	shift
	rm -f /tmp/r
	# Let the guest settle first: under QEMU whatever else runs while the
	# program counts (on either vCPU) can add to its count.
	sleep 1
	echo "dynpmu_perf: section $name at $(cut -d' ' -f1 /proc/uptime) s" >&2
	# On CPU 0, and so the program it starts: under QEMU a program that
	# moves to the other vCPU gets some 2,800 EL0 instructions more counted,
	# varying run to run (docs/hardware.md); pinned, every run is exact.
	timeout "$section_s" taskset 1 "$dynpmu" "$@" >/tmp/so 2>/tmp/se
	rc=$?
	case $rc in 124|143) echo "dynpmu_perf: section $name did not end within $section_s s" >>/tmp/se ;; esac
	echo "=== $name rc=$rc"
	[ -f /tmp/r ] && cat /tmp/r
	echo "--- stderr"
	cat /tmp/so /tmp/se
}

# INST_RETIRED exact: the same program twice, and with N three times larger
# (the same number of digits, so the same code runs around the loop).
section exact1 stat --backend perf -x, -o /tmp/r -e instructions:u -- ./loop 1000000
section exact1b stat --backend perf -x, -o /tmp/r -e instructions:u -- ./loop 1000000
section exact3 stat --backend perf -x, -o /tmp/r -e instructions:u -- ./loop 3000000
# Each of the eight alone, then all eight on the six counters.
i=0
for ev in $(echo "$events8" | tr , ' '); do
	i=$((i + 1))
	section "single$i" stat --backend perf -x, -o /tmp/r -e "$ev" -- ./loop "$n"
done
section mux stat --backend perf -x, -o /tmp/r -e "$events8" -- ./loop "$n"
# Interval rows (-I, perf's: one row per event per interval, the count in it).
section interval stat --backend perf -x, -o /tmp/r -I "$ims" -e instructions:u -- ./loop "$n"
section json stat --backend perf --json -o /tmp/r -e instructions:u,cycles:u -- ./loop 1000000
# Bad input: a clear message and a non-zero exit.
section badevent stat --backend perf -x, -o /tmp/r -e no_such_event -- ./loop 1
section badprog stat --backend perf -x, -o /tmp/r -e instructions:u -- ./no_such_program
exit 0
