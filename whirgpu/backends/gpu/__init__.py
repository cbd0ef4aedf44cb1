"""The GPU backend: every ``Backend`` primitive as launches of the shared kernel set on a ``Runtime``.

A proof runs as one command stream (DESIGN.md §5). ``begin_proof`` uploads the polynomial's companions once (the
challenger after the domain separator, the statement's points); from then on every primitive only records
launches into the session's batch, and the transcript itself is a kernel (``DeviceTranscript``): values such
as roots, OOD answers, sumcheck values, challenges, query indices and PoW witnesses are ``DeviceValue``s in the
session's proof / scratch / points regions (``device_values``). The batch is submitted after each commitment
(so the device starts while the host encodes the next round), all but the tree's last ``merkle_top`` launch,
which is recorded after the submission as a transcript tail (it copies the root into the proof region and runs
the transcript steps that follow: ``Commitments.commit``); ``end_proof`` reads the proof region back once and turns the
proof's values into host arrays.

Called outside a proof (tests, benchmarks, calibration), each primitive takes and returns host arrays: it runs
in a session of its own, uploading its inputs into that session's regions and reading its outputs back.

Arrays larger than the device's storage-binding limit are bound as windows (``RtView``) and their work is split
into one launch per window. Reductions (sumcheck sums, multilinear evaluations) finish in their own launches: each
workgroup writes a partial, and the last workgroup of the reduction (over all its windows' launches, counted by a
ticket word that it resets) sums them into the output slot. In a proof, a fold followed by another sumcheck round of
the same table (``ProofShape.sumcheck_phases``) is one fused launch that also sums that round (``fold_and_sum``),
whose ``sumcheck_round`` then records nothing. Codewords and Merkle
levels are ``SplitArray``s (``kernels/split.py``): several buffers when one would pass ``max_buffer_size``, bound
in windows of whole rows when one binding would pass ``max_storage_binding_size``; the commitment kernels and the
openings launch once per window (once in all when everything fits, as the unsplit layout). A tree's top levels
share one buffer (``merkle.alloc_tree``), so a round's openings bind them once: one launch per round whenever the
codeword fits a binding and no level is split (``level_jobs``). Tables (the
polynomial, folded tables, weights: every ``DeviceBuffer`` this backend makes) are ``SplitArray``s of entries x
element bytes too: exactly one buffer when they fit ``buffer_limit``, else buffers of a power-of-two number of
whole entries (``DeviceState.new_table``). A table's windows (``DeviceState.window_len``: power-of-two entry counts
within both limits) divide its buffers, so every window, and each lo/hi half window of a round's pairs
(``Reductions``), lies inside one buffer.
``binding_limit`` and ``buffer_limit`` are the limits the backend lays these out for (the device's; tests lower
them).

Storage: each allocation's ``StorageMode`` follows the backend's policy (``STORAGE_POLICIES``) and the buffer's
role. Under ``hybrid`` (the default) buffers the host writes or reads are SHARED: uploaded tables, the three
regions (the host writes the challenger and points, reads the proof), the constant tables (twiddles, round
constants); intermediates are PRIVATE: codewords, Merkle levels, folded tables, weights, factor tables, partials.
``shared`` / ``private`` put every buffer in that mode. The pool keys on (bytes, mode), so a recycled buffer
keeps its mode. Every upload, readback and device-side copy (including the runtime's staging copies) is counted
in ``stats``, in one place (``Drivers``).

Query-sized work covers a fixed number of slots per round (the round's query count capped by the folded
domain), whatever number of distinct indices the transcript draws: the kernels gather every slot (slots past
the drawn count hold index 0) and give them zero constraint coefficients, so one configuration always needs
the same buffers and the host never waits for a count.

Eq and select weights are factored as w(b) = hi(b >> L) * lo(b mod 2^L) (L = ceil(nv / 2)); the factor tables
are built on the device from the points, domain points and coefficients the transcript left there.

Ownership. ``GpuBackend`` (``backend``) is the ``Backend`` interface and nothing else: each method hands the call to
the part that owns the job, and every part holds the one ``DeviceState`` (``state``), which owns what they share
for the backend's life: the runtime and ``Drivers`` (``drivers``: the runtime as the parts and the kernel drivers
see it, counted and recorded), the ``DevicePool`` (``pool``), the limits tables are laid out for, the running
layout, the running ``ProofSession`` (``session``: one proof's regions, batch, device transcript and recording,
for the proof's life) and the buffers kept for the backend's life. The parts, a module each: ``device_memory``
(``DeviceMemory``: uploads, range checks, downloads, releases), ``commit`` (``Commitments``: NTT, Merkle tree,
openings), ``sumcheck`` (``Reductions``: evaluation, sumcheck rounds, folds, weights), ``tables``
(``TableClaims``: stacked tables), ``replay`` (``Replays``: record once, replay the launch program), ``transcript``
(``Proofs``: a proof's lifetime, the transcript's scalars, grinding); ``geometry`` is the launch arithmetic they
share. No part reads another's underscored names (tests/lint/test_private_names.py).
"""

from .backend import GpuBackend
from .device_memory import DeviceTable
from .geometry import (ALL_NODES, EF_BYTES, MAX_REDUCE_GROUPS, OPEN_SLOTS, OPEN_TABLE, SUMCHECK_TAIL_MAX, WG,
                       factor_layout, factor_parts, factor_sizes, factor_threads, initial_work_pairs, level_jobs,
                       opening_launches, work_bytes)
from .transcript import challenger_words

__all__ = ["ALL_NODES", "EF_BYTES", "MAX_REDUCE_GROUPS", "OPEN_SLOTS", "OPEN_TABLE", "SUMCHECK_TAIL_MAX", "WG",
           "DeviceTable", "GpuBackend", "challenger_words", "factor_layout", "factor_parts", "factor_sizes",
           "factor_threads", "initial_work_pairs", "level_jobs", "opening_launches", "work_bytes"]
