#!/usr/bin/python3
"""Golden bfloat16 data made by PyTorch, for tests/test_bfloat16.cpp.

NumPy has no bfloat16: every bfloat16 array here is its raw bits, taken with
`t.view(torch.int16)` and saved as uint16 ('<u2'), the way te's save_npy writes bfloat16
(read them with NDArray::load_npy(path, BFloat(16))). Run from anywhere with Debian's
python (numpy, torch 1.13); a rerun rewrites byte-identical files.

NaN bits are not portable: PyTorch's scalar conversion gives 0x7fc0, its AVX2 one 0xffff,
te keeps the sign and payload (quieted); the tests only ask a NaN to stay a NaN.
"""
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def bits(t):
    """The bits of a bfloat16 tensor as a numpy uint16 array."""
    assert t.dtype == torch.bfloat16
    return t.contiguous().view(torch.int16).numpy().view(np.uint16)


def save(name, array):
    np.save(os.path.join(HERE, name), np.ascontiguousarray(array))


def conversion_inputs():
    """float32 values on every path of float -> bfloat16 rounding."""
    f = np.float32
    u = lambda x: np.array([x], dtype=np.uint32).view(np.float32)[0]
    special = [0.0, -0.0, 1.0, -1.0, 3.140625, 1e-3, 65504.0, 1e30, -1e-30,
               np.inf, -np.inf, np.nan,
               u(0x3f808000),  # a tie below an even mantissa: rounds down
               u(0x3f818000),  # a tie below an odd mantissa: rounds up
               u(0x3f808001),  # just above a tie: up
               u(0x3f807fff),  # just below a tie: down
               u(0x7f7fffff),  # FLT_MAX: rounds to infinity
               u(0x7f7f7fff),  # the largest value that stays finite
               u(0x00000001),  # the smallest subnormal: rounds to zero
               u(0x00008000),  # a subnormal tie: to even (zero)
               u(0x00018000),  # a subnormal tie: to even (up)
               u(0x007fffff),  # the largest subnormal: rounds up to the smallest normal
               u(0x80c00000)]
    rng = np.random.default_rng(17)
    randoms = np.concatenate([rng.standard_normal(200) * 10.0 ** rng.integers(-30, 30, 200),
                              rng.uniform(-4, 4, 56)])
    return np.array(special + list(randoms), dtype=f)


def main():
    torch.manual_seed(0)
    x = conversion_inputs()
    save("convert_in.npy", x)
    save("convert_out.npy", bits(torch.from_numpy(x).to(torch.bfloat16)))

    # Elementwise arithmetic: PyTorch computes bfloat16 + - * / in float and rounds the
    # result to nearest even, as te does.
    g = torch.Generator().manual_seed(5)
    a = (torch.randn(4, 64, generator=g) * 8).to(torch.bfloat16)
    b = (torch.randn(4, 64, generator=g) * 8).to(torch.bfloat16)
    b[0, :4] = torch.tensor([0.0, -0.0, 1e-38, 3e38])  # division by zero, subnormal results, overflow
    a[0, 4:8] = torch.tensor([3e38, -3e38, 1e-38, 0.0])
    save("a.npy", bits(a))
    save("b.npy", bits(b))
    for name, r in (("add", a + b), ("sub", a - b), ("mul", a * b), ("div", a / b)):
        save(name + ".npy", bits(r))


if __name__ == "__main__":
    main()
