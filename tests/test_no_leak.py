"""Nothing un-noised leaves fit (docs/privacy.md, rule 4): verbose output, warnings, fitted values."""

import re
import warnings

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor, PrivacyLeakWarning, ReproducibleNoiseWarning
from dpboost._candidates import SKETCH_RESOLUTION, fine_histograms


@pytest.fixture(scope="module")
def neighbours():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(1500, 3))
    y = (X[:, 0] > 0).astype(int)
    return (X, y), (np.vstack([X, [[0.9, -0.9, 0.9]]]), np.append(y, 0))


def test_verbose_output_is_the_same_on_neighbouring_datasets(neighbours, capsys):
    outputs = []
    for X, y in neighbours:
        DPGBClassifier.dpboost_paper(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=6,
                                     trees_per_ensemble=2, max_depth=2, random_state=0,
                                     verbose=1).fit(X, y)
        outputs.append(capsys.readouterr().out)
    # The progress bar: drawn at 0, redrawn once per ensemble, redrawn and ended when closed.
    frames = outputs[0].split("\r")[1:]
    assert [re.search(r"(\d+)/6 trees", f).group(1) for f in frames] == ["0", "2", "4", "6", "6"]
    assert outputs[0].endswith("6/6 trees, epsilon spent 1\n")
    # No elapsed time or rate (they track n): the output is identical, byte for byte, unmasked.
    assert outputs[0] == outputs[1]
    assert not re.search(r"\d s\b|seconds|/s\b|\d:\d", outputs[0])


def test_verbose_progress_counts_trees_of_every_output(capsys):
    # Three classes with softmax: 3 x 4 trees grown round by round; the count only goes up.
    rng = np.random.default_rng(1)
    X, y = rng.uniform(-1, 1, size=(300, 2)), rng.integers(0, 3, 300)
    DPGBClassifier(feature_bounds=(-1, 1), classes=[0, 1, 2], n_estimators=4, max_depth=2,
                   random_state=0, verbose=1).fit(X, y)
    counts = [int(n) for n in re.findall(r"(\d+)/12 trees", capsys.readouterr().out)]
    assert counts == sorted(counts) and counts[0] == 0 and counts[-1] == 12


def test_the_individual_filter_leaves_nothing_of_its_records(neighbours, capsys):
    # The per-record budgets live in the partitions only: the fitted model (its pickle), the
    # report and the verbose lines are the same on neighbours given the same noise, and hold no
    # array of one value per record.
    import pickle

    fitted = []
    for X, y in neighbours:
        model = DPGBClassifier(epsilon=0.5, n_estimators=8, max_depth=2, renyi_filter=0.25,
                               feature_bounds=(-1, 1), classes=[0, 1], random_state=0,
                               verbose=1).fit(X, y)
        fitted.append((model.privacy_report(), capsys.readouterr().out, model))
    (report_d, out_d, model_d), (report_dp, out_dp, _) = fitted
    assert report_d == report_dp and out_d == out_dp
    assert len(out_d.split("\r")) == 1 + 1 + 8 + 1  # the progress bar: 0, each tree, closed
    assert "individual Renyi filter" in report_d
    n = neighbours[0][0].shape[0]
    state = pickle.loads(pickle.dumps(model_d)).__dict__
    arrays = [v for v in state.values() if isinstance(v, np.ndarray)]
    arrays += [v for v in vars(model_d._forest).values() if isinstance(v, np.ndarray)]
    assert not any(n in a.shape or n + 1 in a.shape for a in arrays)
    assert not hasattr(model_d, "filtered_fraction_")  # diagnostics off


def test_warnings_carry_no_numbers(neighbours):
    X, y = neighbours[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPGBClassifier.dpboost_paper(n_estimators=2, max_depth=2, random_state=0,
                                     diagnostics=True).fit(X, y)
        DPGBRegressor.dpboost_paper(n_estimators=2, max_depth=2, random_state=0).fit(X, X[:, 0])
    messages = [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    # classes, bounds, diagnostics, seed; bounds, target bounds, seed
    assert len(messages) == 7
    assert sum(issubclass(w.category, ReproducibleNoiseWarning) for w in caught) == 2
    assert not any(re.search(r"\d", m) for m in messages), messages


@pytest.mark.parametrize("lam", [0.0, 3.0])
def test_sensitivities_use_the_configured_l2_regularization(neighbours, lam):
    X, y = neighbours[0]
    clf = DPGBClassifier.dpboost_paper(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=30,
                                       l2_regularization=lam, random_state=0).fit(X, y)
    leaves = [e for e in clf.privacy_ledger_ if e.mechanism == "laplace"]
    for e in leaves:
        assert e.sensitivity == pytest.approx(min(1 / (1 + lam), 2 * 0.9**e.tree))
    splits = [e for e in clf.privacy_ledger_ if e.mechanism == "exponential"]
    assert {e.sensitivity for e in splits} == {3.0}


def test_released_leaves_are_not_exact_statistics(neighbours):
    # The exact leaf values of the first tree (all data, SEQ) are computable; the released ones
    # must differ from them by noise in every leaf, and be bounded by clip + noise otherwise.
    X, y = neighbours[0]
    clf = DPGBClassifier.dpboost_paper(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=1,
                                       max_depth=1, learning_rate=1.0,
                                       budget_allocation="sequential", leaf_clipping=False,
                                       random_state=0).fit(X, y)
    f, b = clf._forest.split_feature[0, 0], clf._forest.split_bin[0, 0]
    codes = clf._forest.binner.transform(X)[:, f]
    g = -np.where(y == 1, 1.0, -1.0)
    exact = [-g[codes <= b].sum() / ((codes <= b).sum() + 0.1),
             -g[codes > b].sum() / ((codes > b).sum() + 0.1)]
    assert (np.abs(clf._forest.leaf_value[0] - exact) > 1e-9).all()
    np.testing.assert_allclose(clf._forest.leaf_value[0], exact, atol=30 * (1 / 1.1) / 0.5)


def test_splitting_is_not_stopped_by_exact_statistics():
    # All records identical: every node below the root is empty or holds everything. A learner
    # that stops on exact counts or gains would leave nodes unsplit and leaves unreleased; here
    # every tree is complete, every node has a drawn split and every leaf a noised value.
    X, y = np.zeros((400, 3)), np.ones(400, dtype=int)
    clf = DPGBClassifier.dpboost_paper(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=4,
                                       max_depth=3,
                                       budget_allocation="sequential", random_state=0).fit(X, y)
    assert clf._forest.split_feature.shape == (4, 7) and clf._forest.leaf_value.shape == (4, 8)
    assert ((clf._forest.split_feature >= 0) & (clf._forest.split_feature < 3)).all()
    assert len({tuple(r) for r in clf._forest.split_feature}) > 1  # drawn, not a fixed default
    assert (clf._forest.leaf_value != 0).all()
    levels = {(e.tree, e.level) for e in clf.privacy_ledger_ if e.mechanism == "exponential"}
    assert levels == {(t, d) for t in range(4) for d in range(3)}


@pytest.fixture(scope="module")
def categorical_frame():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    n = 1537
    colour = rng.choice(["red", "green", "blue", "black", "purple"], size=n).astype(object)
    colour[rng.random(n) < 0.1] = None  # missing; "purple" is outside the public list
    x = rng.uniform(-1, 1, size=n)
    x[rng.random(n) < 0.15] = np.nan
    y = ((colour == "blue") | (np.nan_to_num(x) > 0.5)).astype(int)
    return pd.DataFrame({"colour": colour, "x": x}), y


def _exact_statistics(model, calls, X, y, sketch_inputs):
    """Every exact statistic a leaky output could show: per node of every tree the count, gradient
    and Hessian sums (missing records apart too), the chosen split's gain, the un-noised leaf value
    (before and after shrinkage); gain and cover importances; per-category and missing counts."""
    lam, stats = model.l2_regularization, []
    learning_rate = model._configs()[0].learning_rate
    gain_imp, cover_imp = np.zeros(2), np.zeros(2)
    for t, (X_binned, rows, g, h) in enumerate(calls):
        h = np.ones_like(g, dtype=np.float64) if h is None else h.astype(np.float64)
        g = g.astype(np.float64)
        codes = X_binned[rows]
        node = np.zeros(rows.size, dtype=np.int64)
        n_internal = model._forest.split_feature.shape[1]
        for k in range(n_internal):
            f, b, m = (model._forest.split_feature[t, k], model._forest.split_bin[t, k],
                       model._forest.missing_left[t, k])
            here = node == k
            missing = here & (codes[:, f] == model._forest.binner.max_bins)
            left = here & ~missing & (codes[:, f] <= b) | (missing if m else np.zeros_like(here))
            right = here & ~left
            node[left], node[right] = 2 * k + 1, 2 * k + 2
            gain = sum(g[s].sum() ** 2 / (s.sum() + lam) for s in (left, right))
            gain_imp[f] += gain
            cover_imp[f] += here.sum()
            stats += [here.sum(), g[here].sum(), h[here].sum(), missing.sum(), g[missing].sum(),
                      gain]
        for leaf in range(n_internal, 2 * n_internal + 1):
            s = node == leaf
            exact = -g[s].sum() / (h[s].sum() + lam)
            stats += [s.sum(), g[s].sum(), h[s].sum(), exact, exact * learning_rate]
    stats += list(gain_imp / gain_imp.sum()) + list(cover_imp / cover_imp.sum())
    colour = X["colour"].to_numpy()
    for c in ["red", "green", "blue", "black", "purple", None]:
        s = colour == c if c is not None else X["colour"].isna().to_numpy()
        stats += [s.sum(), y[s].sum()]
    stats += [X["x"].isna().sum(), y.sum(), len(y) - y.sum()]
    # The split-candidate sketch's input: exact counts of x on the fine grid.
    stats += list(fine_histograms(X[["x"]].to_numpy(), np.array([-1.0]), np.array([1.0]),
                                  SKETCH_RESOLUTION * model.max_bins).ravel())
    # The adaptive Hessian sketch's inputs: exact Hessian sums of x per fine bin, every round.
    stats += [v for values in sketch_inputs for v in values.ravel()]
    stats = np.array(stats, dtype=np.float64)
    # Below 40, counts and simple fractions (the first logistic tree's Hessian sums are counts / 4)
    # are indistinguishable from public numbers (bins, tree indices, the ledger's node counts, grid
    # thresholds in eighths, h* = 0.25), also when within print precision of one (one record's
    # Hessian 0.2499993); every other exact value is checked.
    eighths = np.abs(8 * stats - np.round(8 * stats)) <= 5e-6 * np.abs(8 * stats)
    return stats[(np.abs(stats) >= 40) | ~eighths]


def _numbers(value):
    if isinstance(value, str):
        return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", value)]
    if isinstance(value, dict):
        return [v for item in value.values() for v in _numbers(item)]
    if isinstance(value, list):
        return [v for item in value for v in _numbers(item)]
    if isinstance(value, bool) or value is None:
        return []
    return [float(value)]


@pytest.mark.parametrize("setting", ["paper", "default", "hessian", "sketch", "filter"])
def test_inspection_outputs_show_no_exact_statistic(categorical_frame, setting, grown,
                                                   monkeypatch):
    # Rule 4 for the inspection outputs of a model with a categorical feature (unknown and missing
    # values included) and a numeric one with NaN, with the grid or the private sketch of split
    # candidates: importances, report, tree text and JSON show public inputs and released values
    # only. The exact statistics are recomputed from what each
    # tree received; a printed number equal to one of them (to its printed precision) is a leak.
    import json

    import dpboost._candidates as candidates_module

    X, y = categorical_frame
    # What each tree received: the ``grown`` fixture; the Hessian sketch's input: a spy where
    # _candidates looks the Gaussian mechanism up.
    sketch_inputs, release = [], candidates_module.gaussian_mechanism

    def sketch_spy(values, **kw):
        sketch_inputs.append(values.copy())
        return release(values, **kw)

    monkeypatch.setattr(candidates_module, "gaussian_mechanism", sketch_spy)
    params = {"epsilon": 8.0, "n_estimators": 4, "max_depth": 2, "feature_bounds": (-1, 1),
              "classes": [0, 1], "categorical_features": ["colour"],
              "categories": {"colour": ["red", "green", "blue", "black"]}, "random_state": 0}
    if setting != "paper":
        if setting in ("sketch", "hessian"):
            params["split_candidates"] = setting
        if setting == "filter":  # which records each tree took is exact: never shown
            params["renyi_filter"] = 0.75
        model = DPGBClassifier(**params).fit(X, y)
    else:
        model = DPGBClassifier.dpboost_paper(budget_allocation="sequential", **params).fit(X, y)
    # the Hessian sketch: min(5 rounds, 4 trees)
    assert len(sketch_inputs) == (4 if setting == "hessian" else 0)
    # A private choice of interactions (the default at this n x epsilon) grows the trees of its
    # parts A and B first, which are not in the model: the model's are the last grown.
    calls = [(tree.X_binned, tree.rows, tree.gradients, tree.hessians)
             for tree in grown[-model._forest.split_feature.shape[0]:]]
    exact = _exact_statistics(model, calls, X, y, sketch_inputs)
    assert exact.size > 100
    outputs = {"importances": list(model.feature_importances_),
               "report": model.privacy_report(),
               "text": [model.export_text(t) for t in range(4)],
               "json": json.loads(model.to_json())}
    # Left out: split bins and bin codes, released split choices coded as integers up to 255
    # (the Hessian sketch's fine grid), indistinguishable from counts of that size; the fit's
    # random uuid, whose digit runs would read as numbers (a flaky match).
    for key in ("split_bin", "bin_codes", "fit_id"):
        outputs["json"]["fitted"].pop(key)
    # And the parameters, public by definition: an integer one (trees_per_ensemble=50) equals a
    # count of 50 records whenever a node holds 50 (found with the keyed record coins).
    outputs["json"].pop("params")
    assert "colour in {" in outputs["text"][0] + outputs["text"][1] + outputs["text"][2]
    for name, output in outputs.items():
        shown = np.array(_numbers(output))
        # text is printed to 6 significant digits; importances and JSON keep full precision
        tolerance = 5e-6 if name in ("report", "text") else 1e-12
        close = np.abs(shown[:, None] - exact[None, :]) <= tolerance * np.abs(exact[None, :])
        assert not close.any(), (name, shown[close.any(axis=1)], exact[close.any(axis=0)])


@pytest.mark.parametrize("estimator", ["classifier", "regressor", "paper"])
def test_a_category_below_the_threshold_appears_in_no_output(estimator, capsys,
                                                             seeded_os_words):
    # categories="private": a value held by 3 records stays below the threshold; nothing the
    # fit emits may name it (attributes, pickle, JSON, XGBoost JSON, tree text, report,
    # warnings, verbose lines), nor the values of the column that did clear it in another order.
    # The default path's secure noise reads seeded bytes: with fresh ones the value would clear
    # the threshold now and then (a few times in a million).
    import pickle

    pd = pytest.importorskip("pandas")
    secret = "SECRET-7f3a"
    rng = np.random.default_rng(3)
    n = 4000
    frame = pd.DataFrame({"x": rng.uniform(-1, 1, n),
                          "c": rng.choice(["u", "v", "w"], size=n).astype(object),
                          "d": rng.choice(["p", "q"], size=n).astype(object)})
    frame.loc[[10, 500, 3999], "c"] = secret
    y = (frame["x"] > 0).astype(int)
    common = dict(epsilon=2.0, n_estimators=4, max_depth=2, feature_bounds={"x": (-1, 1)},
                  categorical_features=["c", "d"], categories="private", verbose=1)
    if estimator == "classifier":
        model = DPGBClassifier(classes=[0, 1], **common)
    elif estimator == "regressor":
        model = DPGBRegressor(target_bounds=(0, 1), split_selection="exponential", **common)
    else:
        model = DPGBClassifier.dpboost_paper(delta=1e-6, classes=[0, 1], **common)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(frame, y)
    assert list(model.categories_[1]) == ["u", "v", "w"]
    emitted = [capsys.readouterr().out, model.to_json(), model.privacy_report(),
               repr(model.__dict__), pickle.dumps(model).decode("latin-1")]
    emitted += [model.export_text(t) for t in range(model._forest.split_feature.shape[0])]
    emitted += [str(w.message) for w in caught]
    if estimator != "regressor":
        emitted.append(model.to_xgboost_json())
    assert not any(secret in text for text in emitted)
    assert not any("SECRET" in text for text in emitted)


def test_the_domain_report_releases_noisy_counts_only(neighbours):
    # Given the same noise, neighbours give the same report, warnings and ledger (the replay
    # harness checks this transcript by transcript); here: no exact count appears, every count
    # of the report is off its exact value, and the warning quotes rounded shares only.
    X, y = neighbours[0]
    X = X.copy()
    X[:1000, 0] = 5.0  # above the bounds
    with pytest.warns(UserWarning, match=r"about \d+% of the records") as caught:
        model = DPGBClassifier(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=3,
                               max_depth=2, domain_report=True, random_state=0).fit(X, y)
    report = model.domain_report_
    exact = {"records": 1500.0, "above": 1000.0}
    assert report["records"]["records"] != exact["records"]
    assert report["0"]["above bounds"] != exact["above"]
    assert all(float(v).is_integer() is False for kinds in report.values()
               for v in kinds.values())
    for w in caught:
        assert "1500" not in str(w.message) and "1000" not in str(w.message)
