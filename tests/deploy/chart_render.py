"""Rendering deploy/helm/kolo with the test-only renderer (render/), for the
tests and their fixtures."""

import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "kolo"
RENDER_SRC = pathlib.Path(__file__).resolve().parent / "render"


class Rendered(list):
    """The objects one rendering produced, looked up by kind and name."""

    def one(self, kind, name_suffix=""):
        found = [o for o in self if o["kind"] == kind and o["metadata"]["name"].endswith(name_suffix)]
        assert len(found) == 1, f"expected one {kind} *{name_suffix}, got {[o['metadata']['name'] for o in found]}"
        return found[0]

    def kinds(self):
        return sorted(o["kind"] for o in self)


def run_renderer(renderer, args, name="ddp", namespace="ddp"):
    return subprocess.run(
        [str(renderer), "--name", name, "--namespace", namespace, *args, str(CHART)],
        capture_output=True,
        text=True,
        timeout=60,
    )
