#!/usr/bin/python3
"""Writes the PyTorch-made golden data under tests/data/torch_golden/ (see SOURCE.md there).

Cases, one folder each: gelu (exact and tanh), rotary (LLaMA / GPT-NeoX rotate_half),
layer_norm (with per-row mean and biased variance), argmax_rows (first-index ties, -inf),
int4_unpack (two int4 per uint8 and eight per int32, per-group scales and zero points),
and autograd's gradients in float64 for te::gradient (tests/test_autodiff_golden.cpp):
grid_sample 2-D/3-D in every mode, padding and align_corners, softmax, layer_norm,
matmul, conv2d.
tests/test_torch_golden.cpp checks te's kernels against gelu, rotary and int4_unpack;
layer_norm and argmax_rows wait for te's Welford and argmax reducers.

Needs Debian's PyTorch (CPU) and numpy, installed through the project's dependency script:
    scripts/deps.sh python3-torch        # apt-get: about 170 packages, 600 MB installed
    /usr/bin/python3 scripts/gen_torch_golden.py [case ...]   # default: every case
(/usr/bin/python3: Debian's packages are not visible to a pyenv or venv python.)
Every input comes from a fixed seed, so a rerun rewrites the same inputs; the expected
outputs can move in the last bit with another PyTorch version or CPU capability (the files
were made with PyTorch 1.13.1, CPU capability AVX2). The script checks the PyTorch
semantics it relies on (first-index argmax ties, the int4 round trip) and stops if one fails.
"""
import math
import os
import sys

import numpy as np

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit("gen_torch_golden.py needs PyTorch: run scripts/deps.sh python3-torch, then "
             "/usr/bin/python3 scripts/gen_torch_golden.py")

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "torch_golden")
MAX_FILE_BYTES = 100 * 1024


def save(case, name, tensor):
    folder = os.path.join(OUT, case)
    os.makedirs(folder, exist_ok=True)
    array = tensor.detach().cpu().numpy() if isinstance(tensor, torch.Tensor) else tensor
    array = np.ascontiguousarray(array)
    path = os.path.join(folder, name + ".npy")
    np.save(path, array)
    size = os.path.getsize(path)
    if size > MAX_FILE_BYTES:
        sys.exit("%s is %d bytes; keep golden files under %d" % (path, size, MAX_FILE_BYTES))
    print("  %-28s %-8s %-14s %6d bytes" % (case + "/" + name + ".npy", array.dtype, array.shape, size))


def check(condition, what):
    if not condition:
        sys.exit("PyTorch semantics check failed: " + what)


def max_ulp_vs_f64(got32, exact64):
    """The largest |got - exact| in units of the last place of exact as a float32."""
    got = got32.double()
    finite = torch.isfinite(exact64)
    ulp = torch.from_numpy(np.spacing(np.abs(exact64.float().numpy()))).double()
    return ((got - exact64).abs()[finite] / ulp[finite]).max().item()


def gelu():
    """GELU exact (erf) and the tanh approximation on 64 x 128, specials in row 0."""
    g = torch.Generator().manual_seed(21)
    x = torch.randn(64, 128, generator=g) * 3
    specials = [0.0, -0.0, 1e-3, -1e-3, 1e-30, -1e-30, 0.5, -0.5, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5,
                6, -6, 7, -7, 8, -8, 10, -10, 12, -12, 20, -20, 50, -50, 100, -100, 1e4, -1e4,
                1e13, -1e13, 3e38, -3e38, math.inf, -math.inf]
    x[0, :len(specials)] = torch.tensor(specials)
    x[1] = torch.linspace(-12, 12, 128)  # the transition, densely
    save("gelu", "x", x)
    out = F.gelu(x, approximate="none")
    out_tanh = F.gelu(x, approximate="tanh")
    save("gelu", "out", out)
    save("gelu", "out_tanh", out_tanh)
    # How far PyTorch itself is from the float64 truth (reported in SOURCE.md).
    exact = F.gelu(x.double(), approximate="none")
    tanh64 = F.gelu(x.double(), approximate="tanh")
    print("    torch float32 vs float64: exact max %.3g, tanh max %.3g (abs); -inf gives %s"
          % ((out.double() - exact)[torch.isfinite(exact)].abs().max().item(),
             (out_tanh.double() - tanh64)[torch.isfinite(tanh64)].abs().max().item(), out[0, 41].item()))


def rotary(seq=32, heads=4, dim=64, base=10000.0, offset=8160):
    """x (seq, heads, dim); out at positions 0..seq-1, out_offset at offset..offset+seq-1."""
    g = torch.Generator().manual_seed(22)
    x = torch.randn(seq, heads, dim, generator=g)
    save("rotary", "x", x)
    # As Hugging Face's LlamaRotaryEmbedding / GPT-NeoX: float32 throughout.
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))

    def apply(first):
        t = torch.arange(first, first + seq, dtype=inv_freq.dtype)
        freqs = torch.outer(t, inv_freq)          # (seq, dim/2)
        emb = torch.cat((freqs, freqs), dim=-1)   # (seq, dim)
        cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
        x1, x2 = x[..., : dim // 2], x[..., dim // 2:]
        rotate_half = torch.cat((-x2, x1), dim=-1)
        return (x * cos) + (rotate_half * sin)

    save("rotary", "out", apply(0))
    save("rotary", "out_offset", apply(offset))


def layer_norm(rows=16, cols=768, eps=1e-5):
    """Rows of different scales and offsets (one constant); weight, bias; mean and variance."""
    g = torch.Generator().manual_seed(23)
    scales = torch.tensor([1, 0.01, 0, 100, 1, 3, 0.5, 10, 1, 2, 1e-3, 1, 5, 1, 0.2, 50], dtype=torch.float32)
    offsets = torch.tensor([0, 1000, 3, 0, 1e4, -20, 0.5, -300, 0, 7, 1, -1, 0, 2e3, 0, 100],
                           dtype=torch.float32)
    assert len(scales) == rows
    x = torch.randn(rows, cols, generator=g) * scales[:, None] + offsets[:, None]
    weight = 1 + 0.1 * torch.randn(cols, generator=g)
    bias = 0.1 * torch.randn(cols, generator=g)
    out = F.layer_norm(x, (cols,), weight, bias, eps=eps)
    _, torch_mean, torch_rstd = torch.native_layer_norm(x, (cols,), weight, bias, eps)
    # The exact statistics of the float32 input (float64, rounded once), and the output
    # computed from them: PyTorch's float32 mean is off by up to ~1e-4 on the rows whose
    # offset dwarfs their spread, which moves its output by up to ~6e-3 there.
    var64, mean64 = torch.var_mean(x.double(), dim=1, unbiased=False)
    exact = (x.double() - mean64[:, None]) / torch.sqrt(var64[:, None] + eps) * weight.double() + bias.double()
    for name, t in [("x", x), ("weight", weight), ("bias", bias), ("out", out), ("out_exact", exact.float()),
                    ("mean", mean64.float()), ("var", var64.float()), ("mean_torch", torch_mean.reshape(rows)),
                    ("rstd_torch", torch_rstd.reshape(rows))]:
        save("layer_norm", name, t)
    error = (out.double() - exact).abs().max(dim=1).values
    print("    torch out vs float64, per row: %s" % " ".join("%.2g" % e for e in error.tolist()))
    print("    torch mean vs float64: max abs %.3g"
          % (torch_mean.reshape(rows).double() - mean64).abs().max().item())


def argmax_rows(rows=16, cols=1000):
    """Quantized random rows (natural ties) plus rows made for ties, -inf, +inf and -0.0."""
    g = torch.Generator().manual_seed(24)
    x = torch.round(torch.randn(rows, cols, generator=g) * 2) / 2  # steps of 1/2: maxima tie often
    inf = math.inf
    x[0, [3, 400, 999]] = 10.0             # three equal maxima: index 3
    x[1, 999] = 10.0                       # the last element
    x[2, [0, 999]] = 10.0                  # the first and the last: index 0
    x[3] = 1.5                             # all equal: index 0
    x[4, ::7] = -inf                       # some -inf, including index 0
    x[5] = -inf                            # all -inf: index 0, value -inf
    x[6] = -inf
    x[6, 777] = -5.0                       # one finite value among -inf
    x[7] = -torch.abs(x[7]) - 100          # all negative
    x[7, [10, 600]] = -99.0                # tied maxima among negatives
    x[8, [20, 10]] = inf                   # +inf twice: index 10
    x[9] = -torch.abs(x[9]) - 1
    x[9, 30] = -0.0                        # -0.0 == 0.0: the first of them, index 30, value -0.0
    x[9, 50] = 0.0
    save("argmax_rows", "x", x)
    index = torch.argmax(x, dim=1)
    values, max_index = torch.max(x, dim=1)
    # PyTorch's documented rule (first maximal index) checked against numpy's argmax, which
    # returns the first occurrence; and max(dim).indices agrees with argmax.
    first = np.argmax(x.numpy(), axis=1)
    check(np.array_equal(index.numpy(), first), "argmax returns the first maximal index")
    check(torch.equal(index, max_index), "torch.max(dim).indices == torch.argmax")
    check(index[0].item() == 3 and index[2].item() == 0 and index[5].item() == 0 and index[8].item() == 10
          and index[9].item() == 30, "the constructed rows' indices")
    check(math.copysign(1.0, values[9].item()) < 0, "max returns the first maximal element itself (-0.0)")
    ties = [r for r in range(rows) if (x[r] == values[r]).sum().item() > 1]
    print("    rows with a tied maximum: %s" % ties)
    save("argmax_rows", "index", index.to(torch.int32))
    save("argmax_rows", "values", values)


def int4_unpack(n=64, k=256, group=32):
    """Signed int4 weights (n, k), packed two per uint8 and eight per int32, low nibble first."""
    g = torch.Generator().manual_seed(25)
    q = torch.randint(-8, 8, (n, k), generator=g, dtype=torch.int32)
    scales = torch.rand(n, k // group, generator=g) * 0.02 + 0.001
    zeros = torch.randint(-8, 8, (n, k // group), generator=g, dtype=torch.int32)
    # Packing (the inputs): the low nibble holds the even element (uint8) / element 8w + 0.
    u = torch.bitwise_and(q, 15)
    packed_u8 = torch.bitwise_or(u[:, 0::2], torch.bitwise_left_shift(u[:, 1::2], 4)).to(torch.uint8)
    words = torch.zeros(n, k // 8, dtype=torch.int64)
    for j in range(8):
        words = torch.bitwise_or(words, torch.bitwise_left_shift(u[:, j::8].long(), 4 * j))
    packed_i32 = (words - (words >= 2**31).long() * 2**32).to(torch.int32)  # the same 32 bits, signed

    # Unpacking, PyTorch's integer ops: shift, mask, sign-extend by (v ^ 8) - 8.
    lo = torch.bitwise_and(packed_u8, 15)
    hi = torch.bitwise_and(torch.bitwise_right_shift(packed_u8, 4), 15)  # uint8: a logical shift
    nib_u8 = torch.stack((lo, hi), dim=-1).reshape(n, k).to(torch.int32)
    shifts = torch.arange(0, 32, 4, dtype=torch.int32)
    nib_i32 = torch.bitwise_and(torch.bitwise_right_shift(packed_i32[:, :, None], shifts), 15).reshape(n, k)
    q_u8 = torch.bitwise_xor(nib_u8, 8) - 8
    q_i32 = torch.bitwise_xor(nib_i32, 8) - 8
    check(torch.equal(q_u8, q) and torch.equal(q_i32, q), "int4 unpack(pack(q)) == q for both packings")
    check(torch.equal(torch.where(nib_u8 >= 8, nib_u8 - 16, nib_u8), q), "(v ^ 8) - 8 is the sign extension")
    check(bool((packed_i32 < 0).any()), "some words have the sign bit set (arithmetic shifts matter)")
    zero_full = zeros.repeat_interleave(group, dim=1)
    scale_full = scales.repeat_interleave(group, dim=1)
    w = (q_u8 - zero_full).to(torch.float32) * scale_full
    for name, t in [("packed_u8", packed_u8), ("packed_i32", packed_i32), ("scales", scales),
                    ("zeros", zeros.to(torch.int8)), ("q", q.to(torch.int8)), ("w", w)]:
        save("int4_unpack", name, t)


def backward_ops():
    """Autograd's gradients for te::gradient's tests (float64 inputs and gradients, so the
    comparison is about the math, not rounding): grid_sample 2-D (every mode, padding and
    align_corners) and 3-D (bilinear, nearest), softmax, layer_norm, matmul and conv2d."""
    g = torch.Generator().manual_seed(37)

    def rand(*shape, lo=-1.0, hi=1.0):
        return (torch.rand(*shape, generator=g, dtype=torch.float64) * (hi - lo) + lo)

    def grads(case, fn, inputs, names):
        ts = [t.clone().requires_grad_(True) for t in inputs]
        out = fn(*ts)
        head = rand(*out.shape)
        out.backward(head)
        for t, n in zip(inputs, names):
            save(case, n, t)
        save(case, "head", head)
        save(case, "out", out)
        for t, n in zip(ts, names):
            save(case, "grad_" + n, t.grad)

    # grid_sample: one data, grid and head per dimensionality (in <2d|3d>/), each case's
    # output and gradients in a folder of its own.
    for volumetric in (False, True):
        dims = "3d" if volumetric else "2d"
        data = rand(2, 3, 4, 5, 6) if volumetric else rand(2, 3, 6, 7)
        grid = rand(2, 3, 4, 2, 3, lo=-1.2, hi=1.2) if volumetric else rand(2, 4, 5, 2, lo=-1.2, hi=1.2)
        head = rand(2, 3, 3, 4, 2) if volumetric else rand(2, 3, 4, 5)
        folder = "grid_sample_backward/" + dims
        save(folder, "data", data)
        save(folder, "grid", grid)
        save(folder, "head", head)
        for mode in ("bilinear", "nearest") if volumetric else ("bilinear", "nearest", "bicubic"):
            for padding in ("zeros", "border", "reflection"):
                for align in (False, True):
                    d = data.clone().requires_grad_(True)
                    gr = grid.clone().requires_grad_(True)
                    out = F.grid_sample(d, gr, mode=mode, padding_mode=padding, align_corners=align)
                    out.backward(head)
                    case = "%s/%s_%s%s" % (folder, mode, padding, "_align" if align else "")
                    save(case, "out", out)
                    save(case, "grad_data", d.grad)
                    save(case, "grad_grid", gr.grad)
    grads("softmax_backward", lambda x: torch.softmax(x, dim=-1), [rand(6, 33, lo=-4, hi=4)], ["x"])
    grads("layer_norm_backward", lambda x, w, b: F.layer_norm(x, (40,), w, b, 1e-5),
          [rand(6, 40, lo=-3, hi=3), rand(40), rand(40)], ["x", "weight", "bias"])
    grads("matmul_backward", torch.matmul, [rand(7, 11), rand(11, 5)], ["a", "b"])
    grads("conv2d_backward", lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
          [rand(2, 3, 9, 8), rand(4, 3, 3, 2)], ["x", "weight"])
    # bev_pool_v2 (BEVDet's reference in PyTorch ops) on tests/data/bev_pool/small's points,
    # in float64: index_add_'s autograd is the scatter's transpose.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gen_bev_pool_golden import bev_pool_v2_reference
    small = os.path.join(OUT, "..", "bev_pool", "small")
    load = lambda name: torch.from_numpy(np.load(os.path.join(small, name + ".npy")))  # noqa: E731
    ranks = [load(n) for n in ("ranks_depth", "ranks_feat", "ranks_bev")]
    bev_shape = tuple(load("bev_shape").tolist())
    grads("bev_pool_backward", lambda d, f: bev_pool_v2_reference(d, f, *ranks, bev_shape),
          [load("depth").double(), load("feat").double()], ["depth", "feat"])


def attention():
    """softmax(q k^T / sqrt(dim) + bias) v as PyTorch's ops compute it (matmul, softmax,
    matmul: torch 1.13 has no scaled_dot_product_attention), in float64 from the inputs as
    stored (float32, or float16 / bfloat16 stored as float32 after rounding). causal: query
    i sees keys j <= i + seq_k - seq_q. PyTorch's result for a query with every key masked
    is NaN; te defines it as zeros, so out.npy holds PyTorch's NaN and the test checks te's
    zeros there (see docs/attention.md)."""
    gen = torch.Generator().manual_seed(41)

    def case(name, batch, heads, kv_heads, seq_q, seq_k, dim, causal=False, bias=False, magnitude=1.0,
             dtype=torch.float32):
        q = torch.randn(batch, heads, seq_q, dim, generator=gen) * magnitude
        k = torch.randn(batch, kv_heads, seq_k, dim, generator=gen) * magnitude
        v = torch.randn(batch, kv_heads, seq_k, dim, generator=gen)
        q, k, v = (t.to(dtype).float() for t in (q, k, v))  # rounded to dtype, stored as float32
        scores = torch.matmul(q.double(), k.double().repeat_interleave(heads // kv_heads, 1).transpose(-2, -1))
        scores = scores / math.sqrt(dim)
        if bias:
            b = torch.randn(batch, heads, seq_q, seq_k, generator=gen)
            b[..., ::5] = float("-inf")
            b[0, 0, 1, :] = float("-inf")  # a query that sees no key
            scores = scores + b.double()
            save("attention/" + name, "bias", b)
        if causal:
            mask = torch.ones(seq_q, seq_k, dtype=torch.bool).tril(diagonal=seq_k - seq_q)
            scores = scores.masked_fill(~mask, float("-inf"))
        out = torch.matmul(torch.softmax(scores, dim=-1), v.double().repeat_interleave(heads // kv_heads, 1))
        if bias:
            check(torch.isnan(out[0, 0, 1]).all().item(), "a fully masked softmax row is NaN")
        for n, t in (("q", q), ("k", k), ("v", v), ("out", out)):
            save("attention/" + name, n, t)

    case("causal_5x19", 2, 2, 2, 5, 19, 16, causal=True)
    case("gqa_odd", 1, 4, 2, 13, 29, 12)
    case("bias_masked_rows", 1, 2, 1, 6, 11, 8, bias=True)
    case("large_scores", 1, 1, 1, 7, 33, 16, magnitude=30.0)
    case("decoding", 1, 4, 1, 1, 300, 32, causal=True)
    case("float16", 1, 2, 2, 8, 24, 16, causal=True, dtype=torch.float16)
    case("bfloat16", 1, 2, 2, 8, 24, 16, dtype=torch.bfloat16)

    # The gradients (autograd in float64) for te::ops::attention_backward: dq, dk, dv and
    # dbias (summed over the bias's broadcast dimensions) for a random dout. A query with no
    # key has NaN gradients in PyTorch; te gives zeros there.
    def backward(name, batch, heads, kv_heads, seq_q, seq_k, dim, causal=False, bias_shape=None):
        # float32 inputs (as stored), differentiated in float64
        q = torch.randn(batch, heads, seq_q, dim, generator=gen).double()
        k = torch.randn(batch, kv_heads, seq_k, dim, generator=gen).double()
        v = torch.randn(batch, kv_heads, seq_k, dim, generator=gen).double()
        dout = torch.randn(batch, heads, seq_q, dim, generator=gen).double()
        leaves = [q, k, v]
        bias = None
        if bias_shape is not None:
            bias = torch.randn(*bias_shape, generator=gen).double()
            bias[..., ::4] = float("-inf")
            leaves.append(bias)
        for t in leaves:
            t.requires_grad_(True)
        group = heads // kv_heads
        scores = torch.matmul(q, k.repeat_interleave(group, 1).transpose(-2, -1)) / math.sqrt(dim)
        if bias is not None:
            scores = scores + bias
        if causal:
            mask = torch.ones(seq_q, seq_k, dtype=torch.bool).tril(diagonal=seq_k - seq_q)
            scores = scores.masked_fill(~mask, float("-inf"))
        out = torch.matmul(torch.softmax(scores, dim=-1), v.repeat_interleave(group, 1))
        grads = torch.autograd.grad(out, leaves, dout)
        folder = "attention_backward/" + name
        for n, t in (("q", q), ("k", k), ("v", v), ("dout", dout)):
            save(folder, n, t.detach().float())
        if bias is not None:
            save(folder, "bias", bias.detach().float())
        for n, t in zip(("dq", "dk", "dv", "dbias"), grads):
            save(folder, n, t)

    backward("causal_gqa", 1, 4, 2, 5, 9, 8, causal=True)
    backward("bias_broadcast", 2, 2, 2, 6, 7, 8, bias_shape=(1, 2, 6, 7))
    backward("decoding", 1, 2, 1, 1, 40, 16, causal=True)


def main():
    torch.set_num_threads(1)
    print("PyTorch %s, numpy %s, writing %s" % (torch.__version__, np.__version__, os.path.normpath(OUT)))
    cases = (gelu, rotary, layer_norm, argmax_rows, int4_unpack, backward_ops, attention)
    chosen = sys.argv[1:] or [c.__name__ for c in cases]  # names given: only those cases
    for case in cases:
        if case.__name__ in chosen:
            print(case.__name__ + ":")
            case()


if __name__ == "__main__":
    main()
