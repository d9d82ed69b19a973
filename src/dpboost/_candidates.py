"""Split candidates: the grid of each feature, both private sketches, categorical boundaries.

Where the ``max_bins - 1`` candidate thresholds of a numeric feature lie (docs/privacy.md,
Split-candidate sketches): on the equal-width grid inside the public bounds (free), on that grid
in ``log1p(x - lower)`` for a nonnegative feature whose bounds span many units (free), at quantiles
of a Laplace-noised fine histogram released once before the trees (DP-XGBoost's sketch), or, for
DP-TR's adaptive Hessian sketch, on a fine 255-bin grid of which each tree may use the boundaries
chosen from a released Hessian histogram (released before a few evenly spaced trees, from the
boosting loop). A categorical feature offers only the boundaries between two of its public
categories. Every release goes through ``_mechanisms`` with the plan's parameters; everything
else here is post-processing of released values and public inputs.
"""

import math
import warnings
from dataclasses import replace

import numpy as np

from ._binning import BoundsBinner, bin_columns
from ._common import (
    G_H_DTYPE,
    boundary_feature,
    boundary_index,
    category_key,
    threads_for,
)
from ._histogram import all_rows_histograms
from ._loss import weight_statistics
from ._mechanisms import (
    gaussian_mechanism,
    laplace_mechanism,
    noise_scale,
    threshold_mechanism,
)
from ._sensitivities import bounds_column_weights

#: ``split_candidates="log"``: a numeric feature whose bounds are nonnegative and at least this
#: many units apart gets its grid on ``log1p(x - lower)`` (:func:`log_grid_features`). Such a
#: column is usually an amount, a count or a duration whose records crowd its low end, where an
#: equal-width grid puts one bin. On the four classification tuning splits with such a feature
#: it gained 0.0039 ROC AUC on average over the 11 cells below 700 records per unit of epsilon
#: and feature (Adult 0.010; benchmarks/README.md, "A log grid for wide amounts").
LOG_GRID_SPAN = 1000.0
#: Fine grid of the sketch, in fine bins per final bin: a quantile lands within 1/8 of a grid
#: bin, while the Laplace noise summed into one quantile's cumulative count stays small.
SKETCH_RESOLUTION = 8
#: Fine equal-width grid of the adaptive Hessian sketch: every bin code of a uint8 but the
#: missing-value code; each tree chooses ``max_bins - 1`` of its boundaries.
HESSIAN_SKETCH_BINS = 255
#: Share of the uniform density mixed into the sketch's density: every fine bin keeps a positive
#: weight, so the thresholds are strictly increasing (no duplicate candidates) and no region of
#: the bounds is left without a candidate when the noise wipes out its counts.
SKETCH_UNIFORM_SHARE = 0.1


def release_rows(statistics, entry, noise, ledger):
    """``statistics`` released as one node of shape (1, n_columns, n_bins) (a record moves one
    count of every column's histogram, hence the planned entry's sensitivity over the whole
    array, and one coordinate per column: the exact samplers' rounding allowance counts the
    columns, not the cells) by the mechanism, parameters and ledger scope of the planned
    ``entry``.

    Parameters
    ----------
    statistics : ndarray of shape (n_columns, n_bins), dtype=float64

    Returns
    -------
    released : ndarray of the shape of ``statistics``, dtype=float64
    """
    row = statistics[np.newaxis]
    scope = entry.scope
    if entry.mechanism == "gaussian":
        released = gaussian_mechanism(row, noise_multiplier=entry.noise_multiplier,
                                      sensitivity=entry.sensitivity, noise=noise, ledger=ledger,
                                      scope=scope)
    else:
        released = laplace_mechanism(row, epsilon=entry.epsilon, sensitivity=entry.sensitivity,
                                     noise=noise, ledger=ledger, scope=scope)
    return released.reshape(statistics.shape)


def fine_histograms(X, lower, upper, n_fine, weights=None, n_threads=1, features=None):
    """Exact counts of every feature on a fine equal-width grid: the sketch's input.

    Sensitive: the estimator releases them only through the Laplace mechanism. One record adds 1
    (its weight in ``[0, W]`` with sample weights) to one bin of each feature (none for a
    missing value), so the L1 sensitivity of the whole matrix is ``n_features`` (``W
    n_features``) under add/remove.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype=float64
        NaN is not counted; values outside the bounds are clipped into the end bins.
    lower, upper : ndarray of shape (n_counted,), dtype=float64
        Public bounds of the counted features.
    n_fine : int
        Bins per feature, at most 65535.
    weights : ndarray of shape (n_samples,), dtype=float32, or None, default=None
        The records' weights (None: each counts 1).
    n_threads : int, default=1
        Threads of the binning. The counts do not depend on it.
    features : ndarray of int or None, default=None
        The columns counted, in this order (read in place, not copied); None: all.

    Returns
    -------
    counts : ndarray of shape (n_counted, n_fine), dtype=float64
        One row per counted column.
    """
    X = np.asarray(X, dtype=np.float64)
    codes = np.empty((X.shape[0], len(lower)), dtype=np.uint16, order="F")
    bin_columns(X, np.ascontiguousarray(lower), n_fine / (upper - lower), n_fine, codes,
                n_threads, features)
    counts = [np.bincount(codes[:, j], weights=weights, minlength=n_fine + 1)[:n_fine]
              for j in range(codes.shape[1])]
    return np.array(counts, dtype=np.float64).reshape(codes.shape[1], n_fine)


def _mixed_density(weights):
    """Each row of released fine-grid ``weights`` as a density mixed with the uniform one:
    negative weights set to 0, the row normalised (a row whose weights are all non-positive is
    uniform), then mixed with :data:`SKETCH_UNIFORM_SHARE` of uniform mass, so that every fine
    bin keeps a positive weight. Post-processing only."""
    n_fine = weights.shape[1]
    weights = np.maximum(weights, 0.0)
    total = weights.sum(axis=1, keepdims=True)
    density = np.divide(weights, total, out=np.full_like(weights, 1.0 / n_fine), where=total > 0)
    return (1.0 - SKETCH_UNIFORM_SHARE) * density + SKETCH_UNIFORM_SHARE / n_fine


def _inverse_cdf(density, levels):
    """Positions, in fine-bin units in ``[0, n_fine]``, where the CDF of a positive fine-grid
    ``density`` (one row summing to 1; piecewise uniform inside each bin) reaches ``levels``."""
    cdf = np.zeros(density.shape[0] + 1)
    np.cumsum(density, out=cdf[1:])
    cdf[-1] = 1.0  # rounding: the last boundary is the upper bound
    return np.interp(levels, cdf, np.arange(density.shape[0] + 1.0))


def _quantile_positions(weights, n_quantiles):
    """Positions, in fine-bin units in ``[0, n_fine]``, of the ``k / (n_quantiles + 1)``
    quantiles (k = 1 .. n_quantiles) of each row of released fine-grid ``weights``
    (:func:`_mixed_density`). Post-processing only.
    """
    density = _mixed_density(weights)
    levels = np.arange(1, n_quantiles + 1) / (n_quantiles + 1)
    return np.array([_inverse_cdf(row, levels) for row in density]).reshape(
        weights.shape[0], n_quantiles)


def _greedy_positions(weights, n_quantiles):
    """:func:`_quantile_positions` with every isolated fine bin heavier than one quantile given
    one threshold, on its edge, and the other quantiles spread over the rest of the mass.

    A value that many records share (the zero of an amount, a common integer) fills one fine bin
    with more than one final bin's mass; plain quantiles would put several thresholds inside it,
    where they split nothing, and leave the rest of the range few. As LightGBM's bin finder
    (``GreedyFindBin``: a value of at least the mean bin's count gets a bin of its own), a fine
    bin whose mass reaches ``m / (n_quantiles + 1 - h)`` (``m`` the mass of the other bins, ``h``
    the number of such heavy bins, found by iterating) is heavy. A heavy bin whose neighbours
    are not heavy is taken for such a value: its mass is capped to one quantile's (the share of
    the uncapped rest), so that about one quantile falls inside it, and a threshold inside it
    moves to its right edge (its left edge for the last bin) unless that would leave the
    thresholds not strictly increasing. Adjacent heavy bins are a dense continuous stretch
    (values packed inside generous bounds), whose inner quantiles still split records: they keep
    their mass. Where no bin is heavy, this is :func:`_quantile_positions`. Post-processing only.
    """
    density = _mixed_density(weights)
    n_fine = density.shape[1]
    k = n_quantiles + 1
    levels = np.arange(1, k) / k
    positions = np.empty((density.shape[0], n_quantiles))
    for f, mass in enumerate(density):
        heavy = np.zeros(n_fine + 2, dtype=bool)  # a false bin on each side
        inside = heavy[1:-1]
        while True:
            new = ~inside & (mass >= mass[~inside].sum() / (k - inside.sum()))
            if not new.any():
                break
            inside |= new
        atom = inside & ~heavy[:-2] & ~heavy[2:]
        capped = np.where(atom, np.minimum(mass, mass[~atom].sum() / (k - atom.sum())), mass)
        position = _inverse_cdf(capped / capped.sum(), levels)
        fine_bin = np.minimum(position.astype(np.int64), n_fine - 1)
        edge = np.where(fine_bin == n_fine - 1, fine_bin, fine_bin + 1)
        moved = np.where(atom[fine_bin] & (position > fine_bin), edge, position)
        increasing = (np.diff(moved) > 0).all() and moved[0] > 0 and moved[-1] < n_fine
        positions[f] = moved if increasing else position
    return positions


def sketch_thresholds(noisy_counts, lower, upper, max_bins):
    """Quantile thresholds from released fine histograms (DP-XGBoost's sketch; post-processing).

    Grislain & Gonzalvez (2021) feed a Laplace-noised histogram to a quantile sketch
    (docs/privacy.md, Split-candidate sketches). Threshold ``b`` is the ``(b + 1) / max_bins``
    quantile of the released counts mixed with :data:`SKETCH_UNIFORM_SHARE` of uniform mass
    (piecewise uniform inside each fine bin), except that a fine bin heavier than one quantile
    and without a heavy neighbour (a value many records share) gets one threshold, on its edge,
    and the others spread over the rest (:func:`_greedy_positions`, after LightGBM's bin
    finder). A feature whose released counts are all non-positive gets the equal-width grid.

    Parameters
    ----------
    noisy_counts : ndarray of shape (n_features, n_fine), dtype=float64
        Released counts on the equal-width fine grid inside the bounds.
    lower, upper : ndarray of shape (n_features,), dtype=float64
    max_bins : int

    Returns
    -------
    thresholds : ndarray of shape (n_features, max_bins - 1), dtype=float64
        Strictly increasing per feature, strictly inside the bounds.
    """
    position = _greedy_positions(noisy_counts, max_bins - 1)
    return lower[:, None] + position / noisy_counts.shape[1] * (upper - lower)[:, None]


def hessian_sketch_boundaries(noisy_weights, n_candidates, noise_std=0.0):
    """Split candidates of each feature from its released Hessian histogram on the fine grid:
    DP-TR's adaptive Hessian sketch (Maddock et al. 2022; docs/privacy.md, Split-candidate sketches). Post-processing.

    Candidate ``k`` is the fine-bin boundary nearest to the ``k / (n_candidates + 1)`` quantile of
    the Hessian weight (mixed with :data:`SKETCH_UNIFORM_SHARE` of uniform mass): regions of
    large Hessian weight get many candidates, regions of small weight few, so every bin of the
    sketch carries about the same curvature.

    Parameters
    ----------
    noisy_weights : ndarray of shape (n_features, n_fine), dtype=float64
        Released Hessian sums per fine bin (missing values excluded).
    n_candidates : int
        Candidates per feature before duplicates are merged, at most ``n_fine - 1``.
    noise_std : float, default=0.0
        Standard deviation of the noise of each released weight (public, from the plan).
        Weights below twice it are set to 0: without this, the positive noise of the many
        empty fine bins would draw candidates to regions without records.

    Returns
    -------
    boundaries : list of ndarray of dtype=int64, one per feature
        Ascending distinct boundary indices ``b`` in ``[0, n_fine - 1)``: candidate ``b`` sends
        fine bins ``<= b`` left. Fewer than ``n_candidates`` where a fine bin holds more than one
        quantile's weight.
    """
    n_fine = noisy_weights.shape[1]
    weights = np.where(noisy_weights >= 2.0 * noise_std, noisy_weights, 0.0)
    position = _quantile_positions(weights, n_candidates)
    boundary = np.clip(np.rint(position).astype(np.int64), 1, n_fine - 1) - 1
    return [np.unique(row) for row in boundary]


def category_boundaries(binner, feature, n_categories):
    """The bin boundaries of a categorical feature that separate two categories.

    Category ``i`` has the code ``i`` inside the bounds ``(-0.5, n - 0.5)``; with fewer
    categories than bins, one category spans several bins, and only the boundaries between two
    categories are real splits (the others would duplicate one). Public: depends on the number of
    categories and the grid only.

    Returns
    -------
    boundaries : ndarray of shape (n_categories - 1,) or less, dtype=int64
        Ascending distinct boundary indices; candidate ``b`` sends bins ``<= b`` left.
    """
    codes = np.full((n_categories, binner.lower.size), np.nan)
    codes[:, feature] = np.arange(n_categories)
    bins = binner.transform(codes, order="C")[:, feature].astype(np.int64)
    # Categories sharing a bin (more categories than bins) have no boundary between them.
    return bins[1:][bins[1:] > bins[:-1]] - 1


#: The public grid of private feature bounds: 0 and +-10^(k/8) for k = -48 .. 96, i.e. 8 edges
#: per decade from 1e-6 to 1e12 on either side (values beyond +-1e12 count in the end bins).
BOUNDS_EDGES = np.concatenate([-np.logspace(12, -6, 145), [0.0], np.logspace(-6, 12, 145)])
#: Fine bins of the grid on either side of 0 (18 decades of 8), and the two bins around 0.
_SIDE_BINS = 144
#: Resolutions of the significance tests of the released histograms, in fine bins per group
#: (a factor of 10^(1/8) up to a decade): a few records per fine bin add up in a coarser group.
BOUNDS_RESOLUTIONS = (1, 2, 4, 8)
#: Probability, for the noise of one fit's released histograms (every column, group and
#: resolution), that some group holding no record is taken as significant.
BOUNDS_FALSE_POSITIVE = 1e-4
#: A plan whose noise needs more records than this in one decade to locate a column warns
#: before the release (:func:`private_bounds`).
BOUNDS_RECORDS_WARNING = 10_000
#: Bins next to a located region tested together by the growth of :func:`located_bounds`.
GROWTH = 2


def bounds_histograms(X):
    """Exact counts of every column of ``X`` on :data:`BOUNDS_EDGES` (sensitive: released only
    through the Laplace or Gaussian mechanism). NaN is not counted; values beyond the grid
    count in its end bins.

    Returns
    -------
    counts : ndarray of shape (n_features, len(BOUNDS_EDGES) - 1), dtype=float64
    """
    n_bins = BOUNDS_EDGES.size - 1
    counts = np.zeros((X.shape[1], n_bins))
    for f in range(X.shape[1]):
        column = X[:, f][~np.isnan(X[:, f])]
        bins = np.clip(np.searchsorted(BOUNDS_EDGES, column, side="right") - 1, 0, n_bins - 1)
        counts[f] = np.bincount(bins, minlength=n_bins)
    return counts


def bounds_counts(partition, numeric, target):
    """A partition's :func:`bounds_histograms` of the columns whose bounds are released: the
    numeric features ``numeric`` (None: none), then the target if ``target``. Unweighted:
    sample weights do not enter the bounds (their sensitivity has no weight bound)."""
    columns = ([partition.X[:, numeric]] if numeric is not None else []) + (
        [partition.y_rows[0][:, None]] if target else [])
    return bounds_histograms(np.column_stack(columns))


def bounds_groups(k):
    """The groups of ``k`` adjacent fine bins of :data:`BOUNDS_EDGES` tested at resolution
    ``k``: aligned on decades on either side of 0; the two bins around 0 alone (``k = 1``).

    Returns
    -------
    starts, stops : ndarray of dtype=int64
        Group ``i`` is fine bins ``starts[i] .. stops[i] - 1``.
    """
    starts = np.arange(0, _SIDE_BINS, k)
    centre = np.array([_SIDE_BINS, _SIDE_BINS + 1] if k == 1 else [], dtype=np.int64)
    starts = np.concatenate([starts, centre, starts + _SIDE_BINS + 2])
    return starts, np.minimum(starts + np.where(np.isin(starts, centre), 1, k),
                              BOUNDS_EDGES.size - 1)


def sum_threshold(release, k, probability):
    """A threshold that the noise summed over ``k`` released counts exceeds with probability at
    most ``probability``: public (the plan's noise), so the test is post-processing.

    Gaussian noise of standard deviation ``s``: ``z s sqrt(k)``, ``z`` the standard normal's
    upper ``probability`` quantile. Laplace noise of scale ``b``: the Chernoff bound
    ``P[S >= t] <= exp(-lambda t) / (1 - lambda^2 b^2)^k`` at its best ``lambda =
    (sqrt(k^2 b^2 + t^2) - k b) / (t b)`` (from the Laplace moment generating function
    ``1 / (1 - lambda^2 b^2)``), solved for ``t`` by bisection. The exact samplers' lattice
    noise has these tails up to a relative ``2^-24`` of its scale (``_noise.SecureNoise``).

    Returns
    -------
    threshold : float
    """
    from statistics import NormalDist

    scale = noise_scale(release)
    if release.mechanism == "gaussian":
        return -NormalDist().inv_cdf(probability) * scale * math.sqrt(k)

    def log_tail(t):
        lam = (math.hypot(k * scale, t) - k * scale) / (t * scale)
        return -lam * t - k * math.log1p(-(lam * scale) ** 2)

    low, high = 0.0, scale
    while log_tail(high) > math.log(probability):
        high *= 2.0
    for _ in range(100):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if log_tail(middle) > math.log(probability) else (low, middle)
    return high


def bounds_thresholds(release, n_columns):
    """The significance thresholds of :func:`located_bounds`, by the number of bins summed
    (1 to a decade): :func:`sum_threshold` at :data:`BOUNDS_FALSE_POSITIVE` over every group
    of every resolution of the ``n_columns`` columns (a union bound). Public: the plan's.

    Returns
    -------
    thresholds : dict of int -> float
    """
    n_tests = n_columns * sum(bounds_groups(k)[0].size for k in BOUNDS_RESOLUTIONS)
    return {m: sum_threshold(release, m, BOUNDS_FALSE_POSITIVE / n_tests)
            for m in range(1, max(BOUNDS_RESOLUTIONS) + 1)}


def located_bounds(released, release):
    """Bounds from released histograms on :data:`BOUNDS_EDGES` (post-processing only).

    1. Significance, from fine to coarse: a group of ``k`` adjacent fine bins
       (:func:`bounds_groups`, ``k`` in :data:`BOUNDS_RESOLUTIONS`) none of whose bins is
       significant yet is significant when its released sum exceeds :func:`sum_threshold`,
       set so that the noise alone makes any group of the release significant with
       probability at most :data:`BOUNDS_FALSE_POSITIVE` (a union bound over the groups): a
       few records per fine bin add up in a coarser group, and a decade is not taken for the
       records next to a finer significant group.
    2. Growth: from the outermost significant bins outward, the fewest of the next ``m = 1 ..
       GROWTH`` bins join while their released sum exceeds the threshold of ``m`` bins at the
       false-positive probability :data:`BOUNDS_FALSE_POSITIVE` over ``2 GROWTH`` tests per
       column (a tail next to the data, tested against far fewer alternatives).

    A column's bounds are the outer edges of its significant bins, as the approximate bounds
    of Google's differential-privacy library (outermost bins whose noisy count clears a
    threshold): records beyond them are clipped into the end bins. A column without a
    significant group is not located: its bounds are the decade of the largest released sum,
    and ``located`` says so.

    Parameters
    ----------
    released : ndarray of shape (n_columns, len(BOUNDS_EDGES) - 1), dtype=float64
    release : LedgerEntry
        The planned release (its noise: :func:`sum_threshold`).

    Returns
    -------
    bounds : ndarray of shape (n_columns, 2), dtype=float64
        ``lower < upper``, both edges of the grid.
    located : ndarray of shape (n_columns,), dtype=bool
    """
    n_columns, n_bins = released.shape
    groups = {k: bounds_groups(k) for k in BOUNDS_RESOLUTIONS}
    thresholds = bounds_thresholds(release, n_columns)
    reach = max(BOUNDS_RESOLUTIONS)
    near = {m: sum_threshold(release, m, BOUNDS_FALSE_POSITIVE / (2 * GROWTH * n_columns))
            for m in range(1, GROWTH + 1)}
    significant = np.zeros(released.shape, dtype=bool)
    cumulative = np.zeros((n_columns, n_bins + 1))
    np.cumsum(released, axis=1, out=cumulative[:, 1:])
    for k, (starts, stops) in groups.items():
        sums = cumulative[:, stops] - cumulative[:, starts]
        for f in range(n_columns):
            for g in np.flatnonzero(sums[f] > thresholds[k]):
                # A group is tested only while no finer group of it is significant: the mass
                # next to a located region is growth's (below), not a reason for a decade.
                if not significant[f, starts[g]:stops[g]].any():
                    significant[f, starts[g]:stops[g]] = True
    located = significant.any(axis=1)
    bounds = np.empty((n_columns, 2))
    starts, stops = groups[reach]
    for f in range(n_columns):
        if not located[f]:
            g = int(np.argmax(cumulative[f, stops] - cumulative[f, starts]))
            bounds[f] = BOUNDS_EDGES[starts[g]], BOUNDS_EDGES[stops[g]]
            continue
        bins = np.flatnonzero(significant[f])
        low, high = bins[0], bins[-1]
        while True:  # the lower tail: the fewest bins below that pass together
            grown = [m for m in range(1, min(GROWTH, low) + 1)
                     if released[f, low - m:low].sum() > near[m]]
            if not grown:
                break
            low -= min(grown)
        while True:
            grown = [m for m in range(1, min(GROWTH, n_bins - 1 - high) + 1)
                     if released[f, high + 1:high + 1 + m].sum() > near[m]]
            if not grown:
                break
            high += min(grown)
        bounds[f] = BOUNDS_EDGES[low], BOUNDS_EDGES[high + 1]
    return bounds, located


def private_bounds(records, numeric, target, release, noise, ledger):
    """Feature bounds from a released histogram on the public log grid (``feature_bounds=
    "private"``; docs/privacy.md, Private feature bounds).

    The counts of every column on :data:`BOUNDS_EDGES` are released at once (``release``:
    Gaussian of L2 sensitivity ``sqrt(n_columns)`` with ``delta > 0``, else Laplace of L1
    sensitivity ``n_columns``); the bounds are :func:`located_bounds` of the released counts,
    and a column whose bounds the release could not locate warns (from the released values
    only), naming it.

    Parameters
    ----------
    records : record set (``_records``)
        Its partitions before binning.
    numeric : ndarray of int or None
        The numeric features whose bounds are released (None: none).
    target : bool
        Whether the target's bounds are released too (last row of the result).
    release : LedgerEntry
        ``plan.bounds``.
    noise, ledger
        As the mechanisms'.

    Returns
    -------
    bounds : ndarray of shape (n_columns, 2), dtype=float64
        ``lower < upper``, both edges of the grid.
    """
    n_features = 0 if numeric is None else numeric.size
    # Weighted counts (the target's weigh more), tested against the same noise.
    weights = bounds_column_weights(n_features, target,
                                    "l2" if release.mechanism == "gaussian" else "l1")
    needed = bounds_thresholds(release, n_features + target)
    if needed[max(BOUNDS_RESOLUTIONS)] / weights[0] > BOUNDS_RECORDS_WARNING:
        # From the plan alone, before any record is counted.
        target_note = (f" (the target: {needed[1] / weights[-1]:.0f})"
                       if target and n_features else "")
        warnings.warn(f"private bounds: this budget locates a column only where about "
                      f"{needed[1] / weights[0]:.0f} of its records{target_note} share one bin "
                      f"of the grid (a factor 10^(1/8)), or about "
                      f"{needed[max(BOUNDS_RESOLUTIONS)] / weights[0]:.0f} a decade; with "
                      "fewer records, pass public bounds (docs/privacy.md, Private feature "
                      "bounds).", UserWarning, stacklevel=5)
    counts = records.reduce(bounds_counts, numeric, target)
    released = release_rows(counts * np.array(weights)[:, None], release, noise, ledger)
    bounds, located = located_bounds(released, release)
    names = [f"column {j}" for j in ([] if numeric is None else numeric)] + (
        ["the target"] if target else [])
    for name, (lower, upper) in zip(np.array(names)[~located], bounds[~located]):
        warnings.warn(f"private bounds: the budget could not locate the bounds of {name} (no "
                      "group of its released histogram is above the noise); it takes the "
                      f"decade of its largest released count, [{lower:.3g}, {upper:.3g}], "
                      "which may miss the data. Pass public bounds, or raise epsilon "
                      "(docs/privacy.md, Private feature bounds).", UserWarning, stacklevel=5)
    return bounds


def category_counts(partition, columns, sizes):
    """A partition's counts of every observed value of the categorical ``columns``, whose cells
    hold the value's position in its column's observed list (NaN: missing, not counted);
    concatenated column after column.

    Returns
    -------
    counts : ndarray of shape (sum(sizes),), dtype=float64
    """
    return np.concatenate([np.zeros(0)] + [
        np.bincount(codes[~np.isnan(codes)].astype(np.int64), minlength=size)[:size]
        for codes, size in ((partition.X[:, j], size) for j, size in zip(columns, sizes))
    ]).astype(np.float64)


def recode_categories(partition, columns, recodes):
    """A partition whose categorical ``columns`` hold the position of their value in the
    released list instead of the observed one (``recodes[i][observed code]``; NaN for a value
    not released, which joins the missing values)."""
    X = partition.X.copy()
    for j, recode in zip(columns, recodes):
        codes = X[:, j]
        seen = ~np.isnan(codes)
        X[seen, j] = recode[codes[seen].astype(np.int64)]
    return replace(partition, X=X)


def category_order(value):
    """Sort key of a released category list: by the text of the value, then its type's name,
    then its repr; an order set by the released values alone, not by the data's order."""
    return str(value), type(value).__qualname__, repr(value)


def private_categories(records, observed, release, noise, ledger):
    """Category lists released from the data (``categories="private"``; docs/privacy.md,
    Private category lists).

    The count of every observed value of every private column is summed over the partitions;
    :func:`~dpboost._mechanisms.threshold_mechanism` keeps the values whose Gaussian-noised
    count exceeds the planned threshold (the counts themselves are not released). Each list is
    the kept values sorted by :func:`category_order`; the records' codes are replaced by their
    value's position in it (NaN for the others: missing, as a value outside a public list).

    Parameters
    ----------
    records : record set (``_records``)
        Its partitions before binning, the private columns coded by position in ``observed``.
    observed : dict of int -> ndarray of dtype=object
        PRIVATE: every private column's observed values in code order; read here only.
    release : LedgerEntry
        ``plan.categories``.
    noise, ledger
        As the mechanisms'.

    Returns
    -------
    lists : dict of int -> ndarray of dtype=object
        The released category list of each private column (possibly empty).
    """
    columns = list(observed)
    sizes = [observed[j].size for j in columns]
    counts = records.reduce(category_counts, columns, sizes)
    keys = np.empty(counts.size, dtype=object)
    # A value's identity is its type and text (one spelling, one count), as the cells were coded.
    keys[:] = [(j, *category_key(v)) for j in columns for v in observed[j]]
    # Only values some record holds are candidates: a count of 0 is not the data's value.
    present = counts > 0
    kept = np.zeros(counts.size, dtype=bool)
    kept[present] = threshold_mechanism(keys[present], counts[present], release=release,
                                        noise=noise, ledger=ledger)
    lists, recodes, start = {}, [], 0
    for j, size in zip(columns, sizes):
        values = observed[j][kept[start:start + size]]
        order = sorted(range(values.size), key=lambda i: category_order(values[i]))
        lists[j] = np.array([values[i] for i in order], dtype=object)
        recode = np.full(size, np.nan)
        recode[np.flatnonzero(kept[start:start + size])[order]] = np.arange(len(order))
        recodes.append(recode)
        start += size
    records.update(recode_categories, columns, recodes)
    return lists


def sketch_counts(partition, numeric, lower, upper, n_fine):
    """A partition's :func:`fine_histograms` of the numeric features ``numeric`` (weighted by
    the records' weights, if any: a weighted quantile sketch), read from the records in place:
    a copy of the numeric columns took 0.3-0.6 s on one core at 1M x 20."""
    return fine_histograms(partition.X, lower, upper, n_fine, partition.weights,
                           partition.n_threads, features=numeric)


def log_grid_features(bounds, numeric):
    """The features ``split_candidates="log"`` grids on ``log1p(x - lower)``: the numeric ones
    whose bounds are nonnegative and at least :data:`LOG_GRID_SPAN` apart. Public: a function of
    the bounds (public or released) alone.

    Parameters
    ----------
    bounds : ndarray of shape (n_features, 2), dtype=float64
    numeric : ndarray of int
        Indices of the numeric features.

    Returns
    -------
    features : ndarray of int
        A subset of ``numeric``, in its order.
    """
    lower, upper = bounds[numeric, 0], bounds[numeric, 1]
    return numeric[(lower >= 0.0) & (upper - lower >= LOG_GRID_SPAN)]


def log_grid_thresholds(lower, upper, max_bins):
    """The equal-width grid of ``max_bins`` bins on ``log1p(x - lower)``, mapped back:
    ``t_b = lower + expm1(b / max_bins * log1p(upper - lower))``, ``b = 1 .. max_bins - 1``.

    Parameters
    ----------
    lower, upper : ndarray of shape (n,), dtype=float64
        Bounds of each feature, ``0 <= lower < upper``.
    max_bins : int

    Returns
    -------
    thresholds : ndarray of shape (n, max_bins - 1), dtype=float64
        Strictly increasing within ``(lower, upper)`` per row.
    """
    steps = np.arange(1, max_bins) / max_bins
    return lower[:, None] + np.expm1(steps[None, :] * np.log1p(upper - lower)[:, None])


def initial_binner(records, bounds, numeric, max_bins, plan, noise, ledger, log_features=None):
    """The binner of a fit: the equal-width grid (the Hessian sketch's fine grid with
    ``plan.hessian_sketches``), with ``log_features`` the grid on ``log1p(x - lower)`` for
    those, or with ``plan.sketch`` the quantile sketch's thresholds.

    Parameters
    ----------
    records : record set (``_records``)
        Its partitions before binning (read only by the sketch's release).
    bounds : ndarray of shape (n_features, 2)
        Public or released bounds (categorical rows ``(-0.5, n_categories - 0.5)``).
    numeric : ndarray of int
        Indices of the numeric features.
    max_bins : int
    plan : BudgetPlan
    noise : NoiseSource
    ledger : PrivacyLedger
    log_features : ndarray of int or None, default=None
        :func:`log_grid_features` (``split_candidates="log"``); none or empty: the equal-width
        grid everywhere (the same binner as ``"uniform"``).

    Returns
    -------
    binner : BoundsBinner
    """
    binner = BoundsBinner(bounds, HESSIAN_SKETCH_BINS if plan.hessian_sketches else max_bins)
    if plan.sketch is not None:
        features = numeric
        lower, upper = bounds[numeric, 0], bounds[numeric, 1]
        counts = records.reduce(sketch_counts, numeric, lower, upper,
                                SKETCH_RESOLUTION * max_bins)
        released = release_rows(counts, plan.sketch, noise, ledger)
        placed = sketch_thresholds(released, lower, upper, max_bins)
    elif log_features is not None and log_features.size:
        features = log_features
        placed = log_grid_thresholds(bounds[features, 0], bounds[features, 1], max_bins)
    else:
        return binner
    # The features placed above take their thresholds; the others keep the grid's.
    thresholds = binner.thresholds()
    thresholds[features] = placed
    return BoundsBinner(bounds, max_bins, thresholds)


def initial_candidates(binner, n_features, categories):
    """The boundaries every tree may choose from before any Hessian sketch: all of them (None)
    without categorical features; otherwise, for a categorical feature of two or more
    categories, only those between two categories (public: the lists' lengths and the grid).

    Returns
    -------
    candidates : ndarray of dtype=int64 or None
        Ascending boundary indices (``_common.boundary_index``).
    """
    if not categories:
        return None
    n_bins = binner.max_bins
    per_feature = [category_boundaries(binner, f, categories[f].size)
                   if f in categories and categories[f].size > 1 else np.arange(n_bins - 1)
                   for f in range(n_features)]
    return np.concatenate([boundary_index(f, b, n_bins) for f, b in enumerate(per_feature)])


def hessian_counts(partition, output, numeric):
    """A partition's Hessian sums of output ``output`` per grid bin of the numeric features
    (counts for the square loss; not the missing-value bin), each record's times its weight
    with sample weights: the Hessian sketch's input.

    Returns
    -------
    weights : ndarray of shape (numeric.size, HESSIAN_SKETCH_BINS), dtype=float64
    """
    X_binned = partition.X_binned
    # Every record: the release is composed sequentially with the trees.
    weight = (np.ones(X_binned.shape[0], dtype=G_H_DTYPE) if partition.hessians is None
              else partition.hessians[output])
    if partition.weights is not None:
        weight = weight_statistics(weight, partition.weights)
    hist = np.empty((X_binned.shape[1], HESSIAN_SKETCH_BINS + 1, 2))
    all_rows_histograms(X_binned, weight, threads_for(X_binned.size, partition.n_threads), hist)
    return hist[numeric, :HESSIAN_SKETCH_BINS, 0]


def hessian_sketch_candidates(records, output, numeric, candidates, max_bins, release, noise,
                              ledger):
    """``candidates`` with the numeric features' boundaries replaced by the adaptive Hessian
    sketch's (DP-TR, Maddock et al. 2022).

    Parameters
    ----------
    records : record set (``_records``)
        Binned on the sketch's fine grid of :data:`HESSIAN_SKETCH_BINS` bins, with the Hessians
        of the current scores.
    output : int
        The output whose Hessians are released.
    numeric : ndarray of int
    candidates : ndarray of dtype=int64 or None
        The fit's initial candidates (categorical boundaries are kept).
    max_bins : int
        Each numeric feature gets at most ``max_bins - 1`` boundaries.
    release : SketchRelease
        One entry of ``plan.hessian_sketches``.
    noise, ledger
        As the grower's.

    Returns
    -------
    candidates : ndarray of dtype=int64
        Ascending boundary indices.
    """
    n_bins = HESSIAN_SKETCH_BINS
    released = release_rows(records.reduce(hessian_counts, output, numeric), release, noise, ledger)
    # A Laplace variable's standard deviation is sqrt(2) times its scale.
    noise_std = noise_scale(release) * (1.0 if release.mechanism == "gaussian"
                                        else math.sqrt(2.0))
    boundaries = hessian_sketch_boundaries(released, max_bins - 1, noise_std)
    kept = ([] if candidates is None else
            [candidates[~np.isin(boundary_feature(candidates, n_bins), numeric)]])
    return np.sort(np.concatenate(
        kept + [boundary_index(f, b, n_bins) for f, b in zip(numeric, boundaries)]))
