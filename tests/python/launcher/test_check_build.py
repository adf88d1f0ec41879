"""kolorun --check-build probes this installation: the venv's Python
imports kolo, torch (Debian's python3-torch) and numpy, so PyTorch and
NumPy are marked present; shared memory works on this machine; the layout
is horovodrun's, so scripts that grep it keep working."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))


def kolorun():
    beside = os.path.join(os.path.dirname(sys.executable), "kolorun")
    return beside if os.path.exists(beside) else os.path.join(REPO, "python", "kolo", "bin",
                                                              "kolorun")


def check_build(*extra, env=None, program=None):
    result = subprocess.run([program or kolorun(), "--check-build", *extra], capture_output=True,
                            text=True, timeout=90, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def section(report, title):
    """The lines of one section, up to the next blank line."""
    lines = report.splitlines()
    start = lines.index(f"{title}:") + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def test_frameworks_of_this_venv_are_present():
    import numpy  # noqa: F401  (what the report must agree with)
    import torch  # noqa: F401

    report = check_build()
    frameworks = section(report, "Available Frameworks")
    assert "    [X] PyTorch" in frameworks, report
    assert "    [X] NumPy" in frameworks, report
    assert any(line.startswith("    [ ] TensorFlow") for line in frameworks), report


def test_shared_memory_and_tcp_are_present_and_unbuilt_plugins_are_not():
    report = check_build()
    operations = section(report, "Available Tensor Operations")
    assert "    [X] Shared memory" in operations, report
    assert "    [X] TCP" in operations, report
    import kolo

    nccl_plugin = os.path.join(os.path.dirname(kolo.__file__), "libkolo_nccl.so")
    if not os.path.exists(nccl_plugin):
        assert "    [ ] NCCL (not built: no libkolo_nccl.so)" in operations, report
    else:
        # Built, but the engine has no GPU path yet: not offered as usable.
        assert (f"    [ ] NCCL ({nccl_plugin}; loads, but Kolo's engine does not run NCCL "
                "collectives yet)") in operations, report
    assert section(report, "Available Controllers"), report


def test_a_python_without_kolo_marks_the_frameworks_missing_with_the_reason(tmp_path):
    # kolorun's own venv is found from its path, so this only changes what
    # the probe's interpreter imports: a PYTHONPATH entry that shadows kolo.
    shadow = tmp_path / "kolo"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('kolo hidden by the test')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    # The launcher binary itself: the pip wrapper script would import kolo first.
    from kolo.launch import launcher_path
    frameworks = section(check_build(env=env, program=launcher_path()), "Available Frameworks")
    torch_line = next(line for line in frameworks if "PyTorch" in line)
    assert torch_line.startswith("    [ ] PyTorch"), frameworks
    assert "kolo hidden by the test" in torch_line, frameworks
