"""Kubernetes pods as Docker containers, so that the pod specs of the chart
(deploy/helm/kolo) and of the Kubeflow manifests (deploy/k8s) run for real
here, where there is no cluster: a small stand-in for what a kubelet and the
cluster's DNS do with the fields those manifests use.

- volumes: ConfigMap and Secret data written to files (items, defaultMode and
  item modes; with the pod's fsGroup as their group, as the kubelet does) and
  mounted read-only; an emptyDir as a tmpfs of its sizeLimit (default 1Gi);
  a persistentVolumeClaim as a named volume every pod of the cluster shares;
- env values and envFrom secretRefs (optional ones may be missing);
- command and args: command replaces the image's ENTRYPOINT, args its CMD;
- securityContext runAsUser, runAsGroup and fsGroup; resources' cpu and
  memory limits (docker --cpus, --memory);
- hostname and subdomain: a pod's DNS names "<hostname>.<subdomain>" (and the
  namespace-qualified forms) are published once its readiness probe passes,
  as a headless Service lists only ready pods. Every pod starts on two
  networks: "pods", where others reach it by address, and "dns", through
  which it resolves the others' names from the start (Docker's DNS answers
  a name only on a network where it is an alias); when it turns ready it
  is connected to "dns" again, now with its names as aliases.

Any other field is refused with an AssertionError that names it, so a
manifest that grows a field this stand-in would silently ignore fails the
tests instead of passing untested. Liveness probes, restarts and scheduling
fields (nodeSelector, tolerations, affinity) have no meaning on one machine
and are not emulated.
"""

import base64
import os
import pathlib
import re
import shutil
import socket
import time
import uuid

from docker_host import docker

POD_FIELDS = {"containers", "volumes", "securityContext", "hostname", "subdomain", "restartPolicy",
              "nodeSelector", "tolerations", "affinity"}
CONTAINER_FIELDS = {"name", "image", "imagePullPolicy", "command", "args", "env", "envFrom", "ports",
                    "readinessProbe", "livenessProbe", "resources", "volumeMounts"}
SECURITY_FIELDS = {"runAsUser", "runAsGroup", "fsGroup", "runAsNonRoot"}
_QUANTITY = re.compile(r"^([0-9.]+)(m|Ki|Mi|Gi|Ti)?$")
_UNITS = {None: 1, "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40}


def _refuse_unknown(kind, mapping, allowed):
    unknown = sorted(set(mapping) - allowed)
    assert not unknown, f"pod_runner does not emulate {kind} field(s) {unknown}: extend it or change the manifest"


def quantity(text):
    """A Kubernetes quantity ("500m", "2", "4Gi") as a number."""
    match = _QUANTITY.match(str(text))
    assert match, f"unsupported quantity {text!r}"
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "m" else value * _UNITS[unit]


class Pod:
    def __init__(self, name, container, dns_names, readiness_port):
        self.name = name
        self.container = container
        self.dns_names = dns_names
        self.readiness_port = readiness_port


class PodCluster:
    """Containers for pods, two networks and the ConfigMaps and Secrets the
    pods mount; close() removes all of it."""

    def __init__(self, workdir, namespace="default"):
        self.id = f"kolopods{uuid.uuid4().hex[:8]}"
        self.namespace = namespace
        self.workdir = pathlib.Path(workdir)
        self.pods_network = f"{self.id}-pods"
        self.dns_network = f"{self.id}-dns"
        self.config_maps = {}
        self.secrets = {}
        self.pods = []
        self._volumes = set()
        docker("network", "create", self.pods_network)
        docker("network", "create", self.dns_network)

    # ---- the objects pods mount ----
    def add_objects(self, objects):
        """ConfigMaps and Secrets from rendered manifests; other kinds are left."""
        for obj in objects:
            if obj["kind"] == "ConfigMap":
                self.config_maps[obj["metadata"]["name"]] = {k: v.encode() for k, v in obj.get("data", {}).items()}
            elif obj["kind"] == "Secret":
                data = {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
                data.update({k: v.encode() for k, v in (obj.get("stringData") or {}).items()})
                self.secrets[obj["metadata"]["name"]] = data

    def _write_volume(self, pod_dir, volume, fs_group):
        """The files of a ConfigMap or Secret volume, as the kubelet lays them out."""
        name = volume["name"]
        if "secret" in volume:
            source, store, key_name = volume["secret"], self.secrets, "secretName"
        else:
            source, store, key_name = volume["configMap"], self.config_maps, "name"
        _refuse_unknown("volume source", source, {key_name, "defaultMode", "items", "optional"})
        data = store.get(source[key_name])
        assert data is not None or source.get("optional"), f"volume {name}: {source[key_name]} does not exist"
        folder = pod_dir / "volumes" / name
        folder.mkdir(parents=True)
        mode = source.get("defaultMode", 0o644)  # Kubernetes' default for both kinds
        items = source.get("items") or [{"key": k, "path": k} for k in sorted(data or {})]
        for item in items:
            assert item["key"] in data, f"volume {name}: no key {item['key']} in {source[key_name]}"
            path = folder / item["path"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data[item["key"]])
            os.chown(path, 0, fs_group if fs_group is not None else 0)
            path.chmod(item.get("mode", mode))
        folder.chmod(0o755)
        return folder

    # ---- pods ----
    def run_pod(self, name, spec, hostname=None, subdomain=None, extra_mounts=(), services=()):
        """Starts the pod's one container; returns a Pod. `extra_mounts`
        (host path, container path) stand for what the user's image carries;
        `services` name Services that select the pod, whose DNS names point
        at it once it is ready."""
        spec = dict(spec)
        if hostname:
            spec["hostname"] = hostname
        if subdomain:
            spec["subdomain"] = subdomain
        _refuse_unknown("pod", spec, POD_FIELDS)
        assert len(spec["containers"]) == 1, "pod_runner runs pods of one container"
        container = spec["containers"][0]
        _refuse_unknown("container", container, CONTAINER_FIELDS)
        security = spec.get("securityContext") or {}
        _refuse_unknown("securityContext", security, SECURITY_FIELDS)
        pod_dir = self.workdir / name
        pod_dir.mkdir(parents=True)
        container_name = f"{self.id}-{name}"
        argv = ["create", "--name", container_name, "--network", self.pods_network,
                "--hostname", spec.get("hostname", name)]
        if "runAsUser" in security:
            user = str(security["runAsUser"])
            if "runAsGroup" in security:
                user += f":{security['runAsGroup']}"
            argv += ["--user", user]
        if security.get("runAsNonRoot"):
            assert security.get("runAsUser") != 0, "runAsNonRoot with runAsUser 0"
        fs_group = security.get("fsGroup")
        if fs_group is not None:
            argv += ["--group-add", str(fs_group)]
        argv += self._env_args(container)
        argv += self._resource_args(container.get("resources") or {})
        argv += self._mount_args(spec, container, pod_dir, fs_group)
        for host_path, container_path in extra_mounts:
            argv += ["-v", f"{host_path}:{container_path}:ro"]
        image_args = list(container.get("args") or [])
        if container.get("command"):
            argv += ["--entrypoint", container["command"][0]]
            image_args = list(container["command"][1:]) + image_args
        docker(*argv, container["image"], *image_args, timeout=120)
        docker("network", "connect", self.dns_network, container_name)
        docker("start", container_name, timeout=120)
        shorts = list(services)
        if spec.get("subdomain"):
            shorts.append(f"{spec['hostname']}.{spec['subdomain']}")
        dns_names = [f"{short}{suffix}" for short in shorts
                     for suffix in ("", f".{self.namespace}", f".{self.namespace}.svc",
                                    f".{self.namespace}.svc.cluster.local")]
        pod = Pod(name, container_name, dns_names, self._readiness_port(container))
        self.pods.append(pod)
        if pod.readiness_port is None:
            self._publish(pod)
        return pod

    def _env_args(self, container):
        argv = []
        for source in container.get("envFrom") or []:
            _refuse_unknown("envFrom", source, {"secretRef"})
            ref = source["secretRef"]
            data = self.secrets.get(ref["name"])
            assert data is not None or ref.get("optional"), f"envFrom: Secret {ref['name']} does not exist"
            for key, value in sorted((data or {}).items()):
                argv += ["-e", f"{key}={value.decode()}"]
        for variable in container.get("env") or []:
            _refuse_unknown("env", variable, {"name", "value"})
            argv += ["-e", f"{variable['name']}={variable.get('value', '')}"]
        return argv

    @staticmethod
    def _resource_args(resources):
        _refuse_unknown("resources", resources, {"requests", "limits"})
        limits = resources.get("limits") or {}
        for key in set(limits) | set(resources.get("requests") or {}):
            assert key in ("cpu", "memory"), f"resource {key} cannot be given to a container here (no GPU)"
        argv = []
        if "cpu" in limits:
            argv += ["--cpus", f"{quantity(limits['cpu']):g}"]
        if "memory" in limits:
            argv += ["--memory", str(int(quantity(limits["memory"])))]
        return argv

    def _mount_args(self, spec, container, pod_dir, fs_group):
        volumes = {v["name"]: v for v in spec.get("volumes") or []}
        argv = []
        for mount in container.get("volumeMounts") or []:
            _refuse_unknown("volumeMount", mount, {"name", "mountPath", "readOnly"})
            volume = volumes[mount["name"]]
            _refuse_unknown("volume", volume, {"name", "secret", "configMap", "emptyDir", "persistentVolumeClaim"})
            target = mount["mountPath"]
            if "secret" in volume or "configMap" in volume:
                argv += ["-v", f"{self._write_volume(pod_dir, volume, fs_group)}:{target}:ro"]
            elif "emptyDir" in volume:
                # A tmpfs, whatever the medium: scratch space of the pod's
                # lifetime, writable by every user as the kubelet makes it.
                empty = volume["emptyDir"] or {}
                _refuse_unknown("emptyDir", empty, {"medium", "sizeLimit"})
                size = int(quantity(empty.get("sizeLimit", "1Gi")))
                argv += ["--mount", f"type=tmpfs,destination={target},tmpfs-size={size},tmpfs-mode=1777"]
            else:
                claim = volume["persistentVolumeClaim"]["claimName"]
                named = f"{self.id}-{claim}"
                self._volumes.add(named)
                argv += ["-v", f"{named}:{target}{':ro' if mount.get('readOnly') else ''}"]
        return argv

    @staticmethod
    def _readiness_port(container):
        probe = container.get("readinessProbe")
        if not probe:
            return None
        _refuse_unknown("readinessProbe", probe, {"tcpSocket", "periodSeconds", "initialDelaySeconds"})
        port = probe["tcpSocket"]["port"]
        if isinstance(port, str):
            named = [p["containerPort"] for p in container.get("ports") or [] if p.get("name") == port]
            assert named, f"readinessProbe names port {port!r}, which the container does not declare"
            port = named[0]
        return int(port)

    def address(self, pod):
        """The pod's address on the pods network."""
        template = f'{{{{(index .NetworkSettings.Networks "{self.pods_network}").IPAddress}}}}'
        return docker("inspect", "-f", template, pod.container).stdout.strip()

    def running(self, pod):
        return docker("inspect", "-f", "{{.State.Running}}", pod.container).stdout.strip() == "true"

    def wait_ready(self, pod, timeout=120):
        """Probes the pod's readiness port as the kubelet does (a TCP connect
        to its address), then publishes its DNS names."""
        deadline = time.monotonic() + timeout
        address = self.address(pod)
        while True:
            assert self.running(pod), f"pod {pod.name} exited before it was ready:\n{self.logs(pod)}"
            try:
                with socket.create_connection((address, pod.readiness_port), timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline, f"pod {pod.name} not ready in {timeout} s:\n{self.logs(pod)}"
                time.sleep(0.5)
        self._publish(pod)

    def _publish(self, pod):
        if not pod.dns_names:
            return
        aliases = [arg for name in pod.dns_names for arg in ("--alias", name)]
        docker("network", "disconnect", self.dns_network, pod.container)
        docker("network", "connect", *aliases, self.dns_network, pod.container)

    def exec(self, pod, command, timeout):
        """`kubectl exec POD -- bash -c COMMAND`: as the container's user, in
        its working directory."""
        return docker("exec", pod.container, "bash", "-c", command, check=False, timeout=timeout)

    def wait_for_file(self, pod, path, timeout=60):
        deadline = time.monotonic() + timeout
        while self.exec(pod, f"test -e {path}", timeout=30).returncode != 0:
            assert self.running(pod), f"pod {pod.name} exited:\n{self.logs(pod)}"
            assert time.monotonic() < deadline, f"{path} did not appear in pod {pod.name}:\n{self.logs(pod)}"
            time.sleep(0.5)

    def logs(self, pod):
        result = docker("logs", "--tail", "200", pod.container, check=False)
        return result.stdout + result.stderr

    def wait_exit(self, pod, timeout):
        result = docker("wait", pod.container, timeout=timeout)
        return int(result.stdout.strip())

    def close(self):
        for pod in self.pods:
            docker("rm", "-f", "-v", pod.container, check=False, timeout=120)
        for network in (self.pods_network, self.dns_network):
            docker("network", "rm", network, check=False)
        for volume in self._volumes:
            docker("volume", "rm", "-f", volume, check=False)
        shutil.rmtree(self.workdir, ignore_errors=True)



def pod_logs_text(cluster):
    return "\n".join(f"--- {pod.name}:\n{cluster.logs(pod)}" for pod in cluster.pods)
