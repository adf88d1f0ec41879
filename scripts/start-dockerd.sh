#!/usr/bin/env bash
# Starts the Docker engine for the tests that run containers
# (tests/deploy/containers and the Ansible tests of tests/deploy) if it is
# installed and not answering, and waits until it answers. Safe to
# run again: an engine that answers is left alone. Where systemd runs the
# machine, its docker service is used; elsewhere (CI containers, chroots)
# dockerd is started in its own session with its log in /var/log.
set -euo pipefail

if docker info >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "start-dockerd: the Docker engine is not running and only root can start it" >&2
  exit 1
fi
command -v dockerd >/dev/null || { echo "start-dockerd: dockerd is missing (scripts/install-deps.sh installs docker.io)" >&2; exit 1; }
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
  systemctl start docker
else
  setsid dockerd >>/var/log/kolo-dockerd.log 2>&1 </dev/null &
fi
for _ in $(seq 60); do
  docker info >/dev/null 2>&1 && exit 0
  sleep 1
done
echo "start-dockerd: dockerd did not answer within 60 s (see /var/log/kolo-dockerd.log)" >&2
exit 1
