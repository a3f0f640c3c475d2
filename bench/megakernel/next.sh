# For the next session's device time (issue #27): what session 24 built but could not run on
# the GPU. make test-gpu (with run-random: random programs as one launch under each schedule)
# and optimize --megakernel's GPU branch on GQA b=1 (times the three schedules beside the
# separate kernels and names the fastest). Needs `make gpu-carry` first.
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name --format=csv,noheader
.carry/bin/run-random 24 | grep -v "^ok"
MUGEN_CACHE_DIR=$(mktemp -d) MUGEN_SEARCH_CACHE=off .carry/bin/mugen optimize --backend gpu --megakernel --time-limit 30 examples/gqa_b1.mu 2>&1 | grep "optimize:"
