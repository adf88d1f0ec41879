"""Real "hosts" for end-to-end tests of kolo.run: Linux network namespaces.

A "caller" namespace holds a bridge (198.19.0.1/24) and one veth pair per
host namespace (198.19.0.2, 198.19.0.3, ...), and before them a bridge no
host can reach (decoy0, 198.51.100.1/24). Each host namespace runs its
own OpenSSH sshd on port 2222 with a host key and an authorized user key
made for the run, so the ranks are reached over ssh exactly as on a real
cluster. The namespaces share this machine's filesystem, so the same Python
(and kolo) exists on every "host".

Names start with "kolopy-<pid>-" and addresses come from 198.19.0.0/24 (the
benchmarking range, never routed), distinct from the C++ e2e test
(tests/e2e/netns_cluster.cc: "run-e2e-", 198.18.0.0/24), so both can run at
once. close() removes everything (sshd, any process left in the namespaces,
the namespaces with their links, the temp dir); namespaces of a killed
earlier run are removed by the next one.

Needs root, `ip` with netns support, sshd, ssh and ssh-keygen;
unavailable_reason() says why not when something is missing.
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

PREFIX = "kolopy-"
SSH_PORT = 2222
_STEP_TIMEOUT = 30  # seconds for any one set-up or clean-up command


def _find(program, *fallbacks):
    found = shutil.which(program)
    if found:
        return found
    for path in fallbacks:
        if os.access(path, os.X_OK):
            return path
    return None


def _ip():
    return _find("ip", "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip")


def _sshd():
    return _find("sshd", "/usr/sbin/sshd", "/usr/local/sbin/sshd")


def unavailable_reason():
    """'' when this machine can create the hosts, else why not."""
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    if _ip() is None:
        return "no `ip` command (iproute2)"
    if _sshd() is None:
        return "no sshd (openssh-server; scripts/install-deps.sh installs it)"
    if shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        return "no ssh or ssh-keygen (openssh-client)"
    probe = f"{PREFIX}probe-{os.getpid()}"
    try:
        added = subprocess.run([_ip(), "netns", "add", probe], capture_output=True,
                               timeout=_STEP_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"`ip netns add` failed: {error}"
    if added.returncode != 0:
        return ("`ip netns add` does not work here (no CAP_SYS_ADMIN or no netns support): "
                + added.stderr.decode(errors="replace").strip())
    subprocess.run([_ip(), "netns", "del", probe], capture_output=True, timeout=_STEP_TIMEOUT)
    return ""


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class NetnsHosts:
    """A caller namespace and `hosts` host namespaces with sshd. Use as a
    context manager, or call setup() and then close() (always, even when
    setup() raised)."""

    def __init__(self, hosts=2, session_env=None):
        self.count = hosts
        # Variables every ssh session on the hosts gets (sshd's SetEnv).
        self.session_env = dict(session_env or {})
        self.ip = _ip()
        self.sshd = _sshd()
        self.prefix = f"{PREFIX}{os.getpid()}"
        self.caller_ns = f"{self.prefix}-c"
        self.caller_address = "198.19.0.1"
        self.decoy_address = "198.51.100.1"  # TEST-NET-2: no host namespace has a route to it
        self.host_ns = [f"{self.prefix}-h{h + 1}" for h in range(hosts)]
        self.addresses = [f"198.19.0.{h + 2}" for h in range(hosts)]
        self.port = SSH_PORT
        self.dir = None
        self._created = []  # namespaces made so far, for close()
        self._sshd = []  # Popen objects

    # --- paths ----------------------------------------------------------------

    @property
    def user_key(self):
        return os.path.join(self.dir, "user_key")

    @property
    def known_hosts(self):
        return os.path.join(self.dir, "known_hosts")

    def sshd_log(self, h):
        return os.path.join(self.dir, f"sshd-h{h + 1}.log")

    # --- helpers ----------------------------------------------------------------

    def _must(self, *argv, timeout=_STEP_TIMEOUT):
        result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise RuntimeError(f"netns hosts: set-up step failed (exit {result.returncode}): "
                               f"{' '.join(argv)}\n{result.stdout}{result.stderr}")
        return result.stdout

    def exec_argv(self, ns, argv):
        """argv run inside namespace `ns`."""
        return [self.ip, "netns", "exec", ns] + list(argv)

    def pids_in(self, ns):
        try:
            result = subprocess.run([self.ip, "netns", "pids", ns], capture_output=True,
                                    text=True, timeout=_STEP_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired):
            return []
        return [int(p) for p in result.stdout.split() if p.isdigit()]

    def job_processes(self):
        """{pid: command line} of every process in a host namespace but the
        sshd daemons themselves: ssh sessions, remote helpers, ranks and
        whatever they started (all of it ends with the job)."""
        daemons = {process.pid for process in self._sshd}
        found = {}
        for ns in self.host_ns:
            for pid in self.pids_in(ns):
                if pid in daemons:
                    continue
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        found[pid] = f.read().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    pass  # ended since the listing
        return found

    # --- set-up -------------------------------------------------------------------

    def _remove_stale(self):
        """Namespaces of earlier runs whose process is gone (killed before
        its clean-up)."""
        try:
            listing = subprocess.run([self.ip, "netns", "list"], capture_output=True, text=True,
                                     timeout=_STEP_TIMEOUT).stdout
        except (OSError, subprocess.TimeoutExpired):
            return
        for line in listing.splitlines():
            name = line.split()[0] if line.split() else ""
            match = re.match(rf"{re.escape(PREFIX)}(\d+)-", name)
            if match and not _alive(int(match.group(1))):
                for pid in self.pids_in(name):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                subprocess.run([self.ip, "netns", "del", name], capture_output=True,
                               timeout=_STEP_TIMEOUT)

    def setup(self):
        self._remove_stale()
        self.dir = tempfile.mkdtemp(prefix=f"{self.prefix}-")
        ip, c = self.ip, self.caller_ns

        self._must(ip, "netns", "add", c)
        self._created.append(c)
        self._must(ip, "-n", c, "link", "set", "lo", "up")
        # A network the hosts cannot reach, made first so it is the caller's
        # first non-loopback interface: a launcher must pick the address that
        # routes to each host, not merely the first one it finds.
        self._must(ip, "-n", c, "link", "add", "decoy0", "type", "bridge")
        self._must(ip, "-n", c, "addr", "add", f"{self.decoy_address}/24", "dev", "decoy0")
        self._must(ip, "-n", c, "link", "set", "decoy0", "up")
        self._must(ip, "-n", c, "link", "add", "br0", "type", "bridge")
        self._must(ip, "-n", c, "addr", "add", f"{self.caller_address}/24", "dev", "br0")
        self._must(ip, "-n", c, "link", "set", "br0", "up")
        for h, (ns, address) in enumerate(zip(self.host_ns, self.addresses)):
            veth = f"vh{h + 1}"
            self._must(ip, "netns", "add", ns)
            self._created.append(ns)
            self._must(ip, "-n", ns, "link", "set", "lo", "up")
            self._must(ip, "-n", c, "link", "add", veth, "type", "veth", "peer", "name", "eth0",
                       "netns", ns)
            self._must(ip, "-n", c, "link", "set", veth, "master", "br0", "up")
            self._must(ip, "-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
            self._must(ip, "-n", ns, "link", "set", "eth0", "up")

        d = self.dir
        self._must("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/host_key")
        self._must("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", self.user_key)
        shutil.copyfile(f"{self.user_key}.pub", f"{d}/authorized_keys")
        os.chmod(f"{d}/authorized_keys", 0o600)
        with open(f"{d}/host_key.pub") as f:
            host_key = f.read().strip()
        with open(self.known_hosts, "w") as f:
            for address in self.addresses:
                f.write(f"[{address}]:{self.port} {host_key}\n")
        with open(f"{d}/sshd_config", "w") as f:
            f.write(f"Port {self.port}\nListenAddress 0.0.0.0\nHostKey {d}/host_key\n"
                    f"AuthorizedKeysFile {d}/authorized_keys\nPidFile none\n"
                    "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                    "PrintMotd no\nLogLevel ERROR\nMaxStartups 100\nMaxSessions 100\n")
            if self.session_env:
                f.write("SetEnv " + " ".join(f"{k}={v}" for k, v in self.session_env.items())
                        + "\n")
        # sshd's privilege-separation directory; the package's service would make it.
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        for h in range(self.count):
            self._start_sshd(h)
        for h in range(self.count):
            self._wait_for_ssh(h)
        return self

    def _start_sshd(self, h):
        # -D: stays our child, -e: logs to stderr (the file below).
        with open(self.sshd_log(h), "wb") as log:
            self._sshd.append(subprocess.Popen(
                self.exec_argv(self.host_ns[h], [self.sshd, "-D", "-e", "-f",
                                                 f"{self.dir}/sshd_config"]),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True))

    def ssh_options(self):
        return ["-o", "BatchMode=yes", "-o", "ConnectTimeout=2", "-o",
                "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={self.known_hosts}",
                "-i", self.user_key, "-p", str(self.port)]

    def kolorun_ssh_args(self):
        """kolorun's flags that reach these hosts' sshd as ssh_options() does."""
        return ["-p", str(self.port), "-i", self.user_key, "--ssh-host-key-checking", "yes",
                "--ssh-known-hosts-file", self.known_hosts]

    def _wait_for_ssh(self, h):
        probe = self.exec_argv(self.caller_ns, ["ssh", "-T"] + self.ssh_options()
                               + [self.addresses[h], "true"])
        deadline = time.monotonic() + 15
        while True:
            try:
                result = subprocess.run(probe, capture_output=True, text=True, timeout=10)
                if result.returncode == 0:
                    return
                output = result.stdout + result.stderr
            except subprocess.TimeoutExpired:
                output = "ssh timed out"
            if self._sshd[h].poll() is not None or time.monotonic() > deadline:
                with open(self.sshd_log(h), errors="replace") as f:
                    log = f.read()
                raise RuntimeError(f"netns hosts: sshd on {self.addresses[h]} never accepted "
                                   f"us:\n{output}\nsshd log:\n{log}")
            time.sleep(0.1)

    # --- clean-up -------------------------------------------------------------------

    def close(self):
        for process in self._sshd:
            if process.poll() is None:
                process.kill()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                pass
        self._sshd = []
        # Anything still inside our namespaces is ours (ssh sessions, ranks).
        for ns in self._created:
            for pid in self.pids_in(ns):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        for ns in reversed(self._created):  # takes the veths and the bridge with it
            try:
                subprocess.run([self.ip, "netns", "del", ns], capture_output=True,
                               timeout=_STEP_TIMEOUT)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._created = []
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self):
        try:
            return self.setup()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc):
        self.close()
