#!/usr/bin/python3
"""PyTorch's CPU forward + backward (autograd) of grid_sample and of BEVDet's bev_pool_v2
reference, at the thread count given: prints one line of per-call seconds, space-separated
(bench/bench_backward.cpp reads it as the "pytorch" baseline).
Usage: backward_torch.py grid_sample N C H W HO WO THREADS CALLS
       backward_torch.py bev_pool DATA_DIR THREADS CALLS
       backward_torch.py softmax|layer_norm ROWS COLS THREADS CALLS
       backward_torch.py matmul N THREADS CALLS
       backward_torch.py conv2d N C H W K THREADS CALLS   (C -> C channels, K x K, no padding)"""
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def grid_sample_case(n, c, h, w, ho, wo):
    gen = torch.Generator().manual_seed(3)
    data = (torch.rand(n, c, h, w, generator=gen) * 2 - 1).requires_grad_(True)
    grid = (torch.rand(n, ho, wo, 2, generator=gen) * 2 - 1).requires_grad_(True)
    head = torch.rand(n, c, ho, wo, generator=gen)

    def call():
        out = F.grid_sample(data, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
        torch.autograd.grad(out, (data, grid), head)
    return call


def bev_pool_case(folder):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
    from gen_bev_pool_golden import bev_pool_v2_reference
    load = lambda name: torch.from_numpy(np.load(os.path.join(folder, name + ".npy")))  # noqa: E731
    depth = load("depth").requires_grad_(True)
    feat = load("feat").requires_grad_(True)
    ranks = [load(n) for n in ("ranks_depth", "ranks_feat", "ranks_bev")]
    shape = tuple(load("bev_shape").tolist())
    head = torch.ones(shape + (feat.shape[-1],))

    def call():
        out = bev_pool_v2_reference(depth, feat, *ranks, shape)
        torch.autograd.grad(out, (depth, feat), head)
    return call


def rows_case(op, rows, cols):
    gen = torch.Generator().manual_seed(5)
    x = torch.rand(rows, cols, generator=gen).requires_grad_(True)
    w = torch.rand(cols, generator=gen).requires_grad_(True)
    b = torch.rand(cols, generator=gen).requires_grad_(True)
    head = torch.rand(rows, cols, generator=gen)
    if op == "softmax":
        return lambda: torch.autograd.grad(torch.softmax(x, -1), (x,), head)
    return lambda: torch.autograd.grad(F.layer_norm(x, (cols,), w, b, 1e-5), (x, w, b), head)


def matmul_case(n):
    gen = torch.Generator().manual_seed(6)
    a = torch.rand(n, n, generator=gen).requires_grad_(True)
    b = torch.rand(n, n, generator=gen).requires_grad_(True)
    head = torch.rand(n, n, generator=gen)
    return lambda: torch.autograd.grad(a @ b, (a, b), head)


def conv2d_case(n, c, h, w, k):
    gen = torch.Generator().manual_seed(7)
    x = torch.rand(n, c, h, w, generator=gen).requires_grad_(True)
    wt = torch.rand(c, c, k, k, generator=gen).requires_grad_(True)
    head = torch.rand(n, c, h - k + 1, w - k + 1, generator=gen)
    return lambda: torch.autograd.grad(F.conv2d(x, wt), (x, wt), head)


if sys.argv[1] in ("softmax", "layer_norm"):
    fn = rows_case(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
    threads, calls = int(sys.argv[4]), int(sys.argv[5])
elif sys.argv[1] == "matmul":
    fn = matmul_case(int(sys.argv[2]))
    threads, calls = int(sys.argv[3]), int(sys.argv[4])
elif sys.argv[1] == "conv2d":
    fn = conv2d_case(*[int(a) for a in sys.argv[2:7]])
    threads, calls = int(sys.argv[7]), int(sys.argv[8])
elif sys.argv[1] == "grid_sample":
    fn = grid_sample_case(*[int(a) for a in sys.argv[2:8]])
    threads, calls = int(sys.argv[8]), int(sys.argv[9])
else:
    fn = bev_pool_case(sys.argv[2])
    threads, calls = int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(threads)
for _ in range(3):
    fn()
samples = []
for _ in range(calls):
    start = time.perf_counter()
    fn()
    samples.append(time.perf_counter() - start)
print(" ".join(f"{s:.9f}" for s in samples))
