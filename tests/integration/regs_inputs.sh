#!/bin/sh
# dynpmu regs: script from stdin or '-', a missing script file, a bad
# --profile (unknown name, malformed file), too many arguments, a binary
# script; a bad line or failed expect is summed up on stderr with the
# script's name.
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
# the transcript on stdout, why the status is not 0 on stderr
printf 'sysread cpu0 PMCR_EL0\nexpect 0x5\nsysred cpu0 PMCR_EL0\nbogus\n' >"$tmp/bad.regs"
run 2 "$DYNPMU" regs "$tmp/bad.regs"
has out "line 2: expect failed"
has out "line 3: unknown command 'sysred'; did you mean sysread?"
has err "bad.regs: 2 bad lines, the first at line 3"
has err "bad.regs: 1 expect failed, the first at line 2"
printf 'sysread cpu0 PMCR_EL0\nexpect 0x5\n' >"$tmp/expect.regs"
run 1 sh -c "'$DYNPMU' regs < '$tmp/expect.regs'"
has err "standard input: 1 expect failed, the first at line 2"
# a binary file: its bytes named, not echoed; a comment may hold any text
printf 'sys\001read cpu0 PMCR_EL0\n\377\376\n' >"$tmp/bin.regs"
run 2 "$DYNPMU" regs "$tmp/bin.regs"
has out "line 1: byte 0x01 at column 4 is not text"
has out "line 2: byte 0xff at column 1 is not text"
printf 'sysread cpu0 PMCR_EL0 # r\303\251sum\303\251\n' >"$tmp/utf8.regs"
run 0 "$DYNPMU" regs "$tmp/utf8.regs"
finish
