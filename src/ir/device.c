/* device: the GPU table (device.h). Sources of the numbers:
 *   - limits: CUDA's device attributes as the driver reports them on the device machine
 *     (H100 80GB HBM3: 132 SMs, 227 KiB opt-in shared memory a block, 1024 threads; H200: the
 *     same chip, 141 GB of HBM3e), L2 as PyTorch reported it (50 MB H100, 60 MB H200);
 *   - bw: a large device-to-device copy, bytes read plus written: 3.0 TB/s on the H100, 4.3 on
 *     the H200 (/work/.library/device/KINDS.md, 2026-11-13 and 2026-11-04);
 *   - tc_rate: 660 TFLOP/s, the f16 tensor-core rate measured on the H100 (docs/notes); the H200
 *     has the H100's arithmetic (its datasheet), so the same;
 *   - launch_us, iter_us, sm_share, scalar_rate, serial_us: fitted on the H100
 *     (docs/notes/2026-11-22-hopper-codegen.md: grid 128 with 8, 16, 32, 64 iterations took
 *     29.7, 28.1, 25.6, 34.7 µs; 2x4096 @ 4096x6144 by the kernel-level matmul in 294 µs,
 *     0.34 TFLOP/s); the H200 row keeps them until it is measured. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "device.h"

const mg_device mg_devices[] = {
    {.name = "h100", .model = "H100", .arch = "sm_90a", .n_sm = 132, .smem_per_block = 227 * 1024,
     .dmem = 80LL << 30, .max_threads = 1024, .l2_bytes = 50000000, .bw = 3000e9, .tc_rate = 660e12,
     .launch_us = 2, .iter_us = 0.05, .sm_share = 1.5, .scalar_rate = 0.34e12, .serial_us = 0.5e-3},
    {.name = "h200", .model = "H200", .arch = "sm_90a", .n_sm = 132, .smem_per_block = 227 * 1024,
     .dmem = 141LL * 1000000000, .max_threads = 1024, .l2_bytes = 60000000, .bw = 4300e9, .tc_rate = 660e12,
     .launch_us = 2, .iter_us = 0.05, .sm_share = 1.5, .scalar_rate = 0.34e12, .serial_us = 0.5e-3},
};
const int mg_n_devices = (int)(sizeof mg_devices / sizeof mg_devices[0]);

const mg_device *mg_device_default(void) { return &mg_devices[0]; }

const mg_device *mg_device_find(const char *name) {
    for (int i = 0; name && i < mg_n_devices; i++)
        if (!strcasecmp(name, mg_devices[i].name)) return &mg_devices[i];
    return NULL;
}

const mg_device *mg_device_lookup(const char *name, mg_ctx *ctx) {
    const mg_device *d = name ? mg_device_find(name) : mg_device_default();
    if (d) return d;
    char names[128] = "";
    for (int i = 0, n = 0; i < mg_n_devices && n < (int)sizeof names; i++)
        n += snprintf(names + n, sizeof names - (size_t)n, "%s%s", i ? ", " : "", mg_devices[i].name);
    ctx_err(ctx, MG_ERR_INVALID, "unknown device '%s'; mugen knows %s", name, names);
    return NULL;
}

const char *mg_device_arch(int cc_major, int cc_minor, char *buf, int n) {
    if (cc_major == 9 && cc_minor == 0) snprintf(buf, (size_t)n, "sm_90a");
    else snprintf(buf, (size_t)n, "sm_%d%d", cc_major % 100, cc_minor % 10);
    return buf;
}

void mg_device_detect(const char *driver_name, int cc_major, int cc_minor, int n_sm, int64_t smem_optin,
                      int64_t mem_bytes, mg_device *out) {
    const mg_device *row = NULL;
    for (int i = 0; driver_name && i < mg_n_devices && !row; i++)
        if (strstr(driver_name, mg_devices[i].model)) row = &mg_devices[i];
    *out = row ? *row : *mg_device_default();
    if (!row) {
        out->name = "detected", out->model = "unknown GPU";
        mg_device_arch(cc_major, cc_minor, out->arch, (int)sizeof out->arch);
    }
    if (n_sm > 0) out->n_sm = n_sm;
    if (smem_optin > 0) out->smem_per_block = smem_optin;
    if (mem_bytes > 0) out->dmem = mem_bytes;
}
