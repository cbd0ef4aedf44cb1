"""The p3-whir profile: upstream Plonky3 ``p3-whir`` at commit 5dc50e51 (the 0.7.0-rc line), byte for byte.

Its configuration, domain separator, proof types, serde-JSON and postcard formats, proof documents, and the
prover's and verifier's hooks on the shared step order; ``zk/`` is a numpy reference of upstream's
hiding PCS. Upstream's later WHIR transcript (Plonky3 PRs #2080/#2089,
the 0.8 line) is a different protocol, not spoken here.
"""
