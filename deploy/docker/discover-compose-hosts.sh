#!/bin/bash
# MAIN's default --host-discovery-script in compose: this container with
# SLOTS ranks, plus every container of the worker service (WORKER_SERVICE,
# default "worker") whose sshd answers. Compose's DNS resolves a service name
# to all its containers' addresses, so `docker compose up --scale worker=N`
# grows the job and a stopped worker drops out. kolorun runs this every second.
set -uo pipefail
slots=${SLOTS:-1}
port=${WORKER_PORT:-2222}
echo "$(hostname):$slots"
# Bounded: a resolver that does not answer must not stall kolorun's loop.
timeout 5 getent ahostsv4 "${WORKER_SERVICE:-worker}" | awk '{print $1}' | sort -u |
  while read -r address; do
    # shellcheck disable=SC2016 # the inner bash expands them
    if timeout 1 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$address" "$port" 2>/dev/null; then
      echo "$address:$slots"
    fi
  done
exit 0
