"""run(): the retry loop of elastic training.

    @kolo.elastic.run
    def train(state):
        ...                      # state.commit() every few steps

    train(state)

Every attempt first makes all ranks' state identical (state.sync()), then
calls the function. When a collective fails (KoloInternalError: a peer died
or the round ended) the state goes back to its last commit; when kolorun
changed the hosts (HostsUpdatedInterrupt) it is kept. Either way this
process leaves its engine, joins the next round (init) and calls
state.on_reset() before trying again. Outside an elastic job the same
happens with the same world, so scripts run unchanged under plain kolorun;
there nothing can change between two attempts but the commits, so a
failure from the same commit as the last one (a shape mismatch in the
program, say) ends the loop with that error instead of repeating forever.
"""

import functools
import gc
import sys

from kolo.common.exceptions import HostsUpdatedInterrupt, KoloInternalError, WorkerRemovedError
from kolo.common.runtime import runtime


def run(func):
    """Decorates `func(state, *args, **kwargs)` so that it is retried from
    the last committed state until it returns; returns its result."""

    @functools.wraps(func)
    def wrapper(state, *args, **kwargs):
        skip_sync = False
        failed_at_commit = None  # state.commits() when the last attempt failed
        while True:
            try:
                if not skip_sync:
                    state.sync()
                return func(state, *args, **kwargs)
            except KoloInternalError as error:
                failed_at_commit = _give_up_on_a_repeat(error, state, failed_at_commit)
                state.restore()
                skip_sync = False
            except HostsUpdatedInterrupt as interrupt:
                skip_sync = interrupt.skip_sync
            _free_the_failed_attempt()
            while True:
                _rejoin()
                # New workers sync from rank 0 whatever the survivors saw, so
                # everyone must take part.
                if runtime().round_has_newcomers():
                    skip_sync = False
                try:
                    state.on_reset()
                    break
                except KoloInternalError:
                    # The new round lost a peer while the state was being reset.
                    state.restore()
                    skip_sync = False

    return wrapper


def _give_up_on_a_repeat(error, state, failed_at_commit):
    """Raises `error` when the job is not elastic and the attempt failed
    without a commit since the previous failure; else returns the commit
    count to compare the next failure with. Commits are collective, so
    every rank decides alike."""
    rt = runtime()
    commits = state.commits()
    if failed_at_commit == commits and rt.is_initialized() and not rt.is_elastic():
        print(f"kolo: elastic.run: the retry from the same commit failed again in a job that "
              f"is not elastic, so no retry can go differently; giving up: {error}",
              file=sys.stderr, flush=True)
        raise error
    return commits


def _free_the_failed_attempt():
    """Frees what the failed attempt left in reference cycles now, on every
    rank at the same point and outside any collective. Its frames (kept in
    cycles by the error's traceback) hold its objects until a collection
    happens to run, maybe much later and inside a collective. With TF 2.21,
    a Keras fit() iterator freed 20 s after the failure blocked the
    collection 20.5 s (its destructor waits for the autotune thread); freed
    here, 0.3 s (tests/python/multirank/tf/test_elastic_keras_callbacks.py)."""
    gc.collect()


def _rejoin():
    """Leaves the current round and joins the next one. In an elastic job a
    round that fails while forming is simply tried again (kolorun decides
    when the job ends, and then init raises WorkerRemovedError); outside one
    the failure is final."""
    rt = runtime()
    elastic = rt.is_initialized() and rt.is_elastic()
    while True:
        _leave(rt)
        try:
            rt.init()
            return
        except WorkerRemovedError as removed:
            _leave(rt)
            print(f"kolo: this worker left the elastic job: {removed}", file=sys.stderr,
                  flush=True)
            raise SystemExit(0) from None
        except KoloInternalError:
            if not elastic:
                raise


def _leave(rt):
    try:
        rt.shutdown()
    except KoloInternalError:
        pass  # the engine is gone either way; the old round's failure is already known


__all__ = ["run"]
