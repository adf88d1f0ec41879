"""A real S3-compatible server for the container tests: moto's server
(PyPI's moto, pinned, in a venv of its own under build/deploy-test/, made
once), run in a container of the test cluster as a Service whose DNS name is
the manifest's S3_ENDPOINT_URL host, so the image's entrypoint fetches
DATA_URL from it exactly as it would from a cluster's object store."""

import urllib.parse

from docker_host import docker
from local_builds import CACHE, NICE, checked_run

# moto's S3 and the Flask its server runs on; not moto[server], which pulls
# every AWS service moto has (316 MB against 139 MB).
MOTO = ["moto[s3]==5.2.5", "flask==3.1.3", "flask-cors==6.0.5"]
VENV = CACHE / "s3-venv"
UPLOAD = "/upload"


def ensure_venv():
    """build/deploy-test/s3-venv with moto, made from Debian's python3 (the
    image's too, so the venv runs there from the same path)."""
    stamp = VENV / ".kolo-moto"
    if stamp.exists() and stamp.read_text() == " ".join(MOTO):
        return VENV
    checked_run(["/usr/bin/python3", "-m", "venv", "--clear", str(VENV)], timeout=300)
    checked_run(NICE + [str(VENV / "bin" / "python"), "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", *MOTO], timeout=900)
    stamp.write_text(" ".join(MOTO))
    return VENV


class S3Server:
    """The server as a pod of `cluster`, reachable at `endpoint` once ready."""

    def __init__(self, cluster, endpoint, image):
        parts = urllib.parse.urlparse(endpoint)
        self.cluster = cluster
        self.port = parts.port or 80
        self.service = parts.hostname.split(".")[0]
        assert parts.hostname in (self.service, f"{self.service}.{cluster.namespace}.svc",
                                  f"{self.service}.{cluster.namespace}.svc.cluster.local"), endpoint
        self.image = image
        self.credentials = {"AWS_ACCESS_KEY_ID": "kolotest", "AWS_SECRET_ACCESS_KEY": "kolotest-secret",
                            "AWS_DEFAULT_REGION": "us-east-1"}
        self.pod = None

    def __enter__(self):
        venv = ensure_venv()
        spec = {"containers": [{
            "name": "s3", "image": self.image,
            "command": [str(venv / "bin" / "python"), "-m", "moto.server", "-H", "0.0.0.0", "-p", str(self.port)],
            "readinessProbe": {"tcpSocket": {"port": self.port}}}],
            # Port 80 needs root; this is the test's infrastructure, not Kolo.
            "securityContext": {"runAsUser": 0}}
        self.pod = self.cluster.run_pod("s3", spec, services=[self.service], extra_mounts=[(venv, venv)])
        self.cluster.wait_ready(self.pod, timeout=120)
        return self

    def __exit__(self, *exc):
        return False

    def upload(self, folder, url):
        """Every file under `folder` to s3://bucket/prefix/ (`url`), keys relative to folder."""
        parts = urllib.parse.urlparse(url)
        bucket, prefix = parts.netloc, parts.path.lstrip("/")
        script = (
            "import boto3, pathlib\n"
            f"s3 = boto3.client('s3', endpoint_url='http://127.0.0.1:{self.port}', region_name='us-east-1',"
            f" aws_access_key_id='x', aws_secret_access_key='x')\n"
            f"s3.create_bucket(Bucket={bucket!r})\n"
            f"root = pathlib.Path({UPLOAD!r})\n"
            "for path in sorted(root.rglob('*')):\n"
            "    if path.is_file():\n"
            f"        s3.upload_file(str(path), {bucket!r}, {prefix!r} + str(path.relative_to(root)))\n"
        )
        venv = VENV
        # Run beside the server, in its network namespace.
        docker("run", "--rm", "--user", "0", "--network", f"container:{self.pod.container}",
               "-v", f"{folder}:{UPLOAD}:ro", "-v", f"{venv}:{venv}:ro", "--entrypoint", str(venv / "bin" / "python"),
               self.image, "-c", script, timeout=300)

