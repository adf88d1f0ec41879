"""Elastic double kills: kolorun --min-np 2 with 4 workers training
(tests/python/launcher/elastic_train.py); one worker is killed at a random
step and a second dies a random few milliseconds into the re-rendezvous
that follows. The job must finish without a hang, and every committed step
must have one set of weights on every worker that logged it, with no gaps
(test_elastic.check_commits_agree)."""

import pathlib

from elastic_job import describe_logs, read_logs
from test_elastic import check_commits_agree, start
from trial import Outcome, finish, orphans


def double_kill(rng, workdir):
    first, second = rng.sample(range(1, 4), 2)
    step = rng.randint(2, 8)
    delay_ms = rng.randint(1, 60)
    job, outdir = start(pathlib.Path(workdir), ["-np", "4", "--min-np", "2", "--elastic-timeout", "60",
                                  "-H", "localhost:4"],
                        "--epochs", 2, "--kill", f"{first}:{step}", "--die-at-rejoin",
                        f"{second}:{delay_ms}")
    what = f"worker {first} killed at step {step}, worker {second} {delay_ms} ms into its rejoin"
    try:
        rc = finish(job, 90)
        took = (job.ended or 0) - job.started
        if rc is None:
            return Outcome("hang", None, f"{what}\n{job.report()}")
        left = orphans(job)
        if left:
            return Outcome("orphans", None, f"{what}: alive after kolorun: {left}")
        logs = read_logs(outdir)
        context = job.report() + "\n--- worker logs:\n" + describe_logs(logs)
        try:
            check_commits_agree(logs, context)
        except AssertionError as e:
            return Outcome("lost step", None, f"{what}: {e}")
        if rc != 0:
            return Outcome("unclear error", None, f"{what}: the job failed\n{context}")
        return Outcome("ok", None, f"{what}; the job took {took:.1f} s")
    finally:
        job.stop()


CASES = {"elastic double kill during re-rendezvous": double_kill}
