/* codegen internals shared by emit.c and prelude.c. */
#ifndef MG_CG_INTERNAL_H
#define MG_CG_INTERNAL_H

#include "codegen.h"

extern const char cg_prelude_c[];
extern const char cg_prelude_cuda[], cg_prelude_cuda_mm[], cg_prelude_cuda_mm2[], cg_prelude_cuda_mm3[],
    cg_prelude_cuda_mm4[], cg_prelude_cuda_mm5[], cg_prelude_cuda_mm6[], cg_prelude_cuda_wg[], cg_prelude_cuda_wg1[], cg_prelude_cuda_wg2[],
    cg_prelude_cuda_wg3[], cg_prelude_cuda_task[], cg_prelude_cuda_mm7[];

#endif
