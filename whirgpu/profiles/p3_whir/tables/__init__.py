"""Stacked multi-table commitments in the p3-whir profile (upstream ``p3_sumcheck::layout`` at 5dc50e51).

``shapes``: the tables and opening batches (``TableShape``, ``OpeningBatch``, ``TablesProtocol``);
``stacking``: where each column lies on the stacked hypercube, per layout (``suffix`` = ``SuffixProver`` /
``Witness::new``; ``prefix`` = ``PrefixProver`` / ``Witness::new_interleaved``);
``claims``: the current and next-row claims and their weights on the stacked polynomial;
``prover`` / ``verifier``: ``prove_tables`` and ``verify_tables`` (``P3TablesProver.commit`` / ``open``: a commitment
opened more than once);
``api``: ``P3Tables``, ``P3TablesCommitment``, ``P3TablesProofDocument``, the public API (``whirgpu.P3Tables``).
"""
