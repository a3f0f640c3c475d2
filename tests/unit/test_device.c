/* The device table (src/ir/device.c): lookup by name, detection from the driver's figures,
 * the NVRTC architecture rule. */
#include <string.h>

#include "unit.h"

void test_device_table(void);

void test_device_table(void) {
    const mg_device *h100 = mg_device_find("h100"), *h200 = mg_device_find("H200");
    CHECK(h100 && h100 == mg_device_default() && h200 && h200 != h100);
    CHECK(!mg_device_find("a100") && !mg_device_find(NULL));
    mg_ctx ctx = {0};
    CHECK(mg_device_lookup(NULL, &ctx) == h100 && mg_device_lookup("h200", &ctx) == h200);
    CHECK(!mg_device_lookup("a100", &ctx) && strstr(ctx.msg, "'a100'") && strstr(ctx.msg, "h100, h200"));
    for (int i = 0; i < mg_n_devices; i++) { /* every row complete: the cost model divides by these */
        const mg_device *d = &mg_devices[i];
        CHECK(d->n_sm > 0 && d->smem_per_block > 0 && d->dmem > 0 && d->max_threads > 0 && d->l2_bytes > 0);
        CHECK(d->bw > 0 && d->tc_rate > 0 && d->scalar_rate > 0 && d->launch_us > 0 && d->arch[0]);
    }
    mg_device d;
    /* an H200 as the driver names it: its row, with the driver's own limits */
    mg_device_detect("NVIDIA H200", 9, 0, 132, 232448, 150000000000LL, &d);
    CHECK(!strcmp(d.name, "h200") && d.bw == h200->bw && d.dmem == 150000000000LL && !strcmp(d.arch, "sm_90a"));
    /* an H100 with fewer multiprocessors enabled (a PCIe part): the row's rates, the driver's SMs */
    mg_device_detect("NVIDIA H100 PCIe", 9, 0, 114, 232448, 0, &d);
    CHECK(!strcmp(d.name, "h100") && d.n_sm == 114 && d.dmem == h100->dmem);
    /* a GPU no row names: the default rates, the driver's limits, its own architecture */
    mg_device_detect("NVIDIA L4", 8, 9, 58, 101376, 24000000000LL, &d);
    CHECK(!strcmp(d.name, "detected") && d.n_sm == 58 && d.smem_per_block == 101376 && !strcmp(d.arch, "sm_89"));
    char buf[16];
    CHECK(!strcmp(mg_device_arch(9, 0, buf, (int)sizeof buf), "sm_90a"));
    CHECK(!strcmp(mg_device_arch(10, 0, buf, (int)sizeof buf), "sm_100"));
}
