# Shared set-up of the benchmark scripts (sourced, not run): installs hyperfine and bubblewrap
# when missing and builds the release binary into $BIN unless the caller set BIN.
bench_setup() {
  local need=()
  command -v hyperfine >/dev/null || need+=(hyperfine)
  command -v bwrap >/dev/null || need+=(bubblewrap)
  if [ ${#need[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
  if [ -z "${BIN:-}" ]; then
    cargo build --release --quiet
    BIN=$PWD/target/release/hullward
  fi
}
