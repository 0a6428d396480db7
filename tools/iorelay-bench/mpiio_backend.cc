// The MPI-IO file backend of iorelay-bench: the MPI library's own file layer (ROMIO, or OpenMPI's
// OMPIO) opens, writes and reads, independently (MPI_File_write_at) or collectively
// (MPI_File_write_at_all: two-phase I/O through aggregators), with the user's hints.
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <vector>

#include "common/option_table.h"
#include "file_backend.h"
#include "layout.h"

namespace iorelay::bench {
namespace {

// One MPI call moves at most this much (its count is an int).
constexpr uint64_t kMaxCallBytes = 1ull << 30;

// An MPI error as a Status: the errno its class stands for, and MPI's own words.
Status MpiError(int rc, const std::string& what) {
  int error_class = MPI_ERR_OTHER;
  MPI_Error_class(rc, &error_class);
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  int err = EIO;
  if (error_class == MPI_ERR_NO_SUCH_FILE) err = ENOENT;
  if (error_class == MPI_ERR_ACCESS) err = EACCES;
  if (error_class == MPI_ERR_NO_SPACE || error_class == MPI_ERR_QUOTA) err = ENOSPC;
  if (error_class == MPI_ERR_FILE_EXISTS) err = EEXIST;
  if (error_class == MPI_ERR_INFO_KEY || error_class == MPI_ERR_INFO_VALUE) err = EINVAL;
  return Status::FromErrno(err, what + " (" + std::string(text, length) + ")");
}

class MpiioBackend final : public FileBackend {
 public:
  MpiioBackend(const Options& o, Op op, std::string path)
      : op_(op),
        path_(std::move(path)),
        collective_(o.collective),
        comm_(o.layout == Layout::kShared ? MPI_COMM_WORLD : MPI_COMM_SELF),
        hints_(o.hints),
        view_(o.view),
        request_bytes_(o.request_bytes),
        segments_(o.segments) {}
  ~MpiioBackend() override {
    if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
  }

  Status Open() override {
    MPI_Info info = MPI_INFO_NULL;
    MPI_Info_create(&info);
    for (const std::string& hint : hints_) {
      auto kv = cli::SplitKeyValue(hint);  // checked when parsed
      if (kv.ok()) MPI_Info_set(info, kv->first.c_str(), kv->second.c_str());
    }
    const int amode = op_ == Op::kWrite ? MPI_MODE_WRONLY | MPI_MODE_CREATE : MPI_MODE_RDONLY;
    int rc = MPI_File_open(comm_, path_.c_str(), amode, info, &fh_);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
      fh_ = MPI_FILE_NULL;
      return MpiError(rc, "MPI_File_open " + path_);
    }
    MPI_File_set_errhandler(fh_, MPI_ERRORS_RETURN);
    return view_ == View::kNone ? Status::Ok() : SetView();
  }

  // Every chunk is issued even after a short one, so that collective calls stay matched.
  Result<uint64_t> Transfer(void* buf, uint64_t len, uint64_t offset) override {
    uint64_t done = 0;
    for (uint64_t at = 0; at < len; at += kMaxCallBytes) {
      const int count = static_cast<int>(std::min(kMaxCallBytes, len - at));
      char* p = static_cast<char*>(buf) + at;
      const auto where = static_cast<MPI_Offset>(offset + at);
      MPI_Status status;
      int rc;
      if (op_ == Op::kWrite) {
        rc = collective_ ? MPI_File_write_at_all(fh_, where, p, count, MPI_BYTE, &status)
                         : MPI_File_write_at(fh_, where, p, count, MPI_BYTE, &status);
      } else {
        rc = collective_ ? MPI_File_read_at_all(fh_, where, p, count, MPI_BYTE, &status)
                         : MPI_File_read_at(fh_, where, p, count, MPI_BYTE, &status);
      }
      if (rc != MPI_SUCCESS) return MpiError(rc, CallName() + " " + path_);
      int moved = 0;
      MPI_Get_count(&status, MPI_BYTE, &moved);
      if (moved > 0) done += static_cast<uint64_t>(moved);
    }
    return done;
  }

  Status Sync() override {
    int rc = MPI_File_sync(fh_);
    return rc == MPI_SUCCESS ? Status::Ok() : MpiError(rc, "MPI_File_sync " + path_);
  }

  Status Close() override {
    int rc = MPI_File_close(&fh_);
    fh_ = MPI_FILE_NULL;
    return rc == MPI_SUCCESS ? Status::Ok() : MpiError(rc, "MPI_File_close " + path_);
  }

  bool collective() const override { return collective_ && comm_ != MPI_COMM_SELF; }

  std::map<std::string, std::string> ReportedHints() const override {
    std::map<std::string, std::string> out;
    MPI_Info info = MPI_INFO_NULL;
    if (fh_ == MPI_FILE_NULL || MPI_File_get_info(fh_, &info) != MPI_SUCCESS) return out;
    int keys = 0;
    MPI_Info_get_nkeys(info, &keys);
    for (int i = 0; i < keys; ++i) {
      char key[MPI_MAX_INFO_KEY + 1];
      MPI_Info_get_nthkey(info, i, key);
      int length = 0, found = 0;
      MPI_Info_get_valuelen(info, key, &length, &found);
      if (!found) continue;
      std::vector<char> value(static_cast<size_t>(length) + 1);
      MPI_Info_get(info, key, length + 1, value.data(), &found);
      if (found) out[key] = value.data();
    }
    MPI_Info_free(&info);
    return out;
  }

 private:
  // The file view of this rank (options.h View): offsets of the calls are then in view bytes.
  Status SetView() {
    int rank = 0, ranks = 1;
    MPI_Comm_rank(comm_, &rank);
    MPI_Comm_size(comm_, &ranks);
    if (request_bytes_ > INT_MAX || segments_ > INT_MAX) {
      return Status::InvalidArgument("--view: request and segments must fit an MPI int");
    }
    const int t = static_cast<int>(request_bytes_), s = static_cast<int>(segments_);
    MPI_Datatype filetype = MPI_DATATYPE_NULL;
    MPI_Offset displacement = 0;
    int rc;
    if (view_ == View::kVector) {
      rc = MPI_Type_vector(s, t, t * ranks, MPI_BYTE, &filetype);
      displacement = static_cast<MPI_Offset>(rank) * t;
    } else {
      const TileGrid g = TileOf(static_cast<uint32_t>(ranks));
      const int sizes[2] = {static_cast<int>(g.rows) * s, static_cast<int>(g.cols) * t};
      const int subsizes[2] = {s, t};
      const int starts[2] = {rank / static_cast<int>(g.cols) * s,
                             rank % static_cast<int>(g.cols) * t};
      rc = MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_BYTE, &filetype);
    }
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&filetype);
    if (rc == MPI_SUCCESS) {
      rc = MPI_File_set_view(fh_, displacement, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
    }
    if (filetype != MPI_DATATYPE_NULL) MPI_Type_free(&filetype);
    return rc == MPI_SUCCESS
               ? Status::Ok()
               : MpiError(rc, std::string("MPI_File_set_view (") + ViewName(view_) + ") " + path_);
  }

  std::string CallName() const {
    std::string name = op_ == Op::kWrite ? "MPI_File_write_at" : "MPI_File_read_at";
    return collective_ ? name + "_all" : name;
  }

  const Op op_;
  const std::string path_;
  const bool collective_;
  const MPI_Comm comm_;
  const std::vector<std::string> hints_;
  const View view_;
  const uint64_t request_bytes_;
  const uint64_t segments_;
  MPI_File fh_ = MPI_FILE_NULL;
};

}  // namespace

std::unique_ptr<FileBackend> MakeMpiioBackend(const Options& o, Op op, const std::string& path) {
  return std::make_unique<MpiioBackend>(o, op, path);
}

}  // namespace iorelay::bench
