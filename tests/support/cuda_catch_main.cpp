// The Catch2 main of the CUDA test binaries, compiled once by the host compiler. With
// --skip-without-gpu as the first argument it returns ctest's skip code 77 when no CUDA device is
// present (CI machines), so the binary builds everywhere and runs where it can.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--skip-without-gpu") == 0) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
      std::printf("no CUDA device (%s): skipped\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
      return 77;
    }
    argv[1] = argv[0];
    return Catch::Session().run(argc - 1, argv + 1);
  }
  return Catch::Session().run(argc, argv);
}
