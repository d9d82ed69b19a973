"""Inspection and persistence from released values: importances, report, text, JSON."""

import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpboost
from dpboost import DPGBClassifier, DPGBRegressor, PrivacyLeakWarning


def test_split_importances_are_released_split_counts(binary, make_clf):
    X, y = binary
    clf = make_clf(epsilon=8.0, n_estimators=6).fit(X, y)
    imp = clf.feature_importance("split")
    assert imp.shape == (5,) and imp.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(imp * clf._forest.split_feature.size,
                               np.bincount(clf._forest.split_feature.ravel(), minlength=5))
    assert imp.argmax() == 0  # the most informative feature, at a generous epsilon


def test_released_gain_and_cover_are_the_definition_on_released_leaf_statistics():
    from dpboost._inspection import released_split_values
    from dpboost._predictor import Forest

    rng = np.random.default_rng(0)
    n_trees, depth, lam = 3, 3, 0.7
    n_internal = 2**depth - 1
    statistics = rng.normal(size=(n_trees, n_internal + 1, 2)) * [1.0, 3.0]
    forest = Forest(rng.integers(0, 4, size=(n_trees, n_internal)).astype(np.int32),
                    np.zeros((n_trees, n_internal), np.uint8),
                    np.zeros((n_trees, n_internal), bool), np.zeros((n_trees, n_internal + 1)),
                    None, n_trees, statistics)
    gain, cover = released_split_values(forest, lam, lam)

    def below(k):  # the leaves under node k of a complete tree in heap order
        if k >= n_internal:
            return [k - n_internal]
        return below(2 * k + 1) + below(2 * k + 2)

    def score(t, k):
        g, h = statistics[t, below(k)].sum(axis=0)
        return g * g / max(h + lam, lam)

    for t in range(n_trees):
        for k in range(n_internal):
            expected = score(t, 2 * k + 1) + score(t, 2 * k + 2) - score(t, k)
            assert gain[t, k] == pytest.approx(expected, rel=1e-12, abs=1e-12)
            assert cover[t, k] == pytest.approx(statistics[t, below(k), 1].sum(), rel=1e-12)


def test_gain_importances_find_the_informative_feature_where_split_counts_cannot():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(20_000, 6))
    y = (X[:, 2] + 0.2 * rng.normal(size=20_000) > 0).astype(int)
    # the private default's additive random-split trees (at epsilon=inf the default's trees are
    # unrestricted, their splits chosen by gain: below)
    params = {"classes": [0, 1], "feature_bounds": (-1, 1), "random_state": 0,
              "interaction_cst": "no_interactions"}
    for epsilon, share in [(np.inf, 0.8), (4.0, 0.3)]:
        clf = DPGBClassifier(epsilon=epsilon, **params).fit(X, y)
        gain = clf.feature_importance("gain")
        assert gain.sum() == pytest.approx(1.0) and (gain >= 0).all()
        assert gain.argmax() == 2 and gain[2] > share, gain
        contribution = clf.feature_importances_
        assert contribution.argmax() == 2 and contribution[2] > 0.8, contribution
        # random splits, tree t on feature t mod 6: split counts uniform whatever the data
        np.testing.assert_allclose(clf.feature_importance("split"), 1 / 6, atol=1 / 200)
        cover = clf.feature_importance("cover")
        assert cover.sum() == pytest.approx(1.0) and cover.max() < 0.2
    # JSON keeps the released statistics: the same importances after loading
    loaded = DPGBClassifier.from_json(clf.to_json())
    np.testing.assert_array_equal(loaded.feature_importance("gain"), gain)
    greedy = DPGBClassifier(epsilon=np.inf, **{**params, "interaction_cst": "auto"}).fit(X, y)
    assert greedy.feature_importance("gain").argmax() == 2


def test_laplace_leaves_release_no_statistics_so_codes_weigh_the_same(binary, make_clf):
    X, y = binary
    clf = make_clf(n_estimators=6).fit(X, y)  # DPBoost's setting: Laplace leaves
    assert np.isnan(clf._forest.leaf_statistics).all()
    imp = clf.feature_importances_
    assert imp.sum() == pytest.approx(1.0) and np.isfinite(imp).all()
    with pytest.raises(ValueError, match="importance_type='gain' needs the leaves' released"):
        clf.feature_importance("gain")
    with pytest.raises(ValueError, match="importance_type='weight'; expected"):
        clf.feature_importance("weight")
    assert "leaf_statistics" not in json.loads(clf.to_json())["fitted"]


def test_privacy_report(binary, make_clf):
    X, y = binary
    report = make_clf(n_estimators=6).fit(X, y).privacy_report()
    assert "composed epsilon (pure DP, add/remove one record): 1" in report
    assert "exponential" in report and "laplace" in report
    assert "GDF" not in report
    with pytest.warns(PrivacyLeakWarning, match="diagnostics=True stores filtered_fraction_"):
        diag = make_clf(n_estimators=6, diagnostics=True).fit(X, y).privacy_report()
    assert "NOT differentially private" in diag


def test_export_text_shows_every_split_and_leaf(binary, make_clf):
    X, y = binary
    clf = make_clf(n_estimators=6).fit(X, y)
    text = clf.export_text(2)
    assert text.count("value:") == 8 and text.count(" < ") == 7 and text.count(" >= ") == 7
    leaves = [float(line.split("value:")[1]) for line in text.splitlines() if "value:" in line]
    np.testing.assert_allclose(leaves, clf._forest.leaf_value[2], rtol=1e-5)


@pytest.mark.parametrize("kind", ["classifier", "regressor", "dp-xgb classifier"])
def test_json_round_trip_identical_predictions(binary, kind, make_clf):
    pd = pytest.importorskip("pandas")
    X, y = binary
    frame = pd.DataFrame(X, columns=list("abcde"))
    if kind != "regressor":
        extra = ({"loss": "logistic", "delta": 1e-5, "leaf_noise": "gaussian"}
                 if kind.startswith("dp-xgb") else {})
        est = make_clf(n_estimators=6, classes=["no", "yes"], **extra).fit(
            frame, np.where(y == 1, "yes", "no"))
        np.testing.assert_array_equal(
            DPGBClassifier.from_json(est.to_json()).predict_proba(frame), est.predict_proba(frame))
        cls = DPGBClassifier
    else:
        est = DPGBRegressor.dpboost_paper(feature_bounds=(-1, 1), target_bounds=(0, 10),
                                          n_estimators=6,
                                          max_depth=3, random_state=0).fit(frame, 5 + 5 * X[:, 0])
        cls = DPGBRegressor
    loaded = cls.from_json(est.to_json())
    np.testing.assert_array_equal(loaded.predict(frame), est.predict(frame))
    assert list(loaded.feature_names_in_) == list("abcde")
    assert loaded.privacy_ledger_ == est.privacy_ledger_
    assert loaded.privacy_spent_ == est.privacy_spent_


def test_json_holds_only_public_and_released_values(binary, make_clf):
    X, y = binary
    with pytest.warns(PrivacyLeakWarning, match="diagnostics=True stores filtered_fraction_"):
        clf = make_clf(n_estimators=6, diagnostics=True).fit(X, y)
    doc = json.loads(clf.to_json())
    # fit_id: the ledger's random identifier of the fit (independent of the data)
    assert set(doc["fitted"]) == {"n_features_in_", "feature_bounds_", "categories_",
                                  "privacy_spent_", "privacy_ledger_", "split_feature", "split_bin",
                                  "missing_left", "leaf_value", "bin_codes", "classes_", "fit_id"}
    assert re.fullmatch(r"[0-9a-f]{32}", doc["fitted"]["fit_id"])
    assert doc["dpboost_version"] == dpboost.__version__
    assert "filtered_fraction" not in clf.to_json()


def test_json_rejects_foreign_documents(binary, make_clf):
    X, y = binary
    text = make_clf(n_estimators=6).fit(X, y).to_json()
    with pytest.raises(ValueError, match="not a DPGBRegressor"):
        DPGBRegressor.from_json(text)
    with pytest.raises(ValueError, match="format version"):
        DPGBClassifier.from_json(json.dumps({"format": "dpboost", "version": 99}))


def test_export_text_names_categories_and_the_missing_side(make_clf):
    # One categorical split: the text lists each side's categories by name (not bin numbers) and
    # says which side takes missing and unknown values; predictions follow the text.
    pd = pytest.importorskip("pandas")
    colours = ["red", "green", "blue", "black"]
    rng = np.random.default_rng(0)
    colour = rng.choice(colours, size=1000).astype(object)
    colour[::10] = None
    X = pd.DataFrame({"colour": colour})
    clf = make_clf(epsilon=np.inf, n_estimators=1, max_depth=1, categorical_features=["colour"],
                   categories={"colour": colours}).fit(X, np.isin(colour, ["blue", "black"]))
    first, left_leaf, second, right_leaf = clf.export_text(0).splitlines()
    assert first.startswith("colour in {red, green}")
    assert second.startswith("colour in {blue, black}")
    assert (first + second).count(" or missing/unknown") == 1
    leaf = {True: float(left_leaf.split("value:")[1]), False: float(right_leaf.split("value:")[1])}
    for value in colours + [None, "purple"]:
        goes_left = (value in ("red", "green") if value in colours
                     else first.endswith(" or missing/unknown"))
        margin = clf.decision_function(pd.DataFrame({"colour": [value]}))[0]
        assert margin == pytest.approx(leaf[goes_left], rel=1e-5)


def test_export_text_abbreviates_long_category_lists(make_clf):
    pd = pytest.importorskip("pandas")
    codes = [f"c{i:02d}" for i in range(40)]
    rng = np.random.default_rng(0)
    column = rng.choice(codes, size=2000)
    X = pd.DataFrame({"code": column})
    clf = make_clf(epsilon=np.inf, n_estimators=1, max_depth=1, categorical_features=["code"],
                   categories={"code": codes}).fit(X, column < "c25")
    first, _, second, _ = clf.export_text(0).splitlines()
    assert first.startswith("code in {c00, c01, c02, ..., ")
    assert "of 40 categories)" in first and "of 40 categories)" in second
    n_left = int(first.split("} (")[1].split(" of")[0])
    n_right = int(second.split("} (")[1].split(" of")[0])
    assert n_left + n_right == 40


# --- contribution importances: what feature_importances_ measures ------------------------------

def _random_forest(rng, n_trees, depth, n_features, single, statistics=True):
    from dpboost._binning import BoundsBinner
    from dpboost._predictor import Forest

    n_internal = 2**depth - 1
    features = rng.integers(0, n_features, size=(n_trees, 1 if single else n_internal))
    return Forest(np.broadcast_to(features, (n_trees, n_internal)).astype(np.int32),
                  rng.integers(0, 8, size=(n_trees, n_internal)).astype(np.uint8),
                  rng.random((n_trees, n_internal)) < 0.5, rng.normal(size=(n_trees, n_internal + 1)),
                  BoundsBinner(np.tile([-1.0, 1.0], (n_features, 1)), 8), n_trees,
                  rng.uniform(-1, 5, size=(n_trees, n_internal + 1, 2)) if statistics else None)


def test_contribution_is_the_weighted_spread_of_each_features_shape_function():
    """Single-feature trees: a feature's share is the cover-weighted variance of the sum of its
    trees over the grid's codes, computed here by walking each tree by hand."""
    from dpboost._inspection import contribution_importances

    rng = np.random.default_rng(1)
    forest = _random_forest(rng, 12, 3, 3, single=True)
    n_internal, codes = 7, np.arange(9)

    def leaf(t, code):
        k = 0
        while k < n_internal:
            left = (forest.missing_left[t, k] if code == 8 else code <= forest.split_bin[t, k])
            k = 2 * k + 1 + (not left)
        return k - n_internal

    spread = np.zeros(3)
    for f in range(3):
        trees = [t for t in range(12) if forest.split_feature[t, 0] == f]
        shape = np.array([sum(forest.leaf_value[t, leaf(t, c)] for t in trees) for c in codes])
        weight = np.zeros(9)
        for t in trees:
            leaves = np.array([leaf(t, c) for c in codes])
            share = np.array([max(forest.leaf_statistics[t, k, 1], 0) / np.sum(leaves == k)
                              for k in leaves])
            weight += share / share.sum()
        if trees:
            mean = np.average(shape, weights=weight)
            spread[f] = np.average((shape - mean) ** 2, weights=weight)
    np.testing.assert_allclose(contribution_importances(forest, 3), spread / spread.sum(),
                               rtol=1e-10)


@given(seed=st.integers(0, 2**32 - 1), single=st.booleans(), statistics=st.booleans(),
       scale=st.floats(0.01, 100))
@settings(max_examples=60, deadline=None)
def test_contribution_importances_properties(seed, single, statistics, scale):
    """A distribution over features; unchanged when the trees are reordered within an output
    or every leaf value is scaled; a feature on which no tree splits, or whose trees' leaves
    are all equal, gets 0."""
    from dataclasses import replace

    from dpboost._inspection import contribution_importances

    rng = np.random.default_rng(seed)
    forest = _random_forest(rng, 10, 3, 4, single, statistics)
    imp = contribution_importances(forest, 5)  # feature 4: no tree splits on it
    assert (imp >= 0).all() and imp[4] == 0 and imp.sum() == pytest.approx(1.0)
    order = rng.permutation(10)
    shuffled = replace(forest, split_feature=forest.split_feature[order],
                       split_bin=forest.split_bin[order], missing_left=forest.missing_left[order],
                       leaf_value=forest.leaf_value[order],
                       leaf_statistics=forest.leaf_statistics[order])
    np.testing.assert_allclose(contribution_importances(shuffled, 5), imp, atol=1e-12)
    scaled = replace(forest, leaf_value=forest.leaf_value * scale)
    np.testing.assert_allclose(contribution_importances(scaled, 5), imp, rtol=1e-9, atol=1e-12)
    flat = forest.leaf_value.copy()
    flat[forest.split_feature[:, 0] == 0] = 0.3  # feature 0's single-feature trees are flat
    if single:
        assert contribution_importances(replace(forest, leaf_value=flat), 5)[0] < 1e-12


def test_contribution_importances_are_post_processing(binary, make_clf):
    """They are a function of the released model alone: a model rebuilt from its JSON (only
    public and released values, no record) gives the same, and so does the function of the
    forest; the fitted estimator keeps no per-record array it could read."""
    from dpboost._inspection import contribution_importances

    X, y = binary
    clf = make_clf(leaf_noise="gaussian", delta=1e-5, n_estimators=8).fit(X, y)
    imp = clf.feature_importances_
    np.testing.assert_array_equal(DPGBClassifier.from_json(clf.to_json()).feature_importances_, imp)
    np.testing.assert_array_equal(contribution_importances(clf._forest, 5), imp)
    assert not any(isinstance(v, np.ndarray) and v.shape[0] == len(y)
                   for v in vars(clf).values())
