#pragma once
#error "not supported by the CPU backend: tensor-core matrix operations (mma.h / wmma)"
