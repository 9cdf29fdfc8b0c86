#!/usr/bin/env python3
"""Side-by-side attention timings, in one run:

- Accel: `accel-bench --json attention` (the `attention` group of
  accel-bench-flashattn, plugins/cuda-flashattn/accel-cuda-flashattn-bench.c):
  the `attention` / `attention-backward` ops on cuda:0 and, as its baseline,
  the kernels' C entry points called directly on the same data;
- optionally this project's kernels through ctypes on libaccel_fa.so
  (plugins/cuda-flashattn/standalone/build.sh makes it), with the relative
  error of their output against PyTorch's;
- PyTorch's scaled_dot_product_attention with its flash and cuDNN backends.

Shapes follow the FlashAttention papers' benchmark: batch x seqlen = 16k
tokens, hidden 2048 (heads = 2048 / d), d = 64, 128, 256, seqlen 512..16k,
causal and not, forward and backward, bf16. FLOPs: forward 4 B H S^2 d
(halved when causal), backward 2.5 x forward. PyTorch and ctypes figures
are the median of --reps timed runs (CUDA events) after 3 warm-ups;
accel-bench's are the median of 5 bursts after a warm-up burst.

usage: attention_vs_torch.py [--accel-bench "CMD"] [--lib path/to/libaccel_fa.so]
       [--json out.json] [--quick] [--dims 64,128,256] [--seqs 512,...]
       [--reps 10] [--path 0|1|2] [--no-bwd]

--accel-bench is a command line (split like a shell would), e.g.
  "python3 .gpu/meson/meson.py devenv -C build build/plugins/cuda-flashattn/accel-bench-flashattn"
to which the script appends --device cuda:0 --json FILE [--quick] attention.
It runs first, before PyTorch takes GPU memory. --quick matches
accel-bench's --quick subset (d = 128, seqlen 1024 and 4096).
"""
import ctypes
import json
import math
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from side_by_side import arg_parser, run_accel_bench_json, time_ms

I64x3 = ctypes.c_int64 * 3


class FwdParams(ctypes.Structure):
    _fields_ = [
        ("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p),
        ("out", ctypes.c_void_p), ("lse", ctypes.c_void_p),
        ("q_strides", I64x3), ("k_strides", I64x3), ("v_strides", I64x3), ("o_strides", I64x3),
        ("batch", ctypes.c_int32), ("heads_q", ctypes.c_int32), ("heads_kv", ctypes.c_int32),
        ("seqlen_q", ctypes.c_int32), ("seqlen_k", ctypes.c_int32), ("head_dim", ctypes.c_int32),
        ("dtype", ctypes.c_int32), ("causal", ctypes.c_int32),
        ("window_left", ctypes.c_int32), ("window_right", ctypes.c_int32),
        ("scale", ctypes.c_float), ("softcap", ctypes.c_float), ("path", ctypes.c_int32),
        # the variants (accel-flashattn.h); zero is plain attention
        ("alibi_slopes", ctypes.c_void_p), ("alibi_batch_stride", ctypes.c_int32), ("sinks", ctypes.c_int32),
        ("cu_seqlens_q", ctypes.c_void_p), ("cu_seqlens_k", ctypes.c_void_p), ("codes", ctypes.c_void_p),
        ("q_descale", ctypes.c_float), ("k_descale", ctypes.c_float), ("v_descale", ctypes.c_float),
        ("head_dim_v", ctypes.c_int32),  # 0: head_dim
    ]


class BwdParams(ctypes.Structure):
    _fields_ = [
        ("fwd", FwdParams),
        ("dout", ctypes.c_void_p), ("dq", ctypes.c_void_p), ("dk", ctypes.c_void_p), ("dv", ctypes.c_void_p),
        ("do_strides", I64x3), ("dq_strides", I64x3), ("dk_strides", I64x3), ("dv_strides", I64x3),
    ]


def strides3(t):
    s = t.stride()
    return I64x3(s[0], s[1], s[2])


class Ours:
    def __init__(self, lib_path, path):
        self.lib = ctypes.CDLL(lib_path)
        self.lib.accel_flashattn_fwd.argtypes = [ctypes.POINTER(FwdParams), ctypes.c_void_p]
        self.lib.accel_flashattn_bwd.argtypes = [ctypes.POINTER(BwdParams), ctypes.c_void_p, ctypes.c_void_p]
        self.lib.accel_flashattn_bwd_workspace_size.argtypes = [ctypes.POINTER(BwdParams)]
        self.lib.accel_flashattn_bwd_workspace_size.restype = ctypes.c_size_t
        self.lib.accel_flashattn_bwd_check.argtypes = [ctypes.POINTER(BwdParams)]
        self.lib.accel_flashattn_bwd_check.restype = ctypes.c_char_p
        self.path = path

    def params(self, q, k, v, o, lse, causal, dout=None, dq=None, dk=None, dv=None):
        B, H, S, D = q.shape
        p = BwdParams()
        f = p.fwd
        f.q, f.k, f.v, f.out, f.lse = q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr()
        f.q_strides, f.k_strides, f.v_strides, f.o_strides = strides3(q), strides3(k), strides3(v), strides3(o)
        f.batch, f.heads_q, f.heads_kv = B, H, k.shape[1]
        f.seqlen_q, f.seqlen_k, f.head_dim = S, k.shape[2], D
        f.dtype = 1 if q.dtype == torch.bfloat16 else 0
        f.causal = 1 if causal else 0
        f.window_left = f.window_right = -1
        f.scale, f.softcap, f.path = 0.0, 0.0, self.path
        if dout is not None:
            p.dout, p.dq, p.dk, p.dv = dout.data_ptr(), dq.data_ptr(), dk.data_ptr(), dv.data_ptr()
            p.do_strides, p.dq_strides = strides3(dout), strides3(dq)
            p.dk_strides, p.dv_strides = strides3(dk), strides3(dv)
        return p

    def fwd(self, p):
        r = self.lib.accel_flashattn_fwd(ctypes.byref(p.fwd), ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if r != 0:
            raise RuntimeError(f"accel_flashattn_fwd returned {r}")

    def bwd(self, p, ws):
        r = self.lib.accel_flashattn_bwd(ctypes.byref(p), ctypes.c_void_p(ws.data_ptr()),
                                         ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if r != 0:
            raise RuntimeError(f"accel_flashattn_bwd returned {r}")


def torch_times(backend, q, k, v, dout, causal, reps):
    """(fwd ms, bwd ms) of SDPA with one backend; None where it refuses."""
    res = [None, None]
    try:
        with sdpa_kernel([backend]):
            res[0] = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), reps)
            qg, kg, vg = (x.detach().requires_grad_() for x in (q, k, v))
            out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
            res[1] = time_ms(lambda: torch.autograd.grad(out, (qg, kg, vg), dout, retain_graph=True), reps)
    except Exception as e:  # noqa: BLE001 - a backend that refuses a shape
        print(f"    {backend}: {str(e).splitlines()[0][:100]}", file=sys.stderr)
    return res


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def run_accel_bench(cmd, quick):
    """{(dir, d, seqlen, causal): (op TFLOP/s, raw kernel TFLOP/s)} from accel-bench."""
    doc = run_accel_bench_json(cmd, (["--quick"] if quick else []) + ["attention"], "accel-bench")
    res = {}
    for r in doc["results"]:
        # attention.{fwd,bwd}.d{D}.s{S}.{full,causal}
        parts = r["name"].split(".")
        if len(parts) != 5 or parts[0] != "attention":
            continue
        key = (parts[1], int(parts[2][1:]), int(parts[3][1:]), parts[4] == "causal")
        res[key] = (r["value"], r["baseline"])
    return res, doc.get("device")


def main():
    ap = arg_parser("accel-bench-flashattn", 10)
    ap.add_argument("--lib", help="libaccel_fa.so, to time the kernels through ctypes too")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dims", default="64,128,256")
    ap.add_argument("--seqs", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--path", type=int, default=0)
    ap.add_argument("--no-bwd", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.dims, args.seqs = "128", "1024,4096"

    bench, bench_dev = ({}, None)
    if args.accel_bench:
        bench, bench_dev = run_accel_bench(args.accel_bench, args.quick)
    ours = Ours(args.lib, args.path) if args.lib else None
    dev = torch.cuda.get_device_name()
    print(f"device: {dev}, torch {torch.__version__}" + (f", accel-bench on {bench_dev}" if bench_dev else ""))
    rows = []
    hdr = (f"{'d':>4} {'seq':>6} {'causal':>6} {'dir':>4} | {'accel':>7} {'kernel':>7} {'ctypes':>7} "
           f"{'flash':>7} {'cudnn':>7} | {'acc/ker':>7} {'acc/fla':>7} {'acc/cud':>7} {'ker/fla':>7} "
           f"{'ker/cud':>7} | {'rel err':>8}")
    print(hdr)
    print("-" * len(hdr))

    def fmt(x, w=7, p=1):
        return f"{'n/a':>{w}}" if x is None else f"{x:{w}.{p}f}"

    def ratio(a, b):
        return None if a is None or b is None or b == 0 else a / b

    for d in [int(x) for x in args.dims.split(",")]:
        for S in [int(x) for x in args.seqs.split(",")]:
            for causal in (False, True):
                B, H = 16384 // S, 2048 // d
                torch.manual_seed(S * 1000 + d + causal)
                q, k, v, dout = (torch.randn(B, H, S, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
                flops = 4.0 * B * H * S * S * d / (2 if causal else 1)
                f_ours = b_ours = err = err_b = None
                if ours is not None:
                    o = torch.empty_like(q)
                    lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
                    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
                    p = ours.params(q, k, v, o, lse, causal, dout, dq, dk, dv)
                    why = ours.lib.accel_flashattn_bwd_check(ctypes.byref(p))
                    if why:
                        print(f"{d:4} {S:6} {causal!s:>6} ctypes skipped: {why.decode()}")
                    else:
                        ws = torch.empty(ours.lib.accel_flashattn_bwd_workspace_size(ctypes.byref(p)),
                                         device="cuda", dtype=torch.uint8)
                        f_ours = time_ms(lambda: ours.fwd(p), args.reps)
                        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        ours.fwd(p)
                        torch.cuda.synchronize()
                        err = rel(o, ref)
                        b_ours = None if args.no_bwd else time_ms(lambda: ours.bwd(p, ws), args.reps)
                        if not args.no_bwd and S <= 4096:
                            qg, kg, vg = (x.detach().requires_grad_() for x in (q, k, v))
                            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                                out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
                                gq, gk, gv = torch.autograd.grad(out, (qg, kg, vg), dout)
                            err_b = max(rel(dq, gq), rel(dk, gk), rel(dv, gv))
                        del o, lse, dq, dk, dv, ws
                fl = torch_times(SDPBackend.FLASH_ATTENTION, q, k, v, dout, causal, args.reps)
                cu = torch_times(SDPBackend.CUDNN_ATTENTION, q, k, v, dout, causal, args.reps)

                def tf(ms, mult=1.0):
                    return None if ms is None else mult * flops / (ms * 1e-3) / 1e12

                for direction, mine, fla, cud, mult, e in (
                        ("fwd", f_ours, fl[0], cu[0], 1.0, err),
                        ("bwd", b_ours, fl[1], cu[1], 2.5, err_b)):
                    if direction == "bwd" and args.no_bwd:
                        continue
                    acc, ker = bench.get((direction, d, S, causal), (None, None))
                    t_m, t_f, t_c = tf(mine, mult), tf(fla, mult), tf(cud, mult)
                    row = dict(d=d, seqlen=S, causal=causal, dir=direction, accel_tflops=acc, kernel_tflops=ker,
                               ctypes_tflops=t_m, flash_tflops=t_f, cudnn_tflops=t_c, ctypes_ms=mine,
                               flash_ms=fla, cudnn_ms=cud, rel_err=e)
                    rows.append(row)
                    print(f"{d:4} {S:6} {causal!s:>6} {direction:>4} | {fmt(acc)} {fmt(ker)} {fmt(t_m)} {fmt(t_f)} "
                          f"{fmt(t_c)} | {fmt(ratio(acc, ker), 7, 3)} {fmt(ratio(acc, t_f), 7, 2)} "
                          f"{fmt(ratio(acc, t_c), 7, 2)} {fmt(ratio(ker, t_f), 7, 2)} {fmt(ratio(ker, t_c), 7, 2)} | "
                          f"{'n/a' if e is None else f'{e:.1e}':>8}", flush=True)
                del q, k, v, dout
    print("accel: the attention ops through Accel (accel-bench); kernel: the kernels' entry points called "
          "directly in accel-bench (acc/ker = dispatch cost); ctypes: the same kernels from libaccel_fa.so here")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=dev, torch=torch.__version__, accel_bench_device=bench_dev, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
