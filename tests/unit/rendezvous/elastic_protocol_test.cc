// The elastic protocol between kolorun's driver and the workers: the key
// names both sides compute, the assignment text and the host change text.
// decode_assignment reads what another process wrote, so every malformed
// input must be an InvalidArgument naming what is wrong.
#include "rendezvous/elastic_protocol.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/error.h"
#include "rendezvous/memory_store.h"

namespace kolo::rendezvous::elastic {
namespace {

Assignment sample_join() {
  Assignment a;
  a.kind = Assignment::Kind::kJoin;
  a.round = 7;
  a.rank = 3;
  a.size = 4;
  a.local_rank = 1;
  a.local_size = 2;
  a.cross_rank = 1;
  a.cross_size = 2;
  a.host = "user@node-2";
  a.hosts_seq = 5;
  a.newcomers = 2;
  return a;
}

Assignment removal(Assignment::Kind kind, const std::string& reason) {
  Assignment a;
  a.kind = kind;
  a.reason = reason;
  return a;
}

// The text of sample_join() with the line of `field` replaced by `line`
// (or dropped when `line` is empty).
std::string join_text_with(const std::string& field, const std::string& line) {
  std::string text = encode_assignment(sample_join());
  const std::string prefix = field + "=";
  size_t at = text.starts_with(prefix) ? 0 : text.find("\n" + prefix);
  EXPECT_NE(at, std::string::npos) << field;
  if (at != 0) ++at;
  size_t end = text.find('\n', at);
  text.replace(at, end - at + 1, line.empty() ? "" : line + "\n");
  return text;
}

// Expects decode_assignment(text) to throw InvalidArgument whose message
// holds `part`.
void expect_rejected(const std::string& text, const std::string& part) {
  try {
    Assignment a = decode_assignment(text);
    ADD_FAILURE() << "accepted:\n" << text << "as rank " << a.rank << " of " << a.size;
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
        << "message: " << e.what() << "\ntext:\n"
        << text;
  }
}

TEST(ElasticProtocol, JoinRoundTrips) {
  const Assignment a = sample_join();
  const std::string text = encode_assignment(a);
  EXPECT_EQ(decode_assignment(text), a) << text;
  // One field a line, as documented.
  EXPECT_NE(text.find("kind=join\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rank=3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("host=user@node-2\n"), std::string::npos) << text;
}

TEST(ElasticProtocol, JoinWithDefaultsAndLargeNumbersRoundTrips) {
  Assignment one;  // rank 0 of 1, round 0, no host
  EXPECT_EQ(decode_assignment(encode_assignment(one)), one);

  Assignment big = sample_join();
  big.round = int64_t{1} << 40;
  big.hosts_seq = int64_t{1} << 41;
  big.host = "[fe80::1%eth0] with spaces=and equals";
  EXPECT_EQ(decode_assignment(encode_assignment(big)), big);
}

TEST(ElasticProtocol, RemovedAndAbortedRoundTripTheirReason) {
  for (auto kind : {Assignment::Kind::kRemoved, Assignment::Kind::kAborted}) {
    Assignment a;
    a.kind = kind;
    a.reason = "host b failed: exit code=1 (rank=3 size=4) ";
    const std::string text = encode_assignment(a);
    Assignment back = decode_assignment(text);
    EXPECT_EQ(back, a) << text;
    EXPECT_EQ(back.reason, a.reason);
  }
  EXPECT_EQ(encode_assignment(removal(Assignment::Kind::kRemoved, "r")),
            "kind=removed\nreason=r\n");
  EXPECT_EQ(encode_assignment(removal(Assignment::Kind::kAborted, "r")),
            "kind=aborted\nreason=r\n");
}

TEST(ElasticProtocol, RemovedIgnoresLayoutFieldsAndMayLackAReason) {
  // A removal carries no layout: the decoded one keeps the defaults.
  Assignment a = decode_assignment("kind=removed\n");
  EXPECT_EQ(a.kind, Assignment::Kind::kRemoved);
  EXPECT_EQ(a.reason, "");
  EXPECT_EQ(a.rank, 0);
  EXPECT_EQ(a.size, 1);
  Assignment b = decode_assignment("kind=aborted\nreason=bye\nrank=9\nsize=2");
  EXPECT_EQ(b.kind, Assignment::Kind::kAborted);
  EXPECT_EQ(b.reason, "bye");
  EXPECT_EQ(b.rank, 0) << "a removal's layout fields are not read";
}

TEST(ElasticProtocol, DecodeToleratesBlankLinesMissingLastNewlineAndUnknownFields) {
  std::string text = encode_assignment(sample_join());
  text.pop_back();  // no final '\n'
  EXPECT_EQ(decode_assignment(text), sample_join());
  EXPECT_EQ(decode_assignment("\n\n" + encode_assignment(sample_join()) + "\nfuture=1\n\n"),
            sample_join());
}

TEST(ElasticProtocol, JoinWithoutHostDecodesAnEmptyHost) {
  Assignment a = decode_assignment(join_text_with("host", ""));
  Assignment expected = sample_join();
  expected.host.clear();
  EXPECT_EQ(a, expected);
}

TEST(ElasticProtocol, DecodeRejectsMissingKind) {
  expect_rejected("", "'kind' is missing");
  expect_rejected("rank=0\nsize=1\n", "'kind' is missing");
  expect_rejected("reason=gone\n", "'kind' is missing");
}

TEST(ElasticProtocol, DecodeRejectsUnknownKind) {
  expect_rejected("kind=leave\n", "unknown kind 'leave'");
  expect_rejected("kind=\n", "unknown kind ''");
  expect_rejected("kind=Join\n", "unknown kind 'Join'");
  expect_rejected("kind=join \n" + join_text_with("kind", ""), "unknown kind 'join '");
}

TEST(ElasticProtocol, DecodeRejectsEveryMissingJoinField) {
  for (const std::string field : {"round", "rank", "size", "local_rank", "local_size", "cross_rank",
                                  "cross_size", "hosts_seq", "newcomers"}) {
    SCOPED_TRACE(field);
    expect_rejected(join_text_with(field, ""), "field '" + field + "' is missing");
  }
}

TEST(ElasticProtocol, DecodeRejectsBadNumbers) {
  expect_rejected(join_text_with("rank", "rank=x"), "field 'rank' is not a number: 'x'");
  expect_rejected(join_text_with("rank", "rank="), "field 'rank' is not a number: ''");
  expect_rejected(join_text_with("size", "size=4x"), "field 'size' is not a number: '4x'");
  expect_rejected(join_text_with("size", "size= 4"), "field 'size' is not a number");
  expect_rejected(join_text_with("size", "size=+4"), "field 'size' is not a number");
  expect_rejected(join_text_with("size", "size=4.0"), "field 'size' is not a number");
  expect_rejected(join_text_with("round", "round=1e3"), "field 'round' is not a number");
  expect_rejected(join_text_with("hosts_seq", "hosts_seq=99999999999999999999"),
                  "field 'hosts_seq' is not a number");
  expect_rejected(join_text_with("local_rank", "local_rank=-1"),
                  "field 'local_rank' out of range: -1");
  expect_rejected(join_text_with("cross_size", "cross_size=4294967297"),
                  "field 'cross_size' out of range");
}

TEST(ElasticProtocol, DecodeRejectsRankOutsideSize) {
  expect_rejected(join_text_with("rank", "rank=4"), "inconsistent layout rank 4/4");
  expect_rejected(join_text_with("rank", "rank=5"), "inconsistent layout");
  expect_rejected(join_text_with("size", "size=0"), "inconsistent layout");
  std::string zero =
      "kind=join\nround=0\nrank=0\nsize=0\nlocal_rank=0\nlocal_size=1\n"
      "cross_rank=0\ncross_size=1\nhosts_seq=0\nnewcomers=0\n";
  expect_rejected(zero, "rank 0/0");
}

TEST(ElasticProtocol, DecodeRejectsInconsistentLocalAndCrossRanks) {
  expect_rejected(join_text_with("local_rank", "local_rank=2"), "local 2/2");
  expect_rejected(join_text_with("local_size", "local_size=0"), "local 1/0");
  expect_rejected(join_text_with("cross_rank", "cross_rank=2"), "cross 2/2");
  expect_rejected(join_text_with("cross_size", "cross_size=0"), "cross 1/0");
}

TEST(ElasticProtocol, DecodeRejectsALineWithoutEquals) {
  expect_rejected("kind=join\ngarbage\n", "line without '=': 'garbage'");
  expect_rejected(encode_assignment(sample_join()) + "trailing", "line without '='");
  expect_rejected("kind removed\n", "line without '='");
}

TEST(ElasticProtocol, HostChangeEncodes) {
  EXPECT_EQ(encode_host_change(kHostsAdded), "added");
  EXPECT_EQ(encode_host_change(kHostsRemoved), "removed");
  EXPECT_EQ(encode_host_change(kHostsAdded | kHostsRemoved), "added,removed");
  EXPECT_EQ(encode_host_change(0), "none");
}

TEST(ElasticProtocol, HostChangeRoundTrips) {
  for (unsigned bits : {0u, 1u, 2u, 3u}) {
    SCOPED_TRACE(bits);
    EXPECT_EQ(decode_host_change(encode_host_change(bits)), bits);
  }
}

TEST(ElasticProtocol, HostChangeDecodeRejectsOtherText) {
  for (const char* text : {"", "removed,added", "Added", "added,", "added,removed,added", "added\n",
                           " added", "None", "1"}) {
    SCOPED_TRACE(text);
    try {
      decode_host_change(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("unknown change"), std::string::npos) << e.what();
    }
  }
}

TEST(ElasticProtocol, KeyNamesAreDistinctPerWorkerAndJoin) {
  std::set<std::string> keys;
  const std::vector<std::string> keys_in_order = {
      arrivals_key(),         hosts_seq_key(),         host_update_key(1),
      host_update_key(2),     host_update_key(11),     joins_key("1"),
      joins_key("11"),        joins_key("2"),          assignment_key("1", 1),
      assignment_key("1", 2), assignment_key("1", 11), assignment_key("11", 1),
      assignment_key("2", 1),
  };
  for (const auto& key : keys_in_order) EXPECT_TRUE(keys.insert(key).second) << "duplicate " << key;
  // Pure functions: the driver and the worker compute the same names.
  EXPECT_EQ(joins_key("7"), joins_key("7"));
  EXPECT_EQ(assignment_key("7", 3), assignment_key("7", 3));
  // A worker's keys name the worker, and the assignment its join number.
  EXPECT_NE(joins_key("worker-7").find("worker-7"), std::string::npos);
  EXPECT_NE(assignment_key("worker-7", 42).find("worker-7"), std::string::npos);
  EXPECT_TRUE(assignment_key("worker-7", 42).ends_with("42"));
  EXPECT_TRUE(host_update_key(9).ends_with("9"));
}

TEST(ElasticProtocol, KeysLiveUnderTheElasticRootAndOutsideEveryRoundScope) {
  for (const auto& key : {arrivals_key(), joins_key("3"), assignment_key("3", 1), hosts_seq_key(),
                          host_update_key(1)}) {
    EXPECT_TRUE(key.starts_with("elastic/")) << key;
    EXPECT_FALSE(key.starts_with(round_prefix(0))) << key;
  }
}

TEST(ElasticProtocol, RoundPrefix) {
  EXPECT_EQ(round_prefix(0), "kolo/round0");
  EXPECT_EQ(round_prefix(1), "kolo/round1");
  EXPECT_EQ(round_prefix(12), "kolo/round12");
  EXPECT_EQ(round_prefix(int64_t{1} << 40), "kolo/round1099511627776");
  EXPECT_NE(round_prefix(1), round_prefix(2));
}

TEST(ElasticProtocol, ReadCounterIsZeroUntilAddedThenWhatAddLeft) {
  MemoryStore store;
  EXPECT_EQ(read_counter(store, arrivals_key()), 0);
  store.add(arrivals_key(), 3);
  EXPECT_EQ(read_counter(store, arrivals_key()), 3);
}

// The driver once parsed these with std::stoll: "12abc" read as 12, and "many" escaped its
// error handling as std::invalid_argument. Every garbled value must be a kolo error naming the key.
TEST(ElasticProtocol, ReadCounterRejectsAGarbledValueNamingTheKey) {
  MemoryStore store;
  const std::string key = joins_key("7");
  for (const char* garbled : {"", "many", "12abc", " 12", "99999999999999999999"}) {
    store.set(key, to_bytes(garbled));
    try {
      const int64_t value = read_counter(store, key);
      ADD_FAILURE() << "accepted '" << garbled << "' as " << value;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kolo::rendezvous::elastic
