"""deploy/compose/docker-compose.yml run for real: a compose project of its
own (a unique name, so parallel runs and leftovers never meet), the test's
own settings in an override file, and clean-up that removes its containers,
network and volumes whatever happened."""

import os
import pathlib
import re
import shutil
import subprocess
import time

import yaml

from docker_host import REPO, docker

COMPOSE_FILE = REPO / "deploy" / "compose" / "docker-compose.yml"


def compose_program():
    """`docker compose` (the plugin) where it exists, else docker-compose."""
    try:
        if subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30).returncode == 0:
            return ["docker", "compose"]
    except (OSError, subprocess.TimeoutExpired):
        pass
    found = shutil.which("docker-compose")
    return [found] if found else None


class ComposeJob:
    """One MAIN and `workers` WORKERs; `main_command` is MAIN's program.
    `artifacts` (a host folder) replaces the artifacts volume so the test
    reads the checkpoints directly."""

    def __init__(self, program, image, name, code_dir, artifacts, main_command, environment=None):
        self.program = program
        self.name = name
        self.artifacts = pathlib.Path(artifacts)
        self.override = self.artifacts.parent / f"{name}-override.yml"
        mounts = [f"{artifacts}:/kolo/artifacts", f"{code_dir}:/code:ro"]
        override = {
            "services": {
                "worker": {"volumes": mounts},
                "main": {"volumes": mounts, "command": main_command,
                         "environment": dict(environment or {})},
            }
        }
        self.override.write_text(yaml.safe_dump(override))
        self.env = dict(os.environ, KOLO_IMAGE=image)
        self.started_at = None

    def compose(self, *args, timeout=300, check=True):
        command = [*self.program, "-p", self.name, "-f", str(COMPOSE_FILE), "-f", str(self.override), *args]
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=self.env,
                                cwd=COMPOSE_FILE.parent)
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
        return result

    def up(self, workers):
        self.started_at = time.monotonic()
        # -d returns once MAIN is created, which compose does only after the
        # workers report healthy (depends_on: service_healthy).
        self.compose("up", "-d", "--scale", f"worker={workers}", timeout=300)

    def scale_workers(self, workers):
        self.compose("up", "-d", "--no-recreate", "--no-deps", "--scale", f"worker={workers}", "worker")

    def containers(self, service):
        ids = self.compose("ps", "-q", service).stdout.split()
        assert ids, f"no container of service {service}\n{self.report()}"
        return ids

    def main_output(self):
        """MAIN's stdout and stderr together, as `docker logs` keeps them."""
        result = docker("logs", self.containers("main")[0], check=False, timeout=60)
        return result.stdout + result.stderr

    def wait_for_output(self, pattern, timeout, after=""):
        """Waits until MAIN's output (after the text `after`) matches `pattern`;
        returns the seconds since `up`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            output = self.main_output()
            if re.search(pattern, output[len(after):], re.MULTILINE):
                return time.monotonic() - self.started_at
            if not self.running("main"):
                break
            time.sleep(0.5)
        raise AssertionError(f"no line matching {pattern!r} within {timeout} s\n{self.report()}")

    def running(self, service):
        ids = self.compose("ps", "-q", service, check=False).stdout.split()
        states = [docker("inspect", "-f", "{{.State.Running}}", i, check=False).stdout.strip() for i in ids]
        return "true" in states

    def wait_main(self, timeout):
        """MAIN's exit code (the job's)."""
        main = self.containers("main")[0]
        return int(docker("wait", main, timeout=timeout).stdout.strip())

    def report(self):
        logs = self.compose("logs", "--no-color", "--tail", "200", check=False, timeout=120)
        return f"--- compose logs of {self.name}\n{logs.stdout[-20000:]}{logs.stderr[-2000:]}"

    def down(self):
        self.compose("down", "-v", "--remove-orphans", "-t", "5", check=False, timeout=300)
        self.override.unlink(missing_ok=True)
