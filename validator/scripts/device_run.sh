#!/usr/bin/env bash
# Runs the validator's GPU programs on a lent GPU machine from binaries built elsewhere (the
# machine has CUDA but none of trainsim's build dependencies). Usage, from the repository root:
#   bash validator/scripts/device_run.sh BIN_DIR OUT_DIR [what...]
# BIN_DIR holds trainsim, trainsim-kernels-check and trainsim-kernels-bench; what is any of
# env check bench validate validate1b validate8b validate405b (default: the first five), or
# check:FILTER / bench:FILTER (only the kernels whose name contains FILTER). Logs and JSON land in
# OUT_DIR; TAG=x in the environment suffixes the file names (so that two runs of one step, say
# with TRAINSIM_ATTENTION_KERNEL=mma and =wgmma, keep both). CLUSTER=dgx-h200 GPU=h200 (defaults
# dgx-h100, h100) measure the validate jobs on another cluster preset and name the files after it.
set -uo pipefail
bin="$1"; out="$2"; shift 2
what="${*:-env check bench validate validate1b}"
mkdir -p "$out"
# NCCL and cuBLASLt: the CUDA toolkit's, else the ones PyTorch's wheels bring.
libs=/usr/local/cuda/lib64
for d in $(python3 -c 'import nvidia, os; p = os.path.dirname(nvidia.__path__[0]); print(" ".join(os.path.join(r) for r, _, f in os.walk(os.path.join(p, "nvidia")) if any(x.startswith(("libnccl.so", "libcublasLt.so")) for x in f)))' 2>/dev/null); do
  libs="$libs:$d"
done
export LD_LIBRARY_PATH="$libs:${LD_LIBRARY_PATH:-}"
t="${TAG:+_$TAG}"
cl="${CLUSTER:-dgx-h100}"; g="${GPU:-h100}"
for w in $what; do
  case "$w" in
    check:*)
      f="${w#check:}"; "$bin/trainsim-kernels-check" "$f" > "$out/kernels_check_$f$t.txt" 2>&1
      echo "kernels-check $f exit $?"; grep -E "FAIL|checks passed|skipped" "$out/kernels_check_$f$t.txt" | tail -30 ;;
    bench:*)
      f="${w#bench:}"; "$bin/trainsim-kernels-bench" --json "$out/kernels_bench_$f$t.json" "$f" > "$out/kernels_bench_$f$t.txt" 2>&1
      echo "kernels-bench $f exit $?"; grep -E "^$f|^[a-z_]*$f" "$out/kernels_bench_$f$t.txt" | tail -20 ;;
    env)
      { nvidia-smi; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
        ldd "$bin/trainsim" | grep -E "not found|cuda|nccl|cublas|mpi|boost"; } > "$out/env.txt" 2>&1
      cat "$out/env.txt" | tail -12 ;;
    check)
      "$bin/trainsim-kernels-check" > "$out/kernels_check$t.txt" 2>&1; echo "kernels-check exit $?"
      tail -40 "$out/kernels_check$t.txt" ;;
    bench)
      "$bin/trainsim-kernels-bench" --json "$out/kernels_bench$t.json" > "$out/kernels_bench$t.txt" 2>&1
      echo "kernels-bench exit $?"; tail -40 "$out/kernels_bench$t.txt" ;;
    validate)
      "$bin/trainsim" validate --model llama3-70b --cluster "$cl" --gpus 8 --tp 8 --micro-batch 1 \
        --global-batch 1 --seq-len 8192 --save "$out/${g}_llama3_70b_tp8$t.measurements.json" \
        --calibration-out "$out/$g$t.calibration.json" > "$out/validate$t.txt" 2> "$out/validate$t.log"
      echo "validate exit $?"; tail -5 "$out/validate$t.log"; grep -E "^layer|^iteration" "$out/validate$t.txt" ;;
    validate1b)
      # A model that trains on one GPU: the whole iteration is replayed too. The replay's host is a
      # C++ loop, so the simulator is given a matching per-kernel dispatch cost.
      "$bin/trainsim" validate --model llama3.2-1b --cluster "$cl" --gpus 1 --micro-batch 1 \
        --global-batch 4 --seq-len 4096 --kernel-dispatch 4us --save "$out/${g}_llama3.2_1b$t.measurements.json" \
        > "$out/validate1b$t.txt" 2> "$out/validate1b$t.log"
      echo "validate1b exit $?"; tail -5 "$out/validate1b$t.log"; grep -E "^layer|^iteration" "$out/validate1b$t.txt" ;;
    validate8b)
      "$bin/trainsim" validate --model llama3-8b --cluster "$cl" --gpus 2 --tp 2 --micro-batch 1 \
        --global-batch 1 --seq-len 8192 --save "$out/${g}_llama3_8b_tp2$t.measurements.json" \
        > "$out/validate8b$t.txt" 2> "$out/validate8b$t.log"
      echo "validate8b exit $?"; grep -E "^layer" "$out/validate8b$t.txt" ;;
    validate405b)
      "$bin/trainsim" validate --model llama3-405b --cluster "$cl" --gpus 8 --tp 8 --micro-batch 1 \
        --global-batch 1 --seq-len 8192 --save "$out/${g}_llama3_405b_tp8$t.measurements.json" \
        > "$out/validate405b$t.txt" 2> "$out/validate405b$t.log"
      echo "validate405b exit $?"; grep -E "^layer" "$out/validate405b$t.txt" ;;
  esac
done
