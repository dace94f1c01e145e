__global__ void twice(int *p) { p[threadIdx.x] *= 2; }
int launch_twice(int *p) { twice<<<1, 1>>>(p); return 0; }
