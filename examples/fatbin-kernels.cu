// Kernels of the size real libraries ship, for scripts/bench-fatbin.sh: how large the device code of one translation
// unit is for many GPU targets under each of nvcc's fatbin compression settings, and what each costs to compile.
// Templated reductions, a tiled GEMM, a row softmax, a block scan and a 3-D stencil, each instantiated for several
// types and tile sizes, as a BLAS- or DNN-style library does. Run as a program it checks a few results on the GPU it
// finds and prints one line; without a GPU it prints the CUDA error and exits 0.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

// --- Reductions: a warp-shuffle tree, then one atomic per block. -----------------------------------------------------

template <typename T>
__device__ T warp_sum(T v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

template <typename T>
__device__ T warp_max(T v) {
    for (int offset = 16; offset > 0; offset /= 2) {
        T other = __shfl_down_sync(0xffffffffu, v, offset);
        v = other > v ? other : v;
    }
    return v;
}

template <typename T, int BLOCK, int ITEMS>
__global__ void reduce_sum(long n, const T *__restrict__ x, T *__restrict__ out) {
    __shared__ T warps[BLOCK / 32];
    T acc = T(0);
    long base = (long)blockIdx.x * BLOCK * ITEMS + threadIdx.x;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        long i = base + (long)k * BLOCK;
        if (i < n) acc += x[i];
    }
    acc = warp_sum(acc);
    if ((threadIdx.x & 31) == 0) warps[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < BLOCK / 32 ? warps[threadIdx.x] : T(0);
        acc = warp_sum(acc);
        if (threadIdx.x == 0) atomicAdd(out, acc);
    }
}

template <typename T, int BLOCK>
__global__ void reduce_norms(int rows, int cols, const T *__restrict__ a, T *__restrict__ l2, T *__restrict__ linf) {
    __shared__ T sums[BLOCK / 32], maxes[BLOCK / 32];
    const T *row = a + (long)blockIdx.x * cols;
    T s = T(0), m = T(0);
    for (int j = threadIdx.x; j < cols; j += BLOCK) {
        T v = row[j];
        s += v * v;
        T av = v < T(0) ? -v : v;
        m = av > m ? av : m;
    }
    s = warp_sum(s);
    m = warp_max(m);
    if ((threadIdx.x & 31) == 0) {
        sums[threadIdx.x / 32] = s;
        maxes[threadIdx.x / 32] = m;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < BLOCK / 32 ? sums[threadIdx.x] : T(0);
        m = threadIdx.x < BLOCK / 32 ? maxes[threadIdx.x] : T(0);
        s = warp_sum(s);
        m = warp_max(m);
        if (threadIdx.x == 0 && blockIdx.x < rows) {
            l2[blockIdx.x] = sqrt(s);
            linf[blockIdx.x] = m;
        }
    }
}

// --- GEMM: C = alpha * A * B + beta * C, shared-memory tiles, a TM x TN register block per thread. ---------------------

template <typename T, int BM, int BN, int BK, int TM, int TN>
__global__ void gemm(int m, int n, int k, T alpha, const T *__restrict__ a, const T *__restrict__ b, T beta,
                     T *__restrict__ c) {
    constexpr int THREADS = (BM / TM) * (BN / TN);
    __shared__ T as[BK][BM + 1];
    __shared__ T bs[BK][BN + 1];
    const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
    for (int kk = 0; kk < k; kk += BK) {
        for (int e = threadIdx.x; e < BM * BK; e += THREADS) {
            int r = e / BK, q = e % BK;
            int gr = row0 + r, gq = kk + q;
            as[q][r] = gr < m && gq < k ? a[(long)gr * k + gq] : T(0);
        }
        for (int e = threadIdx.x; e < BK * BN; e += THREADS) {
            int q = e / BN, cidx = e % BN;
            int gq = kk + q, gc = col0 + cidx;
            bs[q][cidx] = gq < k && gc < n ? b[(long)gq * n + gc] : T(0);
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < BK; ++q) {
            T ra[TM], rb[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) ra[i] = as[q][ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j) rb[j] = bs[q][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            int r = row0 + ty * TM + i, col = col0 + tx * TN + j;
            if (r < m && col < n) {
                long at = (long)r * n + col;
                c[at] = alpha * acc[i][j] + (beta == T(0) ? T(0) : beta * c[at]);
            }
        }
}

// --- Row softmax: max, sum of exponentials, normalise; one block per row. ------------------------------------------

template <typename T, int BLOCK>
__global__ void softmax_rows(int rows, int cols, const T *__restrict__ in, T *__restrict__ out) {
    __shared__ T shared[BLOCK / 32];
    __shared__ T row_max, row_sum;
    const T *x = in + (long)blockIdx.x * cols;
    T *y = out + (long)blockIdx.x * cols;
    T m = -1e30;
    for (int j = threadIdx.x; j < cols; j += BLOCK) m = x[j] > m ? x[j] : m;
    m = warp_max(m);
    if ((threadIdx.x & 31) == 0) shared[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x < 32) {
        m = threadIdx.x < BLOCK / 32 ? shared[threadIdx.x] : T(-1e30);
        m = warp_max(m);
        if (threadIdx.x == 0) row_max = m;
    }
    __syncthreads();
    T s = T(0);
    for (int j = threadIdx.x; j < cols; j += BLOCK) s += exp(x[j] - row_max);
    s = warp_sum(s);
    if ((threadIdx.x & 31) == 0) shared[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < BLOCK / 32 ? shared[threadIdx.x] : T(0);
        s = warp_sum(s);
        if (threadIdx.x == 0) row_sum = s;
    }
    __syncthreads();
    if (blockIdx.x < rows)
        for (int j = threadIdx.x; j < cols; j += BLOCK) y[j] = exp(x[j] - row_max) / row_sum;
}

// --- Inclusive scan of one block (Hillis-Steele in shared memory), with the block totals for a second pass. -------

template <typename T, int BLOCK>
__global__ void block_scan(int n, const T *__restrict__ in, T *__restrict__ out, T *__restrict__ totals) {
    __shared__ T buf[2][BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    int from = 0;
    buf[0][threadIdx.x] = i < n ? in[i] : T(0);
    __syncthreads();
    for (int offset = 1; offset < BLOCK; offset *= 2) {
        T v = buf[from][threadIdx.x];
        if (threadIdx.x >= offset) v += buf[from][threadIdx.x - offset];
        buf[1 - from][threadIdx.x] = v;
        from = 1 - from;
        __syncthreads();
    }
    if (i < n) out[i] = buf[from][threadIdx.x];
    if (threadIdx.x == BLOCK - 1) totals[blockIdx.x] = buf[from][threadIdx.x];
}

template <typename T>
__global__ void add_block_offsets(int n, int block, const T *__restrict__ scanned_totals, T *__restrict__ out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int b = i / block;
    if (i < n && b > 0) out[i] += scanned_totals[b - 1];
}

// --- A 7-point 3-D stencil with a shared-memory tile in x and y. -------------------------------------------------

template <typename T, int BX, int BY>
__global__ void stencil7(int nx, int ny, int nz, T c0, T c1, const T *__restrict__ in, T *__restrict__ out) {
    __shared__ T tile[BY + 2][BX + 2];
    int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
    int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
    long plane = (long)nx * ny;
    for (int z = 1; z < nz - 1; ++z) {
        long at = z * plane + (long)y * nx + x;
        bool inside = x < nx && y < ny;
        tile[ly][lx] = inside ? in[at] : T(0);
        if (threadIdx.x == 0) tile[ly][0] = inside && x > 0 ? in[at - 1] : T(0);
        if (threadIdx.x == BX - 1) tile[ly][BX + 1] = x + 1 < nx && y < ny ? in[at + 1] : T(0);
        if (threadIdx.y == 0) tile[0][lx] = inside && y > 0 ? in[at - nx] : T(0);
        if (threadIdx.y == BY - 1) tile[BY + 1][lx] = x < nx && y + 1 < ny ? in[at + nx] : T(0);
        __syncthreads();
        if (x > 0 && y > 0 && x < nx - 1 && y < ny - 1) {
            T sum = tile[ly][lx - 1] + tile[ly][lx + 1] + tile[ly - 1][lx] + tile[ly + 1][lx] + in[at - plane] +
                    in[at + plane];
            out[at] = c0 * tile[ly][lx] + c1 * sum;
        }
        __syncthreads();
    }
}

// The instantiations a library would ship.
template __global__ void reduce_sum<float, 256, 4>(long, const float *, float *);
template __global__ void reduce_sum<double, 256, 4>(long, const double *, double *);
template __global__ void reduce_sum<int, 256, 4>(long, const int *, int *);
template __global__ void reduce_norms<float, 256>(int, int, const float *, float *, float *);
template __global__ void reduce_norms<double, 256>(int, int, const double *, double *, double *);
template __global__ void gemm<float, 64, 64, 8, 4, 4>(int, int, int, float, const float *, const float *, float, float *);
template __global__ void gemm<float, 128, 64, 8, 8, 4>(int, int, int, float, const float *, const float *, float,
                                                       float *);
template __global__ void gemm<double, 64, 64, 8, 4, 4>(int, int, int, double, const double *, const double *, double,
                                                       double *);
template __global__ void softmax_rows<float, 256>(int, int, const float *, float *);
template __global__ void softmax_rows<double, 256>(int, int, const double *, double *);
template __global__ void block_scan<float, 256>(int, const float *, float *, float *);
template __global__ void block_scan<int, 512>(int, const int *, int *, int *);
template __global__ void block_scan<double, 256>(int, const double *, double *, double *);
template __global__ void add_block_offsets<float>(int, int, const float *, float *);
template __global__ void add_block_offsets<int>(int, int, const int *, int *);
template __global__ void add_block_offsets<double>(int, int, const double *, double *);
template __global__ void stencil7<float, 32, 8>(int, int, int, float, float, const float *, float *);
template __global__ void stencil7<double, 32, 4>(int, int, int, double, double, const double *, double *);

int main() {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        std::printf("fatbin-kernels: built and started, no GPU (cuda error %d)\n", (int)err);
        return 0;
    }
    // A 64 x 64 GEMM of ones (every element is 64) and a sum of 2^16 ones: enough to show the code loaded and ran.
    const int m = 64, n = 1 << 16;
    std::vector<float> ones(n, 1.0f);
    float *da, *dc, *dsum;
    cudaMalloc(&da, n * sizeof(float));
    cudaMalloc(&dc, m * m * sizeof(float));
    cudaMalloc(&dsum, sizeof(float));
    cudaMemcpy(da, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(dsum, 0, sizeof(float));
    gemm<float, 64, 64, 8, 4, 4><<<dim3(1, 1), 256>>>(m, m, m, 1.0f, da, da, 0.0f, dc);
    reduce_sum<float, 256, 4><<<n / (256 * 4), 256>>>(n, da, dsum);
    float c0 = 0, sum = 0;
    cudaMemcpy(&c0, dc, sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(&sum, dsum, sizeof(float), cudaMemcpyDeviceToHost);
    err = cudaGetLastError();
    bool ok = err == cudaSuccess && c0 == 64.0f && sum == (float)n;
    std::printf("fatbin-kernels: %s on the GPU (c[0] %.0f, sum %.0f, cuda error %d)\n", ok ? "ran correctly" : "FAILED",
                c0, sum, (int)err);
    return ok ? 0 : 1;
}
