"""Fixtures of the deployment tests: the chart renderer (a Go program built
here from Debian's Go and sprig) and rendering the chart with value sets."""

import pathlib
import subprocess

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "kolo"
RENDER_SRC = pathlib.Path(__file__).resolve().parent / "render"


@pytest.fixture(scope="session")
def renderer(tmp_path_factory):
    out = tmp_path_factory.mktemp("render")
    build = subprocess.run(
        ["sh", str(RENDER_SRC / "build.sh"), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, f"building the renderer failed:\n{build.stderr}"
    return out / "render"


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


@pytest.fixture
def render(renderer):
    """render(*renderer_args) -> Rendered; the rendering must succeed."""

    def _render(*args, name="ddp", namespace="ddp"):
        result = run_renderer(renderer, list(args), name, namespace)
        assert result.returncode == 0, result.stderr
        return Rendered(o for o in yaml.safe_load_all(result.stdout) if o is not None)

    return _render
