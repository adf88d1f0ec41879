#include "backends/mpi/mpi_point_to_point.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "backends/mpi/mpi_backend.h"

namespace kolo::backends::mpi {
namespace {

// MPI_TAG_UB is at least this everywhere.
constexpr transport::Tag kTagRange = 32768;
constexpr size_t kMaxPiece = INT_MAX;

// The MPI requests of one message (several when it is cut in pieces).
class MpiRequest final : public transport::Request {
 public:
  explicit MpiRequest(std::vector<MPI_Request> requests) : requests_(std::move(requests)) {}
  // An unfinished message is waited for: MPI cannot take back a buffer.
  ~MpiRequest() override {
    if (!requests_.empty()) {
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    }
  }
  void wait() override {
    if (requests_.empty()) return;
    const int rc =
        MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    requests_.clear();
    check_mpi(rc, "MPI_Waitall");
  }
  bool test() override {
    if (requests_.empty()) return true;
    int done = 0;
    check_mpi(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done,
                          MPI_STATUSES_IGNORE),
              "MPI_Testall");
    if (done) requests_.clear();
    return done != 0;
  }

 private:
  std::vector<MPI_Request> requests_;
};

template <typename Start>
std::unique_ptr<transport::Request> in_pieces(size_t bytes, Start&& start) {
  std::vector<MPI_Request> requests;
  size_t done = 0;
  do {
    const size_t piece = std::min(kMaxPiece, bytes - done);
    requests.emplace_back();
    start(done, static_cast<int>(piece), &requests.back());
    done += piece;
  } while (done < bytes);
  return std::make_unique<MpiRequest>(std::move(requests));
}

}  // namespace

MpiPointToPoint::MpiPointToPoint(MPI_Comm comm, int rank, int size,
                                 std::function<std::string(int)> peer_name,
                                 std::function<void(const std::string&)> abort)
    : comm_(comm),
      rank_(rank),
      size_(size),
      peer_name_(std::move(peer_name)),
      abort_(std::move(abort)) {}

std::unique_ptr<transport::Request> MpiPointToPoint::isend(int peer, transport::Tag tag,
                                                           const void* data, size_t bytes) {
  const int mpi_tag = static_cast<int>(tag % kTagRange);
  return in_pieces(bytes, [&](size_t offset, int piece, MPI_Request* request) {
    check_mpi(MPI_Isend(static_cast<const char*>(data) + offset, piece, MPI_BYTE, peer, mpi_tag,
                        comm_, request),
              "MPI_Isend");
  });
}

std::unique_ptr<transport::Request> MpiPointToPoint::irecv(int peer, transport::Tag tag, void* data,
                                                           size_t bytes) {
  const int mpi_tag = static_cast<int>(tag % kTagRange);
  return in_pieces(bytes, [&](size_t offset, int piece, MPI_Request* request) {
    check_mpi(MPI_Irecv(static_cast<char*>(data) + offset, piece, MPI_BYTE, peer, mpi_tag, comm_,
                        request),
              "MPI_Irecv");
  });
}

}  // namespace kolo::backends::mpi
