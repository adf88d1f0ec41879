"""Where kolo.run listens so that every worker can reach it.

A job on this machine only listens on loopback. When some hosts are other
machines the caller listens on every interface (connections still have to
prove the job's secret) and tells the workers the address of this machine
that routes to the first remote host, or the one of `network_interface`,
the same choice kolorun makes for its rendezvous store. No shared
filesystem is assumed.
"""

import fcntl
import ipaddress
import socket
import struct

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
_SIOCGIFADDR = 0x8915  # Linux: an interface's IPv4 address


def host_names(hosts=None, hostfile=None):
    """Host names, in order, from `-H` text ("a:2,b:2") or a hostfile's lines
    ("a slots=2", "a:2", "a"; '#' comments). kolorun validates the rest."""
    if hosts is not None:
        entries = hosts.split(",") if isinstance(hosts, str) else list(hosts)
    elif hostfile is not None:
        try:
            with open(hostfile) as f:
                lines = [line.split("#", 1)[0] for line in f]
        except OSError as error:
            raise ValueError(f"kolo.run: cannot read hostfile {hostfile}: "
                             f"{error.strerror}") from None
        entries = [line.split()[0] for line in lines if line.strip()]
    else:
        return ["localhost"]
    names = []
    for entry in (e.strip() for e in entries):
        if not entry:
            continue
        host, sep, slots = entry.rpartition(":")
        names.append(host if sep and slots.isdigit() and not host.endswith(":") else entry)
    return names


def _is_own_address(address):
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind((address, 0))  # succeeds only for this machine's addresses
        return True
    except OSError:
        return False


def is_local(host):
    """True for names and addresses of this machine. `user@host` counts as
    remote, as in kolorun (another account means ssh)."""
    if "@" in host:
        return False
    name = host.strip("[]")
    own = socket.gethostname()
    if name in _LOOPBACK_NAMES or name in (own, own.split(".")[0]):
        return True
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(name, None)}
    except socket.gaierror:
        return False  # kolorun will report the unknown host
    return any(ipaddress.ip_address(a.split("%")[0]).is_loopback or _is_own_address(a)
               for a in addresses)


def interface_address(name):
    """The IPv4 address of network interface `name` (e.g. "eth0")."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            packed = fcntl.ioctl(s.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
        except OSError:
            raise ValueError(f"kolo.run: network interface {name!r} does not exist or has no "
                             "IPv4 address") from None
    return socket.inet_ntoa(packed[20:24])


def _address_routing_to(host):
    """This machine's address on the route to `host`, or None when the name
    does not resolve or nothing routes there (no packet is sent)."""
    try:
        infos = socket.getaddrinfo(host.split("@")[-1].strip("[]"), 9, type=socket.SOCK_DGRAM)
    except socket.gaierror:
        return None
    for family, kind, proto, _, target in infos:
        try:
            with socket.socket(family, kind, proto) as s:
                s.connect(target)
                return s.getsockname()[0]
        except OSError:
            continue
    return None


def _first_interface_address():
    for _, name in socket.if_nameindex():
        try:
            address = interface_address(name)
        except ValueError:
            continue
        if not ipaddress.ip_address(address).is_loopback:
            return address
    return None


def caller_endpoint(hosts=None, hostfile=None, network_interface=None):
    """(address to bind, address the workers connect to) for a job on these hosts."""
    remote = [h for h in host_names(hosts, hostfile) if not is_local(h)]
    if not remote:
        return "127.0.0.1", "127.0.0.1"
    if network_interface:
        return "0.0.0.0", interface_address(network_interface.split(",")[0].strip())
    # An unresolvable host falls through to any address: kolorun then fails
    # on it with ssh's own message, which kolo.run passes on.
    address = _address_routing_to(remote[0]) or _first_interface_address()
    if address is None:
        raise RuntimeError(f"kolo.run: no network address of this host reaches {remote[0]}; "
                           "name an interface with network_interface=")
    return ("::" if ":" in address else "0.0.0.0"), address
