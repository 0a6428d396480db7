// An emulated disk: POSIX I/O, with every data call delayed by a device model's service time
// (seek when the call does not continue the previous one, then size over bandwidth), one
// call at a time like a disk head. Lets the schedulers be compared on an "HDD" anywhere.
#pragma once

#include <memory>

#include "backend/forwarding_backend.h"
#include "common/mutex.h"
#include "device/device_model.h"

namespace iorelay::backend {

// Thread-safe: data calls (Pread, Pwrite, Preadv, Pwritev) are serialised by one mutex held
// for the modelled time and the real call; other calls are forwarded undelayed.
class EmulatedBackend final : public ForwardingBackend {
 public:
  EmulatedBackend(std::unique_ptr<Backend> inner, device::DeviceProfile profile)
      : ForwardingBackend(std::move(inner)), model_(std::move(profile)) {}
  const char* name() const override { return "emulated"; }
  // (Without the lock: the model's profile is set at construction and never changes.)
  const device::DeviceProfile& profile() const NO_THREAD_SAFETY_ANALYSIS {
    return model_.profile();
  }

  Result<size_t> Pread(int fd, void* buf, size_t n, uint64_t offset) override;
  Result<size_t> Pwrite(int fd, const void* buf, size_t n, uint64_t offset) override;
  Result<size_t> Preadv(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override;
  Result<size_t> Pwritev(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override;
  Result<size_t> WriteFromPipe(int fd, int pipe_fd, size_t n, uint64_t offset) override;
  Result<size_t> ReadToPipe(int fd, int pipe_fd, size_t n, uint64_t offset) override;

 private:
  // With mu_ held: sleeps for the model's time of `length` bytes at `offset` of fd's file.
  void Serve(int fd, uint64_t offset, uint64_t length, bool write) REQUIRES(mu_);
  Mutex mu_;
  device::DeviceModel model_ GUARDED_BY(mu_);
};

}  // namespace iorelay::backend
