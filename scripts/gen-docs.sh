#!/usr/bin/env bash
# Regenerates the man pages (docs/man/) and shell completions (completions/) from the clap
# definition of the command line. Run it after changing a command, a flag or a help text, and
# commit the result; scripts/check-docs.sh (CI) fails while they differ.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf docs/man completions
cargo run --quiet --locked --example gen-docs -- .
echo "generated: $(ls docs/man | wc -l) man pages in docs/man/, $(ls completions | wc -l) completions in completions/"
