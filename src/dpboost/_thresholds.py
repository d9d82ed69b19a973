"""The thresholded release of private category lists (docs/privacy.md, Private category lists):
the Gaussian noise of the counts, the threshold a value held by one record alone clears with
probability at most its share of delta, and the planned release, from public inputs only."""

import math

from ._accounting import (
    LedgerEntry,
    rdp_epsilon,
)
from ._noise import SecureNoise
from ._sensitivities import category_count_sensitivity

#: Private category lists (``categories="private"``): the Gaussian noise of the counts is the
#: noise that alone would cost this share of epsilon (at the Renyi delta); the trees get what
#: the Renyi composition leaves (docs/privacy.md, Private category lists).
CATEGORIES_SHARE = 0.1


#: Share of ``delta`` planned for the thresholds of private category lists: the probability
#: that a value held by the added record alone is released; the Renyi composition of
#: everything is converted at the rest, ``(1 - CATEGORIES_DELTA_SHARE) delta``.
CATEGORIES_DELTA_SHARE = 0.5


#: Ledger scope of the private category lists: released first of all, sequentially composed.
CATEGORIES_SCOPE = {"group": -1, "tree": -1, "level": -2}


def _lattice_excess(noise_multiplier):
    """Relative excess of the secure sampler's noise over the planned standard deviation, and
    the lattice step relative to it, for a one-value row (``SecureNoise.lattice``): the step is
    at most ``2**-b`` of the scale and the integer scale at most ``scale / step + sigma + 2``."""
    step = 2.0**-SecureNoise.GAUSSIAN_BITS
    return (noise_multiplier + 2.0) * step, step


def new_value_probability(threshold, noise_std, noise_multiplier):
    """Bound on the probability that a count of 1 plus the noise exceeds ``threshold``.

    ``P[N(0, s'^2) >= threshold - 1 - g]``, with ``s' = s (1 + (sigma + 2) 2^-24)`` and
    ``g = s 2^-24``: for numpy's Gaussian (``s' = s``, ``g = 0`` would do) and for the secure
    sampler's discrete Gaussian ``g Y`` on the lattice ``g Z`` of parameter ``t g <= s'``
    (``SecureNoise``), whose tail satisfies ``P[Y >= m] <= P[N(0, t^2) >= m - 1]`` for
    ``m >= 1`` (the sum of ``exp(-k^2 / 2t^2)`` over ``k >= m`` is at most the integral from
    ``m - 1``, and the normaliser is at least ``sqrt(2 pi) t`` by Poisson summation).
    ``0.5 erfc(x / sqrt(2))`` is the Gaussian tail.

    Parameters
    ----------
    threshold : float
        Above ``1 + g``.
    noise_std : float
        ``s``, the planned standard deviation of each count's noise.
    noise_multiplier : float
        ``sigma = s`` over the counts' sensitivity.

    Returns
    -------
    probability : float
    """
    excess, step = _lattice_excess(noise_multiplier)
    gap = threshold - 1.0 - step * noise_std
    return 0.5 * math.erfc(gap / (noise_std * (1.0 + excess) * math.sqrt(2.0)))


def category_threshold(noise_std, noise_multiplier, value_delta):
    """The smallest threshold whose :func:`new_value_probability` is at most ``value_delta``.

    Found by bisection on the tail bound (to a relative 1e-12, the upper end kept), so that a
    value of count 1 held by the added record alone is released with probability at most
    ``value_delta`` (Korolova et al. 2009; Wilson et al. 2020).

    Returns
    -------
    threshold : float
    """
    low = 1.0 + 2.0**-SecureNoise.GAUSSIAN_BITS * noise_std
    high = low + noise_std
    while new_value_probability(high, noise_std, noise_multiplier) > value_delta:
        high = low + 2.0 * (high - low)
    for _ in range(200):
        middle = 0.5 * (low + high)
        if new_value_probability(middle, noise_std, noise_multiplier) > value_delta:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    return high


def category_noise_multiplier(epsilon, delta):
    """Noise multiplier ``sigma`` of the Gaussian mechanism that alone is (epsilon, delta)-DP
    by dp-accounting's Renyi conversion, to a relative 1e-9 (bisection in log sigma; the
    conversion decreases with sigma). The categories' counts get ``epsilon =
    CATEGORIES_SHARE * epsilon`` of the fit."""
    import dp_accounting

    def cost(sigma):
        return rdp_epsilon(dp_accounting.GaussianDpEvent(sigma), delta)

    low, high = 1e-3, 1e7
    if cost(high) > epsilon:
        raise ValueError(f"epsilon={epsilon} is too small to plan private category lists with "
                         f"delta={delta}.")
    for _ in range(200):
        middle = math.sqrt(low * high)
        low, high = (middle, high) if cost(middle) > epsilon else (low, middle)
        if high / low < 1 + 1e-9:
            break
    return high


def share_release(share, epsilon, delta, sensitivity, scope, refusal):
    """The ledger entry of a Gaussian release (L2 ``sensitivity``, ledger ``scope``) whose noise
    alone is ``(share * epsilon, delta)``-DP (:func:`category_noise_multiplier`), composed with
    the trees by Renyi accounting: the private bounds' and the domain report's releases.

    Raises
    ------
    ValueError
        ``refusal`` (it names the parameter to change), when no noise multiplier up to 1e7
        reaches ``share * epsilon``.
    """
    try:
        sigma = category_noise_multiplier(share * epsilon, delta)
    except ValueError:
        raise ValueError(refusal) from None
    return LedgerEntry(mechanism="gaussian", epsilon=math.inf, sensitivity=sensitivity,
                       n_nodes=1, noise_multiplier=sigma, **scope)


def categories_release(n_columns, epsilon, delta):
    """The ledger entry of the private category lists of ``n_columns`` columns.

    The counts of the observed values of every column get Gaussian noise of multiplier
    :func:`category_noise_multiplier` (``CATEGORIES_SHARE * epsilon`` at the Renyi delta
    ``(1 - CATEGORIES_DELTA_SHARE) delta``) on the L2 sensitivity
    :func:`category_count_sensitivity`; a value is released when its noisy count exceeds the
    threshold whose :func:`new_value_probability` is ``CATEGORIES_DELTA_SHARE * delta /
    n_columns`` (a union bound over the at most ``n_columns`` values the added record alone
    holds). Without noise (``epsilon = inf``) every observed value is released.

    Raises
    ------
    ValueError
        ``delta == 0``: the release is not pure DP; epsilon and delta too small for the
        counts' noise (:func:`category_noise_multiplier`).
    """
    sensitivity = category_count_sensitivity(n_columns)
    if delta == 0:
        raise ValueError("categories='private' needs delta > 0: releasing the values seen in "
                         "the data has a delta of its own (a value held by one record alone "
                         "clears the threshold with a small probability); set delta, e.g. "
                         "1e-5, well below 1 / n_samples.")
    if not math.isfinite(epsilon):
        return LedgerEntry(mechanism="exact", epsilon=math.inf, sensitivity=sensitivity,
                           n_nodes=n_columns, threshold=0.0, **CATEGORIES_SCOPE)
    value_delta = CATEGORIES_DELTA_SHARE * delta
    try:
        sigma = category_noise_multiplier(CATEGORIES_SHARE * epsilon, delta - value_delta)
    except ValueError:
        # The error names the counts' share; the fit's own values are what to change.
        raise ValueError(f"epsilon={epsilon} with delta={delta} is too small to plan private "
                         f"category lists: their counts get {CATEGORIES_SHARE:g} of epsilon "
                         f"at {1 - CATEGORIES_DELTA_SHARE:g} of delta, which no Gaussian noise "
                         "up to 1e7 times their sensitivity reaches.") from None
    threshold = category_threshold(sigma * sensitivity, sigma, value_delta / n_columns)
    return LedgerEntry(mechanism="threshold", epsilon=math.inf, sensitivity=sensitivity,
                       n_nodes=n_columns, noise_multiplier=sigma, threshold=threshold,
                       delta=n_columns * new_value_probability(threshold, sigma * sensitivity,
                                                               sigma),
                       **CATEGORIES_SCOPE)
