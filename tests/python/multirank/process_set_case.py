"""One test's process set as a member sees it, shared by the torch and
TensorFlow dtype tests: its ranks, this rank's place in it, and a tag that
makes the test's tensor names unique."""

import pytest

from kolo.common.basics import (
    add_process_set, global_process_set, rank, remove_process_set, size)


class SetCase:
    def __init__(self, process_set, tag):
        self.process_set = process_set
        self.ranks = process_set.ranks
        self.me = rank()
        self.included = self.me in self.ranks
        self.k = self.ranks.index(self.me) if self.included else -1
        self.n = len(self.ranks)
        self.tag = f"{tag}.{process_set.process_set_id}"


def set_case_fixture(prefix):
    """A pytest fixture yielding a SetCase for the global set, then for a set
    of every rank but rank 0 (with -np 2 a single rank), so the process-set
    forms of each test run too. Tags start with `prefix`."""

    @pytest.fixture(params=["global", "subset"])
    def case(request):
        tag = f"{prefix}.{request.node.name}"
        if request.param == "global":
            yield SetCase(global_process_set, tag)
            return
        subset = add_process_set(list(range(1, size())))
        try:
            yield SetCase(subset, tag)
        finally:
            remove_process_set(subset)

    return case
