#!/usr/bin/env python3
"""A torchtitan-style Llama 3 training step on one GPU, timed and profiled (docs/validator.md,
"PyTorch-native step"). Evidence for the torchtitan stack preset's kernel and host constants,
measured where no torchtitan checkout is: the model is written here the way torchtitan's
llama3 model is (RMSNorm, complex RoPE, SDPA causal attention with repeated kv heads, SwiGLU,
float32 loss), wrapped in FSDP2 (fully_shard per block and at the root, bf16 parameters, fp32
reduce) on a world of one, with fused AdamW. Each configuration runs warm-up steps, then timed
steps (CUDA events around each step, synchronized after it, so the host's time to its first
launch is in; median), then one profiled step whose kernels are summed by category. The
selective policy is torchtitan's (save matmul outputs but every second one, and attention), with
cuDNN's SDPA op in the save list too (the 2024 list predates it).

Usage: python3 torch_native_step.py OUT.json [--layers 2,6] [--modes eager,compile] [--ac none|selective|full]
       [--sdpa default|flash|cudnn] [--seq 8192] [--batch 2]
"""
import argparse
import json
import os
import re
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        # torchtitan's eager RMSNorm: float32 math, cast back.
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rope_freqs(head_dim, seq, theta=500000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    t = torch.arange(seq, dtype=torch.float32)
    return torch.polar(torch.ones(seq, head_dim // 2), torch.outer(t, freqs))


def apply_rope(xq, xk, freqs):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    f = freqs.view(1, xq_.shape[1], 1, xq_.shape[-1])
    return (torch.view_as_real(xq_ * f).flatten(3).type_as(xq), torch.view_as_real(xk_ * f).flatten(3).type_as(xk))


class Attention(nn.Module):
    def __init__(self, dim, n_heads, n_kv):
        super().__init__()
        self.n_heads, self.n_kv, self.hd = n_heads, n_kv, dim // n_heads
        self.wq = nn.Linear(dim, n_heads * self.hd, bias=False)
        self.wk = nn.Linear(dim, n_kv * self.hd, bias=False)
        self.wv = nn.Linear(dim, n_kv * self.hd, bias=False)
        self.wo = nn.Linear(n_heads * self.hd, dim, bias=False)

    def forward(self, x, freqs):
        b, s, _ = x.shape
        xq = self.wq(x).view(b, s, self.n_heads, self.hd)
        xk = self.wk(x).view(b, s, self.n_kv, self.hd)
        xv = self.wv(x).view(b, s, self.n_kv, self.hd)
        xq, xk = apply_rope(xq, xk, freqs)
        rep = self.n_heads // self.n_kv
        # torchtitan's repeat_kv: expand + reshape (a copy), then SDPA on (b, heads, s, d).
        xk = xk[:, :, :, None, :].expand(b, s, self.n_kv, rep, self.hd).reshape(b, s, self.n_heads, self.hd)
        xv = xv[:, :, :, None, :].expand(b, s, self.n_kv, rep, self.hd).reshape(b, s, self.n_heads, self.hd)
        out = F.scaled_dot_product_attention(xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2), is_causal=True)
        return self.wo(out.transpose(1, 2).contiguous().view(b, s, -1))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, dim, n_heads, n_kv, hidden):
        super().__init__()
        self.attention_norm, self.ffn_norm = RMSNorm(dim), RMSNorm(dim)
        self.attention = Attention(dim, n_heads, n_kv)
        self.feed_forward = FeedForward(dim, hidden)

    def forward(self, x, freqs):
        h = x + self.attention(self.attention_norm(x), freqs)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, layers, dim=4096, n_heads=32, n_kv=8, hidden=14336, vocab=128256, seq=8192):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Block(dim, n_heads, n_kv, hidden) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        self.register_buffer("freqs", rope_freqs(dim // n_heads, seq), persistent=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, self.freqs)
        return self.output(self.norm(h))


def selective_ac_context():
    """torchtitan's per-op selective activation checkpointing: save the outputs of matmuls and
    attention, recompute everything else, and recompute every second matmul."""
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    ops = torch.ops.aten
    save = {ops.mm.default, ops.max.default}
    for name in ("_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention",
                 "_scaled_dot_product_cudnn_attention"):
        if hasattr(ops, name):
            save.add(getattr(ops, name).default)

    def context_fn():
        meta = {}

        def policy(ctx, func, *args, **kwargs):
            key = ("recompute" if ctx.is_recompute else "forward") + "_mm_count"
            if func == ops.mm.default:
                meta[key] = meta.get(key, 0) + 1
            keep = func in save and not (func == ops.mm.default and meta[key] % 2 == 0)
            return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

        return create_selective_checkpoint_contexts(policy)

    return context_fn


class Checkpointed(nn.Module):
    def __init__(self, block, mode):
        super().__init__()
        self.block, self.mode = block, mode
        self.context_fn = selective_ac_context() if mode == "selective" else None

    def forward(self, x, freqs):
        from torch.utils.checkpoint import checkpoint

        if self.mode == "full":
            return checkpoint(self.block, x, freqs, use_reentrant=False, preserve_rng_state=False)
        return checkpoint(self.block, x, freqs, use_reentrant=False, preserve_rng_state=False, context_fn=self.context_fn)


CATEGORIES = [
    ("attention_fwd", r"flash_fwd|fmha.*fwd|cudnn.*fprop|attn.*fwd|flash::.*fwd"),
    # before "gemm": FlashAttention-2's kernel names carry cutlass in their template arguments
    ("attention_bwd", r"flash_bwd|fmha.*bwd|cudnn.*bprop|cudnn.*dgrad|attn.*bwd|flash::.*bwd|dot_do_o"),
    ("gemm", r"gemm|nvjet|sm90_xmma|cutlass|cublas|Kernel2|xmma"),
    ("optimizer", r"multi_tensor|fused_adam|FusedAdam|_fused_adam"),
    ("copy", r"copy|Memcpy|memcpy|cat_|CatArray|split_with_sizes|chunk_cat|foreach_copy"),
    ("nccl", r"nccl"),
]


def category(name):
    for cat, pat in CATEGORIES:
        if re.search(pat, name, re.IGNORECASE):
            return cat
    return "elementwise"


def run_config(layers, compile_blocks, seq, batch, warmup, steps, ac="none", sdpa="default"):
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    torch.manual_seed(0)
    with torch.device("cuda"):
        model = Llama(layers, seq=seq)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for i, block in enumerate(model.layers):
        if ac != "none":
            block = Checkpointed(block, ac)
            model.layers[i] = block
        if compile_blocks:
            block = torch.compile(block)
            model.layers[i] = block
        fully_shard(block, mp_policy=mp, reshard_after_forward=True)
    fully_shard(model, mp_policy=mp, reshard_after_forward=True)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)
    vocab = 128256
    gen = torch.Generator(device="cuda").manual_seed(1)

    from contextlib import nullcontext

    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}.get(sdpa)

    def step():
        with sdpa_kernel(backend) if backend is not None else nullcontext():
            return step_body()

    def step_body():
        tokens = torch.randint(0, vocab, (batch, seq), device="cuda", generator=gen)
        labels = torch.randint(0, vocab, (batch, seq), device="cuda", generator=gen)
        pred = model(tokens)
        loss = F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    t0 = time.time()
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    warm_s = time.time() - t0
    times = []
    for _ in range(steps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        loss = step()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    if not torch.isfinite(loss):
        raise RuntimeError("loss is not finite")
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        torch.cuda.synchronize()
    profiled_s = a.elapsed_time(b) / 1e3
    cats, kernels, count = {}, {}, 0
    for e in prof.key_averages():
        t = getattr(e, "self_device_time_total", None)
        if t is None:
            t = e.self_cuda_time_total
        if t <= 0 or e.key.startswith(("ProfilerStep", "cudaDeviceSynchronize")) or e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        c = category(e.key)
        cats[c] = cats.get(c, 0.0) + t / 1e6
        prev = kernels.get(e.key[:120], (0.0, 0))
        kernels[e.key[:120]] = (prev[0] + t / 1e6, prev[1] + e.count)
        count += e.count
    top = sorted(kernels.items(), key=lambda kv: -kv[1][0])[:40]
    params = sum(p.numel() for p in model.parameters())
    res = {
        "layers": layers,
        "compile": compile_blocks,
        "ac": ac,
        "sdpa": sdpa,
        "seq": seq,
        "batch": batch,
        "params": params,
        "warmup_s": warm_s,
        "step_s_median": statistics.median(times),
        "step_s_all": times,
        "profiled_step_s": profiled_s,
        "kernels_per_step": count,
        "kernel_s_by_category": cats,
        "kernel_s_total": sum(cats.values()),
        "top_kernels": [[k, v[0], v[1]] for k, v in top],
        "peak_allocated_gib": torch.cuda.max_memory_allocated() / 2**30,
        "peak_reserved_gib": torch.cuda.max_memory_reserved() / 2**30,
    }
    del model, opt
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", default="2,6")
    ap.add_argument("--modes", default="eager", help="eager, compile or eager,compile")
    ap.add_argument("--ac", default="none", help="none, selective (torchtitan's per-op policy) or full")
    ap.add_argument("--sdpa", default="default", help="default, flash (FlashAttention-2) or cudnn")
    ap.add_argument("--seq", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=8)
    args = ap.parse_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
    torch.backends.cuda.matmul.allow_tf32 = True
    info = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "sdpa_backends": {
            "flash": torch.backends.cuda.flash_sdp_enabled(),
            "cudnn": torch.backends.cuda.cudnn_sdp_enabled(),
            "mem_efficient": torch.backends.cuda.mem_efficient_sdp_enabled(),
        },
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "runs": [],
    }
    for layers in [int(x) for x in args.layers.split(",")]:
        for comp in [m == "compile" for m in args.modes.split(",")]:
            try:
                r = run_config(layers, comp, args.seq, args.batch, args.warmup, args.steps, args.ac, args.sdpa)
            except Exception as e:  # keep the other configurations' results
                import traceback

                traceback.print_exc()
                info["runs"].append({"layers": layers, "compile": comp, "error": repr(e)[:2000]})
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats()
                continue
            info["runs"].append(r)
            cats = " ".join(f"{k} {v * 1e3:.1f}" for k, v in sorted(r["kernel_s_by_category"].items()))
            print(
                f"layers {layers} compile {int(comp)} ac {args.ac} sdpa {args.sdpa}: step {r['step_s_median'] * 1e3:.1f} ms (profiled "
                f"{r['profiled_step_s'] * 1e3:.1f}), kernels {r['kernel_s_total'] * 1e3:.1f} ms in "
                f"{r['kernels_per_step']} launches [{cats}] peak {r['peak_reserved_gib']:.1f} GiB, warm-up {r['warmup_s']:.0f} s",
                flush=True,
            )
            with open(args.out, "w") as f:
                json.dump(info, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
