"""The chart's discovery script, taken from the rendered ConfigMap as the pod
mounts it, run against real name resolution: getent through the C library's
NSS, with the names in a hosts file bind-mounted over /etc/hosts in a private
mount namespace (so the machine's own files are untouched). In a cluster the
same names come from the headless Service's DNS records, which exist only
for ready pods; a name missing here is a worker that is not ready."""

import os
import shutil
import subprocess

import pytest

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="a private mount namespace over /etc/hosts needs root and unshare",
)


def mounted_configmap(render, tmp_path, *args, volume="generated"):
    """Writes the rendered ConfigMap's files into a folder as the driver's
    volume of that name does (all keys, or its items under their paths)."""
    rendered = render(*args)
    data = rendered.one("ConfigMap")["data"]
    driver = rendered.one("Deployment")["spec"]["template"]["spec"]
    source = next(v["configMap"] for v in driver["volumes"] if v["name"] == volume)
    paths = {i["key"]: i["path"] for i in source.get("items", [])} or {key: key for key in data}
    folder = tmp_path / volume
    folder.mkdir()
    for key, path in paths.items():
        (folder / path).write_text(data[key])
        (folder / path).chmod(0o555)
    return folder


def discover(script, tmp_path, host_lines):
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n" + "".join(line + "\n" for line in host_lines))
    # Files only: the test's answers must not depend on this machine's DNS.
    nsswitch = tmp_path / "nsswitch.conf"
    nsswitch.write_text("hosts: files\n")
    script = (
        f"mount --bind {hosts} /etc/hosts && mount --bind {nsswitch} /etc/nsswitch.conf"
        f" && exec {script}"
    )
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=60)


def expected(*worker_ordinals):
    """The lines for the driver (one slot) and the given workers (two slots each)."""
    return ["ddp-kolo-driver:1"] + [f"ddp-kolo-{i}.ddp-kolo:2" for i in worker_ordinals]


@needs_root
def test_prints_the_driver_and_each_resolvable_worker_and_follows_changes(render, tmp_path):
    folder = mounted_configmap(render, tmp_path, "--set", "discovery.maxWorkers=6", "--set", "worker.slots=2")
    workers = {i: f"10.1.0.{10 + i} ddp-kolo-{i}.ddp-kolo" for i in range(10)}
    unrelated = "10.9.0.1 other-0.ddp-kolo ddp-kolo-0.elsewhere"

    first = discover(folder / "discover-hosts.sh", tmp_path, [workers[0], workers[1], workers[3], workers[9], unrelated])
    assert first.returncode == 0, first.stderr
    # Worker 2 is missing (not ready), worker 9 is past discovery.maxWorkers.
    assert first.stdout.splitlines() == expected(0, 1, 3)

    # Worker 1 goes away, workers 2 and 5 come up: the next run says so.
    second = discover(folder / "discover-hosts.sh", tmp_path, [workers[0], workers[2], workers[3], workers[5]])
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == expected(0, 2, 3, 5)


@needs_root
def test_horovods_script_name_finds_its_settings_too(render, tmp_path):
    folder = mounted_configmap(render, tmp_path, volume="generated-horovod")
    hosts = ["10.1.0.10 ddp-kolo-0.ddp-kolo"]
    result = discover(folder / "discoverHosts.sh", tmp_path, hosts)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["ddp-kolo-driver:1", "ddp-kolo-0.ddp-kolo:1"]


@needs_root
def test_no_ready_worker_and_no_driver_slots_prints_nothing(render, tmp_path):
    folder = mounted_configmap(render, tmp_path, "--set", "driver.slots=0")
    result = discover(folder / "discover-hosts.sh", tmp_path, [])
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_unknown_mode_is_one_error_line_and_exit_2(render, tmp_path):
    folder = mounted_configmap(render, tmp_path)
    conf = tmp_path / "bad.conf"
    conf.write_text((folder / "discovery.conf").read_text().replace("MODE=dns", "MODE=api"))
    result = subprocess.run(
        [str(folder / "discover-hosts.sh")],
        env={**os.environ, "KOLO_DISCOVERY_CONF": str(conf)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [f"discover-hosts.sh: MODE must be dns or kubectl, not 'api' (in {conf})"]
