"""Debian 12 "VMs" for the Ansible tests: containers on a docker network of
their own, each running systemd and sshd, reached by ansible-playbook over
ssh as root with a key made for the test.

Images (never pruned; other tests build kolo-test/* images beside these):
  kolo-ansible/host:HASH  kolo-test/bookworm (local_builds.py) + systemd,
                          openssh-server, python3 (ansible_hosts/Dockerfile;
                          HASH is the Dockerfile's)
The Kolo wheel the playbook installs is this checkout's (local_builds.py), and
the pip cache of the main host is kept in build/ansible-test/pip-cache, so a
second test run downloads nothing again.
"""

import hashlib
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from local_builds import BASE_IMAGE, ensure_base_image, image_exists

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK_DIR = REPO / "deploy" / "ansible"
HOST_IMAGE_DIR = Path(__file__).resolve().parent / "ansible_hosts"
CACHE = REPO / "build" / "ansible-test"
HOST_IMAGE = "kolo-ansible/host"
HASH_LABEL = "kolo-ansible.hash"
NICE = ["nice", "-n", "10"]


def run(argv, timeout, check=True, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited {result.returncode}:\n"
                           f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def why_not_runnable():
    """The reason these tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (docker, and mmdebstrap for the base image)"
    for tool in ("docker", "ansible-playbook", "ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (scripts/install-deps.sh installs it)"
    if run(["docker", "info"], timeout=30, check=False).returncode != 0:
        if shutil.which("dockerd") is None:
            return "no Docker engine: dockerd is not installed"
        return "no Docker engine answers (start dockerd as root)"
    if not image_exists(BASE_IMAGE) and shutil.which("mmdebstrap") is None:
        return f"{BASE_IMAGE} is missing and mmdebstrap, which makes it, is not installed"
    return None


def ensure_host_image():
    """The derived image, rebuilt only when its Dockerfile changes."""
    digest = hashlib.sha256((HOST_IMAGE_DIR / "Dockerfile").read_bytes()).hexdigest()[:16]
    tag = f"{HOST_IMAGE}:{digest}"
    if image_exists(tag):
        return tag
    ensure_base_image()
    run(NICE + ["docker", "build", "-q", "--build-arg", f"BASE={BASE_IMAGE}", "--label",
                f"{HASH_LABEL}={digest}", "-t", tag, str(HOST_IMAGE_DIR)],
        timeout=900, env={**os.environ, "DOCKER_BUILDKIT": "0"})
    return tag


class Cluster:
    """One main host and N workers on a network of their own; stop() removes all of it."""

    def __init__(self, workdir, image, workers=2, privileged=False):
        self.workdir = Path(workdir)
        self.image = image
        self.prefix = f"kolo-ansible-{os.getpid()}"
        self.network = self.prefix
        self.names = {"main": f"{self.prefix}-main"}
        self.names.update({f"worker{i}": f"{self.prefix}-worker{i}"
                           for i in range(1, workers + 1)})
        self.privileged = privileged
        self.addresses = {}
        self.key = self.workdir / "admin_id_ed25519"
        self.known_hosts = self.workdir / "admin_known_hosts"

    def start(self):
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key)], timeout=30)
        run(["docker", "network", "create", self.network], timeout=60)
        pip_cache = CACHE / "pip-cache"
        pip_cache.mkdir(parents=True, exist_ok=True)
        for host, name in self.names.items():
            argv = ["docker", "run", "-d", "--name", name, "--hostname", f"kolo-{host}",
                    "--network", self.network, "--tmpfs", "/run", "--tmpfs", "/run/lock",
                    "-v", "/sys/fs/cgroup:/sys/fs/cgroup:ro", "--cpu-shares", "512"]
            if self.privileged:
                argv.append("--privileged")
            if host == "main":  # Jupyter Lab's wheels, kept between test runs
                argv += ["-v", f"{pip_cache}:/root/.cache/pip"]
            run(argv + [self.image], timeout=120)
        public_key = self.key.with_suffix(".pub").read_text()
        lines = []
        for host, name in self.names.items():
            self.addresses[host] = run(
                ["docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}"
                 "{{end}}", name], timeout=30).stdout.strip()
            self.exec(host, "install -d -m 700 /root/.ssh && cat > /root/.ssh/authorized_keys",
                      input=public_key)
            host_key = self._wait_for_sshd(host)  # also: booted, /tmp mounted
            self._copy_site_tls_settings(name)
            lines.append(f"{self.addresses[host]} {host_key}")
        self.known_hosts.write_text("\n".join(lines) + "\n")

    def _copy_site_tls_settings(self, name):
        """The host's own certificate authorities and pip.conf, as a site's VM image
        carries them: where a proxy re-signs TLS, pip on the hosts needs them to reach PyPI."""
        extra_cas = Path("/usr/local/share/ca-certificates")
        if any(extra_cas.glob("*.crt")):
            run(["docker", "cp", f"{extra_cas}/.", f"{name}:{extra_cas}/"], timeout=60)
            run(["docker", "exec", name, "update-ca-certificates"], timeout=120)
        if Path("/etc/pip.conf").is_file():
            run(["docker", "cp", "/etc/pip.conf", f"{name}:/etc/pip.conf"], timeout=60)

    def _wait_for_sshd(self, host, timeout=180):
        """systemd starts sshd, which makes the host keys first; returns the ed25519 one."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.exec(host, "systemctl is-active ssh && cat /etc/ssh/ssh_host_ed25519_key.pub",
                              check=False)
            if state.returncode == 0:
                return state.stdout.splitlines()[-1].strip()
            if time.monotonic() > deadline:
                raise TimeoutError(f"sshd did not start on {host} in {timeout} s: {state.stdout}")
            time.sleep(1)

    def exec(self, host, script, check=True, timeout=300, user="root", input=None):
        return run(["docker", "exec", "-i", "-u", user, self.names[host], "bash", "-c", script],
                   timeout=timeout, check=check, input=input)

    def write_inventory(self, path, main_slots=None, worker_slots=1):
        """Main's slots default to its CPU count (the playbook's rule), the workers' are set."""
        ssh_args = (f"-o UserKnownHostsFile={self.known_hosts} -o StrictHostKeyChecking=yes "
                    "-o ConnectTimeout=20")
        lines = ["[kolo_main]", self._host_line("main", main_slots), "", "[kolo_workers]"]
        lines += [self._host_line(h, worker_slots) for h in self.names if h != "main"]
        lines += ["", "[all:vars]", "ansible_user=root",
                  f"ansible_ssh_private_key_file={self.key}",
                  f"ansible_ssh_common_args='{ssh_args}'"]
        Path(path).write_text("\n".join(lines) + "\n")

    def _host_line(self, host, slots):
        line = f"{host} ansible_host={self.addresses[host]}"
        return line + (f" kolo_slots={slots}" if slots is not None else "")

    def stop(self):
        for name in self.names.values():
            run(["docker", "rm", "-f", name], timeout=120, check=False)
        run(["docker", "network", "rm", self.network], timeout=60, check=False)


def run_playbook(inventory, extra_vars, log, timeout=1500):
    """ansible-playbook site.yml; returns (exit code, output, {host: changed count})."""
    argv = NICE + ["ansible-playbook", "-i", str(inventory), "site.yml"]
    for name, value in extra_vars.items():
        argv += ["-e", f"{name}={value}"]
    env = {**os.environ, "ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_FORKS": "5", "ANSIBLE_RETRY_FILES_ENABLED": "0"}
    result = run(argv, timeout=timeout, check=False, cwd=PLAYBOOK_DIR, env=env)
    output = result.stdout + result.stderr
    Path(log).write_text(output)
    changed = {m.group(1): int(m.group(2))
               for m in re.finditer(r"^(\S+)\s+:\s+ok=\d+\s+changed=(\d+)", output, re.M)}
    return result.returncode, output, changed
