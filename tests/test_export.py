"""XGBoost's JSON model format (``to_xgboost_json``): ``xgboost.Booster`` serves the exported
model with dpboost's predictions, routes every record as dpboost does (values at thresholds and
NaN included), and the export holds only released values and public inputs."""

import json

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor, PrivacyLeakWarning
from dpboost._binning import BoundsBinner
from dpboost._export import xgboost_thresholds

N_FEATURES = 4

#: The stand-in of +inf: the largest float32 (dpboost bins both into the last bin).
BIG = np.finfo(np.float32).max


@pytest.fixture(scope="module")
def xgb():
    return pytest.importorskip(
        "xgboost", reason="xgboost is not installed (pip install -e '.[test]' installs it)")


@pytest.fixture(scope="module")
def data():
    """Float32-representable records with 10 % NaN cells, a three-class label and a target."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(1500, N_FEATURES)).astype(np.float32).astype(np.float64)
    x0, x1 = X[:, 0].copy(), X[:, 1].copy()
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, (x0 + 0.5 * x1 > 0).astype(int), np.digitize(x0, [-0.3, 0.3]), 2 * x0 - x1


#: (name, estimator, label: "binary" / "multi" / "target"); the grids cover the three binners:
#: the fine equal-width grid of the Hessian sketch (default), the max_bins grid, thresholds.
CASES = [
    ("binary", lambda: DPGBClassifier(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=15,
                                      max_depth=3, random_state=0), "binary"),
    ("binary-logistic-sketch", lambda: DPGBClassifier(
        loss="logistic", feature_bounds=(-1, 1), classes=[0, 1], n_estimators=10, max_depth=3,
        split_candidates="sketch", random_state=0), "binary"),
    ("binary-square", lambda: DPGBClassifier.dpboost_paper(
        feature_bounds=(-1, 1), classes=[0, 1], n_estimators=15, max_depth=3, random_state=0),
     "binary"),
    ("multiclass", lambda: DPGBClassifier(feature_bounds=(-1, 1), classes=[0, 1, 2],
                                          n_estimators=10, max_depth=3, random_state=0), "multi"),
    ("regression", lambda: DPGBRegressor(feature_bounds=(-1, 1), target_bounds=(-2, 3),
                                         n_estimators=15, max_depth=3, random_state=0), "target"),
    ("regression-uniform", lambda: DPGBRegressor(
        feature_bounds=(-1, 1), target_bounds=(-3, 3), n_estimators=10, max_depth=4,
        split_candidates="uniform", max_bins=16, random_state=0), "target"),
]


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def fitted(request, data):
    X, y_binary, y_multi, target = data
    name, make, label = request.param
    y = {"binary": y_binary, "multi": y_multi, "target": target}[label]
    return make().fit(X, y)


def load(xgb, estimator):
    booster = xgb.Booster()
    booster.load_model(bytearray(estimator.to_xgboost_json(), "utf-8"))
    return booster


def probe(estimator, rng, n=3000):
    """Float32 records with values exactly at every exported split condition, one float32
    step either side, the float32 rounding of the real thresholds, the bounds, values outside
    them (+-float32 max), and NaN, mixed at random across features."""
    binner = estimator._forest.binner
    exported = xgboost_thresholds(binner)
    lower, upper = binner.lower.astype(np.float32), binner.upper.astype(np.float32)
    columns = []
    for f in range(N_FEATURES):
        t = exported[f]
        special = np.concatenate([
            t, np.nextafter(t, np.float32(-np.inf)), np.nextafter(t, np.float32(np.inf)),
            binner.thresholds()[f].astype(np.float32),
            # +-inf as the documented stand-ins (XGBoost refuses infinities)
            [lower[f], upper[f], -5.0, 5.0, 0.0, -BIG, BIG]])
        uniform = rng.uniform(-1.2, 1.2, n).astype(np.float32)
        column = np.where(rng.random(n) < 0.5, rng.choice(special, n), uniform)
        columns.append(np.where(rng.random(n) < 0.1, np.nan, column))
    return np.column_stack(columns).astype(np.float32).astype(np.float64)


def served(xgb, estimator, X, **kwargs):
    return load(xgb, estimator).predict(xgb.DMatrix(X.astype(np.float32)), **kwargs)


def expected(estimator, X, iteration_range=None):
    """What XGBoost serves: probabilities, the unclipped (F + 1) / 2 of a square-loss
    classifier, targets before clipping to ``target_bounds_``."""
    if isinstance(estimator, DPGBRegressor):
        lower, upper = estimator.target_bounds_
        margin = estimator._raw_predict(X, iteration_range)[:, 0]
        return lower + (margin + 1) * (upper - lower) / 2
    if estimator.loss == "square":
        return (estimator.decision_function(X, iteration_range) + 1) / 2
    proba = estimator.predict_proba(X, iteration_range)
    return proba[:, 1] if proba.shape[1] == 2 else proba


def xgboost_leaves(estimator, X):
    """dpboost's route of every record, naively (bin codes and the node arrays), as XGBoost's
    node ids in XGBoost's tree order: shape (n_samples, n_trees)."""
    forest = estimator._forest
    codes = forest.binner.transform(X, order="C")
    n_trees, n_internal = forest.split_feature.shape
    depth = int(np.log2(n_internal + 1))
    rows = np.arange(X.shape[0])
    nodes = np.empty((X.shape[0], n_trees), dtype=np.int64)
    for tree in range(n_trees):
        k = np.zeros(X.shape[0], dtype=np.int64)
        for _ in range(depth):
            code = codes[rows, forest.split_feature[tree, k]]
            right = np.where(code == forest.binner.max_bins, ~forest.missing_left[tree, k],
                             code > forest.split_bin[tree, k])
            k = 2 * k + 1 + right
        nodes[:, tree] = k
    order = [k * forest.n_stages + t for t in range(forest.n_stages)
             for k in range(forest.n_outputs)]
    return nodes[:, order]


def test_booster_predicts_as_dpboost(xgb, fitted):
    X = probe(fitted, np.random.default_rng(1))
    np.testing.assert_allclose(served(xgb, fitted, X), expected(fitted, X), rtol=0, atol=1e-6)


def test_user_facing_predictions_after_the_documented_clip(xgb, fitted, data, tmp_path):
    X = data[0]
    path = tmp_path / "model.json"
    path.write_text(fitted.to_xgboost_json())
    got = xgb.Booster(model_file=str(path)).predict(xgb.DMatrix(X))
    if isinstance(fitted, DPGBRegressor):
        np.testing.assert_allclose(np.clip(got, *fitted.target_bounds_), fitted.predict(X),
                                   rtol=0, atol=1e-6)
    elif fitted.classes_.size == 2:
        np.testing.assert_allclose(np.clip(got, 0, 1), fitted.predict_proba(X)[:, 1],
                                   rtol=0, atol=1e-6)
    else:
        np.testing.assert_allclose(got, fitted.predict_proba(X), rtol=0, atol=1e-6)
        np.testing.assert_array_equal(fitted.classes_[got.argmax(axis=1)], fitted.predict(X))


def test_every_record_takes_dpboosts_route(xgb, fitted):
    # Exact, not up to tolerance: a value at a threshold or one float32 step from it, and NaN,
    # reach the same leaf in every tree.
    X = probe(fitted, np.random.default_rng(2))
    leaves = served(xgb, fitted, X, pred_leaf=True).astype(np.int64)
    np.testing.assert_array_equal(leaves.reshape(len(X), -1), xgboost_leaves(fitted, X))


def test_iteration_range_selects_the_same_stages(xgb, fitted, data):
    X = data[0][:300]
    np.testing.assert_allclose(served(xgb, fitted, X, iteration_range=(2, 5)),
                               expected(fitted, X, iteration_range=(2, 5)), rtol=0, atol=1e-6)


def test_margins_are_the_decision_function(xgb, fitted, data):
    if isinstance(fitted, DPGBRegressor) or fitted.loss == "square":
        pytest.skip("reg:squarederror: the margin is the prediction")
    X = data[0][:300]
    np.testing.assert_allclose(served(xgb, fitted, X, output_margin=True),
                               fitted.decision_function(X), rtol=0, atol=1e-6)


def test_feature_names_and_categorical_codes(xgb):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 1500
    frame = pd.DataFrame({"age": rng.integers(18, 90, n).astype(float),
                          "colour": rng.choice(["red", "green", "blue", "other"], n),
                          "hours": rng.uniform(0, 80, n).astype(np.float32).astype(float)})
    frame.loc[rng.random(n) < 0.1, "hours"] = np.nan
    y = ((frame.colour == "red") | (frame.age > 50)).astype(int)
    clf = DPGBClassifier(feature_bounds={"age": (18, 90), "hours": (0, 80)},
                         categorical_features=["colour"],
                         categories={"colour": ["red", "green", "blue"]}, classes=[0, 1],
                         n_estimators=10, max_depth=3, random_state=0).fit(frame, y)
    model = json.loads(clf.to_xgboost_json())["learner"]
    assert model["feature_names"] == ["age", "colour", "hours"]
    assert json.loads(model["attributes"]["dpboost_categories"]) == {
        "1": ["red", "green", "blue"]}
    # The documented encoding: position in categories_[j], NaN outside the list ("other").
    codes = {v: float(i) for i, v in enumerate(clf.categories_[1])}
    encoded = frame.assign(colour=frame.colour.map(codes).astype(float))
    got = load(xgb, clf).predict(xgb.DMatrix(encoded))
    np.testing.assert_allclose(got, clf.predict_proba(frame)[:, 1], rtol=0, atol=1e-6)


def test_covers_are_released_weights_or_the_trees_shape(fitted):
    from dpboost._export import COVER_FLOOR

    model = json.loads(fitted.to_xgboost_json())
    trees = model["learner"]["gradient_booster"]["model"]["trees"]
    forest = fitted._forest
    n_internal = forest.split_feature.shape[1]
    order = [k * forest.n_stages + t for t in range(forest.n_stages)
             for k in range(forest.n_outputs)]
    for exported, tree in zip(trees, order):
        cover = np.array(exported["sum_hessian"])
        # every node's cover is the sum of its children's, and positive (TreeSHAP divides)
        np.testing.assert_allclose(cover[:n_internal],
                                   cover[1:2 * n_internal + 1:2] + cover[2::2], rtol=1e-12)
        assert (cover > 0).all()
        weights = forest.leaf_statistics[tree, :, 1]
        expected = (np.maximum(weights, COVER_FLOOR) if np.isfinite(weights).all()
                    else np.ones(n_internal + 1))
        np.testing.assert_allclose(cover[n_internal:], expected, rtol=1e-12)


def test_one_vs_rest_classifiers_are_refused(data):
    X, _, y_multi, _ = data
    clf = DPGBClassifier(loss="logistic", feature_bounds=(-1, 1), classes=[0, 1, 2],
                         n_estimators=2, max_depth=2, random_state=0).fit(X, y_multi)
    with pytest.raises(NotImplementedError, match="loss='logistic' with 3 classes"):
        clf.to_xgboost_json()


@pytest.mark.parametrize("binner", [
    BoundsBinner([[-1.0, 1.0], [0.0, 1e-3], [-7.3, 1234.5], [-1e-30, 3.0]], 255),
    BoundsBinner([[-1.0, 1.0], [0.0, 1.0]], 32),
    BoundsBinner([[-0.5, 2.5]], 4),  # a categorical feature of three categories
    BoundsBinner([[-1.0, 1.0], [0.0, 4.0]], 4,
                 thresholds=[[-0.5, 0.1, 0.1], [1.0, 1.0 + 1e-12, 3.0]]),
], ids=["fine-grid", "grid", "categorical", "thresholds"])
def test_thresholds_are_the_first_float32_binned_right(binner):
    t = xgboost_thresholds(binner)
    assert t.dtype == np.float32 and np.isfinite(t).all()
    boundary = np.arange(binner.max_bins - 1)

    def codes(values):
        return binner.transform(values.T.astype(np.float64), order="C").T

    assert (codes(t) > boundary).all()
    assert (codes(np.nextafter(t, np.float32(-np.inf))) <= boundary).all()


def test_thresholds_outside_float32_are_refused():
    with pytest.raises(ValueError, match="feature 1: .*float32"):
        xgboost_thresholds(BoundsBinner([[0.0, 1.0], [-1e39, 1e39]], 8))


# Leak tests (docs/privacy.md, rule 4): every number of the export is a function of the released
# forest and public inputs; no statistic of the training data is written.

def numbers(node, path=""):
    """Every number in a JSON document, with its path (numeric strings of parameters too)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from numbers(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from numbers(value, f"{path}[{i}]")
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield path, float(node)
    elif isinstance(node, str) and path.split("/")[-2] in ("learner_model_param", "tree_param",
                                                          "gbtree_model_param"):
        yield path, float(node)


def released_tree(forest, tree, thresholds, leaf_scale):
    """Each node field of tree ``tree`` as the released forest and the tree's shape give it."""
    n_internal = forest.split_feature.shape[1]
    n_leaves = n_internal + 1
    feature, bin_ = forest.split_feature[tree], forest.split_bin[tree]
    leaves = list((forest.leaf_value[tree] * leaf_scale).astype(np.float32))
    nodes = np.arange(2 * n_internal + 1)
    level = np.floor(np.log2(nodes + 1))
    return {"split_conditions": list(thresholds[feature, bin_]) + leaves,
            "base_weights": [0.0] * n_internal + leaves,
            "split_indices": list(feature) + [0] * n_leaves,
            "default_left": list(forest.missing_left[tree].astype(int)) + [0] * n_leaves,
            "loss_changes": [0.0] * nodes.size,
            "split_type": [0] * nodes.size,
            # the number of leaves below the node: a constant of the complete tree's shape
            "sum_hessian": list(2.0 ** (level[-1] - level)),
            "left_children": list(2 * nodes[:n_internal] + 1) + [-1] * n_leaves,
            "right_children": list(2 * nodes[:n_internal] + 2) + [-1] * n_leaves,
            "parents": [2147483647] + list((nodes[1:] - 1) // 2)}


def unexplained(model, estimator, leaf_scale, base_score):
    """The export's numbers that the released forest and the public inputs do not give."""
    forest = estimator._forest
    thresholds = xgboost_thresholds(forest.binner)
    n_trees, n_internal = forest.split_feature.shape
    order = [k * forest.n_stages + t for t in range(forest.n_stages)
             for k in range(forest.n_outputs)]
    trees = [released_tree(forest, tree, thresholds, leaf_scale) for tree in order]
    allowed = {"learner_model_param": {base_score, 0, n_trees // forest.n_stages, 1,
                                       estimator.n_features_in_},
               "gbtree_model_param": {1, n_trees},
               "tree_param": {0, estimator.n_features_in_, 2 * n_internal + 1, 1},
               "version": {2, 0},
               "iteration_indptr": set(range(0, n_trees + 1, forest.n_outputs)),
               "tree_info": set(range(forest.n_outputs))}
    leaks = []
    for path, value in numbers(model):
        if path.startswith("/learner/gradient_booster/model/trees[") and (
                "tree_param" not in path):
            i = int(path.split("trees[")[1].split("]")[0])
            field = path.split("/")[-1].split("[")[0]
            if field == "id":
                ok = value == i
            else:
                ok = value == trees[i][field][int(path.split("[")[-1].rstrip("]"))]
        else:
            key = next((name for name in allowed if name in path), None)
            ok = key is not None and value in allowed[key]
        if not ok:
            leaks.append((path, value))
    return leaks


@pytest.fixture(scope="module")
def leak_model(data):
    X, y, _, _ = data
    # diagnostics=True computes a non-private statistic (GDF's filtered fractions): it must not
    # reach the export.
    with pytest.warns(PrivacyLeakWarning, match="diagnostics=True"):
        return DPGBClassifier.dpboost_paper(feature_bounds=(-1, 1), classes=[0, 1],
                                            n_estimators=8, max_depth=3, diagnostics=True,
                                            random_state=0).fit(X, y)


def test_export_holds_only_released_values(leak_model):
    model = json.loads(leak_model.to_xgboost_json())
    assert unexplained(model, leak_model, leaf_scale=0.5, base_score=0.5) == []
    # Nothing else than the writer's name, version and the public category lists.
    assert set(model["learner"]["attributes"]) == {"dpboost_estimator", "dpboost_version",
                                                   "dpboost_categories"}
    fractions = {f for f in leak_model.filtered_fraction_ if 0 < f < 1}
    assert fractions  # the check below is not vacuous
    assert not {value for _, value in numbers(model)} & fractions


def test_leak_check_catches_a_data_statistic(leak_model, data):
    # Negative control: the cover XGBoost itself would write at the root (the number of records
    # times a Hessian), or an exact count in any node, is reported.
    model = json.loads(leak_model.to_xgboost_json())
    tree = model["learner"]["gradient_booster"]["model"]["trees"][0]
    tree["sum_hessian"][0] = float(len(data[0]))
    tree["loss_changes"][1] = 12.75
    leaks = unexplained(model, leak_model, leaf_scale=0.5, base_score=0.5)
    assert [path for path, _ in leaks] == [
        "/learner/gradient_booster/model/trees[0]/loss_changes[1]",
        "/learner/gradient_booster/model/trees[0]/sum_hessian[0]"]


def test_export_is_a_function_of_the_stored_released_model(fitted):
    # dpboost's own JSON holds public inputs and released values only (test_no_leak): the
    # export of a model rebuilt from it, without the training data, is identical.
    rebuilt = type(fitted).from_json(fitted.to_json())
    assert rebuilt.to_xgboost_json() == fitted.to_xgboost_json()


def test_rounding_the_real_thresholds_would_misroute(xgb, data, monkeypatch):
    # Negative control of the routing test: the float32 nearest to each real threshold (instead
    # of the first float32 dpboost bins right) sends probe records to other leaves.
    import dpboost._export as export

    X, y, _, _ = data
    clf = DPGBClassifier(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=15, max_depth=3,
                         random_state=0).fit(X, y)
    monkeypatch.setattr(export, "xgboost_thresholds",
                        lambda binner: binner.thresholds().astype(np.float32))
    probe_X = probe(clf, np.random.default_rng(2))
    leaves = served(xgb, clf, probe_X, pred_leaf=True).astype(np.int64)
    assert (leaves != xgboost_leaves(clf, probe_X)).any()
