"""Batch verification: ``verify_many(proofs, ...)``, the verdict of every proof of a batch with one hashing of
all their Merkle openings.

Contract: ``verify_many`` takes what ``whirgpu.verify`` takes, as a sequence of proof documents of either profile
(``ProofFile``s, ``P3Document``s, ``P3ProofDocument``s, bytes, paths or JSON text, each told apart as ``verify``
does; profiles may mix) and the same expectations (``params``, ``min_security``, ``points``, ``values``,
``assume``: each applies to every proof). It returns one ``Verdict`` per proof, in order: ``ok`` and, when not,
the error ``verify`` would have raised for that proof alone (a ``ProofFormatError`` or ``VerificationError``, with
its ``round`` and ``check``). It raises only for malformed
expectations (``ConfigError``, the caller's mistake), as ``is_valid`` does.

``processes``: verify in that many worker processes (``processes.shared_pool``: spawned at the first such call,
kept for later ones), each taking contiguous chunks of the batch as one batch of its own; the verdicts are the same,
in order. The proofs travel to the workers pickled (a ``P3ProofDocument`` as its JSON bytes:
``profiles.documents.portable``).

How: each proof is walked by the one verifier (``WhirVerifier.walk``) with its Merkle openings deferred; then
the openings of every proof are hashed in one batch (``ref.merkle.compute_roots_batched``: one permutation call
per chain step for the whole batch), and a proof's first failing opening (round order, then index order) is its
verdict, else the first failure of its walk, as ``WhirVerifier.verify`` orders them: an opening that fails wins
over any later failure, because the single verifier checks the openings before it reports another error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backends.path_roots import compute_roots_on
from ..errors import BackendUnavailable, ConfigError, ProofFormatError, VerificationError, WhirGpuError
from ..expectations import check_configuration, check_statement
from ..profiles.whir_p3_metal.config import WhirConfig
from ..protocol.parameters import ProtocolParameters
from ..profiles.documents import P3_DOCUMENTS, check_profile, portable, read_document
from ..profiles.p3_whir.expectations import verify_p3_expected
from ..profiles.whir_p3_metal.serialize import ProofFile
from ..protocol.security_policy import check_assume
from ..native.permute import fast_permute_lanes
from ..profiles.whir_p3_metal.lockstep import read_parts, walk_lockstep
from ..profiles.whir_p3_metal.verifier import MetalWhirVerifier
from ..protocol.verifier import Openings, first_bad_opening
from ..ref import merkle


@dataclass(frozen=True)
class Verdict:
    """One proof's verdict: ``ok``, else ``error`` (what ``verify`` raises for it)."""

    ok: bool
    error: WhirGpuError | None = None

    @property
    def reason(self) -> str:
        return "accept" if self.ok else f"reject: {self.error}"


class _Deferred(Openings):
    """Openings queued for the batch: ``check`` (which the walk calls once every round's openings are known)
    checks nothing here."""

    def check(self) -> None:
        return None


@dataclass
class _Walked:
    openings: list[tuple]
    error: WhirGpuError | None
    proof_file: ProofFile | None
    done: bool = False  # a p3-whir document: verified whole in the walk (its openings are checked where met)


def _read(proof, params, min_security, points, values, assume) -> _Walked | tuple[ProofFile, WhirConfig]:
    """A proof's document read and its configuration checked: the whir-p3-metal proof file and its configuration
    to walk, or its ``_Walked`` verdict (a p3-whir document is verified whole here; a malformed one fails)."""
    try:
        document = read_document(proof)
        check_profile(document, params)
        if isinstance(document, P3_DOCUMENTS):
            verify_p3_expected(document, params, min_security, points, values, assume)
            return _Walked([], None, None, done=True)
        proof_file = document
        if not isinstance(proof_file.params, ProtocolParameters):
            raise ProofFormatError(f"proof file params: expected ProtocolParameters, got "
                                   f"{type(proof_file.params).__name__}")
        try:
            config = WhirConfig.from_params(proof_file.params)
        except (ConfigError, OverflowError) as exc:
            raise ProofFormatError(f"proof file params: {exc}") from None
        check_configuration(proof_file.params, config, expected_params=params, min_security=min_security,
                            assume=assume)
    except (ProofFormatError, VerificationError) as exc:
        return _Walked([], exc, None, done=True)
    return proof_file, config


def _walk_one(proof_file: ProofFile, config: WhirConfig) -> _Walked:
    openings = _Deferred()
    try:
        MetalWhirVerifier(config).walk(proof_file.proof, proof_file.statement, openings)
    except (ProofFormatError, VerificationError) as exc:
        return _Walked(openings.pending, exc, proof_file)
    return _Walked(openings.pending, None, proof_file)


def _walk(proof, params, min_security, points, values, assume) -> _Walked:
    read = _read(proof, params, min_security, points, values, assume)
    return read if isinstance(read, _Walked) else _walk_one(*read)


LOCKSTEP_MIN = 2  # proofs of one configuration and claim count walked together (fewer: one by one)
LOCKSTEP_MAX = 256  # at most this many a lockstep walk (its arrays grow with the proofs it walks)


def _claims(proof_file: ProofFile) -> int | None:
    try:
        return len(proof_file.statement.points)
    except TypeError:
        return None


def _walk_all(read: list) -> list[_Walked]:
    """Every read proof walked: those of one configuration and claim count together (``lockstep``), the rest, and
    every proof the lockstep walk does not pass, one by one (which names its first failure)."""
    walked: list[_Walked | None] = [r if isinstance(r, _Walked) else None for r in read]
    groups: list[tuple[WhirConfig, int, list[int]]] = []  # one schedule and claim count each
    for i, r in enumerate(read):
        if isinstance(r, _Walked) or (m := _claims(r[0])) is None:
            continue
        group = next((g for g in groups if g[1] == m and g[0] == r[1]), None)
        if group is None:
            groups.append((r[1], m, [i]))
        else:
            group[2].append(i)
    chunks = [(config, members[at:at + LOCKSTEP_MAX]) for config, _, members in groups
              for at in range(0, len(members), LOCKSTEP_MAX)]
    for config, members in chunks:
        if len(members) < LOCKSTEP_MIN:
            continue
        parts, joined = [], []
        for i in members:
            try:
                parts.append(read_parts(config, read[i][0].proof, read[i][0].statement))
                joined.append(i)
            except ProofFormatError:
                pass  # walked alone below, which reports it
        if len(joined) < LOCKSTEP_MIN:
            continue
        try:
            passed, openings = walk_lockstep(config, parts)
        except Exception:  # noqa: BLE001 - never the verdict's source: the group is walked one by one instead
            continue
        for i, ok, mine in zip(joined, passed, openings):
            if ok:
                walked[i] = _Walked(mine, None, read[i][0])
    return [w if w is not None else _walk_one(*read[i]) for i, w in enumerate(walked)]


CHUNKS_PER_PROCESS = 1  # one contiguous chunk a worker: the larger the chunk, the more its openings share a batch


def verify_many(proofs, *, params: ProtocolParameters | WhirConfig | None = None, min_security: float | None = None,
                points=None, values=None, backend=None, processes: int | None = None,
                assume: str | None = None) -> list[Verdict]:
    """The verdict of every proof of ``proofs`` (see the module contract). ``backend``: None hashes the batch's
    openings on the host; a backend name ("auto", "wgpu", "dawn", "metal", "msl-cpu", "cpu") or a ``Backend`` hashes
    them there (``backends.path_roots.compute_roots_on``); the verdicts are the same. ``processes``: see the module
    contract (with ``backend`` None: each worker hashes its chunks on the host)."""
    check_assume(assume)
    if processes is not None:
        if backend is not None:
            raise ConfigError("verify_many: backend= hashes the whole batch in this process and processes= hashes "
                              "each chunk in its worker; choose one")
        return _verify_in_processes(list(proofs), processes, (params, min_security, points, values, assume))
    walked = _walk_all([_read(proof, params, min_security, points, values, assume) for proof in proofs])
    batch = [(rows, indices, siblings) for w in walked for _, rows, indices, siblings, _ in w.openings]
    roots = _roots(batch, backend)
    verdicts, at = [], 0
    for w in walked:
        mine, at = roots[at:at + len(w.openings)], at + len(w.openings)
        error = first_bad_opening(w.openings, mine) or w.error
        if w.done:
            verdicts.append(Verdict(error is None, error))
            continue
        if error is None and w.proof_file.inconsistency:
            error = ProofFormatError(w.proof_file.inconsistency)
        if error is None and (points is not None or values is not None):
            try:
                check_statement(w.proof_file.statement.points, w.proof_file.statement.values, points, values)
            except (ProofFormatError, VerificationError) as exc:
                error = exc
        verdicts.append(Verdict(error is None, error))
    return verdicts


def _roots(batch: list[tuple], backend) -> list:
    """``compute_roots_batched`` of ``batch`` (on ``backend`` where given), its entries of one row width and path
    depth (one round of many proofs) joined into one: a hashing step then fills one state array per shape, not
    one per proof."""
    shapes: dict[tuple[int, int], list[int]] = {}
    for i, (rows, _, siblings) in enumerate(batch):
        shapes.setdefault((rows.shape[1], siblings.shape[1]), []).append(i)
    joined = [tuple(np.concatenate([batch[i][part] for i in members]) for part in range(3))
              for members in shapes.values()]
    hashed = (merkle.compute_roots_batched(joined, permute=fast_permute_lanes()) if backend is None
              else compute_roots_on(backend, joined))
    roots: list = [None] * len(batch)
    for members, computed in zip(shapes.values(), hashed):
        at = 0
        for i in members:
            size = len(batch[i][1])
            roots[i], at = computed[at:at + size], at + size
    return roots


def _warm_worker() -> None:
    """A worker's first chunk finds the compiled permutations loaded (their library is built once per machine)."""
    fast_permute_lanes()
    from ..protocol.transcript import single_permutation  # noqa: PLC0415
    from ..ref.poseidon2_constants import Poseidon2Constants  # noqa: PLC0415

    single_permutation(Poseidon2Constants.smallrng(1))


def _verify_chunk(proofs: list, expectations: tuple) -> list[Verdict]:
    params, min_security, points, values, assume = expectations
    return verify_many(proofs, params=params, min_security=min_security, points=points, values=values,
                       assume=assume)


def _verify_in_processes(proofs: list, processes: int, expectations: tuple) -> list[Verdict]:
    from concurrent.futures.process import BrokenProcessPool  # noqa: PLC0415

    from .processes import forget_pool, shared_pool  # noqa: PLC0415

    pool = shared_pool(processes, _warm_worker)
    failed, sent = {}, []  # what cannot travel (a P3ProofDocument that does not serialise) has its verdict here
    for i, proof in enumerate(proofs):
        try:
            sent.append(portable(proof))
        except ProofFormatError as exc:
            failed[i] = Verdict(False, exc)
    if not sent:
        return [failed[i] for i in range(len(proofs))]
    size = -(-len(sent) // (processes * CHUNKS_PER_PROCESS))
    chunks = [sent[i:i + size] for i in range(0, len(sent), size)]

    def run(pool):
        found = iter([v for verdicts in pool.map(_verify_chunk, chunks, [expectations] * len(chunks))
                      for v in verdicts])
        return [failed[i] if i in failed else next(found) for i in range(len(proofs))]

    try:
        return run(pool)
    except BrokenProcessPool:  # a worker died (killed, out of memory): a new pool, once
        forget_pool(pool)
    pool = shared_pool(processes, _warm_worker)
    try:
        return run(pool)
    except BrokenProcessPool as exc:
        forget_pool(pool)
        raise BackendUnavailable(f"verify_many: a worker process stopped twice ({exc})") from None
