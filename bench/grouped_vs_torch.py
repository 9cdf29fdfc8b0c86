#!/usr/bin/env python3
"""Grouped GEMM (mixture of experts) beside PyTorch, in one run:

- Accel: `accel-bench-libs --json libs-cutlass` (tools/accel-bench-libs-cutlass.c):
  grouped-gemm on cuda:0 beside a loop of cublasGemmEx per group, the same
  shapes and counts as here;
- PyTorch's torch._grouped_mm (CUTLASS's grouped GEMM inside PyTorch) on
  the same shapes and the same expert counts, and a loop of torch.mm per
  expert.

Shapes (issue 15): 64 experts, K 4096, N 1408, 8192 tokens routed top-6;
8 experts, K 4096, N 14336, 4096 tokens top-2; bf16, weights [G, N, K]
(torch.nn.Linear's layout; torch gets the [G, K, N] transposed view).
Counts: expert g gets floor(T (g + 1)^-0.6 / sum) tokens, the rest expert
0, as accel-bench-libs-cutlass.c computes them. Figures in TFLOP/s
(2 T K N per call), the median of --reps timed calls (CUDA events) after
3 warm-ups.

usage: grouped_vs_torch.py [--accel-bench "CMD"] [--json out.json] [--reps 20]

--accel-bench is a command line (split like a shell would), e.g.
  "bash -c 'source .gpu/env && exec $GPU_BUILD/plugins/cuda/accel-bench-libs \"$@\"' x"
to which the script appends --device cuda:0 --json FILE libs-cutlass. It
runs first, before PyTorch takes GPU memory.
"""
import json

import torch

from side_by_side import arg_parser, run_accel_bench_json, time_ms

SHAPES = {"moe64": (64, 8192 * 6, 4096, 1408), "moe8": (8, 4096 * 2, 4096, 14336)}


def moe_counts(groups, rows):
    w = [(g + 1) ** -0.6 for g in range(groups)]
    total = sum(w)
    counts = [int(rows * x / total) for x in w]
    counts[0] += rows - sum(counts)
    return counts


def run_accel_bench(cmd):
    """{name: (value, baseline, ratio)} of the libs-cutlass group."""
    doc = run_accel_bench_json(cmd, ["libs-cutlass"], "accel-bench-libs")
    return {r["name"]: (r["value"], r.get("baseline"), r.get("ratio")) for r in doc["results"]}, doc.get("device")


def main():
    args = arg_parser("accel-bench-libs", 20).parse_args()

    accel, accel_dev = ({}, None)
    if args.accel_bench:
        accel, accel_dev = run_accel_bench(args.accel_bench)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}"
          + (f", accel-bench-libs on {accel_dev}" if accel_dev else ""))
    have_grouped = hasattr(torch, "_grouped_mm")
    rows = []
    for name, (groups, tokens, k, n) in SHAPES.items():
        counts = moe_counts(groups, tokens)
        offs = torch.tensor(counts, dtype=torch.int32, device="cuda").cumsum(0, dtype=torch.int32)
        a = torch.empty(tokens, k, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
        w = torch.empty(groups, n, k, dtype=torch.bfloat16, device="cuda").uniform_(-0.05, 0.05)
        flops = 2.0 * tokens * k * n
        res = {"shape": name, "groups": groups, "tokens": tokens, "k": k, "n": n}
        if have_grouped:
            bt = w.transpose(-2, -1)
            res["torch_grouped_mm"] = flops / time_ms(lambda: torch._grouped_mm(a, bt, offs=offs), args.reps) / 1e9
            ref = torch._grouped_mm(a, bt, offs=offs)
        parts = torch.split(a, counts)

        def loop():
            return [torch.mm(p, w[g].t()) for g, p in enumerate(parts) if p.shape[0] > 0]

        res["torch_loop"] = flops / time_ms(loop, args.reps) / 1e9
        if have_grouped:
            got = torch.cat([torch.mm(p, w[g].t()) for g, p in enumerate(parts)])
            res["grouped_mm_rel_err"] = ((ref.float() - got.float()).norm() / got.float().norm()).item()
        acc = accel.get(f"libs-cutlass.grouped.{name}")
        if acc:
            res["accel"], res["accel_cublas_loop"] = acc[0], acc[1]
        rows.append(res)
        del a, w

    hdr = f"{'shape':>6} | {'accel':>7} {'cublas':>7} {'grouped':>7} {'loop':>7} | {'acc/cub':>7} {'acc/gmm':>7}"
    print(hdr)
    for r in rows:
        acc, cub, gmm = r.get("accel"), r.get("accel_cublas_loop"), r.get("torch_grouped_mm")

        def f(x):
            return f"{x:7.1f}" if x else f"{'-':>7}"

        def q(x, y):
            return f"{x / y:7.2f}" if x and y else f"{'-':>7}"

        print(f"{r['shape']:>6} | {f(acc)} {f(cub)} {f(gmm)} {f(r['torch_loop'])} | {q(acc, cub)} {q(acc, gmm)}")
    for name, (value, base, ratio) in sorted(accel.items()):
        if not name.startswith("libs-cutlass.grouped"):
            print(f"{name}: {value:.2f} vs {base:.2f} ({ratio:.2f}x)" if base else f"{name}: {value:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows,
                       "accel": accel}, f, indent=1)


if __name__ == "__main__":
    main()
