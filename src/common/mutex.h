// Lock discipline the compiler checks: clang's thread-safety annotations (GUARDED_BY, REQUIRES,
// EXCLUDES...) and a mutex, scoped lock and condition variable that carry them, for the daemon's
// and the client's shared state. `make tsa-check` compiles those libraries with clang
// -Wthread-safety -Werror, so touching a GUARDED_BY member without its lock fails CI; under g++
// the annotations are empty (docs/architecture.md, "Lock annotations").
//
// Why a wrapper over std::mutex and not absl::Mutex: every call below is an inline forward to
// std::mutex / std::condition_variable, so the generated code, the size and the layout are those
// of before (request rate and daemon CPU per request: bench/results/thread-safety-ab.md). That
// matters beyond speed: the interposer (libiorelay_preload.so) takes these locks inside any
// program, before its constructors run (constant-initialised globals: constexpr Mutex()), and
// the client re-creates its mutexes in a fork child by placement new (client/fork.cc); absl is
// linked only into the daemon's scheduler, and its Mutex has its own waiter queue, per-thread
// state and deadlock detection that would come into every preloaded program.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define IORELAY_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define IORELAY_THREAD_ANNOTATION(x)
#endif

// On a class: it is a lock. On a RAII class: it holds a lock for its scope.
#define CAPABILITY(x) IORELAY_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY IORELAY_THREAD_ANNOTATION(scoped_lockable)
// On a member or global: reading or writing it needs the lock (PT_: the pointee, not the pointer).
#define GUARDED_BY(x) IORELAY_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) IORELAY_THREAD_ANNOTATION(pt_guarded_by(x))
// On a mutex: the order in which locks are taken (checked with -Wthread-safety-beta only).
#define ACQUIRED_BEFORE(...) IORELAY_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) IORELAY_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
// On a function: the caller holds the lock / must not hold it.
#define REQUIRES(...) IORELAY_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) IORELAY_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// On a function: it takes / gives back the lock (TRY_: when it returns the value given).
#define ACQUIRE(...) IORELAY_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) IORELAY_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) IORELAY_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) IORELAY_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) IORELAY_THREAD_ANNOTATION(lock_returned(x))
// The analysis skips this function (say why beside it).
#define NO_THREAD_SAFETY_ANALYSIS IORELAY_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace iorelay {

class CondVar;

// std::mutex, annotated. Same size and layout; constant-initialised at namespace scope.
class CAPABILITY("mutex") Mutex {
 public:
  constexpr Mutex() noexcept = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the lock is held where it cannot see it (a lock taken in a fork handler).
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// std::unique_lock<std::mutex> for a Mutex: locks in the constructor, unlocks in the destructor
// unless Unlock() was the last call. Where it is never unlocked early the flag folds away, as in
// std::lock_guard.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_.Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    mu_.Unlock();
    held_ = false;
  }
  void Lock() ACQUIRE() {
    mu_.Lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

// std::condition_variable waited on with a held Mutex. A predicate that reads guarded members is
// a lambda annotated REQUIRES(mu): `cv.Wait(mu_, [this]() REQUIRES(mu_) { return done_; })`.
class CondVar {
 public:
  void NotifyOne() noexcept { cv_.notify_one(); }
  void NotifyAll() noexcept { cv_.notify_all(); }

  void Wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  template <typename Predicate>
  void Wait(Mutex& mu, Predicate ready) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock, std::move(ready));
    lock.release();
  }
  // False if `timeout` passed first (the predicate's last value, for the predicate forms).
  template <typename Rep, typename Period>
  bool WaitFor(Mutex& mu, const std::chrono::duration<Rep, Period>& timeout) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool woken = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  template <typename Rep, typename Period, typename Predicate>
  bool WaitFor(Mutex& mu, const std::chrono::duration<Rep, Period>& timeout, Predicate ready)
      REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool r = cv_.wait_for(lock, timeout, std::move(ready));
    lock.release();
    return r;
  }
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex& mu, const std::chrono::time_point<Clock, Duration>& deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool woken = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  template <typename Clock, typename Duration, typename Predicate>
  bool WaitUntil(Mutex& mu, const std::chrono::time_point<Clock, Duration>& deadline,
                 Predicate ready) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool r = cv_.wait_until(lock, deadline, std::move(ready));
    lock.release();
    return r;
  }

 private:
  std::condition_variable cv_;
};

}  // namespace iorelay
