#pragma once
#error "not supported by the CPU backend: FP8 types (cuda_fp8.h)"
