"""Loads the consumer's extension (argv[1]) and checks its op and its gradient."""
import sys

import torch

torch.ops.load_library(sys.argv[1])
x = torch.randn(5, requires_grad=True)
y = torch.ops.te_consumer.twice(x)
torch.testing.assert_close(y, x.detach() * 2)
y.sum().backward()
torch.testing.assert_close(x.grad, torch.full((5,), 2.0))
print("te_consumer::twice works from te's installed package")
