// Emulator stand-in for the CUDA header of this name.
#pragma once
#include "cuda_emu.h"
