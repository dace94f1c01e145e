// No header, three kernels of unrolled math: cicc works 2 to 5 seconds a GPU target (nvcc 11.8, 12.4 and 13.5 on
// 2 cores), ptxas longer. scripts/bench.sh parallel copies it many times (SOURCE) for a build that keeps every job
// slot busy to its end; the tests' signal corpora compile a lighter twin, tests/fixtures/mid-compile.cu.
template <int I> __global__ void k(float *p) {
  float x = p[threadIdx.x];
#pragma unroll
  for (int i = 0; i < 48; i++) x = sinf(x) * (I + 1) + cosf(x * i);
  p[threadIdx.x] = x;
}
template __global__ void k<0>(float *);
template __global__ void k<1>(float *);
template __global__ void k<2>(float *);
