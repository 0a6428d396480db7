// Data transfer: pread/pwrite/read/write and their vector forms, split into requests no
// larger than the daemon's max_io_bytes, sent and received straight from/into caller buffers.
#include <fcntl.h>
#include <limits.h>

#include <algorithm>

#include "client/client.h"
#include "client/direct.h"
#include "client/file_ops.h"

namespace proto = iorelay::proto;
using iorelay::Result;
using iorelay::Status;
using iorelay::client::CallReply;
using iorelay::client::CallRequest;
using iorelay::client::Client;
using iorelay::client::IoKind;
using iorelay::client::IoSpan;
using iorelay::client::Outcome;

namespace {

// The iovecs covering bytes [start, start + len) of `iov`.
void Slice(const struct iovec* iov, int count, size_t start, size_t len,
           std::vector<struct iovec>* out) {
  out->clear();
  for (int i = 0; i < count && len > 0; ++i) {
    if (start >= iov[i].iov_len) {
      start -= iov[i].iov_len;
      continue;
    }
    size_t n = std::min(iov[i].iov_len - start, len);
    out->push_back({static_cast<char*>(iov[i].iov_base) + start, n});
    len -= n;
    start = 0;
  }
}

// One forwarded request of at most max_io_bytes starting `done` bytes into the transfer.
// ok: a count or -errno from the daemon; not ok: the transport failed.
Result<ssize_t> OneRequest(iorelay_file* f, IoKind kind, const struct iovec* iov, int count,
                           size_t total, size_t done, off_t offset) {
  Client* c = f->client;
  size_t len = std::min<size_t>(total - done, f->max_io_bytes);
  std::vector<struct iovec> part;
  Slice(iov, count, done, len, &part);
  IoSpan span{part.data(), static_cast<int>(part.size())};
  uint64_t off = static_cast<uint64_t>(offset) + done;
  const auto size = static_cast<uint32_t>(len);
  std::vector<uint8_t> fields;
  CallRequest request{.generation = f->generation};
  switch (kind) {
    case IoKind::kPread:
      fields = proto::EncodeFields(proto::PreadRequest{f->handle, off, size});
      request.op = proto::Op::kPread;
      request.rx = span;
      break;
    case IoKind::kRead:
      fields = proto::EncodeFields(proto::ReadRequest{f->handle, size});
      request.op = proto::Op::kRead;
      request.rx = span;
      break;
    case IoKind::kPwrite:
      fields = proto::EncodeFields(proto::PwriteRequest{f->handle, off});
      request.op = proto::Op::kPwrite;
      request.tx = span;
      break;
    case IoKind::kWrite:
      fields = proto::EncodeFields(proto::WriteRequest{f->handle});
      request.op = proto::Op::kWrite;
      request.tx = span;
      break;
  }
  request.fields = fields;
  CallReply reply;
  Outcome out = c->Call(f->server, request, &reply);
  if (!out.answered) return out.status;
  if (!out.ok()) return static_cast<ssize_t>(out.NegErrno());
  if (kind == IoKind::kPwrite || kind == IoKind::kWrite) {
    proto::CountReply count;
    if (!proto::DecodeFields(reply.payload, &count).ok() || count.count > len) {
      return Status::IOError("malformed write reply");
    }
    return static_cast<ssize_t>(count.count);
  }
  return static_cast<ssize_t>(reply.payload_bytes);
}

ssize_t Transfer(iorelay_file* f, IoKind kind, const struct iovec* iov, int count, off_t offset) {
  if (!f) return -EBADF;
  if (count < 0 || count > IOV_MAX) return -EINVAL;
  if ((kind == IoKind::kPread || kind == IoKind::kPwrite) && offset < 0) return -EINVAL;
  size_t total = 0;
  for (int i = 0; i < count; ++i) {
    if (iov[i].iov_len > SSIZE_MAX - total) return -EINVAL;
    total += iov[i].iov_len;
  }
  if (kind == IoKind::kPwrite || kind == IoKind::kWrite) iorelay::client::NoteChange(f);
  if (int fd = f->direct_fd.load(); fd >= 0) {
    return iorelay::client::DirectIo(fd, kind, iov, count, offset);
  }
  size_t done = 0;
  do {
    Result<ssize_t> r = OneRequest(f, kind, iov, count, total, done, offset);
    if (!r.ok()) {
      if (done > 0) break;  // report the progress; the next call sees the failure
      if (iorelay::client::SwitchToDirect(f)) {
        return iorelay::client::DirectIo(f->direct_fd.load(), kind, iov, count, offset);
      }
      return -r.status().code();
    }
    if (*r < 0) {
      if (done > 0) break;
      return *r;
    }
    size_t n = static_cast<size_t>(*r);
    done += n;
    if (kind == IoKind::kRead || kind == IoKind::kWrite) f->offset.fetch_add(n);
    size_t asked = std::min<size_t>(total - (done - n), f->max_io_bytes);
    if (n < asked || n == 0) break;  // short count: EOF, full disk, ...
  } while (done < total);
  return static_cast<ssize_t>(done);
}

// read/write at the file offset. While the client holds the offset they go out as positional
// requests at it, which the daemon can merge like any pwrite, under the file's offset lock (as
// Linux serialises reads and writes of one open file description on its position).
ssize_t TransferAtOffset(iorelay_file* f, IoKind kind, const struct iovec* iov, int count) {
  if (!f) return -EBADF;
  std::lock_guard<std::mutex> l(f->offset_mu);
  if (!f->local_offset.load()) return Transfer(f, kind, iov, count, 0);
  const int64_t at = f->offset.load();
  const ssize_t n = Transfer(f, kind == IoKind::kRead ? IoKind::kPread : IoKind::kPwrite, iov,
                             count, static_cast<off_t>(at));
  if (n > 0) f->offset.store(at + n);
  return n;
}

}  // namespace

extern "C" {

ssize_t iorelay_pread(iorelay_file* f, void* buf, size_t n, off_t offset) {
  struct iovec v {
    buf, n
  };
  return Transfer(f, IoKind::kPread, &v, 1, offset);
}

ssize_t iorelay_pwrite(iorelay_file* f, const void* buf, size_t n, off_t offset) {
  struct iovec v {
    const_cast<void*>(buf), n
  };
  return Transfer(f, IoKind::kPwrite, &v, 1, offset);
}

ssize_t iorelay_preadv(iorelay_file* f, const struct iovec* iov, int iovcnt, off_t offset) {
  return Transfer(f, IoKind::kPread, iov, iovcnt, offset);
}

ssize_t iorelay_pwritev(iorelay_file* f, const struct iovec* iov, int iovcnt, off_t offset) {
  return Transfer(f, IoKind::kPwrite, iov, iovcnt, offset);
}

ssize_t iorelay_read(iorelay_file* f, void* buf, size_t n) {
  struct iovec v {
    buf, n
  };
  return TransferAtOffset(f, IoKind::kRead, &v, 1);
}

ssize_t iorelay_write(iorelay_file* f, const void* buf, size_t n) {
  struct iovec v {
    const_cast<void*>(buf), n
  };
  return TransferAtOffset(f, IoKind::kWrite, &v, 1);
}

ssize_t iorelay_readv(iorelay_file* f, const struct iovec* iov, int iovcnt) {
  return TransferAtOffset(f, IoKind::kRead, iov, iovcnt);
}

ssize_t iorelay_writev(iorelay_file* f, const struct iovec* iov, int iovcnt) {
  return TransferAtOffset(f, IoKind::kWrite, iov, iovcnt);
}

}  // extern "C"
