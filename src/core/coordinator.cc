#include "core/coordinator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/error.h"
#include "core/operation_table.h"

namespace kolo::core {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::string scale_text(double value) {
  return fmt::format("{:g}", value);
}

std::vector<int64_t> trailing_dims(const std::vector<int64_t>& shape) {
  return shape.empty() ? shape : std::vector<int64_t>(shape.begin() + 1, shape.end());
}

// "rank 0: float32; ranks 1, 2: int32": the ranks grouped by their value, in
// rank order of first appearance.
template <typename Describe>
std::string group_by_value(const std::vector<std::optional<Request>>& by_rank, Describe describe) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (size_t r = 0; r < by_rank.size(); ++r) {
    if (!by_rank[r]) continue;
    std::string value = describe(*by_rank[r]);
    auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == value; });
    if (it == groups.end()) {
      groups.push_back({value, {static_cast<int>(r)}});
    } else {
      it->second.push_back(static_cast<int>(r));
    }
  }
  std::vector<std::string> parts;
  for (const auto& [value, ranks] : groups) {
    parts.push_back(fmt::format("{} {}: {}", ranks.size() == 1 ? "rank" : "ranks",
                                fmt::join(ranks, ", "), value));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

Coordinator::Coordinator(int size, StallSettings stall, std::function<std::string(int)> rank_name)
    : size_(size), stall_(stall), rank_name_(std::move(rank_name)) {}

void Coordinator::add(int rank, const std::vector<Request>& requests, Clock::time_point now) {
  for (const auto& request : requests) {
    if (request.op == OpType::kJoin) {
      joined_.insert(rank);
      last_joined_ = rank;
      continue;
    }
    Entry& entry = table_[request.name];
    Clock::time_point submitted =
        now - std::chrono::microseconds(std::max<int64_t>(request.age_us, 0));
    if (entry.by_rank.empty()) {
      entry.by_rank.resize(static_cast<size_t>(size_));
      entry.first_seen = submitted;
      entry.arrival = next_arrival_++;
    }
    entry.first_seen = std::min(entry.first_seen, submitted);
    auto& slot = entry.by_rank[static_cast<size_t>(rank)];
    if (!slot) ++entry.count;
    slot = request;
  }
}

bool Coordinator::ready(const Entry& entry) const {
  for (int r = 0; r < size_; ++r) {
    if (!entry.by_rank[static_cast<size_t>(r)] && joined_.count(r) == 0) return false;
  }
  return entry.count > 0;
}

bool Coordinator::group_ready(const std::string& group, int group_size) const {
  int members = 0;
  for (const auto& [name, entry] : table_) {
    for (const auto& request : entry.by_rank) {
      if (request && request->group == group) {
        if (!ready(entry)) return false;
        ++members;
        break;
      }
    }
  }
  return members >= group_size;
}

Response Coordinator::build(const std::string& name, const Entry& entry) const {
  const Request* first = nullptr;
  for (const auto& request : entry.by_rank) {
    if (request) {
      first = &*request;
      break;
    }
  }
  Response response;
  response.op = first->op;
  response.names = {name};
  const OperationInfo& operation = operation_info(first->op);
  auto fail = [&](std::string_view what, auto describe) {
    response.kind = Response::Kind::kError;
    response.error =
        fmt::format("Mismatched {} for {} of tensor '{}': {}", what, op_type_name(first->op), name,
                    group_by_value(entry.by_rank, describe));
    return response;
  };
  auto differs = [&](auto field) {
    for (const auto& request : entry.by_rank) {
      if (request && field(*request) != field(*first)) return true;
    }
    return false;
  };

  if (differs([](const Request& r) { return r.op; })) {
    return fail("operations", [](const Request& r) { return std::string(op_type_name(r.op)); });
  }
  if (differs([](const Request& r) { return r.dtype; })) {
    return fail("data types", [](const Request& r) { return std::string(dtype_name(r.dtype)); });
  }
  if (differs([](const Request& r) { return r.device; })) {
    return fail("devices", [](const Request& r) {
      return r.device == kCpuDevice ? std::string("cpu") : fmt::format("cuda:{}", r.device);
    });
  }
  if (operation.first_dimension == FirstDimension::kVariesPerRank) {
    if (differs([](const Request& r) { return trailing_dims(r.shape); }) ||
        differs([](const Request& r) { return r.shape.size(); })) {
      return fail("shapes (all dimensions but the first must match)",
                  [](const Request& r) { return shape_text(r.shape); });
    }
  } else if (operation.moves_data && differs([](const Request& r) { return r.shape; })) {
    return fail("shapes", [](const Request& r) { return shape_text(r.shape); });
  }
  if (operation.reduces) {
    if (differs([](const Request& r) { return r.reduction.op; })) {
      return fail("reduce ops",
                  [](const Request& r) { return std::string(reduce_op_name(r.reduction.op)); });
    }
    if (differs([](const Request& r) { return r.reduction.prescale; })) {
      return fail("prescale factors",
                  [](const Request& r) { return scale_text(r.reduction.prescale); });
    }
    if (differs([](const Request& r) { return r.reduction.postscale; })) {
      return fail("postscale factors",
                  [](const Request& r) { return scale_text(r.reduction.postscale); });
    }
  }
  if (operation.has_root && differs([](const Request& r) { return r.root; })) {
    return fail("root ranks", [](const Request& r) { return std::to_string(r.root); });
  }
  if (operation.changes_process_sets && differs([](const Request& r) { return r.values; })) {
    return fail("process sets", [](const Request& r) { return shape_text(r.values); });
  }
  if (!joined_.empty() && !operation.runs_on_joined_rank) {
    response.kind = Response::Kind::kError;
    response.error = fmt::format(
        "{} of tensor '{}' cannot run while {} {} {} joined: only allreduce runs with joined ranks",
        op_type_name(first->op), name, joined_.size() == 1 ? "rank" : "ranks",
        fmt::join(joined_, ", "), joined_.size() == 1 ? "has" : "have");
    // The joined ranks submitted nothing for this tensor, so only this list
    // tells them: their join() fails with the same error (take_ready then
    // releases them), so the root cause reaches every rank.
    response.values.assign(joined_.begin(), joined_.end());
    return response;
  }

  response.dtype = first->dtype;
  response.reduction = first->reduction;
  response.root = first->root;
  response.device = first->device;
  response.shapes = {first->shape};
  if (first->op == OpType::kAllgather) {
    for (const auto& request : entry.by_rank) {
      response.values.push_back(request && !request->shape.empty() ? request->shape[0] : 0);
    }
  } else if (operation.changes_process_sets) {
    response.values = first->values;
  }
  return response;
}

const Request& Coordinator::any_request(const Entry& entry) {
  for (const auto& request : entry.by_rank) {
    if (request) return *request;
  }
  throw InternalError("a coordinator table entry without requests");
}

std::vector<Response> Coordinator::take_expired() {
  std::vector<std::pair<uint64_t, Response>> expired;
  for (auto it = table_.begin(); it != table_.end();) {
    if (it->second.expired.empty()) {
      ++it;
      continue;
    }
    Response response;
    response.kind = Response::Kind::kError;
    response.op = any_request(it->second).op;
    response.names = {it->first};
    response.error = it->second.expired;
    expired.push_back({it->second.arrival, std::move(response)});
    it = table_.erase(it);
  }
  std::sort(expired.begin(), expired.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Response> responses;
  for (auto& [arrival, response] : expired) responses.push_back(std::move(response));
  return responses;
}

ResponseList Coordinator::take_ready() {
  ResponseList list;
  list.responses = take_expired();
  std::vector<std::pair<uint64_t, std::string>> ready_names;
  for (const auto& [name, entry] : table_) {
    if (!ready(entry)) continue;
    const Request& any = any_request(entry);
    if (!any.group.empty() && !group_ready(any.group, any.group_size)) continue;
    ready_names.push_back({entry.arrival, name});
  }
  std::sort(ready_names.begin(), ready_names.end());

  list.cacheable = joined_.empty();
  bool refused_joined = false;
  for (const auto& [arrival, name] : ready_names) {
    list.responses.push_back(build(name, table_.at(name)));
    const Response& built = list.responses.back();
    refused_joined |= built.kind == Response::Kind::kError && !built.values.empty();
    table_.erase(name);
  }
  // Released only after every response is built: readiness above counted
  // them as joined. Their join() has failed, so a rank that goes on joins
  // again and counts as joined from then.
  if (refused_joined) {
    joined_.clear();
    last_joined_ = -1;
  }
  if (!joined_.empty() && static_cast<int>(joined_.size()) == size_) {
    Response join;
    join.op = OpType::kJoin;
    join.names = {"join"};
    join.values = {last_joined_};
    list.responses.push_back(std::move(join));
    joined_.clear();
    last_joined_ = -1;
  }
  list.joined.assign(joined_.begin(), joined_.end());
  return list;
}

std::string Coordinator::missing_ranks(const Entry& entry) const {
  std::vector<std::string> missing;
  for (int r = 0; r < size_; ++r) {
    if (!entry.by_rank[static_cast<size_t>(r)] && joined_.count(r) == 0)
      missing.push_back(rank_name_(r));
  }
  return fmt::format("{}", fmt::join(missing, ", "));
}

std::optional<std::string> Coordinator::check_stalls(Clock::time_point now) {
  if (!stall_.enabled || table_.empty()) return std::nullopt;
  std::vector<std::pair<uint64_t, std::string>> stalled;
  for (const auto& [name, entry] : table_) {
    auto waited = now - entry.first_seen;
    if (waited < stall_.warning_time) continue;
    double seconds = std::chrono::duration<double>(waited).count();
    stalled.push_back({entry.arrival, fmt::format("'{}' ({}, waiting {:.1f} s) is missing from {}",
                                                  name, op_type_name(any_request(entry).op),
                                                  seconds, missing_ranks(entry))});
  }
  if (stalled.empty()) return std::nullopt;
  if (last_warning_ != Clock::time_point{} && now - last_warning_ < stall_.warning_time) {
    return std::nullopt;
  }
  last_warning_ = now;
  std::sort(stalled.begin(), stalled.end());
  std::vector<std::string> lines;
  for (auto& [arrival, line] : stalled) lines.push_back(std::move(line));
  return fmt::format(
      "stalled operations: some ranks have not submitted them for over {:g} s (are the ranks "
      "running different code paths?): {}",
      std::chrono::duration<double>(stall_.warning_time).count(), fmt::join(lines, "; "));
}

bool Coordinator::expire_stalled(Clock::time_point now) {
  if (!stall_.enabled || stall_.shutdown_time.count() == 0) return false;
  const double limit = std::chrono::duration<double>(stall_.shutdown_time).count();
  std::map<std::string, std::string> expired_groups;  // group -> the member that stalled it
  bool any = false;
  for (auto& [name, entry] : table_) {
    // A complete entry waits only for the rest of its group: it fails with
    // the group below.
    if (!entry.expired.empty() || ready(entry) || now - entry.first_seen < stall_.shutdown_time) {
      continue;
    }
    const Request& request = any_request(entry);
    // Only the ranks that submitted it wait for it; the others are elsewhere
    // (a rank raised, skipped or reordered a collective), so failing it here
    // ends their wait without stopping the engine for later operations.
    entry.expired = fmt::format(
        "'{}' ({}) was not submitted by {} within {:g} s (KOLO_STALL_SHUTDOWN_TIME_SECONDS); "
        "the ranks are running different code paths (did one raise, skip or reorder a "
        "collective?)",
        name, op_type_name(request.op), missing_ranks(entry), limit);
    if (!request.group.empty()) expired_groups.emplace(request.group, name);
    any = true;
  }
  for (auto& [name, entry] : table_) {
    const Request& request = any_request(entry);
    auto group = expired_groups.find(request.group);
    if (!entry.expired.empty() || request.group.empty() || group == expired_groups.end()) continue;
    entry.expired = fmt::format(
        "'{}' ({}) belongs to a group whose member '{}' was not submitted by every rank within "
        "{:g} s (KOLO_STALL_SHUTDOWN_TIME_SECONDS)",
        name, op_type_name(request.op), group->second, limit);
  }
  return any;
}

}  // namespace kolo::core
