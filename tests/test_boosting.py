"""The boosting loop, ``_boosting.boost``: which records and gradients each tree receives, in
which order the trees grow, and what GDF filters.

The ``grown`` fixture (conftest.py) records every call of ``grow_tree`` where the loop looks it
up, in ``dpboost._boosting``.
"""

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor, PrivacyLeakWarning
from dpboost import _boosting as boosting_module
from dpboost._predictor import predict_binned


def test_eoe_trees_of_one_ensemble_see_disjoint_records(binary, grown, make_clf, make_plan):
    X, y = binary
    make_clf(n_estimators=12, trees_per_ensemble=5, gradient_filtering=False).fit(X, y)
    plan_shares = make_plan(n_estimators=12, trees_per_ensemble=5).record_shares
    by_group = {}
    for tree in grown:
        budget = tree.kwargs["budget"]
        by_group.setdefault(budget.group, []).append((budget.position, tree.rows))
    assert sorted(by_group) == [0, 1, 2]
    for group, trees in by_group.items():
        seen = np.concatenate([rows for _, rows in trees])
        assert np.unique(seen).size == seen.size, f"ensemble {group} reuses a record"
        for position, rows in trees:
            # Share of records within 6 binomial standard deviations of the planned share.
            p = plan_shares[position]
            assert abs(rows.size - p * len(X)) <= 6 * np.sqrt(len(X) * p * (1 - p)) + 1


def test_para_trees_disjoint_and_seq_trees_see_everything(binary, grown, make_clf):
    X, y = binary
    make_clf(budget_allocation="parallel", n_estimators=4, gradient_filtering=False).fit(X, y)
    seen = np.concatenate([tree.rows for tree in grown])
    assert np.unique(seen).size == seen.size
    grown.clear()
    make_clf(budget_allocation="sequential", n_estimators=3, gradient_filtering=False).fit(X, y)
    assert len(grown) == 3
    for tree in grown:
        np.testing.assert_array_equal(tree.rows, np.arange(len(X)))


@pytest.mark.parametrize("gradient_filtering", [True, False])
def test_gradients_reaching_a_tree_are_bounded(grown, make_clf, gradient_filtering):
    # Labels outside what the first trees fit well: large learning rate and noisy leaves push
    # F beyond [-1, 1], so some |F - y| exceed 1 and GDF (or clipping) has work to do.
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(3000, 2))
    y = rng.integers(0, 2, size=3000)
    make_clf(epsilon=0.2, learning_rate=1.0, budget_allocation="sequential", leaf_clipping=False,
             gradient_filtering=gradient_filtering, n_estimators=6).fit(X, y)
    assert all(np.abs(tree.gradients).max(initial=0) <= 1.0 for tree in grown)
    if gradient_filtering:
        assert any(tree.rows.size < len(X) for tree in grown[1:]), "GDF never filtered"
    else:
        assert all(tree.rows.size == len(X) for tree in grown)


def test_diagnostics_warn_and_report_filtered_fraction(binary, make_clf):
    X, y = binary
    assert not hasattr(make_clf().fit(X, y), "filtered_fraction_")
    with pytest.warns(PrivacyLeakWarning, match="diagnostics"):
        clf = make_clf(diagnostics=True).fit(X, y)
    assert clf.filtered_fraction_.shape == (20,)
    assert ((clf.filtered_fraction_ >= 0) & (clf.filtered_fraction_ <= 1)).all()


def test_initial_score_is_zero(binary, grown, make_clf):
    X, y = binary
    make_clf(budget_allocation="sequential", n_estimators=1).fit(X, y)
    (first,) = grown
    # F0 = 0: the first gradients are exactly -y in {-1, +1}.
    np.testing.assert_array_equal(first.gradients, -np.where(y[first.rows] == 1, 1.0, -1.0))


def test_cyclical_tree_t_splits_on_feature_t_mod_d(binary, make_clf):
    X, y = binary
    clf = make_clf(n_estimators=12, split_selection="cyclical").fit(X, y)
    for t in range(clf.n_estimators):
        assert (clf._forest.split_feature[t] == t % X.shape[1]).all()


@pytest.mark.parametrize("split_selection", ["random", "exponential"])
def test_no_interactions_trees_split_on_one_feature_each_in_turn(binary, make_clf,
                                                                  split_selection):
    X, y = binary
    clf = make_clf(n_estimators=8, interaction_cst="no_interactions",
                   split_selection=split_selection).fit(X, y)
    for t in range(clf.n_estimators):
        assert (clf._forest.split_feature[t] == t % X.shape[1]).all()


def test_subsample_grows_each_tree_on_a_poisson_sample(binary, grown, make_clf):
    X, y = binary
    gamma, n_trees = 0.3, 40
    # No noise and no GDF: every tree sees exactly its Poisson sample of all 3000 records.
    make_clf(epsilon=np.inf, subsample=gamma, n_estimators=n_trees,
             budget_allocation="sequential", max_depth=2).fit(X, y)
    sizes = np.array([tree.rows.size for tree in grown])
    n = X.shape[0]
    sd = np.sqrt(n * gamma * (1 - gamma))
    assert sizes.size == n_trees
    assert (np.abs(sizes - n * gamma) < 5 * sd).all()
    # the sample mean over 40 trees is within 5 standard errors of n * gamma
    assert abs(sizes.mean() - n * gamma) < 5 * sd / np.sqrt(n_trees)
    assert np.unique(sizes).size > 1  # a fresh sample per tree


@pytest.mark.parametrize("loss, round_by_round", [("softmax", True), ("logistic", False)])
def test_softmax_trees_grow_round_by_round(binary, grown, loss, round_by_round):
    # Softmax couples the K outputs: round t grows tree t of every output from the scores
    # after round t - 1. One-vs-rest (logistic) grows output after output. Tree k * T + t is
    # tree t of output k in the model and in the ledger, whatever the growing order.
    X, _ = binary
    y = np.digitize(X[:, 0], [-0.4, 0.4])
    clf = DPGBClassifier.dpboost_paper(epsilon=2.0, delta=1e-5, leaf_noise="gaussian",
                                       loss=loss, classes=[0, 1, 2], feature_bounds=(-1, 1),
                                       n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    order = [tree.kwargs["budget"].tree for tree in grown]
    if round_by_round:
        assert order == [k * 3 + t for t in range(3) for k in range(3)]
    else:
        assert order == list(range(9))
    assert [e.tree for e in clf.privacy_ledger_] == sorted(e.tree for e in clf.privacy_ledger_)


def test_softmax_multiclass_learns_with_the_logistic_sensitivities(binary):
    X, _ = binary
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.4, 0.4])  # 3 ordered classes
    common = {"classes": [0, 1, 2], "feature_bounds": (-1, 1), "n_estimators": 15,
              "max_depth": 3, "budget_allocation": "eoe", "trees_per_ensemble": 5,
              "random_state": 0}
    softmax = DPGBClassifier.dpboost_paper(epsilon=np.inf, loss="softmax", **common).fit(X, y)
    proba = softmax.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    raw = softmax.decision_function(X)
    np.testing.assert_allclose(proba, np.exp(raw) / np.exp(raw).sum(axis=1, keepdims=True))
    assert softmax.score(X, y) > 0.9
    # without noise, the multinomial log-loss never goes up from one round to the next
    losses = [-np.log(p[np.arange(y.size), y]).mean() for p in softmax.staged_predict_proba(X)]
    assert (np.diff(losses) <= 1e-9).all()
    # private: the ledger is the plan's, in the plan's order, at the logistic loss's sensitivities
    private = DPGBClassifier.dpboost_paper(epsilon=2.0, delta=1e-5, leaf_noise="gaussian",
                                           loss="softmax",
                                           **common).fit(X, y)
    logistic = DPGBClassifier.dpboost_paper(epsilon=2.0, delta=1e-5, leaf_noise="gaussian",
                                            loss="logistic",
                                            **common).fit(X, y)
    assert private.privacy_ledger_ == logistic.privacy_ledger_
    assert private.privacy_spent_ <= 2.0
    assert private.score(X, y) > 0.6
    # two classes: softmax is the logistic loss
    y2 = (y > 0).astype(int)
    two = {**common, "classes": [0, 1], "epsilon": 1.0}
    softmax = DPGBClassifier.dpboost_paper(loss="softmax", **two).fit(X, y2)
    logistic = DPGBClassifier.dpboost_paper(loss="logistic", **two).fit(X, y2)
    np.testing.assert_array_equal(softmax.predict_proba(X), logistic.predict_proba(X))



def _three_classes(X):
    return np.digitize(X[:, 0], [-0.4, 0.4])


@pytest.mark.parametrize(("make", "labels", "n_updates", "every_record"), [
    # every record in every tree: leaf ranges only
    (lambda: DPGBClassifier.dpboost_paper(epsilon=np.inf, classes=[0, 1]), None, 20, True),
    # Poisson samples: the other records through prediction
    (lambda: DPGBClassifier.dpboost_paper(epsilon=np.inf, subsample=0.4, classes=[0, 1],
                                          n_jobs=2), None, 20, False),
    # EoE and GDF
    (lambda: DPGBClassifier.dpboost_paper(epsilon=1.0, classes=[0, 1]), None, 20, False),
    # softmax: outputs k > 0
    (lambda: DPGBClassifier(epsilon=2.0, classes=[0, 1, 2]), _three_classes, 30, False),
    (lambda: DPGBRegressor(epsilon=1.0, target_bounds=(-2, 2), subsample=0.5), None, 20, False),
], ids=["every-record", "poisson", "eoe-gdf", "softmax", "regressor"])
def test_score_update_equals_prediction_of_every_record(binary, monkeypatch, make, labels,
                                                          n_updates, every_record):
    # add_tree adds a leaf's value to the tree's records by the grower's ranges and predicts
    # only the other records: the scores must equal, bit for bit, those of the tree's
    # prediction on every record (as before the ranges), missing values included.
    X = np.array(binary[0])
    X[::7, 1] = np.nan
    y = binary[1] if labels is None else labels(X)
    real, shares = boosting_module.add_tree, []

    def checked(partition, output, split_feature, split_bin, missing_left, leaf_value, code):
        shares.append(partition.tree.indices.size / partition.raw.shape[1])
        expected = partition.raw.copy()
        predict_binned(partition.X_binned, split_feature[None], split_bin[None],
                       missing_left[None], code, leaf_value[None], 1, expected[output])
        result = real(partition, output, split_feature, split_bin, missing_left, leaf_value,
                      code)
        assert result.raw.tobytes() == expected.tobytes()
        return result

    monkeypatch.setattr(boosting_module, "add_tree", checked)
    make().set_params(feature_bounds=(-1, 1), n_estimators=n_updates // (3 if labels else 1),
                      max_depth=4, random_state=0).fit(X, y)
    assert len(shares) == n_updates
    assert (min(shares) == 1.0) if every_record else (max(shares) < 1.0)


@pytest.mark.parametrize("estimator", ["classifier", "regressor", "eoe"])
def test_a_seeded_fit_does_not_depend_on_the_thread_count(estimator):
    # 70k rows: above the parallel thresholds of every per-record kernel (gradients, coins,
    # selection, partition, prediction), so n_jobs=2 and 3 run them in parallel chunks.
    rng = np.random.default_rng(4)
    X = rng.normal(size=(70_000, 4))
    y = (X[:, 0] + rng.normal(size=X.shape[0]) > 0).astype(int)
    common = {"n_estimators": 4, "feature_bounds": (-4, 4), "random_state": 7}
    models = []
    for n_jobs in (1, 2, 3):
        if estimator == "regressor":
            model = DPGBRegressor(target_bounds=(-4, 4), n_jobs=n_jobs, **common)
            model.fit(X, X[:, 0])
        else:
            extra = {"budget_allocation": "eoe", "trees_per_ensemble": 2} if estimator == "eoe" else {}
            model = DPGBClassifier(classes=[0, 1], subsample=0.3, n_jobs=n_jobs, **extra,
                                   **common)
            model.fit(X, y)
        models.append(model)
    raw = [m._raw_predict(X, None).tobytes() for m in models]
    assert raw[0] == raw[1] == raw[2]
