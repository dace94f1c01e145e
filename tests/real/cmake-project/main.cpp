#include <cstdio>
#include <cuda_runtime.h>
int launch_twice(int *p);
int launch_plus(int *p);
// Without a GPU the first call fails and the value stays 20; on a GPU both kernels run: 20 * 2 + 1 = 41.
int main() {
  int *p = nullptr, value = 20;
  cudaError_t e = cudaMalloc(&p, sizeof(int));
  if (e == cudaSuccess) {
    cudaMemcpy(p, &value, sizeof value, cudaMemcpyHostToDevice);
    launch_twice(p);
    launch_plus(p);
    e = cudaMemcpy(&value, p, sizeof value, cudaMemcpyDeviceToHost);
  }
  std::printf("app: built and started (%d), value %d\n", (int)e, value);
  return 0;
}
