#include "planner/cli/usage.hpp"

#include "planner/cli/flags.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {

namespace {
const char* kHeader = "trainsim: simulate and plan distributed LLM training\n\nusage:\n";

const char* kNotes =
    "simulate and plan print the iteration time with its band (± the cross-validated error of the\n"
    "calibration or of the stack's accuracy suite) and mark a job outside that evidence EXTRAPOLATED;\n"
    "--strict makes that exit 2.\n"
    "Exit codes: 0 ok (also when a simulated fault stops the job: that is a result), 1 internal error,\n"
    "2 bad input, 3 configuration does not fit in memory (plan: none fits), 4 validate found no GPU,\n"
    "NCCL or MPI to run on, 5 validate --replay could not run the plan as simulated.\n";
}  // namespace

const std::vector<UsageSection>& usage_sections() {
  static const std::vector<UsageSection> sections = {
      {"simulate",
       "  trainsim simulate [JOB.json] (job flags) [--strict] [--json] [--trace FILE.json]\n"
       "                    [--fidelity representative|full] [--link-csv FILE.csv] [--iterations N (1..64)]\n"
       "                    [--plot FILE.svg]   Gantt timeline of the iteration (docs/plots.md)\n"
       "                    [--fault SPEC ...]   faults inside the simulation (docs/faults.md), repeatable:\n"
       "                      link:A/B@T[*F][,reroute=D]  cable between nodes A and B dies at T (or runs at\n"
       "                                                  F x capacity); traffic reroutes D later (default 2ms)\n"
       "                      uplink:R@T[*F][,reroute=D]  the same for GPU R's NIC link\n"
       "                      gpu:R@T                     GPU R dies at T: the job stops (exit code stays 0)\n"
       "                      slow-gpu:R[@T]*S            GPU R computes at S x speed from T (default 0)\n"
       "                      T, D: durations (2ms, 0); F, S in [1e-6, 1) (slower has failed);\n"
       "                      node names: as `trainsim topology` draws them\n"
       "                    [--export-chakra PREFIX]   with --fidelity full: the iteration as Chakra JSON,\n"
       "                      one file per rank, PREFIX.<rank>.json (docs/traces.md)\n"},
      {"simulate",
       "  trainsim simulate --chakra PATH --cluster C [--gpu G] [--recorded-gpu G] [--network flow|analytic]\n"
       "                    [--json] [--trace FILE.json] [--plot FILE.svg] [--link-csv FILE.csv]\n"
       "                    replay a Chakra execution trace (chakra_jsonizer JSON: PATH, or PATH.0.json,\n"
       "                    PATH.1.json, ... one per rank) on the cluster (docs/traces.md)\n"},
      {"plan",
       "  trainsim plan [JOB.json] (job flags) --model M --cluster C --gpus N|MIN:MAX --global-batch G\n"
       "                    (a job flag given pins that dimension: --tp 8 --schedule interleaved ...)\n"
       "                    [--top 10] [--objective time|cost|energy|goodput] [--tokens 15T]\n"
       "                    [--price-per-gpu-hour P] [--headroom 0.9] [--rerank 100] [--rerank-flow 10]\n"
       "                    [--threads T] [--max-micro-batch 16] [--max-vp 8]\n"
       "                    [--override cluster.FIELD=V|gpu.FIELD=V ...]\n"
       "                    [--emit megatron,nemo,deepspeed,torchtitan,slurm --out DIR] [--strict] [--json]\n"
       "                    [--plot FILE.svg]   time vs memory front (sweep: time vs GPUs) (docs/plots.md)\n"
       "                    search every parallel configuration; `mpirun -np K trainsim plan ...` shards it\n"
       "                    --cluster A,B,C: the same plan on each cluster side by side (days, cost, energy;\n"
       "                    --price-per-gpu-hour P or PA,PB,PC; --plot: bars, or time vs GPUs with MIN:MAX)\n"
       "                    goodput: ranks by expected days with failures; the reliability flags apply:\n"
       "                    [--runs N] [--checkpoint KIND] [--checkpoint-interval D|auto] [--spares N]\n"
       "                    [--elastic] [--broadcast-restore] [--failures default|FILE.json]\n"
       "                    [--rate KIND=PER_HOUR ...] [--failure-scale X] [--storage-write BW] [--storage-read BW]\n"},
      {"reliability",
       "  trainsim reliability [JOB.json] (job flags) --tokens 15T | --days 54 [--runs 1000]\n"
       "                    [--checkpoint sync|snapshot|async|in-memory] [--checkpoint-interval 10min|auto]\n"
       "                    [--spares N] [--elastic] [--broadcast-restore] [--failures default|FILE.json]\n"
       "                    [--rate KIND=PER_HOUR ...] [--failure-scale X] [--storage-write BW] [--storage-read BW]\n"
       "                    [--json]   Monte Carlo of the whole run under failures (docs/reliability.md)\n"},
      {"ui",
       "  trainsim ui [JOB.json | TRACE.json] (job flags) [--no-plans] [--threads N]\n"
       "                    [--screenshot FILE.png [--size 1600x1000] [--regions FILE.json]]\n"
       "                    the viewer: schedule, memory, topology, what-if, plans (docs/ui.md)\n"},
      {"calibrate",
       "  trainsim calibrate RUNS.json (job flags) [--out CAL.json] [--plot FILE.svg] [--only TEXT]\n"
       "                    [--skip-unusable] [--threads T] [--json]\n"
       "                    [--calibration BASE.json | --measurements MEASURED.json]   start from a kernel fit\n"
       "                    fit the end-to-end constants to logged runs (the job flags apply to every run:\n"
       "                    --stack S --cluster C --precision P); leave-one-out error, band and evidence go\n"
       "                    into CAL.json, which simulate, plan, reliability and ui take with --calibration\n"
       "                    (docs/calibration.md)\n"},
      {"collective",
       "  trainsim collective --cluster C --gpus N [--op all_reduce|all_gather|reduce_scatter|all_to_all|\n"
       "                    broadcast|reduce|send_recv] [--sizes 32K:8G]\n"
       "                    [--algo auto|ring|tree|nvls|hierarchical|halving_doubling|...]\n"
       "                    [--protocol auto|ll|ll128|simple] [--channels 1..64]   NCCL_PROTO, NCCL_MIN/MAX_NCHANNELS\n"
       "                    [--fidelity representative|full]   channel 0 stands for all (default), or every channel\n"
       "                    [--network flow|analytic] [--json]\n"},
      {"topology", "  trainsim topology --cluster C --gpus N [--dot FILE.dot] [--json]\n"},
      {"validate",
       "  trainsim validate [JOB.json] (job flags) [--reps N] [--save MEASURED.json]\n"
       "                    [--calibration-out CALIBRATION.json] [--json]    measure on this GPU, fit, report\n"
       "  trainsim validate (job flags) --measurements MEASURED.json [...]   fit and report saved measurements\n"
       "  mpirun -np N trainsim validate --replay iteration [JOB.json] (job flags) [--backend cpu|gpu]\n"
       "                    [--time-scale X] [--replay-timeout 60s] [--trace FILE.json] [--json]\n"
       "                    [--measurements MICRO.json] [--save MEASURED.json] [--calibration-out CAL.json]\n"
       "                    (the last three: gpu, the link fit)   every rank runs its\n"
       "                    slice of the simulated iteration; measured vs simulated per rank (docs/validator.md)\n"},
      {"kineto",
       "  trainsim kineto calibrate TRACE.json [--gpu G] [--out CALIBRATION.json] [--json]\n"
       "                    fit the compute model to a PyTorch profiler trace's kernel times (docs/kineto.md)\n"
       "  trainsim kineto compare TRACE.json [JOB.json] (job flags) [--json] [--plot FILE.svg]\n"
       "                    trace vs simulated timeline (the plot: both, one axis)\n"
       "  trainsim kineto export [JOB.json] (job flags) --out TRACE.json [--rank R]\n"
       "                    write the simulated iteration of rank R as a Kineto trace\n"},
      {"list",
       "  trainsim list models|gpus|clusters|calibrations|schedules|emitters|failures|failure-laws|checkpoints|"
       "stacks\n"},
      {"config", "  trainsim config explain        print the configuration reference\n"},
  };
  return sections;
}

const std::string& job_flags_usage() {
  static const std::string text =
      "job flags (simulate, plan, reliability, ui, calibrate, validate, kineto): every key of a job file is a\n"
      "flag (micro_batch is --micro-batch) and overrides the file; `trainsim config explain` gives each one:\n"
      "  the job      --model M --cluster C --gpus N --global-batch G [--gpu G] [--stack S]\n"
      "               [--calibration NAME|FILE.json] [--micro-batch B] [--seq-len S] [--seed N]\n"
      "  parallelism  [--tp T] [--pp P] [--dp D] [--vp V] [--sp [true|false]] [--pp-layout 7,8,8,7]\n"
      "               [--cp N] [--cp-algo ring|ulysses|hybrid] [--cp-ulysses N] [--ep N] [--etp N]\n"
      "               [--nvlink-segment N] [--schedule 1f1b|gpipe|interleaved|zb-h1|zb-h2|zb-v|breadth-first]\n"
      "  MoE          [--moe-dispatcher alltoall|allgather|flex] [--moe-balance aux_loss|aux_free]\n"
      "  sharding     [--zero 0..3] [--dp-shard N] [--optimizer-states fp32|bf16]\n"
      "               [--reshard-after-forward [true|false]] [--prefetch-layers N]\n"
      "  memory       [--recompute none|selective|full] [--recompute-layers N]\n"
      "               [--recompute-modules core_attn,layernorm,mlp,moe_act,moe,shared_experts,mla_up_proj,ops]\n"
      "               [--offload-optimizer] [--offload-activations] [--offload-activation-layers N]\n"
      "  overlap      [--tp-comm-overlap] [--overlap-param-gather] [--overlap-grad-reduce [true|false]]\n"
      "               [--overlap-p2p [true|false]] [--scatter-gather [true|false]] [--bucket-size 160MB]\n"
      "               [--dp-comm-weight W]\n"
      "  kernels      [--precision bf16|fp16|fp8|mxfp8|nvfp4] [--fp8-param-gather] [--attention flash|unfused]\n"
      "               [--bf16-first-layers N] [--bf16-last-layers N]\n"
      "               [--torch-compile] [--compile-loss [true|false]] [--kernel-dispatch 10us]\n"
      "               [--cuda-graph-scope full,attn,mlp,moe,moe_router,moe_preprocess,full_iteration]\n"
      "               [--network flow|analytic]\n";
  return text;
}

const std::string& common_usage() {
  static const std::string text =
      "Every command takes --help (its usage; also `trainsim help COMMAND`), --log CATEGORY=LEVEL[,...]:\n"
      "diagnostics on stderr, never in results; categories builder, network, planner, failure, engine or all;\n"
      "levels off (default), info, debug, trace (--log network=debug,planner=debug); the environment\n"
      "variable TRAINSIM_LOG does the same, --log wins; and --time-limit DURATION (default 1h): past it the\n"
      "run stops with exit 2.\n";
  return text;
}

void print_help(std::ostream& out) {
  out << kHeader;
  for (const UsageSection& s : usage_sections()) out << s.text;
  out << "  trainsim help [COMMAND]\n\n" << job_flags_usage() << "\n" << common_usage() << kNotes;
}

void print_command_help(std::ostream& out, const std::string& command) {
  std::string text;
  for (const UsageSection& s : usage_sections())
    if (s.command == command) text += s.text;
  if (text.empty())
    throw ConfigError(command, "unknown command",
                      "use simulate, plan, reliability, ui, calibrate, collective, topology, validate, kineto, list or "
                      "config; see `trainsim help`");
  out << kHeader << text << "\n";
  if (text.find("(job flags)") != std::string::npos) out << job_flags_usage() << "\n";
  out << common_usage() << kNotes;
}

}  // namespace trainsim::planner::cli
