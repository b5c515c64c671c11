#pragma once
#include "cuda_pipeline.h"
