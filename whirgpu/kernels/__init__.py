"""The kernel drivers and their shaders' composition: the registry (one spec per kernel, shared by WGSL and MSL),
composition with a line map, the constants rendered into preludes, and the NTT, Merkle, path and split drivers."""
