#include "transport/striped_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <mutex>

#include "common/error.h"

namespace kolo::transport {

StripeLayout::StripeLayout(size_t bytes, size_t streams, size_t stripe_threshold) : bytes_(bytes) {
  // kMinPartBytes is far above kAlign * kMaxStreams, so rounding the stride
  // up to kAlign never leaves the last part empty.
  if (bytes >= stripe_threshold && streams > 1)
    parts_ = std::clamp<size_t>(bytes / kMinPartBytes, 1,
                                std::min(streams, StripedContext::kMaxStreams));
  const size_t even = (bytes + parts_ - 1) / parts_;
  stride_ = (even + kAlign - 1) / kAlign * kAlign;
}

class StripedStreams {
 public:
  explicit StripedStreams(std::vector<std::unique_ptr<Context>> contexts)
      : contexts_(std::move(contexts)) {}

  // Poisons every stream still open; a stream already failed keeps its own
  // (first) error.
  void abort_all(const std::string& reason) {
    std::lock_guard lock(mutex_);
    for (auto& context : contexts_) context->abort(reason);
  }

  // abort_all for the first error a stream reported; later ones (often the
  // same failure seen on another stream) change nothing.
  void fail_all(const std::string& reason) {
    if (!failed_.exchange(true)) abort_all(reason);
  }

  // Destroys the streams; a request failing meanwhile waits in abort_all
  // and then finds nothing left to abort.
  void close() {
    std::lock_guard lock(mutex_);
    contexts_.clear();
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Context>> contexts_;  // guarded by mutex_
  std::atomic<bool> failed_{false};
};

namespace {

// One message's parts, one per stream. Parts live inline: a request is one
// allocation on top of its parts', as many are posted per collective.
class StripedRequest final : public Request {
 public:
  explicit StripedRequest(std::shared_ptr<StripedStreams> streams) : streams_(std::move(streams)) {}

  void add(std::unique_ptr<Request> part) { parts_[count_++] = std::move(part); }

  // Waits for every part, even after one failed: a part still in flight may
  // write into the caller's buffer. The first failure aborts every stream,
  // so the rest fail at once rather than each at its own timeout.
  void wait() override {
    for (size_t i = 0; i < count_; ++i) {
      if (finished_[i]) continue;
      try {
        parts_[i]->wait();
      } catch (...) {
        fail(std::current_exception());
      }
      finished_[i] = true;
    }
    if (error_) std::rethrow_exception(error_);
  }

  // True (or throws) only once every part has finished, for the same reason.
  bool test() override {
    bool all = true;
    for (size_t i = 0; i < count_; ++i) {
      if (finished_[i]) continue;
      try {
        finished_[i] = parts_[i]->test();
      } catch (...) {
        fail(std::current_exception());
        finished_[i] = true;
      }
      all = all && finished_[i];
    }
    if (all && error_) std::rethrow_exception(error_);
    return all;
  }

 private:
  void fail(std::exception_ptr error) {
    if (error_) return;
    error_ = std::move(error);
    streams_->fail_all(message_of(error_));
  }

  std::shared_ptr<StripedStreams> streams_;
  std::array<std::unique_ptr<Request>, StripedContext::kMaxStreams> parts_;
  std::array<bool, StripedContext::kMaxStreams> finished_{};
  size_t count_ = 0;
  std::exception_ptr error_;
};

}  // namespace

StripedContext::StripedContext(std::vector<std::unique_ptr<Context>> streams,
                               size_t stripe_threshold)
    : stripe_threshold_(stripe_threshold) {
  if (streams.empty() || streams.size() > kMaxStreams)
    throw InvalidArgument(fmt::format("a striped context needs 1 to {} streams, not {}",
                                      kMaxStreams, streams.size()));
  rank_ = streams[0]->rank();
  size_ = streams[0]->size();
  for (const auto& stream : streams) {
    if (stream->rank() != rank_ || stream->size() != size_)
      throw InvalidArgument(fmt::format("stream of rank {} of {} does not match rank {} of {}",
                                        stream->rank(), stream->size(), rank_, size_));
    stream_ptrs_.push_back(stream.get());
  }
  streams_ = std::make_shared<StripedStreams>(std::move(streams));
}

StripedContext::~StripedContext() {
  streams_->close();
}

std::string StripedContext::peer_name(int rank) const {
  return stream_ptrs_[0]->peer_name(rank);
}

template <typename PostPart>
std::unique_ptr<Request> StripedContext::post(size_t bytes, const PostPart& post_part) {
  const StripeLayout layout(bytes, stream_ptrs_.size(), stripe_threshold_);
  auto request = std::make_unique<StripedRequest>(streams_);
  for (size_t i = 0; i < layout.parts(); ++i) {
    try {
      request->add(post_part(*stream_ptrs_[i], layout.offset(i), layout.size(i)));
    } catch (const std::exception& e) {
      // A bad peer fails on part 0, before anything is posted. Any later
      // failure leaves a message half posted, which the peer could never
      // match: give the context up rather than let the streams drift apart.
      if (i > 0)
        streams_->fail_all(fmt::format("posting part {} of a message failed: {}", i, e.what()));
      throw;
    }
  }
  return request;
}

std::unique_ptr<Request> StripedContext::isend(int peer, Tag tag, const void* data, size_t bytes) {
  const auto* base = static_cast<const unsigned char*>(data);
  return post(bytes, [&](Context& stream, size_t offset, size_t part) {
    return stream.isend(peer, tag, base + offset, part);
  });
}

std::unique_ptr<Request> StripedContext::irecv(int peer, Tag tag, void* data, size_t bytes) {
  auto* base = static_cast<unsigned char*>(data);
  return post(bytes, [&](Context& stream, size_t offset, size_t part) {
    return stream.irecv(peer, tag, base + offset, part);
  });
}

void StripedContext::abort(const std::string& reason) {
  streams_->abort_all(reason);
}

void StripedContext::check_health() {
  for (Context* stream : stream_ptrs_) {
    try {
      stream->check_health();
    } catch (const std::exception& e) {
      streams_->fail_all(e.what());
      throw;
    }
  }
}

}  // namespace kolo::transport
