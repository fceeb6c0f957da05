#!/usr/bin/env python3
"""The GPU check kit's runner (see scripts/gpu_check.sh): on a machine with an NVIDIA GPU,
nvcc and PyTorch, compiles every kernel of a kit made by te_gpu_kit, runs each through
its own host launcher and compares the outputs with what interpret() produced, then times
the bench kernels against PyTorch / cuBLAS with CUDA events and prints a table.

  gpu_check.py KIT [--out results.md] [--only NAME ...] [--budget-s S] [--check-only] [--compile-only]

One run fits a GPU machine's short loan: every kernel compiles at once (nvcc on all the
machine's cores), the correctness corpus runs first and the timings after, and each row
of the table is printed and written to --out (default $OUT/gpu_check.md where $OUT is
set) as soon as it is measured, so a run stopped early keeps what it measured. Timings
not started within --budget-s seconds (default 420) are listed as not run. The last line
names what failed or did not run, as the --only arguments of a rerun.

--check-only reads the kit (manifests, .npy files) without nvcc or a GPU; --compile-only
also builds each kernel into a shared library (nvcc, no GPU), reporting spills.
--check-references runs the PyTorch references on the CPU instead, on the small cases of
KIT/references.json (inputs and te's outputs as .npy; tests/test_auto_schedule_ansor_cuda.cpp
writes them), so that a reference's layout mistake shows before a GPU run.
"""
import concurrent.futures
import argparse
import ctypes
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

CTYPES = {"int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32, "int64": ctypes.c_int64,
          "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
          "float32": ctypes.c_float, "float64": ctypes.c_double, "bool": ctypes.c_bool}


def nvcc_path():
    for c in (os.environ.get("TE_NVCC"), "/usr/local/cuda/bin/nvcc", "nvcc"):
        if c and (os.path.isabs(c) and os.access(c, os.X_OK) or not os.path.isabs(c)):
            return c
    return "nvcc"


def compile_so(folder, arch):
    """kernel.cu -> kernel.so; returns (ok, log, spill bytes)."""
    cu, so = os.path.join(folder, "kernel.cu"), os.path.join(folder, "kernel.so")
    # The GPU's code only: -arch=sm_90a would also compile compute_90's PTX, whose portable
    # wgmma path takes nvcc half a minute per kernel.
    target = [f"-arch={arch}"] if not arch.endswith("a") else ["-gencode", f"arch=compute_{arch[3:]},code={arch}"]
    cmd = [nvcc_path(), "-O3", "-std=c++17", *target, "-Xcompiler", "-fPIC", "-shared",
           "--resource-usage", "-o", so, cu]
    r = subprocess.run(cmd, capture_output=True, text=True)
    log = r.stdout + r.stderr
    spills = sum(int(a) + int(b) for a, b in re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log))
    return r.returncode == 0, log, spills


class Compiler:
    """Every kernel's nvcc, started at once on all cores; result(folder) waits for one."""

    def __init__(self, folders, arch):
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1))
        self.jobs = {f: self.pool.submit(compile_so, f, arch) for f in folders}

    def result(self, folder):
        return self.jobs[folder].result()


class Report:
    """The table, printed and written to `path` row by row (a killed run keeps its rows)."""

    def __init__(self, path):
        self.path, self.lines = path, []

    def add(self, *lines):
        for line in lines:
            print(line, flush=True)
        self.lines += lines
        if self.path:
            with open(self.path, "w") as f:
                f.write("\n".join(self.lines) + "\n")


class Watchdog:
    """Ends the run when one kernel has not returned after `limit_s` (a kernel that hangs
    on the GPU would otherwise hold the rest of the loan): the report gets a HUNG row and
    the --only line of every kernel not yet run, the hung one left out."""

    def __init__(self, report, names, limit_s):
        self.report, self.names, self.limit_s = report, names, limit_s
        self.current, self.since = None, None
        threading.Thread(target=self._watch, daemon=True).start()

    def start(self, name):
        self.current, self.since = name, time.monotonic()

    def done(self):
        self.current = None

    def _watch(self):
        while True:
            time.sleep(1)
            name, since = self.current, self.since
            if name is None or time.monotonic() - since < self.limit_s:
                continue
            rest = self.names[self.names.index(name) + 1:]
            self.report.add(f"| {name} | HUNG | no result after {self.limit_s:.0f} s: the run stops here |", "",
                            f"rerun what did not run: --only {' '.join(rest)}" if rest else "nothing else to run")
            os._exit(3)


def tolerance(dtype, name):
    if dtype == "float16":
        return 1e-2, 1e-2
    if dtype == "bfloat16":  # one rounding of a float32 result that the GPU's exp and fma change
        return 2e-2, 2e-2
    if dtype == "float64":
        return 1e-12, 1e-12
    if dtype == "float32":
        # nvcc contracts a * b + c into fma; fast math uses the __expf family.
        return (1e-3, 1e-4) if name.endswith("_fast") else (1e-5, 1e-5)
    return 0, 0


def values(a, dtype):
    """An array's values in float64 (bfloat16 arrives as its 16-bit patterns)."""
    if dtype == "bfloat16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def check_kit(kit, only):
    corpus = json.load(open(os.path.join(kit, "corpus.json")))
    bench = json.load(open(os.path.join(kit, "bench.json")))
    for m in corpus:
        if only and m["name"] not in only or "skip" in m:
            continue
        folder = os.path.join(kit, "corpus", m["name"])
        assert os.path.exists(os.path.join(folder, "kernel.cu")), folder
        for p in m["params"]:
            if p["kind"] == "buffer":
                a, b = np.load(os.path.join(folder, p["input"])), np.load(os.path.join(folder, p["expected"]))
                assert a.shape == b.shape and a.dtype == b.dtype, (m["name"], p["name"])
    for b in bench:
        assert os.path.exists(os.path.join(kit, "bench", b["name"], "kernel.cu")), b["name"]
    return corpus, bench


def run_corpus(torch, kit, corpus, compiler, only, report, watchdog):
    rows = []

    def row(*r):
        watchdog.done()  # the next kernel's compile may still be running
        rows.append(r)
        report.add(f"| {r[0]} | {r[1]} | {r[2]} |")

    for m in corpus:
        if only and m["name"] not in only:
            continue
        if "skip" in m:
            row(m["name"], "skipped", m["skip"])
            continue
        folder = os.path.join(kit, "corpus", m["name"])
        ok, log, spills = compiler.result(folder)
        if not ok:
            row(m["name"], "FAIL", "nvcc: " + log.strip().splitlines()[-1])
            continue
        watchdog.start(m["name"])
        fn = getattr(ctypes.CDLL(os.path.join(folder, "kernel.so")), m["launcher"])
        fn.restype = ctypes.c_int
        args, types, buffers = [], [], []
        for p in m["params"]:
            if p["kind"] == "buffer":
                host = np.ascontiguousarray(np.load(os.path.join(folder, p["input"])))
                dev = torch.from_numpy(host.reshape(-1).view(np.uint8).copy()).cuda()
                buffers.append((p, host, dev))
                args.append(ctypes.c_void_p(dev.data_ptr()))
                types.append(ctypes.c_void_p)
            else:
                t = CTYPES[p["dtype"]]
                args.append(t(p["value"]))
                types.append(t)
        fn.argtypes = types + [ctypes.c_void_p]
        err = fn(*args, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        torch.cuda.synchronize()
        problems = [] if err == 0 else [f"launcher returned cudaError {err}"]
        exact = True
        for p, host, dev in buffers:
            got = dev.cpu().numpy().view(host.dtype).reshape(host.shape)
            want = np.load(os.path.join(folder, p["expected"]))
            if got.tobytes() == want.tobytes():
                continue
            exact = False
            rtol, atol = tolerance(p["dtype"], m["name"])
            g, w = values(got, p["dtype"]), values(want, p["dtype"])
            if rtol == 0 or not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
                diff = np.nanmax(np.abs(g - w)) if got.size else 0
                problems.append(f"{p['name']} differs from interpret() (max |diff| {diff:.3g})")
        status = "FAIL" if problems else ("ok (bit-exact)" if exact else "ok (within tolerance)")
        note = "; ".join(problems) + (f" {spills} bytes of spills" if spills else "")
        row(m["name"], status, note)
    return rows


def time_ms(torch, fn, iters=50, warmup=5):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def make_buffer(torch, spec, folder):
    shape, role = spec["shape"], spec["role"]
    if "file" in spec:  # inputs random values would not fit (bev_pool's sorted ranks)
        host = np.load(os.path.join(folder, spec["file"]))
        assert list(host.shape) == list(shape), (spec["file"], host.shape, shape)
        return torch.from_numpy(np.ascontiguousarray(host)).cuda()
    dtype = getattr(torch, spec.get("dtype", "float32"))
    if role == "output":
        return torch.empty(shape, device="cuda", dtype=dtype)
    if role == "grid":
        return (torch.rand(shape, device="cuda") * 2.2 - 1.1).to(dtype)
    return torch.randn(shape, device="cuda").to(dtype)


def sass_note(folder, instruction):
    """Whether cuobjdump finds `instruction` in the kernel's SASS ("" when not asked)."""
    if not instruction:
        return ""
    cuobjdump = os.path.join(os.path.dirname(nvcc_path()), "cuobjdump")
    if not os.path.isabs(cuobjdump) or not os.access(cuobjdump, os.X_OK):
        cuobjdump = "cuobjdump"
    try:
        r = subprocess.run([cuobjdump, "-sass", os.path.join(folder, "kernel.so")], capture_output=True, text=True)
    except OSError:
        return f", SASS not read (no cuobjdump)"
    return f", SASS has {instruction}" if instruction in r.stdout else f", SASS LACKS {instruction}"


def conv_reference(torch, bufs, a):
    """The Ansor suite's convolutions (tests/gpu_kit/ansor_bench.cpp says how each is laid out): the
    activation viewed channels-first, the weight permuted into PyTorch's layout once, outside the timing."""
    F = torch.nn.functional
    x, w, nd = bufs[0], bufs[1], a["dims"]
    if a["channels_last"]:
        x = x.permute(0, nd + 1, *range(1, nd + 1))
    wt = w.permute(*a["weight_perm"]).contiguous()
    conv = getattr(F, (f"conv_transpose{nd}d" if a["transposed"] else f"conv{nd}d"))
    groups = x.shape[1] if a["groups"] == "channels" else a["groups"]  # "channels": depthwise
    kw = dict(stride=a["stride"], padding=a["padding"], dilation=a["dilation"], groups=groups)
    back = (0, *range(2, nd + 2), 1) if a["channels_last"] else None
    return lambda: conv(x, wt, **kw).permute(*back) if back else conv(x, wt, **kw)


def capsule_conv_reference(torch, bufs, a):
    """out[n, h, w, i, j, co] = sum x[n, s h + rh, s w + rw, i, rk, rc] w[rh, rw, rk, j, rc, co] (zero-padded)."""
    x, w, k, s, p = bufs[0], bufs[1], a["kernel"], a["stride"], a["padding"]

    def run():
        windows = torch.nn.functional.pad(x, (0, 0, 0, 0, 0, 0, p, p, p, p)).unfold(1, k, s).unfold(2, k, s)
        return torch.einsum("nhwikcab,abkjco->nhwijo", windows, w)
    return run


def reference(torch, name, bufs, n_out, args=None):
    F = torch.nn.functional
    if name == "conv":
        return conv_reference(torch, bufs, args)
    if name == "capsule_conv":
        return capsule_conv_reference(torch, bufs, args)
    if name == "norm":  # the 2-norm of each batch's matrix
        return lambda: torch.linalg.vector_norm(bufs[0], dim=tuple(range(1, bufs[0].dim())))
    if name == "softmax":
        return lambda: torch.softmax(bufs[0], -1)
    if name in ("attention", "attention_causal"):  # (batch, heads, seq, dim); flash where it applies
        q, k, v = bufs[:3]
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=name == "attention_causal")
    if name == "layer_norm":
        return lambda: F.layer_norm(bufs[0], (bufs[0].shape[-1],), bufs[1], bufs[2], 1e-5)
    if name == "sum":
        return lambda: bufs[0].sum(-1)
    if name == "matmul":
        return lambda: torch.matmul(bufs[0], bufs[1])
    if name == "linear":  # a b^T, b N x K: a linear layer's weights
        return lambda: F.linear(bufs[0], bufs[1])
    if name == "linear_relu":  # relu(a b + bias) in a's type: cuBLASLt's addmm, its bias converted once
        a, b, bias = bufs[:3]
        bias16 = bias.to(a.dtype)
        return lambda: torch.relu(torch.addmm(bias16, a, b))
    if name == "grid_sample":
        return lambda: F.grid_sample(bufs[0], bufs[1], mode="bilinear", padding_mode="zeros", align_corners=False)
    if name == "grid_sample_backward":  # aten's backward kernel: (grad_input, grad_grid)
        return lambda: torch.ops.aten.grid_sampler_2d_backward(bufs[2], bufs[0], bufs[1], 0, 0, False, [True, True])
    if name == "softmax_backward":  # aten's softmax backward kernel, given y and dy
        return lambda: torch.ops.aten._softmax_backward_data(bufs[1], bufs[0], -1, torch.float32)
    if name == "layer_norm_backward":  # aten's, given the forward's saved mean and rstd: (dx, dgamma, dbeta)
        x, gamma, dy = bufs[:3]
        cols = x.shape[-1]
        _, mean, rstd = torch.ops.aten.native_layer_norm(x, [cols], gamma, torch.zeros_like(gamma), 1e-5)
        return lambda: torch.ops.aten.native_layer_norm_backward(dy, x, [cols], mean, rstd, gamma,
                                                                 torch.zeros_like(gamma), [True, True, True])
    if name == "matmul_backward":  # (da, db) = (dc b^T, a^T dc)
        a, b, dc = bufs[:3]
        return lambda: (dc @ b.T, a.T @ dc)
    if name == "conv2d_backward":  # aten's (cuDNN): (grad_input, grad_weight)
        x, w, dy = bufs[:3]
        return lambda: torch.ops.aten.convolution_backward(dy, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                                           [True, True, False])[:2]
    if name == "bev_pool":  # scripts/gen_bev_pool_golden.py's pure-PyTorch reference, on the GPU
        depth, feat, ranks_depth, ranks_feat, ranks_bev = bufs[:5]
        out_shape, c = bufs[n_out].shape, feat.shape[-1]
        rd, rf, rb = ranks_depth.long(), ranks_feat.long(), ranks_bev.long()

        def bev_pool():
            values = depth.reshape(-1)[rd].unsqueeze(1) * feat.reshape(-1, c)[rf]
            out = torch.zeros(out_shape[:-1].numel(), c, device="cuda")
            return out.index_add_(0, rb, values).reshape(out_shape)
        return bev_pool
    if name == "bev_pool_backward":  # autograd through that reference: (grad_depth, grad_feat)
        depth, feat, ranks_depth, ranks_feat, ranks_bev = (t.detach() for t in bufs[:5])
        head = bufs[7]
        rd, rf, rb = ranks_depth.long(), ranks_feat.long(), ranks_bev.long()
        d, f, c = depth.clone().requires_grad_(), feat.clone().requires_grad_(), feat.shape[-1]
        values = d.reshape(-1)[rd].unsqueeze(1) * f.reshape(-1, c)[rf]
        out = torch.zeros(head.shape[:-1].numel(), c, device="cuda").index_add_(0, rb, values).reshape(head.shape)
        return lambda: torch.autograd.grad(out, (d, f), head, retain_graph=True)  # the backward alone
    raise ValueError("unknown reference " + name)


def check_references(torch, folder):
    """Each case's PyTorch reference, on the CPU, against te's outputs; the names of the cases that differ."""
    failed = []
    for c in json.load(open(os.path.join(folder, "references.json"))):
        bufs = [torch.from_numpy(np.load(os.path.join(folder, f))) for f in c["inputs"]]
        wants = [np.load(os.path.join(folder, f)) for f in c["expected"]]
        got = reference(torch, c["reference"], bufs + [torch.from_numpy(w) for w in wants], len(bufs),
                        c.get("reference_args"))()
        got = got if isinstance(got, tuple) else (got,)
        err = max(float(np.abs(g.numpy() - w).max()) / max(1.0, float(np.abs(w).max())) if g.shape == w.shape
                  else float("inf") for g, w in zip(got, wants))
        ok = err <= 1e-4
        print(f"{c['name']}: {'ok' if ok else 'DIFFERS'} (max rel err {err:.2e})", flush=True)
        if not ok:
            failed.append(c["name"])
    return failed


def bench_line(r):
    if r[1] is None:
        return f"| {r[0]} | - | - | - | - | - | {r[3]} |"
    return f"| {r[0]} | {r[1]:.4f} | {r[2]:.4f} | {r[2] / r[1]:.2f}x | {r[4]:.0f} | {r[5]:.0f} | {r[3]} |"


def run_bench(torch, kit, bench, compiler, only, report, deadline, watchdog):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rows = []
    copy_gbs = None

    def row(*r):
        watchdog.done()
        rows.append(r)
        report.add(bench_line(r))

    for b in bench:
        if only and b["name"] not in only:
            continue
        if time.monotonic() > deadline:
            row(b["name"], None, None, "not run (time budget)")
            continue
        folder = os.path.join(kit, "bench", b["name"])
        ok, log, spills = compiler.result(folder)
        if not ok:
            row(b["name"], None, None, "nvcc failed: " + log.strip().splitlines()[-1])
            continue
        watchdog.start(b["name"])
        fn = getattr(ctypes.CDLL(os.path.join(folder, "kernel.so")), b["launcher"])
        fn.restype = ctypes.c_int
        bufs = [make_buffer(torch, s, folder) for s in b["buffers"]]
        out = next(i for i, s in enumerate(b["buffers"]) if s["role"] == "output")
        fn.argtypes = [ctypes.c_void_p] * len(bufs) + [ctypes.c_int32] * len(b["scalars"]) + [ctypes.c_void_p]
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        call = lambda: fn(*[ctypes.c_void_p(t.data_ptr()) for t in bufs], *b["scalars"], stream)
        if call() != 0:
            row(b["name"], None, None, "launcher failed")
            continue
        torch.cuda.synchronize()
        ref = reference(torch, b["reference"], bufs, out, b.get("reference_args"))
        # One output, or (a backward) one per output buffer in order.
        wants = ref()
        wants = wants if isinstance(wants, tuple) else (wants,)
        outs = [i for i, s in enumerate(b["buffers"]) if s["role"] == "output"]
        err = max((bufs[i].float() - w.float()).abs().max().item() / max(1.0, w.float().abs().max().item())
                  for i, w in zip(outs, wants))
        te_ms, torch_ms = time_ms(torch, call), time_ms(torch, ref)
        if b["name"].startswith("row_sum"):
            src, dst = bufs[0], torch.empty_like(bufs[0])
            copy_ms = time_ms(torch, lambda: dst.copy_(src))
            copy_gbs = 2 * src.numel() * 4 / copy_ms / 1e6
        note = f"max rel err {err:.2e}" + (f", {spills} B spills" if spills else "") + \
            sass_note(folder, b.get("sass"))
        # bytes / ms / 1e6 is GB/s; flops / ms / 1e9 is TFLOP/s.
        row(b["name"], te_ms, torch_ms, note, b["bytes"] / te_ms / 1e6, b["flops"] / te_ms / 1e9)
    return rows, copy_gbs


def main():
    start = time.monotonic()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kit")
    default_out = os.path.join(os.environ["OUT"], "gpu_check.md") if os.environ.get("OUT") else None
    ap.add_argument("--out", default=default_out, help="also write the report (markdown) here, row by row")
    ap.add_argument("--only", nargs="*", default=[], help="kernel names to run")
    ap.add_argument("--budget-s", type=float, default=420, help="start no timing after this many seconds")
    ap.add_argument("--kernel-timeout-s", type=float, default=60,
                    help="stop the run when one kernel (its checks and timings) takes longer")
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--compile-only", action="store_true")
    ap.add_argument("--arch", help="sm_XX (default: the GPU's; sm_90a on sm_90)")
    ap.add_argument("--check-references", action="store_true")
    a = ap.parse_args()
    if a.check_references:
        import torch
        return 1 if check_references(torch, a.kit) else 0
    corpus, bench = check_kit(a.kit, a.only)
    corpus_folders = [(m["name"], os.path.join(a.kit, "corpus", m["name"])) for m in corpus
                      if (not a.only or m["name"] in a.only) and "skip" not in m]
    bench_folders = [(b["name"], os.path.join(a.kit, "bench", b["name"])) for b in bench
                     if not a.only or b["name"] in a.only]
    if a.check_only:
        print(f"kit ok: {len(corpus)} corpus kernels, {len(bench)} bench kernels")
        return 0
    if a.compile_only:
        compiler = Compiler([f for _, f in corpus_folders + bench_folders], a.arch or "sm_90a")
        failed = 0
        for name, folder in corpus_folders + bench_folders:
            ok, log, spills = compiler.result(folder)
            failed += not ok
            print(f"{name}: {'ok' if ok else 'FAIL'}{f', {spills} bytes of spills' if spills else ''}", flush=True)
            if not ok:
                print(log)
        print(f"compiled {len(corpus_folders) + len(bench_folders)} kernels in {time.monotonic() - start:.0f} s")
        return 1 if failed else 0
    import torch
    if not torch.cuda.is_available():
        print("gpu_check: PyTorch sees no CUDA device", file=sys.stderr)
        return 1
    major, minor = torch.cuda.get_device_capability()
    # sm_90a on Hopper: its arch-specific instructions (wgmma, setmaxnreg) are te's
    # fast path there, and the cubin runs on that GPU only anyway.
    arch = a.arch or (f"sm_{major}{minor}a" if (major, minor) == (9, 0) else f"sm_{major}{minor}")
    compiler = Compiler([f for _, f in corpus_folders + bench_folders], arch)
    driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    report = Report(a.out)
    report.add(f"GPU check: {torch.cuda.get_device_name()} ({arch}), driver {driver}, {datetime.date.today()}, "
               f"torch {torch.__version__}, CUDA {torch.version.cuda}", "",
               "| corpus kernel | result | note |", "|---|---|---|")
    watchdog = Watchdog(report, [name for name, _ in corpus_folders + bench_folders], a.kernel_timeout_s)
    corpus_rows = run_corpus(torch, a.kit, corpus, compiler, a.only, report, watchdog)
    report.add("", "| bench kernel | te ms | PyTorch ms | te / PyTorch speed | te GB/s | te TFLOP/s | note |",
               "|---|---|---|---|---|---|---|")
    bench_rows, copy_gbs = run_bench(torch, a.kit, bench, compiler, a.only, report, start + a.budget_s, watchdog)
    if copy_gbs:
        report.add("", f"device-to-device copy: {copy_gbs:.0f} GB/s (the row sum's bandwidth baseline)")
    again = [r[0] for r in corpus_rows if r[1] == "FAIL"] + [r[0] for r in bench_rows if r[1] is None]
    report.add("", f"{time.monotonic() - start:.0f} s; " +
               (f"rerun what failed or did not run: --only {' '.join(again)}" if again else "nothing to rerun"))
    return 1 if any(r[1] == "FAIL" for r in corpus_rows) else 0


if __name__ == "__main__":
    sys.exit(main())
