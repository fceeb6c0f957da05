// Pass "unroll": an unrolled loop of constant extent becomes one copy of its body per
// iteration, the loop variable replaced by its value; one of symbolic extent stays a
// serial loop; one of more than 4096 iterations is a te::Error.
#include <fmt/format.h>

#include "te/error.h"
#include "te/lower.h"
#include "te/simplify.h"

namespace te {

namespace {

// Each iteration is a copy of the body: beyond this the code only grows (and LLVM's
// compile time with it).
constexpr int64_t kMaxUnrolledIterations = 4096;

class Unroller : public IRMutator {
 protected:
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    Stmt r = IRMutator::mutate_for(s, n);
    if (n->for_kind != ForKind::Unrolled) return r;
    const auto* f = r.as<ForNode>();
    const int64_t* ext = as_const_int(f->extent);
    if (!ext) return for_loop(f->var, f->min, f->extent, ForKind::Serial, f->body);
    if (*ext > kMaxUnrolledIterations)
      throw Error(
          fmt::format("unroll: loop '{}' has {} iterations; te unrolls at most {}: split the axis and "
                      "unroll the inner part",
                      f->var.name(), *ext, kMaxUnrolledIterations));
    std::vector<Stmt> copies;
    for (int64_t k = 0; k < *ext; ++k)
      copies.push_back(simplify(substitute(f->body, {{f->var, f->min + make_const(f->var.dtype(), k)}})));
    return seq(copies);
  }
};

}  // namespace

Stmt unroll_loops(const Stmt& s) {
  Unroller u;
  return u.mutate(s);
}

}  // namespace te
