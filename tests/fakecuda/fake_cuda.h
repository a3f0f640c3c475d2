/* fake_cuda: a stand-in for libcuda (tests/fakecuda/fake_cuda.c, built as fake-cuda.so beside
 * the unit runner) that the library API's unit test loads through MUGEN_LIBCUDA: one "H100",
 * a current context per thread, modules, launches recorded and never run. The test reads what
 * it recorded through these functions (dlsym on the same library). */
#ifndef MG_FAKE_CUDA_H
#define MG_FAKE_CUDA_H

#include <stdint.h>

enum { FAKE_MAX_ARGS = 64 };

/* One cuLaunchKernel / cuLaunchKernelEx. args: the values the kernel parameters point at (read
 * as 8-byte device addresses up to the NULL that ends mugen's parameter array). */
typedef struct fake_launch {
    void *ctx, *stream;
    char name[64];
    unsigned grid[3], block, smem;
    int pdl, n_args;
    uint64_t args[FAKE_MAX_ARGS];
} fake_launch;

typedef struct fake_stats {
    int inits;             /* cuInit calls */
    int loads, unloads;    /* cuModuleLoadData (of an ELF image), cuModuleUnload */
    int retained;          /* primary-context retains not yet released */
    int launches;          /* recorded launches */
    int memsets;           /* cuMemsetD8Async calls; the last one's address and size: */
    uint64_t memset_ptr, memset_bytes;
    int bad_image;         /* a module image that was not an ELF file */
    int captures, graph_launches, graphs_live; /* stream captures ended, cuGraphLaunch calls,
                           * graph executables not yet destroyed */
} fake_stats;

typedef void (*fake_stats_fn)(fake_stats *s);
typedef const fake_launch *(*fake_launch_fn)(int i); /* NULL past the last */
typedef void (*fake_set_current_fn)(void *ctx);       /* any pointer names a context */

#endif
