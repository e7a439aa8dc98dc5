#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A trace read over SSH side by side with the same file read where it lies, in one run: an
# OpenSSH server on a loopback port (keys made for the run, as the tests make them) stands
# in for the GPU host. N memory events (default 10M) in a native file, read three ways:
# `peaklens-cli info` (every event read), `peaklens-cli summary` (the figures the writer
# stored) and the app opening it (`peaklens --screenshot`, offscreen: the window around its
# peak, analysed and drawn). Each locally, then as ssh://HOST/PATH two ways: over a new
# connection each time (PEAKLENS_SSH_KEEP=0: what the first command to a host costs), and
# over the connection PeakLens keeps to the host (its default: every command after the
# first), both to this account as it is and to one whose shell reads no startup files. Then the same trace streamed as a run writes it: peaklens-test-livewriter writes
# it again as a collector does (a commit every 65,536 events) under `peaklens-cli record`
# here, and under `record --host` on the host, its copy here growing commit by commit and
# replaced by the finished file: the time until the finished trace is here, either way.
# Also the parts: a new SSH session, a command over the kept connection, the host
# account's shell starting as sshd starts it (its ~/.bashrc), and the file sent to /dev/null.
# Then the same reads over a 1 Gb/s link, against copying the file whole before reading it.
#   tests/bench/run_remote_bench.sh [EVENTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
events=${1:-10000000}
cli=$root/build/bin/peaklens-cli
bench=$root/build/bin/bench_tracefile
dir=$(mktemp -d)
runs=5
server=
fresh_server=
# PeakLens keeps its connections' sockets in $XDG_RUNTIME_DIR/peaklens-ssh: the run's own.
export XDG_RUNTIME_DIR=$dir/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
cleanup() {
  ssh -F "$dir/ssh_config" -o ControlPath="$XDG_RUNTIME_DIR/peaklens-ssh/%C" -O exit peaklens-bench >/dev/null 2>&1 || true
  ssh -F "$dir/ssh_config" -o ControlPath="$XDG_RUNTIME_DIR/peaklens-ssh/%C" -O exit peaklens-bench-fresh >/dev/null 2>&1 || true
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  [ -n "$fresh_server" ] && kill "$fresh_server" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

# min / median / max of the numbers on stdin, one per line
spread() { sort -g | awk '{v[NR] = $1} END {printf "%.3f / %.3f / %.3f", v[1], v[int((NR + 1) / 2)], v[NR]}'; }
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}'; }

for key in host_key user_key; do ssh-keygen -q -t ed25519 -N '' -f "$dir/$key"; done
cp "$dir/user_key.pub" "$dir/authorized_keys"
[ "$(id -u)" = 0 ] && mkdir -p /run/sshd
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$dir/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_key
AuthorizedKeysFile $dir/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $dir/sshd.pid
PermitRootLogin prohibit-password
CONF
# A second server whose sessions start with HOME at an empty folder: the account's shell
# reads no startup files, as on a new account (this account's ~/.bashrc may do much).
fresh_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir "$dir/home"
sed -e "s/^Port .*/Port $fresh_port/" -e "s#^PidFile .*#PidFile $dir/sshd-fresh.pid#" "$dir/sshd_config" > "$dir/sshd_config_fresh"
echo "SetEnv HOME=$dir/home" >> "$dir/sshd_config_fresh"
cat > "$dir/ssh_config" <<CONF
Host peaklens-bench-fresh
  Port $fresh_port
Host peaklens-bench*
  HostName 127.0.0.1
  Port $port
  User $(id -un)
  IdentityFile $dir/user_key
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  StrictHostKeyChecking accept-new
  LogLevel ERROR
CONF
/usr/sbin/sshd -D -e -f "$dir/sshd_config" 2>"$dir/sshd.log" &
server=$!
/usr/sbin/sshd -D -e -f "$dir/sshd_config_fresh" 2>"$dir/sshd_fresh.log" &
fresh_server=$!
for host in peaklens-bench peaklens-bench-fresh; do
  for _ in $(seq 50); do ssh -F "$dir/ssh_config" -o BatchMode=yes $host true 2>/dev/null && break; sleep 0.1; done
done

$bench write "$events" "$dir/trace.peaklens" >/dev/null
size=$(stat -c %s "$dir/trace.peaklens")
echo "$events events, $size bytes; seconds, min / median / max of $runs, each on its own line:"
export PEAKLENS_REMOTE_CLI=$cli PEAKLENS_SSH="ssh -F $dir/ssh_config"
remote="ssh://peaklens-bench$dir/trace.peaklens"
fresh="ssh://peaklens-bench-fresh$dir/trace.peaklens"
"$cli" summary "$remote" >/dev/null # the connections PeakLens keeps, up before the kept runs
"$cli" summary "$fresh" >/dev/null
app=$root/build/bin/peaklens
declare -A times
for _ in $(seq $runs); do
  for op in info summary app; do
    case $op in
      app) run=(env QT_QPA_PLATFORM=offscreen "$app" --screenshot "$dir/shot.png" --force) ;;
      *) run=("$cli" "$op") ;;
    esac
    times[$op-local]+="$(seconds "${run[@]}" "$dir/trace.peaklens")"$'\n'
    times[$op-new]+="$(PEAKLENS_SSH_KEEP=0 seconds "${run[@]}" "$remote")"$'\n'
    times[$op-kept]+="$(seconds "${run[@]}" "$remote")"$'\n'
    times[$op-fresh]+="$(seconds "${run[@]}" "$fresh")"$'\n'
  done
  # The run writes the trace into the folder record gives it (PEAKLENS_OUT).
  writer="$root/build/bin/peaklens-test-livewriter $dir/trace.peaklens \$PEAKLENS_OUT/run.peaklens --commit-every 65536"
  for where in local new kept; do
    rm -rf "$dir/here" "$dir/copied" "$dir"/peaklens-2*
    case $where in
      local) times[record-local]+="$(seconds "$cli" record --backend torch --out "$dir/here" -- sh -c "$writer >/dev/null")"$'\n' ;;
      *)
        keep=$([ "$where" = new ] && echo 0 || echo 300)
        times[record-$where]+="$(PEAKLENS_SSH_KEEP=$keep seconds "$cli" record --host peaklens-bench --backend torch \
          --directory "$dir" --out "$dir/copied" -- sh -c "$writer >/dev/null")"$'\n'
        cmp -s "$dir/copied/run.peaklens" "$dir"/peaklens-2*/run.peaklens || echo "the copy differs from the file on the host" >&2
        ;;
    esac
  done
  times[session]+="$(seconds ssh -F "$dir/ssh_config" peaklens-bench true)"$'\n'
  times[kept-command]+="$(seconds ssh -F "$dir/ssh_config" -o ControlPath="$XDG_RUNTIME_DIR/peaklens-ssh/%C" peaklens-bench true)"$'\n'
  times[shell]+="$(seconds env -u SHLVL SSH_CLIENT="127.0.0.1 1 22" "$(getent passwd "$(id -un)" | cut -d: -f7)" -c true)"$'\n'
  times[send]+="$(seconds ssh -F "$dir/ssh_config" -o ControlPath="$XDG_RUNTIME_DIR/peaklens-ssh/%C" peaklens-bench "$cli" send "$dir/trace.peaklens")"$'\n'
done
# Over a 1 Gb/s link (125 MB/s: the host's output through tests/bench/ratelimit.py), where
# the transfer, not the CPU, is the cost: the trace read as it arrives (kept connection),
# against copying it whole first and reading it after (the file sent to /dev/null over the
# same link, plus its local read).
rate=125000000
printf '"%s" "$@" | python3 "%s" %s\n' "$cli" "$root/tests/bench/ratelimit.py" "$rate" > "$dir/link.sh"
for _ in $(seq $runs); do
  for op in info summary app; do
    case $op in
      app) run=(env QT_QPA_PLATFORM=offscreen "$app" --screenshot "$dir/shot.png" --force) ;;
      *) run=("$cli" "$op") ;;
    esac
    times[$op-link]+="$(PEAKLENS_REMOTE_CLI="sh $dir/link.sh" seconds "${run[@]}" "$remote")"$'\n'
  done
  times[send-link]+="$(seconds ssh -F "$dir/ssh_config" -o ControlPath="$XDG_RUNTIME_DIR/peaklens-ssh/%C" peaklens-bench sh "$dir/link.sh" send "$dir/trace.peaklens")"$'\n'
done
for op in info summary app record; do
  local_median=$(printf '%s' "${times[$op-local]}" | median)
  for where in local new kept fresh; do
    [ -n "${times[$op-$where]:-}" ] || continue
    ratio=$(awk -v a="$(printf '%s' "${times[$op-$where]}" | median)" -v b="$local_median" 'BEGIN {print a / b}')
    printf '  %-8s %-6s %s   (median %.2fx local)\n' "$op" "$where" "$(printf '%s' "${times[$op-$where]}" | spread)" "$ratio"
  done
done
send_link=$(printf '%s' "${times[send-link]}" | median)
echo "  over a 1 Gb/s link (125 MB/s), medians: read as it arrives / copied whole, then read"
for op in info summary app; do
  local_median=$(printf '%s' "${times[$op-local]}" | median)
  link_median=$(printf '%s' "${times[$op-link]}" | median)
  awk -v op="$op" -v a="$link_median" -v s="$send_link" -v l="$local_median" \
    'BEGIN {printf "  %-8s %.3f / %.3f   (%.2fx local; %.0f %% of copy-then-read)\n", op, a, s + l, a / l, 100 * a / (s + l)}'
done
for what in session kept-command shell send send-link; do
  printf '  %-15s %s\n' "$what" "$(printf '%s' "${times[$what]}" | spread)"
done
echo "  local: the file where it lies; new: ssh://HOST/PATH over a new connection each time"
echo "  (PEAKLENS_SSH_KEEP=0); kept: the same over the connection PeakLens keeps (its default"
echo "  after the first command); fresh: kept, to a server whose sessions start with HOME at an"
echo "  empty folder (the account's shell reads no startup files, as on a new account); session:"
echo "  ssh HOST true, a new connection; kept-command: the same over the kept one; shell: the"
echo "  host account's shell started as sshd starts it, with its ~/.bashrc (in every remote"
echo "  command); send: peaklens-cli send over the kept connection, to /dev/null; send-link: the"
echo "  same over the 1 Gb/s link"
