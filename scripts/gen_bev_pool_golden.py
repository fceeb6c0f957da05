#!/usr/bin/python3
"""Writes the PyTorch-made golden data for te::ops::bev_pool_v2 under tests/data/bev_pool/.

Semantics (BEVDet's bev_pool_v2, as in mmdet3d / BEVDet): for interval i with
s = interval_starts[i], L = interval_lengths[i] and every channel c,
    out.flat[ranks_bev[s] * C + c] = sum_{j < L} depth.flat[ranks_depth[s + j]]
                                                 * feat.flat[ranks_feat[s + j] * C + c]
and zero where no interval lands. The reference below is pure PyTorch: every kept frustum
point's depth x feature row is added into its BEV cell with index_add_ (it never looks at
the intervals; the intervals are derived from the sorted ranks as BEVDet does, and the
script checks that both views agree in float64).

Cases (one folder each, files named after the op's arguments):
  small      B=2, N=2 cameras, D=3, fH x fW = 2 x 3, C = 5, a 2 x 3 x 4 BEV grid, random
             ranks with a third of the points dropped (empty cells, runs of 1..5 points).
  realistic  B=1, 6 cameras, D = 59, fH x fW = 16 x 44, C = 80, a 1 x 128 x 128 BEV grid;
             ranks from a synthetic surround-view projection: 6 cameras 60 degrees apart
             (70 degree field of view), depth bins 1..59 m, 0.8 m cells, points outside the
             grid or the height band dropped, sorted by BEV rank (stable).
Each folder holds depth.npy (float32, B,N,D,fH,fW), feat.npy (float32, B,N,fH,fW,C),
ranks_depth/ranks_feat/ranks_bev/interval_starts/interval_lengths.npy (int32),
bev_shape.npy (int32: B, Dz, Dy, Dx) and out.npy (float32, B,Dz,Dy,Dx,C).

Needs Debian's PyTorch (CPU) and numpy (scripts/deps.sh python3-torch), then
    /usr/bin/python3 scripts/gen_bev_pool_golden.py
Inputs come from fixed seeds; the outputs were made with PyTorch 1.13 on the CPU.
"""
import math
import os
import sys

import numpy as np

try:
    import torch
except ImportError:
    sys.exit("gen_bev_pool_golden.py needs PyTorch: run scripts/deps.sh python3-torch, then "
             "/usr/bin/python3 scripts/gen_bev_pool_golden.py")

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "bev_pool")


def bev_pool_v2_reference(depth, feat, ranks_depth, ranks_feat, ranks_bev, bev_shape):
    """Pure PyTorch: each kept point's depth * feature row added into its BEV cell."""
    b, dz, dy, dx = bev_shape
    c = feat.shape[-1]
    values = depth.reshape(-1)[ranks_depth.long()].unsqueeze(1) * feat.reshape(-1, c)[ranks_feat.long()]
    out = torch.zeros(b * dz * dy * dx, c, dtype=feat.dtype)
    out.index_add_(0, ranks_bev.long(), values)
    return out.reshape(b, dz, dy, dx, c)


def intervals_of(ranks_bev):
    """BEVDet's intervals: one per run of equal (sorted) BEV ranks."""
    n = ranks_bev.shape[0]
    kept = torch.ones(n, dtype=torch.bool)
    kept[1:] = ranks_bev[1:] != ranks_bev[:-1]
    starts = torch.nonzero(kept).flatten()
    lengths = torch.diff(starts, append=torch.tensor([n]))
    return starts.int(), lengths.int()


def by_intervals_float64(depth, feat, ranks_depth, ranks_feat, ranks_bev, starts, lengths, bev_shape):
    """The interval formula itself, in float64 (the check that the intervals are right)."""
    b, dz, dy, dx = bev_shape
    c = feat.shape[-1]
    point_interval = torch.repeat_interleave(torch.arange(starts.shape[0]), lengths.long())
    values = depth.double().reshape(-1)[ranks_depth.long()].unsqueeze(1) * \
        feat.double().reshape(-1, c)[ranks_feat.long()]
    per_interval = torch.zeros(starts.shape[0], c, dtype=torch.float64).index_add_(0, point_interval, values)
    out = torch.zeros(b * dz * dy * dx, c, dtype=torch.float64)
    out[ranks_bev[starts.long()].long()] = per_interval
    return out.reshape(b, dz, dy, dx, c)


def save_case(name, depth, feat, ranks_depth, ranks_feat, ranks_bev, bev_shape):
    order = torch.argsort(ranks_bev, stable=True)
    ranks_depth, ranks_feat, ranks_bev = ranks_depth[order].int(), ranks_feat[order].int(), ranks_bev[order].int()
    starts, lengths = intervals_of(ranks_bev)
    out = bev_pool_v2_reference(depth, feat, ranks_depth, ranks_feat, ranks_bev, bev_shape)
    exact = by_intervals_float64(depth, feat, ranks_depth, ranks_feat, ranks_bev, starts, lengths, bev_shape)
    err = (out.double() - exact).abs().max().item()
    if err > 1e-4:
        sys.exit(f"{name}: index_add_ and the interval formula disagree by {err}")
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    arrays = dict(depth=depth, feat=feat, ranks_depth=ranks_depth, ranks_feat=ranks_feat, ranks_bev=ranks_bev,
                  interval_starts=starts, interval_lengths=lengths,
                  bev_shape=torch.tensor(bev_shape, dtype=torch.int32), out=out)
    for key, t in arrays.items():
        np.save(os.path.join(folder, key + ".npy"), np.ascontiguousarray(t.numpy()))
    print(f"{name}: {ranks_bev.shape[0]} points, {starts.shape[0]} intervals, "
          f"max interval {lengths.max().item()}, |index_add_ - float64 intervals| = {err:.2e}")


def depth_and_feat(gen, b, n, d, fh, fw, c):
    depth = torch.softmax(torch.randn(b, n, d, fh, fw, generator=gen), dim=2)
    feat = torch.randn(b, n, fh, fw, c, generator=gen)
    return depth, feat


def small_case():
    gen = torch.Generator().manual_seed(7)
    b, n, d, fh, fw, c = 2, 2, 3, 2, 3, 5
    bev = (b, 2, 3, 4)
    depth, feat = depth_and_feat(gen, b, n, d, fh, fw, c)
    points = torch.arange(b * n * d * fh * fw)
    kept = points[torch.rand(points.shape[0], generator=gen) > 0.33]
    bb, rest = kept // (n * d * fh * fw), kept % (n * d * fh * fw)
    nn, rest = rest // (d * fh * fw), rest % (d * fh * fw)
    hw = rest % (fh * fw)
    ranks_feat = (bb * n + nn) * fh * fw + hw
    cells = bev[1] * bev[2] * bev[3]
    # Few cells per batch so that runs of several points land in one cell.
    ranks_bev = bb * cells + torch.randint(0, cells // 2, (kept.shape[0],), generator=gen) * 2
    save_case("small", depth, feat, kept, ranks_feat, ranks_bev, bev)


def realistic_case():
    gen = torch.Generator().manual_seed(11)
    b, n, d, fh, fw, c = 1, 6, 59, 16, 44, 80
    dz, dy, dx = 1, 128, 128
    cell, half = 0.8, 51.2
    depth, feat = depth_and_feat(gen, b, n, d, fh, fw, c)
    cam, dd, hh, ww = torch.meshgrid(torch.arange(n), torch.arange(d), torch.arange(fh), torch.arange(fw),
                                     indexing="ij")
    dist = 1.0 + dd.double() + 0.2 * torch.rand(dd.shape, generator=gen, dtype=torch.float64)
    yaw = cam.double() * (math.pi / 3) + (ww.double() / (fw - 1) - 0.5) * math.radians(70)
    x = dist * torch.cos(yaw)
    y = dist * torch.sin(yaw)
    z = 1.5 - (hh.double() / (fh - 1) - 0.35) * dist * 0.6
    ix = torch.floor((x + half) / cell).long()
    iy = torch.floor((y + half) / cell).long()
    keep = (ix >= 0) & (ix < dx) & (iy >= 0) & (iy < dy) & (z > -5) & (z < 3)
    ranks_depth = torch.arange(b * n * d * fh * fw).reshape(n, d, fh, fw)[keep]
    ranks_feat = ((cam * fh + hh) * fw + ww)[keep]
    ranks_bev = (iy * dx + ix)[keep]
    save_case("realistic", depth, feat, ranks_depth, ranks_feat, ranks_bev, (b, dz, dy, dx))


if __name__ == "__main__":
    small_case()
    realistic_case()
