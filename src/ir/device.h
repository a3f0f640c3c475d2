/* device: the one description of the GPUs mugen targets (issue #23). Every number about a GPU
 * lives in the mg_devices[] table of device.c: its limits (what a block graph is checked
 * against, Mirage Definition 2.1 (2)), its measured rates (the cost model's and the floors'),
 * its launch cost and its NVRTC architecture. No other file names a GPU model or its numbers:
 * they take an mg_device, chosen by name (`mugen search --device NAME`) or detected from the
 * GPU at run time (mg_device_detect). */
#ifndef MG_DEVICE_H
#define MG_DEVICE_H

#include <stdint.h>

#include "../base/base.h"

typedef struct mg_device {
    const char *name;       /* the --device name: "h100" */
    const char *model;      /* what the driver's device name holds for this GPU: "H100" */
    char arch[16];          /* NVRTC target: "sm_90a" */
    int n_sm;               /* multiprocessors */
    int64_t smem_per_block; /* bytes of shared memory one block may use (opt-in limit) */
    int64_t dmem;           /* bytes of device memory */
    int max_threads;        /* threads per block */
    int64_t l2_bytes;       /* L2 cache: the timing loop rotates input sets past twice this */
    /* measured rates (where each was measured is in device.c) */
    double bw;              /* device-memory bytes/s, read plus written, by a large copy */
    double tc_rate;         /* FLOP/s of f16/bf16 tensor-core matmuls (the cost model's) */
    double launch_us;       /* µs one kernel launch costs */
    /* the cost model's fitted terms (search/ cost model) */
    double iter_us;         /* µs each for-loop iteration adds per wave of blocks */
    double sm_share;        /* how far one SM may pull more than its share of bandwidth */
    double scalar_rate;     /* FLOP/s of mugen's kernel-level (scalar f32) matmul */
    double serial_us;       /* µs per element a reducing thread of a kernel-level sum reads */
} mg_device;

/* The table: mg_devices[0 .. mg_n_devices), mg_devices[0] the default target (H100). */
extern const mg_device mg_devices[];
extern const int mg_n_devices;
/* The default target: mg_devices[0]. */
const mg_device *mg_device_default(void);
/* The row named `name` (case-insensitive: "h100", "h200"), or NULL. */
const mg_device *mg_device_find(const char *name);
/* The row named `name` (NULL: the default), or NULL with an MG_ERR_INVALID message in ctx
 * naming the rows the table holds. */
const mg_device *mg_device_lookup(const char *name, mg_ctx *ctx);
/* The row for a GPU the driver reports: the row whose model the driver's name contains, its
 * limits then taken from the driver's own figures where given (> 0); a GPU no row names gets
 * the default row's rates with the driver's limits and arch (name "detected"). Writes *out. */
void mg_device_detect(const char *driver_name, int cc_major, int cc_minor, int n_sm, int64_t smem_optin,
                      int64_t mem_bytes, mg_device *out);
/* The NVRTC architecture for compute capability major.minor into buf (n bytes): "sm_90a" on
 * 9.0 (Hopper's wgmma and setmaxnreg need the a-target), else "sm_XY". Returns buf. */
const char *mg_device_arch(int cc_major, int cc_minor, char *buf, int n);

#endif
