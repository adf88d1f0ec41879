// StripedContext: a Context over several independent child contexts
// ("streams"), in practice S full TCP meshes, each with its own sockets and
// progress thread (built by tcp::connect, see tcp/tcp_context.h). One TCP
// connection is bounded by one congestion window and by the core that
// copies its bytes; cutting large messages across S connections lets a
// fast link between hosts carry S flows at once.
//
// Which stream carries what (StripeLayout):
// - A message of at least stripe_threshold bytes is cut into up to S
//   contiguous byte ranges of at least StripeLayout::kMinPartBytes each
//   (fewer parts for mid sizes, one below twice that); part i travels on
//   stream i with the message's own tag.
// - A smaller message travels whole on stream 0, so the small-message path
//   (latency) is exactly that of a single stream.
//
// Ordering: every stream keeps the (peer, tag) order of its own messages,
// and the cut depends only on the message size, S and the threshold, so the
// receiver (which posts exactly the sent size) cuts a message exactly as the
// sender did. Stream i therefore sees the same subsequence of a pair's
// messages with one tag on both sides, and its k-th receive meets its k-th
// message: the Context guarantee (same-tag messages between a pair arrive
// in send order) holds for the whole. It is also why every rank must use
// the same S and threshold (tcp::connect checks against rank 0).
//
// Errors: a request finishes only when all its parts have (the transport
// may use the buffer until then) and throws the first part's error. That
// first error also aborts every stream with its message: a failure seen on
// one stream only (a timeout, a protocol error) then poisons the whole
// context, as the Context contract requires, and fails the other parts of
// the request at once instead of after their own timeouts. abort() aborts
// every stream; peer_name() is stream 0's.
//
// Waiting: a request waits for its parts in order. The caller then drives
// one stream's event loop while the other streams' progress threads take
// theirs (tcp_core.h), so parts are received in parallel where cores allow.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "transport/context.h"

namespace kolo::transport {

// How a message of `bytes` is cut. Part i starts at offset(i); every part
// but the last is stride() bytes (a multiple of 64, so parts start on cache
// lines), the last takes the rest and is never empty.
class StripeLayout {
 public:
  // Each part costs a frame, a wait and often a thread hand-off; on the
  // 2-core test VM parts of 64 KiB (256 KiB ring chunks over 4 streams)
  // made allreduce 2x slower over veth, while 128 KiB and up did not
  // (docs/benchmarks.md, "Several TCP streams per peer").
  static constexpr size_t kMinPartBytes = 128 * 1024;
  static constexpr size_t kAlign = 64;

  StripeLayout(size_t bytes, size_t streams, size_t stripe_threshold);

  size_t parts() const { return parts_; }
  size_t stride() const { return stride_; }
  size_t offset(size_t i) const { return i * stride_; }
  size_t size(size_t i) const { return i + 1 < parts_ ? stride_ : bytes_ - offset(i); }

 private:
  size_t bytes_;
  size_t parts_ = 1;
  size_t stride_;
};

class StripedStreams;

class StripedContext final : public Context {
 public:
  static constexpr size_t kMaxStreams = 16;

  // `streams` are 1..kMaxStreams contexts over the same ranks (same rank()
  // and size()); throws InvalidArgument otherwise.
  StripedContext(std::vector<std::unique_ptr<Context>> streams, size_t stripe_threshold);
  // Destroys the streams (each says goodbye to its peers); requests still
  // alive then fail, as with any destroyed context.
  ~StripedContext() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string peer_name(int rank) const override;
  std::unique_ptr<Request> isend(int peer, Tag tag, const void* data, size_t bytes) override;
  std::unique_ptr<Request> irecv(int peer, Tag tag, void* data, size_t bytes) override;
  void abort(const std::string& reason) override;
  // Throws the first error any stream holds; the others are then aborted
  // with it, as after a failed request.
  void check_health() override;

  size_t stream_count() const { return stream_ptrs_.size(); }
  size_t stripe_threshold() const { return stripe_threshold_; }

 private:
  template <typename PostPart>
  std::unique_ptr<Request> post(size_t bytes, const PostPart& post_part);

  // Owns the streams; shared with the requests, so that a failed request can
  // abort them all even while (or after) the context is destroyed.
  std::shared_ptr<StripedStreams> streams_;
  // The same streams for the hot path, which then takes no lock: they only
  // go away in the destructor, when no caller may post any more.
  std::vector<Context*> stream_ptrs_;
  size_t stripe_threshold_;
  int rank_;
  int size_;
};

}  // namespace kolo::transport
