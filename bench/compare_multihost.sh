#!/usr/bin/env bash
# Kolo vs OpenMPI across "hosts" joined by rate-limited links, on this one machine.
#
#   sudo bench/compare_multihost.sh                       # 2 hosts x 1 rank, 1 Gbit/s links
#   sudo bench/compare_multihost.sh --hosts 2 --slots 2   # 2 hosts x 2 ranks
#   sudo bench/compare_multihost.sh -e 16M -n 5 -w 1 -r 1 # a quick look
#
# Each host is a network namespace with its own hostname and its own /dev/shm (so nothing
# on-host can cross to another host), one veth link to a switch (a bridge in a "launcher"
# namespace) and its own sshd on port 2222. Both ends of every link are limited with
#   tc qdisc add dev <veth> root tbf rate 1gbit burst <B> latency <L>
# so each host sends and receives at most the link rate, as through a 1 Gbit/s switch port
# (netem is not available; the links add no delay). From the launcher namespace it runs,
# interleaved, --repeats times each:
#   kolorun -np N -H h1:S,h2:S -p 2222 ... build/bin/kolo-bench COLL -b 1M -e 64M -f 4 ...
#   mpirun -np N -H h1:S,h2:S --mca btl tcp,vader,self --mca btl_tcp_if_include <subnet> \
#       build/bin/mpi-bench COLL ...
# and prints per size the median time, busbw, busbw as a share of the link rate and the speed
# ratio kolo/mpi (OpenMPI's time over Kolo's). With one rank per host the link bounds busbw
# at the link rate. With S > 1 ranks per host the host's ranks share one link and the least
# a host must send is 2(H-1)/H (allreduce) or (H-1)/H (allgather) of the data, so the bound
# is the link rate x busfactor(N ranks) / busfactor(H hosts): the "of bound" column.
# A single TCP stream over one link is measured first, as the practical ceiling (TCP/IP and
# Ethernet headers take ~4.5% of a 1500-byte frame).
#
# Needs root, iproute2 (ip, tc with tbf), unshare, openssh (sshd, ssh, ssh-keygen), OpenMPI
# (mpirun) and `make build` (kolo-bench, mpi-bench, kolorun). Everything it creates (the
# namespaces with their links, sshd, any process in them, the temp dir) is removed on exit,
# also on failure or Ctrl-C; namespaces left by a killed earlier run are removed at start.
#
# Exit status: 0 all runs right, 1 a run failed or got a wrong result, 2 cannot run here.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$repo/build}
hosts=2 slots=1 min=1M max=64M factor=4 iters=10 warmup=2 repeats=3
rate=1gbit burst=128kb latency=10ms collectives=allreduce,allgather tools=kolo,mpi
mpi_btl=tcp,vader,self mpi_args="" markdown="" keep=""
run_timeout=600

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  cat <<EOF
Options (defaults in brackets):
  --hosts H [$hosts]          number of hosts (2-200)
  --slots S [$slots]          ranks per host
  -b MIN [$min] -e MAX [$max] -f FACTOR [$factor]   sizes, as kolo-bench
  -n ITERS [$iters] -w WARMUP [$warmup]             timed and warm-up iterations per size
  -r, --repeats R [$repeats]   runs of each; the tables show medians
  --collectives LIST [$collectives]
  --tools LIST [$tools]      kolo, mpi or both
  --rate RATE [$rate] --burst B [$burst] --latency L [$latency]   the links' tbf
  --mpi-btl LIST [$mpi_btl]   OpenMPI's transports (vader: its shared memory, on-host only)
  --mpi-args "ARGS"           more mpirun arguments, e.g. "--mca mpi_yield_when_idle 1"
  --run-timeout S [$run_timeout]   seconds one benchmark run may take
  --markdown FILE             also write the tables as Markdown
  --keep-logs DIR             copy every run's output there
EOF
}

die() { echo "compare_multihost: $*" >&2; exit 2; }
command_line="bench/compare_multihost.sh${*:+ $*}"
while [[ $# -gt 0 ]]; do
  case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --slots) slots=$2; shift 2 ;;
    -b) min=$2; shift 2 ;;
    -e) max=$2; shift 2 ;;
    -f) factor=$2; shift 2 ;;
    -n) iters=$2; shift 2 ;;
    -w) warmup=$2; shift 2 ;;
    -r|--repeats) repeats=$2; shift 2 ;;
    --collectives) collectives=$2; shift 2 ;;
    --tools) tools=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --burst) burst=$2; shift 2 ;;
    --latency) latency=$2; shift 2 ;;
    --mpi-btl) mpi_btl=$2; shift 2 ;;
    --mpi-args) mpi_args=$2; shift 2 ;;
    --run-timeout) run_timeout=$2; shift 2 ;;
    --markdown) markdown=$2; shift 2 ;;
    --keep-logs) keep=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "compare_multihost: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ $hosts =~ ^[0-9]+$ && $hosts -ge 2 && $hosts -le 200 ]] || die "--hosts must be 2-200"
[[ $slots =~ ^[0-9]+$ && $slots -ge 1 ]] || die "--slots must be at least 1"
for v in "$iters" "$repeats" "$run_timeout"; do [[ $v =~ ^[0-9]+$ && $v -ge 1 ]] || die "bad count '$v'"; done
[[ $warmup =~ ^[0-9]+$ ]] || die "bad -w '$warmup'"
for c in ${collectives//,/ }; do
  [[ $c == allreduce || $c == allgather || $c == broadcast ]] || die "unknown collective '$c'"
done
for t in ${tools//,/ }; do [[ $t == kolo || $t == mpi ]] || die "unknown tool '$t' (kolo, mpi)"; done
# tc's rate units are decimal: 1gbit = 10^9 bit/s.
if [[ $rate =~ ^([0-9.]+)(gbit|mbit|kbit)$ ]]; then
  case ${BASH_REMATCH[2]} in gbit) scale=1e9 ;; mbit) scale=1e6 ;; kbit) scale=1e3 ;; esac
  link_gbs=$(awk -v v="${BASH_REMATCH[1]}" -v s="$scale" 'BEGIN { printf "%.6f", v * s / 8 / 1e9 }')
else
  die "--rate must look like 1gbit, 500mbit or 100000kbit"
fi

# --- what it needs ------------------------------------------------------------------------
[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces, tc, sshd): run it with sudo"
for p in ip tc unshare ssh ssh-keygen python3 timeout; do
  command -v "$p" >/dev/null || die "'$p' is not on PATH"
done
sshd=$(command -v sshd || echo /usr/sbin/sshd)
[[ -x $sshd ]] || die "no sshd (openssh-server; scripts/install-deps.sh installs it)"
bin=$build_dir/bin
needed=()
[[ ,$tools, == *,kolo,* ]] && needed+=(kolo-bench kolorun)
[[ ,$tools, == *,mpi,* ]] && needed+=(mpi-bench)
for b in "${needed[@]}"; do
  [[ -x $bin/$b ]] || die "$bin/$b is missing: run \`make build\` first"
done
if [[ ,$tools, == *,mpi,* ]]; then
  command -v mpirun >/dev/null || die "mpirun is not on PATH (Debian: openmpi-bin)"
fi

# --- the hosts ----------------------------------------------------------------------------
prefix="kolobench-$$"
launcher="$prefix-l"
subnet=198.18.128
namespaces=()
sshd_pids=()
dir=""
running=""

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  set +e
  [[ -n $running ]] && kill -TERM "$running" 2>/dev/null  # timeout(1) of a benchmark run
  for pid in "${sshd_pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  # Whatever still runs in our namespaces is ours (ssh sessions, ranks, orted).
  for ns in "${namespaces[@]}"; do
    for pid in $(timeout 10 ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  done
  # Deleting a namespace deletes its end of each veth, and with it the other end.
  for ((i = ${#namespaces[@]} - 1; i >= 0; i--)); do timeout 10 ip netns del "${namespaces[i]}" 2>/dev/null; done
  [[ -n $dir ]] && rm -rf "$dir"
  exit "$status"
}
trap cleanup EXIT
trap 'echo "compare_multihost: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

step() { timeout 30 "$@" || { echo "compare_multihost: set-up step failed: $*" >&2; exit 2; }; }

# Namespaces of earlier runs whose script is gone (killed before its clean-up).
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^kolobench-[0-9]*-' || true); do
  owner=${ns#kolobench-}; owner=${owner%%-*}
  if ! kill -0 "$owner" 2>/dev/null; then
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  fi
done

dir=$(mktemp -d "/tmp/$prefix-XXXXXX")
chmod 755 "$dir"
tbf=(root tbf rate "$rate" burst "$burst" latency "$latency")
step ip netns add "$launcher"; namespaces+=("$launcher")
step ip -n "$launcher" link set lo up
step ip -n "$launcher" link add br0 type bridge
step ip -n "$launcher" addr add "$subnet.1/24" dev br0
step ip -n "$launcher" link set br0 up
addresses=()
for ((h = 1; h <= hosts; h++)); do
  ns="$prefix-h$h" address="$subnet.$((h + 1))"
  addresses+=("$address")
  step ip netns add "$ns"; namespaces+=("$ns")
  step ip -n "$ns" link set lo up
  step ip -n "$launcher" link add "vh$h" type veth peer name eth0 netns "$ns"
  step ip -n "$launcher" link set "vh$h" master br0 up
  step ip -n "$ns" addr add "$address/24" dev eth0
  step ip -n "$ns" link set eth0 up
  if ! out=$(timeout 30 tc -n "$ns" qdisc add dev eth0 "${tbf[@]}" 2>&1) ||
     ! out=$(timeout 30 tc -n "$launcher" qdisc add dev "vh$h" "${tbf[@]}" 2>&1); then
    echo "compare_multihost: cannot limit the links with tbf: $out" >&2; exit 2
  fi
done

step ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
step ssh-keygen -q -t ed25519 -N '' -f "$dir/user_key"
cp "$dir/user_key.pub" "$dir/authorized_keys" && chmod 600 "$dir/authorized_keys"
for a in "${addresses[@]}"; do echo "[$a]:2222 $(cat "$dir/host_key.pub")"; done >"$dir/known_hosts"
cat >"$dir/sshd_config" <<EOF
Port 2222
ListenAddress 0.0.0.0
HostKey $dir/host_key
AuthorizedKeysFile $dir/authorized_keys
PidFile none
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
LogLevel ERROR
MaxStartups 100
MaxSessions 100
EOF
mkdir -p /run/sshd && chmod 755 /run/sshd  # sshd's privilege-separation directory
for ((h = 1; h <= hosts; h++)); do
  # Own hostname and /dev/shm per host: ranks on different hosts must not find each other
  # through the kernel (Kolo and OpenMPI both tell hosts apart by name).
  ip netns exec "$prefix-h$h" unshare --uts --mount --propagation private \
    /bin/sh -c "hostname $prefix-h$h && mount -t tmpfs -o size=2g tmpfs /dev/shm && exec $sshd -D -e -f $dir/sshd_config" \
    </dev/null >"$dir/sshd-h$h.log" 2>&1 &
  sshd_pids+=($!)
  disown $!  # killed at clean-up; no "Killed" notice from bash
done
ssh_opts=(-o BatchMode=yes -o ConnectTimeout=2 -o StrictHostKeyChecking=yes
          -o "UserKnownHostsFile=$dir/known_hosts" -i "$dir/user_key" -p 2222)
for ((h = 1; h <= hosts; h++)); do
  deadline=$((SECONDS + 20))
  until timeout 10 ip netns exec "$launcher" ssh -T "${ssh_opts[@]}" "${addresses[h - 1]}" true 2>"$dir/ssh-probe.err"; do
    if ((SECONDS > deadline)); then
      echo "compare_multihost: sshd on ${addresses[h - 1]} never accepted us:" >&2
      cat "$dir/ssh-probe.err" "$dir/sshd-h$h.log" >&2
      exit 2
    fi
    sleep 0.2
  done
done

# --- the link: one TCP stream h1 -> h2, 64 MB ---------------------------------------------
cat >"$dir/stream.py" <<'EOF'
import socket, sys, time
role, address = sys.argv[1], sys.argv[2]
total = 64 << 20
if role == "recv":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((address, 5201)); s.listen(1); s.settimeout(30)
    c, _ = s.accept(); c.settimeout(30)
    got, start, buf = 0, None, bytearray(1 << 20)
    while got < total:
        n = c.recv_into(buf)
        if n == 0: break
        if start is None: start = time.perf_counter()
        got += n
    print(f"{got / (time.perf_counter() - start) / 1e9:.4f}")
else:
    for _ in range(100):
        try:
            c = socket.create_connection((address, 5201), timeout=30); break
        except OSError: time.sleep(0.05)
    data = bytes(1 << 20)
    for _ in range(total >> 20): c.sendall(data)
    c.close()
EOF
ip netns exec "$prefix-h2" timeout 60 python3 "$dir/stream.py" recv "${addresses[1]}" >"$dir/stream.out" 2>&1 &
receiver=$!
timeout 60 ip netns exec "$prefix-h1" python3 "$dir/stream.py" send "${addresses[1]}" ||
  { echo "compare_multihost: the link check could not send" >&2; exit 1; }
wait "$receiver" || { echo "compare_multihost: the link check failed: $(cat "$dir/stream.out")" >&2; exit 1; }
stream_gbs=$(tail -n1 "$dir/stream.out")

# --- the runs -----------------------------------------------------------------------------
np=$((hosts * slots))
host_list=$(printf "%s:$slots," "${addresses[@]}"); host_list=${host_list%,}
sweep=(-b "$min" -e "$max" -f "$factor" -n "$iters" -w "$warmup" -c 1)
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -n $(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null) ]] && commit+=" + uncommitted changes"
ompi=$(mpirun --version 2>/dev/null | head -n1 || true)
echo "# compare_multihost: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit; $(nproc) cores, $(uname -r), $ompi"
echo "# $hosts hosts x $slots ranks ($np ranks), links: tbf rate $rate burst $burst latency $latency ($link_gbs GB/s)"
echo "# one TCP stream over a link: $stream_gbs GB/s ($(awk -v a="$stream_gbs" -v b="$link_gbs" 'BEGIN { printf "%.1f", 100 * a / b }')% of the link rate)"

drops() {  # packets the links' tbf dropped so far, all links, both directions
  local total=0 ns
  for ((h = 1; h <= hosts; h++)); do
    for n in $(timeout 10 tc -n "$prefix-h$h" -s qdisc show dev eth0 | grep -o 'dropped [0-9]*' | awk '{print $2}') \
             $(timeout 10 tc -n "$launcher" -s qdisc show dev "vh$h" | grep -o 'dropped [0-9]*' | awk '{print $2}'); do
      total=$((total + n))
    done
  done
  echo "$total"
}

run_tool() {  # tool collective output-file
  local tool=$1 coll=$2 out=$3 cmd
  if [[ $tool == kolo ]]; then
    cmd=("$bin/kolorun" -np "$np" -H "$host_list" -p 2222 -i "$dir/user_key"
         --ssh-host-key-checking yes --ssh-known-hosts-file "$dir/known_hosts" --start-timeout 30
         "$bin/kolo-bench" "$coll" "${sweep[@]}")
  else
    cmd=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" -H "$host_list"
         --mca plm_rsh_agent ssh --mca plm_rsh_args "${ssh_opts[*]}" --mca plm_rsh_no_tree_spawn 1
         --mca btl "$mpi_btl" --mca btl_tcp_if_include "$subnet.0/24"
         --mca oob_tcp_if_include "$subnet.0/24" "${extra_mpi_args[@]}" "$bin/mpi-bench" "$coll" "${sweep[@]}")
  fi
  echo "\$ ${cmd[*]}" >"$out"
  local status=0
  # In the background and then `wait`: a signal's trap runs at once, not after the run.
  (cd "$repo" && exec timeout --kill-after=10 "$run_timeout" ip netns exec "$launcher" "${cmd[@]}") >>"$out" 2>&1 &
  running=$!
  wait "$running" || status=$?
  running=""
  if [[ $status -ne 0 ]]; then
    echo "compare_multihost: $tool $coll failed (exit $status$([[ $status -eq 124 ]] && echo ": ran past --run-timeout $run_timeout s")):" >&2
    tail -n 20 "$out" >&2
    exit 1
  fi
}

stamps() { stat -c %Y "${needed[@]/#/$bin/}" 2>/dev/null | tr '\n' ' '; }
stamps_before=$(stamps)
IFS=, read -r -a tool_list <<<"$tools"
read -r -a extra_mpi_args <<<"$mpi_args"  # split on blanks, as typed
index=0
for coll in ${collectives//,/ }; do
  for ((rep = 0; rep < repeats; rep++)); do
    for ((k = 0; k < ${#tool_list[@]}; k++)); do
      tool=${tool_list[(k + rep) % ${#tool_list[@]}]}  # the order rotates every repeat
      index=$((index + 1))
      out=$(printf "%s/run-%03d-%s-%s-%d.txt" "$dir" "$index" "$coll" "$tool" "$rep")
      start=$SECONDS dropped=$(drops)
      run_tool "$tool" "$coll" "$out"
      dropped=$(($(drops) - dropped))
      echo "# tbf dropped $dropped packets during this run" >>"$out"
      echo "#   $coll run $((rep + 1))/$repeats $tool: $((SECONDS - start)) s, $dropped packets dropped by the links"
    done
  done
done
[[ -n $keep ]] && mkdir -p "$keep" && cp "$dir"/run-*.txt "$keep"/
mixed=""
if [[ $(stamps) != "$stamps_before" ]]; then
  mixed="${needed[*]} changed on disk during this run (a rebuild?): the tables may mix builds"
  echo "compare_multihost: warning: $mixed" >&2
fi

# --- the tables ---------------------------------------------------------------------------
python3 - "$dir" "$hosts" "$slots" "$link_gbs" "$tools" "$collectives" "$markdown" \
  "$rate" "$stream_gbs" "$commit" "$command_line" "$mixed" <<'EOF'
import glob, os, re, statistics, sys
d, hosts, slots, link, tools, colls, md_path, rate, stream, commit, command, mixed = sys.argv[1:]
hosts, slots, link, stream = int(hosts), int(slots), float(link), float(stream)
n = hosts * slots
tools = [t for t in ("kolo", "mpi") if t in tools.split(",")]  # Kolo first in the tables
colls = colls.split(",")
title = {"kolo": "Kolo", "mpi": "OpenMPI"}
def bf(c, k):
    return 2 * (k - 1) / k if c == "allreduce" else (k - 1) / k if c == "allgather" else 1.0
def rows(path):
    out = []
    for line in open(path):
        line = re.sub(r"^\[\d+\]<stdout>:", "", line)
        f = line.split()
        if line.startswith("#") or len(f) != 9 or not f[0].isdigit():
            continue
        if f[8] not in ("0", "N/A"):
            sys.exit(f"compare_multihost: {path}: {f[8]} wrong elements at {f[0]} B")
        out.append((int(f[0]), float(f[5])))
    if not out:
        sys.exit(f"compare_multihost: {path} has no result rows")
    return out
bad = False
md = []
for c in colls:
    # Broadcast's bound: the root's link carries the data once (a pipeline), i.e. the link rate.
    bound = link * bf(c, n) / bf(c, hosts) if c != "broadcast" else link
    runs = {t: [rows(p) for p in sorted(glob.glob(f"{d}/run-*-{c}-{t}-*.txt"))] for t in tools}
    sizes = [s for s, _ in runs[tools[0]][0]]
    header = ["size (B)"]
    for t in tools:
        header += [f"{title[t]} time (us)", f"{title[t]} busbw", "of link"]
        if slots > 1:
            header.append("of bound")
    if len(tools) == 2:
        header.append("kolo/mpi")
    table = []
    for i, s in enumerate(sizes):
        line, med = [str(s)], {}
        for t in tools:
            if [r[i][0] for r in runs[t]] != [s] * len(runs[t]):
                sys.exit(f"compare_multihost: {t}'s sizes differ from {tools[0]}'s")
            med[t] = statistics.median(r[i][1] for r in runs[t])
            busbw = s / (med[t] * 1e-6) / 1e9 * bf(c, n)
            line += [f"{med[t]:.1f}", f"{busbw:.4f}", f"{100 * busbw / link:.1f}%"]
            if slots > 1:
                line.append(f"{100 * busbw / bound:.1f}%")
        if len(tools) == 2:
            line.append(f"{med['mpi'] / med['kolo']:.2f}")
        table.append(line)
    reps = len(runs[tools[0]])
    name = f"{c}, {hosts} hosts x {slots} rank{'s' if slots > 1 else ''} ({n} ranks), links {rate} = {link:g} GB/s"
    note = (f"median of {reps} run{'s' if reps > 1 else ''}; busbw in GB/s; 'of link' = busbw / {link:g} GB/s"
            + (f"; 'of bound' = busbw / {bound:.4f} GB/s, what the links allow {slots} ranks per host" if slots > 1 else ""))
    widths = [max(len(h), *(len(r[k]) for r in table)) for k, h in enumerate(header)]
    print(f"\n## {name}\n# {note}")
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for r in table:
        print("  ".join(x.rjust(w) for x, w in zip(r, widths)))
    md += [f"#### {name}", "", note + ".", "",
           "| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
    md += ["| " + " | ".join(r) + " |" for r in table] + [""]
dropped = {t: 0 for t in tools}
for t in tools:
    for p in glob.glob(f"{d}/run-*-{t}-*.txt"):
        m = re.search(r"^# tbf dropped (\d+) packets", open(p).read(), re.M)
        dropped[t] += int(m.group(1)) if m else 0
drops = ", ".join(f"{title[t]} {dropped[t]}" for t in tools)
print(f"\n# packets the links' tbf dropped, all runs: {drops}")
if md_path:
    head = (f"Command: `{command}`\n\n"
            f"Commit {commit}. One TCP stream over a link: {stream:.4f} GB/s "
            f"({100 * stream / link:.1f}% of the link rate). Packets the links dropped, all "
            f"runs: {drops}.\n\n" + (f"**Warning: {mixed}.**\n\n" if mixed else ""))
    with open(md_path, "w") as f:
        f.write(head + "\n".join(md))
    print(f"\n# Markdown written to {md_path}")
EOF
