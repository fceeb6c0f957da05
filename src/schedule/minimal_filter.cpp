// Toom-Cook: the linear convolution c = a * g of an m-point a and an r-point g is the
// polynomial product, evaluated at N points (E_m a ⊙ E_r g, E_k the N x k Vandermonde
// matrix with a last row for infinity, which picks the leading coefficient) and
// interpolated back (L = E_N⁻¹): c = L [(E_m a) ⊙ (E_r g)]. The correlation of g over x
// is the transpose of that map in a, so y = E_mᵀ [(E_r g) ⊙ (Lᵀ x)]: Aᵀ = E_mᵀ, G = E_r,
// Bᵀ = Lᵀ.
#include "schedule/minimal_filter.h"

#include <cmath>
#include <utility>

#include "te/error.h"

namespace te::sched {

namespace {

using Matrix = std::vector<std::vector<double>>;

// Small points first, each with its negative, then their reciprocals: the order that
// keeps the transforms' entries (and the rounding errors) smallest.
constexpr double kPoints[kMaxFilterPoints - 1] = {0, 1, -1, 2, -2, 0.5, -0.5, 3, -3, 1.0 / 3, -1.0 / 3};

Matrix vandermonde(int n, int k) {
  Matrix e(static_cast<size_t>(n), std::vector<double>(static_cast<size_t>(k), 0.0));
  for (int i = 0; i + 1 < n; ++i) {
    double p = 1;
    for (int j = 0; j < k; ++j, p *= kPoints[i]) e[i][j] = p;
  }
  e[n - 1][k - 1] = 1;  // infinity
  return e;
}

Matrix inverse(Matrix a) {
  const size_t n = a.size();
  Matrix inv(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i) inv[i][i] = 1;
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t i = col; i < n; ++i)
      if (std::fabs(a[i][col]) > std::fabs(a[pivot][col])) pivot = i;
    std::swap(a[col], a[pivot]);
    std::swap(inv[col], inv[pivot]);
    const double d = a[col][col];
    for (size_t j = 0; j < n; ++j) a[col][j] /= d, inv[col][j] /= d;
    for (size_t i = 0; i < n; ++i) {
      const double f = a[i][col];
      if (i == col || f == 0) continue;
      for (size_t j = 0; j < n; ++j) a[i][j] -= f * a[col][j], inv[i][j] -= f * inv[col][j];
    }
  }
  return inv;
}

// Rounding noise of the elimination off the entries that are exactly 0 or ±1.
double clean(double v) {
  for (double exact : {0.0, 1.0, -1.0})
    if (std::fabs(v - exact) < 1e-12) return exact;
  return v;
}

Matrix transposed(const Matrix& a) {
  Matrix t(a[0].size(), std::vector<double>(a.size()));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < a[i].size(); ++j) t[j][i] = clean(a[i][j]);
  return t;
}

Matrix identity(int n) {
  Matrix e(static_cast<size_t>(n), std::vector<double>(static_cast<size_t>(n), 0.0));
  for (int i = 0; i < n; ++i) e[i][i] = 1;
  return e;
}

}  // namespace

MinimalFilter minimal_filter(int m, int r) {
  if (m < 1 || r < 1 || m + r - 1 > kMaxFilterPoints)
    throw InternalError("minimal_filter: F(" + std::to_string(m) + ", " + std::to_string(r) + ") out of range");
  MinimalFilter f;
  f.outputs = m;
  f.taps = r;
  f.points = m + r - 1;
  if (r == 1) {  // one tap: y = g x, no transform
    f.output = f.input = identity(m);
    f.filter = Matrix(static_cast<size_t>(m), std::vector<double>{1.0});
    return f;
  }
  f.output = transposed(vandermonde(f.points, m));
  f.filter = vandermonde(f.points, r);
  f.input = transposed(inverse(vandermonde(f.points, f.points)));
  return f;
}

}  // namespace te::sched
