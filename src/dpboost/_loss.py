"""Losses on labels scaled into [-1, 1], and the maps to and from user units.

DPBoost (Li et al. 2020, Sec. 4) trains every task with the square loss ``l = (y - F)^2 / 2`` on
labels in [-1, 1]: the gradient is ``g = F - y`` and the Hessian is 1, so the tree statistics need
only gradient sums and counts. DP-XGB trains classifiers with the logistic loss: ``g = sigma(F) - y01``
in [-1, 1] and ``h = sigma(F) (1 - sigma(F))`` in [0, 1/4]; with K > 2 classes its multinomial
form (softmax) has the same bounds per class.
"""

import numpy as np


def square_loss_gradients(raw_predictions, y_scaled, out):
    """Write ``g_i = F(x_i) - y_i`` into ``out``.

    Parameters
    ----------
    raw_predictions : ndarray of shape (n,), dtype=float64
    y_scaled : ndarray of shape (n,), dtype=float64
        Labels in [-1, 1].
    out : ndarray of shape (n,), dtype=float32
    """
    np.subtract(raw_predictions, y_scaled, out=out, casting="same_kind")
    return out


def logistic_loss_gradients(raw_predictions, y_scaled, out, hessians_out):
    """Write the logistic loss's ``g_i = sigma(F_i) - (y_i + 1) / 2`` and ``h_i = sigma (1 - sigma)``.

    Parameters
    ----------
    raw_predictions : ndarray of shape (n,), dtype=float64
        Log-odds F.
    y_scaled : ndarray of shape (n,), dtype=float64
        Labels -1 / +1.
    out, hessians_out : ndarray of shape (n,), dtype=float32
    """
    p = sigmoid(raw_predictions)
    np.subtract(p, (y_scaled + 1.0) / 2.0, out=out, casting="same_kind")
    np.multiply(p, 1.0 - p, out=hessians_out, casting="same_kind")
    return out


def softmax_loss_gradients(raw_predictions, y_scaled, out, hessians_out):
    """Write the multinomial log-loss's ``g_ik = p_ik - y_ik`` and ``h_ik = p_ik (1 - p_ik)``.

    ``p_i = softmax(F_i)`` over the K outputs; each class's tree uses the diagonal Hessian, as
    XGBoost and LightGBM do. ``g`` in [-1, 1] and ``h`` in [0, 1/4], the logistic loss's bounds,
    so the sensitivities are the same (docs/privacy.md, Losses).

    Parameters
    ----------
    raw_predictions : ndarray of shape (n_outputs, n), dtype=float64
        Scores F of every class.
    y_scaled : ndarray of shape (n_outputs, n), dtype=float64
        One-hot labels as -1 / +1.
    out, hessians_out : ndarray of shape (n_outputs, n), dtype=float32
    """
    shifted = np.exp(raw_predictions - raw_predictions.max(axis=0, keepdims=True))
    p = shifted / shifted.sum(axis=0, keepdims=True)
    np.subtract(p, (y_scaled + 1.0) / 2.0, out=out, casting="same_kind")
    np.multiply(p, 1.0 - p, out=hessians_out, casting="same_kind")
    return out


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


def margin_to_proba(raw_predictions, loss="square"):
    """Class probabilities from margins on -1 / +1 labels.

    The square loss estimates ``E[y | x] = 2 p - 1``, so ``p = (F + 1) / 2`` clipped to [0, 1];
    the logistic loss's F is the log-odds, ``p = sigma(F)``.

    Parameters
    ----------
    raw_predictions : ndarray of shape (n, n_outputs)
        One output: the positive class of a binary problem. Several: one-vs-rest margins, whose
        probabilities are normalised to sum to 1 (uniform where they are all 0).
    loss : {"square", "logistic", "softmax"}, default="square"
        ``"softmax"`` with several outputs: ``softmax(F)``; with one, as ``"logistic"``.

    Returns
    -------
    proba : ndarray of shape (n, 2) for one output, else (n, n_outputs), dtype=float64
    """
    if loss == "softmax" and raw_predictions.shape[1] > 1:
        shifted = np.exp(raw_predictions - raw_predictions.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)
    if loss in ("logistic", "softmax"):
        p = sigmoid(raw_predictions)
    else:
        p = np.clip((np.asarray(raw_predictions) + 1.0) / 2.0, 0.0, 1.0)
    if p.shape[1] == 1:
        return np.column_stack([1.0 - p[:, 0], p[:, 0]])
    total = p.sum(axis=1, keepdims=True)
    return np.divide(p, total, out=np.full_like(p, 1.0 / p.shape[1]), where=total > 0)
