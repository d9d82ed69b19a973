"""The private initial score (``init="private"``): the scores ``F0`` every output starts from,
released once before the grid and the trees (docs/privacy.md, Private initial score).

One release (Laplace under pure DP or from :data:`LAPLACE_FROM_SHARE` of the budget on,
else Gaussian under Renyi accounting: ``initial_release``) of the vector of sums ``sum_i w_i (1 - u_i, u_i)`` (one output,
``u = (y + 1) / 2``: the target's position in its bounds, or the second class) or of the
weighted class counts (several outputs), at :data:`INITIAL_SHARE` of the budget, L1 and L2
sensitivity ``W`` (:func:`~dpboost._sensitivities.initial_statistics_sensitivity`).
Post-processing: the released sums, floored at 0 and each given the release's noise scale ``b``
as pseudo-records, are the shares ``p``; the loss maps them to ``F0``
(``SquareLoss.initial_scores``: the mean target ``2 p_1 - 1``; the logistic loss: log-odds;
softmax: centred log-shares). With ``b`` pseudo-records per coordinate a release buried in its
noise gives shares near uniform, the scores near 0 of ``init="zero"``.

The scores enter the model as post-processing: the records' scores start at ``F0``, and after
the trees are grown ``F0`` is added to the leaves of each output's first stage, which every
input reaches (so ``predict`` adds no separate constant, and model files keep their layout).
"""

import math
from dataclasses import replace

import numpy as np

from ._accounting import LedgerEntry
from ._mechanisms import noise_scale, planned_release
from ._sensitivities import initial_statistics_sensitivity

#: Share of the budget spent on the initial score, one release before the grid
#: (``initial_release``); the trees are planned with what remains. Measured by
#: ``benchmarks/bench_initial_score.py --stage share`` on tuning splits (benchmarks/README.md,
#: "Private initial score").
INITIAL_SHARE = 0.1
#: From this share of epsilon on, the initial score is a Laplace release at that share of
#: epsilon at any delta (composed with the trees by Renyi accounting): one release taking most
#: of the budget has about 3x less noise as pure Laplace than as a Gaussian of the same share of
#: the zCDP budget at delta 5e-8, ``sqrt(2) / (s epsilon)`` against ``sqrt(2 log(1 / delta) /
#: s) / epsilon``; the trees get what the Renyi conversion leaves.
LAPLACE_FROM_SHARE = 0.5
#: Ledger scope of the initial score: after the private bounds (same level, released after
#: them: the ledger's sort is stable), before any sketch (level 0).
INITIAL_SCOPE = {"group": -1, "tree": -1, "level": -1}


def initial_statistics_count(n_outputs):
    """Coordinates of the initial score's release: 2 for one output (``(1 - u, u)``), else one
    per output (class)."""
    return max(2, int(n_outputs))


def initial_statistics(partition):
    """A partition's sums ``sum_i w_i v_i`` with ``v_i = (1 - u_i, u_i)``, ``u = (y + 1) / 2``
    (one output), or ``v_i = u_i`` per output (one-hot classes); ``w_i = 1`` without weights.
    Sensitive: released only by :func:`private_initial_scores`.

    Returns
    -------
    sums : ndarray of shape (initial_statistics_count(n_outputs),), dtype=float64
    """
    u = (np.clip(partition.y_rows.astype(np.float64), -1.0, 1.0) + 1.0) / 2.0
    if u.shape[0] == 1:
        u = np.vstack([1.0 - u[0], u[0]])
    if partition.weights is not None:
        u = u * partition.weights.astype(np.float64)
    return u.sum(axis=1)


def released_shares(released, scale):
    """Shares from the released sums (post-processing): each floored at 0, plus ``scale`` (the
    release's noise scale; 0 when exact) pseudo-records, normalised; uniform when all are 0.

    Parameters
    ----------
    released : ndarray of shape (m,), dtype=float64
    scale : float

    Returns
    -------
    shares : ndarray of shape (m,), dtype=float64
        Positive where ``scale > 0``; sums to 1.
    """
    mass = np.maximum(released, 0.0) + scale
    total = mass.sum()
    return mass / total if total > 0 else np.full(released.shape, 1.0 / released.size)


def private_initial_scores(records, loss, n_outputs, release, noise, ledger):
    """Release the initial statistics once (``release``: ``plan.initial``) and map them to
    every output's initial score.

    Parameters
    ----------
    records : record set (``_records``)
        Targets in [-1, 1] (scaled by the public or released bounds) or labels -1 / +1.
    loss : loss object of ``_loss``
    n_outputs : int
    release : LedgerEntry
    noise : NoiseSource
    ledger : PrivacyLedger

    Returns
    -------
    scores : ndarray of shape (n_outputs,), dtype=float64
    """
    sums = records.reduce(initial_statistics)
    # One row of m statistics, all of which one record may move (the samplers' allowance).
    released = planned_release(sums[np.newaxis], release, noise=noise, ledger=ledger,
                               scope=release.scope)[0]
    return loss.initial_scores(released_shares(released, noise_scale(release)), n_outputs)


def start_scores(partition, scores):
    """The partition with every record's score of output k set to ``scores[k]``."""
    raw = np.repeat(np.asarray(scores, dtype=np.float64)[:, None], partition.raw.shape[1], axis=1)
    return replace(partition, raw=raw)


def fold_into_first_stage(forest, scores):
    """Add ``scores[k]`` to every leaf of output k's first stage (in place): the model then
    predicts ``F0 + sum of trees`` with no separate constant."""
    for output, score in enumerate(scores):
        forest.leaf_value[output * forest.n_stages] += score


def initial_release(epsilon, delta, sample_weight_bound=None, share=None, laplace=False):
    """The ledger entry of the private initial score (``init="private"``), composed with the
    trees: Laplace at ``share * epsilon`` under pure DP (the trees share the rest; ``share``
    None: :data:`INITIAL_SHARE`); under Renyi accounting a Gaussian whose noise multiplier
    :func:`_plan` sets after the trees' (they are planned within ``(1 - share) epsilon``, the
    release gets the least noise that keeps the plan within epsilon), so the
    release fits any epsilon the trees fit (a multiplier fixed from epsilon, the pure share's
    zCDP equivalent ``1 / (INITIAL_SHARE * epsilon)``, alone spent 39 % of epsilon = 0.01 at
    delta = 5e-8, and more than all of it at a share of 0.3); with ``laplace`` (the planner's
    ``accounting="auto"``), from :data:`LAPLACE_FROM_SHARE` on, Laplace at ``share * epsilon`` at any delta, the trees planned by the bisection with
    what the Renyi composition leaves (the regressor's small-data regime, Abalone under S-BDT's
    protocol: RMSE 3.63 / 3.26 / 3.19 against 4.90 / 3.33 / 3.22 with the Gaussian at epsilon
    0.01 / 0.05 / 0.1; ``benchmarks/README.md``, "Trees against the row count times
    epsilon"); ``"exact"`` at
    ``epsilon = inf``. Sensitivity W (:func:`initial_statistics_sensitivity`, L1 and L2)."""
    weight = 1.0 if sample_weight_bound is None else float(sample_weight_bound)
    share = (INITIAL_SHARE if share is None else share) * epsilon
    common = {"sensitivity": initial_statistics_sensitivity(weight), "n_nodes": 1,
              **INITIAL_SCOPE}
    if not math.isfinite(epsilon):
        return LedgerEntry(mechanism="exact", epsilon=math.inf, **common)
    if delta == 0 or (laplace and share >= LAPLACE_FROM_SHARE * epsilon):
        return LedgerEntry(mechanism="laplace", epsilon=share, **common)
    # The bisection replaces the multiplier (``_plan``); this one is the pure share's.
    return LedgerEntry(mechanism="gaussian", epsilon=math.inf, noise_multiplier=1.0 / share,
                       **common)
