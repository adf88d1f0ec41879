#!/bin/bash
# The image's HEALTHCHECK. WORKER: sshd accepts connections on WORKER_PORT
# (then kolorun can start ranks there). MAIN: the job (kolorun, which the
# entrypoint became) is still running. RUN: the container runs what it was given.
set -euo pipefail
case "${MODE:-}" in
WORKER)
  # shellcheck disable=SC2016 # the inner bash expands it
  timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "${WORKER_PORT:-2222}"
  ;;
MAIN)
  pid=$(cat /tmp/kolo-main.pid)
  # Alive and not a zombie.
  state=$(awk '{print $3}' "/proc/$pid/stat")
  [ "$state" != Z ]
  ;;
*) exit 0 ;;
esac
