"""Split candidates, ``_candidates``: the log grid of wide nonnegative features, the quantile
sketch (fine histograms, thresholds from released counts), the adaptive Hessian sketch
(boundaries from released Hessian sums), the categorical features' boundaries, and the
candidates a fit starts from."""

from types import SimpleNamespace

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor
from dpboost._binning import BoundsBinner
from dpboost._candidates import (
    HESSIAN_SKETCH_BINS,
    LOG_GRID_SPAN,
    SKETCH_UNIFORM_SHARE,
    category_boundaries,
    fine_histograms,
    hessian_sketch_boundaries,
    initial_candidates,
    log_grid_features,
    log_grid_thresholds,
    sketch_counts,
    sketch_thresholds,
)


def test_log_grid_takes_the_wide_nonnegative_numeric_features_only():
    bounds = np.array([[0.0, LOG_GRID_SPAN], [0.0, np.nextafter(LOG_GRID_SPAN, 0.0)],
                       [-1.0, 5e6], [8.0, 8.0 + LOG_GRID_SPAN], [17.0, 90.0], [0.0, 1e12],
                       [-0.5, 2000.5]])
    numeric = np.array([0, 1, 2, 3, 4, 5])  # the last column is categorical
    np.testing.assert_array_equal(log_grid_features(bounds, numeric), [0, 3, 5])
    np.testing.assert_array_equal(log_grid_features(bounds, np.array([1, 2, 4], dtype=np.int64)),
                                  np.array([], dtype=np.int64))


@pytest.mark.parametrize("max_bins", [2, 7, 32, 255])
def test_log_grid_is_the_equal_width_grid_of_log1p_above_the_lower_bound(max_bins):
    lower = np.array([0.0, 8.0, 0.0, 3.0])
    upper = np.array([99_999.0, 1_600.0, 2e6, 1e15])
    thresholds = log_grid_thresholds(lower, upper, max_bins)
    assert thresholds.shape == (4, max_bins - 1)
    for f in range(4):  # against the grid computed one threshold at a time
        width = np.log1p(upper[f] - lower[f]) / max_bins
        expected = [lower[f] + np.expm1(b * width) for b in range(1, max_bins)]
        np.testing.assert_allclose(thresholds[f], expected, rtol=1e-14)
        assert (np.diff(thresholds[f]) > 0).all()
        assert lower[f] < thresholds[f, 0] and thresholds[f, -1] < upper[f]
        # equal steps of log1p(x - lower)
        np.testing.assert_allclose(np.diff(np.log1p(np.r_[0.0, thresholds[f] - lower[f]])),
                                   width, rtol=1e-9)


def _wide_data(n=3_000, seed=0):
    """An amount crowding the low end of [0, 99,999] (92 % zeros, as Adult's capital gain), a
    feature in [-1, 1], and a label that only the amount's zero against the rest tells."""
    rng = np.random.default_rng(seed)
    amount = np.where(rng.random(n) < 0.92, 0.0, rng.lognormal(8.0, 1.0, n))
    other = rng.uniform(-1.0, 1.0, n)
    y = ((amount > 0) ^ (rng.random(n) < 0.1)).astype(int)
    return np.column_stack([amount, other]), y, [(0.0, 99_999.0), (-1.0, 1.0)]


def test_log_grid_fit_bins_the_wide_feature_on_it_and_releases_nothing_more():
    X, y, bounds = _wide_data()
    params = {"epsilon": 1.0, "delta": 1e-6, "feature_bounds": bounds, "classes": [0, 1],
              "n_estimators": 10, "random_state": 0, "n_samples_hint": None}
    grid = DPGBClassifier(**params, split_candidates="uniform").fit(X, y)
    log = DPGBClassifier(**params, split_candidates="log").fit(X, y)
    thresholds = log._forest.binner.thresholds()
    np.testing.assert_array_equal(thresholds[0], log_grid_thresholds(
        np.array([0.0]), np.array([99_999.0]), log.max_bins)[0])
    np.testing.assert_array_equal(thresholds[1], grid._forest.binner.thresholds()[1])
    assert [(e.mechanism, e.epsilon, e.noise_multiplier) for e in log.privacy_ledger_] == [
        (e.mechanism, e.epsilon, e.noise_multiplier) for e in grid.privacy_ledger_]
    # the grid's first bin holds every amount below 3,125; the log grid's first boundary is
    # below 2, so zero against the rest is a candidate
    assert thresholds[0, 0] < 2.0 and grid._forest.binner.thresholds()[0, 0] > 3_000.0
    loaded = DPGBClassifier.from_json(log.to_json())
    np.testing.assert_array_equal(loaded._forest.binner.thresholds(), thresholds)
    np.testing.assert_array_equal(loaded.predict_proba(X), log.predict_proba(X))


def test_log_grid_without_a_wide_feature_is_the_uniform_fit_bit_for_bit():
    X, y, _ = _wide_data()
    params = {"epsilon": 1.0, "delta": 1e-6, "feature_bounds": [(0.0, 999.0), (-1.0, 1.0)],
              "classes": [0, 1], "n_estimators": 10, "random_state": 0}
    grid = DPGBClassifier(**params, split_candidates="uniform").fit(X, y)
    log = DPGBClassifier(**params, split_candidates="log").fit(X, y)
    assert log._forest.binner.custom_thresholds is None
    np.testing.assert_array_equal(log.predict_proba(X), grid.predict_proba(X))


def test_fine_histograms_match_numpy_and_one_record_moves_one_bin_per_feature():
    rng = np.random.default_rng(0)
    X = rng.normal(0.0, 2.0, size=(1000, 3))
    X[::7, 1] = np.nan
    lower, upper = np.array([-3.0, -1.0, 0.0]), np.array([3.0, 4.0, 1.0])
    counts = fine_histograms(X, lower, upper, 40)
    for f in range(3):
        column = X[:, f][~np.isnan(X[:, f])]
        # values outside the bounds are clipped into the end bins; NaN is not counted
        clipped = np.clip(column, lower[f], np.nextafter(upper[f], -np.inf))
        expected, _ = np.histogram(clipped, bins=40, range=(lower[f], upper[f]))
        np.testing.assert_array_equal(counts[f], expected)
    # add/remove one record: every feature's histogram moves by 1 in one bin (L1 = n_features)
    added = fine_histograms(np.vstack([X, [[0.5, 10.0, -np.inf]]]), lower, upper, 40)
    assert np.abs(added - counts).sum() == 3
    assert (np.abs(added - counts).sum(axis=1) == 1).all()


def test_sketch_counts_read_the_numeric_columns_in_place():
    # A categorical column between numeric ones: the counts are those of the numeric columns
    # alone, with and without record weights, on one and on three threads.
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(size=5000), rng.integers(0, 4, 5000).astype(float),
                         rng.uniform(-2.0, 9.0, 5000)])
    bounds = np.array([[-3.0, 3.0], [-0.5, 3.5], [-1.0, 8.0]])
    numeric = np.array([0, 2])
    for weights in (None, rng.uniform(0.0, 2.0, 5000).astype(np.float32)):
        expected = fine_histograms(np.ascontiguousarray(X[:, numeric]), bounds[numeric, 0],
                                   bounds[numeric, 1], 64, weights)
        for n_threads in (1, 3):
            partition = SimpleNamespace(X=X, weights=weights, n_threads=n_threads)
            np.testing.assert_array_equal(
                sketch_counts(partition, numeric, bounds[numeric, 0], bounds[numeric, 1], 64),
                expected)


def test_sketch_thresholds_follow_the_quantiles_of_the_released_counts():
    n_fine, max_bins = 256, 16
    # counts of an exponential distribution on [0, 8]
    edges = np.linspace(0, 8, n_fine + 1)
    mass = np.diff(-np.exp(-edges))
    counts = np.vstack([mass / mass.sum() * 1e6, np.full(n_fine, 10.0)])
    lower, upper = np.zeros(2), np.array([8.0, 1.0])
    t = sketch_thresholds(counts, lower, upper, max_bins)
    assert t.shape == (2, max_bins - 1)
    assert (np.diff(t, axis=1) > 0).all() and (t > lower[:, None]).all()
    assert (t < upper[:, None]).all()
    # the CDF of the mixture (1 - s) Exp + s Uniform at each threshold is (b + 1) / max_bins
    s = SKETCH_UNIFORM_SHARE
    cdf = (1 - s) * (1 - np.exp(-t[0])) / mass.sum() + s * t[0] / 8.0
    np.testing.assert_allclose(cdf, np.arange(1, max_bins) / max_bins, atol=2e-3)
    # uniform counts give the equal-width grid
    np.testing.assert_allclose(t[1], BoundsBinner([[0.0, 1.0]], max_bins).thresholds()[0])


def test_sketch_of_only_negative_noise_is_the_grid():
    t = sketch_thresholds(-np.ones((1, 64)), np.array([2.0]), np.array([6.0]), 8)
    np.testing.assert_allclose(t, BoundsBinner([[2.0, 6.0]], 8).thresholds())


def _amounts(n, rng):
    """Amounts in [0, 1000]: 90 % exactly 0, the rest log-uniform from 10 to 1000."""
    x = np.exp(rng.uniform(np.log(10.0), np.log(1000.0), n))
    x[rng.random(n) < 0.9] = 0.0
    return x


def test_a_value_most_records_share_gets_one_threshold_and_the_rest_the_others():
    rng = np.random.default_rng(6)
    x = _amounts(200_000, rng)
    max_bins, n_fine = 32, 256
    counts = fine_histograms(x[:, None], np.zeros(1), np.array([1000.0]), n_fine)
    t = sketch_thresholds(counts, np.zeros(1), np.array([1000.0]), max_bins)[0]
    assert t.shape == (max_bins - 1,) and (np.diff(t) > 0).all() and 0 < t[0] and t[-1] < 1000
    # the zeros' fine bin [0, 1000 / 256) gets one threshold, on its right edge
    assert t[0] == 1000.0 / n_fine and t[1] > t[0]
    # the others are the quantiles of the rest of the (mixed) mass: each of the 31 bins but the
    # zeros' holds a 30th of the nonzero records' share of it, within the noise of 20,000 draws
    mixture = _mixture_cdf(counts[0], 1000.0)
    rest = np.diff(np.concatenate([[mixture(t[0])], mixture(t[1:]), [1.0]]))
    np.testing.assert_allclose(rest, rest.mean(), rtol=0.05)
    # the records take 30 of the bins; plain quantiles would have left them 4
    assert np.unique(np.searchsorted(t, x)).size >= 30


def _mixture_cdf(counts, upper):
    """The CDF of fine-grid counts on [0, upper] mixed with uniform mass (the sketch's),
    piecewise linear inside each fine bin."""
    n_fine = counts.size
    density = (1 - SKETCH_UNIFORM_SHARE) * counts / counts.sum() + SKETCH_UNIFORM_SHARE / n_fine
    cdf = np.concatenate([[0.0], np.cumsum(density)])
    return lambda v: np.interp(np.asarray(v) / upper * n_fine, np.arange(n_fine + 1.0), cdf)


def test_common_integers_each_get_a_bin_of_their_own():
    # hours worked: 40 for half the records, the rest spread over 1..99 (integers)
    rng = np.random.default_rng(7)
    hours = np.where(rng.random(100_000) < 0.5, 40, rng.integers(1, 100, 100_000)).astype(float)
    counts = fine_histograms(hours[:, None], np.array([1.0]), np.array([99.0]), 256)
    t = sketch_thresholds(counts, np.array([1.0]), np.array([99.0]), 32)[0]
    assert (np.diff(t) > 0).all()
    # one threshold inside 40's fine bin (on its edge): the value is alone in its bin, and no
    # other threshold is wasted next to it (plain quantiles put 15 there)
    assert ((t > 39.0) & (t < 41.0)).sum() <= 2
    assert np.unique(np.searchsorted(t, hours)).size == 32


def test_a_dense_stretch_of_heavy_bins_keeps_its_inner_quantiles():
    # exponential amounts inside bounds 40 times their scale: the first fine bins are each
    # heavier than a quantile, but neighbours (a continuous stretch, not one shared value), so
    # the thresholds are the plain quantiles of the released counts
    edges = np.linspace(0.0, 40.0, 257)
    counts = np.diff(-np.exp(-edges))[None] * 1e6
    t = sketch_thresholds(counts, np.zeros(1), np.array([40.0]), 32)[0]
    np.testing.assert_allclose(_mixture_cdf(counts[0], 40.0)(t), np.arange(1, 32) / 32,
                               atol=1e-12)
    assert (t < 40.0 / 256).sum() >= 4  # several thresholds inside the first fine bin


def _skewed_fits(split_candidates, upper, preset):
    """Amounts packed near 0 inside generous public bounds ``(0, upper)``: the grid wastes almost
    every candidate; a sketch at epsilon 1 should find the signal at x = 0.3. The exponential
    mechanism picks the splits, so the candidates' placement is what matters. Returns the grid
    model's accuracy, the sketched model and its accuracy."""
    rng = np.random.default_rng(3)
    X = rng.exponential(0.3, size=(20_000, 2))
    y = (X[:, 0] > 0.3).astype(int)
    params = {**preset, "epsilon": 1.0, "feature_bounds": (0, upper), "classes": [0, 1],
              "n_estimators": 20, "max_depth": 2, "split_selection": "exponential",
              "random_state": 0}
    grid = DPGBClassifier(**{**params, "split_candidates": "uniform"}).fit(X, y)
    sketched = DPGBClassifier(**{**params, "split_candidates": split_candidates}).fit(X, y)
    return grid.score(X, y), sketched, sketched.score(X, y)


def test_sketch_puts_candidates_where_the_data_is(previous_preset):
    # seeds 0-2: 0.993-0.997 with the sketch, the majority rate 0.627 on the grid
    grid_score, sketch, score = _skewed_fits("sketch", 100, previous_preset)
    assert score > 0.95 > 0.7 > grid_score
    thresholds = sketch._forest.binner.thresholds()
    assert (thresholds[:, :16] < 2.0).all()  # half of the candidates below 2 % of the range


def test_sketched_model_round_trips_through_json_and_reports_the_sketch():
    rng = np.random.default_rng(4)
    X = rng.exponential(1.0, size=(500, 3))
    clf = DPGBClassifier.dpboost_paper(epsilon=2.0, split_candidates="sketch",
                                       feature_bounds=(0, 30),
                                       classes=[0, 1], n_estimators=5, max_depth=3, random_state=0)
    clf.fit(X, (X[:, 0] > 1).astype(int))
    loaded = DPGBClassifier.from_json(clf.to_json())
    np.testing.assert_array_equal(loaded._forest.binner.thresholds(), clf._forest.binner.thresholds())
    # rows on and next to the released thresholds bin the same way after loading
    probe = np.repeat(clf._forest.binner.thresholds()[:, :8].T, 2, axis=0)
    probe[1::2] = np.nextafter(probe[1::2], -np.inf)
    np.testing.assert_array_equal(loaded.predict_proba(probe), clf.predict_proba(probe))
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    report = clf.privacy_report()
    assert "over 5 trees in 1 sequentially composed groups, and 1 release before the trees" in report


def test_hessian_sketch_boundaries_split_the_released_weight_into_equal_quantiles():
    n_fine, n_candidates = 255, 15
    rng = np.random.default_rng(5)
    weights = np.vstack([rng.exponential(1.0, n_fine) * np.exp(-np.arange(n_fine) / 20.0),
                         np.full(n_fine, 3.0), -np.ones(n_fine)])
    boundaries = hessian_sketch_boundaries(weights, n_candidates)
    for f, b in enumerate(boundaries):
        assert b.dtype == np.int64 and (np.diff(b) > 0).all()
        assert 0 <= b[0] and b[-1] <= n_fine - 2
        # weight left of boundary b (bins <= b) of the mixture with uniform mass: k / (K + 1)
        density = np.maximum(weights[f], 0.0)
        density = (density / density.sum() if density.sum() > 0 else np.full(n_fine, 1 / n_fine))
        cdf = np.cumsum((1 - SKETCH_UNIFORM_SHARE) * density + SKETCH_UNIFORM_SHARE / n_fine)
        if b.size == n_candidates:
            quantiles = np.arange(1, n_candidates + 1) / (n_candidates + 1)
            # nearest boundary: off by at most half a fine bin's weight
            half_bin = np.maximum(np.diff(cdf, prepend=0.0)[b], np.diff(cdf)[b]) / 2 + 1e-12
            assert (np.abs(cdf[b] - quantiles) <= half_bin + 1e-12).all()
    # heavy weight near 0: most candidates there; flat or all-negative weight: the even grid
    assert (boundaries[0] < 60).sum() >= 10
    expected = np.rint(np.arange(1, n_candidates + 1) * n_fine / (n_candidates + 1)) - 1
    np.testing.assert_array_equal(boundaries[1], expected)
    np.testing.assert_array_equal(boundaries[2], expected)


def test_hessian_sketch_merges_candidates_inside_one_heavy_bin():
    weights = np.ones((1, 255))
    weights[0, 100] = 1e6  # one fine bin holds almost all the weight
    (b,) = hessian_sketch_boundaries(weights, 31)
    assert b.size < 31 and (np.diff(b) > 0).all()
    assert {99, 100} <= set(b.tolist())  # the heavy bin is isolated on both sides


def test_hessian_sketch_puts_candidates_where_the_data_is(previous_preset):
    # Bounds 20: the fine grid has 255 bins, so 0.3 is a fine boundary's 0.31, while the 32-bin
    # grid's first candidate is 0.625. The Hessian weight follows the records here.
    grid_score, hessian, score = _skewed_fits("hessian", 20, previous_preset)
    assert score > 0.95 > 0.8 > grid_score
    # the first trees' roots split x0 near 0.3 (fine boundary 3); the grid cannot
    assert (hessian._forest.split_feature[:5, 0] == 0).all()
    assert (np.abs(hessian._forest.split_bin[:5, 0].astype(int) - 3) <= 4).all()


def test_hessian_sketched_model_round_trips_through_json():
    rng = np.random.default_rng(8)
    X = rng.exponential(1.0, size=(500, 3))
    X[::9, 1] = np.nan
    clf = DPGBClassifier(epsilon=2.0, split_candidates="hessian",
                                     feature_bounds=(0, 30), classes=[0, 1], n_estimators=10,
                                     max_depth=3, random_state=0)
    clf.fit(X, (X[:, 0] > 1).astype(int))
    loaded = DPGBClassifier.from_json(clf.to_json())
    assert loaded._forest.binner.max_bins == HESSIAN_SKETCH_BINS
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    # the row count, then the sketch's five rounds
    assert "6 releases before the trees (tree -1" in clf.privacy_report()


@pytest.mark.parametrize("n_categories, n_bins", [(3, 32), (7, 255), (32, 32), (40, 32), (2, 2)])
def test_category_boundaries_separate_exactly_the_categories(n_categories, n_bins):
    binner = BoundsBinner([[0.0, 1.0], [-0.5, n_categories - 0.5]], n_bins)
    b = category_boundaries(binner, 1, n_categories)
    codes = np.column_stack([np.zeros(n_categories), np.arange(n_categories)])
    bins = binner.transform(codes)[:, 1].astype(int)
    assert (np.diff(b) > 0).all() and b.size == np.unique(bins).size - 1
    # every boundary has a category on each side, and no two boundaries make the same split
    sides = set()
    for boundary in b:
        left = bins <= boundary
        assert left.any() and not left.all()
        assert bins[left].max() <= boundary < bins[~left].min()
        sides.add(tuple(left))
    assert len(sides) == b.size
    if n_categories <= n_bins:
        assert b.size == n_categories - 1


@pytest.mark.parametrize("split_selection", ["exponential", "random", "cyclical"])
def test_categorical_splits_fall_between_categories(split_selection):
    rng = np.random.default_rng(6)
    X = np.column_stack([rng.integers(0, 4, 3000), rng.normal(size=3000)]).astype(float)
    y = (X[:, 0] == 2).astype(int)
    clf = DPGBClassifier.dpboost_paper(
        epsilon=2.0, delta=1e-5, leaf_noise="gaussian", n_estimators=20, max_depth=3,
        budget_allocation="sequential", feature_bounds=(-3, 3), classes=[0, 1],
        categorical_features=[0], categories={0: [0.0, 1.0, 2.0, 3.0]},
        split_selection=split_selection, random_state=0).fit(X, y)
    allowed = category_boundaries(clf._forest.binner, 0, 4)
    on_category = clf._forest.split_feature == 0
    # random: a feature uniformly, then one of its candidates (about half of the 140 nodes)
    assert on_category.sum() >= (50 if split_selection == "random" else 20)
    assert np.isin(clf._forest.split_bin[on_category], allowed).all()


def test_initial_candidates_restrict_categorical_features_only():
    binner = BoundsBinner([[0.0, 1.0], [-0.5, 2.5], [-0.5, 0.5]], 8)
    assert initial_candidates(binner, 3, {}) is None  # every boundary
    lists = {1: np.array(["a", "b", "c"], dtype=object), 2: np.array(["only"], dtype=object)}
    candidates = initial_candidates(binner, 3, lists)
    assert (np.diff(candidates) > 0).all()
    by_feature = [candidates[candidates // 7 == f] % 7 for f in range(3)]
    np.testing.assert_array_equal(by_feature[0], np.arange(7))  # numeric: the whole grid
    np.testing.assert_array_equal(by_feature[1], category_boundaries(binner, 1, 3))
    assert by_feature[1].size == 2
    # one category: no boundary separates two, so the feature keeps the grid's
    np.testing.assert_array_equal(by_feature[2], np.arange(7))


def test_a_wide_hessian_sketch_at_a_tiny_epsilon_fits_or_is_refused_first(seeded_os_words,
                                                                          request):
    # 300 features at a tiny epsilon: the exact samplers' rounding allowance of a sketch row
    # grew with the square root of all its 300 x 255 cells, so the integer noise scale passed
    # the samplers' limit and fit raised in its middle, after records were read. One record
    # moves one cell per feature: the allowance counts 300 coordinates. The default path (the
    # exact samplers) on seeded bytes: a deterministic verdict.
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 300))
    params = dict(delta=1e-5, n_estimators=50, max_depth=2, split_candidates="hessian",
                  feature_bounds=(-1, 1), target_bounds=(-1, 1))
    reg = DPGBRegressor(epsilon=6e-4, **params).fit(X, X[:, 0])
    assert np.isfinite(reg.predict(X[:5])).all()
    # At 3e-4 (delta 1e-5: the accountant's epsilon jumps from 0 past the budget) the trees'
    # 90 % leaves the sketch a noise beyond the samplers: refused before any record is read.
    request.getfixturevalue("records_unread")
    with pytest.raises(ValueError, match="too large for the exact samplers"):
        DPGBRegressor(epsilon=3e-4, **params).fit(X, X[:, 0])
