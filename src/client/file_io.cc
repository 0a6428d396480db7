// Data transfer: pread/pwrite/read/write and their vector forms, split into requests no
// larger than the daemon's max_io_bytes, sent and received straight from/into caller buffers.
#include <fcntl.h>
#include <limits.h>

#include <algorithm>

#include "client/client.h"
#include "client/direct.h"
#include "client/file_buffers.h"
#include "client/file_ops.h"

namespace proto = iorelay::proto;
using iorelay::Result;
using iorelay::Status;
using iorelay::client::CallReply;
using iorelay::client::CallRequest;
using iorelay::client::Client;
using iorelay::client::IoKind;
using iorelay::client::IoSpan;
using iorelay::client::MayHoldOffset;
using iorelay::client::NoteDaemonOffset;
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

// A transfer larger than this, at an explicit offset, goes out in pieces of this size,
// pipelined on one connection: the daemon writes (or reads) piece k while piece k+1 crosses
// the socket. O_DIRECT alignment holds: a piece starts at a multiple of it.
constexpr size_t kPieceBytes = 1u << 20;
// Pieces outstanding at once: enough to overlap the transfer with the backend call, few enough
// that one client's call does not fill the daemon's queue.
constexpr size_t kPipelineWindow = 4;

// One request of a transfer: bytes [done, done + len) of `iov`, at offset + done.
struct Piece {
  std::vector<struct iovec> iov;
  std::vector<uint8_t> fields;
  CallRequest request;
  size_t len = 0;
};

Piece MakePiece(iorelay_file* f, IoKind kind, const struct iovec* iov, int count, size_t done,
                size_t len, off_t offset) {
  Piece p;
  p.len = len;
  Slice(iov, count, done, len, &p.iov);
  IoSpan span{p.iov.data(), static_cast<int>(p.iov.size())};
  const uint64_t off = static_cast<uint64_t>(offset) + done;
  const auto size = static_cast<uint32_t>(len);
  p.request.generation = f->generation;
  switch (kind) {
    case IoKind::kPread:
      p.fields = proto::EncodeFields(proto::PreadRequest{f->handle, off, size});
      p.request.op = proto::Op::kPread;
      p.request.rx = span;
      break;
    case IoKind::kRead:
      p.fields = proto::EncodeFields(proto::ReadRequest{f->handle, size});
      p.request.op = proto::Op::kRead;
      p.request.rx = span;
      break;
    case IoKind::kPwrite:
      p.fields = proto::EncodeFields(proto::PwriteRequest{f->handle, off});
      p.request.op = proto::Op::kPwrite;
      p.request.tx = span;
      break;
    case IoKind::kWrite:
      p.fields = proto::EncodeFields(proto::WriteRequest{f->handle});
      p.request.op = proto::Op::kWrite;
      p.request.tx = span;
      break;
  }
  p.request.fields = p.fields;
  return p;
}

// A piece's result. ok: a count or -errno from the daemon; not ok: the transport failed.
Result<ssize_t> PieceResult(IoKind kind, size_t len, const Outcome& out, const CallReply& reply) {
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

// One forwarded request of at most max_io_bytes starting `done` bytes into the transfer.
Result<ssize_t> OneRequest(iorelay_file* f, IoKind kind, const struct iovec* iov, int count,
                           size_t total, size_t done, off_t offset) {
  Piece p =
      MakePiece(f, kind, iov, count, done, std::min<size_t>(total - done, f->max_io_bytes), offset);
  CallReply reply;
  Outcome out = f->client->Call(f->server, p.request, &reply);
  return PieceResult(kind, p.len, out, reply);
}

// A positional transfer in pieces, pipelined. Returns what the contiguous prefix of pieces
// that completed in full, plus the first short one, transferred; or the first piece's -errno
// or transport failure. Pieces after the first failed or short one may have been carried out
// too (as bytes after a short local write on an I/O error may have reached the disk).
Result<ssize_t> Pipelined(iorelay_file* f, IoKind kind, const struct iovec* iov, int count,
                          size_t total, off_t offset) {
  const size_t piece = std::min<size_t>(kPieceBytes, f->max_io_bytes);
  std::vector<Piece> pieces;
  for (size_t done = 0; done < total; done += piece) {
    pieces.push_back(MakePiece(f, kind, iov, count, done, std::min(piece, total - done), offset));
  }
  std::vector<CallRequest> requests;
  for (const Piece& p : pieces) requests.push_back(p.request);
  std::vector<CallReply> replies(pieces.size());
  std::vector<Outcome> outcomes(pieces.size());
  f->client->CallPipelined(f->server, requests, kPipelineWindow, replies, outcomes);
  size_t done = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    Result<ssize_t> r = PieceResult(kind, pieces[i].len, outcomes[i], replies[i]);
    if (!r.ok() || *r < 0) {
      if (done > 0) break;
      return r;
    }
    done += static_cast<size_t>(*r);
    if (static_cast<size_t>(*r) < pieces[i].len) break;  // short: EOF, full disk, ...
  }
  return static_cast<ssize_t>(done);
}

size_t TotalBytes(const struct iovec* iov, int count) {
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  return total;
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
  // (A file served directly keeps its buffers' order: what they hold goes out first, there.)
  if (f->buffers) {
    // Placed again here, not in SendTransfer, which runs under the buffers' lock (the move
    // flushes them first).
    if (f->client->has_map()) iorelay::client::FollowMap(f);
    return iorelay::client::BufferedTransfer(f, kind, iov, count, total, offset);
  }
  return iorelay::client::SendTransfer(f, kind, iov, count, offset);
}

}  // namespace

namespace iorelay::client {

ssize_t SendTransfer(iorelay_file* f, IoKind kind, const struct iovec* iov, int count,
                     off_t offset) {
  if (int fd = f->direct_fd.load(); fd >= 0) return DirectIo(fd, kind, iov, count, offset);
  if (f->client->has_map() && !f->buffers) FollowMap(f);  // with buffers: in Transfer
  const size_t total = TotalBytes(iov, count);
  const bool positional = kind == IoKind::kPread || kind == IoKind::kPwrite;
  const int server = f->server.load();
  // The daemon did not answer and nothing was transferred: the whole call is repeated on a
  // surviving daemon (positional requests only: repeating them is harmless) or directly, else
  // the transport's error is the answer.
  auto recover = [&](const Status& failure) -> ssize_t {
    if (positional && iorelay::client::FailOver(f, server)) {
      return SendTransfer(f, kind, iov, count, offset);
    }
    if (iorelay::client::SwitchToDirect(f)) {
      return iorelay::client::DirectIo(f->direct_fd.load(), kind, iov, count, offset);
    }
    return -failure.code();
  };
  if (positional && total >= 2 * kPieceBytes) {
    Result<ssize_t> r = Pipelined(f, kind, iov, count, total, offset);
    return r.ok() ? *r : recover(r.status());
  }
  size_t done = 0;
  do {
    Result<ssize_t> r = OneRequest(f, kind, iov, count, total, done, offset);
    if (!r.ok()) {
      if (done > 0) break;  // report the progress; the next call sees the failure
      return recover(r.status());
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

}  // namespace iorelay::client

namespace {

// A description shared after fork stops being shared when the other process closes it or exits;
// one read or write in this many at the daemon's offset asks (one round trip), so that the
// common case pays nothing and a shared one pays 1/kReclaimEvery of a round trip per call.
constexpr uint64_t kReclaimEvery = 32;

// Under offset_mu: the daemon's offset, and whether the client may hold it again.
void AskWhetherShared(iorelay_file* f) REQUIRES(f->offset_mu) {
  proto::OffsetReply rep;
  Outcome r = f->client->CallMsg(f->server, proto::Op::kLseek,
                                 proto::LseekRequest{f->handle, 0, SEEK_CUR}, &rep, f->generation);
  if (r.ok()) NoteDaemonOffset(f, rep);  // else the transfer itself meets the failure
}

// read/write at the file offset. While the client holds the offset they go out as positional
// requests at it, which the daemon can merge like any pwrite, under the file's offset lock (as
// Linux serialises reads and writes of one open file description on its position).
ssize_t TransferAtOffset(iorelay_file* f, IoKind kind, const struct iovec* iov, int count) {
  if (!f) return -EBADF;
  iorelay::MutexLock l(f->offset_mu);
  if (!f->local_offset.load() && MayHoldOffset(f) &&
      f->daemon_offset_ops.fetch_add(1) % kReclaimEvery == 0) {
    AskWhetherShared(f);
  }
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
