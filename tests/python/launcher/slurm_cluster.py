#!/usr/bin/env python3
"""A real one-node Slurm cluster for end-to-end tests: Debian's munged,
slurmctld and slurmd, started in a temporary directory with their own
configuration, state and logs, so that jobs are started by `srun` exactly
as on a site's cluster.

The node is this machine (NodeName = its short host name, NodeAddr
127.0.0.1). It declares at least MIN_CPUS CPUs (`SlurmdParameters=
config_overrides` lets slurmd accept more than the hardware has), so
`srun -n 3` runs on a 2-core CI machine without `--overcommit`.

Nothing is shared with another Slurm on the machine (Debian's own services,
or a second SlurmCluster of another test): the configuration is reached
only through SLURM_CONF, the controller and node daemon listen on ports
chosen free at start-up, munged has its own key and socket (named in
AuthInfo), and state, spool, pid and log files are all under the
temporary directory. Every process the cluster starts, and every job task,
carries KOLO_TEST_SLURM_CLUSTER=<that directory> in its environment;
close() cancels the jobs, stops the daemons and then fails if a process
with that mark is still alive (after killing it).

Needs root (slurmd runs each task as the user who submitted it) and the
binaries of slurmctld, slurmd, slurm-client and munge (scripts/install-
deps.sh installs them); unavailable_reason() says why not otherwise.
"""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

from elastic_job import environ_of

MARK = "KOLO_TEST_SLURM_CLUSTER"
MIN_CPUS = 4  # the largest srun -n the tests use
_STEP_TIMEOUT = 15  # seconds for any one client command (sinfo, scancel, ...)
_READY_TIMEOUT = 30  # seconds for the daemons to come up and the node to be idle
_STOP_TIMEOUT = 10  # seconds for a daemon to exit after SIGTERM
_START_ATTEMPTS = 3  # fresh ports each time: another program may take a free port first
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("srun", "sinfo", "squeue", "scancel")

# Variables of a job around this process (a test run from inside a Slurm
# job, or under mpirun or torchrun) that would tell a rank the wrong layout.
_FOREIGN_PREFIXES = ("SLURM_", "SLURMD_", "KOLO_", "HOROVOD_", "OMPI_", "PMI_", "PMIX_",
                     "MPI_LOCAL")
_FOREIGN_NAMES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                  "MASTER_PORT")


def _program(name):
    return shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.access(p, os.X_OK)), None)


def unavailable_reason():
    """'' when this machine can run the cluster, else why not."""
    if os.geteuid() != 0:
        return "needs root (slurmd runs job tasks as their user and must be able to switch to it)"
    missing = [name for name in DAEMONS + CLIENTS if _program(name) is None]
    if missing:
        return (f"no {', '.join(missing)} (packages slurmctld, slurmd, slurm-client, munge; "
                "scripts/install-deps.sh installs them)")
    return ""


def node_name():
    """The name Slurm gives this machine: its host name up to the first dot."""
    return socket.gethostname().split(".")[0]


def _free_ports(count):
    """Ports nothing listens on right now (bound to port 0, then released)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _marked_pids(mark_value):
    """Pids of the processes whose environment holds MARK=mark_value."""
    pids = (int(e) for e in os.listdir("/proc") if e.isdigit() and int(e) != os.getpid())
    return [pid for pid in pids if environ_of(pid).get(MARK) == mark_value]


def _describe(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        return f"{pid} {argv}"
    except OSError:
        return f"{pid} (gone)"


@contextlib.contextmanager
def running_cluster(**options):
    """A started SlurmCluster(**options), closed on leaving the block (also
    when starting it failed half-way)."""
    cluster = SlurmCluster(**options)
    try:
        yield cluster.setup()
    finally:
        cluster.close()


class SlurmCluster:
    """munged + slurmctld + slurmd for one node: setup(), then close()
    (always, even when setup() raised), or running_cluster()."""

    def __init__(self, cpus=None):
        self.node = node_name()
        self.cpus = max(cpus or os.cpu_count() or 1, MIN_CPUS)
        self.dir = None
        self.ports = None  # (slurmctld, slurmd)
        self._daemons = {}  # name -> Popen

    # --- paths and environment ---------------------------------------------------

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    @property
    def conf(self):
        return self.path("slurm.conf")

    @property
    def munge_socket(self):
        return self.path("munge", "munge.socket")

    def env(self, **extra):
        """The environment for Slurm's commands (and so for the tasks of a
        job, which srun gives this environment): this process's, without
        any job around it, pointed at this cluster."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(_FOREIGN_PREFIXES) and k not in _FOREIGN_NAMES}
        env.update(SLURM_CONF=self.conf, PYTHONUNBUFFERED="1")
        env[MARK] = self.dir
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def log(self, name):
        try:
            with open(self.path(f"{name}.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def logs(self):
        return "\n".join(f"--- {name}.log:\n{self.log(name)[-4000:]}" for name in DAEMONS)

    # --- client commands -----------------------------------------------------------

    def client(self, *argv, timeout=_STEP_TIMEOUT):
        """A Slurm client command (sinfo, squeue, scancel) against this cluster."""
        return subprocess.run([_program(argv[0])] + list(argv[1:]), env=self.env(),
                              capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def srun(self, args, timeout=60, env=None, cwd=None):
        """`srun <args>`, waited for at most `timeout` seconds. The job gets
        a name of its own and a Slurm time limit just above `timeout`, so a
        job whose srun timed out is cancelled here and by slurmctld too.
        Returns the CompletedProcess; raises TimeoutError with the output
        so far when srun did not finish."""
        name = f"kolo-test-{uuid.uuid4().hex[:12]}"
        minutes = max(1, -(-int(timeout) // 60) + 1)
        argv = [_program("srun"), f"--job-name={name}", f"--time={minutes}"] + list(args)
        process = subprocess.Popen(argv, env=env or self.env(), cwd=cwd, text=True,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            self.client("scancel", f"--name={name}")
            raise TimeoutError(f"`{' '.join(argv)}` did not finish in {timeout} s\n"
                               f"stdout:\n{out}\nstderr:\n{err}\n{self.logs()}") from None
        return subprocess.CompletedProcess(argv, process.returncode, out, err)

    def node_state(self):
        result = self.client("sinfo", "-h", "-N", "-n", self.node, "-o", "%T")
        return result.stdout.strip() if result.returncode == 0 else ""

    def jobs(self):
        """Job ids this cluster still knows as pending or running."""
        result = self.client("squeue", "-h", "-o", "%i")
        return result.stdout.split() if result.returncode == 0 else []

    # --- set-up --------------------------------------------------------------------

    def setup(self):
        self.dir = tempfile.mkdtemp(prefix="kolo-slurm-")
        # munged refuses a socket directory others cannot traverse; the key
        # stays readable by root only.
        os.chmod(self.dir, 0o755)
        for sub in ("munge", "state", "spool"):
            os.makedirs(self.path(sub), mode=0o755)
        with open(self.path("munge", "munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(self.path("munge", "munge.key"), 0o600)

        self._start_munged()
        for attempt in range(_START_ATTEMPTS):
            self.ports = _free_ports(2)
            self._write_conf()
            try:
                self._start_slurm()
                return self
            except _PortTaken:
                self._stop_daemons(("slurmd", "slurmctld"))
                if attempt + 1 == _START_ATTEMPTS:
                    raise RuntimeError("slurm cluster: the ports chosen were taken each time\n"
                                       + self.logs()) from None

    def _write_conf(self):
        ctld_port, slurmd_port = self.ports
        d = self.dir
        with open(self.conf, "w") as f:
            f.write(f"""\
ClusterName=kolotest
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.munge_socket}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
KillWait=5
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN
PartitionName=kolo Nodes={self.node} Default=YES MaxTime=10 State=UP
""")

    def _spawn(self, name, argv):
        # Foreground (-D/-F): the daemon stays our child; its own session,
        # so a signal to the test's process group does not reach it.
        with open(self.path(f"{name}.out"), "wb") as out:
            self._daemons[name] = subprocess.Popen(
                [_program(argv[0])] + argv[1:], env=self.env(), stdin=subprocess.DEVNULL,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def _start_munged(self):
        m = self.path("munge")
        self._spawn("munged", ["munged", "-F", "--force", f"--socket={self.munge_socket}",
                               f"--key-file={m}/munge.key", f"--pid-file={m}/munged.pid",
                               f"--seed-file={m}/munged.seed", f"--log-file={self.dir}/munged.log"])
        self._wait("munged", lambda: os.path.exists(self.munge_socket), "its socket")

    def _start_slurm(self):
        # -i: no state of an earlier controller to recover (the directory is new).
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf])
        self._spawn("slurmd", ["slurmd", "-D", "-N", self.node, "-f", self.conf])
        self._wait("slurm", lambda: self.node_state() == "idle", f"node {self.node} idle")

    def _wait(self, what, ready, description):
        deadline = time.monotonic() + _READY_TIMEOUT
        while not ready():
            for name, process in self._daemons.items():
                if process.poll() is not None:
                    if "Address already in use" in self.log(name) + self._output(name):
                        raise _PortTaken()
                    raise RuntimeError(f"slurm cluster: {name} exited ({process.returncode}) "
                                       f"while starting\n{self._output(name)}\n{self.logs()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"slurm cluster: {what}: no {description} after "
                                   f"{_READY_TIMEOUT} s (node state "
                                   f"'{self.node_state()}')\n{self.logs()}")
            time.sleep(0.1)

    def _output(self, name):
        try:
            with open(self.path(f"{name}.out"), errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    # --- clean-up ------------------------------------------------------------------

    def _cancel_jobs(self):
        if "slurmctld" not in self._daemons or self._daemons["slurmctld"].poll() is not None:
            return
        self.client("scancel", "--user", str(os.getuid()))
        deadline = time.monotonic() + _STOP_TIMEOUT
        while self.jobs() and time.monotonic() < deadline:
            time.sleep(0.1)

    def _stop_daemons(self, names):
        for name in names:
            process = self._daemons.pop(name, None)
            if process is None:
                continue
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(_STOP_TIMEOUT)

    def close(self):
        """Cancels every job, stops the daemons (slurmd first, munged last),
        removes the directory; raises RuntimeError when a process of the
        cluster or of a job was still alive afterwards (it is killed)."""
        if self.dir is None:
            return
        try:
            self._cancel_jobs()
        finally:
            self._stop_daemons(("slurmd", "slurmctld", "munged"))
        left = _marked_pids(self.dir)
        described = [_describe(pid) for pid in left]
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None
        if described:
            raise RuntimeError("slurm cluster: processes left after the daemons stopped "
                               "(killed now): " + "; ".join(described))



class _PortTaken(Exception):
    """A daemon could not bind the port chosen for it."""


def main(argv=None):
    """`slurm_cluster.py [--cpus N] COMMAND...`: COMMAND run with SLURM_CONF
    pointing at a cluster started for it (bench/launcher_startup.sh then
    adds its srun row); the cluster is stopped when COMMAND ends."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--cpus", type=int, default=None,
                        help=f"CPUs the node declares (at least {MIN_CPUS} and nproc)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("no command to run")
    reason = unavailable_reason()
    if reason:
        parser.exit(2, f"slurm_cluster.py: cannot start a cluster: {reason}\n")
    with running_cluster(cpus=args.cpus) as cluster:
        return subprocess.run(args.command, env=cluster.env()).returncode


if __name__ == "__main__":
    sys.exit(main())
