// Cooperative groups for the CPU emulation: the subset in emu_coop.h.
#pragma once
#include "emu_coop.h"
