"""deploy/ansible checked without running it: ansible-playbook's syntax check,
ansible-lint's production profile and yamllint (all Debian's), so a slip in
a role shows up even where no Docker engine can run test_ansible_playbook.py."""

import shutil
import subprocess

import pytest

from ansible_cluster import PLAYBOOK_DIR

pytestmark = pytest.mark.timeout(600)


def tool(name):
    if shutil.which(name) is None:
        pytest.skip(f"{name} is not installed (scripts/install-deps.sh installs it)")
    return name


def check(argv):
    result = subprocess.run(argv, cwd=PLAYBOOK_DIR, capture_output=True, text=True, timeout=500,
                            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/tmp",
                                 "ANSIBLE_NOCOLOR": "1", "NO_COLOR": "1"})
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    return result


def test_the_playbook_parses_with_the_example_inventory():
    check([tool("ansible-playbook"), "--syntax-check", "-i", "inventory.example.ini", "site.yml"])


def test_ansible_lint_passes_the_production_profile():
    result = check([tool("ansible-lint"), "--nocolor", "-p", "--profile", "production"])
    assert "0 failure(s)" in result.stdout + result.stderr


def test_yamllint_is_clean():
    check([tool("yamllint"), "--strict", "."])
