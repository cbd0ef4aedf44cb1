"""Devices: their limits (``limits``) and the user's overrides of them (``overrides``), the memory planner that
decides whether a proof fits and is worth the GPU (``planner``), and what ``whirgpu devices`` reports (``report``)."""
