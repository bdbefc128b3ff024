#!/usr/bin/env bash
# The multi-rank replay's GPU path on a lent one-GPU machine (docs/validator.md), from binaries
# built elsewhere: BIN_DIR holds trainsim and lib/ (OpenMPI's libraries, loaded but not started
# without mpirun). Usage, from the repository root: bash validator/scripts/device_replay.sh BIN_DIR OUT_DIR
set -uo pipefail
bin="$1"; out="$2"
mkdir -p "$out"
libs=/usr/local/cuda/lib64:$bin/lib
for d in $(python3 -c 'import nvidia, os; p = os.path.dirname(nvidia.__path__[0]); print(" ".join(os.path.join(r) for r, _, f in os.walk(os.path.join(p, "nvidia")) if any(x.startswith(("libnccl.so", "libcublasLt.so")) for x in f)))' 2>/dev/null); do
  libs="$libs:$d"
done
export LD_LIBRARY_PATH="$libs:${LD_LIBRARY_PATH:-}"
T="$bin/trainsim"
ldd "$T" | grep "not found"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
one=(--model llama3.2-1b --cluster dgx-h100 --gpus 1 --micro-batch 1 --global-batch 4 --seq-len 4096 --kernel-dispatch 4us)
# 1. The GPU replay end to end on one rank: streams, cuBLASLt GEMMs, device waits, the report.
timeout 240 "$T" validate --replay iteration --backend gpu "${one[@]}" --trace "$out/replay1b.trace.json" \
  > "$out/replay1b.txt" 2> "$out/replay1b.log"
echo "replay1b exit $?"; tail -3 "$out/replay1b.log"; cat "$out/replay1b.txt"
# Per op name: simulated vs replayed time (from the trace's two timelines).
python3 - "$out/replay1b.trace.json" <<'PY'
import collections, json, sys
events = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
sim = {e["args"]["task"]: e for e in events if e["pid"] % 2 == 0}
rep = {e["args"]["task"]: e for e in events if e["pid"] % 2 == 1}
agg = collections.defaultdict(lambda: [0.0, 0.0, 0])
for k, e in sim.items():
    a = agg[e["name"].split(" ")[0]]
    a[0] += e["dur"]; a[1] += rep[k]["dur"]; a[2] += 1
for name, (s, r, n) in sorted(agg.items(), key=lambda x: -x[1][0]):
    print(f"{name:24s} x{n:<4d} sim {s / 1e3:8.2f} ms  replay {r / 1e3:8.2f} ms  {100 * (r / s - 1) if s else 0:+7.1f}%")
PY
# 2. Bad input on the GPU backend: two ranks in a world of one (2), a plan past 80 GB (3).
timeout 60 "$T" validate --replay iteration --backend gpu --model llama3-8b --cluster dgx-h100 --gpus 2 --tp 2 \
  --global-batch 2 --seq-len 4096; echo "world mismatch exit $?"
timeout 60 "$T" validate --replay iteration --backend gpu --model llama3-70b --cluster dgx-h100 --gpus 1 \
  --global-batch 1 --seq-len 4096; echo "does not fit exit $?"
# 3. The one-GPU iteration replay against the prediction (as in docs/validator.md).
timeout 300 bash validator/scripts/device_run.sh "$bin" "$out" validate1b
