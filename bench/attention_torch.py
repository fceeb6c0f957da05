#!/usr/bin/python3
"""PyTorch's CPU attention at the thread count given: matmul, softmax, matmul (torch 1.13
has no scaled_dot_product_attention), float32, q (batch, heads, seq_q, dim), k and v
(batch, heads, seq_k, dim), optionally causal (query i sees keys j <= i + seq_k - seq_q).
Prints one line of per-call seconds, space-separated (bench/bench_attention.cpp reads it
as the "pytorch" baseline).
Usage: attention_torch.py BATCH HEADS SEQ_Q SEQ_K DIM CAUSAL THREADS CALLS"""
import math
import sys
import time

import torch


def attention(q, k, v, causal):
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        seq_q, seq_k = q.shape[-2], k.shape[-2]
        mask = torch.ones(seq_q, seq_k, dtype=torch.bool).tril(diagonal=seq_k - seq_q)
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def main():
    batch, heads, seq_q, seq_k, dim, causal, threads, calls = (int(a) for a in sys.argv[1:9])
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(7)
    q = torch.rand(batch, heads, seq_q, dim, generator=gen) * 2 - 1
    k = torch.rand(batch, heads, seq_k, dim, generator=gen) * 2 - 1
    v = torch.rand(batch, heads, seq_k, dim, generator=gen) * 2 - 1
    with torch.no_grad():
        attention(q, k, v, causal)
        samples = []
        for _ in range(calls):
            start = time.perf_counter()
            attention(q, k, v, causal)
            samples.append(time.perf_counter() - start)
    print(" ".join("%.9f" % s for s in samples))


if __name__ == "__main__":
    main()
