// HTP PTO CPU simulator: tiles and global tensors (PTO-ISA's include/pto/common/pto_tile.hpp).
#pragma once

#include <pto/pto-inst.hpp>
