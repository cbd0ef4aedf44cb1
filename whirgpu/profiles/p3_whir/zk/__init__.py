"""The hiding (HVZK) PCS of upstream Plonky3 p3-whir at 5dc50e51 (``whir/src/pcs/zk``, ``HidingWhirPcs``), as a
numpy reference: one polynomial, prefix variable order, caller-chosen points, masks from rand's ``StdRng``.
``docs/ZK-PROTOCOL.md`` describes the protocol; ``config`` derives its shapes, ``prover`` / ``verifier`` run it,
``proof`` holds its proof object and ``format`` writes and reads it (serde JSON, postcard)."""
