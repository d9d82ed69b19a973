"""Privacy rules of docs/privacy.md checked on the fitted estimators (not statistical audits)."""

import pickle
import re
import warnings

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor, LedgerEntry, ReproducibleNoiseWarning
from dpboost._noise import NumpyNoise, SecureNoise


def test_leaf_clipping_bounds_released_leaves(binary, make_clf):
    X, y = binary
    # At a huge epsilon the Laplace noise is ~1e-6, so released leaves show the GLC clip.
    clf = make_clf(epsilon=1e6, learning_rate=0.3, n_estimators=12,
                   trees_per_ensemble=12).fit(X, y)
    for t in range(12):
        bound = 0.3 * (1 - 0.3) ** t
        assert np.abs(clf._forest.leaf_value[t]).max() <= bound + 1e-3
    assert np.abs(clf._forest.leaf_value[0]).max() > 0.2  # the first tree is not clipped to nothing


@pytest.mark.parametrize("grid", [{}, {"split_candidates": "log", "feature_bounds": (0.0, 1e4)}],
                         ids=["equal-width", "log"])
def test_neighbouring_datasets_share_grid_and_candidates(binary, make_clf, grid):
    # Rule 1: bin edges and the candidate set depend only on public inputs, not on D vs D'.
    X, y = binary
    extreme = np.array([[1e9, -1e9, 0.5, 0.0, 0.0]])
    a = make_clf(epsilon=1.0, n_estimators=12, **grid).fit(X, y)
    b = make_clf(epsilon=1.0, n_estimators=12, **grid).fit(np.vstack([X, extreme]),
                                                           np.append(y, 1))
    assert (a._forest.binner.custom_thresholds is not None) == bool(grid)
    np.testing.assert_array_equal(a._forest.binner.thresholds(), b._forest.binner.thresholds())
    np.testing.assert_array_equal(a.feature_bounds_, b.feature_bounds_)
    assert [e.sensitivity for e in a.privacy_ledger_] == [e.sensitivity for e in b.privacy_ledger_]


# categories_: the public category lists (or, with a PrivacyLeakWarning, lists read from the data).
_FITTED_PUBLIC = {"n_features_in_", "feature_bounds_", "categories_", "classes_", "target_bounds_",
                  "privacy_spent_", "privacy_ledger_", "_forest",
                  # the plans a private row count chose among (from public inputs)
                  "_privacy_choices",
                  # the reprs of the parameters a warm_start fit must keep (public)
                  "_warm_start_params",
                  # the interaction order (resolved from public inputs, or chosen by a release)
                  "interaction_cst_"}
#: The forest: the grid, split choices, released leaves (values and, for Gaussian leaves, their
#: released statistics) and the number of stages.
_FOREST_FIELDS = {"binner", "split_feature", "split_bin", "missing_left", "leaf_value", "n_stages",
                  "leaf_statistics"}


@pytest.mark.parametrize("estimator", [
    DPGBClassifier.dpboost_paper(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=5,
                                 max_depth=2,
                                 random_state=0),
    DPGBRegressor.dpboost_paper(feature_bounds=(-1, 1), target_bounds=(-2, 2), n_estimators=5,
                                max_depth=2,
                                random_state=0),
])
def test_pickled_model_holds_only_public_and_released_values(binary, estimator):
    # Rule 4: whatever leaves fit is a public input, a split choice, a released leaf or the ledger.
    X, y = binary
    target = y if isinstance(estimator, DPGBClassifier) else y - 0.5
    model = pickle.loads(pickle.dumps(estimator.fit(X, target)))
    fitted = {k for k in vars(model) if k.endswith("_") or k.startswith("_")}
    assert fitted <= _FITTED_PUBLIC, fitted - _FITTED_PUBLIC
    assert set(vars(model._forest)) == _FOREST_FIELDS
    # Laplace leaves release only their values: no (gradient sum, weight) may be kept.
    assert np.isnan(model._forest.leaf_statistics).all()
    assert model._forest.split_feature.dtype == np.int32 and model._forest.split_bin.dtype == np.uint8
    assert all(isinstance(e, LedgerEntry) for e in model.privacy_ledger_)
    # Leaf values are the Laplace releases shrunk by the learning rate: a different seed changes
    # every one of them (an exact statistic would repeat).
    other = estimator.set_params(random_state=1).fit(X, target)
    assert (model._forest.leaf_value != other._forest.leaf_value).all()


def test_default_random_state_uses_secure_noise_and_differs_between_fits(binary, make_clf,
                                                                         monkeypatch):
    # Rule 5: random_state=None draws every release from the exact samplers and OS randomness.
    import dpboost._noise as noise_module

    calls = []
    original = noise_module.SecureNoise.exponential

    def spy(self, utilities, scale, sensitivity):
        calls.append(scale)
        return original(self, utilities, scale, sensitivity)

    monkeypatch.setattr(noise_module.SecureNoise, "exponential", spy)
    X, y = binary
    a = make_clf(random_state=None, n_estimators=3, max_depth=2).fit(X, y)
    b = make_clf(random_state=None, n_estimators=3, max_depth=2).fit(X, y)
    assert len(calls) == 2 * 3 * 2  # every level of every tree of both fits
    # Fresh OS words on purpose. False alarm: equal leaves need the first leaf's two discrete
    # Laplace draws (integer scale >= 2**40) to coincide, probability <= 2**-41.
    assert not np.array_equal(a._forest.leaf_value, b._forest.leaf_value)
    assert a.privacy_spent_ == b.privacy_spent_ == 1.0


@pytest.mark.parametrize("leaf_noise", ["laplace", "average"])
@pytest.mark.parametrize("budget_allocation", ["sequential", "parallel"])
def test_a_leaf_released_with_sensitivity_zero_is_the_constant_zero(binary, leaf_noise,
                                                                     budget_allocation):
    # Regression (found in review: a release of sensitivity 0 that depended on the data): with learning_rate=1 every GLC bound after the
    # first tree is exactly 0; the secure path released the clipped value unnoised, and
    # clip(v, -0.0, 0.0) kept the sign of the exact leaf sum, visible in the JSON and the text.
    X, y = binary
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


def test_a_seeded_random_state_warns_and_none_does_not(binary):
    X, y = binary
    kw = dict(n_estimators=2, max_depth=2, feature_bounds=(-1, 1), classes=[0, 1])
    words = np.random.default_rng(0)
    # A noise object is as predictable as what feeds it: numpy's Generator, a SecureNoise on a
    # seeded word stream (the old code warned for neither).
    seeded = (0, np.random.default_rng(0), NumpyNoise(np.random.default_rng(0)),
              SecureNoise(words=lambda n: words.integers(0, 2**64, n, dtype=np.uint64)))
    for random_state in seeded:
        with pytest.warns(ReproducibleNoiseWarning, match="reproducible"):
            DPGBClassifier(random_state=random_state, **kw).fit(X[:200], y[:200])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReproducibleNoiseWarning)
        for random_state in (None, SecureNoise()):
            DPGBClassifier(random_state=random_state, **kw).fit(X[:200], y[:200])
