// What a compressed fatbin costs when a program loads it (scripts/bench-fatbin.sh load, docs/benchmarks.md "Fatbin
// compression"): for each fatbin named on the command line, REPS times cuModuleLoadData and one cuModuleGetFunction
// (so that a lazily loading driver has loaded the code too) then cuModuleUnload, in one context of GPU 0; prints the
// median and the minimum in microseconds, or the driver's error. The driver is reached through dlopen, so the
// program builds with a plain C compiler and no CUDA headers. The function looked up is one of
// examples/fatbin-kernels.cu's (FUNCTION overrides it).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*init_t)(unsigned);
typedef int (*dev_get_t)(int *, int);
typedef int (*retain_t)(void **, int);
typedef int (*set_t)(void *);
typedef int (*load_t)(void **, const void *);
typedef int (*unload_t)(void *);
typedef int (*getfn_t)(void **, void *, const char *);
typedef int (*drv_t)(int *);

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) { printf("no libcuda: %s\n", dlerror()); return 1; }
    init_t cuInit = (init_t)dlsym(lib, "cuInit");
    dev_get_t cuDeviceGet = (dev_get_t)dlsym(lib, "cuDeviceGet");
    retain_t retain = (retain_t)dlsym(lib, "cuDevicePrimaryCtxRetain");
    set_t setc = (set_t)dlsym(lib, "cuCtxSetCurrent");
    load_t load = (load_t)dlsym(lib, "cuModuleLoadData");
    unload_t unload = (unload_t)dlsym(lib, "cuModuleUnload");
    getfn_t getfn = (getfn_t)dlsym(lib, "cuModuleGetFunction");
    drv_t drv = (drv_t)dlsym(lib, "cuDriverGetVersion");
    int dev, version = 0, reps = atoi(getenv("REPS") ? getenv("REPS") : "41");
    const char *function = getenv("FUNCTION") ? getenv("FUNCTION") : "_Z10reduce_sumIfLi256ELi4EEvlPKT_PS0_";
    void *ctx;
    int e = cuInit(0);
    drv(&version);
    if (e || cuDeviceGet(&dev, 0) || retain(&ctx, dev) || setc(ctx)) { printf("init failed %d\n", e); return 1; }
    printf("driver API %d\n", version);
    for (int f = 1; f < argc; ++f) {
        FILE *in = fopen(argv[f], "rb");
        fseek(in, 0, SEEK_END);
        long size = ftell(in);
        fseek(in, 0, SEEK_SET);
        char *image = malloc(size);
        fread(image, 1, size, in);
        fclose(in);
        double *t = malloc(sizeof(double) * reps);
        int err = 0;
        for (int r = 0; r < reps && !err; ++r) {
            void *mod, *fn;
            double t0 = now_us();
            err = load(&mod, image);
            if (!err) err = getfn(&fn, mod, function);
            t[r] = now_us() - t0;
            if (!err) unload(mod);
        }
        if (err) { printf("%s: error %d\n", argv[f], err); continue; }
        qsort(t, reps, sizeof(double), cmp);
        printf("%s\t%ld bytes\tmedian %.0f us\tmin %.0f us\n", argv[f], size, t[reps / 2], t[0]);
    }
    return 0;
}
