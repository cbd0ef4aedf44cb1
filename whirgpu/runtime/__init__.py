"""The GPU runtimes, a few hundred lines per API: wgpu-native and Dawn (``wgpu_rt``), Metal through cffi
(``metal_rt``, ``_objc``), and the MSL kernels compiled for the CPU (``msl_cpu_rt``), over one ``base`` interface."""
