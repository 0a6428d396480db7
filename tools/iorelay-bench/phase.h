// One timed phase (write, read or verify) of one rank: open, requests until done or stonewalled,
// optional fsync, close, through POSIX or MPI-IO (file_backend.h). I/O errors and wrong data are
// counted, never thrown.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "options.h"

namespace iorelay::bench {

enum class Op { kWrite, kRead, kVerify };

const char* OpName(Op op);

// What one rank did in one phase.
struct RankResult {
  uint64_t requests = 0;     // completed requests
  uint64_t bytes = 0;        // bytes moved by them
  double time_s = 0;         // from the common start (after a barrier) to this rank's close
  uint64_t wrong_words = 0;  // read/verify: 8-byte words that differ from the pattern
  uint64_t errors = 0;       // failed calls (open, pwrite, pread, fsync, close)
  bool stonewalled = false;  // stopped by the stonewall before its last request
  std::string first_error;   // message of the first failed call, "" if none
  // MPI-IO: what MPI_File_get_info reported after the open (see file_backend.h).
  std::map<std::string, std::string> reported_hints;
};

// The whole-phase agreement of the ranks under wear-out: the largest request count any rank
// reached by the stonewall. Every rank then issues requests until it has done that many.
// Collective: every rank of the world calls RunPhase with the same op and options.
//
// max_requests: this rank's request limit (RequestsPerRank, or what it wrote before, for a
// read after a stonewalled write). Stonewall and wear-out apply to kWrite and kRead; kVerify
// always checks max_requests requests.
RankResult RunPhase(const Options& o, Op op, uint32_t rank, uint32_t ranks, uint64_t max_requests);

// Creates or truncates the files before a write phase (rank 0 for a shared file, each rank
// for its own), then waits for all ranks. Returns "" or an error message.
std::string PrepareFiles(const Options& o, uint32_t rank);

// Removes the files at the end (same division of work). Returns "" or an error message.
std::string RemoveFiles(const Options& o, uint32_t rank);

}  // namespace iorelay::bench
