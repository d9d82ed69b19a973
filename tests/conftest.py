"""Shared fixtures: a binary task on public bounds, the classifier and plan factories of the
tests, and a spy on the trees the boosting loop grows.

Factories are fixtures (``make_clf``, ``make_plan``) so that test files need no import from
here; each returns a new object per call with the defaults below, any of which a keyword
overrides.
"""

import atexit
import os
import shutil
import tempfile
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import dpboost._boosting as boosting_module
from dpboost import DPGBClassifier
from dpboost._budget import plan_budget

# The accountants' conversion cache (``_disk_memo``) of this test run: a new directory, so that
# the tests neither read nor write the user's (subprocesses inherit it), removed at the end.
os.environ["DPBOOST_CACHE_DIR"] = tempfile.mkdtemp(prefix="dpboost-test-cache-")
atexit.register(shutil.rmtree, os.environ["DPBOOST_CACHE_DIR"], ignore_errors=True)

# Hypothesis draws the same examples on every run (derandomize: seeded by each test), and a
# slow data draw on a loaded machine is no failure: a verdict chance alone cannot change.
settings.register_profile("dpboost", derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("dpboost")

#: DPBoost's setting (``dpboost_paper``) on the public inputs of :func:`binary`, small.
CLASSIFIER_DEFAULTS = {"feature_bounds": (-1, 1), "classes": [0, 1], "n_estimators": 20,
                       "max_depth": 3, "random_state": 0}

#: A planner call of Algorithm 2's shape: 12 trees of depth 3 in ensembles of 5.
PLAN_DEFAULTS = {"epsilon": 1.0, "n_estimators": 12, "max_depth": 3, "learning_rate": 0.1,
                 "l2_regularization": 0.1, "budget_allocation": "eoe", "trees_per_ensemble": 5,
                 "leaf_clipping": True}


@pytest.fixture(scope="session")
def previous_preset():
    """The classifier's defaults that its S-BDT-like preset changed (trees on every record,
    interactions, g* = 1 with GDF, lambda 1, learning rate 0.3, the Hessian sketch),
    for the tests whose numbers were measured with them."""
    return {"learning_rate": 0.3, "l2_regularization": 1.0, "subsample": 1.0,
            "interaction_cst": None, "gradient_bound": 1.0, "gradient_filtering": True,
            "min_child_weight": "auto", "split_candidates": "hessian"}


@pytest.fixture(scope="session")
def binary():
    """3000 records of 5 features uniform in the public bounds (-1, 1); the label is
    ``x0 + 0.5 x1 > 0``. Read-only: a test that needs to change them copies them."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(3000, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


@pytest.fixture
def make_clf():
    """``make_clf(**params)``: an unfitted ``DPGBClassifier.dpboost_paper`` with
    :data:`CLASSIFIER_DEFAULTS`, overridden by ``params``."""
    def make(**params):
        return DPGBClassifier.dpboost_paper(**{**CLASSIFIER_DEFAULTS, **params})
    return make


@pytest.fixture
def make_plan():
    """``make_plan(**params)``: ``plan_budget`` with :data:`PLAN_DEFAULTS`, overridden by
    ``params``."""
    def make(**params):
        return plan_budget(**{**PLAN_DEFAULTS, **params})
    return make


@pytest.fixture
def grown(monkeypatch):
    """Every tree the boosting loop grows, in growing order: a list of namespaces with
    ``X_binned`` (the binned records, not copied), ``rows`` (the selected rows), ``gradients``,
    ``hessians`` (None for the square loss) and ``kwargs`` (the grower's keyword arguments,
    ``budget`` among them), as ``grow_tree`` received them.

    The spy replaces ``grow_tree`` where the loop looks it up, in ``dpboost._boosting``.
    """
    calls = []
    real = boosting_module.grow_tree

    def spy(records, **kwargs):
        # The estimators' record set is one partition in memory (``_records.InMemoryRecords``).
        partition = records.partition
        tree = partition.tree
        calls.append(SimpleNamespace(
            X_binned=partition.X_binned, rows=tree.selected.copy(),
            gradients=tree.gradients.copy(),
            hessians=None if tree.hessians is None else tree.hessians.copy(), kwargs=kwargs))
        return real(records, **kwargs)

    monkeypatch.setattr(boosting_module, "grow_tree", spy)
    return calls


@pytest.fixture
def assert_same_model():
    """``assert_same_model(a, b)``: two fitted estimators released the same model: equal split
    arrays, leaf values to float rounding (sums added in another order), the same ledger but the
    fits' random identifiers, the same composed epsilon."""
    def check(a, b):
        fa, fb = a._forest, b._forest
        for name in ("split_feature", "split_bin", "missing_left"):
            np.testing.assert_array_equal(getattr(fa, name), getattr(fb, name), err_msg=name)
        np.testing.assert_allclose(fa.leaf_value, fb.leaf_value, rtol=1e-9, atol=1e-12)
        assert ([replace(e, fit="") for e in a.privacy_ledger_]
                == [replace(e, fit="") for e in b.privacy_ledger_])
        assert a.privacy_spent_ == b.privacy_spent_
    return check


class _SeededOS:
    """``os`` as dpboost's noise module sees it, but ``urandom`` reads a seeded generator's
    bytes; ``reads`` lists the byte counts asked for."""

    def __init__(self, seed):
        self._rng = np.random.default_rng(seed)
        self.reads = []

    def urandom(self, n):
        self.reads.append(n)
        return self._rng.bytes(n)

    def __getattr__(self, name):
        return getattr(os, name)


@pytest.fixture
def seeded_os_words(monkeypatch):
    """For tests of the default path (``random_state=None``: ``SecureNoise`` on ``os.urandom``)
    whose verdict depends on the noise drawn: the noise module's ``os.urandom`` returns seeded
    bytes, so that the fit takes the user's path (no ``ReproducibleNoiseWarning``) and the
    verdict is the same on every run. Returns the stand-in (its ``reads``)."""
    import dpboost._noise as noise_module

    seeded = _SeededOS(0)
    monkeypatch.setattr(noise_module, "os", seeded)
    return seeded


@pytest.fixture
def records_unread(monkeypatch):
    """For tests of a refusal that must come before any record is read: the regressor's
    ``_records`` (where a fit first reads the data) raises AssertionError."""
    from dpboost import DPGBRegressor

    def read(*args, **kwargs):
        raise AssertionError("a record was read")

    monkeypatch.setattr(DPGBRegressor, "_records", read)


@pytest.fixture
def fresh_plans():
    """For tests that patch the planner's internals: ``plan_budget`` is memoised, so its cache is
    emptied before the test (a cached plan would hide the patch) and after it (a patched plan
    must not reach later tests); so are a choice of interactions' statistic release and
    ``plan_fit``'s fresh plans."""
    from dpboost._boosting import _fresh_plan
    from dpboost._budget import plan_budget
    from dpboost._interaction_choice import statistic_release
    for memoised in (plan_budget, statistic_release, _fresh_plan):
        memoised.cache_clear()
    yield
    for memoised in (plan_budget, statistic_release, _fresh_plan):
        memoised.cache_clear()
