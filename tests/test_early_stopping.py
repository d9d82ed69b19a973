"""Early stopping on a private validation score (``_early_stopping``; docs/privacy.md, Early
stopping): the accounting argument's inequality, the held-out records, the stopping rule on
released values, the fitted attributes, the refusals, and record-and-replay."""

import dataclasses
import math
import warnings

import numpy as np
import pytest
from replay_harness import EARLY_STOPPING, run_config

from dpboost import DPGBClassifier, DPGBRegressor, PrivacyAccountant, ReproducibleNoiseWarning
from dpboost._accounting import compose, compose_pure, compose_rdp, zcdp_rho
from dpboost._boosting import select_records
from dpboost._budget import _first_tree, plan_budget
from dpboost._early_stopping import (
    VALIDATION_INTERVAL,
    EarlyStopping,
    _all_orders,
    draw_held_out,
    plan_validation,
    tree_curve,
    validation_loss,
)
from dpboost._loss import make_loss
from dpboost._records import Partition, RecordCoins

PLAN = dict(max_depth=3, learning_rate=0.1, l2_regularization=1.0,
            budget_allocation="sequential", trees_per_ensemble=1, leaf_clipping=True)


def _plan(epsilon, delta, n_estimators=40, **kwargs):
    plan = plan_budget(epsilon=epsilon, delta=delta, n_estimators=n_estimators,
                       **{**PLAN, **kwargs})
    return plan_validation(plan, 2.0, kwargs.get("n_outputs", 1), delta)


SWEEP = [dict(epsilon=e, delta=d, leaf_noise=leaf, split_selection=s, subsample=q)
         for e in (0.1, 1.0, 8.0) for d in (1e-5, 1e-8)
         for leaf, s, q in (("gaussian", "random", 1.0), ("gaussian", "random", 0.3),
                            ("gaussian", "exponential", 1.0), ("laplace", "exponential", 1.0),
                            ("average", "random", 0.5))]


@pytest.mark.parametrize("setting", SWEEP, ids=lambda s: "-".join(map(str, s.values())))
def test_validation_curve_is_below_the_trees_curve_at_every_order(setting):
    plan = _plan(**setting)
    trees = dataclasses.replace(plan, sketch=None, hessian_sketches=(), validation=())
    entries, repeats = _first_tree(trees, len(plan.trees))
    orders = _all_orders()
    curve = tree_curve(entries, repeats, orders)
    (release, *_) = plan.validation
    k = len(plan.validation)
    assert k == 40 // VALIDATION_INTERVAL and release.held_out and release.mechanism == "gaussian"
    validation = k * np.asarray(orders) / (2.0 * release.noise_multiplier**2)
    assert np.all(validation <= curve)
    # and tight: the bound touches the curve at its best order (within the margin)
    assert np.max(validation / curve) > 1 - 1e-6


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_pure_validation_releases_sum_to_at_most_the_trees_epsilon(epsilon):
    plan = _plan(epsilon, 0.0)
    trees = [e for e in plan.entries if e.tree >= 0 and not e.held_out]
    spent = math.fsum(e.epsilon for e in plan.validation)
    assert all(e.mechanism == "laplace" for e in plan.validation)
    assert spent <= compose_pure(trees) * (1 + 1e-12)


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_held_out_releases_are_left_out_of_every_composition(delta):
    plan = _plan(1.0, delta, leaf_noise="gaussian" if delta else "laplace",
                 split_selection="random" if delta else "exponential")
    without = plan_budget(epsilon=1.0, delta=delta, n_estimators=40,
                          leaf_noise="gaussian" if delta else "laplace",
                          split_selection="random" if delta else "exponential", **PLAN)
    rest = [e for e in plan.entries if not e.held_out]
    assert plan.epsilon == compose(plan.entries, delta) >= without.epsilon
    assert rest == without.entries
    # With the checks the PLD accountant does not apply (they are calibrated against the
    # trees' Renyi curve): the Renyi epsilon of the trees stands.
    assert compose(plan.entries, delta) == (compose_rdp(rest, delta) if delta else
                                            compose(rest, delta))
    if delta:
        assert compose_rdp(plan.entries, delta) == compose_rdp(rest, delta)
        assert zcdp_rho(plan.entries) == zcdp_rho(rest)


def test_plan_order_puts_each_check_after_its_stage():
    plan = _plan(1.0, 1e-5, n_estimators=25, leaf_noise="gaussian", split_selection="random")
    entries = plan.entries
    checks = [i for i, e in enumerate(entries) if e.held_out]
    assert [entries[i].tree for i in checks] == [9, 19]  # 25 stages: checks after 10 and 20
    assert all(entries[i - 1].tree == entries[i].tree for i in checks)
    assert sorted(entries, key=lambda e: (e.tree, e.level)) == entries


def test_loss_clips():
    assert make_loss("square", 1).validation_clip(1) == 2.0
    assert make_loss("logistic", 1).validation_clip(1) == pytest.approx(2 * math.log(2))
    assert make_loss("softmax", 1).validation_clip(1) == pytest.approx(2 * math.log(2))
    assert make_loss("softmax", 4).validation_clip(4) == pytest.approx(2 * math.log(4))


def test_softmax_losses_are_the_negative_log_likelihood():
    raw = np.array([[0.5, -1.0], [2.0, 0.0], [-0.3, 0.7]])
    y = np.array([[1.0, -1.0], [-1.0, -1.0], [-1.0, 1.0]])  # classes 0 and 2, one-hot
    p = np.exp(raw) / np.exp(raw).sum(axis=0)
    np.testing.assert_allclose(make_loss("softmax", 3).record_losses(raw, y),
                               -np.log([p[0, 0], p[2, 1]]))


def _partition(n=1000, seed=0, held_out=None):
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=(1, n))
    return Partition(None, y, raw=rng.normal(size=(1, n)) * 3, positions={},
                     gradients=rng.normal(size=(1, n)).astype(np.float32), held_out=held_out)


def test_held_out_coins_are_the_records_own():
    coins = RecordCoins(bytes(32))
    a = draw_held_out(_partition(seed=0), coins, 0.2).held_out
    b = draw_held_out(_partition(seed=1), coins, 0.2).held_out
    np.testing.assert_array_equal(a, b)  # the same rows are held out, whatever the data
    # 1000 records at 0.2: the count is Binomial(1000, 0.2), within 6 sd except w.p. < 1e-8
    assert abs(a.sum() - 200) < 6 * math.sqrt(160)
    # a partition of rows 500..999 draws the same coins for them
    tail = dataclasses.replace(_partition(n=500), first_row=500)
    np.testing.assert_array_equal(draw_held_out(tail, coins, 0.2).held_out, a[500:])


def test_held_out_records_never_enter_a_tree():
    partition = draw_held_out(_partition(), RecordCoins(bytes(32)), 0.3)
    chosen = select_records(partition, RecordCoins(bytes(32)), 0, 0, None, 1.0, 1.0, False).tree
    assert not partition.held_out[chosen.selected].any()
    assert chosen.selected.size == np.count_nonzero(~partition.held_out)


@pytest.mark.parametrize("loss", ["square", "logistic"])
def test_validation_loss_is_clipped_and_of_held_out_records_only(loss):
    partition = draw_held_out(_partition(), RecordCoins(bytes(32)), 0.3)
    loss = make_loss(loss, 1)
    clip = loss.validation_clip(1)
    total = validation_loss(partition, loss, clip)[0]
    assert 0 <= total <= clip * partition.held_out.sum()
    changed = partition.raw.copy()
    changed[:, ~partition.held_out] = 1e6  # the trees' records do not count
    assert validation_loss(dataclasses.replace(partition, raw=changed), loss, clip)[0] == total
    worst = dataclasses.replace(partition, raw=-1e6 * partition.y_rows)
    assert validation_loss(worst, loss, clip)[0] == pytest.approx(clip * partition.held_out.sum())


def test_stopping_rule_reads_released_values_only():
    plan = _plan(1.0, 1e-5, n_estimators=60, leaf_noise="gaussian", split_selection="random")
    stopping = EarlyStopping(plan.validation, 20, make_loss("square", 1), 0.1, 60)
    released = iter([5.0, 3.0, 4.0, 3.5, 1.0, 0.0])

    class Fixed:  # a record set whose sums are ignored: the mechanism's output is replaced
        def reduce(self, function, *args):
            return np.zeros(1)

    class Noise:
        def observe(self, entry, values):
            pass

        def gaussian(self, values, scale, sensitivity):
            return np.full(values.shape, next(released))

    from dpboost._accounting import PrivacyLedger
    ledger = PrivacyLedger()
    stops = [stopping.check(Fixed(), e.tree, e.tree + 1, Noise(), ledger)
             for e in plan.validation[:4]]
    # best 3.0 after stage 20; 4.0 at 30 (10 stages old), 3.5 at 40 (20 old): stop at 40
    assert stops == [False, False, False, True] and stopping.n_iter == 40
    assert stopping.scores == [5.0, 3.0, 4.0, 3.5]
    assert [e.held_out for e in ledger.entries] == [True] * 4


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 4))
    y = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    return X, y


def _regressor(**kwargs):
    params = dict(epsilon=1.0, n_estimators=60, max_depth=3, feature_bounds=[(-1, 1)] * 4,
                  target_bounds=(-2, 2), random_state=0, early_stopping=True,
                  n_iter_no_change=10, n_samples_hint=None)
    return DPGBRegressor(**{**params, **kwargs})


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        yield


def test_fit_attributes_and_ledger_prefix():
    X, y = _data()
    stopped = None
    for seed in range(6):
        model = _regressor(random_state=seed, learning_rate=1.0).fit(X, y)
        scores = model.validation_score_
        assert model.n_iter_ == model.n_estimators_ == model._forest.n_stages
        assert scores.shape == (model.n_iter_ // VALIDATION_INTERVAL,)
        assert model.n_iter_ % VALIDATION_INTERVAL == 0
        # the rule, recomputed from the released scores alone
        best = np.minimum.accumulate(scores)
        stale = [10 * (i + 1) - 10 * (int(np.argmax(scores[:i + 1] == best[i])) + 1)
                 for i in range(scores.size)]
        expected = next((10 * (i + 1) for i, s in enumerate(stale) if s >= 10), 60)
        assert model.n_iter_ == expected
        # charged as planned: the whole plan, whatever the stage it stopped at
        plan = _plan_of(model)
        assert model.privacy_ledger_ == [dataclasses.replace(e, fit=model.privacy_ledger_[0].fit)
                                         for e in plan.entries]
        assert model.privacy_spent_ == pytest.approx(plan.epsilon, rel=1e-12)
        assert model.predict(X).shape == (X.shape[0],)
        if model.n_iter_ < 60:
            stopped = model
    assert stopped is not None  # at learning_rate 1 the noisy loss stops improving


def _plan_of(model):
    from dpboost._boosting import plan_fit
    from dpboost._loss import make_loss

    return plan_fit(model._configs(None, 4)[0], make_loss("square", 1), 1, 4)


def test_off_by_default_and_n_iter():
    X, y = _data(500)
    model = _regressor(early_stopping=False, n_estimators=12).fit(X, y)
    assert model.n_iter_ == 12 and not hasattr(model, "validation_score_")
    assert not any(e.held_out for e in model.privacy_ledger_)
    assert DPGBClassifier().early_stopping is False


def test_early_stopping_changes_nothing_else_when_it_does_not_stop():
    X, y = _data(800)
    # n_iter_no_change larger than the fit: every planned stage is grown
    model = _regressor(n_iter_no_change=1000, n_estimators=20).fit(X, y)
    assert model.n_iter_ == 20 and model.validation_score_.shape == (2,)
    planned = _plan_of(model).entries
    assert [dataclasses.replace(e, fit="") for e in model.privacy_ledger_] == planned


@pytest.mark.parametrize("params, message", [
    (dict(warm_start=True), "warm_start=False"),
    (dict(budget_allocation="eoe"), "budget_allocation='sequential'"),
    (dict(renyi_filter=0.5, leaf_noise="gaussian"), "renyi_filter=None"),
])
def test_refused_before_any_budget_is_spent(params, message):
    accountant = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    X, y = _data(200)
    with pytest.raises(ValueError, match=message):
        _regressor(accountant=accountant, **params).fit(X, y)
    assert "spent 0 by 0 fits" in accountant.report()


@pytest.mark.parametrize("value, name", [(0.0, "validation_fraction"),
                                         (1.0, "validation_fraction"),
                                         (0, "n_iter_no_change")])
def test_parameter_constraints(value, name):
    with pytest.raises(ValueError, match=name):
        _regressor(**{name: value}).fit(*_data(100))


def test_classifier_softmax_early_stopping():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(1500, 3))
    y = np.digitize(X[:, 0] + 0.2 * rng.normal(size=1500), [-0.3, 0.3])
    model = DPGBClassifier(epsilon=2.0, n_estimators=30, classes=[0, 1, 2],
                           feature_bounds=[(-1, 1)] * 3, random_state=1, early_stopping=True,
                           n_iter_no_change=10).fit(X, y)
    assert model._forest.n_outputs == 3 and model.n_iter_ in (20, 30)
    assert model.predict_proba(X).shape == (1500, 3)


def test_secure_noise_fit():
    X, y = _data(600)
    model = _regressor(random_state=None, n_estimators=20).fit(X, y)
    assert model.validation_score_.dtype == np.float64 and model.n_iter_ in (10, 20)
    assert model.validation_score_.shape == (model.n_iter_ // VALIDATION_INTERVAL,)


@pytest.mark.parametrize("config", EARLY_STOPPING,
                         ids=lambda c: f"{c['task']}-{c['data']}@{c['coin']}")
def test_replay_early_stopping(config):
    result = run_config(config)  # (a), (b), (c) with the prefix rule: raises on a failure
    assert result.estimator_d.n_iter_ == result.estimator_dp.n_iter_
    assert len(result.estimator_d.validation_score_) == result.estimator_d.n_iter_ // 10
    if config["task"] == "ternary-softmax":
        # seeded: this fit stops at stage 20 of 30, so check (c)'s prefix rule is exercised
        assert result.estimator_d.n_iter_ == 20


@pytest.mark.slow
def test_a_dask_fit_stops_as_the_in_memory_fit(assert_same_model):
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    from dpboost.dask import DaskDPGBRegressor

    X, y = _data(2000)
    params = dict(epsilon=1.0, n_estimators=40, max_depth=3, feature_bounds=[(-1, 1)] * 4,
                  target_bounds=(-2, 2), random_state=2, early_stopping=True,
                  n_iter_no_change=10, learning_rate=1.0)
    local = DPGBRegressor(**params).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cluster's own start-up warnings
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        chunks = (1, 800, 1199)  # uneven, one of a single row: the coins are the rows'
        on_dask = DaskDPGBRegressor(client=client, **params).fit(
            da.from_array(X, chunks=(chunks, 4)), da.from_array(y, chunks=(chunks,)))
    assert_same_model(local, on_dask)
    assert on_dask.n_iter_ == local.n_iter_
    np.testing.assert_allclose(on_dask.validation_score_, local.validation_score_, rtol=1e-9)
