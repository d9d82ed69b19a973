"""Nothing un-noised leaves fit (PRIVACY.md rule 4): verbose output, warnings, fitted values."""

import re
import warnings

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor, PrivacyLeakWarning


@pytest.fixture(scope="module")
def neighbours():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(1500, 3))
    y = (X[:, 0] > 0).astype(int)
    return (X, y), (np.vstack([X, [[0.9, -0.9, 0.9]]]), np.append(y, 0))


def _mask_times(text):
    return re.sub(r"\d+\.\d+ s", "<time> s", text)


def test_verbose_output_is_the_same_on_neighbouring_datasets(neighbours, capsys):
    outputs = []
    for X, y in neighbours:
        DPGBClassifier(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=6,
                       trees_per_ensemble=2, max_depth=2, random_state=0, verbose=1).fit(X, y)
        outputs.append(_mask_times(capsys.readouterr().out))
    assert outputs[0].count("\n") == 3  # one line per ensemble
    assert outputs[0] == outputs[1]


def test_warnings_carry_no_numbers(neighbours):
    X, y = neighbours[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPGBClassifier(n_estimators=2, max_depth=2, random_state=0, diagnostics=True).fit(X, y)
        DPGBRegressor(n_estimators=2, max_depth=2, random_state=0).fit(X, X[:, 0])
    messages = [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    assert len(messages) == 5  # classes, bounds, diagnostics; bounds, target bounds
    assert not any(re.search(r"\d", m) for m in messages), messages


@pytest.mark.parametrize("lam", [0.0, 3.0])
def test_sensitivities_use_the_configured_l2_regularization(neighbours, lam):
    X, y = neighbours[0]
    clf = DPGBClassifier(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=30,
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
    clf = DPGBClassifier(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=1, max_depth=1,
                         learning_rate=1.0, budget_allocation="sequential", leaf_clipping=False,
                         random_state=0).fit(X, y)
    f, b = clf._split_feature[0, 0], clf._split_bin[0, 0]
    codes = clf._binner.transform(X)[:, f]
    g = -np.where(y == 1, 1.0, -1.0)
    exact = [-g[codes <= b].sum() / ((codes <= b).sum() + 0.1),
             -g[codes > b].sum() / ((codes > b).sum() + 0.1)]
    assert (np.abs(clf._leaf_value[0] - exact) > 1e-9).all()
    np.testing.assert_allclose(clf._leaf_value[0], exact, atol=30 * (1 / 1.1) / 0.5)


def test_splitting_is_not_stopped_by_exact_statistics():
    # All records identical: every node below the root is empty or holds everything. A learner
    # that stops on exact counts or gains would leave nodes unsplit and leaves unreleased; here
    # every tree is complete, every node has a drawn split and every leaf a noised value.
    X, y = np.zeros((400, 3)), np.ones(400, dtype=int)
    clf = DPGBClassifier(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=4, max_depth=3,
                         budget_allocation="sequential", random_state=0).fit(X, y)
    assert clf._split_feature.shape == (4, 7) and clf._leaf_value.shape == (4, 8)
    assert ((clf._split_feature >= 0) & (clf._split_feature < 3)).all()
    assert len({tuple(r) for r in clf._split_feature}) > 1  # drawn, not a fixed default
    assert (clf._leaf_value != 0).all()
    levels = {(e.tree, e.level) for e in clf.privacy_ledger_ if e.mechanism == "exponential"}
    assert levels == {(t, d) for t in range(4) for d in range(3)}
