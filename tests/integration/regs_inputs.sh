#!/bin/sh
# dynpmu regs: script from stdin or '-', a missing script file, a bad
# --profile (unknown name, malformed file), too many arguments.
. "$DPMU_SOURCE_DIR/tests/integration/lib/check.sh"
printf 'sysread cpu0 PMCR_EL0\nexpect 0x410A3000\n' >"$tmp/s.regs"
run 0 sh -c "'$DYNPMU' regs < '$tmp/s.regs'"
has out "0x00000000410a3000"
run 0 sh -c "'$DYNPMU' regs - < '$tmp/s.regs'"
has out "0x00000000410a3000"
run 0 "$DYNPMU" regs --profile a75x4-a55x4-dsu120 "$tmp/s.regs"
run 2 "$DYNPMU" regs "$tmp/no-such-script.regs"
has err "cannot open script"
has err "no-such-script.regs"
run 2 "$DYNPMU" regs --profile no-such-profile "$tmp/s.regs"
has err "no-such-profile"
printf '{ "name": "broken", ' >"$tmp/broken.json"
run 2 "$DYNPMU" regs --profile "$tmp/broken.json" "$tmp/s.regs"
has err "broken.json"
printf '{ "name": "x" }\n' >"$tmp/incomplete.json"
run 2 "$DYNPMU" regs --profile "$tmp/incomplete.json" "$tmp/s.regs"
has err "incomplete.json"
run 2 "$DYNPMU" regs --profile
has err "--profile needs"
run 2 "$DYNPMU" regs "$tmp/s.regs" "$tmp/s.regs"
has err "one SCRIPT at most"
run 2 "$DYNPMU" regs --frob
has err "unknown option '--frob'"
finish
