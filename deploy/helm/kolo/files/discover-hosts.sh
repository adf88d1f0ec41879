#!/bin/sh
# Prints the hosts that can take ranks now, one "host:slots" a line, for
# `kolorun --host-discovery-script` (which runs it every second). The settings
# come from discovery.conf beside this script (the chart's ConfigMap writes
# both), or from the file KOLO_DISCOVERY_CONF names.
#
# dns mode: worker N of the StatefulSet is "<service>-N.<service>", and the
# headless Service publishes that name only while the pod is ready (its sshd
# answers), so a name that resolves is a worker ranks can start on. No
# kubectl and no access to the Kubernetes API are needed.
# kubectl mode: the ready worker pods as the API lists them.
set -eu

conf=${KOLO_DISCOVERY_CONF:-$(dirname "$0")/discovery.conf}
# shellcheck source=/dev/null
. "$conf"

if [ "$MODE" != dns ] && [ "$MODE" != kubectl ]; then
  echo "discover-hosts.sh: MODE must be dns or kubectl, not '$MODE' (in $conf)" >&2
  exit 2
fi

# The driver is this host: kolorun starts its ranks without ssh.
if [ "${DRIVER_SLOTS:-0}" -gt 0 ]; then
  echo "$DRIVER_HOST:$DRIVER_SLOTS"
fi

case "$MODE" in
dns)
  i=0
  while [ "$i" -lt "$MAX_WORKERS" ]; do
    host="$SERVICE-$i.$SERVICE"
    # Bounded: a resolver that does not answer must not stall kolorun's loop.
    if timeout 5 getent hosts "$host" >/dev/null 2>&1; then
      echo "$host:$WORKER_SLOTS"
    fi
    i=$((i + 1))
  done
  ;;
kubectl)
  # Each pod's name and its Ready condition; only ready ones are printed.
  timeout 10 kubectl get pods -n "$NAMESPACE" -l "$SELECTOR" \
    -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
    while read -r pod ready; do
      if [ "$ready" = "True" ]; then
        echo "$pod.$SERVICE:$WORKER_SLOTS"
      fi
    done
  ;;
esac
