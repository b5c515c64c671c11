// cg::reduce for the CPU emulation (in emu_coop.h).
#pragma once
#include "emu_coop.h"
