#!/bin/sh
# Subcommand dispatch: help, --help, unknown subcommands (message + usage,
# exit 2), no subcommand (usage, exit 2).
. "$DPMU_SOURCE_DIR/tests/integration/lib/check.sh"
run 0 "$DYNPMU" help
has out "usage: dynpmu"
for c in profiles regs demo; do has out "  $c "; done
run 0 "$DYNPMU" --help
has out "usage: dynpmu"
run 2 "$DYNPMU" frobnicate
has err "unknown command 'frobnicate'"
has err "usage: dynpmu"
run 2 "$DYNPMU"
has err "usage: dynpmu"
for c in profiles regs demo; do
	run 0 "$DYNPMU" "$c" --help
	has out "usage: dynpmu $c"
done
run 2 "$DYNPMU" profiles extra
has err "unexpected argument 'extra'"
run 2 "$DYNPMU" demo --bogus
has err "unknown argument '--bogus'"
run 2 "$DYNPMU" demo --intervals 0
has err "--intervals needs a number"
finish
