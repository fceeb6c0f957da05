// An operator of an outside project, built against te's installed package.
#include <te/te.h>
#include <te/torch.h>

TE_TORCH_LIBRARY(te_consumer, m) {
  te::Var n("n");
  te::Tensor x = te::placeholder({n}, te::Float(32), "x");
  m.def("twice", {{x},
                  {te::compute(
                      {n}, [&](te::Expr i) { return x(i) * 2; }, "y")}});
}
