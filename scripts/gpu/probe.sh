#!/usr/bin/env bash
# Exploration run (not a recording): scripts/gpu/reduce_probe.py, then ncu on each size's best.
set -uo pipefail
: "${OUT:?}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
timeout 300 python3 scripts/gpu/reduce_probe.py time "$OUT/probe.json" 2>&1 | tee "$OUT/probe.log"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__occupancy_limit_registers,sm__maximum_warps_per_active_cycle_pct
timeout 100 ncu --clock-control none --csv --log-file "$OUT/ncu_probe.csv" --metrics "$M" \
  --kernel-name regex:"probe|onepass|Reduce" python3 scripts/gpu/reduce_probe.py profile "$OUT/probe.json" > "$OUT/ncu_target.log" 2>&1
echo "ncu exit $?"; tail -3 "$OUT/ncu_target.log"
python3 - "$OUT/ncu_probe.csv" <<'PY'
import csv, sys, io
lines = open(sys.argv[1]).read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
rows = list(csv.DictReader(io.StringIO("\n".join(l for l in lines[start:] if l.startswith('"')))))
by = {}
for r in rows:
    by.setdefault(r["ID"], {"k": r["Kernel Name"][:60]})[r["Metric Name"]] = r["Metric Value"]
for i, d in by.items():
    print(i, d["k"], "|", " ".join(f"{k.split('__')[1][:28]}={v}" for k, v in d.items() if k != "k"))
PY
