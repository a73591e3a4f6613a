// HTP PTO CPU simulator: the PTO-ISA instruction subset (PTO-ISA cd4a3d3f include/pto/pto-inst.hpp names and
// signatures; independent implementation). The subset and its semantics: docs/backends/pto-sim.md.
#pragma once

#include <pto/sim/cpu.hpp>
#include <pto/sim/tile.hpp>
#include <pto/sim/instr.hpp>
