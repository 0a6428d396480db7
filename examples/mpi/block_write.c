/* An MPI program with plain POSIX I/O, for `iorelay run ... iorelay exec`: each rank writes its
 * block of one shared file, then every rank reads the whole file back and checks each block. It
 * knows nothing of iorelay; the interposer forwards its calls under the prefix to the daemons. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kBlockBytes = 1 << 20 };

static char BlockByte(int rank) { return (char)('a' + rank % 26); }

/* Writes this rank's block at rank * kBlockBytes; 0 or -1 (with a message). */
static int WriteBlock(const char* path, int rank, char* buf) {
  memset(buf, BlockByte(rank), kBlockBytes);
  int fd = open(path, O_CREAT | O_WRONLY, 0644);
  if (fd < 0) return perror("block_write: open for writing"), -1;
  ssize_t written = pwrite(fd, buf, kBlockBytes, (off_t)rank * kBlockBytes);
  if (close(fd) != 0 || written != kBlockBytes) return perror("block_write: pwrite"), -1;
  return 0;
}

/* Reads every rank's block back; the number of blocks that are wrong. */
static int CountBadBlocks(const char* path, int ranks, char* buf) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return perror("block_write: open for reading"), ranks;
  int bad = 0;
  for (int r = 0; r < ranks; ++r) {
    int ok = pread(fd, buf, kBlockBytes, (off_t)r * kBlockBytes) == kBlockBytes;
    for (int i = 0; ok && i < kBlockBytes; ++i) ok = buf[i] == BlockByte(r);
    bad += !ok;
  }
  close(fd);
  return bad;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const char* path = argc > 1 ? argv[1] : "/fwd/shared.dat";
  char* buf = malloc(kBlockBytes);
  int bad = buf == NULL || WriteBlock(path, rank, buf) != 0;
  MPI_Barrier(MPI_COMM_WORLD); /* every block is written before anyone reads */
  if (!bad) bad = CountBadBlocks(path, ranks, buf);
  int bad_total = 0;
  MPI_Allreduce(&bad, &bad_total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("block_write: %d ranks wrote %d MiB of %s; %s\n", ranks, ranks * kBlockBytes >> 20, path,
           bad_total ? "some blocks read back WRONG" : "every block read back right by every rank");
  free(buf);
  MPI_Finalize();
  return bad_total != 0;
}
