// HTP PTO CPU simulator: PTO-ISA constants used by kernels.
#pragma once

namespace pto {
constexpr int BLOCK_BYTE_SIZE = 32;
constexpr int C0_SIZE_BYTE = 32;
constexpr int BLOCK_LEN = 16;
constexpr int CUBE_BLOCK_SIZE = 512;
constexpr int FRACTAL_NZ_ROW = 16;
constexpr int ACC_C0_SIZE = 16;
}  // namespace pto
