"""The private initial score (``init="private"``, ``_initial``): its sensitivity, its plan and
ledger entry, the loss maps from released shares, replay on neighbouring datasets and what a
fit leaves behind (docs/privacy.md, Private initial score)."""

import math

import numpy as np
import pytest
from replay_harness import INITIAL_SCORE, run_config

from dpboost import DPGBClassifier, DPGBRegressor
from dpboost._accounting import PrivacyLedger
from dpboost._budget import plan_budget
from dpboost._initial import (
    INITIAL_SHARE,
    LAPLACE_FROM_SHARE,
    initial_statistics,
    private_initial_scores,
    released_shares,
)
from dpboost._loss import LogisticLoss, SoftmaxLoss, SquareLoss
from dpboost._noise import make_noise
from dpboost._records import InMemoryRecords, Partition
from dpboost._sensitivities import initial_statistics_sensitivity


def _rows(y_scaled, weights=None):
    y = np.asarray(y_scaled, dtype=np.float64)
    y = y[:, None] if y.ndim == 1 else y
    return Partition.of(np.zeros((y.shape[0], 1)), y, weights=weights)


@pytest.mark.parametrize("n_outputs, weighted", [(1, False), (1, True), (3, False), (3, True)])
def test_one_record_moves_the_statistics_by_at_most_the_sensitivity(n_outputs, weighted):
    # Any record (a target anywhere in [-1, 1], or any one-hot class) of weight up to W.
    rng = np.random.default_rng(0)
    W = 2.5 if weighted else 1.0
    for _ in range(200):
        n = int(rng.integers(0, 20))
        if n_outputs == 1:
            y = rng.uniform(-1, 1, size=(n + 1, 1))
        else:
            y = -np.ones((n + 1, n_outputs))
            y[np.arange(n + 1), rng.integers(0, n_outputs, n + 1)] = 1.0
        w = rng.uniform(0, W, n + 1).astype(np.float32) if weighted else None
        d = initial_statistics(_rows(y[:n], None if w is None else w[:n]))
        d2 = initial_statistics(_rows(y, w))
        assert np.abs(d2 - d).sum() <= initial_statistics_sensitivity(W) * (1 + 1e-12)


def test_the_statistics_are_the_class_counts_or_the_target_sums():
    assert initial_statistics(_rows([-1.0, 1.0, 1.0, 0.0])).tolist() == [1.5, 2.5]
    y = -np.ones((4, 3))
    y[[0, 1, 2, 3], [0, 2, 2, 1]] = 1.0
    assert initial_statistics(_rows(y)).tolist() == [1.0, 1.0, 2.0]


def test_the_losses_map_shares_to_the_constant_that_fits_them():
    shares = np.array([0.25, 0.75])
    assert SquareLoss().initial_scores(shares, 1).tolist() == [0.5]  # mean label 2 p - 1
    np.testing.assert_allclose(LogisticLoss().initial_scores(shares, 1), [math.log(3.0)])
    three = np.array([0.2, 0.3, 0.5])
    softmax = SoftmaxLoss().initial_scores(three, 3)
    np.testing.assert_allclose(np.exp(softmax) / np.exp(softmax).sum(), three)
    np.testing.assert_allclose(LogisticLoss().initial_scores(three, 3),
                               np.log(three / (1 - three)))
    # a class absent from exact shares (epsilon = inf) gives a finite score
    assert np.isfinite(LogisticLoss().initial_scores(np.array([1.0, 0.0]), 1)).all()


def test_shares_of_a_release_buried_in_noise_are_near_uniform():
    np.testing.assert_allclose(released_shares(np.array([-50.0, 3.0]), 1e6), [0.5, 0.5],
                               atol=1e-5)
    np.testing.assert_allclose(released_shares(np.array([300.0, 100.0]), 0.0), [0.75, 0.25])
    assert released_shares(np.array([-1.0, -2.0]), 0.0).tolist() == [0.5, 0.5]


@pytest.mark.parametrize("delta, mechanism", [(0.0, "laplace"), (1e-5, "gaussian")])
def test_the_plan_holds_the_release_within_the_budget(delta, mechanism):
    common = dict(epsilon=0.5, n_estimators=20, max_depth=3, learning_rate=0.1,
                  l2_regularization=1.0, budget_allocation="sequential", trees_per_ensemble=1,
                  leaf_clipping=True, delta=delta, leaf_noise="average")
    plan = plan_budget(**common, initial_statistics=2, sample_weight_bound=2.0)
    entry = plan.initial
    assert entry.mechanism == mechanism and entry.sensitivity == 2.0
    assert entry in plan.entries and (entry.tree, entry.level) == (-1, -1)
    if delta == 0:
        assert entry.epsilon == INITIAL_SHARE * 0.5
    assert plan.epsilon <= 0.5
    assert plan_budget(**common).initial is None


@pytest.mark.parametrize("share", [0.1, 0.3, 0.45, 0.5, 0.6])
@pytest.mark.parametrize("epsilon", [0.01, 0.1, 1.0])
def test_the_gaussian_release_is_planned_with_the_trees_at_any_epsilon(monkeypatch, share,
                                                                     epsilon):
    # A multiplier fixed from epsilon (the pure share's zCDP equivalent) alone spent more than
    # epsilon = 0.01 at share 0.3, delta 5e-8; set in the bisection it gets `share` of the zCDP
    # budget next to the trees' (random splits: a tree's zCDP is its leaves'), and always fits.
    import dpboost._budget

    monkeypatch.setattr(dpboost._budget, "INITIAL_SHARE", share)
    dpboost._budget.plan_budget.cache_clear()
    try:
        plan = plan_budget(epsilon=epsilon, n_estimators=20, max_depth=3, learning_rate=0.1,
                           l2_regularization=1.0, budget_allocation="sequential",
                           trees_per_ensemble=1, leaf_clipping=True, delta=5e-8,
                           leaf_noise="gaussian", split_selection="random",
                           initial_statistics=2, accounting="auto")
    finally:
        dpboost._budget.plan_budget.cache_clear()
    assert plan.epsilon <= epsilon
    if share >= LAPLACE_FROM_SHARE:
        # most of the budget on one release: pure Laplace at the share, the trees the rest
        assert (plan.initial.mechanism, plan.initial.epsilon) == ("laplace", share * epsilon)
        assert plan.trees[0].leaf_noise_multiplier > 0
        return
    # the share of epsilon is what the trees give up (the PLD refinement then raises both)
    assert plan.initial.mechanism == "gaussian"
    common = dict(n_estimators=20, max_depth=3, learning_rate=0.1, l2_regularization=1.0,
                  budget_allocation="sequential", trees_per_ensemble=1, leaf_clipping=True,
                  delta=5e-8, leaf_noise="gaussian", split_selection="random")
    alone = plan_budget(epsilon=(1.0 - share) * epsilon, **common)
    everything = plan_budget(epsilon=epsilon, **common, accounting="auto")
    assert (everything.trees[0].leaf_noise_multiplier <= plan.trees[0].leaf_noise_multiplier
            <= alone.trees[0].leaf_noise_multiplier)


def test_exact_release_is_the_mean_target():
    y = np.array([-1.0, -0.5, 0.5, 0.8])
    plan = plan_budget(epsilon=math.inf, n_estimators=1, max_depth=1, learning_rate=0.1,
                       l2_regularization=1.0, budget_allocation="sequential",
                       trees_per_ensemble=1, leaf_clipping=True, initial_statistics=2)
    scores = private_initial_scores(InMemoryRecords(_rows(y)), SquareLoss(), 1, plan.initial,
                                    make_noise(0), PrivacyLedger())
    np.testing.assert_allclose(scores, [y.mean()])


@pytest.fixture
def regression():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(400, 3))
    return X, 20.0 + 5.0 * X[:, 0] + rng.normal(size=400)


def test_a_fit_ledgers_the_release_and_starts_from_the_released_mean(regression):
    X, y = regression
    common = dict(epsilon=1.0, feature_bounds=(0, 1), target_bounds=(0, 100), n_estimators=5,
                  random_state=0, n_samples_hint=None)
    model = DPGBRegressor(**common, init="private").fit(X, y)
    initial = [e for e in model.privacy_ledger_ if e.tree == -1 and e.level == -1]
    assert len(initial) == 1 and initial[0].mechanism == "gaussian"
    assert model.privacy_spent_ <= 1.0
    # the first stage carries F0: near the mean of 20-25 (the midpoint 50 of init="zero")
    first = model.predict(X, iteration_range=(0, 1))
    assert abs(first.mean() - y.mean()) < 5.0
    zero = DPGBRegressor(**common, init="zero").fit(X, y)
    assert not any(e.tree == -1 and e.level == -1 for e in zero.privacy_ledger_)
    assert abs(zero.predict(X, iteration_range=(0, 1)).mean() - 50.0) < 5.0


def test_warm_start_continues_without_a_second_release(regression):
    X, y = regression
    model = DPGBRegressor(epsilon=1.0, feature_bounds=(0, 1), target_bounds=(0, 100),
                          n_estimators=3, warm_start=True, init="private",
                          random_state=0).fit(X, y)
    model.set_params(n_estimators=5).fit(X, y)
    assert sum(e.tree == -1 and e.level == -1 for e in model.privacy_ledger_) == 1


def test_the_classifier_starts_from_the_log_odds():
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, size=(2000, 2))
    y = (rng.uniform(size=2000) < 0.2).astype(int)
    model = DPGBClassifier(epsilon=2.0, feature_bounds=(0, 1), classes=[0, 1], n_estimators=1,
                           init="private", random_state=0).fit(X, y)
    # one tree on uninformative features: predictions near the class share 0.2 (0.5 from F0 = 0)
    assert abs(model.predict_proba(X)[:, 1].mean() - 0.2) < 0.1


def test_the_dpboost_preset_starts_from_zero():
    assert DPGBRegressor.dpboost_paper().init == "zero"


@pytest.mark.parametrize("config", INITIAL_SCORE, ids=[f"{c['task']}-{c['leaf_noise']}-d{c['delta']:g}-{c['bounds']}:{c['label']}-init{c['init']}"
                              for c in INITIAL_SCORE])
def test_replay_initial_score(config):
    # Leak test: given D's released transcript, D' (one more record at an extreme) releases the
    # same model, attributes and output bit for bit; each release moves within its sensitivity.
    run_config(config)


def test_replay_flags_an_understated_initial_sensitivity(monkeypatch):
    # Negative control: the planner claims half the sensitivity; the added target at the upper
    # bound moves one coordinate by 1.
    import dpboost._budget
    import dpboost._initial

    monkeypatch.setattr(dpboost._initial, "initial_statistics_sensitivity", lambda w=1.0: 0.5 * w)
    dpboost._budget.plan_budget.cache_clear()
    try:
        with pytest.raises(AssertionError, match=r"exceeds the declared sensitivity 0\.5"):
            run_config(INITIAL_SCORE[1])
    finally:
        dpboost._budget.plan_budget.cache_clear()


def test_a_small_hinted_row_count_times_epsilon_releases_the_mean_with_few_trees(regression):
    # The regime is read from public inputs only: the hint and epsilon, not the data's 400 rows.
    from dpboost._auto import (
        SMALL_GIVEN_TREES_SHARE,
        SMALL_INITIAL_SHARE,
        SMALL_MIN_CHILD_WEIGHT,
        SMALL_TREES,
        resolve_config,
        resolve_configs,
        resolve_min_child_weight,
    )

    params = DPGBRegressor(epsilon=0.1, n_samples_hint=6999).get_params(deep=False)
    [small] = resolve_configs(params, 1.0, regression=True, n_features=3)
    assert (small.init, small.n_estimators, small.initial_share, small.min_child_weight) == (
        "private", SMALL_TREES, SMALL_INITIAL_SHARE, SMALL_MIN_CHILD_WEIGHT)
    rule = resolve_min_child_weight("auto", "gaussian", 0.1, 1.0)
    assert rule == 2000.0 != SMALL_MIN_CHILD_WEIGHT
    for hint in (7000, None):  # 700 and above, or no hint: the large-data rules, init "zero"
        [large] = resolve_configs({**params, "n_samples_hint": hint}, 1.0, regression=True,
                                  n_features=3)
        assert (large.init, large.n_estimators, large.initial_share,
                large.min_child_weight) == ("zero", 200, None, rule)
    explicit = resolve_config({**params, "n_estimators": 50, "init": "zero",
                               "min_child_weight": 5.0}, 1.0, regression=True, n_features=3)
    assert (explicit.init, explicit.n_estimators, explicit.min_child_weight) == ("zero", 50, 5.0)
    # a number of trees given keeps the weight threshold, and the mean takes the larger share
    more = resolve_config({**params, "n_estimators": 50}, 1.0, regression=True, n_features=3,
                          n_samples=6999)
    assert (more.init, more.n_estimators, more.initial_share, more.min_child_weight) == (
        "private", 50, SMALL_GIVEN_TREES_SHARE, rule)
    # the classifier has no hint; its "auto" init is "zero"
    classifier = DPGBClassifier(epsilon=0.1, init="auto").get_params(deep=False)
    assert resolve_config(classifier, 0.25, regression=False).init == "zero"
    X, y = regression
    common = dict(epsilon=1.0, feature_bounds=(0, 1), target_bounds=(0, 100), random_state=0)
    # a hint far from the 400 rows gives the same model as one near them (it is not checked)
    near = DPGBRegressor(**common, n_samples_hint=400).fit(X, y)
    far = DPGBRegressor(**common, n_samples_hint=230).fit(X, y)
    assert near.n_estimators_ == SMALL_TREES
    np.testing.assert_array_equal(near.predict(X), far.predict(X))
    # one release, within the budget
    release = [e for e in near.privacy_ledger_ if e.tree == -1 and e.level == -1]
    assert len(release) == 1 and near.privacy_spent_ <= 1.0


def test_a_tiny_hinted_row_count_times_epsilon_gives_the_private_mean_alone(regression):
    # Below CONSTANT_N_EPSILON, with init and n_estimators "auto", the whole budget goes to the
    # mean target: no tree, one Laplace release of the whole epsilon.
    from dpboost._auto import (
        CONSTANT_N_EPSILON,
        SMALL_INITIAL_SHARE,
        SMALL_TREES,
        resolve_config,
        resolve_configs,
    )

    params = DPGBRegressor(epsilon=0.1, n_samples_hint=2249).get_params(deep=False)
    assert 2249 * 0.1 < CONSTANT_N_EPSILON <= 2250 * 0.1
    [alone] = resolve_configs(params, 1.0, regression=True, n_features=3)
    assert (alone.init, alone.n_estimators, alone.initial_share) == ("private", 0, 1.0)
    [small] = resolve_configs({**params, "n_samples_hint": 2250}, 1.0, regression=True,
                              n_features=3)
    assert (small.n_estimators, small.initial_share) == (SMALL_TREES, SMALL_INITIAL_SHARE)
    # an explicit init or n_estimators, or a warm start (which adds trees), keeps the trees
    for changed in ({"init": "private"}, {"init": "zero"}, {"n_estimators": 50}):
        assert resolve_config({**params, **changed}, 1.0, regression=True,
                              n_features=3).n_estimators > 0
    [warm] = resolve_configs(params, 1.0, regression=True, n_features=3, warm_start=True)
    assert warm.n_estimators == SMALL_TREES
    X, y = regression
    for delta in (0.0, 1e-6):
        model = DPGBRegressor(epsilon=0.1, delta=delta, feature_bounds=(0, 1),
                              target_bounds=(0, 100), n_samples_hint=100, random_state=0,
                              leaf_noise="gaussian" if delta else "average").fit(X, y)
        [release] = model.privacy_ledger_
        assert (release.mechanism, release.epsilon, release.level) == ("laplace", 0.1, -1)
        assert model.privacy_spent_ <= 0.1 and model.n_estimators_ == 1
        prediction = model.predict(X)
        assert np.ptp(prediction) == 0 and 0 <= prediction[0] <= 100
        assert np.all(model.feature_importances_ == 0)
        # its one tree's splits are a fixed placeholder: no split importance either
        assert np.all(model.feature_importance("split") == 0)
        assert "1 release before the trees" in model.privacy_report()
        assert model.export_text() == f"value: {model._forest.leaf_value[0, 0]:.6g} (every input)"
        loaded = DPGBRegressor.from_json(model.to_json())
        np.testing.assert_array_equal(loaded.predict(X), prediction)
    # no tree can be added to it (its grid was made for none): refused before any budget
    with pytest.raises(ValueError, match="private mean alone"):
        model.set_params(warm_start=True).fit(X, y)
    assert len(model.privacy_ledger_) == 1


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_the_constant_plan_leaves_the_releases_before_it_their_share(delta):
    # Private target bounds come first; the mean gets what they leave, within epsilon.
    from dpboost._budget import plan_budget

    common = dict(epsilon=0.2, n_estimators=0, max_depth=6, learning_rate=0.1,
                  l2_regularization=1.0, budget_allocation="sequential", trees_per_ensemble=1,
                  leaf_clipping=False, delta=delta, initial_statistics=2, initial_share=1.0,
                  split_selection="random", leaf_noise="gaussian" if delta else "laplace",
                  accounting="auto" if delta else "rdp")
    alone = plan_budget(**common)
    assert alone.trees == () and alone.initial.mechanism == "laplace"
    assert alone.initial.epsilon == 0.2 and alone.epsilon <= 0.2
    bounded = plan_budget(**common, bounds_target=True)
    assert bounded.bounds is not None and bounded.epsilon <= 0.2
    assert 0.1 < bounded.initial.epsilon < 0.2
    # nearly all of what the bounds leave: a slightly larger release would pass epsilon
    assert bounded.epsilon > 0.2 * (1 - 1e-9)


@pytest.mark.parametrize("hint", [0, -5, 2.5, "many"])
def test_a_bad_hint_is_refused_before_any_budget_is_spent(regression, hint):
    from sklearn.utils._param_validation import InvalidParameterError

    X, y = regression
    model = DPGBRegressor(epsilon=1.0, feature_bounds=(0, 1), target_bounds=(0, 100),
                          n_samples_hint=hint)
    with pytest.raises(InvalidParameterError, match="n_samples_hint"):
        model.fit(X, y)
    assert not hasattr(model, "privacy_ledger_")


def test_the_planned_share_is_the_configured_one():
    plan = plan_budget(epsilon=0.1, n_estimators=10, max_depth=3, learning_rate=0.1,
                       l2_regularization=1.0, budget_allocation="sequential",
                       trees_per_ensemble=1, leaf_clipping=True, delta=5e-8,
                       leaf_noise="gaussian", split_selection="random", initial_statistics=2,
                       initial_share=0.3)
    # the trees' budgets are those of a plan without it at 70 % of epsilon
    alone = plan_budget(epsilon=0.7 * 0.1, n_estimators=10, max_depth=3, learning_rate=0.1,
                        l2_regularization=1.0, budget_allocation="sequential",
                        trees_per_ensemble=1, leaf_clipping=True, delta=5e-8,
                        leaf_noise="gaussian", split_selection="random")
    assert plan.trees[0].leaf_noise_multiplier == alone.trees[0].leaf_noise_multiplier
    assert plan.initial.mechanism == "gaussian" and plan.epsilon <= 0.1
    # from LAPLACE_FROM_SHARE on, pure Laplace at the share at any delta
    laplace = plan_budget(epsilon=0.1, n_estimators=10, max_depth=3, learning_rate=0.1,
                          l2_regularization=1.0, budget_allocation="sequential",
                          trees_per_ensemble=1, leaf_clipping=True, delta=5e-8,
                          leaf_noise="gaussian", split_selection="random",
                          initial_statistics=2, initial_share=0.5, accounting="auto")
    assert (laplace.initial.mechanism, laplace.initial.epsilon) == ("laplace", 0.05)
    assert laplace.epsilon <= 0.1
    pure = plan_budget(epsilon=0.1, n_estimators=10, max_depth=3, learning_rate=0.1,
                       l2_regularization=1.0, budget_allocation="sequential",
                       trees_per_ensemble=1, leaf_clipping=True, initial_statistics=2,
                       initial_share=0.5)
    assert pure.initial.epsilon == pytest.approx(0.05) and pure.epsilon <= 0.1
