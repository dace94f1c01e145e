// A small library of kernels, for scripts/bench.sh's payoff row: one translation unit with several kernels and
// templates, compiled for many GPU targets directly or for one through the wrapper. Run as a program it checks each
// kernel's result on the GPU it finds and prints one line; without a GPU it prints the CUDA error and exits 0.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

template <typename T>
__global__ void saxpy(int n, T a, const T *x, T *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

template <typename T, int BLOCK>
__global__ void block_sum(int n, const T *x, T *out) {
    __shared__ T part[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    part[threadIdx.x] = i < n ? x[i] : T(0);
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, part[0]);
}

__global__ void transpose(int rows, int cols, const float *in, float *out) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

__global__ void histogram(int n, const unsigned char *data, unsigned int *bins) {
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

int main() {
    const int n = 1 << 16;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        std::printf("kernels: built and started, no GPU (cuda error %d)\n", (int)err);
        return 0;
    }
    std::vector<float> x(n, 1.0f), y(n, 2.0f);
    std::vector<unsigned char> bytes(n);
    for (int i = 0; i < n; ++i) bytes[i] = (unsigned char)(i % 256);
    float *dx, *dy, *dsum, *dt;
    unsigned char *dbytes;
    unsigned int *dbins;
    cudaMalloc(&dx, n * sizeof(float));
    cudaMalloc(&dy, n * sizeof(float));
    cudaMalloc(&dt, n * sizeof(float));
    cudaMalloc(&dsum, sizeof(float));
    cudaMalloc(&dbytes, n);
    cudaMalloc(&dbins, 256 * sizeof(unsigned int));
    cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dbytes, bytes.data(), n, cudaMemcpyHostToDevice);
    cudaMemset(dsum, 0, sizeof(float));
    cudaMemset(dbins, 0, 256 * sizeof(unsigned int));
    saxpy<float><<<n / 256, 256>>>(n, 3.0f, dx, dy);               // y = 3 * 1 + 2 = 5
    block_sum<float, 256><<<n / 256, 256>>>(n, dy, dsum);          // 5 * n
    transpose<<<dim3(256 / 32, 256 / 32), dim3(32, 32)>>>(256, 256, dy, dt);
    histogram<<<64, 256>>>(n, dbytes, dbins);                      // n / 256 in each bin
    float sum = 0;
    unsigned int bins[256];
    cudaMemcpy(&sum, dsum, sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(bins, dbins, sizeof(bins), cudaMemcpyDeviceToHost);
    err = cudaGetLastError();
    bool ok = err == cudaSuccess && sum == 5.0f * n && bins[0] == n / 256 && bins[255] == n / 256;
    std::printf("kernels: %s on the GPU (sum %.0f, bin 0 %u, cuda error %d)\n", ok ? "ran correctly" : "FAILED", sum,
                bins[0], (int)err);
    return ok ? 0 : 1;
}
