// The scalar reference against the golden PyTorch / ONNX cases: it is the oracle for te's
// grid_sample, so it must itself match the specification first.
#include <gtest/gtest.h>

#include <te/te.h>

#include <cmath>

#include "gridsample_cases.h"
#include "gridsample_reference.h"

namespace {

const std::string kDir = std::string(TE_TEST_DATA_DIR) + "/gridsample";

template <typename T>
void check_case(const GridSampleCase& c) {
  std::string dir = kDir + "/" + c.name;
  te::NDArray in = te::NDArray::load_npy(dir + "/input.npy");
  te::NDArray grid = te::NDArray::load_npy(dir + "/grid.npy");
  te::NDArray expected = te::NDArray::load_npy(dir + "/output.npy");
  ASSERT_EQ(in.shape(), c.input_shape);
  ASSERT_EQ(expected.shape(), c.output_shape);
  std::vector<T> got = gsref::grid_sample<T>(in.to_vector<T>(), in.shape(), grid.to_vector<T>(), grid.shape(),
                                             {c.mode, c.padding, c.align_corners});
  std::vector<T> want = expected.to_vector<T>();
  expect_allclose(got, want, c.atol, c.rtol, c.name);
}

}  // namespace

TEST(GridSampleReference, MatchesEveryGoldenCase) {
  auto cases = load_gridsample_cases(kDir);
  ASSERT_GT(cases.size(), 100u);
  int checked = 0;
  for (const auto& c : cases) {
    if (c.informational) continue;
    SCOPED_TRACE(c.name);
    if (c.dtype == "float32")
      check_case<float>(c);
    else
      check_case<double>(c);
    ++checked;
  }
  EXPECT_GT(checked, 100);
}
