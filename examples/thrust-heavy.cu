// A heavy CUDA translation unit for measuring nvcc: thrust sorts and reductions of float and int vectors, tens of
// seconds a GPU target on one core. scripts/measure-threads.py measures nvcc's memory per thread with it
// (compat-data/threads.toml) and `scripts/bench.sh parallel` builds with it (docs/benchmarks.md).
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/sort.h>
#include <thrust/reduce.h>
#include <thrust/transform_reduce.h>
#include <thrust/sequence.h>
#include <thrust/functional.h>
#include <cstdio>

struct square {
  __host__ __device__ float operator()(float x) const { return x * x; }
};
struct absdiff {
  __host__ __device__ int operator()(int x) const { return x < 0 ? -x : x; }
};

int main() {
  const int n = 1 << 20;
  thrust::host_vector<float> hf(n);
  thrust::host_vector<int> hi(n);
  for (int i = 0; i < n; ++i) { hf[i] = (float)((i * 7919) % n); hi[i] = (i * 104729) % n - n / 2; }
  thrust::device_vector<float> df = hf;
  thrust::device_vector<int> di = hi;
  thrust::device_vector<int> keys(n);
  thrust::sequence(keys.begin(), keys.end());

  thrust::sort(df.begin(), df.end());
  thrust::sort(di.begin(), di.end());
  thrust::sort(df.begin(), df.end(), thrust::greater<float>());
  thrust::sort_by_key(di.begin(), di.end(), df.begin());
  thrust::sort_by_key(df.begin(), df.end(), keys.begin());

  float sf = thrust::reduce(df.begin(), df.end(), 0.0f);
  int si = thrust::reduce(di.begin(), di.end(), 0, thrust::plus<int>());
  float ss = thrust::transform_reduce(df.begin(), df.end(), square(), 0.0f, thrust::plus<float>());
  int sa = thrust::transform_reduce(di.begin(), di.end(), absdiff(), 0, thrust::maximum<int>());
  printf("%f %d %f %d\n", sf, si, ss, sa);
  return 0;
}
