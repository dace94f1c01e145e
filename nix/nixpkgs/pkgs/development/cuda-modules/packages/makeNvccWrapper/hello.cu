// The smoke test of a wrapped nvcc (passthru.tests.hello): device code for the configured GPUs, host code by the host
// compiler the wrapper chose, linked against the stdenv's libstdc++ (iostream needs it). Without a usable GPU it says
// which CUDA error it met, which still proves that it was built, linked and started.
#include <cuda_runtime.h>
#include <iostream>

__global__ void add_one(int *value) { *value += 1; }

int main() {
    int *device = nullptr;
    cudaError_t err = cudaMalloc(&device, sizeof(int));
    if (err != cudaSuccess) {
        std::cout << "hello: built and started; no usable GPU here (cuda error " << static_cast<int>(err) << ": "
                  << cudaGetErrorName(err) << ")\n";
        return 0;
    }
    int value = 41;
    cudaMemcpy(device, &value, sizeof value, cudaMemcpyHostToDevice);
    add_one<<<1, 1>>>(device);
    err = cudaMemcpy(&value, device, sizeof value, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess) {
        std::cout << "hello: the kernel failed: " << cudaGetErrorString(err) << "\n";
        return 1;
    }
    std::cout << "hello: ran on the GPU: 41 + 1 = " << value << "\n";
    return value == 42 ? 0 : 1;
}
