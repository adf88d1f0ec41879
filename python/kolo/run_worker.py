"""What each rank of a kolo.run job executes (`python -m kolo.run_worker`).

It connects back to the caller (address and secret from the environment
kolo.run set up), receives the pickled function, calls it, and sends back
the pickled result or the error with its traceback. The exit status is 0
only when the function returned, so kolorun stops the other ranks as soon
as one fails. If the caller goes away while the function runs (a closed
notebook, a killed kernel), the worker exits instead of running on unseen.
"""

import os
import sys
import threading
import traceback

import cloudpickle

from kolo import _core
from kolo._run_protocol import (ADDRESS_ENV, SECRET_ENV, START_TIMEOUT_ENV, ProtocolError,
                                connect_to_caller)
from kolo.common.settings import forget, setting


def _type_name(cls):
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _error_report(stage, error, own_frames=0):
    """What the caller needs to raise a useful error: the type, the message,
    the traceback as text (always; less this module's `own_frames`), and the
    exception itself when it pickles."""
    tb = error.__traceback__
    for _ in range(own_frames):
        tb = tb.tb_next if tb is not None and tb.tb_next is not None else tb
    try:
        exception = cloudpickle.dumps(error)
    except Exception:  # an exception holding a socket, a lock, ...
        exception = None
    return {
        "ok": False,
        "stage": stage,
        "type": _type_name(type(error)),
        "message": str(error),
        "traceback": "".join(traceback.format_exception(type(error), error, tb)),
        "exception": exception,
    }


def _call(payload):
    """Runs the pickled (fn, args, kwargs); returns (report bytes, succeeded)."""
    try:
        fn, args, kwargs = cloudpickle.loads(payload)
    except BaseException as error:  # noqa: B902 - an import error on this host is the user's to see
        return cloudpickle.dumps(_error_report("load", error)), False
    try:
        value = fn(*args, **kwargs)
    except BaseException as error:  # noqa: B902 - SystemExit and KeyboardInterrupt are reported too
        return cloudpickle.dumps(_error_report("call", error, own_frames=1)), False
    try:
        return cloudpickle.dumps({"ok": True, "value": value}), True
    except BaseException as error:  # noqa: B902
        return cloudpickle.dumps(_error_report("result", error)), False


def _exit_when_caller_leaves(channel, finished):
    """The caller sends nothing after the function, so the socket becomes
    readable only when it closes. Once the result is on its way, a close is
    the normal end and is ignored."""
    try:
        channel.sock.recv(1)
    except OSError:
        pass
    if not finished.is_set():
        sys.stderr.write("kolo.run_worker: the kolo.run caller went away; stopping\n")
        sys.stderr.flush()
        os._exit(1)


def main():
    try:
        address, secret = setting(ADDRESS_ENV), setting(SECRET_ENV)
        start_timeout = float(setting(START_TIMEOUT_ENV))
        rank = _core.launch_rank()  # kolorun's, or mpirun's under use_mpi=True
    except ValueError as error:
        sys.exit(f"kolo.run_worker: {error}")
    # The user's function (and what it starts) must not see the call's secret.
    forget(ADDRESS_ENV, SECRET_ENV, START_TIMEOUT_ENV)
    if not address or not secret:
        sys.exit("kolo.run_worker: no caller to serve; this module is started by kolo.run()")
    try:
        channel = connect_to_caller(address, secret, rank, start_timeout)
        payload = channel.recv()
    except (OSError, ProtocolError) as error:
        sys.exit(f"kolo.run_worker (rank {rank}): cannot reach the kolo.run caller at "
                 f"{address}: {error}")

    finished = threading.Event()
    threading.Thread(target=_exit_when_caller_leaves, args=(channel, finished),
                     name="kolo.run caller watch", daemon=True).start()
    report, succeeded = _call(payload)
    del payload
    finished.set()
    try:
        channel.send(report)
    except OSError as error:
        sys.stderr.write(f"kolo.run_worker (rank {rank}): could not send the result to the "
                         f"caller: {error}\n")
        succeeded = False
    sys.stdout.flush()
    sys.exit(0 if succeeded else 1)


if __name__ == "__main__":
    main()
