// CudaOptions::arch: the GPU a module is for. Every tensor intrinsic must have its
// instructions there (te::Error otherwise: its helper's portable path is not what a user
// who named the GPU asked for), and the file refuses (#error) to compile for another.
#pragma once
#include <string>

#include "te/ir.h"

namespace te::cuda {

// te::Error when options.arch is not a CUDA architecture or f calls an intrinsic it lacks.
void check_arch(const LoweredFunc& f, const std::string& arch);

// The preprocessor lines that stop nvcc compiling the file for another architecture than
// arch ("" for an empty arch).
std::string arch_guard(const std::string& arch);

}  // namespace te::cuda
