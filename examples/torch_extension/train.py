"""Trains a tiny model through te operators in PyTorch, on the CPU.

Usage: python3 train.py path/to/libte_torch_example.so [--cuda]

The extension (te_ops.cpp) registers te_example::grid_sample, te_example::bev_pool_v2 and
te_example::linear_gelu. The model samples an image with grid_sample, pools frustum
features onto a BEV grid with bev_pool_v2, and regresses a target through linear_gelu.
Every te op is checked against PyTorch first, and each must have a backward
(te_example::<op>_backward, derived by te::gradient): gradients flow through all three,
so the image and the frustum depth are trained with the model's weights.

--cuda: the extension was built with CUDA (te_add_torch_extension(... CUDA)): each op and
its backward must have a CUDA kernel registered; where PyTorch has a GPU, they run on it
against the CPU kernels, and the model trains there.
"""
import sys

import torch

torch.ops.load_library(sys.argv[1])
ops = torch.ops.te_example
BUILT_WITH_CUDA = "--cuda" in sys.argv[2:]


def has_gradient(name):
    try:
        getattr(ops, name + "_backward")
        return True
    except (AttributeError, RuntimeError):
        return False


def has_cuda_kernel(name):
    return torch._C._dispatch_has_kernel_for_dispatch_key("te_example::" + name, "CUDA")


def check_cuda(image, grid, depth, feat, index):
    """Each op and its backward on the GPU against the CPU kernels."""
    for op in ("grid_sample", "bev_pool_v2", "linear_gelu"):
        for name in (op, op + "_backward"):
            assert has_cuda_kernel(name), f"te_example::{name} has no CUDA kernel"
    print("CUDA kernels registered for every op and backward")
    if not torch.cuda.is_available():
        print("no CUDA device in this PyTorch: the CUDA kernels are not run")
        return
    cuda = lambda ts: [t.detach().cuda() for t in ts]
    x, w, b = torch.randn(64, 70), torch.randn(70, 33), torch.randn(33)
    for op, args in (("grid_sample", [image, grid]), ("bev_pool_v2", [depth, feat] + index),
                     ("linear_gelu", [x, w, b])):
        expected = getattr(ops, op)(*[t.detach() for t in args])
        torch.testing.assert_close(getattr(ops, op)(*cuda(args)).cpu(), expected, rtol=1e-4, atol=1e-4)
        head = torch.randn(expected.shape)
        want = getattr(ops, op + "_backward")(head, *[t.detach() for t in args])
        got = getattr(ops, op + "_backward")(head.cuda(), *cuda(args))
        for g_cpu, g_cuda in zip(want, got):
            torch.testing.assert_close(g_cuda.cpu(), g_cpu, rtol=1e-4, atol=1e-4)
        print(f"te_example::{op} on {torch.cuda.get_device_name()}: forward and backward match the CPU")


def bev_pool_inputs(depth_shape, feat_shape, cells, generator):
    """BEVDet's preprocessing for random frustum points: ranks sorted by BEV cell, and
    the intervals of equal cells."""
    b, n, d, fh, fw = depth_shape
    points = b * n * d * fh * fw // 2
    ranks_depth = torch.randperm(b * n * d * fh * fw, generator=generator)[:points]
    # the feature pixel of each depth element: drop its depth index
    bn, rest = ranks_depth // (d * fh * fw), ranks_depth % (fh * fw)
    ranks_feat = bn * fh * fw + rest
    ranks_bev = torch.randint(0, cells, (points,), generator=generator)
    order = torch.argsort(ranks_bev)
    ranks_depth, ranks_feat, ranks_bev = ranks_depth[order], ranks_feat[order], ranks_bev[order]
    starts = torch.nonzero(torch.cat([torch.tensor([True]), ranks_bev[1:] != ranks_bev[:-1]])).flatten()
    lengths = torch.diff(torch.cat([starts, torch.tensor([points])]))
    return [t.to(torch.int32) for t in (ranks_depth, ranks_feat, ranks_bev, starts, lengths)]


def bev_pool_reference(depth, feat, ranks_depth, ranks_feat, ranks_bev, bev_shape):
    """bev_pool_v2 in PyTorch ops (BEVDet's formula, as index_add)."""
    c = feat.shape[-1]
    values = depth.flatten()[ranks_depth.long()][:, None] * feat.reshape(-1, c)[ranks_feat.long()]
    out = torch.zeros(bev_shape[0] * bev_shape[1] * bev_shape[2] * bev_shape[3], c)
    return out.index_add(0, ranks_bev.long(), values).reshape(*bev_shape, c)


def main():
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)

    # The inputs: an image and its sampling grid; frustum depth and features.
    image = torch.randn(2, 3, 12, 12, generator=g).requires_grad_(has_gradient("grid_sample"))
    grid = torch.rand(2, 6, 6, 2, generator=g) * 2 - 1
    depth = torch.rand(2, 1, 4, 4, 4, generator=g).requires_grad_(has_gradient("bev_pool_v2"))
    feat = torch.randn(2, 1, 4, 4, 5, generator=g)
    index = bev_pool_inputs(depth.shape, feat.shape, 64, g)

    # Each te op against PyTorch's own.
    sampled = ops.grid_sample(image, grid)
    ref = torch.nn.functional.grid_sample(image.detach(), grid, mode="bilinear", padding_mode="zeros",
                                          align_corners=False)
    torch.testing.assert_close(sampled.detach(), ref, rtol=1e-5, atol=1e-5)
    bev = ops.bev_pool_v2(depth, feat, *index)
    torch.testing.assert_close(bev.detach(), bev_pool_reference(depth.detach(), feat, *index[:3], (2, 1, 8, 8)),
                               rtol=1e-5, atol=1e-5)
    x, w, b = torch.randn(4, 7), torch.randn(7, 3), torch.randn(3)
    torch.testing.assert_close(ops.linear_gelu(x, w, b), torch.nn.functional.gelu(x @ w + b), rtol=1e-5, atol=1e-5)
    for op in ("grid_sample", "bev_pool_v2", "linear_gelu"):
        assert has_gradient(op), f"te_example::{op} has no backward"
        print(f"te_example::{op}: matches PyTorch; backward: te_example::{op}_backward")
    # Through the te ops' backward, against PyTorch's own gradients.
    image_ref = image.detach().clone().requires_grad_()
    torch.nn.functional.grid_sample(image_ref, grid, align_corners=False).sum().backward()
    ops.grid_sample(image, grid).sum().backward()
    torch.testing.assert_close(image.grad, image_ref.grad, rtol=1e-5, atol=1e-5)
    depth_ref = depth.detach().clone().requires_grad_()
    bev_pool_reference(depth_ref, feat, *index[:3], (2, 1, 8, 8)).sum().backward()
    ops.bev_pool_v2(depth, feat, *index).sum().backward()
    torch.testing.assert_close(depth.grad, depth_ref.grad, rtol=1e-5, atol=1e-5)
    image.grad, depth.grad = None, None
    if BUILT_WITH_CUDA:
        check_cuda(image, grid, depth, feat, index)

    # The model: features from both ops -> linear_gelu -> a linear read-out.
    features = 3 * 6 * 6 + 8 * 8 * 5
    w1 = (torch.randn(features, 16, generator=g) * 0.05).requires_grad_()
    b1 = torch.zeros(16, requires_grad=True)
    w2 = (torch.randn(16, 1, generator=g) * 0.1).requires_grad_()
    target = torch.tensor([[1.0], [-1.0]])
    params = [w1, b1, w2] + [t for t in (image, depth) if t.requires_grad]
    optimizer = torch.optim.SGD(params, lr=0.01)

    def loss_fn():
        sampled = ops.grid_sample(image, grid)
        bev = ops.bev_pool_v2(depth, feat, *index)
        # requires_grad flows through every te op that has a gradient
        assert sampled.requires_grad == image.requires_grad and bev.requires_grad == depth.requires_grad
        x = torch.cat([sampled.reshape(2, -1), bev.reshape(2, -1)], dim=1)
        hidden = ops.linear_gelu(x, w1, b1)
        assert hidden.requires_grad
        return torch.mean((hidden @ w2 - target) ** 2)

    losses = []
    for step in range(20):
        optimizer.zero_grad()
        loss = loss_fn()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step % 5 == 0 or step == 19:
            print(f"step {step:2d}: loss {loss.item():.5f}")
    for t, name in ((image, "image"), (depth, "depth"), (w1, "w1"), (b1, "b1")):
        if t.requires_grad:
            assert t.grad is not None and torch.count_nonzero(t.grad) > 0, f"{name} got no gradient"
    assert losses[-1] < 0.5 * losses[0], f"the loss did not decrease: {losses[0]} -> {losses[-1]}"
    print(f"trained: loss {losses[0]:.5f} -> {losses[-1]:.5f}")


if __name__ == "__main__":
    main()
