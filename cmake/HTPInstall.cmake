# Install rules and the HTP CMake package.
