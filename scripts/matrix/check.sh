#!/bin/sh
# check.sh — the promise checks of one environment × case, POSIX sh (runs under busybox in the
# guests, under container-sim, as uid 1000 on the host).
#
#   HW=hullward PROBE=probe WS=DIR ENV=label CASE=label [MODES="strict nostrict"] sh check.sh
#
# For each mode it runs one `hullward run` whose program tries every attack and its legitimate
# neighbour from inside the sandboxed child (with scripts/matrix/probe), then looks at the host
# side for what landed. The modes: strict, nostrict (`--no-strict`), and served-strict,
# served-nostrict: the same program sent with `run --connect` to a `hullward serve` started for
# the mode (with `--no-strict` or not), after a first call, `keep/.env` replaced by a rename over
# it, a second call and a pause, so that the call may run in the sandbox the server made ahead of
# it (supervisor::ready); a server that refuses to start
# is that mode's refusal. Output, one line each (the evaluator, run.sh, reads only these):
#   MXRUN|env|case|mode|rc=N|err=<its stderr, lines joined by ' // '>  how hullward ended
#   MXCHK|env|case|mode|check|held=yes|no|<probe answer>  one per check, only when the program ran
#   MXINFO|env|case|mode|pid1_age=N  ticks (1/100 s) since the sandbox's PID 1 started, when the
#                                     program checks
#                                     (the program is PID 2 of its PID namespace, and /proc is
#                                     that namespace's; else none)
# Files under WS are the caller's own and world-readable: a denial can only come from the sandbox,
# never from mode bits.
HW=${HW:?HW=hullward binary}; PROBE=${PROBE:?PROBE=probe binary}; WS=${WS:?WS=work dir}
ENV=${ENV:-$(uname -r)}; CASE=${CASE:-$(id -u)}; MODES=${MODES:-strict nostrict}
PORT=${PORT:-$((20000 + $$ % 20000))}; ABS=mx-abstract-$$
SECRET=mx-secret-$$-value; OUTSIDE_NEEDLE=mx-outside-$$; INSIDE_NEEDLE=mx-inside-$$
VICTIM_NEEDLE=mx-victim-env-$$

rm -rf "$WS"; mkdir -p "$WS/root/sub" "$WS/root/keep" "$WS/outside" "$WS/home" || exit 1
chmod 755 "$WS" "$WS/root" "$WS/root/sub" "$WS/root/keep"; chmod 777 "$WS/outside"
printf 'SECRET_TOKEN=%s\n' "$SECRET" > "$WS/root/.env"
printf 'SECRET_TOKEN=%s\n' "$SECRET" > "$WS/root/keep/.env"
printf '%s\n' "$INSIDE_NEEDLE" > "$WS/root/README.md"
printf '%s\n' "$OUTSIDE_NEEDLE" > "$WS/outside/notes.txt"
cp "$PROBE" "$WS/root/probe" && chmod 755 "$WS/root/probe"
chmod 644 "$WS/root/.env" "$WS/root/keep/.env" "$WS/root/README.md" "$WS/outside/notes.txt"
# Writable is the work dir's own scratch: the default /tmp would cover "outside" (and the whole
# work dir) when WS lives under /tmp and no mount namespace gives the call a private /tmp.
mkdir -p "$WS/scratch"
printf 'Sandbox:\n  Writable: [%s]\n  Limits:\n    Processes: 32\n' "$WS/scratch" > "$WS/hullward.yaml"
export HULLWARD_HOME="$WS/home"

"$PROBE" listen-tcp 0.0.0.0 "$PORT" 900 >/dev/null 2>&1 & LTCP=$!
"$PROBE" listen-abstract "$ABS" 900 >/dev/null 2>&1 & LABS=$!
"$PROBE" listen-unix "$WS/outside/mx.sock" 900 >/dev/null 2>&1 & LUNIX=$!
# The victim carries a value in its environment that only a read of /proc/PID/environ shows.
env MX_VICTIM_ENV="$VICTIM_NEEDLE" sleep 900 & VICTIM=$!
HOSTIP=$(ip -4 -o addr show scope global 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -1)
sleep 1
echo "MXENV|$ENV|$CASE|kernel=$(uname -r)|uid=$(id -u)|hostip=${HOSTIP:-none}|$("$HW" --version 2>&1 | head -1)"

# The program of the call: one `name answer` line per check.
PROGRAM="
p() { n=\$1; shift; echo \"\$n \$(./probe \"\$@\")\"; }
p env_read read .env $SECRET
p outside_read read $WS/outside/notes.txt $OUTSIDE_NEEDLE
p inside_read read README.md $INSIDE_NEEDLE
p outside_write write $WS/outside/planted
p vartmp_write write /var/tmp/mx-planted-$$
p inside_write write made-inside
p inside_subdir_write write sub/made-inside
p tcp_loopback tcp 127.0.0.1 $PORT
${HOSTIP:+p tcp_host tcp $HOSTIP $PORT}
p abstract_host abstract $ABS
p unix_host unix $WS/outside/mx.sock
p proc_environ_host read /proc/$VICTIM/environ $VICTIM_NEEDLE
p signal_host kill $VICTIM
p signal_self kill \$\$
p fork_past_limit fork 200
p fork_within_limit fork 8
read -r st < /proc/self/stat; set -- \$st; seen=\$1
read -r st < /proc/1/stat; set -- \$st; init=\${22}
read -r up idle < /proc/uptime; s=\${up%.*}; c=\${up#*.}; c=\${c#0}
[ \$\$ = 2 ] && [ \"\$seen\" = 2 ] && echo \"pid1_age \$((s * 100 + c - init))\" ||
  echo \"pid1_age no /proc of its own PID namespace (the program is PID \$\$, /proc says \$seen)\"
true"

answer() { sed -n "s/^$1 //p" "$WS/out" | head -1; }
report() { # check held answer
  echo "MXCHK|$ENV|$CASE|$mode|$1|held=$2|${3:-no answer}"
}
denied() { case $(answer "$1") in DENIED*) report "$1" yes "$(answer "$1")" ;; *) report "$1" no "$(answer "$1")" ;; esac; }
ok() { case $(answer "$1") in OK*) report "$1" yes "$(answer "$1")" ;; *) report "$1" no "$(answer "$1")" ;; esac; }
not_found() { case $(answer "$1") in "OK found"*|"") report "$1" no "$(answer "$1")" ;; *) report "$1" yes "$(answer "$1")" ;; esac; }
not_landed() { # check host-path
  if [ -e "$2" ]; then report "$1" no "$(answer "$1"); landed on the host: $2"; rm -f "$2"
  else report "$1" yes "$(answer "$1"); nothing on the host"; fi
}

# served FLAGS: the program through a server started here with FLAGS; sets rc, writes out and err
# (the call's stderr, then the server's: --no-strict's "running without" lines are the server's)
served() {
  sockdir=$(mktemp -d /tmp/mx-sock.XXXXXX) || return
  # shellcheck disable=SC2086 # $1 is empty or one flag
  "$HW" serve --socket "$sockdir/s" --config "$WS/hullward.yaml" --unattended-policy allow --hitl off $1 \
    </dev/null >/dev/null 2>"$WS/serve.err" &
  server=$!
  n=0
  while [ ! -S "$sockdir/s" ] && kill -0 "$server" 2>/dev/null && [ $n -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done
  if [ -S "$sockdir/s" ]; then
    "$HW" run --connect "$sockdir/s" --timeout 120s -- true </dev/null >/dev/null 2>&1
    # A .env the server knows is replaced by a rename over it (same content, another inode) in a
    # subdirectory, which the next walk replays around: from here on the walks must stat the new
    # file, not the one the server held open (sandbox::held), or the program's call cannot mount
    # its mask.
    cp -p keep/.env keep/.env.mx-new && mv keep/.env.mx-new keep/.env
    "$HW" run --connect "$sockdir/s" --timeout 120s -- true </dev/null >/dev/null 2>&1
    sleep 2 # the server makes the next call's sandbox now
    "$HW" run --connect "$sockdir/s" --timeout 120s -- sh -c "$PROGRAM" </dev/null >"$WS/out" 2>"$WS/err"
    rc=$?
    kill -TERM "$server"
    wait "$server"
  else
    wait "$server"
    rc=$?
    : >"$WS/out" >"$WS/err"
  fi
  cat "$WS/serve.err" >>"$WS/err"
  rm -rf "$sockdir"
}

cd "$WS/root" || exit 1
for mode in $MODES; do
  case ${mode#served-} in strict) flags= ;; nostrict) flags=--no-strict ;; *) echo "check.sh: unknown mode $mode" >&2; continue ;; esac
  rm -f "$WS/root/made-inside" "$WS/root/sub/made-inside" "$WS/outside/planted" "/var/tmp/mx-planted-$$"
  case $mode in
    served-*) served "$flags" ;;
    *) # shellcheck disable=SC2086 # $flags is empty or one flag
      "$HW" run --config "$WS/hullward.yaml" --timeout 120s $flags -- sh -c "$PROGRAM" </dev/null >"$WS/out" 2>"$WS/err"
      rc=$? ;;
  esac
  sed "s/^/  [$mode] out: /" "$WS/out"; sed "s/^/  [$mode] err: /" "$WS/err" | head -20
  echo "MXRUN|$ENV|$CASE|$mode|rc=$rc|err=$(awk 'NF { gsub(/[|]/, "/"); sub(/^[ \t]+/, ""); printf "%s%s", (n++ ? " // " : ""), $0 }' "$WS/err" | cut -c1-1500)"
  grep -q '^env_read ' "$WS/out" || continue
  echo "MXINFO|$ENV|$CASE|$mode|pid1_age=$(answer pid1_age)"
  not_found env_read
  not_found outside_read
  case $(answer inside_read) in "OK found"*) report inside_read yes "$(answer inside_read)" ;; *) report inside_read no "$(answer inside_read)" ;; esac
  not_landed outside_write "$WS/outside/planted"
  not_landed vartmp_write "/var/tmp/mx-planted-$$"
  if grep -qx probe "$WS/root/made-inside" 2>/dev/null; then report inside_write yes "$(answer inside_write); on the host"
  else report inside_write no "$(answer inside_write); not on the host"; fi
  if grep -qx probe "$WS/root/sub/made-inside" 2>/dev/null; then report inside_subdir_write yes "$(answer inside_subdir_write); on the host"
  else report inside_subdir_write no "$(answer inside_subdir_write); not on the host"; fi
  denied tcp_loopback
  [ -n "$HOSTIP" ] && denied tcp_host
  denied abstract_host
  denied unix_host
  not_found proc_environ_host
  denied signal_host
  ok signal_self
  denied fork_past_limit
  ok fork_within_limit
done
kill "$LTCP" "$LABS" "$LUNIX" "$VICTIM" 2>/dev/null
wait 2>/dev/null
exit 0
