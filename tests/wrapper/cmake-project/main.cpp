#include <cstdio>
#include <cuda_runtime.h>
int launch_twice(int *p);
int launch_plus(int *p);
int main() {
  int *p = nullptr;
  cudaError_t e = cudaMalloc(&p, sizeof(int));
  if (e == cudaSuccess) { launch_twice(p); launch_plus(p); }
  std::printf("app: built and started (%d)\n", (int)e);
  return 0;
}
