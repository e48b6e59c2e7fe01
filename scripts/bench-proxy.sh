#!/usr/bin/env bash
# Benchmarks the egress proxy in the network lab (tests/support/netlab.rs; needs root, iproute2,
# curl, openssl, python3): a 100 MB file direct and through the proxy (plain HTTP and a CONNECT
# tunnel), throughput ratio (target >= 0.8), and the latency the proxy adds to getting a
# connection to the origin (median, target < 1 ms). Release build; nothing leaves the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --release --test proxy -- --ignored --exact bench_throughput_and_connect_latency --nocapture "$@"
