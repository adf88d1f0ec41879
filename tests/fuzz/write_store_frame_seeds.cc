// Writes the seed corpus of fuzz_store_frame: one file per request kind, each
// a client hello followed by correctly signed frames, plus a reply stream.
// Run: write_store_frame_seeds tests/fuzz/corpus/fuzz_store_frame
#include <cstdio>
#include <fstream>
#include <string>

#include "rendezvous/store_wire.h"
#include "store_frame_fuzz_input.h"

namespace {

using namespace kolo::rendezvous;

class Stream {
 public:
  Stream() {
    for (size_t i = 0; i < nonce_.size(); ++i) nonce_[i] = static_cast<uint8_t>(i * 7 + 1);
    bytes_ = wire::encode_hello({wire::Role::kClient, wire::kVersion, nonce_});
  }
  Stream& request(const wire::Request& r) {
    return frame({r.opcode, kolo::StatusCode::kOk, seq_, 0, 0}, wire::encode_request(r));
  }
  Stream& reply(wire::Opcode op, kolo::StatusCode status, const Bytes& payload) {
    return frame({wire::Opcode::kReply, status, seq_, seq_, 0}, payload);
  }
  void write(const std::string& path) const {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes_.data()),
              static_cast<std::streamsize>(bytes_.size()));
  }

 private:
  Stream& frame(wire::FrameHeader header, const Bytes& payload) {
    Bytes f = wire::encode_frame(header, payload, fuzz::frame_key(nonce_));
    bytes_.insert(bytes_.end(), f.begin(), f.end());
    ++seq_;
    return *this;
  }
  Nonce nonce_{};
  Bytes bytes_;
  uint64_t seq_ = 0;
};

wire::Request make(wire::Opcode op, std::string key = "rank/0") {
  wire::Request r;
  r.opcode = op;
  r.key = std::move(key);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  wire::Request set = make(wire::Opcode::kSet);
  set.value = Bytes{'1', '0', '.', '0', 0, '5', ':', '9'};
  wire::Request wait = make(wire::Opcode::kWait, "");
  wait.keys = {"rank/0", "rank/1", "rank/2"};
  wait.timeout_ms = 30'000;
  wire::Request add = make(wire::Opcode::kAdd, "arrived");
  add.delta = 1;
  wire::Request cas = make(wire::Opcode::kCompareSet, "leader");
  cas.expected = Bytes{'a'};
  cas.value = Bytes{'b'};
  wire::Request cas_absent = make(wire::Opcode::kCompareSet, "leader");
  cas_absent.value = Bytes{};

  Stream().request(make(wire::Opcode::kPing, "")).write(dir + "/ping");
  Stream().request(set).request(make(wire::Opcode::kGet)).write(dir + "/set_get");
  Stream().request(wait).write(dir + "/wait");
  Stream().request(add).request(add).write(dir + "/add");
  Stream().request(cas).request(cas_absent).write(dir + "/compare_set");
  Stream().request(make(wire::Opcode::kRemove)).write(dir + "/remove");
  Stream()
      .reply(wire::Opcode::kGet, kolo::StatusCode::kOk,
             wire::encode_reply(wire::Opcode::kGet, {Bytes{1, 0, 2}, false, 0}))
      .reply(wire::Opcode::kAdd, kolo::StatusCode::kOk,
             wire::encode_reply(wire::Opcode::kAdd, {std::nullopt, false, 3}))
      .reply(wire::Opcode::kWait, kolo::StatusCode::kTimeout,
             to_bytes("timed out waiting for 'rank/2'"))
      .write(dir + "/replies");
  return 0;
}
