"""Where kolo.run listens: loopback for jobs on this machine, an address the
other hosts can reach otherwise."""

import ipaddress
import socket

import pytest

from kolo import _run_hosts


def test_host_names_from_host_lists_and_hostfiles(tmp_path):
    assert _run_hosts.host_names() == ["localhost"]
    assert _run_hosts.host_names(hosts="a:2, b ,c:1") == ["a", "b", "c"]
    assert _run_hosts.host_names(hosts=["a:2", "user@b:4"]) == ["a", "user@b"]
    assert _run_hosts.host_names(hosts="[fe80::1]:2,::1") == ["[fe80::1]", "::1"]
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("# workers\nnode1 slots=4\n\nnode2:2  # spare\nnode3\n")
    assert _run_hosts.host_names(hostfile=str(hostfile)) == ["node1", "node2", "node3"]


def test_this_machine_is_local_and_others_are_not():
    for name in ("localhost", "127.0.0.1", "::1", "[::1]", socket.gethostname()):
        assert _run_hosts.is_local(name), name
    assert not _run_hosts.is_local("user@localhost")  # another account means ssh
    assert not _run_hosts.is_local("nosuchhost.invalid")
    assert not _run_hosts.is_local("203.0.113.1")  # TEST-NET-3: documentation only, never assigned


def test_local_jobs_listen_on_loopback_only():
    assert _run_hosts.caller_endpoint() == ("127.0.0.1", "127.0.0.1")
    assert _run_hosts.caller_endpoint(hosts=f"localhost:1,{socket.gethostname()}:1") == (
        "127.0.0.1", "127.0.0.1")


@pytest.mark.skipif(_run_hosts._first_interface_address() is None,
                    reason="this machine has no network address besides loopback")
def test_remote_jobs_listen_everywhere_and_name_a_reachable_address():
    bind, advertised = _run_hosts.caller_endpoint(hosts="203.0.113.1:2")
    assert bind == "0.0.0.0"
    assert not ipaddress.ip_address(advertised).is_loopback
    assert _run_hosts._is_own_address(advertised)


def test_network_interface_names_the_address():
    with pytest.raises(ValueError, match="no-such-nic"):
        _run_hosts.caller_endpoint(hosts="203.0.113.1:2", network_interface="no-such-nic")
    assert _run_hosts.interface_address("lo") == "127.0.0.1"
