#!/bin/sh
# ncu evidence for the cases outside 1.5x of the floor: every kernel of the search's best,
# plus PyTorch's FlashAttention kernel on the GQA b=8 shape
export LD_LIBRARY_PATH=$PWD/.carry/lib
M=${M:-.carry/bin/mugen}
MET=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio
while read -r c u; do
  echo "== $c $u"
  ncu --metrics $MET $M run --reps 0 examples/$c.mu $u 2>&1 | grep -vE "^==PROF==|^mugen|^  [A-Z]" | grep -E "k[0-9]+_|  [a-z]" 
done <<'L'
gqa_b8 bench/searched/gqa_b8/ugraph-35.mu
gqa_b1 bench/searched/gqa_b1/ugraph-43.mu
qknorm_b8 bench/searched/qknorm_b8/ugraph-1.mu
qknorm_b1 bench/searched/qknorm_b1/ugraph-43.mu
lora bench/searched/lora/ugraph-17.mu
L
echo "== torch flash sdpa gqa_b8 shape"
ncu --metrics $MET -k regex:flash_fwd_splitkv_kernel --launch-skip 2 --launch-count 1 python3 -c "
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
q=torch.rand(1,16,256,64,device='cuda',dtype=torch.float16);k=torch.rand(1,16,4096,64,device='cuda',dtype=torch.float16);v=torch.rand_like(k)
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    for _ in range(5): torch.nn.functional.scaled_dot_product_attention(q,k,v,scale=1.0)
torch.cuda.synchronize()" 2>&1 | grep -vE "^==PROF==" | grep -E "flash|  [a-z]"
