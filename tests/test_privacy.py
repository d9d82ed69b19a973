"""Privacy rules of docs/privacy.md checked on the fitted estimators (not statistical audits)."""

import pickle
import re
import warnings

import numpy as np
import pytest

import dpboost._boosting as boosting_module
from dpboost import DPGBClassifier, DPGBRegressor, LedgerEntry, ReproducibleNoiseWarning
from dpboost._budget import plan_budget


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(4000, 4))
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    return X, y


@pytest.fixture
def grown(monkeypatch):
    """Record what every tree received from the boosting loop."""
    calls = []
    original = boosting_module.grow_tree

    def spy(X_binned, sample_indices, gradients, **kw):
        calls.append((kw["budget"], sample_indices.copy(), gradients.copy()))
        return original(X_binned, sample_indices, gradients, **kw)

    monkeypatch.setattr(boosting_module, "grow_tree", spy)
    return calls


def _fit(X, y, **kw):
    params = dict(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=12, max_depth=3,
                  random_state=0)
    params.update(kw)
    return DPGBClassifier.dpboost_paper(**params).fit(X, y)


def test_eoe_trees_of_one_ensemble_see_disjoint_records(data, grown):
    X, y = data
    _fit(X, y, trees_per_ensemble=5, gradient_filtering=False)
    plan_shares = plan_budget(epsilon=1.0, n_estimators=12, max_depth=3, learning_rate=0.1,
                              l2_regularization=0.1, budget_allocation="eoe",
                              trees_per_ensemble=5, leaf_clipping=True).record_shares
    by_group = {}
    for budget, idx, _ in grown:
        by_group.setdefault(budget.group, []).append((budget.position, idx))
    assert sorted(by_group) == [0, 1, 2]
    for group, trees in by_group.items():
        seen = np.concatenate([idx for _, idx in trees])
        assert np.unique(seen).size == seen.size, f"ensemble {group} reuses a record"
        for position, idx in trees:
            # Share of records within 6 binomial standard deviations of the planned share.
            p = plan_shares[position]
            assert abs(idx.size - p * len(X)) <= 6 * np.sqrt(len(X) * p * (1 - p)) + 1


def test_para_trees_disjoint_and_seq_trees_see_everything(data, grown):
    X, y = data
    _fit(X, y, budget_allocation="parallel", n_estimators=4, gradient_filtering=False)
    seen = np.concatenate([idx for _, idx, _ in grown])
    assert np.unique(seen).size == seen.size
    grown.clear()
    _fit(X, y, budget_allocation="sequential", n_estimators=3, gradient_filtering=False)
    for _, idx, _ in grown:
        np.testing.assert_array_equal(idx, np.arange(len(X)))


@pytest.mark.parametrize("gradient_filtering", [True, False])
def test_gradients_reaching_a_tree_are_bounded(grown, gradient_filtering):
    # Labels outside what the first trees fit well: large learning rate and noisy leaves push
    # F beyond [-1, 1], so some |F - y| exceed 1 and GDF (or clipping) has work to do.
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(3000, 2))
    y = rng.integers(0, 2, size=3000)
    _fit(X, y, epsilon=0.2, learning_rate=1.0, budget_allocation="sequential",
         leaf_clipping=False, gradient_filtering=gradient_filtering, n_estimators=6)
    assert all(np.abs(g).max(initial=0) <= 1.0 for _, _, g in grown)
    if gradient_filtering:
        assert any(idx.size < len(X) for _, idx, _ in grown[1:]), "GDF never filtered"
    else:
        assert all(idx.size == len(X) for _, idx, _ in grown)


def test_leaf_clipping_bounds_released_leaves(data):
    X, y = data
    # At a huge epsilon the Laplace noise is ~1e-6, so released leaves show the GLC clip.
    clf = _fit(X, y, epsilon=1e6, learning_rate=0.3, trees_per_ensemble=12)
    for t in range(12):
        bound = 0.3 * (1 - 0.3) ** t
        assert np.abs(clf._forest.leaf_value[t]).max() <= bound + 1e-3
    assert np.abs(clf._forest.leaf_value[0]).max() > 0.2  # the first tree is not clipped to nothing


def test_neighbouring_datasets_share_grid_and_candidates(data):
    # Rule 1: bin edges and the candidate set depend only on public inputs, not on D vs D'.
    X, y = data
    extreme = np.array([[1e9, -1e9, 0.5, 0.0]])
    a = _fit(X, y, epsilon=1.0)
    b = _fit(np.vstack([X, extreme]), np.append(y, 1), epsilon=1.0)
    np.testing.assert_array_equal(a._forest.binner.thresholds(), b._forest.binner.thresholds())
    np.testing.assert_array_equal(a.feature_bounds_, b.feature_bounds_)
    assert [e.sensitivity for e in a.privacy_ledger_] == [e.sensitivity for e in b.privacy_ledger_]


def test_initial_score_is_zero(data, grown):
    X, y = data
    _fit(X, y, budget_allocation="sequential", n_estimators=1)
    _, idx, g = grown[0]
    # F0 = 0: the first gradients are exactly -y in {-1, +1}.
    np.testing.assert_array_equal(g, -np.where(y[idx] == 1, 1.0, -1.0))


# categories_: the public category lists (or, with a PrivacyLeakWarning, lists read from the data).
_FITTED_PUBLIC = {"n_features_in_", "feature_bounds_", "categories_", "classes_", "target_bounds_",
                  "privacy_spent_", "privacy_ledger_", "_forest"}
#: The forest: the grid, split choices, released leaves and the number of stages.
_FOREST_FIELDS = {"binner", "split_feature", "split_bin", "missing_left", "leaf_value", "n_stages"}


@pytest.mark.parametrize("estimator", [
    DPGBClassifier.dpboost_paper(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=5,
                                 max_depth=2,
                                 random_state=0),
    DPGBRegressor.dpboost_paper(feature_bounds=(-1, 1), target_bounds=(-2, 2), n_estimators=5,
                                max_depth=2,
                                random_state=0),
])
def test_pickled_model_holds_only_public_and_released_values(data, estimator):
    # Rule 4: whatever leaves fit is a public input, a split choice, a released leaf or the ledger.
    X, y = data
    target = y if isinstance(estimator, DPGBClassifier) else y - 0.5
    model = pickle.loads(pickle.dumps(estimator.fit(X, target)))
    fitted = {k for k in vars(model) if k.endswith("_") or k.startswith("_")}
    assert fitted <= _FITTED_PUBLIC, fitted - _FITTED_PUBLIC
    assert set(vars(model._forest)) == _FOREST_FIELDS
    assert model._forest.split_feature.dtype == np.int32 and model._forest.split_bin.dtype == np.uint8
    assert all(isinstance(e, LedgerEntry) for e in model.privacy_ledger_)
    # Leaf values are the Laplace releases shrunk by the learning rate: a different seed changes
    # every one of them (an exact statistic would repeat).
    other = estimator.set_params(random_state=1).fit(X, target)
    assert (model._forest.leaf_value != other._forest.leaf_value).all()


def test_default_random_state_uses_secure_noise_and_differs_between_fits(data, monkeypatch):
    # Rule 5: random_state=None draws every release from OpenDP's samplers and OS randomness.
    import dpboost._mechanisms as mechanisms

    calls = []
    original = mechanisms.SecureNoise.exponential

    def spy(self, utilities, scale):
        calls.append(scale)
        return original(self, utilities, scale)

    monkeypatch.setattr(mechanisms.SecureNoise, "exponential", spy)
    X, y = data
    a = _fit(X, y, random_state=None, n_estimators=3, max_depth=2)
    b = _fit(X, y, random_state=None, n_estimators=3, max_depth=2)
    assert len(calls) == 2 * 3 * 2  # every level of every tree of both fits
    assert not np.array_equal(a._forest.leaf_value, b._forest.leaf_value)
    assert a.privacy_spent_ == b.privacy_spent_ == 1.0


# Split selection: random splits are data-independent; cyclical trees use one feature each.
def test_random_splits_do_not_depend_on_the_data(data):
    X, y = data
    # sequential: no record partition, so both fits draw the same random stream
    kw = {"split_selection": "random", "random_state": 7, "budget_allocation": "sequential"}
    a = _fit(X, y, **kw)
    b = _fit(X[: len(X) // 2], 1 - y[: len(y) // 2], **kw)
    np.testing.assert_array_equal(a._forest.split_feature, b._forest.split_feature)
    np.testing.assert_array_equal(a._forest.split_bin, b._forest.split_bin)
    np.testing.assert_array_equal(a._forest.missing_left, b._forest.missing_left)
    uniform = [e for e in a.privacy_ledger_ if e.mechanism == "uniform"]
    assert len(uniform) == 12 * 3 and all(e.epsilon == 0 for e in uniform)
    assert a.privacy_spent_ == pytest.approx(1.0)


def test_cyclical_tree_t_splits_on_feature_t_mod_d(data):
    X, y = data
    clf = _fit(X, y, split_selection="cyclical")
    for t in range(clf.n_estimators):
        assert (clf._forest.split_feature[t] == t % X.shape[1]).all()


@pytest.mark.parametrize("leaf_noise", ["laplace", "average"])
@pytest.mark.parametrize("budget_allocation", ["sequential", "parallel"])
def test_a_leaf_released_with_sensitivity_zero_is_the_constant_zero(data, leaf_noise,
                                                                     budget_allocation):
    # Regression (issue "Safe by default", 1): with learning_rate=1 every GLC bound after the
    # first tree is exactly 0; the secure path released the clipped value unnoised, and
    # clip(v, -0.0, 0.0) kept the sign of the exact leaf sum, visible in the JSON and the text.
    X, y = data
    kw = dict(epsilon=1.0, delta=0.0, learning_rate=1.0, budget_allocation=budget_allocation,
              leaf_noise=leaf_noise, split_selection="exponential", split_candidates="uniform",
              min_child_weight=0.0, n_estimators=4, max_depth=2, feature_bounds=(-1, 1),
              classes=[0, 1], loss="square")
    for random_state in (None, 0):
        clf = DPGBClassifier(random_state=random_state, **kw).fit(X, y)
        later = clf._forest.leaf_value[1:]
        assert (later == 0).all() and not np.signbit(later).any()
        negative_zero = re.compile(r"-0(\.0+)?(?![.\d])")  # -0.0 or -0, not -0.031
        assert not negative_zero.search(clf.to_json())
        assert not negative_zero.search(clf.export_text(1))


def test_glc_bounds_that_underflow_are_planned_as_constant_leaves():
    # (1 - 0.9)^position underflows for a few hundred trees: such leaves are the constant 0
    # (sensitivity 0), never Laplace noise on a subnormal scale.
    plan = plan_budget(epsilon=1.0, n_estimators=400, max_depth=2, learning_rate=0.9,
                       l2_regularization=0.1, budget_allocation="sequential",
                       trees_per_ensemble=50, leaf_clipping=True)
    sensitivities = [tb.leaf_sensitivity for tb in plan.trees]
    assert sensitivities[0] > 0 and sensitivities[-1] == 0.0
    assert all(s == 0.0 or s >= 2 * 2.0**-52 for s in sensitivities)


def test_a_seeded_random_state_warns_and_none_does_not(data):
    X, y = data
    kw = dict(n_estimators=2, max_depth=2, feature_bounds=(-1, 1), classes=[0, 1])
    for seed in (0, np.random.default_rng(0)):
        with pytest.warns(ReproducibleNoiseWarning, match="reproducible"):
            DPGBClassifier(random_state=seed, **kw).fit(X[:200], y[:200])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReproducibleNoiseWarning)
        DPGBClassifier(random_state=None, **kw).fit(X[:200], y[:200])
