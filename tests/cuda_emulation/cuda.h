// Emulation stand-in for the CUDA driver API's header: what te's Hopper launchers use
// (tensor maps, tensor_map.h).
#pragma once
#include "cuda_emulation.h"
#include "tensor_map.h"
