#!/usr/bin/env bash
# CI check for the generated documentation:
#   1. docs/man/ and completions/ are what scripts/gen-docs.sh generates from the current
#      command line (no drift);
#   2. every man page renders with `man -l` without a warning;
#   3. the bash completion loads and completes a subcommand; zsh and fish parse theirs when
#      those shells are installed.
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "check-docs: $*" >&2; exit 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cargo run --quiet --locked --example gen-docs -- "$scratch"
for dir in docs/man completions; do
  diff -ru "$dir" "$scratch/$dir" >"$scratch/drift.diff" ||
    { cat "$scratch/drift.diff" >&2; fail "$dir/ differs from the command line: run scripts/gen-docs.sh and commit"; }
done

command -v man >/dev/null || fail "man is missing (Debian: apt-get install man-db)"
for page in docs/man/*.1; do
  warnings=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$page" 2>&1 >/dev/null) || fail "$page does not render"
  [ -z "$warnings" ] || fail "$page renders with warnings: $warnings"
  MANWIDTH=80 man -l "$page" 2>/dev/null | grep -q '^NAME' || fail "$page has no NAME section"
done

completed=$(bash -c 'source completions/hullward.bash && complete -p hullward >/dev/null &&
  COMP_WORDS=(hullward au) COMP_CWORD=1 COMP_LINE="hullward au" COMP_POINT=11 && _hullward hullward au hullward &&
  echo "${COMPREPLY[*]}"')
[ "$completed" = "audit" ] || fail "bash completion of 'hullward au' gave '$completed', not 'audit'"
if command -v zsh >/dev/null; then zsh -n completions/_hullward || fail "zsh cannot parse completions/_hullward"; fi
if command -v fish >/dev/null; then fish -n completions/hullward.fish || fail "fish cannot parse completions/hullward.fish"; fi
echo "check-docs: $(ls docs/man | wc -l) man pages and 3 completions are current, render and load"
