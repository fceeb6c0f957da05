"""te operators in Python's torch: torch.ops.load_library of an extension built with
te_add_torch_extension (tests/torch/test_ops.cpp), autograd, torch.autograd.gradcheck in
float64, and the errors as PyTorch raises them. Run by CTest (test torch_python_ops), which
sets TE_TORCH_TEST_OPS to the extension's path."""
import os
import unittest

import torch

torch.ops.load_library(os.environ["TE_TORCH_TEST_OPS"])
ops = torch.ops.te_pytest


class TestTeOps(unittest.TestCase):
    def test_forward_matches_torch(self):
        for n in (1, 5, 64):
            x, b = torch.randn(n, 24), torch.randn(24)
            torch.testing.assert_close(ops.bias_gelu(x, b), torch.nn.functional.gelu(x + b))
        x, w = torch.randn(7, 5, dtype=torch.float64), torch.randn(5, 3, dtype=torch.float64)
        torch.testing.assert_close(ops.matmul64(x, w), x @ w)

    def test_schema_names_the_arguments(self):
        self.assertEqual(str(ops.bias_gelu.default._schema), "te_pytest::bias_gelu(Tensor x, Tensor bias) -> Tensor")
        self.assertEqual(str(ops.bias_gelu64_backward.default._schema),
                         "te_pytest::bias_gelu64_backward(Tensor grad_y, Tensor x, Tensor bias) -> (Tensor, Tensor)")

    def test_autograd_matches_torch(self):
        x = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
        b = torch.randn(6, dtype=torch.float64, requires_grad=True)
        head = torch.randn(4, 6, dtype=torch.float64)
        (ops.bias_gelu64(x, b) * head).sum().backward()
        x2, b2 = x.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
        (torch.nn.functional.gelu(x2 + b2) * head).sum().backward()
        torch.testing.assert_close(x.grad, x2.grad)
        torch.testing.assert_close(b.grad, b2.grad)

    def test_gradcheck_float64(self):
        x = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
        b = torch.randn(5, dtype=torch.float64, requires_grad=True)
        w = torch.randn(5, 2, dtype=torch.float64, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(ops.bias_gelu64, (x, b)))
        self.assertTrue(torch.autograd.gradcheck(ops.matmul64, (x, w)))
        self.assertTrue(torch.autograd.gradcheck(ops.softmax64, (x,)))
        u = torch.randn(6, dtype=torch.float64, requires_grad=True)
        v = torch.randn(6, dtype=torch.float64, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(ops.two_outputs64, (u, v)))
        # One input without requires_grad.
        self.assertTrue(torch.autograd.gradcheck(ops.matmul64, (x, w.detach())))

    def test_grid_sample_gradients(self):
        # bilinear, border padding, align_corners=True; grid points kept off the pixel
        # boundaries, where the derivative jumps and finite differences disagree.
        torch.manual_seed(0)
        data = torch.randn(2, 3, 5, 6, dtype=torch.float64, requires_grad=True)
        cells = torch.randint(0, 4, (2, 4, 3, 2)).double() + torch.rand(2, 4, 3, 2, dtype=torch.float64) * 0.8 + 0.1
        grid = (cells / torch.tensor([5.0, 4.0], dtype=torch.float64) * 2 - 1).requires_grad_()
        self.assertTrue(torch.autograd.gradcheck(ops.grid_sample64, (data, grid)))
        head = torch.randn(2, 3, 4, 3, dtype=torch.float64)
        d_te = torch.autograd.grad((ops.grid_sample64(data, grid) * head).sum(), (data, grid))
        ref = torch.nn.functional.grid_sample(data, grid, mode="bilinear", padding_mode="border", align_corners=True)
        d_torch = torch.autograd.grad((ref * head).sum(), (data, grid))
        torch.testing.assert_close(d_te, d_torch)

    def test_bev_pool_gradients(self):
        g = torch.Generator().manual_seed(1)
        depth = torch.rand(1, 2, 3, 2, 2, dtype=torch.float64, generator=g).requires_grad_()
        feat = torch.randn(1, 2, 2, 2, 4, dtype=torch.float64, generator=g).requires_grad_()
        points = 12
        ranks_depth = torch.randperm(depth.numel(), generator=g)[:points]
        ranks_feat = (ranks_depth // 12) * 4 + ranks_depth % 4  # (b, cam) and (h, w) of each depth element
        ranks_bev, order = torch.sort(torch.randint(0, 6, (points,), generator=g))
        ranks_depth, ranks_feat = ranks_depth[order], ranks_feat[order]
        starts = torch.nonzero(torch.cat([torch.tensor([True]), ranks_bev[1:] != ranks_bev[:-1]])).flatten()
        lengths = torch.diff(torch.cat([starts, torch.tensor([points])]))
        index = [t.to(torch.int32) for t in (ranks_depth, ranks_feat, ranks_bev, starts, lengths)]
        self.assertTrue(torch.autograd.gradcheck(lambda d, f: ops.bev_pool_v2_64(d, f, *index), (depth, feat)))

    def test_requires_grad_flows(self):
        x = torch.randn(2, 3, requires_grad=True)
        self.assertTrue(ops.bias_gelu(x, torch.randn(3)).requires_grad)
        self.assertFalse(ops.bias_gelu(x.detach(), torch.randn(3)).requires_grad)
        with torch.no_grad():
            self.assertFalse(ops.bias_gelu(x, torch.randn(3)).requires_grad)

    def test_no_gradient_is_an_error_at_backward(self):
        x = torch.randn(4, requires_grad=True)
        y = ops.no_grad(x)
        torch.testing.assert_close(y, x.detach() * 2)
        with self.assertRaisesRegex(RuntimeError, "te_pytest::no_grad has no gradient: it was registered with "
                                    "OpDef::differentiable = false"):
            y.sum().backward()

    def test_errors_name_operator_and_argument(self):
        x = torch.randn(4, 6)
        with self.assertRaisesRegex(RuntimeError, r"te_pytest::bias_gelu: argument 'x' is not contiguous"):
            ops.bias_gelu(x.t(), torch.randn(4))
        with self.assertRaisesRegex(RuntimeError, r"te_pytest::bias_gelu: argument 2 \('bias'\) has dtype float64, "
                                    "expected float32"):
            ops.bias_gelu(x, torch.randn(6, dtype=torch.float64))
        with self.assertRaisesRegex(RuntimeError, r"te_pytest::bias_gelu: k is 6 \(given or bound earlier\) but "
                                    "input 'bias' has 5 in dimension 0"):
            ops.bias_gelu(x, torch.randn(5))
        with self.assertRaisesRegex(RuntimeError, r"te_pytest::bias_gelu: input 'bias' has rank 2"):
            ops.bias_gelu(x, torch.randn(1, 6))
        with self.assertRaisesRegex(RuntimeError, r"te_pytest::bias_gelu: argument 'x' is on device meta"):
            ops.bias_gelu(torch.empty(4, 6, device="meta"), torch.randn(6))
        with self.assertRaises(RuntimeError):  # the schema: two tensors
            ops.bias_gelu(x)

    def test_double_backward_is_an_error(self):
        x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
        w = torch.randn(3, 2, dtype=torch.float64)
        (g,) = torch.autograd.grad(ops.matmul64(x, w).sum(), x)  # first derivatives work
        torch.testing.assert_close(g, torch.ones(2, 2, dtype=torch.float64) @ w.t())
        with self.assertRaisesRegex(RuntimeError, "te_pytest::matmul64_backward: double backward"):
            torch.autograd.grad(ops.matmul64(x, w).sum(), x, create_graph=True)

if __name__ == "__main__":
    unittest.main()
