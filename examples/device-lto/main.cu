// Device link-time optimisation across files: the kernel calls square_of() from square.cu. Built with -dc -dlto for
// each file, then -dlink -dlto (see tests/real/gpu.rs and tests/gpu/run.sh). Without a GPU it reports the
// CUDA error it got, which still proves it was compiled, linked and started; with one it runs the kernel.
#include <cstdio>
#include <cuda_runtime.h>

__device__ int square_of(int value);

__global__ void square(int *values) { values[threadIdx.x] = square_of(values[threadIdx.x]); }

int main() {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        std::printf("hello: built and started; no usable GPU here (cuda error %d: %s)\n", (int)err, cudaGetErrorName(err));
        return 0;
    }
    int host[4] = {1, 2, 3, 4}, *dev = nullptr;
    cudaMalloc(&dev, sizeof host);
    cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
    square<<<1, 4>>>(dev);
    err = cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess) {
        std::printf("hello: kernel failed: %s\n", cudaGetErrorString(err));
        return 1;
    }
    std::printf("hello: squared on the GPU with device LTO: %d %d %d %d\n", host[0], host[1], host[2], host[3]);
    return host[3] == 16 ? 0 : 1;
}
