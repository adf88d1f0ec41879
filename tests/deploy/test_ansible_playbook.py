"""deploy/ansible/site.yml run for real: ansible-playbook against three
Debian 12 containers (one main host, two workers) reached over ssh, then
checked on the hosts themselves: the hostfile, sshd on its port with keys
only, Kolo importable everywhere, Jupyter Lab on localhost, the notebook
executed by a real kernel running kolo.run across the three hosts, and a
second run of the playbook that changes nothing.

The NFS share is left out here (kolo_nfs_enabled=false): test_ansible_nfs.py
runs it where the kernel can serve NFS. Images and the wheel are cached
(ansible_cluster.py), so a second run of this file takes a few minutes.
"""

import json
import shlex
import time

import pytest

from ansible_cluster import Cluster, ensure_host_image, run, run_playbook, why_not_runnable
from local_builds import ensure_wheel

pytestmark = pytest.mark.timeout(2700)

SSH_PORT = 2222
VENV = "/opt/kolo/venv"
JUPYTER_PORT = 8888


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    reason = why_not_runnable()
    if reason:
        pytest.skip(reason)
    workdir = tmp_path_factory.mktemp("ansible")
    image = ensure_host_image()
    wheel = ensure_wheel()
    cluster = Cluster(workdir, image)
    try:
        cluster.start()
        inventory = workdir / "inventory.ini"
        cluster.write_inventory(inventory, main_slots=None, worker_slots=1)
        extra = {"kolo_wheel": wheel, "kolo_nfs_enabled": "false", "kolo_ssh_port": SSH_PORT}
        code, output, _ = run_playbook(inventory, extra, workdir / "first-run.log")
        assert code == 0, f"the first playbook run failed:\n{output[-6000:]}"
        cluster.playbook_args = (inventory, extra, workdir)
        yield cluster
    finally:
        cluster.stop()


def expected_hostfile(cluster):
    main_cpus = int(cluster.exec("main", "nproc").stdout)
    lines = [f"{cluster.addresses['main']} slots={main_cpus}"]
    lines += [f"{cluster.addresses[h]} slots=1" for h in cluster.names if h != "main"]
    return lines


def hostfile_entries(text):
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_every_host_has_the_hostfile_with_each_hosts_slots(deployed):
    expected = expected_hostfile(deployed)
    for host in deployed.names:
        assert hostfile_entries(deployed.exec(host, "cat /etc/kolo/hostfile").stdout) == expected


def test_sshd_listens_on_the_chosen_port_and_takes_keys_only(deployed, tmp_path):
    for host in deployed.names:
        config = deployed.exec(host, "sshd -T").stdout.lower().splitlines()
        assert f"port {SSH_PORT}" in config
        assert "passwordauthentication no" in config
        assert "kbdinteractiveauthentication no" in config
        assert "authenticationmethods publickey" in config
    # From outside, as a client would: the kolo user's shared key gets in on
    # the chosen port, and a password login is not even offered.
    key = tmp_path / "kolo_key"
    key.write_text(deployed.exec("main", "cat /home/kolo/.ssh/id_ed25519").stdout)
    key.chmod(0o600)
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(deployed.exec("main", "cat /etc/kolo/ssh_known_hosts").stdout)
    for host in ("worker1", "worker2"):
        address = deployed.addresses[host]
        common = ["ssh", "-p", str(SSH_PORT), "-o", "BatchMode=yes", "-o", "ConnectTimeout=20",
                  "-o", f"UserKnownHostsFile={known_hosts}", "-o", "StrictHostKeyChecking=yes"]
        login = run(common + ["-i", str(key), f"kolo@{address}", "id -un"], timeout=60)
        assert login.stdout.strip() == "kolo"
        password = run(common + ["-o", "PubkeyAuthentication=no", "-o",
                                 "PreferredAuthentications=password,keyboard-interactive",
                                 f"kolo@{address}", "true"], timeout=60, check=False)
        assert password.returncode != 0
        assert "Permission denied (publickey)" in password.stderr


def test_kolo_imports_on_every_host_for_the_kolo_user(deployed):
    for host in deployed.names:
        out = deployed.exec(host, f"{VENV}/bin/python -c 'import kolo, kolo._core; print(kolo.__file__)'"
                            f" && {VENV}/bin/kolorun --version", user="kolo").stdout
        assert f"{VENV}/lib/" in out and "kolorun (Kolo)" in out, out


def test_the_kolo_user_reaches_every_host_by_its_hostfile_address(deployed):
    # No ssh flags: ~/.ssh/config gives the port and the key, known_hosts the
    # host keys (StrictHostKeyChecking yes), as kolorun and mpirun need.
    for host in deployed.names:
        address = deployed.addresses[host]
        out = deployed.exec("main", f"ssh -o BatchMode=yes {address} hostname", user="kolo").stdout
        assert out.strip() == f"kolo-{host}"


def jupyter_status(cluster, host, token, timeout=120):
    """HTTP status of Jupyter's /api/status on 127.0.0.1 of `host`, waiting for it to listen."""
    script = f"""
import sys, time, urllib.error, urllib.request
deadline = time.monotonic() + {timeout}
while True:
    try:
        print(urllib.request.urlopen("http://127.0.0.1:{JUPYTER_PORT}/api/status?token={token}",
                                     timeout=10).status)
        break
    except urllib.error.HTTPError as error:
        print(error.code)
        break
    except OSError as error:
        if time.monotonic() > deadline:
            print("unreachable", error)
            break
        time.sleep(1)
"""
    return cluster.exec(host, f"python3 -c {shlex.quote(script)}", timeout=timeout + 30).stdout.strip()


def test_jupyter_lab_serves_on_localhost_with_its_token(deployed):
    env = deployed.exec("main", "cat /etc/kolo/jupyter.env").stdout.strip()
    assert env.startswith("JUPYTER_TOKEN=")
    token = env.split("=", 1)[1]
    assert len(token) >= 32
    assert deployed.exec("main", "stat -c %a /etc/kolo/jupyter.env").stdout.strip() == "600"
    assert jupyter_status(deployed, "main", token) == "200"
    assert jupyter_status(deployed, "main", "wrong-token", timeout=5) == "403"
    # Bound to localhost: another host cannot connect.
    main = deployed.addresses["main"]
    probe = deployed.exec("worker1", f"python3 -c 'import socket; socket.create_connection((\"{main}\","
                          f" {JUPYTER_PORT}), timeout=5)'", check=False)
    assert probe.returncode != 0 and "refused" in probe.stderr.lower()


def test_the_notebook_runs_kolo_across_every_host(deployed):
    executed = "/tmp/kolo_across_hosts.executed.ipynb"
    deployed.exec("main", f"cd ~/notebooks && {VENV}/bin/jupyter nbconvert --to notebook --execute "
                  f"--ExecutePreprocessor.timeout=600 --output {executed} kolo_across_hosts.ipynb",
                  user="kolo", timeout=900)
    notebook = json.loads(deployed.exec("main", f"cat {executed}").stdout)
    text = "".join("".join(o.get("text", "")) for cell in notebook["cells"]
                   for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    ranks = int(deployed.exec("main", "nproc").stdout) + 2
    total = float(ranks * (ranks + 1) // 2)
    hosts_of_ranks = {}
    for line in text.splitlines():
        if line.startswith("rank "):
            words = line.split()
            hosts_of_ranks[int(words[1])] = words[5].rstrip(":")
            assert line.endswith(f"sum {[total] * 4} right"), line
            assert words[3] == str(ranks), line
    assert sorted(hosts_of_ranks) == list(range(ranks)), text
    assert set(hosts_of_ranks.values()) == {f"kolo-{h}" for h in deployed.names}, text
    assert f"every rank got {total:g}" in text


def test_a_second_run_changes_nothing(deployed):
    inventory, extra, workdir = deployed.playbook_args
    started = time.monotonic()
    code, output, changed = run_playbook(inventory, extra, workdir / "second-run.log")
    assert code == 0, output[-6000:]
    assert set(changed) == set(deployed.names), output[-3000:]
    assert all(count == 0 for count in changed.values()), \
        f"changed on the second run ({time.monotonic() - started:.0f} s):\n" + \
        "\n".join(line for line in output.splitlines() if line.startswith("changed:"))
