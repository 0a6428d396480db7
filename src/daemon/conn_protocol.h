// The daemon's side of one connection's protocol without I/O (the "sans-I/O" shape of h11 or
// quiche): frames, or bytes, in; actions out. It holds the handshake (hello, auth, the daemon's
// proof, the client's kFinished over the transcript) and then says what each frame is for; its
// driver (serve_connection.h, for the event loop) sends, seals, admits, routes and closes as
// told. Nothing here reads a socket, a clock or the daemon's state, so tests feed it bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/auth.h"
#include "common/frame_mac.h"
#include "common/handshake_transcript.h"
#include "daemon/core.h"
#include "daemon/jobs.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace iorelay::daemon {

class FrameReader;

// What the protocol needs to know of its daemon and connection, fixed for the connection's life.
struct ProtocolSettings {
  // Who an auth request's proof (of the daemon's nonce) says the client is: the driver's job
  // table (serve_connection.cc's AuthenticatedJob); null, or returning null: nobody. The one
  // place where a client's credential is decided, outside the protocol.
  std::function<JobPtr(const proto::AuthRequest&, const Nonce&)> authenticate;
  bool over_network = false;  // the transport crosses a network (Connection::OverNetwork)
  bool seal = false;          // --seal: network connections are sealed even if not asked
  // --seal-tag auto, on a CPU with AES-GMAC (common/frame_mac.h): chosen for clients offering it
  bool aes_gmac = false;
  uint32_t heartbeat_ms = 0;  // told in the auth reply
  uint32_t max_io_bytes = 0;  // likewise
  Nonce (*make_nonce)() = RandomNonce;
};

// One thing for the driver to do. Actions come in order and are done in order.
struct Action {
  enum class Kind {
    kSend,       // send the reply frame (op, id, status, fields)
    kAdmit,      // admit the connection, as `job`, into a session: join
                 // `join_session` with `join_token`, or a new one when 0; then call Admitted
                 // or AdmitRefused, whose actions follow
    kSeal,       // from now on both directions carry tags under `key` (after the auth reply)
    kRequest,    // an authenticated request (`header`): count it and route it
    kAttachShm,  // kShmAttach: the driver answers it (the transport moves, or not)
    kClose,      // close the connection: a protocol error, `why` logged
  };
  Kind kind = Kind::kSend;
  proto::FrameHeader header;    // kRequest, kAttachShm: the frame's; kSend: op and id of the reply
  int32_t status = 0;           // kSend
  std::vector<uint8_t> fields;  // kSend
  JobPtr job;                   // kAdmit: the job whose credential the auth request proved
  uint64_t join_session = 0;    // kAdmit
  uint64_t join_token = 0;      // kAdmit
  SessionKey key{};             // kSeal
  TagAlgorithm tag = TagAlgorithm::kPoly1305;  // kSeal
  std::string why;                             // kClose
  bool integrity = false;                      // kClose: a frame failed its tag (counted apart)
};

// The actions of one step, in place (a step gives two at most: reply and seal, or reply and
// close); a request's costs no allocation.
class Actions {
 public:
  Action& Add(Action::Kind kind) {
    Action& a = items_[n_++];
    a.kind = kind;
    return a;
  }
  std::span<const Action> view() const { return {items_.data(), n_}; }
  size_t size() const { return n_; }
  const Action& operator[](size_t i) const { return items_[i]; }

 private:
  std::array<Action, 3> items_;
  size_t n_ = 0;
};

class ConnProtocol {
 public:
  explicit ConnProtocol(ProtocolSettings settings);
  ~ConnProtocol();
  ConnProtocol(const ConnProtocol&) = delete;
  ConnProtocol& operator=(const ConnProtocol&) = delete;

  enum class State {
    kHello,     // nothing yet: the hello comes first
    kAuth,      // hello answered with a nonce: the auth request comes next
    kAdmit,     // auth verified: the driver admits (Admitted / AdmitRefused)
    kFinished,  // auth answered with the daemon's proof: the client's kFinished comes next
    kOpen,      // authenticated and confirmed: requests
    kClosed,    // a close was asked: nothing more is handled
  };
  State state() const { return state_; }
  // Whether a session was admitted (a frame may then be as large as its op allows).
  bool authenticated() const { return state_ == State::kFinished || state_ == State::kOpen; }

  // One complete frame as read (its header and fields: the payload but a write's data).
  Actions OnFrame(const proto::FrameHeader& h, std::span<const uint8_t> fields);
  // After kAdmit: the session the connection was admitted to. Gives the auth reply (with the
  // daemon's proof) and, when sealed, kSeal.
  Actions Admitted(uint64_t session, uint64_t token);
  // After kAdmit: the connection was not admitted (the session to join is unknown, EACCES; the
  // job holds its share of connections, EUSERS). Gives the refusal and kClose, `why` logged.
  Actions AdmitRefused(int err = EACCES, std::string why = "join of an unknown session");

  // Bytes as they arrive (tests, the fuzz target; the event loop's reader reads its transport
  // in place and calls OnFrame): frames are cut and checked as the loop's FrameReader does
  // (the payload bound before auth, the op's bound after, tags once sealed). Stops after a
  // kAdmit (the rest waits for Admitted: then Feed({}) goes on) or a kClose. Each call's actions
  // are appended to `out`.
  void Feed(std::span<const uint8_t> bytes, std::vector<Action>* out);
  // A request frame's payload as last cut by Feed (kRequest's fields), for tests.
  std::span<const uint8_t> fed_fields() const;

 private:
  Actions Hello(const proto::FrameHeader& h, std::span<const uint8_t> payload);
  Actions Auth(const proto::FrameHeader& h, std::span<const uint8_t> payload);
  Actions Finish(const proto::FrameHeader& h, std::span<const uint8_t> payload);
  Actions Open(const proto::FrameHeader& h);
  Actions Close(std::string why);
  // An error reply to `h`, then kClose.
  Actions Refuse(const proto::FrameHeader& h, int err, std::string why);

  ProtocolSettings settings_;
  State state_ = State::kHello;
  Nonce server_nonce_{};
  std::optional<HandshakeTranscript> transcript_;  // from the hello to the auth reply
  // Between kAdmit and Admitted: the auth request's frame and what it decided.
  proto::FrameHeader auth_header_;
  JobPtr job_;
  bool seal_ = false;
  TagAlgorithm tag_ = TagAlgorithm::kPoly1305;  // when sealed
  Proof expected_finished_{};  // the client's kFinished MAC of the whole transcript
  // Feed's own reader and its source of bytes (made on the first Feed).
  struct Bytes;
  std::unique_ptr<Bytes> bytes_;
};

}  // namespace iorelay::daemon
