#!/usr/bin/python3
"""Times the pure-PyTorch bev_pool_v2 reference (scripts/gen_bev_pool_golden.py) on the
realistic golden case, CPU, at the thread count given: prints one line of per-call
seconds, space-separated (bench/bench_bev_pool.cpp reads it as the "pytorch" baseline).
Usage: bev_pool_torch.py DATA_DIR THREADS CALLS"""
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from gen_bev_pool_golden import bev_pool_v2_reference  # noqa: E402

folder, threads, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
load = lambda name: torch.from_numpy(np.load(os.path.join(folder, name + ".npy")))  # noqa: E731
args = [load(n) for n in ("depth", "feat", "ranks_depth", "ranks_feat", "ranks_bev")]
shape = tuple(load("bev_shape").tolist())
for _ in range(3):
    bev_pool_v2_reference(*args, shape)
samples = []
for _ in range(calls):
    start = time.perf_counter()
    bev_pool_v2_reference(*args, shape)
    samples.append(time.perf_counter() - start)
print(" ".join(f"{s:.9f}" for s in samples))
