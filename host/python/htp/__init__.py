"""HTP — Heterogeneous Tile Programming: compile Python tile kernels through plugin pass pipelines."""
