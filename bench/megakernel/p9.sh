# session 23: the library's watchdog check (a planted stall through mg_compile/mg_launch/
# mg_compiled_check) and Nsight Compute on the decode step's one launch
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name --format=csv,noheader
MUGEN_PLANT=stall MUGEN_WATCHDOG_MS=200 .carry/bin/run-program --reps 3 --megakernel examples/gqa_b1.mu 2>&1 | tail -2; echo "rc=$?"
.carry/bin/run-program --reps 100 --megakernel examples/gqa_b1.mu 2>&1 | tail -2
export MUGEN_CACHE_DIR=$(mktemp -d)
ncu --csv --clock-control none -k regex:kp -c 1 --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum \
  .carry/bin/mugen run --backend gpu --reps 1 --megakernel examples/decode_1b_b1.mu 2>/dev/null | grep '^"' | awk -F'","' '{print $(NF-2), $NF}' | sed 's/"//g'
