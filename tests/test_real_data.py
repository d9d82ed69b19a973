"""The real-data path end to end: Adult and Diabetes130US from ``pd.read_csv`` with public inputs
only."""

import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from dpboost import DPGBClassifier, PrivacyLeakWarning, ReproducibleNoiseWarning
from dpboost.__main__ import main as cli
from dpboost.datasets import NA_VALUES, SCHEMAS, estimator_params, load_encoded

pd = pytest.importorskip("pandas")

SHARED = Path(__file__).parents[1].parent / "shared" / "datasets"

needs_data = pytest.mark.skipif(not (SHARED / "adult_train.csv.gz").exists()
                                or not (SHARED / "diabetes130us.csv.gz").exists(),
                                reason=f"the shared datasets are not in {SHARED}")


def _read(name):
    """Train and test frames straight from pd.read_csv: empty fields and "?" are NaN, and
    nothing else (Diabetes130US's "None" is a category)."""
    frames = [pd.read_csv(SHARED / f, keep_default_na=False, na_values=list(NA_VALUES),
                          low_memory=False) for f in SCHEMAS[name].files]
    if len(frames) == 1:  # Diabetes130US has no official split: every fifth row is held out
        frames = [frames[0][frames[0].index % 5 != 0], frames[0][frames[0].index % 5 == 0]]
    return [(f.drop(columns="target"), f["target"].to_numpy()) for f in frames]


@pytest.mark.slow  # two fits of the default estimator on all of Adult
@needs_data
def test_the_default_classifier_meets_the_bar_on_adult(seeded_os_words):
    # The bar of the default estimator: on Adult (official split, public schema) the default
    # classifier at epsilon 1 has ROC AUC >= 0.89 and test error <= 0.16, and at epsilon 0.5 it
    # beats the majority class (0.236). Secure noise (random_state=None), as a user gets it, on
    # seeded bytes so that the verdict is the same on every run; one fit each.
    # benchmarks/bench_safe_defaults.py measures 5 fits: error 0.153, AUC 0.897 +- 0.002 at
    # epsilon 1; error 0.156 at epsilon 0.5. On 6 seeds of the bytes: AUC 0.903 to 0.906, error
    # 0.146 to 0.149 at epsilon 1; error 0.148 to 0.153 at epsilon 0.5.
    (X, y), (X_test, y_test) = _read("adult")
    params = estimator_params("adult", X.columns)
    majority = min(np.mean(y_test), 1 - np.mean(y_test))
    for epsilon in (1.0, 0.5):
        clf = DPGBClassifier(epsilon=epsilon, **params).fit(X, y)
        error = 1 - clf.score(X_test, y_test)
        auc = roc_auc_score(y_test, clf.predict_proba(X_test)[:, 1])
        if epsilon == 1.0:
            assert auc >= 0.89 and error <= 0.16, (auc, error)
        assert error < majority, (epsilon, error)


@needs_data
@pytest.mark.parametrize("name, columns, n_categorical", [("adult", 14, 8),
                                                          ("diabetes", 47, 39)])
def test_trains_from_read_csv_with_public_inputs_only(name, columns, n_categorical,
                                                      previous_preset):
    # Generous epsilon and a small model. Adult: test accuracy 0.84 (measured over 3 seeds)
    # against 0.764 for the majority class. Diabetes130US (11 % readmitted within 30 days) is hard
    # even without noise (ROC AUC 0.67): the model predicts the majority class, so its ranking
    # is checked instead, ROC AUC 0.62 (3 seeds) against 0.5 by chance.
    (X, y), (X_test, y_test) = _read(name)
    assert X.shape[1] == columns and X.isna().any().sum() >= 3
    assert X.select_dtypes(exclude="number").shape[1] >= 8  # string columns as read
    params = estimator_params(name, X.columns)
    assert len(params["categorical_features"]) == n_categorical
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)  # seeded on purpose
        # ten trees are too few for the preset's random splits: the exponential mechanism
        # (seeds 0, 1: Adult accuracy 0.847, 0.849; Diabetes ROC AUC 0.622, 0.621)
        clf = DPGBClassifier(**previous_preset, epsilon=8.0, n_estimators=10, max_depth=3,
                             split_selection="exponential", random_state=0, **params).fit(X, y)
    proba = clf.predict_proba(X_test)
    if name == "adult":
        majority = max(np.mean(y_test), 1 - np.mean(y_test))
        assert clf.score(X_test, y_test) > majority + 0.04
    else:
        assert roc_auc_score(y_test, proba[:, 1]) > 0.58
    loaded = DPGBClassifier.from_json(clf.to_json())
    np.testing.assert_array_equal(loaded.predict_proba(X_test), proba)


@needs_data
def test_encoded_matrix_gives_the_dataframe_model():
    # The benchmarks' float matrices (categories as list positions, NaN for missing and unknown)
    # fit the same model as the DataFrame path.
    X, y, X_test, _, bounds, names = load_encoded("adult", SHARED)
    (frame, y_frame), (test_frame, _) = _read("adult")
    assert names == list(frame.columns)
    common = {"n_estimators": 3, "max_depth": 3, "random_state": 0, "classes": [0, 1]}
    params = estimator_params("adult", frame.columns)
    del params["classes"]
    # the matrix's categorical columns, declared with their codes as the public lists
    codes = {names.index(c): np.arange(len(v), dtype=float)
             for c, v in params["categories"].items()}
    numeric = DPGBClassifier.dpboost_paper(feature_bounds=bounds, categorical_features=list(codes),
                                           categories=codes, **common).fit(X, y)
    frame_model = DPGBClassifier.dpboost_paper(**params, **common).fit(frame, y_frame)
    np.testing.assert_array_equal(numeric.predict_proba(X_test),
                                  frame_model.predict_proba(test_frame))


def test_schema_rejects_columns_without_public_inputs():
    with pytest.raises(ValueError, match=r"columns \['surname'\] have no public bound"):
        estimator_params("adult", ["age", "surname"])


@needs_data
@pytest.mark.parametrize("dataset", ["adult", "diabetes"])
def test_demo_runs_end_to_end(dataset, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)  # seeded on purpose
        assert cli(["demo", "--dataset", dataset, "--shared", str(SHARED), "--n-estimators", "3",
                    "--max-depth", "3", "--epsilons", "1"]) == 0
    out = capsys.readouterr().out
    assert f"dataset: {dataset}" in out and "read with pd.read_csv" in out
    rows = [line.split() for line in out.splitlines()
            if line.split()[:1] in (["paper"], ["default"])]
    assert [(r[0], float(r[1])) for r in rows] == [("default", 1.0), ("paper", 1.0)]
    assert all(0 <= float(r[3]) <= 1 and 0 <= float(r[4]) <= 1 for r in rows)


def test_demo_falls_back_to_breast_cancer_and_warns(tmp_path, capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cli(["demo", "--shared", str(tmp_path), "--n-estimators", "2", "--max-depth", "2",
             "--epsilons", "1"])
    leaks = {str(w.message).split(" was not given")[0] for w in caught
             if issubclass(w.category, PrivacyLeakWarning)}
    assert leaks == {"feature_bounds"}
    assert f"breast cancer (scikit-learn bundled; adult not found in {tmp_path})" in (
        capsys.readouterr().out)


def test_demo_on_a_csv_reads_its_inputs_from_it_and_warns(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 300), "kind": rng.choice(["a", "b"], 300)})
    frame["target"] = ((frame["x"] > 0.5) | (frame["kind"] == "a")).astype(int)
    frame.loc[::7, "kind"] = "?"
    frame.to_csv(tmp_path / "data.csv", index=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cli(["demo", "--data", str(tmp_path / "data.csv"), "--n-estimators", "2",
             "--max-depth", "2", "--epsilons", "inf"])
    leaks = {str(w.message).split(" was not given")[0] for w in caught
             if issubclass(w.category, PrivacyLeakWarning)}
    assert leaks == {"categories (of kind)", "feature_bounds", "classes"}
    assert "no public schema is known for this CSV" in capsys.readouterr().out
