// Emulation stand-in for CUDA's header (see cuda_emulation.h).
#pragma once
#include "cuda_emulation.h"
