// Clang thread-safety annotations, and a mutex, lock and condition variable
// that carry them. libstdc++'s std::mutex has no capability attributes, so
// GUARDED_BY(a std::mutex) would check nothing; Mutex is std::mutex with
// them. Everything is inline and adds no state, so it costs what std::mutex,
// std::lock_guard and std::condition_variable cost.
//
// Clang checks these with -Wthread-safety (every clang build of Kolo turns it
// on as an error, see cmake/KoloWarnings.cmake); other compilers see nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define KOLO_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define KOLO_THREAD_ANNOTATION(x)
#endif

#define KOLO_CAPABILITY(name) KOLO_THREAD_ANNOTATION(capability(name))
#define KOLO_SCOPED_CAPABILITY KOLO_THREAD_ANNOTATION(scoped_lockable)
#define KOLO_GUARDED_BY(x) KOLO_THREAD_ANNOTATION(guarded_by(x))
#define KOLO_PT_GUARDED_BY(x) KOLO_THREAD_ANNOTATION(pt_guarded_by(x))
#define KOLO_ACQUIRED_BEFORE(...) KOLO_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define KOLO_ACQUIRED_AFTER(...) KOLO_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define KOLO_REQUIRES(...) KOLO_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define KOLO_ACQUIRE(...) KOLO_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define KOLO_RELEASE(...) KOLO_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define KOLO_TRY_ACQUIRE(...) KOLO_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define KOLO_EXCLUDES(...) KOLO_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define KOLO_ASSERT_CAPABILITY(x) KOLO_THREAD_ANNOTATION(assert_capability(x))
#define KOLO_RETURN_CAPABILITY(x) KOLO_THREAD_ANNOTATION(lock_returned(x))
// For the rare function whose locking the analysis cannot follow; say why
// next to each use.
#define KOLO_NO_THREAD_SAFETY_ANALYSIS KOLO_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace kolo {

class KOLO_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() KOLO_ACQUIRE() { mutex_.lock(); }
  void unlock() KOLO_RELEASE() { mutex_.unlock(); }
  bool try_lock() KOLO_TRY_ACQUIRE(true) { return mutex_.try_lock(); }

 private:
  friend class CondVar;
  std::mutex mutex_;
};

// Holds a Mutex for its scope, like std::unique_lock: it may be unlocked and
// locked again inside the scope, and releases the mutex at the end only if
// it holds it then.
class KOLO_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) KOLO_ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
  // Takes over a mutex the caller already holds (after a successful
  // try_lock(), whose result the analysis follows where a lock's own
  // try-to-lock constructor would be opaque to it).
  MutexLock(Mutex& mutex, std::adopt_lock_t) KOLO_REQUIRES(mutex) : mutex_(mutex) {}
  ~MutexLock() KOLO_RELEASE() {
    if (held_) mutex_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void lock() KOLO_ACQUIRE() {
    mutex_.lock();
    held_ = true;
  }
  void unlock() KOLO_RELEASE() {
    held_ = false;
    mutex_.unlock();
  }

 private:
  Mutex& mutex_;
  bool held_ = true;
};

// std::condition_variable over a Mutex. The caller holds the mutex (which
// the analysis checks) and writes the predicate loop itself, in the scope
// where the guarded fields are known to be locked; a predicate lambda would
// be analysed as a separate function that holds nothing.
class CondVar {
 public:
  void notify_one() noexcept { cv_.notify_one(); }
  void notify_all() noexcept { cv_.notify_all(); }

  void wait(Mutex& mutex) KOLO_REQUIRES(mutex) {
    std::unique_lock native(mutex.mutex_, std::adopt_lock);
    cv_.wait(native);
    native.release();  // still locked: the caller's lock owns it again
  }
  // False when `deadline` passed (the mutex is held again either way).
  template <typename ClockType, typename Duration>
  bool wait_until(Mutex& mutex, const std::chrono::time_point<ClockType, Duration>& deadline)
      KOLO_REQUIRES(mutex) {
    std::unique_lock native(mutex.mutex_, std::adopt_lock);
    const bool woken = cv_.wait_until(native, deadline) == std::cv_status::no_timeout;
    native.release();
    return woken;
  }

 private:
  std::condition_variable cv_;
};

// A value guarded by a mutex that lives in another object (a TcpCore's, for
// its operations and peer links), which GUARDED_BY cannot name from here.
// Every access names the mutex, and the analysis checks that it is held.
template <typename T>
class LockedBy {
 public:
  T& under(const Mutex& mutex) KOLO_REQUIRES(mutex) { return value_; }
  const T& under(const Mutex& mutex) const KOLO_REQUIRES(mutex) { return value_; }

 private:
  T value_{};
};

}  // namespace kolo
