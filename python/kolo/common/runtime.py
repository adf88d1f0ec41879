"""The process's connection to the job: one engine, its process sets, the
integer handles of asynchronous operations and the operations whose wait was
interrupted while the engine still ran them.

Horovod's API is module-level (hvd.init(), hvd.rank(), ...), so the binding
keeps one Runtime per process; the C++ core itself has no globals.
"""

import atexit
import itertools
import threading

from kolo import _core
from kolo.common.exceptions import WorkerRemovedError
from kolo.common.pending import InterruptedOperations, PendingOperation, engine_value
from kolo.common.process_sets import GlobalProcessSet, ProcessSet
from kolo.common.settings import check_all as check_settings


class Runtime:
    def __init__(self):
        self._engine = None
        self._lock = threading.Lock()
        self._handles = {}  # integer handle -> (owning module's name, PendingOperation)
        self._interrupted = InterruptedOperations()
        self._next_handle = itertools.count(1)
        self._homogeneous = None
        # The failure the last engine reported that the program had not
        # gone on past when it shut down; the next engine withdraws it once
        # the program submits there (kolo.elastic.run's retries).
        self._standing_failure_report = ""
        self._hosts_seq = 0  # the last host update this process acted on (elastic)
        self.global_process_set = GlobalProcessSet()
        self.global_process_set._attach(self, 0)
        self._process_sets = {0: self.global_process_set}

    # --- lifecycle -------------------------------------------------------

    def init(self, process_sets=None, mpi_ranks=(), mpi_comm_address=0):
        """Joins the job (idempotent while initialized). `process_sets`: ProcessSet
        objects or rank lists, identical on every rank; "dynamic" is accepted for
        Horovod compatibility (sets can always be added later). `mpi_ranks` /
        `mpi_comm_address`: the job is those MPI_COMM_WORLD ranks, or that MPI
        communicator, over the MPI backend (see basics.init)."""
        with self._lock:
            if self._engine is not None:
                return
            # Before the engine: its constructor's ValueError would end every
            # rank with a traceback for what is one wrong variable.
            check_settings()
            sets = []
            if process_sets is not None and process_sets != "dynamic":
                sets = [ps if isinstance(ps, ProcessSet) else ProcessSet(ps) for ps in process_sets]
            try:
                engine = _core.Engine([ps.ranks for ps in sets], list(mpi_ranks),
                                      mpi_comm_address, self._standing_failure_report)
            except _core.WorkerRemoved as removed:
                raise WorkerRemovedError(str(removed)) from None
            self._engine = engine
            # Framework kernels (kolo.tensorflow's ops) submit to this engine.
            _core.attach_kernel_engine(engine)
            self._hosts_seq = engine.elastic_hosts_seq
            self._process_sets = {0: self.global_process_set}
            for i, ps in enumerate(sets, start=1):
                ps._attach(self, i)
                self._process_sets[i] = ps
            self._homogeneous = None

    def shutdown(self):
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            # First: a kernel still submitting holds the bridge's lock, so
            # after this no kernel reaches the engine being shut down.
            _core.detach_kernel_engine()
            try:
                engine.shutdown()
            finally:
                self._standing_failure_report = engine.standing_failure_report
        # Only now: the engine may run pending operations until it has shut
        # down, and afterwards every operation has finished (failed, if not done).
        self._handles.clear()
        self._interrupted.drop_finished()

    def is_initialized(self):
        return self._engine is not None

    def engine(self):
        engine = self._engine
        if engine is None:
            raise ValueError("Kolo has not been initialized; call init() first "
                             "(hvd.init() with kolo.torch, kolo.numpy or horovod.torch).")
        return engine

    # --- elastic ---------------------------------------------------------

    def is_elastic(self):
        """True when kolorun started this process in elastic mode."""
        return self.engine().elastic_round >= 0

    def round_has_newcomers(self):
        """True in an elastic round with workers that were in no earlier round:
        they need everyone's state, so nobody may skip State.sync()."""
        return self.engine().elastic_newcomers > 0

    def check_host_updates(self):
        """Collective in an elastic job: the host changes kolorun announced since
        this process last acted on one, as a set of "added"/"removed" that is
        the same on every rank (rank 0 reads the store and broadcasts what it
        saw), or None. Outside elastic mode, None without communicating."""
        engine = self.engine()
        if engine.elastic_round < 0:
            return None
        import numpy as np

        seen = np.zeros(2, dtype=np.int64)
        if engine.rank == 0:
            seq, changes = engine.host_updates_since(self._hosts_seq)
            seen[:] = (seq, changes)
        handle = engine.broadcast(seen, seen, root=0, name="kolo.elastic.host_updates")
        self.operation([handle], seen).result()
        seq, changes = int(seen[0]), int(seen[1])
        if seq <= self._hosts_seq:
            return None
        self._hosts_seq = seq
        return {name for bit, name in ((1, "added"), (2, "removed")) if changes & bit}

    # --- topology --------------------------------------------------------

    def is_homogeneous(self):
        """True when every host runs the same number of ranks (one allgather,
        computed once per init)."""
        if self._homogeneous is None:
            import numpy as np

            engine = self.engine()
            mine = np.array([engine.local_size], dtype=np.int64)
            handle = engine.allgather(mine, name="kolo.is_homogeneous")
            sizes = self.operation([handle], mine,
                                   lambda handles: np.from_dlpack(handles[0].output())).result()
            self._homogeneous = bool((sizes == sizes[0]).all())
        return self._homogeneous

    # --- process sets ----------------------------------------------------

    def add_process_set(self, process_set):
        ps = process_set if isinstance(process_set, ProcessSet) else ProcessSet(process_set)
        if ps.process_set_id is not None:
            raise ValueError(f"kolo: {ps} is already registered")
        handle = self.engine().add_process_set(ps.ranks)
        set_id = self.operation([handle], finish=engine_value).result()
        ps._attach(self, set_id)
        self._process_sets[ps.process_set_id] = ps
        return ps

    def process_set_ranks(self, process_set_id):
        """Global ranks of a registered set, in the set's rank order."""
        if process_set_id == 0:
            return list(range(self.engine().size))
        ps = self._process_sets.get(process_set_id)
        if ps is None:
            raise ValueError(f"kolo: process set {process_set_id} is not registered")
        return ps.ranks

    def set_root(self, process_set_id, root_rank):
        """A global root rank as the engine's rank within the set."""
        ranks = self.process_set_ranks(process_set_id)
        if root_rank not in ranks:
            raise ValueError(f"kolo: root rank {root_rank} is not in process set "
                             f"{process_set_id} (ranks {ranks})")
        return ranks.index(root_rank)

    def remove_process_set(self, process_set):
        """Returns False (as Horovod does) when the set is not registered."""
        if not isinstance(process_set, ProcessSet) or process_set.process_set_id in (None, 0):
            return False
        if self._process_sets.get(process_set.process_set_id) is not process_set:
            return False
        handle = self.engine().remove_process_set(process_set.process_set_id)
        self.operation([handle]).result()
        del self._process_sets[process_set.process_set_id]
        process_set.process_set_id = None
        return True

    # --- operations and handles ------------------------------------------

    def operation(self, handles, buffers=None, finish=None):
        """A PendingOperation over just-enqueued engine `handles`. `buffers`:
        every object whose memory the engine may read or write (inputs,
        contiguous copies, outputs, DLPack views), held until the engine is
        done with them, also when a wait is interrupted. `finish(handles)`
        makes the result once all handles succeeded."""
        self._interrupted.drop_finished()
        return PendingOperation(handles, buffers, finish, self._interrupted)

    def register_operation(self, handles, buffers, finish, owner):
        """register(operation(handles, buffers, finish), owner) in one call:
        the async ops' hot path, paid once per gradient of a backward pass."""
        interrupted = self._interrupted
        interrupted.drop_finished()
        key = next(self._next_handle)
        self._handles[key] = (owner, PendingOperation(handles, buffers, finish, interrupted))
        return key

    def interrupted_operations(self):
        """The InterruptedOperations an operation started outside operation()
        keeps itself in after an interrupted wait (the torch hot path's
        kolo._core.InPlaceOperation), with the finished ones dropped, as
        operation() drops them."""
        interrupted = self._interrupted
        interrupted.drop_finished()
        return interrupted

    def register(self, operation, owner):
        """Stores `operation` under a new integer handle (the async API);
        `owner` names the module (kolo.torch, kolo.numpy) whose poll and
        synchronize accept the handle."""
        key = next(self._next_handle)
        self._handles[key] = (owner, operation)
        return key

    def poll(self, key, owner):
        return self._registered(key, owner).is_completed()

    def synchronize(self, key, owner):
        """Waits for the operation behind handle `key` and returns its result
        or raises its error; the handle is spent then. After an interrupted
        wait the handle stays valid, so it can be synchronized again."""
        # The lookup of _registered, inlined: this runs once per gradient.
        entry = self._handles.get(key)
        if entry is None or entry[0] != owner:
            self._registered(key, owner)  # raises the right error
        operation = entry[1]
        operation.wait()
        self._handles.pop(key, None)
        return operation.outcome()

    def release(self, key):
        """Forgets handle `key`; its operation, if still running, is the
        caller's to hold (PendingOperation.wait keeps an interrupted one)."""
        self._handles.pop(key, None)

    def _registered(self, key, owner):
        try:
            registered_owner, operation = self._handles[key]
        except KeyError:
            raise ValueError(f"kolo: unknown or already synchronized handle {key}") from None
        if registered_owner != owner:
            raise ValueError(f"{owner}: handle {key} belongs to {registered_owner}; "
                             "synchronize it there")
        return operation


_runtime = Runtime()


def runtime():
    return _runtime


@atexit.register
def _shutdown_at_exit():
    # A script that never calls shutdown() still leaves the job cleanly.
    _runtime.shutdown()
