/// \file
/// The umbrella header: everything a te user needs.
#pragma once
#include "te/argument.h"
#include "te/build.h"
#include "te/cuda.h"
#include "te/dtype.h"
#include "te/error.h"
#include "te/expr.h"
#include "te/float16.h"
#include "te/interpret.h"
#include "te/ir.h"
#include "te/log.h"
#include "te/lower.h"
#include "te/ndarray.h"
#include "te/schedule.h"
#include "te/simplify.h"
#include "te/tensor.h"
