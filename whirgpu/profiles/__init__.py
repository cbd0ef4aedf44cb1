"""One package per protocol profile: what a profile owns (configuration derivation, domain separator, proof types,
formats and documents, prover and verifier hooks); the step order they share is written once in ``protocol``."""
