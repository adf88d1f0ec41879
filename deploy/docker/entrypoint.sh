#!/bin/bash
# The Kolo image's entrypoint. Driven by environment only, as deploy/README.md
# ("The entrypoint contract") states; its arguments are the program to run.
#   MODE=MAIN    ssh + data, then kolorun with host discovery on the arguments
#   MODE=WORKER  ssh + data, then sshd in the foreground on WORKER_PORT
#   MODE=RUN     ssh + data, then the arguments as they are
# Bad input prints one line and exits 2.
set -euo pipefail

fail() {
  echo "kolo-entrypoint: $*" >&2
  exit 2
}
say() { echo "kolo-entrypoint: $*" >&2; }

MODE=${MODE:-}
WORKER_PORT=${WORKER_PORT:-2222}
SSH_KEY_DIR=${SSH_KEY_DIR:-/etc/kolo/ssh}
ARTIFACTS_DIR=${ARTIFACTS_DIR:-/kolo/artifacts}
START_TIMEOUT=${START_TIMEOUT:-120}
# Where ~/.ssh is: root in pods that run as root (the MPI Operator's), else kolo's home.
SSH_HOME=${HOME:?HOME is not set}/.ssh
# MAIN's pid is this script's (it execs kolorun); the health check reads it.
MAIN_PIDFILE=/tmp/kolo-main.pid

is_count() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ]; }

check_input() {
  case "$MODE" in
  MAIN | WORKER | RUN) ;;
  *) fail "MODE must be MAIN, WORKER or RUN, not '$MODE'" ;;
  esac
  { is_count "$WORKER_PORT" 1 && [ "$WORKER_PORT" -le 65535 ]; } ||
    fail "WORKER_PORT must be a port number (1-65535), not '$WORKER_PORT'"
  is_count "$START_TIMEOUT" 1 || fail "START_TIMEOUT must be a whole number of seconds >= 1, not '$START_TIMEOUT'"
  if [ -n "${DATA_URL:-}" ] && [ -z "${DATA_DIR:-}" ]; then
    fail "DATA_URL is set but DATA_DIR is not: say where to put the data"
  fi
  if [ -z "${DATA_URL:-}" ] && [ -n "${DATA_DIR:-}" ] && [ ! -d "$DATA_DIR" ]; then
    fail "DATA_DIR '$DATA_DIR' does not exist (mount the volume, or set DATA_URL to fetch into it)"
  fi
  if [ "$MODE" != WORKER ] && [ $# -eq 0 ]; then
    fail "MODE=$MODE needs the program to run as arguments (e.g. python train.py)"
  fi
  if [ "$MODE" = MAIN ]; then
    check_main_input
  fi
}

# MAIN's settings, checked before anything is set up.
MIN_NP=${MIN_NP:-1}
MAX_NP=${MAX_NP:-$MIN_NP}
SLOTS=${SLOTS:-1}
DISCOVERY_SCRIPT=${DISCOVERY_SCRIPT-/kolo/bin/discover-compose-hosts.sh}
ENABLE_TIMELINE=${ENABLE_TIMELINE:-0}
check_main_input() {
  is_count "$MIN_NP" 1 || fail "MIN_NP must be a whole number >= 1, not '$MIN_NP'"
  is_count "$MAX_NP" "$MIN_NP" || fail "MAX_NP must be a whole number >= MIN_NP ($MIN_NP), not '$MAX_NP'"
  is_count "$SLOTS" 1 || fail "SLOTS must be a whole number >= 1, not '$SLOTS'"
  if [ -z "$DISCOVERY_SCRIPT" ]; then
    [ -n "${HOSTFILE:-}" ] || fail "DISCOVERY_SCRIPT is empty and HOSTFILE is not set: no hosts to run on"
    [ -r "$HOSTFILE" ] || fail "HOSTFILE '$HOSTFILE' cannot be read"
  fi
  case "$ENABLE_TIMELINE" in
  0 | 1) ;;
  *) fail "ENABLE_TIMELINE must be 0 or 1, not '$ENABLE_TIMELINE'" ;;
  esac
  extra_args >/dev/null # refuses bad quoting here, in this shell
}

# The key pair every container shares: from the mounted secret, else the one
# in the shared artifacts volume (compose), which the first MAIN or WORKER to
# get there generates. It is written under a temporary name and renamed into
# place, so a container never reads half a key and two never make two keys.
find_key_dir() {
  if [ -r "$SSH_KEY_DIR/id_rsa" ]; then
    echo "$SSH_KEY_DIR"
    return
  fi
  if [ -e "$SSH_KEY_DIR/id_rsa" ]; then
    fail "$SSH_KEY_DIR/id_rsa cannot be read by uid $(id -u) (give the pod fsGroup $(id -g), or run it as the key's owner)"
  fi
  local shared=$ARTIFACTS_DIR/ssh
  if [ ! -r "$shared/id_rsa" ]; then
    [ -w "$ARTIFACTS_DIR" ] || fail "no ssh key in $SSH_KEY_DIR and $ARTIFACTS_DIR is not writable to make one"
    local draft
    draft=$(mktemp -d "$ARTIFACTS_DIR/.ssh-draft.XXXXXX")
    ssh-keygen -q -t rsa -b 3072 -N "" -C "kolo-compose" -f "$draft/id_rsa"
    chmod 0755 "$draft"
    # mv -T fails when another container renamed its key into place first.
    if mv -T "$draft" "$shared" 2>/dev/null; then
      say "generated the job's ssh key pair in $shared"
    else
      rm -rf "$draft"
    fi
  fi
  echo "$shared"
}

setup_ssh() {
  local from
  # find_key_dir runs in a subshell: its refusal has been printed; pass on its code.
  from=$(find_key_dir) || exit 2
  mkdir -p "$SSH_HOME"
  chmod 0700 "$SSH_HOME"
  install -m 0600 "$from/id_rsa" "$SSH_HOME/id_rsa"
  if [ -r "$from/id_rsa.pub" ]; then
    install -m 0644 "$from/id_rsa.pub" "$SSH_HOME/id_rsa.pub"
  else
    ssh-keygen -y -f "$SSH_HOME/id_rsa" >"$SSH_HOME/id_rsa.pub"
  fi
  if [ -r "$from/authorized_keys" ]; then
    install -m 0600 "$from/authorized_keys" "$SSH_HOME/authorized_keys"
  else
    install -m 0600 "$SSH_HOME/id_rsa.pub" "$SSH_HOME/authorized_keys"
  fi
  # The same pair is every worker's host key: check hosts against it.
  echo "* $(cut -d' ' -f1,2 "$SSH_HOME/id_rsa.pub")" >"$SSH_HOME/known_hosts"
  cat >"$SSH_HOME/config" <<EOF
Host *
  Port $WORKER_PORT
  IdentityFile $SSH_HOME/id_rsa
  UserKnownHostsFile $SSH_HOME/known_hosts
  StrictHostKeyChecking yes
EOF
  chmod 0600 "$SSH_HOME/config"
}

setup_data() {
  [ -n "${DATA_URL:-}" ] || return 0
  mkdir -p "$DATA_DIR" || fail "cannot create DATA_DIR '$DATA_DIR'"
  /kolo/bin/fetch-data.py "$DATA_URL" "$DATA_DIR" || fail "fetching $DATA_URL into $DATA_DIR failed"
}

run_worker() {
  local config=$SSH_HOME/sshd_config
  # Ranks started over ssh get the image's PATH (the venv first), as local ones do.
  cat >"$config" <<EOF
Port $WORKER_PORT
HostKey $SSH_HOME/id_rsa
AuthorizedKeysFile $SSH_HOME/authorized_keys
PidFile none
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
SetEnv PATH=$PATH
Subsystem sftp internal-sftp
EOF
  if [ "$(id -u)" -eq 0 ]; then
    mkdir -p /run/sshd
  fi
  say "WORKER: sshd on port $WORKER_PORT (SLOTS=$SLOTS)"
  exec /usr/sbin/sshd -D -e -f "$config"
}

# KOLO_ARGS (or HOROVOD_ARGS) split as a shell splits words, expanding nothing.
extra_args() {
  local text=${KOLO_ARGS:-${HOROVOD_ARGS:-}}
  [ -n "$text" ] || return 0
  python3 - "$text" <<'EOF' || fail "KOLO_ARGS/HOROVOD_ARGS cannot be split into words: $text"
import shlex, sys
try:
    words = shlex.split(sys.argv[1])
except ValueError:  # an unclosed quote: the caller says so in one line
    sys.exit(1)
sys.stdout.write("".join(w + "\0" for w in words))
EOF
}

# kolorun starts -np ranks and adds more only for hosts that appear later, so
# start with the slots discovery offers now (workers that compose or the
# chart started before MAIN), within MIN_NP..MAX_NP.
initial_np() {
  local offered
  offered=$(timeout 30 "$DISCOVERY_SCRIPT" 2>/dev/null |
    awk -F: 'NF { n += (NF > 1 ? $2 : 1) } END { print n + 0 }') || offered=0
  [[ $offered =~ ^[0-9]+$ ]] || offered=0
  local np=$((offered < MIN_NP ? MIN_NP : offered))
  echo $((np > MAX_NP ? MAX_NP : np))
}

run_main() {
  local args=(--start-timeout "$START_TIMEOUT" --output-filename "$ARTIFACTS_DIR/logs")
  if [ -n "$DISCOVERY_SCRIPT" ]; then
    args+=(-np "$(initial_np)" --min-np "$MIN_NP" --max-np "$MAX_NP" --slots-per-host "$SLOTS"
      --host-discovery-script "$DISCOVERY_SCRIPT")
  else
    args+=(-np "$MAX_NP" --hostfile "$HOSTFILE")
  fi
  if [ "$ENABLE_TIMELINE" = 1 ]; then
    args+=(--timeline-filename "$ARTIFACTS_DIR/timeline.json")
  fi
  local extra=()
  mapfile -d '' extra < <(extra_args)
  cd "$ARTIFACTS_DIR"
  echo $$ >"$MAIN_PIDFILE"
  say "MAIN: kolorun ${args[*]} ${extra[*]} $*"
  exec kolorun "${args[@]}" "${extra[@]}" "$@"
}

check_input "$@"
setup_data
# RUN without a key (a PyTorchJob pod) needs no ssh; MAIN and WORKER always do.
if [ "$MODE" != RUN ] || [ -e "$SSH_KEY_DIR/id_rsa" ]; then
  setup_ssh
fi
case "$MODE" in
MAIN) run_main "$@" ;;
WORKER) run_worker ;;
RUN) exec "$@" ;;
esac
