// Reads tests/data/gridsample/index.tsv: one golden grid_sample case per row.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

struct GridSampleCase {
  std::string name, dtype, mode, padding;
  int dims = 2;
  bool align_corners = false, informational = false;
  double atol = 0, rtol = 0;
  std::vector<int64_t> input_shape, grid_shape, output_shape;
};

inline std::vector<int64_t> parse_shape(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string tok;
  while (std::getline(ss, tok, 'x')) out.push_back(std::stoll(tok));
  return out;
}

inline std::vector<GridSampleCase> load_gridsample_cases(const std::string& dir) {
  std::ifstream in(dir + "/index.tsv");
  std::vector<GridSampleCase> cases;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::vector<std::string> f;
    std::string tok;
    while (std::getline(ss, tok, '\t')) f.push_back(tok);
    if (f.size() < 12) continue;
    GridSampleCase c;
    c.name = f[0];
    c.dims = std::stoi(f[1]);
    c.dtype = f[2];
    c.mode = f[3];
    c.padding = f[4];
    c.align_corners = f[5] == "1";
    c.informational = f[6] == "1";
    c.atol = std::stod(f[7]);
    c.rtol = std::stod(f[8]);
    c.input_shape = parse_shape(f[9]);
    c.grid_shape = parse_shape(f[10]);
    c.output_shape = parse_shape(f[11]);
    cases.push_back(c);
  }
  return cases;
}

// numpy's allclose rule, the one index.tsv's tolerances are for: |got - want| <= atol + rtol*|want|.
template <typename T>
void expect_allclose(const std::vector<T>& got, const std::vector<T>& want, double atol, double rtol,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    double tol = atol + rtol * std::fabs(double(want[i]));
    ASSERT_LE(std::fabs(double(got[i]) - double(want[i])), tol)
        << what << " element " << i << ": got " << got[i] << " want " << want[i];
  }
}
