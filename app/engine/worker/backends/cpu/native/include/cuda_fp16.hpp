// Provided by the CPU emulation header (cuda_emu.h), which every kernel includes first.
#pragma once
#include "cuda_emu.h"
