"""The HVZK sumcheck batch (upstream ``p3_sumcheck::zk``, Construction 6.3 of eprint 2026/391), prefix order.

``ResidualSumcheck`` is the plain product sumcheck the masks ride on: evals f and weights w (2^m, 4) EF, the claim
S = <f, w>; a round binds the first variable (the index's most significant bit): c0 = sum f_lo w_lo, c_inf =
sum (f_hi - f_lo)(w_hi - w_lo), S <- c0 (1 - g) + (S - c0) g + c_inf g (g - 1).

``prove_batch(residual, draw, ...)`` runs one masked batch of k rounds and returns a ``Batch``; its k mask messages
(ell_zk EF each), their k encoding randomness vectors (mask_queries EF each) and their committed (domain, k) mask
matrix come drawn (``draws.BatchDraw``, in the oracle's RNG order). Transcript order: observe S + aux; observe the
mask oracle's root; observe mu_tilde = 2^(k-1) sum_l (2 s_l[0] + sum_{i>=1} s_l[i]); sample eps; per round
j = 1..k: the wire of h_j = 2^(k-j) s_j + 2^(k-j) sum_{l<j} s_l(gamma_l) + 2^(k-j-1) sum_{l>j} (s_l(0) + s_l(1))
      + eps (c0 + aux 2^-j) + eps c_inf X^2
([h_0, h_2, h_3, ...], the linear coefficient dropped) observed, PoW, gamma_j sampled, the residual folded. Then
the residual's weights and claim are scaled by eps.

``verify_batch(data, root, claim, k, pow_bits, ell_zk, challenger)`` replays it: returns the challenges, eps and
the claim left (h_k(gamma_k)) or raises ``VerificationError``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....backends.masked_rounds import MaskedRoundsPlan, MaskedRoundsTrace
from ....field import Field
from ....protocol.verifier import reject
from ....ref.field_np import field_ops
from ....ref.multilinear import fix_first_variable
from ....ref.sumcheck import prefix_round_message
from .oracles import Committed
from .proof import ZkSumcheckData


class ResidualSumcheck:
    def __init__(self, evals: np.ndarray, weights: np.ndarray, claim: np.ndarray, field: Field):
        self.evals, self.weights, self.claim, self.field = evals, weights, claim, field
        self.ops = field_ops(field)

    def round_coefficients(self) -> tuple[np.ndarray, np.ndarray]:
        return prefix_round_message(self.evals, self.weights, self.field)

    def fold(self, c0: np.ndarray, c_inf: np.ndarray, gamma: np.ndarray) -> None:
        self.claim = extrapolate(self.ops, c0, self.ops.ef_sub(self.claim, c0), c_inf, gamma)
        self.evals = fix_first_variable(self.evals, gamma, self.field)
        self.weights = fix_first_variable(self.weights, gamma, self.field)

    def scale(self, factor: np.ndarray) -> None:
        self.weights = self.ops.ef_mul(self.weights, factor)
        self.claim = self.ops.ef_mul(self.claim, factor)

    def accumulate(self, weight_delta: np.ndarray, claim_delta: np.ndarray) -> None:
        self.weights = self.ops.ef_add(self.weights, weight_delta)
        self.claim = self.ops.ef_add(self.claim, claim_delta)


def extrapolate(ops, h0, h1, c_inf, g) -> np.ndarray:
    """h(g) for the quadratic with h(0) = h0, h(1) = h1 and X^2 coefficient c_inf."""
    one = ops.ef_from_base(ops.ONE)
    g_minus_1 = ops.ef_sub(g, one)
    out = ops.ef_add(ops.ef_mul(h0, ops.ef_sub(one, g)), ops.ef_mul(h1, g))
    return ops.ef_add(out, ops.ef_mul(c_inf, ops.ef_mul(g, g_minus_1)))


def horner(ops, coeffs: np.ndarray, x: np.ndarray) -> np.ndarray:
    """sum_i coeffs[i] x^i for EF coefficients (m, 4) at an EF point."""
    return ops.ef_sum(ops.ef_mul(coeffs, ops.ef_powers(x, coeffs.shape[0])))


def endpoints(ops, mask: np.ndarray) -> np.ndarray:
    """s(0) + s(1) = 2 s[0] + sum_{i>=1} s[i]."""
    return ops.ef_add(ops.ef_sum(mask), mask[0])


def _two_power(ops, e: int) -> np.ndarray:
    """2^e (e may be negative) as an EF element."""
    return ops.ef_from_base(ops.constant(pow(2, e, ops.P)))  # Python's modular power takes e < 0 (an inverse)


@dataclass
class Batch:
    """What a masked batch leaves: its proof data, the mask oracle, the challenges (k, 4), eps, the masks
    (k, ell_zk, 4) and their encoding randomness (k, mask_queries, 4)."""

    data: ZkSumcheckData
    oracle: Committed
    gammas: np.ndarray
    eps: np.ndarray
    masks: np.ndarray
    mask_randomness: np.ndarray


def prove_batch(residual: ResidualSumcheck, draw, pow_bits: int, aux: np.ndarray, challenger,
                read_tables: bool = False) -> Batch:
    """One batch of k = len(draw.masks) rounds over ``residual`` with ``draw``'s masks and oracle
    (``draws.BatchDraw``); ``read_tables``: the last batch, whose folded tables the host takes next (a backend
    may read them back with the batch)."""
    ops = residual.ops
    masks, k = draw.masks, draw.masks.shape[0]
    challenger.observe_many(ops.ef_add(residual.claim, aux))
    oracle = draw.oracle.get()
    challenger.observe_many(oracle.root)
    future = ops.ef_sum(np.stack([endpoints(ops, m) for m in masks]))
    mu_tilde = ops.ef_mul(_two_power(ops, k - 1), future)
    challenger.observe_many(mu_tilde)
    eps = challenger.sample_ef()
    plan = round_plan(ops, k, pow_bits, aux, future, eps, masks, max(masks.shape[1], 3), read_tables)
    trace = residual.masked_rounds(plan, challenger) if hasattr(residual, "masked_rounds") else None
    if trace is None:
        trace = host_rounds(residual, plan, challenger)
    residual.scale(eps)
    data = ZkSumcheckData(mu_tilde, masks.shape[1], trace.wires, trace.witnesses)
    return Batch(data, oracle, trace.gammas, eps, masks, draw.randomness)


def round_plan(ops, k: int, pow_bits: int, aux, future, eps, masks, size: int,
                read_tables: bool = False) -> MaskedRoundsPlan:
    """The host-fixed part of each round's message h_j (everything but live_j * past_j + eps * c0 in h_j[0] and
    eps * c_inf in h_j[2]): live_j s_j, the future masks' endpoints and eps times the carried aux."""
    half = _two_power(ops, -1)
    templates, lives = [], []
    aux_carry = aux
    for j in range(1, k + 1):
        mask = masks[j - 1]
        future = ops.ef_sub(future, endpoints(ops, mask))
        aux_carry = ops.ef_mul(aux_carry, half)
        live = _two_power(ops, k - j)
        h = np.zeros((size, 4), np.uint32)
        h[:mask.shape[0]] = ops.ef_mul(mask, live)
        if j < k:
            h[0] = ops.ef_add(h[0], ops.ef_mul(future, _two_power(ops, k - j - 1)))
        h[0] = ops.ef_add(h[0], ops.ef_mul(eps, aux_carry))
        templates.append(np.concatenate([h[:1], h[2:]]))
        lives.append(live)
    return MaskedRoundsPlan(np.array(templates, np.uint32).reshape(k, size - 1, 4),
                            np.array(lives, np.uint32).reshape(k, 4),
                            np.asarray(eps, np.uint32), np.asarray(masks, np.uint32), int(pow_bits), read_tables)


def host_rounds(residual, plan: MaskedRoundsPlan, challenger) -> MaskedRoundsTrace:
    """``plan``'s rounds on the host over ``residual`` (``round_coefficients`` / ``fold``): the loop that
    ``Backend.masked_rounds`` runs in one step (``backends.masked_rounds`` states it)."""
    ops = residual.ops
    past = ops.ef_from_base(ops.ZERO)
    sums, wires, witnesses, gammas = [], [], [], []
    for j in range(plan.rounds):
        c0, c_inf = residual.round_coefficients()
        wire = plan.templates[j].copy()
        wire[0] = ops.ef_add(wire[0], ops.ef_add(ops.ef_mul(plan.lives[j], past), ops.ef_mul(plan.e, c0)))
        wire[1] = ops.ef_add(wire[1], ops.ef_mul(plan.e, c_inf))
        challenger.observe_many(wire)
        if plan.pow_bits > 0:
            witnesses.append(int(challenger.grind(plan.pow_bits)))
        gamma = challenger.sample_ef()
        past = ops.ef_add(past, horner(ops, plan.masks[j], gamma))
        residual.fold(c0, c_inf, gamma)
        sums.append((c0, c_inf))
        wires.append(wire)
        gammas.append(gamma)
    return MaskedRoundsTrace(np.asarray(sums, np.uint32).reshape(-1, 2, 4),
                             np.array(wires, np.uint32).reshape(plan.rounds, plan.wire_len, 4),
                             np.asarray(witnesses, np.uint32), np.array(gammas, np.uint32).reshape(-1, 4))


def verify_batch(name: str, data: ZkSumcheckData, root: np.ndarray, claim: np.ndarray, k: int, pow_bits: int,
                 ell_zk: int, challenger, field: Field) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Replay batch ``name`` whose bound claim is ``claim``: (gammas (k, 4), eps, the claim after the last round).
    A wrong shape or PoW witness raises ``VerificationError``; the sums are checked by what follows (the next
    batch's bound claim, at last the base case)."""
    ops = field_ops(field)
    size = max(ell_zk, 3) - 1
    if data.ell_zk != ell_zk:
        raise reject(name, "sumcheck-ell-zk", f"the batch states ell_zk {data.ell_zk}, the configuration {ell_zk}")
    if data.round_coefficients.shape != (k, size, 4):
        raise reject(name, "sumcheck-shape", f"expected {k} rounds of {size} coefficients, got "
                                             f"{data.round_coefficients.shape[:2]}")
    if data.pow_witnesses.shape != ((k,) if pow_bits else (0,)):
        raise reject(name, "sumcheck-shape", f"expected {k if pow_bits else 0} PoW witnesses")
    challenger.observe_many(claim)
    challenger.observe_many(root)
    challenger.observe_many(data.mu_tilde)
    eps = challenger.sample_ef()
    target = ops.ef_add(ops.ef_mul(eps, claim), data.mu_tilde)
    gammas = []
    for j in range(k):
        wire = data.round_coefficients[j]
        # h(0) + h(1) = 2 c0 + c1 + sum_{i>=2} c_i = target fixes the dropped linear coefficient c1.
        c1 = ops.ef_sub(ops.ef_sub(target, ops.ef_add(wire[0], wire[0])), ops.ef_sum(wire[1:]))
        coeffs = np.concatenate([wire[:1], c1[None], wire[1:]])
        challenger.observe_many(wire)
        if pow_bits and not challenger.check_witness(pow_bits, int(data.pow_witnesses[j])):
            raise reject(name, "sumcheck-pow", f"sumcheck round {j}: invalid proof-of-work witness")
        gamma = challenger.sample_ef()
        target = horner(ops, coeffs, gamma)
        gammas.append(gamma)
    return np.stack(gammas), eps, target


def switch_covector(ops, message_len: int, source_len: int, pad_len: int, rhos, ood_coeffs, xs,
                    query_coeffs) -> np.ndarray:
    """The code switch's mask covector over (source randomness ‖ pad) (upstream ``switch_mask_covector``): each
    OOD point adds coeff rho^(message_len + i) at every position i, each query point coeff x^(message_len + i) on
    the source part only."""
    covector = np.zeros((source_len + pad_len, 4), np.uint32)
    for rho, coeff in zip(rhos, ood_coeffs):
        term = ops.ef_mul(coeff, ops.ef_power(rho, message_len))
        covector = ops.ef_add(covector, ops.ef_mul(term, ops.ef_powers(rho, source_len + pad_len)))
    xs = np.asarray(xs, np.uint32).reshape(-1, 4)
    if xs.shape[0] and source_len:  # every query point at once: a few batched products instead of a loop
        coeffs = np.asarray(query_coeffs, np.uint32).reshape(-1, 4)
        if not xs[:, 1:].any():  # base points (the domain's): base powers, EF times base products
            base = xs[:, 0]
            terms = ops.mul(coeffs, ops.power(base, message_len)[:, None])
            spread = ops.mul(terms[:, None], base_powers_each(ops, base, source_len)[:, :, None])
        else:
            terms = ops.ef_mul(coeffs, ops.ef_power(xs, message_len))
            spread = ops.ef_mul(terms[:, None], ef_powers_each(ops, xs, source_len))
        covector[:source_len] = ops.ef_add(covector[:source_len], ops.ef_sum(spread, axis=0))
    return covector


def ef_powers_each(ops, points: np.ndarray, n: int) -> np.ndarray:
    """[1, x, ..., x^(n-1)] for every EF point x of ``points`` (q, 4) -> (q, n, 4), by doubling."""
    points = np.asarray(points, np.uint32).reshape(-1, 4)
    out = np.zeros((points.shape[0], max(n, 1), 4), np.uint32)
    out[:, 0, 0] = ops.ONE
    filled, step = 1, points[:, None]
    while filled < n:
        take = min(filled, n - filled)
        out[:, filled:filled + take] = ops.ef_mul(out[:, :take], step)
        filled += take
        step = ops.ef_mul(step, step)
    return out[:, :n]


def base_powers_each(ops, points: np.ndarray, n: int) -> np.ndarray:
    """[1, x, ..., x^(n-1)] for every base point x of ``points`` (q,) -> (q, n), by doubling."""
    points = np.asarray(points, np.uint32).reshape(-1)
    out = np.zeros((points.shape[0], max(n, 1)), np.uint32)
    out[:, 0] = ops.ONE
    filled, step = 1, points[:, None]
    while filled < n:
        take = min(filled, n - filled)
        out[:, filled:filled + take] = ops.mul(out[:, :take], step)
        filled += take
        step = ops.square(step)
    return out[:, :n]
