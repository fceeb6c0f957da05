/// \file
/// Deprecated, kept for one release: schedule_matmul_tensorcore_cuda and
/// MatmulTensorCoreOptions moved to te/ops/matmul_cuda.h (with schedule_matmul_cuda),
/// beside the compute in te/ops/matmul.h. Include those instead.
#pragma once
#include "te/ops/matmul.h"
#include "te/ops/matmul_cuda.h"
