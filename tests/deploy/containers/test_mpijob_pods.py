"""deploy/k8s/mpijob.yaml run as the MPI Operator (kubeflow.org/v2beta1) runs
it, with its pods as containers (pod_runner.py). What the operator adds to
the manifest's pod templates is done here the same way:

- a Secret "<job>-ssh" with an ECDSA P-521 key (ssh-privatekey, ssh-publickey)
  mounted at sshAuthMountPath as id_rsa, id_rsa.pub and authorized_keys, mode
  0600 only where that path is /root/.ssh;
- a ConfigMap "<job>-config" whose hostfile lists
  "<job>-worker-N.<job>-worker.<namespace>.svc slots=<slotsPerWorker>", mounted
  at /etc/mpi in the launcher, which gets OMPI_MCA_orte_default_hostfile,
  OMPI_MCA_orte_keep_fqdn_hostnames, OMPI_MCA_plm_rsh_args and
  OMPI_MCA_orte_set_default_slots;
- worker pods "<job>-worker-N" in the headless Service "<job>-worker", whose
  container gets `/usr/sbin/sshd -De` when it names neither command nor args;
  the launcher "<job>-launcher" starts once every worker is ready
  (launcherCreationPolicy: WaitForWorkersReady).

The data set comes the way seed 001's platform brings it, from S3-compatible
object storage: a real S3 server (moto's, s3_server.py) answers at the
manifest's S3_ENDPOINT_URL host, holding an MNIST-format data set at its
DATA_URL, and every pod's entrypoint fetches it. The launcher's mpirun then
trains examples/pytorch/mnist.py on the workers and must exit 0.
"""

import re
import subprocess

import pytest
import yaml

from docker_host import REPO
from pod_runner import PodCluster, pod_logs_text
from s3_server import S3Server
from test_elastic_seed import write_mnist

pytestmark = pytest.mark.timeout(1800)
MANIFEST = REPO / "deploy" / "k8s" / "mpijob.yaml"
NAMESPACE = "default"
ROOT_SSH = "/root/.ssh"


def _env(container):
    return {e["name"]: e["value"] for e in container.get("env", [])}


def _operator_key(workdir):
    """The operator's key: ECDSA P-521, the private half in PEM."""
    key = workdir / "operator_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-b", "521", "-m", "PEM", "-N", "", "-f", str(key)],
                   check=True, capture_output=True, timeout=60)
    return key.read_text(), (workdir / "operator_key.pub").read_text()


def _with_operator_additions(template, job, role, index=None):
    """A replica's pod spec as the operator creates the pod."""
    name = job["metadata"]["name"]
    spec = yaml.safe_load(yaml.safe_dump(template["spec"]))  # a deep copy
    container = spec["containers"][0]
    if role == "worker":
        spec["hostname"] = f"{name}-worker-{index}"
        if not container.get("command") and not container.get("args"):
            container["command"] = ["/usr/sbin/sshd", "-De"]
        container.setdefault("env", []).append({"name": "K_MPI_JOB_ROLE", "value": "worker"})
    else:
        spec["hostname"] = f"{name}-launcher"
        slots = str(job["spec"].get("slotsPerWorker", 1))
        container.setdefault("env", []).extend([
            {"name": "K_MPI_JOB_ROLE", "value": "launcher"},
            {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
            {"name": "OMPI_MCA_orte_default_hostfile", "value": "/etc/mpi/hostfile"},
            {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"},
            {"name": "OMPI_MCA_orte_set_default_slots", "value": slots},
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": ""},
            {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": ""},
        ])
        spec.setdefault("volumes", []).append(
            {"name": "mpi-job-config", "configMap": {"name": f"{name}-config", "items": [
                {"key": "hostfile", "path": "hostfile", "mode": 0o444}]}})
        container.setdefault("volumeMounts", []).append({"name": "mpi-job-config", "mountPath": "/etc/mpi"})
    spec["subdomain"] = f"{name}-worker"
    mount_path = job["spec"].get("sshAuthMountPath", ROOT_SSH)
    ssh_volume = {"secretName": f"{name}-ssh", "items": [
        {"key": "ssh-privatekey", "path": "id_rsa"}, {"key": "ssh-publickey", "path": "id_rsa.pub"},
        {"key": "ssh-publickey", "path": "authorized_keys"}]}
    if mount_path == ROOT_SSH:
        ssh_volume["defaultMode"] = 0o600
    spec.setdefault("volumes", []).append({"name": "ssh-auth", "secret": ssh_volume})
    container.setdefault("volumeMounts", []).append({"name": "ssh-auth", "mountPath": mount_path})
    return spec


def _operator_objects(job, workdir, credentials):
    name = job["metadata"]["name"]
    slots = job["spec"].get("slotsPerWorker", 1)
    workers = job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"]
    private, public = _operator_key(workdir)
    hostfile = "".join(f"{name}-worker-{i}.{name}-worker.{NAMESPACE}.svc slots={slots}\n" for i in range(workers))
    return [
        {"kind": "Secret", "metadata": {"name": f"{name}-ssh"},
         "stringData": {"ssh-privatekey": private, "ssh-publickey": public}},
        {"kind": "ConfigMap", "metadata": {"name": f"{name}-config"}, "data": {"hostfile": hostfile}},
        # The credentials Secret the manifest's comment tells users to create.
        {"kind": "Secret", "metadata": {"name": "kolo-s3-credentials"}, "stringData": credentials},
    ]


def _use_image(spec, image):
    """The manifest names kolo:cpu, the image as users tag it; here it is the test's."""
    assert spec["containers"][0]["image"] == "kolo:cpu"
    spec["containers"][0]["image"] = image


def test_mpijob_trains_on_data_from_s3_as_the_operator_runs_it(cpu_image, tmp_path):
    job = yaml.safe_load(MANIFEST.read_text())
    replicas = job["spec"]["mpiReplicaSpecs"]
    launcher_container = replicas["Launcher"]["template"]["spec"]["containers"][0]
    data_url, endpoint = _env(launcher_container)["DATA_URL"], _env(launcher_container)["S3_ENDPOINT_URL"]
    data = tmp_path / "mnist"
    write_mnist(str(data), train=3000, test=500)
    cluster = PodCluster(tmp_path / "pods", namespace=NAMESPACE)
    try:
        with S3Server(cluster, endpoint, cpu_image) as s3:
            s3.upload(data, data_url)
            cluster.add_objects(_operator_objects(job, tmp_path, s3.credentials))
            workers = []
            for i in range(replicas["Worker"]["replicas"]):
                spec = _with_operator_additions(replicas["Worker"]["template"], job, "worker", i)
                _use_image(spec, cpu_image)
                workers.append(cluster.run_pod(spec["hostname"], spec))
            for pod in workers:  # WaitForWorkersReady
                cluster.wait_ready(pod, timeout=240)
            spec = _with_operator_additions(replicas["Launcher"]["template"], job, "launcher")
            _use_image(spec, cpu_image)
            launcher = cluster.run_pod(spec["hostname"], spec)
            code = cluster.wait_exit(launcher, timeout=900)
            log = cluster.logs(launcher)
            assert code == 0, f"launcher exited {code}:\n{log}\n{pod_logs_text(cluster)}"
    finally:
        cluster.close()
    # Every pod fetched the data from the S3 server; the ranks trained on it
    # (not on the digits mnist.py falls back to), on both workers.
    assert f"fetched {data_url} into /data/mnist" in log, log
    assert re.search(r"\[1,0\]<stdout>:training on .*/data/mnist.*: 3000 train and 500 test images, 2 rank",
                     log), log
    accuracy = re.search(r"\[1,0\]<stdout>:test accuracy: ([0-9.]+)%", log)
    assert accuracy and float(accuracy.group(1)) > 50, log
