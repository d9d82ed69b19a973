"""SHAP explanations of a fitted model: ``shap.TreeExplainer`` reads the XGBoost export
(``to_xgboost_json``). Interventional SHAP values (a background set) and path-dependent ones
add up to the model's margin; the path-dependent algorithm weighs the branches by the export's
covers, which are released weights (noisy Hessian sums or counts), never exact counts."""

import json

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor
from dpboost._export import COVER_FLOOR

shap = pytest.importorskip("shap", reason="shap is not installed (pip install -e '.[test]' "
                                          "installs it)")
xgb = pytest.importorskip("xgboost", reason="xgboost is not installed (pip install -e "
                                            "'.[test]' installs it)")

#: (name, estimator, label); small fits: SHAP's cost grows with trees x leaves x background.
CASES = [
    ("binary", lambda: DPGBClassifier(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=12,
                                      max_depth=3, random_state=0), "binary"),
    ("binary-interactions", lambda: DPGBClassifier(
        feature_bounds=(-1, 1), classes=[0, 1], n_estimators=8, max_depth=3,
        interaction_cst=None, split_selection="exponential", random_state=0), "binary"),
    ("dpboost-paper", lambda: DPGBClassifier.dpboost_paper(
        feature_bounds=(-1, 1), classes=[0, 1], n_estimators=8, max_depth=3, random_state=0),
     "binary"),
    ("multiclass", lambda: DPGBClassifier(feature_bounds=(-1, 1), classes=[0, 1, 2],
                                          n_estimators=6, max_depth=3, random_state=0), "multi"),
    ("regression", lambda: DPGBRegressor(feature_bounds=(-1, 1), target_bounds=(-2, 3),
                                         n_estimators=10, max_depth=3, random_state=0),
     "target"),
]


@pytest.fixture(scope="module")
def data():
    """Float32-representable training records with 10 % NaN cells, and their labels."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(1000, 4)).astype(np.float32).astype(np.float64)
    x0, x1 = X[:, 0].copy(), X[:, 1].copy()
    X[rng.random(X.shape) < 0.1] = np.nan
    labels = {"binary": (x0 + 0.5 * x1 > 0).astype(int), "multi": np.digitize(x0, [-0.3, 0.3]),
              "target": 2 * x0 - x1}
    return X, labels


@pytest.fixture(scope="module")
def public():
    """Records to explain and a background set that are not training records (a background
    drawn from the training data would make the explanation a statistic of it)."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1.2, 1.2, size=(140, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    return X[:40], X[40:]


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def fitted(request, data):
    X, labels = data
    _, make, label = request.param
    return make().fit(X, labels[label])


def booster(estimator):
    model = xgb.Booster()
    model.load_model(bytearray(estimator.to_xgboost_json(), "utf-8"))
    return model


def margin(estimator, X):
    """dpboost's margin in the units of the export: the decision function; the square-loss
    classifier's P(classes_[1]) before clipping; the regressor's target before clipping."""
    if isinstance(estimator, DPGBRegressor):
        lower, upper = estimator.target_bounds_
        return lower + (estimator._raw_predict(X)[:, 0] + 1) * (upper - lower) / 2
    if estimator.loss == "square":
        return (estimator.decision_function(X) + 1) / 2
    return estimator.decision_function(X)


def additivity_error(explainer, estimator, X):
    values = np.asarray(explainer.shap_values(X))
    # shap's layout: (n_samples, n_features) or (n_samples, n_features, n_outputs)
    total = values.sum(axis=1) + np.asarray(explainer.expected_value)
    return np.abs(total - margin(estimator, X)).max()


def test_interventional_shap_values_add_up_to_the_margin(fitted, public):
    X, background = public
    explainer = shap.TreeExplainer(booster(fitted), data=background,
                                   feature_perturbation="interventional", model_output="raw")
    assert additivity_error(explainer, fitted, X) < 1e-6
    # The expected value is the model's mean margin over the background, nothing else.
    np.testing.assert_allclose(explainer.expected_value,
                               margin(fitted, background).mean(axis=0), atol=1e-6)


def test_path_dependent_shap_values_add_up_to_the_margin(fitted, public):
    X, _ = public
    explainer = shap.TreeExplainer(booster(fitted), feature_perturbation="tree_path_dependent")
    assert additivity_error(explainer, fitted, X) < 1e-6


def released_covers(forest, tree):
    """Each node's weight as the released leaf statistics give it (a naive sum over the
    leaves below the node; for Laplace leaves, which release none, the number of leaves)."""
    n_internal = forest.split_feature.shape[1]
    weights = forest.leaf_statistics[tree, :, 1]
    leaf = (np.maximum(weights, COVER_FLOOR) if np.isfinite(weights).all()
            else np.ones(n_internal + 1))
    cover = np.zeros(2 * n_internal + 1)
    for j, w in enumerate(leaf):
        node = n_internal + j
        while True:
            cover[node] += w
            if node == 0:
                break
            node = (node - 1) // 2
    return cover


def exact_counts(forest, X, tree):
    """How many training records reach each node of ``tree`` (what a non-private cover is)."""
    codes = forest.binner.transform(X, order="C")
    n_internal = forest.split_feature.shape[1]
    counts = np.zeros(2 * n_internal + 1)
    k = np.zeros(X.shape[0], dtype=np.int64)
    rows = np.arange(X.shape[0])
    np.add.at(counts, k, 1)
    while k[0] < n_internal:
        code = codes[rows, forest.split_feature[tree, k]]
        right = np.where(code == forest.binner.max_bins, ~forest.missing_left[tree, k],
                         code > forest.split_bin[tree, k])
        k = 2 * k + 1 + right
        np.add.at(counts, k, 1)
    return counts


def test_path_dependent_covers_are_released_weights_not_counts(fitted, data, public):
    X_train, _ = data
    explainer = shap.TreeExplainer(booster(fitted), feature_perturbation="tree_path_dependent")
    forest = fitted._forest
    order = [k * forest.n_stages + t for t in range(forest.n_stages)
             for k in range(forest.n_outputs)]  # XGBoost's tree order
    assert len(explainer.model.trees) == len(order)
    for parsed, tree in zip(explainer.model.trees, order):
        np.testing.assert_allclose(parsed.node_sample_weight, released_covers(forest, tree),
                                   rtol=1e-6)
        assert not np.allclose(parsed.node_sample_weight, exact_counts(forest, X_train, tree))
    # The explanation is a function of the released model: rebuilt from its JSON, without the
    # training data, it explains alike.
    rebuilt = type(fitted).from_json(fitted.to_json())
    again = shap.TreeExplainer(booster(rebuilt), feature_perturbation="tree_path_dependent")
    X, _ = public
    np.testing.assert_array_equal(np.asarray(again.shap_values(X)),
                                  np.asarray(explainer.shap_values(X)))


def test_path_dependent_values_depend_on_the_covers(data, public):
    # Negative control of the test above: with exact counts as covers (what XGBoost itself
    # writes), the SHAP values differ, so covers equal to the released weights are checked, not
    # an accident of the data.
    X_train, labels = data
    clf = DPGBClassifier(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=8, max_depth=3,
                         interaction_cst=None, random_state=0).fit(X_train, labels["binary"])
    model = json.loads(clf.to_xgboost_json())
    for tree, exported in enumerate(model["learner"]["gradient_booster"]["model"]["trees"]):
        # floored as the released weights are: TreeSHAP divides by the covers of empty nodes
        counts = exact_counts(clf._forest, X_train, tree)
        exported["sum_hessian"] = np.maximum(counts, COVER_FLOOR).tolist()
    planted = xgb.Booster()
    planted.load_model(bytearray(json.dumps(model), "utf-8"))
    X, _ = public
    values = [shap.TreeExplainer(b, feature_perturbation="tree_path_dependent").shap_values(X)
              for b in (booster(clf), planted)]
    assert np.abs(values[0] - values[1]).max() > 1e-3


def test_shap_in_one_call_on_categorical_frames():
    """``to_xgboost`` and ``encode``: a model with string categories explained by
    ``shap.TreeExplainer`` with no code table written by hand; unknown values are NaN codes."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.uniform(-1, 1, 800),
                      "colour": rng.choice(["red", "green", "blue"], 800)})
    y = ((X["x"] > 0) ^ (X["colour"] == "red")).astype(int)
    clf = DPGBClassifier(feature_bounds={"x": (-1, 1)},
                         categories={"colour": ["blue", "green", "red"]}, classes=[0, 1],
                         n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    new = pd.DataFrame({"x": [0.5, -0.5, 0.1, np.nan], "colour": ["red", "blue", "purple", "green"]})
    encoded = clf.encode(new)
    assert list(encoded.columns) == ["x", "colour"] and (encoded.dtypes == np.float32).all()
    np.testing.assert_array_equal(encoded["colour"], [2, 0, np.nan, 1])
    booster = clf.to_xgboost()
    np.testing.assert_allclose(booster.predict(xgb.DMatrix(encoded)), clf.predict_proba(new)[:, 1],
                               rtol=1e-5)
    explainer = shap.TreeExplainer(booster)
    values = explainer.shap_values(encoded)
    np.testing.assert_allclose(values.sum(axis=1) + explainer.expected_value,
                               clf.decision_function(new), atol=1e-5)
