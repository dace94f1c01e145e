// The device function of the device-LTO example, in its own file: with separate compilation it is a call across
// objects, which device link-time optimisation can inline.
__device__ int square_of(int value) { return value * value; }
