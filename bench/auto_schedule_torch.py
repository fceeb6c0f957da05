#!/usr/bin/python3
"""Times PyTorch (CPU) on one kernel of the auto-scheduling suite
(bench/bench_auto_schedule.cpp) at the thread count given: prints one line of per-call
seconds, space-separated. Usage: auto_schedule_torch.py KERNEL THREADS CALLS
KERNEL is the suite's name: sgemm_1024, bmm_16x256x256x256, conv2d_1x64x56x56_3x3_64,
depthwise_1x64x56x56_3x3, softmax_1024x4096, layer_norm_1024x4096,
grid_sample_1x256x200x200, transpose_add_relu_2048, and the Ansor suite's ansor_c1d ...
ansor_nrm (bench/ansor_suite.h)."""
import os
import re
import sys
import time

kernel, threads, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# torch.set_num_threads does not reach the BLAS Debian's PyTorch calls for mm / bmm
# (OpenBLAS, whose threads are fixed when it loads): its thread count comes from the
# environment, set before torch (and with it the BLAS) is imported.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(threads)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(threads)
torch.manual_seed(0)
r = lambda *shape: torch.rand(*shape) * 2 - 1  # noqa: E731


def ansor(name):
    """The Ansor suite (bench/ansor_suite.h) as PyTorch's own operators (NCHW, OIHW)."""
    nchw = name.endswith("_nchw")
    op = name[len("ansor_"):].replace("_nchw", "")
    if op == "c1d":
        x, w = r(1, 64, 256), r(128, 64, 3)
        return lambda: F.conv1d(x, w, stride=2, padding=1)
    if op == "c2d_small":
        x, w = r(1, 32, 28, 28), r(32, 32, 3, 3)
        return lambda: F.conv2d(x, w)
    if op == "c2d_deep":
        x, w = r(1, 256, 14, 14), r(256, 256, 3, 3)
        return lambda: F.conv2d(x, w, padding=1)
    if op in ("c2d", "dil"):
        x, w = r(1, 3, 224, 224), r(64, 3, 7, 7)
        return lambda: F.conv2d(x, w, stride=2, padding=3, dilation=2 if op == "dil" else 1)
    if op == "c3d":
        x, w = r(1, 3, 16, 224, 224), r(64, 3, 7, 7, 7)
        return lambda: F.conv3d(x, w, stride=2, padding=3)
    if op == "gmm":
        a, b = r(1, 128, 128), r(1, 128, 128)
        return lambda: torch.bmm(a, b)
    if op == "grp":
        x, w = r(1, 64, 56, 56), r(128, 16, 3, 3)
        return lambda: F.conv2d(x, w, stride=2, padding=1, groups=4)
    if op == "dep":
        x, w = r(1, 32, 112, 112), r(32, 1, 3, 3)
        return lambda: F.conv2d(x, w, padding=1, groups=32)
    if op == "t2d":
        x, w = r(1, 512, 4, 4), r(512, 256, 4, 4)
        return lambda: F.conv_transpose2d(x, w, stride=2, padding=1)
    if op == "cap":  # no PyTorch operator: patches (as_strided) and one einsum
        x, w = r(1, 16, 16, 4, 4, 32), r(3, 3, 4, 4, 32, 32)

        def cap():
            p = F.pad(x, (0, 0, 0, 0, 0, 0, 1, 1, 1, 1))
            s = p.stride()
            patches = p.as_strided((1, 8, 8, 3, 3, 4, 4, 32), (s[0], 2 * s[1], 2 * s[2], s[1], s[2], s[3], s[4], s[5]))
            return torch.einsum("nhwyxikc,yxkjcd->nhwijd", patches, w)
        return cap
    if op == "nrm":
        a = r(1, 4096, 1024)
        return lambda: torch.linalg.norm(a.reshape(1, -1), dim=1)
    sys.exit(f"auto_schedule_torch.py: unknown kernel {name}")


dims = [] if kernel.startswith("ansor_") else \
    [int(v) for v in re.findall(r"\d+", re.search(r"_(\d.*)$", kernel).group(1))]  # after the op name

if kernel.startswith("ansor_"):
    fn = ansor(kernel)
elif kernel.startswith("sgemm_"):
    n = dims[0]
    a, b = r(n, n), r(n, n)
    fn = lambda: torch.mm(a, b)  # noqa: E731
elif kernel.startswith("bmm_"):
    q, m, n, k = dims
    a, b = r(q, m, k), r(q, k, n)
    fn = lambda: torch.bmm(a, b)  # noqa: E731
elif kernel.startswith("conv2d_"):
    _, c, h, w, _, _, f = dims
    x, wt = r(1, c, h, w), r(f, c, 3, 3)
    fn = lambda: F.conv2d(x, wt, padding=1)  # noqa: E731
elif kernel.startswith("depthwise_"):
    _, c, h, w, _, _ = dims
    x, wt = r(1, c, h, w), r(c, 1, 3, 3)
    fn = lambda: F.conv2d(x, wt, padding=1, groups=c)  # noqa: E731
elif kernel.startswith("softmax_"):
    rows, cols = dims
    x = r(rows, cols) * 4
    fn = lambda: torch.softmax(x, dim=-1)  # noqa: E731
elif kernel.startswith("layer_norm_"):
    rows, cols = dims
    x, g, b = r(rows, cols) * 3, r(cols), r(cols)
    fn = lambda: F.layer_norm(x, (cols,), g, b)  # noqa: E731
elif kernel.startswith("grid_sample_"):
    _, c, h, w = dims
    x, grid = r(1, c, h, w), r(1, h, w, 2)
    fn = lambda: F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)  # noqa: E731
elif kernel.startswith("transpose_add_relu_"):
    n = dims[0]
    a, b = r(n, n), r(n, n)
    fn = lambda: torch.relu(a.t() + b)  # noqa: E731
else:
    sys.exit(f"auto_schedule_torch.py: unknown kernel {kernel}")

with torch.no_grad():
    for _ in range(3):
        fn()
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
print(" ".join(f"{s:.9f}" for s in samples))
