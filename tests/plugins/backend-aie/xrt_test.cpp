// aie-xrt without its toolchain: the exact message naming what is missing.
#include <gtest/gtest.h>

#include "xrt_toolchain.hpp"

using namespace htp::aie;

TEST(AieXrt, MessageNamesEveryMissingPiece) {
  auto tc = find_xrt_toolchain("/nonexistent/bin", nullptr, "/nonexistent/xrt");
  EXPECT_EQ(missing_toolchain_message("vadd", tc),
            "aie-xrt cannot build or run entry 'vadd': missing aiecc (the MLIR-AIE compiler driver; neither aiecc nor "
            "aiecc.py is on PATH); Peano (the llvm-aie kernel compiler; set PEANO_INSTALL_DIR to its install directory); "
            "XRT (XILINX_XRT=/nonexistent/xrt has no lib/libxrt_coreutil.so). Use the aie-sim binding (the default for "
            "AIE targets) to run the design on the CPU");
}

TEST(AieXrt, PeanoDirectoryWithoutCompilerIsNamed) {
  auto tc = find_xrt_toolchain("", "/nonexistent/peano", nullptr);
  ASSERT_EQ(tc.missing.size(), 3u);
  EXPECT_EQ(tc.missing[1], "Peano (PEANO_INSTALL_DIR=/nonexistent/peano has no bin/clang++)");
}
