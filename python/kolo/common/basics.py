"""The framework-independent half of Horovod's API: joining the job,
topology queries, timeline control, process sets and build facts. kolo.torch
and kolo.numpy both re-export these functions."""

from kolo import _core
from kolo.common.process_sets import ProcessSet
from kolo.common.runtime import runtime

global_process_set = runtime().global_process_set


def init(comm=None, process_sets=None):
    """Joins the job kolorun (or the KOLO_*/HOROVOD_* environment) describes;
    a single process of size 1 when started without a launcher. Calling it
    again while initialized does nothing; after shutdown() it joins again.

    `comm` (Horovod's meaning) makes the job an MPI communicator, over the MPI
    backend: a list of MPI_COMM_WORLD ranks (only those ranks call init; any
    other rank gets ValueError), or an mpi4py communicator (every member calls
    init). Kolo duplicates it, so its messages never meet the program's."""
    if comm is not None and runtime().is_initialized():
        raise ValueError("init(comm=...) while Kolo is initialized: the job's communicator is "
                         "chosen by the first init; call shutdown() first")
    mpi_ranks, address = _communicator(comm)
    runtime().init(process_sets, mpi_ranks, address)


def _communicator(comm):
    """(ranks, address of an MPI_Comm) for init(comm=...)."""
    if comm is None:
        return [], 0
    if isinstance(comm, (list, tuple, range)):
        ranks = [int(r) for r in comm]
        if not ranks:
            raise ValueError("init(comm=[]): the list of ranks is empty")
        return ranks, 0
    try:
        from mpi4py import MPI
    except ImportError:
        raise ValueError(f"init(comm={comm!r}): comm must be a list of ranks or an mpi4py "
                         "communicator (mpi4py is not installed)") from None
    if not isinstance(comm, MPI.Comm):
        raise ValueError(f"init(comm={comm!r}): comm must be a list of ranks or an mpi4py "
                         "communicator")
    if comm == MPI.COMM_NULL:
        raise ValueError("init(comm=MPI.COMM_NULL): this process is not in the communicator")
    return [], MPI._addressof(comm)


def shutdown():
    """Leaves the job (collective); pending operations fail with KoloInternalError."""
    runtime().shutdown()


def is_initialized():
    return runtime().is_initialized()


def rank():
    return runtime().engine().rank


def size():
    return runtime().engine().size


def local_rank():
    return runtime().engine().local_rank


def local_size():
    return runtime().engine().local_size


def cross_rank():
    return runtime().engine().cross_rank


def cross_size():
    return runtime().engine().cross_size


def is_homogeneous():
    """True when every host runs the same number of ranks."""
    return runtime().is_homogeneous()


def start_timeline(file_path, mark_cycles=False):
    """Starts writing a Chrome-trace timeline (rank 0 writes it)."""
    runtime().engine().start_timeline(str(file_path), bool(mark_cycles))


def stop_timeline():
    runtime().engine().stop_timeline()


def add_process_set(process_set):
    """Registers a new process set (collective over all ranks); accepts a
    ProcessSet or a list of ranks and returns the registered ProcessSet."""
    return runtime().add_process_set(process_set)


def remove_process_set(process_set):
    """Unregisters a process set (collective); False if it was not registered."""
    return runtime().remove_process_set(process_set)


# Build facts Horovod scripts query, in Horovod's meanings: "MPI" is Kolo's MPI
# backend (a plugin that loads only where libmpi does), "Gloo" the controller
# that needs no MPI, which for Kolo is its own TCP and shared memory. No NCCL,
# DDL, oneCCL, CUDA or ROCm data path exists in this build.
def _backend():
    rt = runtime()
    return rt.engine().backend if rt.is_initialized() else None


def mpi_threads_supported():
    """True when MPI gives MPI_THREAD_MULTIPLE (the program may use mpi4py
    while Kolo runs). ValueError before init() or when MPI is not in use."""
    if not runtime().is_initialized():
        raise ValueError("Kolo has not been initialized; use hvd.init().")
    if _backend() != "mpi":
        raise ValueError("Kolo is not running over MPI in this job (KOLO_BACKEND=mpi or "
                         "hvd.init(comm=...) would use it)")
    return _core.mpi_threads_supported() == 1


def mpi_enabled():
    """True when this job runs over MPI (False before init())."""
    return _backend() == "mpi"


def mpi_built():
    """True when Kolo's MPI backend can run here (its plugin and libmpi load)."""
    return _core.mpi_available()[0]


def gloo_enabled():
    """True when this job runs over Kolo's own transports (False before init())."""
    backend = _backend()
    return backend is not None and backend != "mpi"


def gloo_built():
    return True


def nccl_built():
    return False


def ddl_built():
    return False


def ccl_built():
    return False


def cuda_built():
    return False


def rocm_built():
    return False


__all__ = [
    "ProcessSet", "global_process_set", "init", "shutdown", "is_initialized", "rank", "size",
    "local_rank", "local_size", "cross_rank", "cross_size", "is_homogeneous", "start_timeline",
    "stop_timeline", "add_process_set", "remove_process_set", "mpi_threads_supported",
    "mpi_enabled", "mpi_built", "gloo_enabled", "gloo_built", "nccl_built", "ddl_built",
    "ccl_built", "cuda_built", "rocm_built",
]
