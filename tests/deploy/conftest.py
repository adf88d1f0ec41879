"""Fixtures of the deployment tests: the chart renderer (a Go program built
here from Debian's Go and sprig) and rendering the chart with value sets."""

import subprocess

import pytest
import yaml

from chart_render import RENDER_SRC, Rendered, run_renderer


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


@pytest.fixture
def render(renderer):
    """render(*renderer_args) -> Rendered; the rendering must succeed."""

    def _render(*args, name="ddp", namespace="ddp"):
        result = run_renderer(renderer, list(args), name, namespace)
        assert result.returncode == 0, result.stderr
        return Rendered(o for o in yaml.safe_load_all(result.stdout) if o is not None)

    return _render
