"""The framework-independent half of Horovod's API: joining the job,
topology queries, timeline control, process sets and build facts. kolo.torch
and kolo.numpy both re-export these functions."""

from kolo.common.process_sets import ProcessSet
from kolo.common.runtime import runtime

global_process_set = runtime().global_process_set


def init(comm=None, process_sets=None):
    """Joins the job kolorun (or the KOLO_*/HOROVOD_* environment) describes;
    a single process of size 1 when started without a launcher. Calling it
    again while initialized does nothing; after shutdown() it joins again."""
    if comm is not None:
        raise ValueError("kolo: init(comm=...) with MPI communicators is not supported; "
                         "start the job with kolorun (or horovodrun)")
    runtime().init(process_sets)


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


# Build facts Horovod scripts query. Kolo talks TCP between hosts; it has no
# MPI, Gloo, NCCL, DDL, oneCCL, CUDA or ROCm data path in this build.
def mpi_threads_supported():
    return False


def mpi_enabled():
    return False


def mpi_built():
    return False


def gloo_enabled():
    return False


def gloo_built():
    return False


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
