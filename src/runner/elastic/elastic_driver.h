// kolorun's elastic mode: a job that survives failed workers and follows
// the hosts a discovery script reports, in rounds.
//
// A round is a fixed set of workers with ranks 0..n-1. The driver forms one
// at the start, and again whenever a worker fails, a worker leaves its round
// (it hit an error and re-initialised) or the usable hosts change. Forming
// means: plan the members (round_plan.h), start workers for new slots, wait
// until every member has asked to join (elastic_protocol.h), then answer
// each with its place. Survivors get there by themselves: their engine
// fails with KoloInternalError when a peer dies, kolo.elastic.run restores
// the last commit and re-initialises, which is the join. Host changes are
// announced in the store; workers see them at their next commit
// (HostsUpdatedInterrupt on every rank at the same step) and join.
//
// A failed worker counts against its host; at KOLO_ELASTIC_HOST_FAILURES
// failures (or at once when ssh cannot reach it) the host is blacklisted
// (for the cooldown, if one is given): no new workers start there, while
// its healthy workers keep their places. Before that the failed worker's
// slot is refilled in the next round. The job ends when a worker finishes
// successfully (after the others finish too), when every worker has
// failed, when a new round would exceed --reset-limit, when fewer than
// --min-np workers are possible (at once when neither discovery nor a
// cooldown can add hosts, else after --elastic-timeout), or when a round
// cannot form within --elastic-timeout.
#pragma once

#include "runner/job.h"
#include "runner/launch_options.h"

namespace kolo::runner::elastic {

JobResult run_elastic(const LaunchOptions& options, int stdout_fd, int stderr_fd);

}  // namespace kolo::runner::elastic
