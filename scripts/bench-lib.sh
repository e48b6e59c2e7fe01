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

# Writes a C project of 200 small files and a Makefile (`make -j2` builds `prog`, `make clean`
# removes the objects) into DIR: the build workload of bench-work and bench-overlay.
make_c_project() {
python3 - "$1" <<'PY'
import sys
root = sys.argv[1]
for i in range(200):
    with open(f"{root}/f{i}.c", "w") as f:
        f.write("#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n")
        f.write(f"int f{i}(const char *s) {{ char b[64]; strncpy(b, s, 63); b[63] = 0; "
                f"return (int)strlen(b) * {i} + atoi(s); }}\n")
with open(f"{root}/main.c", "w") as f:
    f.write("int main(void) { return 0; }\n")
objs = " ".join(f"f{i}.o" for i in range(200))
with open(f"{root}/Makefile", "w") as f:
    f.write(f"prog: main.o {objs}\n\tcc -o $@ $^\n%.o: %.c\n\tcc -O1 -c -o $@ $<\n"
            "clean:\n\trm -f *.o prog\n")
PY
}

# Makes (once: DIR/.done marks it complete) the workspace of benches/plan.rs in DIR: FILES files
# in directories of 50 (`pkg{d % 40}/mod{d}/file{f}.rs`), a `.env` in every 10th directory. The
# same layout as `make_tree` there, so `cargo bench --bench plan` and bench-walk share the trees
# under target/bench-plan.
make_plan_tree() {
  local dir=$1 files=$2
  [ -e "$dir/.done" ] && return 0
  rm -rf "$dir" && mkdir -p "$dir"
python3 - "$dir" "$files" <<'PY'
import os, sys
root, files = sys.argv[1], int(sys.argv[2])
per_dir = 50
for d in range((files + per_dir - 1) // per_dir):
    path = os.path.join(root, f"pkg{d % 40}", f"mod{d}")
    os.makedirs(path, exist_ok=True)
    for f in range(min(per_dir, files - d * per_dir)):
        with open(os.path.join(path, f"file{f}.rs"), "wb") as out:
            out.write(b"x")
    if d % 10 == 0:
        with open(os.path.join(path, ".env"), "wb") as out:
            out.write(b"TOKEN=abcdefgh12345")
PY
  touch "$dir/.done"
}

# Makes DIR a git repository of FILES small files (50 packages of directories of 500), all
# committed and clean: the `git status` workload of bench-work and bench-overlay. Built once
# and reused while DIR/.done exists.
make_git_repo() {
  local repo=$1 files=$2
  [ -e "$repo/.done" ] && return
  rm -rf "$repo" && mkdir -p "$repo"
  python3 - "$repo" "$files" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"pkg{i % 50}", f"mod{i // 500}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"file{i}.txt"), "w") as f:
        f.write(f"line {i}\n")
PY
  (cd "$repo" && /usr/bin/git init -q && /usr/bin/git add -A \
    && /usr/bin/git -c user.name=b -c user.email=b@b commit -qm init)
  touch "$repo/.done"
}

# Prints one hyperfine JSON export (FILE) as NAME (load LOAD): each command's median and CPU, and
# their difference to the command named BASE, in ms and in %.
report_against() {
  python3 - "$@" <<'PY'
import json, sys
path, name, load, base = sys.argv[1:5]
res = {r["command"]: r for r in json.load(open(path))["results"]}
b = res[base]
print(f"{name} (load {load}):")
for k, r in res.items():
    cpu, bcpu = r["user"] + r["system"], b["user"] + b["system"]
    print(f"  {k:>9}: median {r['median']*1000:9.1f} ms ({(r['median']-b['median'])*1000:+8.1f} ms,"
          f" {(r['median']/b['median']-1)*100:+6.1f} %)   cpu {cpu*1000:9.1f} ms ({(cpu-bcpu)*1000:+8.1f} ms,"
          f" {(cpu/bcpu-1)*100:+6.1f} %)")
PY
}
