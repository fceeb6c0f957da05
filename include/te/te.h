// The umbrella header: everything a te user needs.
#pragma once
#include "te/argument.h"
#include "te/dtype.h"
#include "te/error.h"
#include "te/expr.h"
#include "te/float16.h"
#include "te/interpret.h"
#include "te/ir.h"
#include "te/ndarray.h"
#include "te/simplify.h"
#include "te/tensor.h"
