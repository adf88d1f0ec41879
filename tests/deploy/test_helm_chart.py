"""deploy/helm/kolo rendered by a real Go template engine (text/template and
sprig, as helm renders) under several value sets, every object validated
against Kubernetes' own OpenAPI schemas (kubernetes-validate, strict: an
unknown or misspelt field fails), and what each value set must change."""

import base64
import subprocess

import kubernetes_validate
import pytest
import yaml

from chart_render import run_renderer

# The oldest Kubernetes still widely run and the newest the package ships.
KUBERNETES_VERSIONS = ["1.29.0", "1.37.0"]


def assert_valid(objects):
    assert objects, "the chart rendered nothing"
    for obj in objects:
        for version in KUBERNETES_VERSIONS:
            try:
                kubernetes_validate.validate(obj, version, strict=True)
            except kubernetes_validate.ValidationError as e:
                pytest.fail(f"{obj['kind']} {obj['metadata']['name']} is not valid Kubernetes {version}: {e}")


def env_of(pod_spec):
    return {e["name"]: e["value"] for e in pod_spec["containers"][0]["env"]}


def pod_specs(rendered):
    return [o["spec"]["template"]["spec"] for o in rendered if o["kind"] in ("Deployment", "StatefulSet", "Job")]


@pytest.fixture(scope="module")
def key_pair(tmp_path_factory):
    """A real key pair as seed 000 makes it (ssh-keygen -N "")."""
    d = tmp_path_factory.mktemp("ssh")
    subprocess.run(["ssh-keygen", "-q", "-N", "", "-t", "rsa", "-b", "2048", "-f", str(d / "id_rsa")], check=True, timeout=60)
    return (d / "id_rsa").read_text(), (d / "id_rsa.pub").read_text()


def test_defaults_render_a_workstation_of_a_driver_and_three_workers(render, tmp_path):
    r = render()
    assert_valid(r)
    assert r.kinds() == ["ConfigMap", "Deployment", "Secret", "Service", "StatefulSet"]
    svc, sts = r.one("Service"), r.one("StatefulSet")
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["spec"]["publishNotReadyAddresses"] is False
    assert sts["spec"]["serviceName"] == svc["metadata"]["name"] == "ddp-kolo"
    assert sts["spec"]["replicas"] == 3
    # The Service's selector picks exactly the worker pods.
    worker_labels = sts["spec"]["template"]["metadata"]["labels"]
    assert all(worker_labels.get(k) == v for k, v in svc["spec"]["selector"].items())
    driver_labels = r.one("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert not all(driver_labels.get(k) == v for k, v in svc["spec"]["selector"].items())
    hostfile = r.one("ConfigMap")["data"]["hostfile"].split("\n")
    assert [line for line in hostfile if line] == [
        "ddp-kolo-driver slots=1",
        "ddp-kolo-0.ddp-kolo slots=1",
        "ddp-kolo-1.ddp-kolo slots=1",
        "ddp-kolo-2.ddp-kolo slots=1",
    ]
    driver = r.one("Deployment")["spec"]["template"]["spec"]
    assert driver["hostname"] == "ddp-kolo-driver"
    assert env_of(driver)["MODE"] == "RUN"
    assert driver["containers"][0]["args"] == ["sleep", "infinity"]
    assert env_of(sts["spec"]["template"]["spec"])["MODE"] == "WORKER"
    assert sts["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["tcpSocket"]["port"] == "ssh"
    # Without a given key the chart makes one; OpenSSH derives its public half.
    key = base64.b64decode(r.one("Secret")["data"]["id_rsa"]).decode()
    (tmp_path / "id_rsa").write_text(key)
    (tmp_path / "id_rsa").chmod(0o600)
    pub = subprocess.run(["ssh-keygen", "-y", "-f", str(tmp_path / "id_rsa")], capture_output=True, text=True, timeout=60)
    assert pub.returncode == 0 and pub.stdout.startswith("ssh-rsa "), pub.stderr


def test_seed_000_set_values_carry_the_key_pair_and_worker_count(render, key_pair):
    private, public = key_pair
    # Seed 000 indents every line of the keys with sed 's/^/    /g'.
    indent = lambda text: "".join("    " + line for line in text.splitlines(keepends=True))  # noqa: E731
    r = render(
        "--set", "ssh.useSecret=true",
        "--set", f"ssh.hostKey={indent(private)}",
        "--set", f"ssh.hostKeyPub={indent(public)}",
        "--set", "ssh.port=2022",
        "--set", "worker.number=5",
        "--set", "worker.image.repository=registry.example/kolo",
        "--set", "worker.image.tag=1.0",
        "--set", "driver.image.repository=registry.example/kolo-driver",
    )  # fmt: skip
    assert_valid(r)
    secret = r.one("Secret")["data"]
    assert base64.b64decode(secret["id_rsa"]).decode() == private
    assert base64.b64decode(secret["id_rsa.pub"]).decode() == public
    sts = r.one("StatefulSet")
    assert sts["spec"]["replicas"] == 5
    worker = sts["spec"]["template"]["spec"]
    assert worker["containers"][0]["image"] == "registry.example/kolo:1.0"
    assert worker["containers"][0]["ports"][0]["containerPort"] == 2022
    assert env_of(worker)["WORKER_PORT"] == "2022"
    assert r.one("Service")["spec"]["ports"][0]["port"] == 2022
    assert r.one("Deployment")["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/kolo-driver:cpu"
    hosts = [line for line in r.one("ConfigMap")["data"]["hostfile"].split("\n") if line]
    assert len(hosts) == 6 and hosts[-1] == "ddp-kolo-4.ddp-kolo slots=1"


def test_dataset_pvc_is_mounted_in_every_pod(render):
    r = render(
        "--set", "datasetPvc.enabled=true",
        "--set", "datasetPvc.size=50Gi",
        "--set", "datasetPvc.storageClass=nfs-client",
    )  # fmt: skip
    assert_valid(r)
    pvc = r.one("PersistentVolumeClaim")
    assert pvc["spec"]["storageClassName"] == "nfs-client"
    assert pvc["spec"]["resources"]["requests"]["storage"] == "50Gi"
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    specs = pod_specs(r)
    assert len(specs) == 2
    for spec in specs:
        claims = [v["persistentVolumeClaim"]["claimName"] for v in spec["volumes"] if "persistentVolumeClaim" in v]
        assert claims == [pvc["metadata"]["name"]]
        assert {"name": "dataset", "mountPath": "/data"} in spec["containers"][0]["volumeMounts"]
        assert env_of(spec)["DATA_DIR"] == "/data"
    assert "PersistentVolumeClaim" not in render().kinds()


def test_kubectl_discovery_mode_adds_a_service_account_that_may_only_read_pods(render):
    r = render("--set", "discovery.mode=kubectl")
    assert_valid(r)
    sa, role, binding = r.one("ServiceAccount"), r.one("Role"), r.one("RoleBinding")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"][0]["name"] == sa["metadata"]["name"]
    assert r.one("Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == sa["metadata"]["name"]
    assert "MODE=kubectl" in r.one("ConfigMap")["data"]["discovery.conf"].split("\n")
    # The default needs no API access at all.
    assert not {"ServiceAccount", "Role", "RoleBinding"} & set(render().kinds())


def test_gpu_resources_are_requested_and_limited_equally(render):
    r = render(
        "--set", "resources.worker.gpu=2",
        "--set", "resources.driver.gpu=1",
        "--set", "worker.slots=2",
    )  # fmt: skip
    assert_valid(r)
    worker = r.one("StatefulSet")["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert worker["limits"]["nvidia.com/gpu"] == 2 == worker["requests"]["nvidia.com/gpu"]
    assert worker["limits"]["memory"] == "4Gi"
    driver = r.one("Deployment")["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert driver["limits"]["nvidia.com/gpu"] == 1
    assert "ddp-kolo-0.ddp-kolo slots=2" in r.one("ConfigMap")["data"]["hostfile"]
    assert "nvidia.com/gpu" not in str(render().one("StatefulSet"))


def test_driver_job_runs_the_entrypoint_main_mode_once(render):
    r = render(
        "--set", "driver.job.enabled=true",
        "--set", "driver.job.minNp=2",
        "--set", "driver.job.maxNp=6",
        "--set", "driver.job.enableTimeline=true",
        "--set", "driver.job.koloArgs=--verbose",
    )  # fmt: skip
    assert_valid(r)
    job = r.one("Job")
    spec = job["spec"]["template"]["spec"]
    assert spec["restartPolicy"] == "Never" and job["spec"]["backoffLimit"] == 0
    env = env_of(spec)
    assert (env["MODE"], env["MIN_NP"], env["MAX_NP"], env["ENABLE_TIMELINE"], env["KOLO_ARGS"]) == ("MAIN", "2", "6", "1", "--verbose")
    assert env["DISCOVERY_SCRIPT"] == "/kolo/generated/discover-hosts.sh"
    assert spec["containers"][0]["args"] == ["python", "/kolo/examples/pytorch/mnist.py"]
    assert "Deployment" not in r.kinds()


def test_data_from_object_storage_reaches_every_pod(render):
    r = render(
        "--set", "data.url=s3://kolo-training-data/mnist/",
        "--set", "data.s3EndpointUrl=http://minio.storage:9000",
        "--set", "data.dir=/scratch/mnist",
        "--set", "data.credentialsSecret=s3-credentials",
    )  # fmt: skip
    assert_valid(r)
    for spec in pod_specs(r):
        env = env_of(spec)
        assert (env["DATA_URL"], env["S3_ENDPOINT_URL"], env["DATA_DIR"]) == (
            "s3://kolo-training-data/mnist/",
            "http://minio.storage:9000",
            "/scratch/mnist",
        )
        assert spec["containers"][0]["envFrom"] == [{"secretRef": {"name": "s3-credentials"}}]
    # Onto the shared volume when no dir is given.
    on_pvc = render("--set", "data.url=s3://b/p/", "--set", "datasetPvc.enabled=true")
    assert {env_of(spec)["DATA_DIR"] for spec in pod_specs(on_pvc)} == {"/data"}
    assert all("DATA_URL" not in env_of(spec) for spec in pod_specs(render()))


def test_horovod_paths_mount_the_same_files_under_horovods_names(render):
    for spec in pod_specs(render()):
        volume = next(v for v in spec["volumes"] if v["name"] == "generated-horovod")
        paths = {item["key"]: item["path"] for item in volume["configMap"]["items"]}
        assert paths == {"hostfile": "hostfile", "discovery.conf": "discovery.conf", "discover-hosts.sh": "discoverHosts.sh"}
        mounts = {m["name"]: m["mountPath"] for m in spec["containers"][0]["volumeMounts"]}
        assert mounts["generated-horovod"] == "/horovod/generated"
    for spec in pod_specs(render("--set", "horovodPaths=false")):
        assert "generated-horovod" not in str(spec)


def test_install_notes_give_the_commands_for_this_release(renderer, render):
    notes = run_renderer(renderer, ["--notes", "--set", "worker.number=4", "--set", "worker.slots=2"], name="kolo-ddp")
    assert notes.returncode == 0, notes.stderr
    assert "kubectl exec -it deploy/kolo-ddp-driver -n ddp -- bash" in notes.stdout
    # -np is every slot of the hostfile: the driver's 1 and 4 workers' 2.
    hostfile = render("--set", "worker.number=4", "--set", "worker.slots=2", name="kolo-ddp").one("ConfigMap")["data"]["hostfile"]
    slots = sum(int(line.split("slots=")[1]) for line in hostfile.splitlines() if line)
    assert f"kolorun -np {slots} --hostfile /kolo/generated/hostfile" in notes.stdout and slots == 9
    job_notes = run_renderer(renderer, ["--notes", "--set", "driver.job.enabled=true"])
    assert "kubectl logs -f job/ddp-kolo-driver -n ddp" in job_notes.stdout
    assert "kubectl exec" not in job_notes.stdout


SCHEDULING_VALUES = """
podSecurityContext:
  fsGroup: 1000
nodeSelector:
  kolo/pool: training
tolerations:
  - {key: gpu, operator: Exists, effect: NoSchedule}
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector: {matchLabels: {app.kubernetes.io/component: worker}}
"""


def test_scheduling_values_from_a_values_file_reach_both_pod_kinds(render, tmp_path):
    values = tmp_path / "values.yaml"
    values.write_text(SCHEDULING_VALUES)
    r = render("-f", str(values))
    assert_valid(r)
    wanted = yaml.safe_load(SCHEDULING_VALUES)
    for spec in pod_specs(r):
        assert spec["securityContext"] == wanted["podSecurityContext"]
        assert (spec["nodeSelector"], spec["tolerations"], spec["affinity"]) == (
            wanted["nodeSelector"],
            wanted["tolerations"],
            wanted["affinity"],
        )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--set", "ssh.useSecret=true"], "ssh.useSecret=true needs ssh.hostKey"),
        (["--set", "discovery.mode=api"], 'discovery.mode must be dns or kubectl, not "api"'),
        (["--set", "data.url=s3://b/p/"], "data.url needs data.dir (or datasetPvc.enabled)"),
    ],
)
def test_bad_values_fail_with_a_clear_message(renderer, args, message):
    result = run_renderer(renderer, args)
    assert result.returncode == 1
    assert message in result.stderr and result.stdout == ""
