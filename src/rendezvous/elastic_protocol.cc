#include "rendezvous/elastic_protocol.h"

#include <fmt/format.h>

#include <charconv>
#include <map>

#include "common/error.h"
#include "rendezvous/memory_store.h"

namespace kolo::rendezvous::elastic {
namespace {

constexpr std::string_view kRoot = "elastic/";

int64_t parse_number(const std::map<std::string, std::string, std::less<>>& fields,
                     std::string_view name) {
  auto it = fields.find(name);
  if (it == fields.end())
    throw InvalidArgument(fmt::format("elastic assignment: field '{}' is missing", name));
  int64_t value = 0;
  const std::string& text = it->second;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    throw InvalidArgument(
        fmt::format("elastic assignment: field '{}' is not a number: '{}'", name, text));
  return value;
}

int parse_int(const std::map<std::string, std::string, std::less<>>& fields,
              std::string_view name) {
  int64_t v = parse_number(fields, name);
  if (v < 0 || v > (int64_t{1} << 30))
    throw InvalidArgument(fmt::format("elastic assignment: field '{}' out of range: {}", name, v));
  return static_cast<int>(v);
}

std::string_view kind_name(Assignment::Kind kind) {
  switch (kind) {
    case Assignment::Kind::kJoin:
      return "join";
    case Assignment::Kind::kRemoved:
      return "removed";
    case Assignment::Kind::kAborted:
      return "aborted";
  }
  return "?";
}

}  // namespace

std::string arrivals_key() {
  return fmt::format("{}arrivals", kRoot);
}
std::string joins_key(const std::string& worker_id) {
  return fmt::format("{}worker/{}/joins", kRoot, worker_id);
}
std::string assignment_key(const std::string& worker_id, int64_t join) {
  return fmt::format("{}worker/{}/assignment/{}", kRoot, worker_id, join);
}
std::string hosts_seq_key() {
  return fmt::format("{}hosts/seq", kRoot);
}
std::string host_update_key(int64_t seq) {
  return fmt::format("{}hosts/update/{}", kRoot, seq);
}
std::string round_prefix(int64_t round) {
  return fmt::format("kolo/round{}", round);
}
std::string round_over_key(int64_t round) {
  return fmt::format("{}round/{}/over", kRoot, round);
}

int64_t read_counter(Store& store, const std::string& key) {
  return parse_counter(key, store.get(key));
}

std::string encode_host_change(unsigned changes) {
  std::string out;
  if (changes & kHostsAdded) out = "added";
  if (changes & kHostsRemoved) out += out.empty() ? "removed" : ",removed";
  return out.empty() ? "none" : out;
}

unsigned decode_host_change(std::string_view text) {
  if (text == "none") return 0;
  if (text == "added") return kHostsAdded;
  if (text == "removed") return kHostsRemoved;
  if (text == "added,removed") return kHostsAdded | kHostsRemoved;
  throw InvalidArgument(fmt::format("elastic host update: unknown change '{}'", text));
}

std::string encode_assignment(const Assignment& a) {
  std::string out = fmt::format("kind={}\n", kind_name(a.kind));
  if (a.kind != Assignment::Kind::kJoin) return out + fmt::format("reason={}\n", a.reason);
  return out + fmt::format(
                   "round={}\nrank={}\nsize={}\nlocal_rank={}\nlocal_size={}\ncross_rank={}\n"
                   "cross_size={}\nhost={}\nhosts_seq={}\nnewcomers={}\n",
                   a.round, a.rank, a.size, a.local_rank, a.local_size, a.cross_rank, a.cross_size,
                   a.host, a.hosts_seq, a.newcomers);
}

Assignment decode_assignment(std::string_view text) {
  std::map<std::string, std::string, std::less<>> fields;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty()) continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos)
      throw InvalidArgument(fmt::format("elastic assignment: line without '=': '{}'", line));
    fields[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  Assignment a;
  auto kind = fields.find("kind");
  if (kind == fields.end()) throw InvalidArgument("elastic assignment: field 'kind' is missing");
  if (kind->second == "removed" || kind->second == "aborted") {
    a.kind = kind->second == "removed" ? Assignment::Kind::kRemoved : Assignment::Kind::kAborted;
    auto reason = fields.find("reason");
    a.reason = reason == fields.end() ? std::string() : reason->second;
    return a;
  }
  if (kind->second != "join")
    throw InvalidArgument(fmt::format("elastic assignment: unknown kind '{}'", kind->second));
  a.round = parse_number(fields, "round");
  a.rank = parse_int(fields, "rank");
  a.size = parse_int(fields, "size");
  a.local_rank = parse_int(fields, "local_rank");
  a.local_size = parse_int(fields, "local_size");
  a.cross_rank = parse_int(fields, "cross_rank");
  a.cross_size = parse_int(fields, "cross_size");
  a.hosts_seq = parse_number(fields, "hosts_seq");
  a.newcomers = parse_int(fields, "newcomers");
  auto host = fields.find("host");
  a.host = host == fields.end() ? std::string() : host->second;
  if (a.size < 1 || a.rank >= a.size || a.local_size < 1 || a.local_rank >= a.local_size ||
      a.cross_size < 1 || a.cross_rank >= a.cross_size)
    throw InvalidArgument(
        fmt::format("elastic assignment: inconsistent layout rank {}/{} local {}/{} cross {}/{}",
                    a.rank, a.size, a.local_rank, a.local_size, a.cross_rank, a.cross_size));
  return a;
}

}  // namespace kolo::rendezvous::elastic
