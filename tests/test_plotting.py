"""dpboost.plotting: what the figures show, from released values only."""

import math
import sys

import numpy as np
import pytest

from dpboost import DPGBClassifier
from dpboost.plotting import plot_feature_importances, plot_privacy_utility

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")

# As bench_error_vs_epsilon.py writes them: one row per (method, epsilon, fold); NP at inf.
ROWS = ([{"method": m, "epsilon": e, "fold": f, "error": base / e + 0.01 * f}
         for m, base in (("DPBoost", 0.3), ("SEQ", 0.5)) for e in (1.0, 4.0, 10.0)
         for f in (0, 1)]
        + [{"method": "NP", "epsilon": math.inf, "fold": f, "error": 0.14 + 0.01 * f}
           for f in (0, 1)])


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _curves(ax):
    """label -> (x, y) of each errorbar curve."""
    return {c.get_label(): (np.asarray(c.lines[0].get_xdata(), dtype=float),
                            np.asarray(c.lines[0].get_ydata(), dtype=float))
            for c in ax.containers}


def _reference_lines(ax):
    return [line for line in ax.get_lines() if line.get_linestyle() == "--"]


def test_privacy_utility_curve_lines_means_and_no_noise_line():
    ax = plot_privacy_utility(ROWS, y="error", hue="method")
    assert ax.get_xscale() == "log"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("epsilon", "error")
    assert sorted(ax.get_legend_handles_labels()[1]) == ["DPBoost", "NP (no noise)", "SEQ"]
    curves = _curves(ax)
    assert list(curves) == ["DPBoost", "SEQ"]  # order of first appearance
    np.testing.assert_allclose(curves["DPBoost"][0], [1.0, 4.0, 10.0])
    np.testing.assert_allclose(curves["DPBoost"][1], [0.305, 0.08, 0.035])  # fold means
    # error bars: the std over the two folds
    (segments,) = ax.containers[0].lines[2]
    np.testing.assert_allclose([s[1, 1] - s[0, 1] for s in segments.get_segments()], 0.01)
    (reference,) = _reference_lines(ax)
    assert reference.get_label() == "NP (no noise)"
    np.testing.assert_allclose(reference.get_ydata(), [0.145, 0.145])
    np.testing.assert_allclose(reference.get_xdata(), [0, 1])  # spans the axes: no data point
    assert reference.get_color() == "k"


def test_privacy_utility_accepts_a_dataframe_and_draws_on_a_given_axes():
    pd = pytest.importorskip("pandas")
    _, (left, right) = plt.subplots(1, 2)
    ax = plot_privacy_utility(pd.DataFrame(ROWS), hue="method", ax=right)
    assert ax is right and not left.get_lines()
    assert list(_curves(right)) == ["DPBoost", "SEQ"] and len(_reference_lines(right)) == 1


def test_privacy_utility_single_line_without_hue_and_linear_axis():
    rows = [{"trees": t, "error": 1 / t} for t in (150, 50, 100)]
    ax = plot_privacy_utility(rows, x="trees", hue=None, xscale="linear")
    assert ax.get_xscale() == "linear" and ax.get_xlabel() == "trees"
    assert list(_curves(ax)) == ["error"]
    np.testing.assert_allclose(_curves(ax)["error"][0], [50, 100, 150])  # sorted by x
    assert ax.containers[0].has_yerr is False  # one row per point: no error bars
    assert not _reference_lines(ax)


def test_privacy_utility_reference_line_shares_its_curve_colour():
    rows = [{"epsilon": e, "error": 1 / e} for e in (1.0, 2.0, math.inf)]
    ax = plot_privacy_utility(rows, hue=None)
    (reference,) = _reference_lines(ax)
    assert reference.get_color() == ax.containers[0].lines[0].get_color()
    assert reference.get_label() == "error (no noise)"


def test_privacy_utility_skips_rows_without_the_metric():
    rows = ROWS + [{"method": "DPBoost", "epsilon": 1.0, "rmse": 3.0, "error": None}]
    np.testing.assert_allclose(_curves(plot_privacy_utility(rows))["DPBoost"][1][0], 0.305)


@pytest.mark.parametrize("results, kwargs, error, match", [
    ([], {}, ValueError, "results is empty"),
    ({"epsilon": [1.0]}, {}, TypeError, "list of dicts or a pandas DataFrame, not dict"),
    ([1, 2], {}, TypeError, "holds a int"),
    (ROWS, {"y": "auc"}, ValueError, "y='auc' is not a column"),
    (ROWS, {"hue": "seed"}, ValueError, "hue='seed' is not a column"),
    (ROWS, {"xscale": "symlog"}, ValueError, "xscale='symlog' must be"),
    ([{"epsilon": 0.0, "error": 0.5, "method": "a"}], {}, ValueError, "must be > 0 on a log"),
])
def test_privacy_utility_bad_input(results, kwargs, error, match):
    with pytest.raises(error, match=match):
        plot_privacy_utility(results, **kwargs)


@pytest.fixture(scope="module")
def fitted():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(1500, 5)), columns=list("abcde"))
    y = (X["d"] + 0.3 * X["b"] > 0).astype(int)
    return DPGBClassifier.dpboost_paper(epsilon=8.0, n_estimators=10, max_depth=3,
                                        feature_bounds=(-1, 1),
                                        classes=[0, 1], random_state=0).fit(X, y)


def test_feature_importances_bars_sorted_largest_on_top(fitted):
    ax = plot_feature_importances(fitted, max_features=3)
    bars = ax.patches
    assert len(bars) == 3
    widths = [b.get_width() for b in bars]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    imp = fitted.feature_importances_
    order = np.argsort(-imp, kind="stable")[:3]
    # bottom-up in the axes: the largest importance is the last (top) bar
    assert labels == [fitted.feature_names_in_[j] for j in order[::-1]]
    np.testing.assert_allclose(widths, imp[order[::-1]])
    assert labels[-1] == "d"
    assert len(plot_feature_importances(fitted, max_features=50).patches) == 5


def test_feature_importances_without_names():
    X = np.random.default_rng(1).uniform(-1, 1, size=(200, 2))
    clf = DPGBClassifier.dpboost_paper(epsilon=8.0, n_estimators=3, max_depth=2,
                                       feature_bounds=(-1, 1), classes=[0, 1],
                                       random_state=0).fit(X, (X[:, 0] > 0).astype(int))
    labels = [t.get_text() for t in plot_feature_importances(clf).get_yticklabels()]
    assert sorted(labels) == ["x0", "x1"]


@pytest.mark.parametrize("max_features", [0, 2.5, True, "3"])
def test_feature_importances_bad_max_features(fitted, max_features):
    with pytest.raises(ValueError, match=f"max_features={max_features!r} must be an integer"):
        plot_feature_importances(fitted, max_features=max_features)


def test_feature_importances_needs_a_fitted_model():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="This DPGBClassifier instance is not fitted yet"):
        plot_feature_importances(DPGBClassifier.dpboost_paper())


def test_missing_matplotlib_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install dpboost\[plot\]"):
        plot_privacy_utility(ROWS)
