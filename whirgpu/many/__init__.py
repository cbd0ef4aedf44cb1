"""Many proofs: proofs across every device (``devices``), in worker processes (``processes``), on Ray (``ray``),
and many proofs verified as one batch (``batch_verify``)."""
