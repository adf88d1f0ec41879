"""The playbook's NFS roles run for real: the main host exports the data
share, the workers mount it, and a file written on the main host is read on
every worker.

The kernel NFS server runs in the kernel, not in the container: it needs the
host kernel's nfsd (and the client its nfs filesystem), and the containers
must be privileged to mount. Where the kernel has neither (a kernel built
without NFS, as some VM kernels are), this test is skipped with that reason;
test_ansible_playbook.py then covers everything else with
kolo_nfs_enabled=false.
"""

import shutil

import pytest

from ansible_cluster import Cluster, ensure_host_image, run, run_playbook, why_not_runnable
from local_builds import ensure_wheel

pytestmark = pytest.mark.timeout(2700)


def kernel_filesystems():
    with open("/proc/filesystems") as table:
        return {line.split()[-1] for line in table if line.strip()}


def why_no_nfs():
    reason = why_not_runnable()
    if reason:
        return reason
    # Loading the modules is all this test asks of the host; where there are
    # none to load (no /lib/modules, or a kernel built without them) it stops.
    if shutil.which("modprobe"):
        run(["modprobe", "-a", "nfsd", "nfs"], timeout=60, check=False)
    missing = {"nfsd", "nfs"} - kernel_filesystems()
    if missing:
        loader = "modprobe could not load it" if shutil.which("modprobe") else "no modprobe here"
        return (f"this kernel cannot serve or mount NFS: {', '.join(sorted(missing))} not in "
                f"/proc/filesystems ({loader})")
    return None


def test_the_workers_mount_the_main_hosts_data_share(tmp_path):
    reason = why_no_nfs()
    if reason:
        pytest.skip(reason)
    cluster = Cluster(tmp_path, ensure_host_image(), privileged=True)
    try:
        cluster.start()
        inventory = tmp_path / "inventory.ini"
        cluster.write_inventory(inventory, main_slots=1, worker_slots=1)
        extra = {"kolo_wheel": ensure_wheel(), "kolo_jupyter_enabled": "false",
                 "kolo_data_dir": "/srv/kolo-data"}
        code, output, _ = run_playbook(inventory, extra, tmp_path / "run.log")
        assert code == 0, output[-6000:]
        cluster.exec("main", "echo written-on-main > /srv/kolo-data/probe", user="kolo")
        for host in ("worker1", "worker2"):
            assert cluster.exec(host, "cat /srv/kolo-data/probe").stdout.strip() == "written-on-main"
            assert cluster.exec(host, "findmnt -n -o FSTYPE /srv/kolo-data").stdout.strip() \
                .startswith("nfs")
        code, output, changed = run_playbook(inventory, extra, tmp_path / "second-run.log")
        assert code == 0 and all(count == 0 for count in changed.values()), output[-6000:]
    finally:
        cluster.stop()
