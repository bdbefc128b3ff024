#include "validator/gpu/replay.hpp"

#include <cmath>
#include <functional>
#include <memory>

#include "kernels/embedding.hpp"
#include "kernels/kernels.hpp"
#include "sim/error.hpp"
#include "validator/gpu/buffers.hpp"
#include "validator/gpu/check.hpp"
#include "validator/gpu/gemm.hpp"
#include "validator/gpu/timing.hpp"

namespace trainsim::validator::gpu {

namespace calibration = models::calibration;

namespace {
using kernels::bf16;
using models::llm::KernelOp;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// One kernel of the sequence, ready to launch again and again on its own buffers.
struct Step {
  KernelOp op;
  int launches = 1;
  std::function<void(cudaStream_t)> run;
};

// Builds the steps of a layer and owns their buffers.
class LayerReplay {
 public:
  LayerReplay(const models::workload::Job& job, cudaStream_t s) : job_(job), s_(s) {
    const auto& m = job.model;
    T_ = job.micro_batch * job.seq_len;
    Tn_ = job.sp ? T_ / job.tp : T_;
    h_ = m.hidden;
    d_ = m.head_dim();
    heads_ = m.heads / job.tp;
    // Megatron replicates the KV heads when TP exceeds them.
    kv_ = std::max<int64_t>(1, m.kv_heads_or_heads() / job.tp);
    f_ = m.ffn_hidden / job.tp;
    gates_ = m.activation == "swiglu" ? 2 : 1;
  }

  std::vector<Step> steps(const models::llm::Kernels& seq) {
    std::vector<Step> out;
    for (const KernelOp& op : seq) out.push_back(step(op));
    return out;
  }

 private:
  // A bf16 buffer of `elems` random values (scale: magnitude), owned by the replay.
  bf16* bf(int64_t elems, float scale = 1.0f) {
    bufs_.push_back(std::make_unique<DeviceBuffer>(static_cast<size_t>(elems) * 2));
    fill_bf16(bufs_.back()->get(), static_cast<size_t>(elems), scale, seed_++, s_);
    return bufs_.back()->as<bf16>();
  }
  float* f32(int64_t elems, float scale = 1.0f) {
    bufs_.push_back(std::make_unique<DeviceBuffer>(static_cast<size_t>(elems) * 4));
    fill_f32(bufs_.back()->get(), static_cast<size_t>(elems), scale, seed_++, s_);
    return bufs_.back()->as<float>();
  }
  void* raw(size_t bytes) {
    bufs_.push_back(std::make_unique<DeviceBuffer>(bytes));
    return bufs_.back()->get();
  }
  // Token ids spread over the vocabulary (a fixed stride through it), copied to the device.
  void fill_ids(int32_t* ids, int64_t n, int64_t vocab) {
    std::vector<int32_t> host(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) host[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7919) % vocab);
    TRAINSIM_CUDA(cudaMemcpy(ids, host.data(), host.size() * 4, cudaMemcpyHostToDevice));
  }

  Step step(const KernelOp& op) {
    Step st;
    st.op = op;
    const std::string& n = op.name;
    const bool rms = job_.model.norm == "rmsnorm";
    const int hidden = static_cast<int>(h_);
    const float p = job_.model.dropout ? 0.1f : 0.0f;
    if (op.kind == KernelOp::Kind::kGemm) {
      auto plan = std::make_shared<GemmRunner::Plan>(gemm_.plan(op.gemm, models::llm::to_string(op.layout), false, 1));
      plans_.push_back(plan);
      bf16* x = bf(op.gemm.m * op.gemm.k * op.gemm.batch);
      bf16* w = bf(op.gemm.k * op.gemm.n * op.gemm.batch, 0.05f);
      bf16* c = bf(op.gemm.m * op.gemm.n * op.gemm.batch);
      st.run = [this, plan, x, w, c](cudaStream_t s) { gemm_.run(*plan, x, w, c, 0, s); };
    } else if (ends_with(n, ".residual.fwd")) {
      bf16 *a = bf(Tn_ * h_), *b = bf(Tn_ * h_), *y = bf(Tn_ * h_);
      const int64_t rows = Tn_;
      if (p > 0.0f)
        st.run = [=](cudaStream_t s) {
          TRAINSIM_CUDA(kernels::bias_dropout_residual_fwd(a, nullptr, b, y, rows, hidden, p, 1234, s));
        };
      else
        st.run = [=](cudaStream_t s) { TRAINSIM_CUDA(kernels::residual_add(a, b, y, rows * hidden, s)); };
    } else if (ends_with(n, ".residual.bwd")) {
      bf16 *a = bf(Tn_ * h_), *b = bf(Tn_ * h_), *y = bf(Tn_ * h_);
      const int64_t elems = Tn_ * h_;
      if (p > 0.0f)
        st.run = [=](cudaStream_t s) { TRAINSIM_CUDA(kernels::dropout_bwd(a, y, elems, p, 1234, s)); };
      else
        st.run = [=](cudaStream_t s) { TRAINSIM_CUDA(kernels::residual_add(a, b, y, elems, s)); };
    } else if (ends_with(n, ".norm.fwd")) {
      bf16 *x = bf(Tn_ * h_), *w = bf(h_), *b = bf(h_), *y = bf(Tn_ * h_);
      float *mean = f32(Tn_), *rstd = f32(Tn_);
      const int64_t rows = Tn_;
      if (rms)
        st.run = [=](cudaStream_t s) { TRAINSIM_CUDA(kernels::rmsnorm_fwd(x, w, y, rstd, rows, hidden, 1e-5f, s)); };
      else
        st.run = [=](cudaStream_t s) {
          TRAINSIM_CUDA(kernels::layernorm_fwd(x, w, b, y, mean, rstd, rows, hidden, 1e-5f, s));
        };
    } else if (ends_with(n, ".norm.bwd")) {
      bf16 *dy = bf(Tn_ * h_), *x = bf(Tn_ * h_), *w = bf(h_), *dx = bf(Tn_ * h_);
      float *mean = f32(Tn_, 0.1f), *rstd = f32(Tn_), *dw = f32(h_), *db = f32(h_);
      const int64_t rows = Tn_;
      if (rms)
        st.run = [=](cudaStream_t s) { TRAINSIM_CUDA(kernels::rmsnorm_bwd(dy, x, w, rstd, dx, dw, rows, hidden, s)); };
      else
        st.run = [=](cudaStream_t s) {
          TRAINSIM_CUDA(kernels::layernorm_bwd(dy, x, w, mean, rstd, dx, dw, db, rows, hidden, s));
        };
    } else if (n == "attn.rope.fwd" || n == "attn.rope.bwd") {
      bf16 *q = bf(T_ * heads_ * d_), *k = bf(T_ * kv_ * d_);
      const int64_t tokens = T_;
      const int seq = static_cast<int>(job_.seq_len), hq = static_cast<int>(heads_), hk = static_cast<int>(kv_),
                d = static_cast<int>(d_);
      const bool fwd = n == "attn.rope.fwd";
      // q and k in one launch, as the simulator prices it (one memory-bound kernel over both).
      st.run = [=](cudaStream_t s) {
        if (fwd) {
          TRAINSIM_CUDA(kernels::rope_qk_fwd(q, q, k, k, tokens, seq, hq, hk, d, 10000.0f, s));
        } else {
          TRAINSIM_CUDA(kernels::rope_qk_bwd(q, q, k, k, tokens, seq, hq, hk, d, 10000.0f, s));
        }
      };
    } else if (n == "attn.core.fwd" || n == "attn.core.bwd") {
      // Head dims other than 64 and 128 were refused by measure() before anything ran.
      kernels::AttentionShape a;
      a.batch = static_cast<int>(job_.micro_batch);
      a.seq = static_cast<int>(job_.seq_len);
      a.q_heads = static_cast<int>(heads_);
      a.kv_heads = static_cast<int>(kv_);
      a.head_dim = static_cast<int>(d_);
      const float scale = 1.0f / std::sqrt(static_cast<float>(d_));
      bf16 *q = bf(T_ * heads_ * d_), *k = bf(T_ * kv_ * d_), *v = bf(T_ * kv_ * d_), *o = bf(T_ * heads_ * d_);
      float* lse = f32(job_.micro_batch * heads_ * job_.seq_len);
      if (n == "attn.core.fwd") {
        st.run = [=](cudaStream_t s) { TRAINSIM_CUDA(kernels::attention_fwd(q, k, v, o, lse, a, scale, s)); };
      } else {
        // The backward needs a consistent forward (its lse): run it once now.
        TRAINSIM_CUDA(kernels::attention_fwd(q, k, v, o, lse, a, scale, s_));
        bf16 *dout = bf(T_ * heads_ * d_), *dq = bf(T_ * heads_ * d_), *dk = bf(T_ * kv_ * d_), *dv = bf(T_ * kv_ * d_);
        const size_t ws_bytes = kernels::attention_bwd_workspace_bytes(a);
        void* ws = raw(ws_bytes);
        st.run = [=](cudaStream_t s) {
          TRAINSIM_CUDA(kernels::attention_bwd(q, k, v, o, dout, lse, dq, dk, dv, ws, ws_bytes, a, scale, s));
        };
      }
    } else if (n == "mlp.act.fwd" || n == "mlp.act.bwd") {
      const int64_t rows = T_;
      const int ffn = static_cast<int>(f_);
      bf16 *in = bf(T_ * gates_ * f_), *out = bf(T_ * f_), *din = bf(T_ * gates_ * f_);
      const bool fwd = n == "mlp.act.fwd";
      if (gates_ == 2)
        st.run = [=](cudaStream_t s) {
          TRAINSIM_CUDA(fwd ? kernels::swiglu_fwd(in, out, rows, ffn, s)
                            : kernels::swiglu_bwd(out, in, din, rows, ffn, s));
        };
      else
        st.run = [=](cudaStream_t s) {
          TRAINSIM_CUDA(fwd ? kernels::gelu_fwd(in, out, rows * ffn, s)
                            : kernels::gelu_bwd(out, in, din, rows * ffn, s));
        };
    } else if (n == "embed.gather.fwd" || n == "embed.scatter.bwd") {
      const int64_t vocab = (job_.model.vocab + job_.tp - 1) / job_.tp, tokens = T_;
      int32_t* ids = static_cast<int32_t*>(raw(static_cast<size_t>(T_) * 4));
      fill_ids(ids, T_, vocab);
      if (n == "embed.gather.fwd") {
        bf16 *table = bf(vocab * h_), *out = bf(T_ * h_);
        st.run = [=](cudaStream_t s) { TRAINSIM_CUDA(kernels::embedding_fwd(ids, table, out, tokens, hidden, s)); };
      } else {
        bf16* dout = bf(T_ * h_);
        float* dtable = f32(vocab * h_, 0.01f);
        st.run = [=](cudaStream_t s) { TRAINSIM_CUDA(kernels::embedding_bwd(ids, dout, dtable, tokens, hidden, s)); };
      }
    } else if (n == "embed.position.fwd" && job_.model.position == "learned") {
      bf16 *a = bf(T_ * h_), *b = bf(T_ * h_);
      const int64_t elems = T_ * h_;
      st.run = [=](cudaStream_t s) { TRAINSIM_CUDA(kernels::residual_add(a, b, a, elems, s)); };
    } else if (n == "head.loss_max.fwd") {
      // Fused vocab-parallel cross-entropy: the model's three forward passes over the logits and
      // its backward are one kernel here (the other loss steps are then empty).
      const int vocab = static_cast<int>((job_.model.vocab + job_.tp - 1) / job_.tp);
      const int64_t rows = T_;
      int32_t* targets = static_cast<int32_t*>(raw(static_cast<size_t>(T_) * 4));
      fill_ids(targets, T_, vocab);
      bf16 *logits = bf(T_ * vocab), *dlogits = bf(T_ * vocab);
      float* loss = f32(T_);
      st.run = [=](cudaStream_t s) {
        TRAINSIM_CUDA(kernels::cross_entropy_fwd_bwd(logits, targets, loss, dlogits, rows, vocab, 1.0f, s));
      };
    } else if (n == "embed.position.fwd" || n == "embed.reduce.bwd" || n == "head.loss_sum.fwd" ||
               n == "head.loss.fwd" || n == "head.loss.bwd") {
      st.launches = 0;  // fused into the kernel of a neighbouring step (or no learned positions)
      st.run = [](cudaStream_t) {};
    } else {
      throw ConfigError("attention", "the layer replay has no kernel for \"" + n + "\" (unfused attention)",
                        "validate with --attention flash");
    }
    return st;
  }

  const models::workload::Job& job_;
  cudaStream_t s_;
  int64_t T_ = 0, Tn_ = 0, h_ = 0, d_ = 0, heads_ = 0, kv_ = 0, f_ = 0, gates_ = 1;
  uint64_t seed_ = 77;
  GemmRunner gemm_;
  std::vector<std::shared_ptr<GemmRunner::Plan>> plans_;
  std::vector<std::unique_ptr<DeviceBuffer>> bufs_;

 public:
  ~LayerReplay() {
    for (auto& p : plans_) gemm_.destroy(*p);
  }
};

calibration::Measurement record_of(const KernelOp& op, int launches) {
  calibration::Measurement m;
  m.name = op.name;
  m.kernels = launches;
  switch (op.kind) {
    case KernelOp::Kind::kGemm:
      m.kind = calibration::OpKind::kGemm;
      m.m = op.gemm.m;
      m.n = op.gemm.n;
      m.k = op.gemm.k;
      m.batch = op.gemm.batch;
      m.flops = op.flops;
      break;
    case KernelOp::Kind::kMemory:
      m.kind = calibration::OpKind::kMemory;
      m.bytes = static_cast<int64_t>(op.bytes);
      break;
    case KernelOp::Kind::kAttentionFwd:
      m.kind = calibration::OpKind::kAttentionFwd;
      m.flops = op.flops;
      break;
    case KernelOp::Kind::kAttentionBwd:
      m.kind = calibration::OpKind::kAttentionBwd;
      m.flops = op.flops;
      break;
  }
  return m;
}
}  // namespace

ReplayResult replay_layer(const models::workload::Job& job, const models::llm::LayerKernels& lk, cudaStream_t s,
                          int warmup, int reps) {
  const models::llm::Kernels seq = models::llm::layer_sequence(lk);
  LayerReplay replay(job, s);
  std::vector<Step> steps = replay.steps(seq);
  TRAINSIM_CUDA(cudaStreamSynchronize(s));

  // Every repetition is enqueued without waiting for the previous one, as a training loop runs:
  // the host stays ahead of the GPU, so no kernel waits for its launch. Events between kernels
  // give each kernel's time; the first and last give the layer's.
  const size_t n = steps.size();
  for (int i = 0; i < warmup; ++i)
    for (auto& st : steps) st.run(s);
  std::vector<std::vector<cudaEvent_t>> ev(static_cast<size_t>(reps), std::vector<cudaEvent_t>(n + 1));
  for (auto& rep : ev)
    for (auto& e : rep) TRAINSIM_CUDA(cudaEventCreate(&e));
  for (auto& rep : ev) {
    TRAINSIM_CUDA(cudaEventRecord(rep[0], s));
    for (size_t i = 0; i < n; ++i) {
      steps[i].run(s);
      TRAINSIM_CUDA(cudaEventRecord(rep[i + 1], s));
    }
  }
  TRAINSIM_CUDA(cudaStreamSynchronize(s));
  std::vector<std::vector<double>> per_op(n);
  std::vector<double> whole;
  auto elapsed = [](cudaEvent_t a, cudaEvent_t b) {
    float ms = 0.0f;
    TRAINSIM_CUDA(cudaEventElapsedTime(&ms, a, b));
    return static_cast<double>(ms) * 1e-3;
  };
  for (auto& rep : ev) {
    for (size_t i = 0; i < n; ++i) per_op[i].push_back(elapsed(rep[i], rep[i + 1]));
    whole.push_back(elapsed(rep[0], rep[n]));
    for (auto& e : rep) cudaEventDestroy(e);
  }

  ReplayResult out;
  double flops = 0.0;
  for (size_t i = 0; i < n; ++i) {
    calibration::Measurement m = record_of(steps[i].op, steps[i].launches);
    m.name = "replay." + m.name;
    m.measured_s = calibration::median(per_op[i]);
    m.reps = reps;
    flops += steps[i].op.flops;
    out.ops.push_back(m);
  }
  out.layer.name = "layer";
  out.layer.kind = calibration::OpKind::kLayer;
  out.layer.flops = flops;
  out.layer.kernels = 0;
  for (const auto& st : steps) out.layer.kernels += st.launches;
  out.layer.measured_s = calibration::median(whole);
  out.layer.reps = reps;
  out.scope = "one decoder layer of TP rank 0 of " + std::to_string(job.tp) + " (forward + backward, micro-batch " +
              std::to_string(job.micro_batch) + ", seq " + std::to_string(job.seq_len) + ", " +
              std::to_string(steps.size()) + " kernels back to back on one GPU; TP collectives not executed)";
  return out;
}

calibration::Measurement replay_iteration(const models::workload::Job& job, cudaStream_t s, int warmup, int reps,
                                          std::string* scope) {
  using models::llm::Kernels;
  const models::llm::LayerShape shape{job.micro_batch, job.seq_len, job.tp, job.sp,
                                      job.attention == models::workload::Attention::kFlash};
  const models::llm::LayerKernels lk = models::llm::layer_kernels(job.model, shape);
  const models::llm::EdgeKernels ek = models::llm::edge_kernels(job.model, shape);
  auto join = [](std::initializer_list<const Kernels*> parts) {
    Kernels out;
    for (const Kernels* p : parts) out.insert(out.end(), p->begin(), p->end());
    return out;
  };
  const Kernels fwd = join({&lk.attn.pre_fwd, &lk.attn.main_fwd, &lk.mlp.pre_fwd, &lk.mlp.main_fwd});
  const Kernels bwd = join({&lk.mlp.main_dgrad, &lk.mlp.main_wgrad, &lk.mlp.pre_bwd, &lk.attn.main_dgrad,
                            &lk.attn.main_wgrad, &lk.attn.pre_bwd});
  const Kernels head = join({&ek.head_fwd, &ek.head_dgrad, &ek.head_wgrad});

  LayerReplay replay(job, s);
  const std::vector<Step> embed_fwd = replay.steps(ek.embed_fwd), layer_fwd = replay.steps(fwd),
                          head_steps = replay.steps(head), layer_bwd = replay.steps(bwd),
                          embed_bwd = replay.steps(ek.embed_bwd);
  // AdamW over every parameter of the replica: fp32 master, m and v, bf16 gradient and weight.
  const int64_t n = static_cast<int64_t>(job.model.parameters() / static_cast<double>(job.tp * job.pp));
  DeviceBuffer master(static_cast<size_t>(n) * 4), m1(static_cast<size_t>(n) * 4), m2(static_cast<size_t>(n) * 4),
      grad(static_cast<size_t>(n) * 2), weight(static_cast<size_t>(n) * 2);
  fill_f32(master.get(), static_cast<size_t>(n), 0.02f, 901, s);
  fill_f32(m1.get(), static_cast<size_t>(n), 0.001f, 902, s);
  fill_f32(m2.get(), static_cast<size_t>(n), 0.0001f, 903, s);
  fill_bf16(grad.get(), static_cast<size_t>(n), 0.01f, 904, s);
  TRAINSIM_CUDA(cudaStreamSynchronize(s));

  const int64_t layers = job.model.layers / job.pp;
  double flops = 0.0;
  int launches = 0;
  auto count = [&](const std::vector<Step>& steps, int64_t times) {
    for (const Step& st : steps) {
      flops += st.op.flops * static_cast<double>(times * job.microbatches);
      launches += st.launches * static_cast<int>(times * job.microbatches);
    }
  };
  count(embed_fwd, 1);
  count(layer_fwd, layers);
  count(head_steps, 1);
  count(layer_bwd, layers);
  count(embed_bwd, 1);
  ++launches;  // the optimizer step

  auto run = [&](const std::vector<Step>& steps) {
    for (const Step& st : steps) st.run(s);
  };
  int step = 1;
  auto iteration = [&] {
    for (int64_t mb = 0; mb < job.microbatches; ++mb) {
      run(embed_fwd);
      for (int64_t l = 0; l < layers; ++l) run(layer_fwd);
      run(head_steps);
      for (int64_t l = 0; l < layers; ++l) run(layer_bwd);
      run(embed_bwd);
    }
    kernels::AdamParams a;
    a.step = step++;
    TRAINSIM_CUDA(kernels::adamw_step(master.as<float>(), m1.as<float>(), m2.as<float>(), grad.as<bf16>(),
                                      weight.as<bf16>(), n, a, s));
  };
  for (int i = 0; i < warmup; ++i) iteration();
  std::vector<cudaEvent_t> ev(static_cast<size_t>(reps) + 1);
  for (auto& e : ev) TRAINSIM_CUDA(cudaEventCreate(&e));
  TRAINSIM_CUDA(cudaEventRecord(ev[0], s));
  for (int r = 0; r < reps; ++r) {
    iteration();
    TRAINSIM_CUDA(cudaEventRecord(ev[static_cast<size_t>(r) + 1], s));
  }
  TRAINSIM_CUDA(cudaStreamSynchronize(s));
  std::vector<double> times;
  for (size_t r = 0; r < static_cast<size_t>(reps); ++r) {
    float ms = 0.0f;
    TRAINSIM_CUDA(cudaEventElapsedTime(&ms, ev[r], ev[r + 1]));
    times.push_back(static_cast<double>(ms) * 1e-3);
  }
  for (auto& e : ev) cudaEventDestroy(e);

  calibration::Measurement m;
  m.name = "iteration";
  m.kind = calibration::OpKind::kIteration;
  m.flops = flops;
  m.kernels = launches;
  m.measured_s = calibration::median(std::move(times));
  m.reps = reps;
  if (scope)
    *scope = std::string(job.dp > 1 ? "one data-parallel replica's iteration (gradient all-reduce not executed)"
                                    : "the whole iteration") +
             ": " + std::to_string(job.microbatches) + " micro-batches of " + std::to_string(job.micro_batch) + " x " +
             std::to_string(job.seq_len) + " tokens through " + std::to_string(layers) +
             " layers, embedding, LM head and loss, then AdamW over " + std::to_string(n) + " parameters; " +
             std::to_string(launches) + " kernels back to back";
  return m;
}

}  // namespace trainsim::validator::gpu
