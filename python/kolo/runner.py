"""kolo.run: call a Python function on N ranks and get their return values.

    import kolo
    def train(lr):
        import kolo.torch as hvd
        hvd.init()
        ...
        return hvd.rank(), final_loss
    results = kolo.run(train, args=(0.1,), num_proc=4, hosts="a:2,b:2")

Made for notebooks: the function travels by value with cloudpickle (no
`if __name__ == "__main__"` needed, lambdas and closures work), the ranks'
output appears in the caller's own stdout/stderr, and nothing is shared
through a filesystem. The bundled kolorun starts the ranks (ssh for other
hosts); each runs `python -m kolo.run_worker`, which connects back to a
small authenticated TCP server here, fetches the function and returns the
result (see kolo/_run_protocol.py).

Functions importable by module name (from an installed package, or a
module of the caller's script directory) are pickled by reference: the
workers import that module, so it must be importable there too.
"""

import collections
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

import cloudpickle

from kolo import _run_hosts, _run_protocol
from kolo.launch import launcher_path

HANDSHAKE_TIMEOUT = 30.0  # seconds for a connected worker to authenticate
DEFAULT_START_TIMEOUT = 60  # seconds for every rank to start and connect back
STOP_GRACE = 30.0  # seconds kolorun gets to stop its ranks after a failure
_STDERR_TAIL_LINES = 60


class RunError(RuntimeError):
    """A kolo.run job did not produce a result on every rank."""


class RankFailedError(RunError):
    """The function raised on a rank. `rank` is the first rank that reported
    a failure, `exception` the original exception when it could be sent
    (also the __cause__), `remote_traceback` its traceback as text;
    `failures` maps every failed rank to its one-line error."""

    def __init__(self, message, rank, exception, remote_traceback, failures):
        super().__init__(message)
        self.rank = rank
        self.exception = exception
        self.remote_traceback = remote_traceback
        self.failures = failures


class LaunchError(RunError):
    """kolorun could not run the job (unreachable hosts, a worker that could
    not start or died); `exit_code` and `stderr` are kolorun's."""

    def __init__(self, message, exit_code, stderr):
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr


class RunTimeoutError(RunError, TimeoutError):
    """The job ran past kolo.run's `timeout`; its ranks were stopped."""


def run(fn, args=(), kwargs=None, num_proc=1, min_num_proc=None, max_num_proc=None, slots=None,
        reset_limit=None, cooldown_range=None, hosts=None, hostfile=None, start_timeout=None,
        ssh_port=None, ssh_identity_file=None, disable_cache=None, output_filename=None,
        verbose=None, use_gloo=None, use_mpi=None, mpi_args=None, network_interface=None,
        executable=None, np=None, min_np=None, max_np=None, *, env=None, timeout=None,
        kolorun_args=()):
    """Runs fn(*args, **kwargs) on `num_proc` ranks and returns the list of
    the return values, indexed by rank.

    The arguments, their order and their defaults are horovod.run's:
    num_proc (default 1; np is its older name, used when num_proc is left
    at 1); hosts: "host1:2,host2:2" (ranks per host), or hostfile: a file of
    "host slots=N" lines; default: every rank on this machine.
    min_num_proc / max_num_proc (older names min_np / max_np) make the job
    elastic (kolorun --min-np / --max-np), with slots (slots per host,
    --slots-per-host), reset_limit (--reset-limit) and cooldown_range
    ((min, max) seconds, --blacklist-cooldown-range), which only elastic
    jobs take. start_timeout: seconds for the ranks to start and connect
    back (default 60). network_interface: "eth0" or "eth0,eth1" (kolorun
    --network-interfaces). use_mpi: start the ranks through the system's
    mpirun (kolorun --mpi, with mpi_args as --mpi-args); use_gloo: Kolo's
    own controller, which is the default anyway. executable: the Python the
    ranks run (default: this one). disable_cache changes nothing (kolorun
    caches no checks). ssh_port, ssh_identity_file, output_filename,
    verbose: as kolorun's options.

    Kolo's own, by keyword only: env: extra environment variables for the
    ranks (the caller's environment is passed on as well); timeout: seconds
    for the whole job (default: none); kolorun_args: any other kolorun
    options, e.g. ("--ssh-host-key-checking", "accept-new").

    Raises RankFailedError when the function raised on a rank (naming the
    rank, with its traceback), LaunchError when kolorun failed (with its
    error output), RunTimeoutError when `timeout` passed.
    """
    del disable_cache  # kolorun runs no cached checks
    if np is not None and num_proc == 1:
        num_proc = np
    min_num_proc = min_np if min_num_proc is None else min_num_proc
    max_num_proc = max_np if max_num_proc is None else max_num_proc
    if not callable(fn):
        raise TypeError(f"kolo.run: fn must be callable, got {type(fn).__name__}")
    if isinstance(num_proc, bool) or not isinstance(num_proc, int) or num_proc < 1:
        raise ValueError(f"kolo.run: num_proc must be a positive integer, got {num_proc!r}")
    if hosts is not None and hostfile is not None:
        raise ValueError("kolo.run: pass hosts or hostfile, not both")
    if use_gloo and use_mpi:
        raise ValueError("kolo.run: pass use_gloo or use_mpi, not both")
    if mpi_args is not None and not use_mpi:
        raise ValueError("kolo.run: mpi_args= is only used with use_mpi=True")
    elastic = _elastic_arguments(num_proc, min_num_proc, max_num_proc, slots, reset_limit,
                                 cooldown_range)
    if elastic and hosts is None and hostfile is None:
        # kolorun's elastic mode needs its hosts named; horovod.run's default
        # is this machine with a slot per process.
        hosts = f"localhost:{max(num_proc, max_num_proc or 0)}"
    if use_mpi:
        elastic += ["--mpi"] + ([] if mpi_args is None else ["--mpi-args", str(mpi_args)])
    try:
        payload = cloudpickle.dumps((fn, tuple(args), dict(kwargs or {})))
    except Exception as error:
        raise TypeError(f"kolo.run: cannot send the function and its arguments to the ranks "
                        f"(they must pickle with cloudpickle): {error}") from error

    command = _kolorun_command(num_proc, hosts, hostfile, verbose, start_timeout, ssh_port,
                               ssh_identity_file, network_interface, output_filename,
                               elastic + _sequence(kolorun_args), executable or sys.executable)
    environment = dict(os.environ)
    environment.update({str(k): str(v) for k, v in (env or {}).items()})
    environment.setdefault("PYTHONUNBUFFERED", "1")  # prints reach the notebook as they happen
    start = DEFAULT_START_TIMEOUT if start_timeout is None else start_timeout
    bind, advertised = _run_hosts.caller_endpoint(hosts, hostfile, network_interface)

    job = _Job(num_proc, payload, verbose)
    job.listen(bind, advertised)
    environment[_run_protocol.ADDRESS_ENV] = job.address
    environment[_run_protocol.SECRET_ENV] = job.secret
    environment[_run_protocol.START_TIMEOUT_ENV] = str(start)
    return job.run(command, environment, timeout)


def _elastic_arguments(num_proc, min_num_proc, max_num_proc, slots, reset_limit, cooldown_range):
    """kolorun's elastic options for horovod.run's elastic arguments; [] for
    a fixed-size job."""
    given = {"slots": slots, "reset_limit": reset_limit, "cooldown_range": cooldown_range}
    if min_num_proc is None and max_num_proc is None:
        extra = [name for name, value in given.items() if value is not None]
        if extra:
            raise ValueError(f"kolo.run: {', '.join(extra)} only apply to elastic jobs; give "
                             "min_num_proc or max_num_proc too")
        return []
    for name, value in (("min_num_proc", min_num_proc), ("max_num_proc", max_num_proc),
                        ("slots", slots), ("reset_limit", reset_limit)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < (0 if name == "reset_limit" else 1)):
            raise ValueError(f"kolo.run: {name} must be a "
                             f"{'non-negative' if name == 'reset_limit' else 'positive'} "
                             f"integer, got {value!r}")
    out = ["--min-np", str(num_proc if min_num_proc is None else min_num_proc)]
    if max_num_proc is not None:
        out += ["--max-np", str(max_num_proc)]
    if slots is not None:
        out += ["--slots-per-host", str(slots)]
    if reset_limit is not None:
        out += ["--reset-limit", str(reset_limit)]
    if cooldown_range is not None:
        try:
            low, high = (float(v) for v in cooldown_range)
        except (TypeError, ValueError):
            raise ValueError("kolo.run: cooldown_range must be (min, max) seconds, got "
                             f"{cooldown_range!r}") from None
        out += ["--blacklist-cooldown-range", f"{low:g}", f"{high:g}"]
    return out


def _sequence(kolorun_args):
    if isinstance(kolorun_args, str):
        raise TypeError("kolo.run: kolorun_args is a sequence of arguments, not one string")
    return [str(a) for a in kolorun_args]


def _kolorun_command(np, hosts, hostfile, verbose, start_timeout, ssh_port, ssh_identity_file,
                     network_interface, output_filename, kolorun_args, python):
    command = [launcher_path(), "-np", str(np)]
    if hosts is not None:
        command += ["-H", hosts if isinstance(hosts, str) else ",".join(hosts)]
    if hostfile is not None:
        command += ["--hostfile", os.fspath(hostfile)]
    if start_timeout is not None:
        command += ["--start-timeout", str(int(start_timeout))]
    if ssh_port is not None:
        command += ["-p", str(int(ssh_port))]
    if ssh_identity_file is not None:
        command += ["-i", os.fspath(ssh_identity_file)]
    if network_interface is not None:
        command += ["--network-interfaces", network_interface]
    if output_filename is not None:
        command += ["--output-filename", os.fspath(output_filename)]
    if verbose:
        command.append("--verbose")
    return command + kolorun_args + [python, "-m", "kolo.run_worker"]


class _Job:
    """One kolo.run call: the listening socket, a thread per worker
    connection, kolorun and the threads copying its output."""

    def __init__(self, np, payload, verbose):
        self.np = np
        self.payload = payload
        self.verbose = verbose
        self.secret = _run_protocol.new_secret()
        self.address = None
        self.reports = queue.Queue()  # (rank, report dict) from connection threads
        self.stderr_tail = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._server = None
        self._channels = []
        self._threads = []
        self._process = None

    # --- the server ---------------------------------------------------------

    def listen(self, bind, advertised):
        family = socket.AF_INET6 if ":" in bind else socket.AF_INET
        self._server = socket.socket(family, socket.SOCK_STREAM)
        self._server.bind((bind, 0))
        self._server.listen(min(self.np, socket.SOMAXCONN))
        self.address = _run_protocol.format_address(advertised, self._server.getsockname()[1])
        self._start(self._accept_loop, "kolo.run accept")

    def _start(self, target, name, *args):
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _accept_loop(self):
        while True:
            try:
                sock, peer = self._server.accept()
            except OSError:
                return  # closed: the job is over
            self._start(self._serve, f"kolo.run worker {peer}", sock, peer)

    def _serve(self, sock, peer):
        try:
            channel, rank = _run_protocol.accept_worker(sock, self.secret, HANDSHAKE_TIMEOUT)
        except (OSError, _run_protocol.ProtocolError) as error:
            sock.close()
            # Not one of our ranks (they all know the secret): worth a word.
            sys.stderr.write(f"kolo.run: refused a connection from {peer[0]}: {error}\n")
            return
        self._channels.append(channel)
        try:
            channel.send(self.payload)
            report = cloudpickle.loads(channel.recv())
        except (OSError, _run_protocol.ProtocolError) as error:
            # The rank died or was stopped; kolorun's exit status tells why.
            self._say(f"lost the connection to rank {rank}: {error}")
            return
        except Exception as error:  # the result does not unpickle here
            report = {"ok": False, "stage": "result", "type": type(error).__name__,
                      "message": f"the result does not unpickle in the caller: {error}",
                      "traceback": "", "exception": None}
        self.reports.put((rank, report))

    def _say(self, message):
        if self.verbose:
            sys.stderr.write(f"kolo.run: {message}\n")

    # --- kolorun --------------------------------------------------------------

    def _copy_output(self, source, sink, tail):
        for line in iter(source.readline, b""):
            text = line.decode("utf-8", errors="replace")
            if tail is not None:
                tail.append(text)
            sink.write(text)
            sink.flush()
        source.close()

    def _stop(self):
        """Stops kolorun (it passes SIGTERM to its ranks), SIGKILL if it lingers."""
        process = self._process
        if process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            process.kill()  # its ranks die with it (they ask for SIGKILL when it dies)
            process.wait()
        except KeyboardInterrupt:  # a second Ctrl-C: no more grace
            process.kill()
            process.wait()
            raise

    def run(self, command, environment, timeout):
        self._say(f"{self.np} ranks; waiting for them at {self.address}")
        try:
            self._process = subprocess.Popen(
                command, env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True)
        except OSError as error:
            self._close()
            raise LaunchError(f"kolo.run: cannot start kolorun ({command[0]}): {error}", None,
                              "") from None
        # sys.stdout is looked up now: in a notebook it is the cell's stream.
        self._start(self._copy_output, "kolo.run stdout", self._process.stdout, sys.stdout, None)
        self._start(self._copy_output, "kolo.run stderr", self._process.stderr, sys.stderr,
                    self.stderr_tail)
        try:
            results, failures = self._collect(timeout)
        except BaseException:
            self._stop()
            self._join_output()  # the ranks' last words come before the error
            raise
        finally:
            self._close()
        return self._outcome(results, failures)

    def _collect(self, timeout):
        """Waits for every rank's report or kolorun's end; returns the results
        and the failure reports, in order of arrival."""
        deadline = None if timeout is None else time.monotonic() + timeout
        results, failures = {}, {}
        stop_by = None  # after a failure, kolorun has this long to stop the others
        exited_at = None
        while len(results) < self.np:
            now = time.monotonic()
            if exited_at is None and self._process.poll() is not None:
                exited_at = now
            try:
                rank, report = self.reports.get(timeout=0.1)
            except queue.Empty:
                if exited_at is not None:
                    # Reports of ranks that finished are already in the
                    # sockets; give their threads a moment, not forever (a
                    # half-open connection to a lost host never ends).
                    if self._connections_done() or now - exited_at > HANDSHAKE_TIMEOUT:
                        break
                    continue
                if deadline is not None and now > deadline:
                    self._stop()
                    raise RunTimeoutError(f"kolo.run: the job ran past its timeout of "
                                          f"{timeout} s; its ranks were stopped")
                if stop_by is not None and now > stop_by:
                    self._stop()
                continue
            if not 0 <= rank < self.np or rank in results or rank in failures:
                continue  # a rank number kolorun never gave out; ignore it
            if report["ok"]:
                results[rank] = report["value"]
            else:
                failures[rank] = report
                if stop_by is None:
                    stop_by = now + STOP_GRACE
        if exited_at is None:
            try:
                self._process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                self._say("kolorun did not end after every rank reported; stopping it")
                self._stop()
        self._join_output()
        return results, failures

    def _connections_done(self):
        """True when no connection thread can still deliver a report."""
        return self.reports.empty() and all(
            not t.is_alive() for t in self._threads if t.name.startswith("kolo.run worker"))

    def _join_output(self):
        for thread in self._threads:
            if thread.name in ("kolo.run stdout", "kolo.run stderr"):
                thread.join(5.0)

    def _close(self):
        try:
            self._server.close()
        except OSError:
            pass
        for channel in self._channels:
            channel.close()

    # --- the answer -----------------------------------------------------------

    def _outcome(self, results, failures):
        if failures:
            raise _rank_failed(failures)
        if len(results) == self.np:
            return [results[r] for r in range(self.np)]
        missing = [r for r in range(self.np) if r not in results]
        exit_code = self._process.poll()
        stderr = "".join(self.stderr_tail)
        if exit_code != 0:
            raise LaunchError(
                f"kolo.run: kolorun failed (exit code {exit_code}) before rank(s) "
                f"{_ranks(missing)} reported a result; its error output ends with:\n{stderr}",
                exit_code, stderr)
        raise RunError(f"kolo.run: rank(s) {_ranks(missing)} exited without reporting a result "
                       "(did the function end its process with os._exit?)")


def _ranks(ranks):
    return ", ".join(str(r) for r in ranks)


def _rank_failed(failures):
    # The first failure to arrive is the cause; the others usually follow
    # from it (peers of a failed rank see their collectives fail).
    rank, report = next(iter(failures.items()))
    what = {"load": "could not load the function", "call": "raised",
            "result": "returned a result that cannot be sent back"}[report["stage"]]
    message = f"kolo.run: rank {rank} {what}: {report['type']}: {report['message']}"
    if report["stage"] == "load":
        message += ("\n(functions of importable modules travel by reference: the module must "
                    "be importable on every host)")
    if report["traceback"]:
        message += f"\n\nTraceback on rank {rank}:\n{report['traceback'].rstrip()}"
    others = [r for r in failures if r != rank]
    if others:
        message += f"\n\nRank(s) {_ranks(others)} failed too."
    exception = None
    if report["exception"] is not None:
        try:
            exception = cloudpickle.loads(report["exception"])
        except Exception:
            exception = None
    error = RankFailedError(message, rank, exception, report["traceback"],
                            {r: f"{f['type']}: {f['message']}" for r, f in failures.items()})
    error.__cause__ = exception
    return error
