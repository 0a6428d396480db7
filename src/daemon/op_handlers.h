// The handler of every kFile, kPath and kLock op, declared from its row of the op table
// (proto/ops.h), so that a handler whose types differ from its row's, or a row without its
// handler, does not build (the linker names the handler the row expects). Each is defined in
// src/daemon/*_ops.cc and bound by op_table.cc, which decodes the request before the handler runs
// and sends what it answers.
//
//   kFile, kPath: Answer<Reply> Handle<Name>(Core&, Session&, const Request&), on an event loop
//                 or the handler pool (it may block in the backend).
//   kLock:        void Handle<Name>(Core&, Session&, const Request&, AnswerLater<Reply>), on the
//                 event loop: it never blocks, and answers when the lock is granted.
//   kAdmin:       as kFile, on the handler pool, and only for a session of the admin
//                 credential: op_table.cc answers any other EACCES before the handler runs.
#pragma once

#include "daemon/answer.h"
#include "daemon/core.h"
#include "proto/messages.h"

namespace iorelay::daemon {

#define IORELAY_DECLARE_kSession(Name, Request, Reply)  // served by serve_connection.cc
#define IORELAY_DECLARE_kData(Name, Request, Reply)     // served by the scheduler
#define IORELAY_DECLARE_kFile(Name, Request, Reply) \
  Answer<proto::Reply> Handle##Name(Core& core, Session& session, const proto::Request& request);
#define IORELAY_DECLARE_kPath(Name, Request, Reply) IORELAY_DECLARE_kFile(Name, Request, Reply)
#define IORELAY_DECLARE_kAdmin(Name, Request, Reply) IORELAY_DECLARE_kFile(Name, Request, Reply)
#define IORELAY_DECLARE_kLock(Name, Request, Reply)                              \
  void Handle##Name(Core& core, Session& session, const proto::Request& request, \
                    AnswerLater<proto::Reply> answer);
#define IORELAY_DECLARE_HANDLER(Name, code, name, Request, Reply, family, handler, tail) \
  IORELAY_DECLARE_##handler(Name, Request, Reply)
IORELAY_PROTOCOL_OPS(IORELAY_DECLARE_HANDLER)
#undef IORELAY_DECLARE_HANDLER
#undef IORELAY_DECLARE_kSession
#undef IORELAY_DECLARE_kData
#undef IORELAY_DECLARE_kFile
#undef IORELAY_DECLARE_kPath
#undef IORELAY_DECLARE_kLock
#undef IORELAY_DECLARE_kAdmin

}  // namespace iorelay::daemon
