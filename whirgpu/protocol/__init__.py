"""The step order both profiles share: parameters and their derivation, soundness and security under every regime,
the transcript, proof shapes, and the prover and verifier written once over the ``Backend`` interface."""
