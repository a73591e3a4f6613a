"""Islands: HTP kernels compiled by foreign toolchains (``htp.islands.mlir``: tile kernels through MLIR 19)."""
