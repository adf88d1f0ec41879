"""The short randomized pass of the fault matrix that `make test` runs: one
trial of every case, each from a fresh random seed (in the failure message,
to replay it with `python tests/faults/matrix.py --case NAME --seed S`).
`make faults RUNS=50` runs the full matrix."""

import random

import pytest

from matrix import BAD, CASES, SKIPPED, run_trial


@pytest.mark.parametrize("name", list(CASES) + list(SKIPPED))
def test_one_randomized_trial_ends_well(name):
    if name in SKIPPED:
        pytest.skip(f"{name}: {SKIPPED[name]}")
    seed = random.SystemRandom().randrange(1 << 30)
    outcome = run_trial(name, seed)
    assert outcome.kind not in BAD, (
        f"{name}, seed {seed}: {outcome.kind}\n{outcome.detail}")
