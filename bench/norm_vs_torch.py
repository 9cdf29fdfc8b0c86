#!/usr/bin/env python3
"""layernorm and rmsnorm beside PyTorch, in one run:

- Accel: `accel-bench-libs --json libs-norm` (tools/accel-bench-libs.c):
  layernorm (gamma and beta) and rmsnorm (gamma) on cuda:0, 20 in flight,
  beside a device-to-device cudaMemcpyAsync of as many bytes;
- PyTorch's F.layer_norm and F.rms_norm on the same shapes and dtypes,
  beside its own copy (torch.Tensor.copy_) of as many bytes.

Shapes (the names of libs-norm): bf16 and f32 [16384, 4096] (no suffix),
bf16 [16384, 4097] (.odd: rows of odd length, each at another 16-byte
phase) and bf16 [2048, 65536] (.long: rows too long for registers).
Figures in GB/s of x read and y written, and each as a fraction of the
copy beside it; PyTorch's is the median of --reps timed calls (CUDA
events) after 3 warm-ups.

usage: norm_vs_torch.py [--accel-bench "CMD"] [--json out.json] [--reps 50]

--accel-bench is a command line (split like a shell would), e.g.
  "bash -c 'source .gpu/env && exec $GPU_BUILD/plugins/cuda/accel-bench-libs \"$@\"' x"
to which the script appends --device cuda:0 --json FILE libs-norm. It runs
first, before PyTorch takes GPU memory.
"""
import json

import torch
import torch.nn.functional as F

from side_by_side import arg_parser, run_accel_bench_json, time_ms

SHAPES = [("bf16", "", 16384, 4096), ("f32", "", 16384, 4096), ("bf16", ".odd", 16384, 4097),
          ("bf16", ".long", 2048, 65536)]
DTYPES = {"bf16": torch.bfloat16, "f32": torch.float32}


def main():
    args = arg_parser("accel-bench-libs", 50).parse_args()

    accel, accel_dev = {}, None
    if args.accel_bench:
        doc = run_accel_bench_json(args.accel_bench, ["libs-norm"], "accel-bench-libs")
        accel = {r["name"]: (r["value"], r.get("baseline")) for r in doc["results"]}
        accel_dev = doc.get("device")
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}"
          + (f", accel-bench-libs on {accel_dev}" if accel_dev else ""))
    rows = []
    for dt, suffix, r, n in SHAPES:
        dtype = DTYPES[dt]
        x = torch.empty(r, n, dtype=dtype, device="cuda").uniform_(-3, 5)
        y = torch.empty_like(x)
        gamma = torch.empty(n, dtype=dtype, device="cuda").uniform_(0.5, 1.5)
        beta = torch.empty(n, dtype=dtype, device="cuda").uniform_(-1, 1)
        gb = 2.0 * x.numel() * x.element_size() / 1e9
        copy = gb / time_ms(lambda: y.copy_(x), args.reps) * 1e3
        for op, fn in (("layernorm", lambda: F.layer_norm(x, (n,), gamma, beta, 1e-5)),
                       ("rmsnorm", lambda: F.rms_norm(x, (n,), gamma, 1e-5))):
            name = f"libs-norm.{op}.{dt}{suffix}"
            res = {"name": name, "rows": r, "n": n, "torch": gb / time_ms(fn, args.reps) * 1e3, "torch_copy": copy}
            if name in accel:
                res["accel"], res["accel_copy"] = accel[name]
            rows.append(res)
        del x, y, gamma, beta

    print(f"{'name':>30} | {'accel':>6} {'copy':>6} {'ratio':>5} | {'torch':>6} {'copy':>6} {'ratio':>5}")
    for res in rows:
        acc, acopy = res.get("accel"), res.get("accel_copy")
        a = f"{acc:6.0f} {acopy:6.0f} {acc / acopy:5.3f}" if acc and acopy else f"{'-':>6} {'-':>6} {'-':>5}"
        print(f"{res['name']:>30} | {a} | {res['torch']:6.0f} {res['torch_copy']:6.0f} "
              f"{res['torch'] / res['torch_copy']:5.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
