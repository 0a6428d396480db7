// The one interface between a benchmark phase and the file it works on, so the same phase loop
// (requests, stonewall, verification) drives plain POSIX calls and MPI-IO alike.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "common/status.h"
#include "options.h"
#include "phase.h"

namespace iorelay::bench {

// One open file of one rank in one phase. Not thread-safe; one object per phase.
class FileBackend {
 public:
  virtual ~FileBackend() = default;
  // Opens the file for the phase's operation (write: write-only, created if missing).
  virtual Status Open() = 0;
  // Moves `len` bytes at file `offset` to or from `buf`: the bytes moved, short only at the end
  // of the file on a read. Short transfers are retried inside.
  virtual Result<uint64_t> Transfer(void* buf, uint64_t len, uint64_t offset) = 0;
  virtual Status Sync() = 0;
  virtual Status Close() = 0;
  // True when every rank must make the same calls (collective MPI-IO): the phase then keeps
  // issuing its requests after an error instead of leaving the others waiting.
  virtual bool collective() const = 0;
  // After Open: what MPI_File_get_info reports (MPICH's ROMIO: the hints in effect, its
  // aggregator list included; OpenMPI 4.1: only the hints as given); POSIX: none.
  virtual std::map<std::string, std::string> ReportedHints() const { return {}; }
};

// pwrite/pread on a descriptor (posix_backend.cc).
std::unique_ptr<FileBackend> MakePosixBackend(const Options& o, Op op, const std::string& path);

// MPI_File_write_at[_all]/read_at[_all] with o.hints (mpiio_backend.cc). A shared file is opened
// on MPI_COMM_WORLD (collective: every rank calls Open), file per process on MPI_COMM_SELF.
std::unique_ptr<FileBackend> MakeMpiioBackend(const Options& o, Op op, const std::string& path);

}  // namespace iorelay::bench
