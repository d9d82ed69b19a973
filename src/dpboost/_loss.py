"""Losses on labels scaled into [-1, 1], and the maps to and from user units.

DPBoost (Li et al. 2020, Sec. 4) trains every task with the square loss ``l = (y - F)^2 / 2`` on
labels in [-1, 1]: the gradient is ``g = F - y`` and the Hessian is 1, so the tree statistics need
only gradient sums and counts. DP-XGB trains classifiers with the logistic loss: ``g = sigma(F) - y01``
in [-1, 1] and ``h = sigma(F) (1 - sigma(F))`` in [0, 1/4]; with K > 2 classes its multinomial
form (softmax) has the same bounds per class.
"""

import math

import numpy as np
from numba import njit, prange

from ._budget import HESSIAN_SKETCH_ROUNDS
from ._common import G_H_DTYPE, SAMPLE_INDEX_DTYPE

#: Rows below which the gradient kernels run on the calling thread.
PARALLEL_ROWS = 1 << 16

#: Least share read by the log-odds initial scores: a class absent from the exact shares of a
#: non-private fit (the private shares are positive) gives a finite score, ``log(1e-6)``.
SHARE_FLOOR = 1e-6



def square_loss_gradients(raw_predictions, y_scaled, out, n_threads=1, rows=None):
    """Write ``g_i = F(x_i) - y_i`` into ``out``.

    Parameters
    ----------
    raw_predictions : ndarray of shape (n,), dtype=float64
    y_scaled : ndarray of shape (n,), dtype=float64
        Labels in [-1, 1].
    out : ndarray of shape (n,), or (m,) with ``rows``, dtype=float32
    n_threads : int, default=1
        Rows in ``n_threads`` contiguous parallel chunks (1, or fewer than
        :data:`PARALLEL_ROWS` rows: on the calling thread). The result does not depend on it.
    rows : ndarray of shape (m,), dtype=int32, or None
        Only these rows: ``out[k]`` is row ``rows[k]``'s (None: every row).
    """
    _run_rows(raw_predictions, y_scaled, False, out, out[:0], n_threads, rows)
    return out


def logistic_loss_gradients(raw_predictions, y_scaled, out, hessians_out, n_threads=1,
                            rows=None):
    """Write the logistic loss's ``g_i = sigma(F_i) - (y_i + 1) / 2`` and ``h_i = sigma (1 - sigma)``.

    Computed in float64 (``sigma`` as :func:`sigmoid` to float64 rounding), rounded once to
    float32.

    Parameters
    ----------
    raw_predictions : ndarray of shape (n,), dtype=float64
        Log-odds F.
    y_scaled : ndarray of shape (n,), dtype=float64
        Labels -1 / +1.
    out, hessians_out : ndarray of shape (n,), or (m,) with ``rows``, dtype=float32
    n_threads, rows
        As :func:`square_loss_gradients`.
    """
    _run_rows(raw_predictions, y_scaled, True, out, hessians_out, n_threads, rows)
    return out


def _run_rows(raw, y, logistic, out, hessians_out, n_threads, rows=None):
    rows = np.empty(0, dtype=SAMPLE_INDEX_DTYPE) if rows is None else rows
    n = out.shape[0]
    if n_threads == 1 or n < PARALLEL_ROWS:
        _gradient_rows(raw, y, rows, logistic, np.int64(0), np.int64(n), out, hessians_out)
    else:
        _gradient_chunks(raw, y, rows, logistic, n_threads, out, hessians_out)


@njit(cache=True)
def _gradient_rows(raw, y, rows, logistic, lo, hi, out, hessians_out):
    """Outputs ``lo:hi`` of the square (``logistic`` False) or logistic loss's statistics,
    output ``k`` of row ``rows[k]`` (no ``rows``: of row ``k``)."""
    every_row = rows.shape[0] == 0
    for k in range(lo, hi):
        i = k if every_row else rows[k]
        if not logistic:
            out[k] = raw[i] - y[i]
            continue
        # sigma(F) from exp of -|F| (never overflows): libm's exp is several times faster
        # than its tanh, the form of :func:`sigmoid`; the two agree to float64 rounding.
        e = math.exp(-abs(raw[i]))
        p = (1.0 if raw[i] >= 0.0 else e) / (1.0 + e)
        out[k] = p - (y[i] + 1.0) / 2.0
        hessians_out[k] = p * (1.0 - p)


@njit(parallel=True, cache=True)
def _gradient_chunks(raw, y, rows, logistic, n_threads, out, hessians_out):
    n = out.shape[0]
    for c in prange(n_threads):
        chunk = np.int64(c)
        _gradient_rows(raw, y, rows, logistic, chunk * n // n_threads,
                       (chunk + 1) * n // n_threads, out, hessians_out)


def softmax_loss_gradients(raw_predictions, y_scaled, out, hessians_out, n_threads=1):
    """Write the multinomial log-loss's ``g_ik = p_ik - y_ik`` and ``h_ik = p_ik (1 - p_ik)``.

    ``p_i = softmax(F_i)`` over the K outputs, as ``exp(F_ik - max_k F_ik)`` over its sum (no
    overflow); each class's tree uses the diagonal Hessian, as XGBoost and LightGBM do. ``g``
    in [-1, 1] and ``h`` in [0, 1/4], the logistic loss's bounds, so the sensitivities are the
    same (docs/privacy.md, Losses). Computed in float64, rounded once to float32.

    Parameters
    ----------
    raw_predictions : ndarray of shape (n_outputs, n), dtype=float64
        Scores F of every class.
    y_scaled : ndarray of shape (n_outputs, n), dtype=float64
        One-hot labels as -1 / +1.
    out, hessians_out : ndarray of shape (n_outputs, n), dtype=float32
    n_threads : int, default=1
        As :func:`square_loss_gradients`.
    """
    n = raw_predictions.shape[1]
    if n_threads == 1 or n < PARALLEL_ROWS:
        _softmax_rows(raw_predictions, y_scaled, np.int64(0), np.int64(n), out, hessians_out)
    else:
        _softmax_chunks(raw_predictions, y_scaled, n_threads, out, hessians_out)
    return out


@njit(cache=True)
def _softmax_rows(raw, y, lo, hi, out, hessians_out):
    """Rows ``lo:hi`` of :func:`softmax_loss_gradients`."""
    n_outputs = raw.shape[0]
    shifted = np.empty(n_outputs)
    for i in range(lo, hi):
        top = raw[0, i]
        for k in range(1, n_outputs):
            top = max(top, raw[k, i])
        total = 0.0
        for k in range(n_outputs):
            shifted[k] = math.exp(raw[k, i] - top)
            total += shifted[k]
        for k in range(n_outputs):
            p = shifted[k] / total
            out[k, i] = p - (y[k, i] + 1.0) / 2.0
            hessians_out[k, i] = p * (1.0 - p)


@njit(parallel=True, cache=True)
def _softmax_chunks(raw, y, n_threads, out, hessians_out):
    n = raw.shape[1]
    for c in prange(n_threads):
        chunk = np.int64(c)
        _softmax_rows(raw, y, chunk * n // n_threads, (chunk + 1) * n // n_threads, out,
                      hessians_out)


def weight_statistics(values, weights):
    """Per-record statistics times the records' weights (``sample_weight``), float32, rounded
    toward zero.

    The product of two float32 numbers is exact in float64; rounding it toward zero keeps
    ``|w g| <= w |g|``, so a weighted gradient (Hessian) stays within ``W g*`` (``W h*``)
    whenever ``|g| <= g*`` and ``w <= W`` hold in float32, the bounds every weighted sensitivity
    assumes (docs/privacy.md, Sample weights). Rounding to nearest could exceed them by an ulp.

    Parameters
    ----------
    values : ndarray of shape (n,), dtype=float32
        Gradients (bounded) or Hessians.
    weights : ndarray of shape (n,), dtype=float32
        In ``[0, W]``.

    Returns
    -------
    weighted : ndarray of shape (n,), dtype=float32
    """
    product = values.astype(np.float64) * weights
    weighted = product.astype(G_H_DTYPE)
    over = np.abs(weighted.astype(np.float64)) > np.abs(product)
    weighted[over] = np.nextafter(weighted[over], G_H_DTYPE(0))
    return weighted


def sigmoid(x):
    """``1 / (1 + exp(-x))`` without overflow warnings."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=np.float64)))


def scale_target(y, target_bounds):
    """Clip ``y`` to the public ``target_bounds`` and map it linearly onto [-1, 1].

    Parameters
    ----------
    y : ndarray of shape (n,), dtype=float64
    target_bounds : tuple of float
        ``(lower, upper)`` with ``lower < upper``.

    Returns
    -------
    y_scaled : ndarray of shape (n,), dtype=float64
    """
    lower, upper = target_bounds
    return 2.0 * (np.clip(y, lower, upper) - lower) / (upper - lower) - 1.0


def unscale_target(raw_predictions, target_bounds):
    """Inverse of :func:`scale_target` (without the clipping): raw scores back to target units."""
    lower, upper = target_bounds
    return lower + (np.asarray(raw_predictions) + 1.0) * (upper - lower) / 2.0


def predicted_target(raw_predictions, target_bounds):
    """A regressor's predictions: raw scores clipped to [-1, 1], then :func:`unscale_target`, so
    every prediction lies within the public ``target_bounds``."""
    return unscale_target(np.clip(raw_predictions, -1.0, 1.0), target_bounds)


class SquareLoss:
    """DPBoost's square loss on labels in [-1, 1] (Li et al. 2020, Sec. 4): ``g = F - y``, ``h = 1``.

    Attributes
    ----------
    hessian_bound : float
        h*, the bound on one record's Hessian (docs/privacy.md, Losses).
    has_hessians : bool
        False: the Hessian is the constant 1, so trees use counts.
    hessian_sketch_rounds : int
        Releases of the adaptive Hessian sketch per output: 1, as the Hessians never change.
    couples_outputs : bool
        Whether one output's gradients depend on the others' scores.
    """

    name = "square"
    hessian_bound = 1.0
    has_hessians = False
    hessian_sketch_rounds = 1
    couples_outputs = False

    def gradients(self, raw_predictions, y_rows, gradients, hessians, output, n_threads=1,
                  rows=None):
        """Write output ``output``'s gradients (rows of the (n_outputs, n) arrays), on
        ``n_threads`` threads; with ``rows`` (a loss that does not couple its outputs), of
        those records only, into arrays of shape (n_outputs, len(rows))."""
        square_loss_gradients(raw_predictions[output], y_rows[output], gradients[output],
                              n_threads, rows)

    def proba(self, raw_predictions):
        """Class probabilities: ``p = clip((F + 1) / 2, 0, 1)`` (``E[y | x] = 2 p - 1``); with
        several outputs (one-vs-rest) normalised to sum to 1 (uniform where all are 0).

        Parameters
        ----------
        raw_predictions : ndarray of shape (n, n_outputs)

        Returns
        -------
        proba : ndarray of shape (n, 2) for one output, else (n, n_outputs), dtype=float64
        """
        return _one_vs_rest(np.clip((np.asarray(raw_predictions) + 1.0) / 2.0, 0.0, 1.0))

    def initial_scores(self, shares, n_outputs):
        """The constant scores that minimise the loss on records of these label shares
        (``_initial``): ``2 p_k - 1``, the mean of labels in [-1, 1] (one output: of
        ``shares[1]``, the mean target's position ``u = (y + 1) / 2``).

        Parameters
        ----------
        shares : ndarray of shape (max(2, n_outputs),), dtype=float64
            Positive, summing to 1 (``_initial.released_shares``).
        n_outputs : int

        Returns
        -------
        scores : ndarray of shape (n_outputs,), dtype=float64
        """
        return 2.0 * _output_shares(shares, n_outputs) - 1.0

    @classmethod
    def validation_clip(cls, n_outputs):
        """C, the bound each held-out record's loss is clipped to (early stopping; a public
        constant): ``sum_k (y_k - clip(F_k, -1, 1))^2 / 2`` on targets in [-1, 1] is at most
        2 per output, so ``C = 2 n_outputs`` clips nothing (predictions are clipped to [-1, 1]
        as the regressor's are)."""
        return 2.0 * n_outputs

    @classmethod
    def record_losses(cls, raw, y):
        """Each record's loss, ``sum_k (y_k - clip(F_k, -1, 1))^2 / 2``.

        Parameters
        ----------
        raw, y : ndarray of shape (n_outputs, n), dtype=float64
            Scores and labels (targets) in [-1, 1].

        Returns
        -------
        losses : ndarray of shape (n,), dtype=float64
        """
        return 0.5 * ((y - np.clip(raw, -1.0, 1.0)) ** 2).sum(axis=0)


class LogisticLoss(SquareLoss):
    """The log-loss on -1 / +1 labels (DP-XGB): ``g = sigma(F) - (y + 1) / 2`` in [-1, 1],
    ``h = sigma(F) (1 - sigma(F))`` <= 1/4; one-vs-rest with several outputs."""

    name = "logistic"
    hessian_bound = 0.25
    has_hessians = True
    hessian_sketch_rounds = HESSIAN_SKETCH_ROUNDS

    def gradients(self, raw_predictions, y_rows, gradients, hessians, output, n_threads=1,
                  rows=None):
        logistic_loss_gradients(raw_predictions[output], y_rows[output], gradients[output],
                                hessians[output], n_threads, rows)

    def proba(self, raw_predictions):
        """``p = sigma(F)``, as :meth:`SquareLoss.proba` otherwise."""
        return _one_vs_rest(sigmoid(raw_predictions))

    def initial_scores(self, shares, n_outputs):
        """Log-odds ``log(p_k / (1 - p_k))`` of each output's class (one-vs-rest; as
        :meth:`SquareLoss.initial_scores` otherwise)."""
        p = np.clip(_output_shares(shares, n_outputs), SHARE_FLOOR, 1.0 - SHARE_FLOOR)
        return np.log(p) - np.log1p(-p)

    @classmethod
    def validation_clip(cls, n_outputs):
        """``C = 2 log 2`` per output, twice the loss of the initial model (F = 0): a record
        predicted worse counts C, so the sum still falls as the model improves."""
        return 2.0 * math.log(2.0) * n_outputs

    @classmethod
    def record_losses(cls, raw, y):
        """``sum_k log(1 + exp(-y_k F_k))`` (labels -1 / +1)."""
        return np.logaddexp(0.0, -y * raw).sum(axis=0)


class SoftmaxLoss(LogisticLoss):
    """The multinomial log-loss of K > 2 classes, ``p = softmax(F)``, ``g_k = p_k - y_k``,
    ``h_k = p_k (1 - p_k)``: the logistic loss's bounds, so the same sensitivities."""

    name = "softmax"
    couples_outputs = True

    def gradients(self, raw_predictions, y_rows, gradients, hessians, output, n_threads=1):
        """At output 0 (the first tree of a boosting round) every output's gradients, from the
        scores after the previous round; nothing at the others."""
        if output == 0:
            softmax_loss_gradients(raw_predictions, y_rows, gradients, hessians, n_threads)

    def proba(self, raw_predictions):
        shifted = np.exp(raw_predictions - raw_predictions.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)

    def initial_scores(self, shares, n_outputs):
        """Centred log-shares ``log p_k - mean_j log p_j`` (softmax is unchanged by a common
        shift; as :meth:`SquareLoss.initial_scores` otherwise)."""
        logs = np.log(np.maximum(_output_shares(shares, n_outputs), SHARE_FLOOR))
        return logs - logs.mean()

    @classmethod
    def validation_clip(cls, n_outputs):
        """``C = 2 log K``, twice the loss of the initial model over K classes."""
        return 2.0 * math.log(n_outputs)

    @classmethod
    def record_losses(cls, raw, y):
        """``logsumexp(F) - F_y`` (``y`` one-hot in -1 / +1)."""
        top = raw.max(axis=0)
        return top + np.log(np.exp(raw - top).sum(axis=0)) - (raw * (y > 0)).sum(axis=0)


#: The loss classes by the estimators' ``loss`` names.
LOSSES = {"square": SquareLoss, "logistic": LogisticLoss, "softmax": SoftmaxLoss}


def make_loss(name, n_outputs):
    """The loss object of a ``loss`` parameter: ``"softmax"`` with one output (two classes) is
    the logistic loss."""
    return LogisticLoss() if name == "softmax" and n_outputs == 1 else LOSSES[name]()


def _output_shares(shares, n_outputs):
    """Each output's share: the second of two (one output) or one per output."""
    shares = np.asarray(shares, dtype=np.float64)
    return shares[1:] if n_outputs == 1 else shares


def _one_vs_rest(p):
    """``[1 - p, p]`` for one output; several are normalised to sum to 1 (uniform where all
    are 0)."""
    if p.shape[1] == 1:
        return np.column_stack([1.0 - p[:, 0], p[:, 0]])
    total = p.sum(axis=1, keepdims=True)
    return np.divide(p, total, out=np.full_like(p, 1.0 / p.shape[1]), where=total > 0)
