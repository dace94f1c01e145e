// One kernel, three ways to run: the sm_90a-only branch (Hopper instructions), a plain branch compiled for
// whatever target nvcc built, and no image at all. The kernel records which branch ran; main checks the result.
#include <cstdio>
#include <cuda_runtime.h>

// sm_90a-only: `setmaxnreg` and `wgmma.fence` exist for sm_90a and no other target, so this branch assembles only
// there. nvcc defines __CUDA_ARCH_FEAT_SM90_ALL for compute_90a alone; -DNO_GUARD drops the guard, to show that a
// plain sm_90 build cannot assemble it.
__global__ void __launch_bounds__(128, 1) probe(int *out, int *branch) {
    int i = threadIdx.x;
#if defined(__CUDA_ARCH__) && (defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(NO_GUARD))
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n" ::: "memory");
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    if (i == 0) *branch = 9001;  // the sm_90a branch
#elif defined(__CUDA_ARCH__)
    if (i == 0) *branch = __CUDA_ARCH__;  // the portable branch, as compiled (800 for compute_80 PTX)
#endif
    out[i] = 2 * i + 1;
}

int main() {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        std::printf("probe: no GPU\n");
        return 3;
    }
    int *out = nullptr, *branch = nullptr;
    cudaMalloc(&out, 128 * sizeof(int));
    cudaMalloc(&branch, sizeof(int));
    cudaMemset(branch, 0, sizeof(int));
    probe<<<1, 128>>>(out, branch);
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        std::printf("probe: on sm_%d%d the launch failed: %s: %s\n", prop.major, prop.minor, cudaGetErrorName(err),
                    cudaGetErrorString(err));
        return 2;
    }
    int host[128], which = 0;
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    cudaMemcpy(&which, branch, sizeof which, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 128; ++i) {
        if (host[i] != 2 * i + 1) {
            std::printf("probe: wrong answer at %d: %d\n", i, host[i]);
            return 1;
        }
    }
    std::printf("probe: on sm_%d%d the answer is right; branch %d ran (%s)\n", prop.major, prop.minor, which,
                which == 9001 ? "sm_90a instructions" : "portable code");
    return 0;
}
