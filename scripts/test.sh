#!/usr/bin/env bash
# The whole test suite: unit, property and integration tests against the real kernel.
# Needs root (namespaces, mounts, cgroups) on Linux with Landlock; see README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --locked "$@"
