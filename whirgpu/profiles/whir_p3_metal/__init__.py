"""The whir-p3-metal profile (the default): the Rust reference whir-p3-metal at commit ffe07b5, Plonky3 090b134a.

Its configuration (``config``: ``WhirConfig``, with ``reachability``, ``provable_grid`` and ``schedule_text``),
domain separator, the prover's and the verifier's hooks on the core's step order (``prover.MetalWhirProver``,
``verifier.MetalWhirVerifier``), and its proof documents and formats (``whir-p3-json/v1`` and whirgpu's binary
format: ``serialize``, ``document_checks``).
"""
