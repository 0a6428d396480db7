/* The smallest program on libiorelay's C API, to start from: through an iorelayd daemon it writes a
 * file, reads it back, checks its size with stat, and closes it. Run it under `iorelay run`. */
#include <iorelay/iorelay.h>
#include <stdio.h>
#include <string.h>

static int fail(const char* step, long result) {
  fprintf(stderr, "hello_relay: %s: %s\n", step, result < 0 ? strerror(-result) : "wrong result");
  return 1;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "/fwd/hello.txt";
  const char text[] = "hello through the relay\n";
  const long size_bytes = (long)sizeof text - 1;
  char why[256], read_back[sizeof text] = {0};
  int err = 0;
  iorelay_client* client = iorelay_client_from_env_why(&err, why, sizeof why);
  if (client == NULL) return fprintf(stderr, "hello_relay: %s\n", why), 1;

  iorelay_file* file = NULL;
  long result = iorelay_open(client, path, O_CREAT | O_TRUNC | O_RDWR, 0644, &file);
  if (result < 0) return fail("open", result);
  if ((result = iorelay_pwrite(file, text, size_bytes, 0)) != size_bytes)
    return fail("write", result);
  if ((result = iorelay_pread(file, read_back, size_bytes, 0)) != size_bytes)
    return fail("read", result);
  if (memcmp(text, read_back, size_bytes) != 0) return fail("read back differs", 0);
  struct stat st;
  if ((result = iorelay_stat(client, path, &st, 0)) < 0) return fail("stat", result);
  if (st.st_size != size_bytes) return fail("stat size differs", 0);
  if ((result = iorelay_close(file)) < 0) return fail("close", result);
  iorelay_client_destroy(client);
  printf("hello_relay: wrote, read back and stat'ed %ld bytes of %s through iorelay %s\n",
         size_bytes, path, iorelay_version());
  return 0;
}
