// main() for the fuzz targets when they are not built with libFuzzer: runs the target once
// per input file named on the command line (make check passes the corpus, see fuzz_replay.sh)
// and says how many it ran. A target that crashes on an input fails the test.
#include <cstdio>
#include <vector>

#include "tests/fuzz/fuzz_target.h"

int main(int argc, char** argv) {
  int ran = 0;
  for (int i = 1; i < argc; ++i) {
    FILE* f = fopen(argv[i], "rb");
    if (!f) {
      fprintf(stderr, "cannot open %s\n", argv[i]);
      return 2;
    }
    std::vector<uint8_t> buf;
    uint8_t chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf.insert(buf.end(), chunk, chunk + n);
    fclose(f);
    // A copy of exactly the input's size, so that reads past it are caught by ASan.
    uint8_t* exact = new uint8_t[buf.size() ? buf.size() : 1];
    if (!buf.empty()) std::copy(buf.begin(), buf.end(), exact);
    LLVMFuzzerTestOneInput(exact, buf.size());
    delete[] exact;
    ++ran;
  }
  printf("replayed %d inputs\n", ran);
  return 0;
}
