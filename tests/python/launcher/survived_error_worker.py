"""A rank program for test_failure_report.py: a shape mismatch provoked on
tensor "caught" is caught on every rank, then the job goes on, then it
fails in the way MODE asks:

  mismatch   a dtype mismatch on tensor "fatal", not caught
  python     a Python error of the program's own (RuntimeError)
  rejoin     the mismatch on "caught" fails a function that
             kolo.elastic.run retries: it leaves that engine and starts a
             new one, and the retry ends on a dtype mismatch on "fatal",
             which run() does not retry: it came from the same commit
  commits    like rejoin, but every attempt commits before it fails, so
             run() retries each time; the third attempt finishes (exit 0)
  async      (no caught mismatch first) a shape mismatch on "first" whose
             handle the program looks at only after submitting and
             finishing three more tensors, as the rest of a backward pass
             would; not caught

Every mismatch is rank 0's tensor against the others'."""

import sys
import time

import numpy as np

import kolo.elastic
import kolo.numpy as hvd


def mismatched(kind, rank):
    if kind == "shape":
        return np.ones(4 if rank == 0 else 5, np.float32)
    return np.ones(4, np.float32 if rank == 0 else np.float64)


@kolo.elastic.run
def rejoin_then_fail(state, rank, attempts):
    # `attempts` is one list run() hands to every attempt: unlike the state,
    # a failure does not roll it back.
    attempts.append(1)
    if len(attempts) == 1:
        hvd.allreduce(mismatched("shape", rank), name="caught", op=hvd.Sum)
        raise SystemExit("the shape mismatch passed")
    print(f"rank {rank} went on in a new engine", flush=True)
    hvd.allreduce(mismatched("dtype", rank), name="fatal", op=hvd.Sum)


@kolo.elastic.run
def commit_then_fail_twice(state, rank, attempts):
    attempts.append(1)
    state.step += 1
    state.commit()
    if len(attempts) <= 2:
        hvd.allreduce(mismatched("shape", rank), name=f"caught.{len(attempts)}", op=hvd.Sum)
        raise SystemExit("the shape mismatch passed")
    assert state.step == 3, state.step  # each retry resumed from its commit


def main():
    mode = sys.argv[1]
    hvd.init()
    rank = hvd.rank()
    if mode == "rejoin":
        rejoin_then_fail(kolo.elastic.ObjectState(), rank, attempts=[])
    if mode == "commits":
        commit_then_fail_twice(kolo.elastic.ObjectState(step=0), rank, attempts=[])
        print(f"rank {rank} finished after two retries", flush=True)
        return
    if mode == "async":
        failing = hvd.allreduce_async(mismatched("shape", rank), name="first", op=hvd.Sum)
        time.sleep(1)  # its error has arrived; the program has not looked
        later = [hvd.allreduce_async(np.ones(4, np.float32), name=f"later.{i}", op=hvd.Sum)
                 for i in range(3)]
        for handle in later:
            hvd.synchronize(handle)
        hvd.synchronize(failing)
        raise SystemExit("the shape mismatch passed")
    try:
        hvd.allreduce(mismatched("shape", rank), name="caught", op=hvd.Sum)
        raise SystemExit("the shape mismatch passed")
    except hvd.KoloInternalError as e:
        print(f"rank {rank} caught: {e}", flush=True)
    hvd.allreduce(np.ones(4, np.float32), name="after", op=hvd.Sum)  # the job goes on
    print(f"rank {rank} went on", flush=True)
    if mode == "mismatch":
        hvd.allreduce(mismatched("dtype", rank), name="fatal", op=hvd.Sum)
    elif mode == "python":
        raise RuntimeError("the program's own failure")
    raise SystemExit(f"survived_error_worker: mode {mode!r} did not fail")


if __name__ == "__main__":
    main()
