"""The Helm chart's own pods, run as containers (pod_runner.py): the chart is
rendered with seed 000's values (its own ssh key pair in the Secret, three
workers, the driver taking one rank), the workers' StatefulSet pods and the
driver's Deployment pod start from the rendered specs with the rendered
ConfigMap and Secret mounted, and the workers' DNS names appear once their
sshd answers, as the headless Service publishes them. Then seed 000's two
commands are typed in the driver as the tutorial does after `kubectl exec`:
horovodrun over the chart's hostfile with --mpi-args (mpirun over ssh to the
workers), and the elastic one over the chart's discovery script.

The image Horovod's users run has Horovod's examples under /horovod/examples;
the Kolo image does not, so the stand-ins of tests/python/launcher/seed000
and their data are mounted there (and tiny-imagenet at /tmp/tiny-imagenet-200),
as the user's own image would carry them.
"""

import pathlib
import re
import subprocess

import pytest
import yaml

from chart_render import RENDER_SRC, Rendered, run_renderer
from conftest import readable_by_all
from pod_runner import PodCluster, pod_logs_text
from test_elastic_seed import write_mnist
from test_seed000 import COMMAND_1, COMMAND_2, STAND_INS, write_tiny_imagenet

pytestmark = pytest.mark.timeout(2400)
RELEASE = "kolo"
WORKERS = 3
COMMAND_TIMEOUT = 600


def _run(argv, timeout=300):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{argv} failed:\n{result.stdout}{result.stderr}"
    return result


@pytest.fixture(scope="module")
def horovod_files(tmp_path_factory):
    """/horovod/examples as the user's image has it, and tiny-imagenet."""
    root = tmp_path_factory.mktemp("horovod")
    examples = root / "examples"
    for relative in ("pytorch/pytorch_lightning_mnist.py", "elastic/pytorch/pytorch_imagenet_resnet50_elastic.py"):
        target = examples / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text((pathlib.Path(STAND_INS) / target.name).read_text())
    write_mnist(str(examples / "pytorch" / "data"), train=2000, test=400)
    imagenet = root / "tiny-imagenet-200"
    write_tiny_imagenet(str(imagenet))
    readable_by_all(root)
    return [(examples, "/horovod/examples"), (imagenet, "/tmp/tiny-imagenet-200")]


@pytest.fixture(scope="module")
def chart(cpu_image, horovod_files, tmp_path_factory):
    """The rendered chart's pods running: (cluster, driver pod, worker pods)."""
    work = tmp_path_factory.mktemp("chart")
    _run(["sh", str(RENDER_SRC / "build.sh"), str(work)])
    # Seed 000 makes the key pair with ssh-keygen and hands it to the chart.
    _run(["ssh-keygen", "-q", "-t", "rsa", "-b", "3072", "-N", "", "-f", str(work / "id_rsa")])
    repository, tag = cpu_image.rsplit(":", 1)
    values = ["--set", f"worker.number={WORKERS}", "--set", "driver.slots=1", "--set", "ssh.useSecret=true",
              "--set-file", f"ssh.hostKey={work / 'id_rsa'}", "--set-file", f"ssh.hostKeyPub={work / 'id_rsa.pub'}"]
    for role in ("worker", "driver"):
        values += ["--set", f"{role}.image.repository={repository}", "--set", f"{role}.image.tag={tag}"]
    rendered = run_renderer(work / "render", values, name=RELEASE, namespace="default")
    assert rendered.returncode == 0, rendered.stderr
    objects = Rendered(o for o in yaml.safe_load_all(rendered.stdout) if o is not None)
    cluster = PodCluster(work / "pods")
    try:
        cluster.add_objects(objects)
        workers_set = objects.one("StatefulSet")
        service = workers_set["spec"]["serviceName"]
        assert service == objects.one("Service")["metadata"]["name"]
        workers = [cluster.run_pod(f"{workers_set['metadata']['name']}-{i}", workers_set["spec"]["template"]["spec"],
                                   hostname=f"{workers_set['metadata']['name']}-{i}", subdomain=service,
                                   extra_mounts=horovod_files)
                   for i in range(workers_set["spec"]["replicas"])]
        for pod in workers:
            cluster.wait_ready(pod, timeout=180)
        driver_spec = objects.one("Deployment")["spec"]["template"]["spec"]
        driver = cluster.run_pod("driver", driver_spec, extra_mounts=horovod_files)
        # MODE=RUN sets up ~/.ssh and then runs `sleep infinity`: the pod is
        # ready for `kubectl exec` once the ssh config is there.
        cluster.wait_for_file(driver, "~/.ssh/config")
        yield cluster, driver, workers
    finally:
        cluster.close()


def test_discovery_script_lists_the_driver_and_the_ready_workers(chart):
    cluster, driver, workers = chart
    result = cluster.exec(driver, "/horovod/generated/discoverHosts.sh", timeout=120)
    assert result.returncode == 0, result.stderr
    expected = [f"{RELEASE}-driver:1"] + [f"{RELEASE}-{i}.{RELEASE}:1" for i in range(len(workers))]
    assert result.stdout.split() == expected


def _type_in_driver(cluster, driver, command):
    """The command as the tutorial types it after `kubectl exec` into the
    driver; fails with every pod's log unless it exits 0."""
    result = cluster.exec(driver, command, timeout=COMMAND_TIMEOUT)
    output = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    print(output)  # shown by pytest -rP
    assert result.returncode == 0, output + pod_logs_text(cluster)
    return result, output


def test_seed_command_1_mpirun_over_the_charts_hostfile(chart):
    cluster, driver, workers = chart
    result, output = _type_in_driver(cluster, driver, COMMAND_1)
    # mpirun's --display-map names every host of the chart's hostfile.
    for host in [f"{RELEASE}-driver"] + [f"{RELEASE}-{i}.{RELEASE}" for i in range(len(workers))]:
        assert re.search(rf"Data for node: {re.escape(host)}\s", output), output
    ranks = re.findall(r"\[1,(\d)\]<stdout>:rank (\d) of 4 \(local rank (\d)\): epoch 1 loss", result.stdout)
    assert sorted(ranks) == [(str(r), str(r), "0") for r in range(4)], output
    accuracy = re.search(r"<stdout>:test accuracy over 4 ranks: ([0-9.]+)", result.stdout)
    assert accuracy and float(accuracy.group(1)) > 0.5, output


def test_seed_command_2_elastic_over_the_charts_discovery_script(chart):
    cluster, driver, workers = chart
    result, output = _type_in_driver(cluster, driver, COMMAND_2)
    assert "--mpi-args" in result.stderr and "ignored" in result.stderr, output
    epochs = re.findall(r"\[(\d)\]<stdout>:rank (\d) of 4: epoch (\d) train loss", result.stdout)
    assert sorted(epochs) == sorted((str(r), str(r), str(e)) for r in range(4) for e in (1, 2)), output
    # Rank 0 runs on the driver (the first host discovery names) and writes
    # its checkpoints in the working directory the exec starts in.
    sizes = cluster.exec(driver, "stat -c %s checkpoint-1.pth.tar checkpoint-2.pth.tar", timeout=60)
    assert sizes.returncode == 0, sizes.stderr
    assert all(int(size) > 10 ** 7 for size in sizes.stdout.split()), sizes.stdout
