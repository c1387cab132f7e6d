// rrt.hpp: a thin, header-only C++17 layer over the C API in rrt.h.
//
// What it adds, and nothing more:
//  - errors become exceptions: rrt::Error carries the RRT_ERR_* code and rrt_strerror's text;
//  - RAII: Environment (rrt_init / rrt_finalize), Comm (frees the communicators it created by dup
//    or split), Request (completes its operation before it goes away);
//  - typed buffers: any contiguous buffer (std::vector, std::array, C array, rrt::Span) is sent
//    as count elements of the rrt datatype its element type maps to (rrt::datatype<T>()), with
//    rrt::float16 and rrt::bfloat16 as opaque 2-byte types for half-precision data.
//
// Everything else (v-collectives, probe, user ops, ...) is reached through the C API with
// Comm::native() and Request::native(). Threading is that of rrt.h: one call at a time.
#ifndef RRT_RRT_HPP
#define RRT_RRT_HPP

#include <rrt/rrt.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rrt {

// ---- errors -------------------------------------------------------------------------------------

class Error : public std::runtime_error {
 public:
  Error(int code, const char* call)
      : std::runtime_error(std::string(call) + ": " + rrt_strerror(code)), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

inline void check(int rc, const char* call) {
  if (rc != RRT_SUCCESS) throw Error(rc, call);
}

// ---- datatypes ----------------------------------------------------------------------------------

// IEEE binary16 and bfloat16 values, stored as their bits: rrt reduces them in float precision.
struct float16 {
  std::uint16_t bits;
};
struct bfloat16 {
  std::uint16_t bits;
};
static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2, "half types are two bytes");

namespace detail {
template <typename>
inline constexpr bool kUnmapped = false;

template <std::size_t Size, bool Signed>
constexpr rrt_datatype_t integerType() {
  static_assert(Size == 1 || Size == 2 || Size == 4 || Size == 8, "no rrt integer of this size");
  if constexpr (Size == 1) return Signed ? RRT_INT8 : RRT_UINT8;
  if constexpr (Size == 2) return Signed ? RRT_INT16 : RRT_UINT16;
  if constexpr (Size == 4) return Signed ? RRT_INT32 : RRT_UINT32;
  return Signed ? RRT_INT64 : RRT_UINT64;
}
}  // namespace detail

// The rrt datatype of T; a type with none fails to compile.
template <typename T>
constexpr rrt_datatype_t datatype() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, std::byte>)
    return RRT_BYTE;
  else if constexpr (std::is_same_v<U, char>)
    return RRT_CHAR;
  else if constexpr (std::is_same_v<U, bool>)
    return RRT_BOOL;
  else if constexpr (std::is_integral_v<U>)
    return detail::integerType<sizeof(U), std::is_signed_v<U>>();
  else if constexpr (std::is_same_v<U, float>)
    return RRT_FLOAT;
  else if constexpr (std::is_same_v<U, double>)
    return RRT_DOUBLE;
  else if constexpr (std::is_same_v<U, long double>)
    return RRT_LONG_DOUBLE;
  else if constexpr (std::is_same_v<U, float16>)
    return RRT_FLOAT16;
  else if constexpr (std::is_same_v<U, bfloat16>)
    return RRT_BFLOAT16;
  else if constexpr (std::is_same_v<U, std::complex<float>>)
    return RRT_C_FLOAT_COMPLEX;
  else if constexpr (std::is_same_v<U, std::complex<double>>)
    return RRT_C_DOUBLE_COMPLEX;
  else
    static_assert(detail::kUnmapped<U>, "no rrt datatype for this element type");
}

enum class Op : rrt_op_t {
  Sum = RRT_SUM,
  Prod = RRT_PROD,
  Min = RRT_MIN,
  Max = RRT_MAX,
  LogicalAnd = RRT_LAND,
  LogicalOr = RRT_LOR,
  LogicalXor = RRT_LXOR,
  BitAnd = RRT_BAND,
  BitOr = RRT_BOR,
  BitXor = RRT_BXOR,
};

// ---- buffers ------------------------------------------------------------------------------------

// A view of size contiguous elements; it owns nothing.
template <typename T>
class Span {
 public:
  constexpr Span(T* data, std::size_t size) noexcept : data_(data), size_(size) {}
  constexpr T* data() const noexcept { return data_; }
  constexpr std::size_t size() const noexcept { return size_; }

 private:
  T* data_;
  std::size_t size_;
};

// A Span over any contiguous buffer: a container with data() and size(), a C array, or a Span.
template <typename Buffer>
constexpr auto view(Buffer& buffer) noexcept {
  using Element = std::remove_pointer_t<decltype(std::data(buffer))>;
  return Span<Element>(std::data(buffer), std::size(buffer));
}

// ---- status and requests ------------------------------------------------------------------------

class Status {
 public:
  int source() const noexcept { return status_.source; }
  int tag() const noexcept { return status_.tag; }
  int error() const noexcept { return status_.error; }
  bool cancelled() const noexcept { return status_.cancelled != 0; }
  std::size_t bytes() const noexcept { return status_.bytes; }
  // Elements of T received; RRT_COUNT_UNDEFINED when bytes is not a multiple of their size.
  template <typename T>
  std::size_t count() const {
    std::size_t n = 0;
    check(rrt_get_count(&status_, datatype<T>(), &n), "rrt_get_count");
    return n;
  }
  rrt_status_t* native() noexcept { return &status_; }

 private:
  rrt_status_t status_{};
};

// A non-blocking operation. Its destructor waits for it (the buffer must outlive the request);
// a destructor cannot report an error, so call wait() to see one. While an exception unwinds the
// stack, the destructor lets the operation go (rrt_request_free) instead of waiting on a peer that
// may never answer.
class Request {
 public:
  Request() = default;
  explicit Request(rrt_request_t request) noexcept : request_(request) {}
  Request(Request&& other) noexcept : request_(std::exchange(other.request_, RRT_REQUEST_NULL)) {}
  Request& operator=(Request&& other) noexcept {
    if (this != &other) {
      release();
      request_ = std::exchange(other.request_, RRT_REQUEST_NULL);
    }
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() { release(); }

  bool active() const noexcept { return request_ != RRT_REQUEST_NULL; }

  Status wait() {
    Status status;
    check(rrt_wait(&request_, status.native()), "rrt_wait");
    return status;
  }
  // The status once the operation has completed, nothing before.
  std::optional<Status> test() {
    Status status;
    int done = 0;
    check(rrt_test(&request_, &done, status.native()), "rrt_test");
    return done ? std::optional<Status>(status) : std::nullopt;
  }
  // Receives and sends not yet matched: the request then completes with Status::cancelled().
  void cancel() { check(rrt_cancel(&request_), "rrt_cancel"); }

  rrt_request_t* native() noexcept { return &request_; }

 private:
  void release() noexcept {
    if (request_ == RRT_REQUEST_NULL) return;
    if (std::uncaught_exceptions() > 0)
      rrt_request_free(&request_);
    else
      rrt_wait(&request_, RRT_STATUS_IGNORE);
  }

  rrt_request_t request_ = RRT_REQUEST_NULL;
};

// Waits for all; throws the first error after every request has been handed to rrt_waitall.
inline void waitAll(std::vector<Request>& requests) {
  std::vector<rrt_request_t> handles;
  handles.reserve(requests.size());
  for (Request& r : requests) handles.push_back(*r.native());
  int rc = rrt_waitall(handles.size(), handles.data(), RRT_STATUSES_IGNORE);
  for (std::size_t i = 0; i < requests.size(); ++i) *requests[i].native() = handles[i];
  check(rc, "rrt_waitall");
}

// ---- communicators ------------------------------------------------------------------------------

class Comm {
 public:
  static Comm world() noexcept { return Comm(RRT_COMM_WORLD, false); }
  static Comm self() noexcept { return Comm(RRT_COMM_SELF, false); }

  Comm(Comm&& other) noexcept
      : comm_(std::exchange(other.comm_, RRT_COMM_NULL)), owned_(other.owned_) {}
  Comm& operator=(Comm&& other) noexcept {
    if (this != &other) {
      release();
      comm_ = std::exchange(other.comm_, RRT_COMM_NULL);
      owned_ = other.owned_;
    }
    return *this;
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm() { release(); }

  // A split with color RRT_UNDEFINED gives a null communicator.
  bool null() const noexcept { return comm_ == RRT_COMM_NULL; }
  rrt_comm_t native() const noexcept { return comm_; }

  int rank() const {
    int r = 0;
    check(rrt_comm_rank(comm_, &r), "rrt_comm_rank");
    return r;
  }
  int size() const {
    int n = 0;
    check(rrt_comm_size(comm_, &n), "rrt_comm_size");
    return n;
  }
  Comm dup() const {
    rrt_comm_t c = RRT_COMM_NULL;
    check(rrt_comm_dup(comm_, &c), "rrt_comm_dup");
    return Comm(c, true);
  }
  Comm split(int color, int key = 0) const {
    rrt_comm_t c = RRT_COMM_NULL;
    check(rrt_comm_split(comm_, color, key, &c), "rrt_comm_split");
    return Comm(c, true);
  }

  // Point-to-point. Buffers are anything view() accepts; counts are their sizes.
  template <typename Buffer>
  void send(const Buffer& buffer, int dest, int tag) const {
    auto s = view(buffer);
    check(rrt_send(s.data(), s.size(), typeOf(s), dest, tag, comm_), "rrt_send");
  }
  template <typename Buffer>
  void ssend(const Buffer& buffer, int dest, int tag) const {
    auto s = view(buffer);
    check(rrt_ssend(s.data(), s.size(), typeOf(s), dest, tag, comm_), "rrt_ssend");
  }
  template <typename Buffer>
  Status recv(Buffer&& buffer, int source = RRT_ANY_SOURCE, int tag = RRT_ANY_TAG) const {
    auto s = view(buffer);
    Status status;
    check(rrt_recv(s.data(), s.size(), typeOf(s), source, tag, comm_, status.native()), "rrt_recv");
    return status;
  }
  template <typename Buffer>
  [[nodiscard]] Request isend(const Buffer& buffer, int dest, int tag) const {
    auto s = view(buffer);
    Request request;
    check(rrt_isend(s.data(), s.size(), typeOf(s), dest, tag, comm_, request.native()),
          "rrt_isend");
    return request;
  }
  template <typename Buffer>
  [[nodiscard]] Request irecv(Buffer&& buffer, int source = RRT_ANY_SOURCE,
                              int tag = RRT_ANY_TAG) const {
    auto s = view(buffer);
    Request request;
    check(rrt_irecv(s.data(), s.size(), typeOf(s), source, tag, comm_, request.native()),
          "rrt_irecv");
    return request;
  }

  // Collectives. Send and receive buffers of the reductions have the same element count.
  void barrier() const { check(rrt_barrier(comm_), "rrt_barrier"); }
  template <typename Buffer>
  void bcast(Buffer&& buffer, int root) const {
    auto s = view(buffer);
    check(rrt_bcast(s.data(), s.size(), typeOf(s), root, comm_), "rrt_bcast");
  }
  template <typename Send, typename Recv>
  void reduce(const Send& send, Recv&& recv, Op op, int root) const {
    auto s = view(send);
    auto r = view(recv);
    // Only the root's receive buffer counts; elsewhere it may be empty.
    if (rank() == root) sameCount(s.size(), r.size(), "rrt_reduce");
    check(
        rrt_reduce(s.data(), r.data(), s.size(), typeOf(s), static_cast<rrt_op_t>(op), root, comm_),
        "rrt_reduce");
  }
  template <typename Send, typename Recv>
  void allreduce(const Send& send, Recv&& recv, Op op) const {
    auto s = view(send);
    auto r = view(recv);
    sameCount(s.size(), r.size(), "rrt_allreduce");
    check(rrt_allreduce(s.data(), r.data(), s.size(), typeOf(s), static_cast<rrt_op_t>(op), comm_),
          "rrt_allreduce");
  }
  // In place: buffer holds this rank's contribution, then the result.
  template <typename Buffer>
  void allreduce(Buffer&& buffer, Op op) const {
    auto b = view(buffer);
    check(rrt_allreduce(RRT_IN_PLACE, b.data(), b.size(), typeOf(b), static_cast<rrt_op_t>(op),
                        comm_),
          "rrt_allreduce");
  }
  // recv holds size() blocks of send's length.
  template <typename Send, typename Recv>
  void allgather(const Send& send, Recv&& recv) const {
    auto s = view(send);
    auto r = view(recv);
    sameCount(s.size() * static_cast<std::size_t>(size()), r.size(), "rrt_allgather");
    check(rrt_allgather(s.data(), s.size(), typeOf(s), r.data(), s.size(), typeOf(r), comm_),
          "rrt_allgather");
  }
  // send and recv hold size() blocks each; block i of send goes to rank i.
  template <typename Send, typename Recv>
  void alltoall(const Send& send, Recv&& recv) const {
    auto s = view(send);
    auto r = view(recv);
    std::size_t n = static_cast<std::size_t>(size());
    if (s.size() % n != 0) throw Error(RRT_ERR_COUNT, "rrt_alltoall");
    sameCount(s.size(), r.size(), "rrt_alltoall");
    check(rrt_alltoall(s.data(), s.size() / n, typeOf(s), r.data(), r.size() / n, typeOf(r), comm_),
          "rrt_alltoall");
  }

 private:
  Comm(rrt_comm_t comm, bool owned) noexcept : comm_(comm), owned_(owned) {}

  template <typename T>
  static constexpr rrt_datatype_t typeOf(Span<T>) noexcept {
    return datatype<T>();
  }
  static void sameCount(std::size_t send, std::size_t recv, const char* call) {
    if (send != recv) throw Error(RRT_ERR_COUNT, call);
  }
  void release() noexcept {
    if (owned_ && comm_ != RRT_COMM_NULL) rrt_comm_free(&comm_);
  }

  rrt_comm_t comm_;
  bool owned_;
};

// ---- environment --------------------------------------------------------------------------------

// rrt_init in the constructor, rrt_finalize in the destructor. If an exception escapes the
// Environment's scope, the other ranks cannot know: the destructor then aborts the whole job
// (rrt_abort) rather than leave them waiting in a collective.
class Environment {
 public:
  Environment(int& argc, char**& argv) { check(rrt_init(&argc, &argv), "rrt_init"); }
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
  ~Environment() {
    if (std::uncaught_exceptions() > uncaught_)
      rrt_abort(RRT_COMM_WORLD, 1);
    else
      rrt_finalize();
  }

  Comm world() const noexcept { return Comm::world(); }
  static double wtime() noexcept { return rrt_wtime(); }
  static std::string processorName() {
    char name[256];
    check(rrt_get_processor_name(name, sizeof name), "rrt_get_processor_name");
    return name;
  }

 private:
  int uncaught_ = std::uncaught_exceptions();
};

}  // namespace rrt

#endif  // RRT_RRT_HPP
