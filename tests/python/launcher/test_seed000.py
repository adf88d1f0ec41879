"""Seed 000's two horovodrun commands, exactly as the tutorial types them,
with local data (no network).

Command 1 runs through `--mpi-args`, so kolorun hands the start to OpenMPI's
mpirun, here across two network-namespace hosts reached over ssh (the
hostfile names them; mpirun gets the hosts' ssh port and key from
OMPI_MCA_plm_rsh_args, as a cluster's OpenMPI would from its own
configuration, since the command must stay as typed). Command 2 is an
elastic job (`--host-discovery-script`), where horovodrun ignores
`--mpi-args` and uses its own launcher; its discovery script names two
loopback "hosts" of this machine, because kolorun's own ssh would need the
hosts' port and key, which the command does not give.

The commands read /horovod and /tmp/tiny-imagenet-200. The hosts share this
machine's files, so the test makes those paths (and skips when they exist:
they are not its own) and removes them afterwards. Horovod's examples are
not in its PyPI sources, so the scripts at their paths are the stand-ins of
seed000/ (see seed000/README.md). Needs root (for /horovod), mpirun and
torchvision; the ssh hosts need `ip netns` and sshd.
"""

import os
import re
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest

from netns_hosts import NetnsHosts, unavailable_reason
from test_elastic_seed import write_mnist

COMMAND_1 = """horovodrun -n 4 --hostfile /horovod/generated/hostfile --mpi-args "--mca orte_keep_fqdn_hostnames t --allow-run-as-root --display-map --tag-output --timestamp-output" bash -c 'python /horovod/examples/pytorch/pytorch_lightning_mnist.py'"""  # noqa: E501
COMMAND_2 = """horovodrun -np 4 --min-np 4 --max-np 4 --host-discovery-script /horovod/generated/discoverHosts.sh --mpi-args "--mca orte_keep_fqdn_hostnames t --allow-run-as-root --display-map --tag-output --timestamp-output" bash -c 'python /horovod/examples/elastic/pytorch/pytorch_imagenet_resnet50_elastic.py --train-dir=/tmp/tiny-imagenet-200/train --val-dir=/tmp/tiny-imagenet-200/val --batch-size=128 --val-batch-size=128'"""  # noqa: E501

HOROVOD = "/horovod"
TINY_IMAGENET = "/tmp/tiny-imagenet-200"
STAND_INS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seed000")
MNIST_SCRIPT = os.path.join(HOROVOD, "examples", "pytorch", "pytorch_lightning_mnist.py")
RESNET_SCRIPT = os.path.join(HOROVOD, "examples", "elastic", "pytorch",
                             "pytorch_imagenet_resnet50_elastic.py")
_JOB_TIMEOUT = 240  # seconds for one command, start to exit


def _missing():
    if os.geteuid() != 0:
        return "needs root to make /horovod"
    if shutil.which("mpirun") is None:
        return "OpenMPI's mpirun is not installed"
    try:
        import PIL  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as error:
        return f"torchvision or PIL cannot be imported: {error}"
    return None


def write_tiny_imagenet(root, classes=2, train_per_class=16, val_per_class=4, seed=5):
    """ImageFolder trees as tiny-imagenet's train/ has them
    (train/<wnid>/images/*.JPEG; val/<wnid>/*.JPEG): small images whose
    colour says their class."""
    from PIL import Image
    rng = np.random.default_rng(seed)
    for c in range(classes):
        wnid = f"n0{c + 1:07d}"
        for part, count, sub in (("train", train_per_class, "images"), ("val", val_per_class, "")):
            folder = os.path.join(root, part, wnid, sub)
            os.makedirs(folder, exist_ok=True)
            for i in range(count):
                pixels = rng.integers(0, 60, (32, 32, 3)).astype(np.uint8)
                pixels[:, :, c % 3] += 180
                Image.fromarray(pixels).save(os.path.join(folder, f"{wnid}_{i}.JPEG"))


@pytest.fixture(scope="module")
def seed_paths():
    """/horovod with the stand-in scripts and MNIST, /tmp/tiny-imagenet-200;
    removed afterwards. mkdir is the claim: paths that exist are not ours."""
    reason = _missing()
    if reason:
        pytest.skip(f"seed 000's commands: {reason}")
    try:
        os.mkdir(HOROVOD)
    except FileExistsError:
        pytest.skip(f"{HOROVOD} exists already and is not this test's")
    try:
        os.mkdir(TINY_IMAGENET)
    except FileExistsError:
        os.rmdir(HOROVOD)
        pytest.skip(f"{TINY_IMAGENET} exists already and is not this test's")
    try:
        os.makedirs(os.path.join(HOROVOD, "generated"))
        for script in (MNIST_SCRIPT, RESNET_SCRIPT):
            os.makedirs(os.path.dirname(script))
            shutil.copyfile(os.path.join(STAND_INS, os.path.basename(script)), script)
        write_mnist(os.path.join(os.path.dirname(MNIST_SCRIPT), "data"), train=2000, test=400)
        write_tiny_imagenet(TINY_IMAGENET)
        yield
    finally:
        shutil.rmtree(HOROVOD, ignore_errors=True)
        shutil.rmtree(TINY_IMAGENET, ignore_errors=True)


def _env(**extra):
    """No job around us; `horovodrun` and `python` are this venv's."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KOLO_", "HOROVOD_", "OMPI_", "PMIX_"))}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def _write(path, text, executable=False):
    with open(path, "w") as f:
        f.write(text)
    if executable:
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def test_command_1_mpi_args_across_ssh_hosts(seed_paths, tmp_path):
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"network-namespace ssh hosts: {reason}")
    # Bash reads ~/.bashrc when ssh runs it (Debian builds it so), also for
    # the command's `bash -c` on the hosts; a root ~/.bashrc that puts another
    # Python first in PATH would change what `python` is there. An empty
    # home on the hosts keeps the PATH kolorun passes on, as on a cluster.
    home = tmp_path / "home"
    home.mkdir()
    with NetnsHosts(2, session_env={"HOME": str(home)}) as hosts:
        _write(os.path.join(HOROVOD, "generated", "hostfile"),
               "".join(f"{address} slots=2\n" for address in hosts.addresses))
        ssh = (f"-p {hosts.port} -i {hosts.user_key} -o BatchMode=yes "
               f"-o StrictHostKeyChecking=yes -o UserKnownHostsFile={hosts.known_hosts}")
        result = subprocess.run(hosts.exec_argv(hosts.caller_ns, ["bash", "-c", COMMAND_1]),
                                capture_output=True, text=True, cwd=tmp_path,
                                env=_env(OMPI_MCA_plm_rsh_args=ssh), timeout=_JOB_TIMEOUT)
    output = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    print(output)  # shown by pytest -rP
    assert result.returncode == 0, output
    # mpirun's --display-map shows both hosts; --tag-output marks each line.
    for address in hosts.addresses:
        assert re.search(rf"Data for node: {re.escape(address)}\s", output), output
    ranks = re.findall(r"\[1,(\d)\]<stdout>:rank (\d) of 4 \(local rank (\d)\): epoch 1 loss",
                       result.stdout)
    assert sorted(ranks) == [("0", "0", "0"), ("1", "1", "1"), ("2", "2", "0"),
                             ("3", "3", "1")], output
    accuracy = re.search(r"<stdout>:test accuracy over 4 ranks: ([0-9.]+)", result.stdout)
    assert accuracy and float(accuracy.group(1)) > 0.5, output


def test_command_2_elastic_ignores_mpi_args_and_trains_on_4_ranks(seed_paths, tmp_path):
    _write(os.path.join(HOROVOD, "generated", "discoverHosts.sh"),
           "#!/bin/sh\necho 127.0.0.1:2\necho 127.0.0.2:2\n", executable=True)
    result = subprocess.run(["bash", "-c", COMMAND_2], capture_output=True, text=True,
                            cwd=tmp_path, env=_env(), timeout=_JOB_TIMEOUT)
    output = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    print(output)  # shown by pytest -rP
    assert result.returncode == 0, output
    assert "--mpi-args" in result.stderr and "ignored" in result.stderr, output
    epochs = re.findall(r"\[(\d)\]<stdout>:rank (\d) of 4: epoch (\d) train loss", result.stdout)
    assert sorted(epochs) == sorted((str(r), str(r), str(e)) for r in range(4)
                                    for e in (1, 2)), output
    for epoch in (1, 2):
        assert (tmp_path / f"checkpoint-{epoch}.pth.tar").stat().st_size > 10 ** 7, output
