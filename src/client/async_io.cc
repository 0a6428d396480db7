// Requests in flight across calls (iorelay_submit_pread/pwrite, iorelay_request_wait): each
// holds a connection of its own from the daemon's pool until its reply is taken.
#include <optional>

#include "client/client.h"
#include "client/file_ops.h"

namespace proto = iorelay::proto;
using iorelay::client::Exchange;
using iorelay::client::IoSpan;
using iorelay::client::Lease;

struct iorelay_request {
  iorelay_file* file = nullptr;
  bool is_write = false;
  size_t len = 0;
  struct iovec iov {};
  std::vector<uint8_t> fields;
  std::vector<uint8_t> payload;
  Exchange exchange;
  std::optional<Lease> lease;  // empty: carried out at submission, `result` holds the outcome
  uint64_t id = 0;
  ssize_t result = 0;
};

namespace {

// Carried out at once, as iorelay_pread/pwrite would.
void RunNow(iorelay_request* r, off_t offset) {
  r->result = r->is_write ? iorelay_pwrite(r->file, r->iov.iov_base, r->len, offset)
                          : iorelay_pread(r->file, r->iov.iov_base, r->len, offset);
}

int Submit(iorelay_file* f, bool is_write, void* buf, size_t n, off_t offset,
           iorelay_request** out) {
  if (!f || !out) return -EINVAL;
  if (offset < 0) return -EINVAL;
  auto* r = new iorelay_request;
  r->file = f;
  r->is_write = is_write;
  r->len = n;
  r->iov = {buf, n};
  *out = r;
  if (is_write) iorelay::client::NoteChange(f);
  if (f->direct_fd.load() >= 0 || n > f->max_io_bytes || n == 0) {
    RunNow(r, offset);
    return 0;
  }
  iorelay::Result<Lease> lease = f->client->server(f->server).TryAcquire();
  if (!lease.ok() || (*lease)->session().generation != f->generation) {
    RunNow(r, offset);  // no free connection (or a restarted daemon): the synchronous path
    return 0;
  }
  const uint64_t off = static_cast<uint64_t>(offset);
  r->fields =
      is_write ? proto::EncodeFields(proto::PwriteRequest{f->handle, off})
               : proto::EncodeFields(proto::PreadRequest{f->handle, off, static_cast<uint32_t>(n)});
  IoSpan span{&r->iov, 1};
  r->exchange = Exchange{is_write ? proto::Op::kPwrite : proto::Op::kPread, r->fields,
                         is_write ? span : IoSpan{}, is_write ? IoSpan{} : span, &r->payload};
  iorelay::Result<uint64_t> id = (*lease)->Start(r->exchange);
  if (!id.ok()) {
    RunNow(r, offset);  // the connection failed before anything was sent: retry in full
    return 0;
  }
  r->id = *id;
  r->lease.emplace(std::move(*lease));
  return 0;
}

}  // namespace

extern "C" {

int iorelay_submit_pread(iorelay_file* f, void* buf, size_t n, off_t offset,
                         iorelay_request** out) {
  return Submit(f, false, buf, n, offset, out);
}

int iorelay_submit_pwrite(iorelay_file* f, const void* buf, size_t n, off_t offset,
                          iorelay_request** out) {
  return Submit(f, true, const_cast<void*>(buf), n, offset, out);
}

int iorelay_request_ready(iorelay_request* r) {
  if (!r || !r->lease) return 1;
  iorelay::Result<bool> arrived = (**r->lease).ReplyArrived();
  return !arrived.ok() || *arrived ? 1 : 0;
}

ssize_t iorelay_request_wait(iorelay_request* r) {
  if (!r) return -EINVAL;
  ssize_t result = r->result;
  if (r->lease) {
    iorelay::Status s = (**r->lease).Finish(r->exchange, r->id);
    if (!s.ok()) {
      result = -EIO;  // the daemon did not answer: the request may or may not have happened
    } else if (r->exchange.reply.status != 0) {
      result = -r->exchange.reply.status;
    } else if (r->is_write) {
      proto::CountReply count;
      result = proto::DecodeFields(r->payload, &count).ok() && count.count <= r->len
                   ? static_cast<ssize_t>(count.count)
                   : -EIO;
    } else {
      result = static_cast<ssize_t>(r->exchange.reply.payload_bytes);
    }
  }
  delete r;  // returns the connection to the pool
  return result;
}

}  // extern "C"
