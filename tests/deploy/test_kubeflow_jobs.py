"""deploy/k8s: the MPIJob (kubeflow.org/v2beta1) and PyTorchJob (kubeflow.org/v1)
that run a Kolo job.

Neither operator's CRD is packaged in Debian or on PyPI, so schemas/ holds a
JSON schema written for these tests from each operator's documented API, for
the fields the manifests use (unknown fields are errors); the pod templates
inside are checked against Kubernetes' own PodTemplate schema
(kubernetes-validate, strict). Then what makes the job work with Kolo: the
launcher's mpirun and the worker count agree, the keys are where the
entrypoint looks, the variables ranks need travel with mpirun, the
PyTorchJob's pods share one KOLO_SECRET and rank 0 exposes the store port."""

import copy
import json
import pathlib

import jsonschema
import kubernetes_validate
import pytest
import yaml

HERE = pathlib.Path(__file__).resolve().parent
K8S = HERE.parents[1] / "deploy" / "k8s"
KUBERNETES_VERSIONS = ["1.29.0", "1.37.0"]


def load(name):
    return yaml.safe_load((K8S / name).read_text())


def schema_errors(obj, schema_name):
    schema = json.loads((HERE / "schemas" / schema_name).read_text())
    return [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(obj)]


def replica_specs(job):
    return job["spec"]["mpiReplicaSpecs" if job["kind"] == "MPIJob" else "pytorchReplicaSpecs"]


def container(job, role):
    return replica_specs(job)[role]["template"]["spec"]["containers"][0]


def env_of(c):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in c["env"]}


JOBS = [("mpijob.yaml", "mpijob-v2beta1.schema.json"), ("pytorchjob.yaml", "pytorchjob-v1.schema.json")]


@pytest.mark.parametrize("manifest, schema", JOBS)
def test_manifest_matches_its_operators_api(manifest, schema):
    job = load(manifest)
    assert schema_errors(job, schema) == []
    for role, spec in replica_specs(job).items():
        pod_template = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": f"x-{role.lower()}"}, "template": spec["template"]}
        for version in KUBERNETES_VERSIONS:
            try:
                kubernetes_validate.validate(pod_template, version, strict=True)
            except kubernetes_validate.ValidationError as e:
                pytest.fail(f"{manifest} {role} pod template is not valid Kubernetes {version}: {e}")


@pytest.mark.parametrize(
    "manifest, schema, break_it",
    [
        ("mpijob.yaml", "mpijob-v2beta1.schema.json", lambda j: j["spec"].update(mpiReplicaSpec=j["spec"].pop("mpiReplicaSpecs"))),
        ("mpijob.yaml", "mpijob-v2beta1.schema.json", lambda j: j["spec"].update(slotsPerWorker=0)),
        ("mpijob.yaml", "mpijob-v2beta1.schema.json", lambda j: j["spec"]["mpiReplicaSpecs"]["Launcher"].update(replicas=2)),
        ("mpijob.yaml", "mpijob-v2beta1.schema.json", lambda j: j["spec"].update(mpiImplementation="MVAPICH")),
        ("pytorchjob.yaml", "pytorchjob-v1.schema.json", lambda j: j["spec"]["pytorchReplicaSpecs"].pop("Master")),
        ("pytorchjob.yaml", "pytorchjob-v1.schema.json", lambda j: container(j, "Worker").update(name="trainer")),
        ("pytorchjob.yaml", "pytorchjob-v1.schema.json", lambda j: j["spec"]["runPolicy"].update(cleanPodPolicy="Always")),
    ],
)
def test_the_schemas_reject_what_the_operators_reject(manifest, schema, break_it):
    job = copy.deepcopy(load(manifest))
    break_it(job)
    assert schema_errors(job, schema) != []


def test_mpijob_launcher_runs_plain_mpirun_over_the_workers_slots():
    job = load("mpijob.yaml")
    launcher, worker = container(job, "Launcher"), container(job, "Worker")
    args = launcher["args"]
    assert args[0] == "mpirun"
    workers = job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"]
    assert int(args[args.index("-np") + 1]) == workers * job["spec"]["slotsPerWorker"]
    # Ranks on workers are sshd's children: what they need goes with -x.
    forwarded = [args[i + 1] for i, a in enumerate(args) if a == "-x"]
    assert "DATA_DIR" in forwarded and all(name in env_of(launcher) for name in forwarded)
    # --data-dir is where the entrypoint puts the data.
    assert args[args.index("--data-dir") + 1] == env_of(launcher)["DATA_DIR"] == env_of(worker)["DATA_DIR"]
    # The entrypoints find the operator's keys, and client and server agree on the port.
    for c in (launcher, worker):
        assert env_of(c)["SSH_KEY_DIR"] == job["spec"]["sshAuthMountPath"]
        assert env_of(c)["WORKER_PORT"] == env_of(worker)["WORKER_PORT"]
    assert env_of(launcher)["MODE"] == "RUN" and env_of(worker)["MODE"] == "WORKER"
    assert worker["ports"][0]["containerPort"] == int(env_of(worker)["WORKER_PORT"])
    # Under mpirun across hosts Kolo sends its own secret over MPI: none is set.
    assert "KOLO_SECRET" not in str(job)
    # Seed 001's data flow: S3-compatible storage at a configurable endpoint.
    for c in (launcher, worker):
        assert env_of(c)["DATA_URL"].startswith("s3://")
        assert env_of(c)["S3_ENDPOINT_URL"].startswith(("http://", "https://"))


def test_pytorchjob_pods_share_one_secret_and_rank_0_exposes_the_store():
    job = load("pytorchjob.yaml")
    master, worker = container(job, "Master"), container(job, "Worker")
    assert master["args"] == worker["args"]
    for c in (master, worker):
        assert env_of(c)["KOLO_SECRET"] == {"secretKeyRef": {"name": "kolo-job-secret", "key": "KOLO_SECRET"}}
        assert env_of(c)["MODE"] == "RUN"
        # DATA_DIR is on the mounted data volume.
        mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
        assert env_of(c)["DATA_DIR"].startswith(mounts["dataset"] + "/")
    ports = {p["name"]: p["containerPort"] for p in master["ports"]}
    # Kolo's store listens on MASTER_PORT + 1 (docs/user-guide.md).
    assert ports["kolo-store"] == ports["pytorchjob-port"] + 1
