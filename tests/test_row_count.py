"""The private row count (``n_samples_hint="private"``, ``_row_count``; docs/privacy.md,
Private row count): one Laplace release of the number of records, first, at a stated share of
epsilon, choosing among plans made and reserved before it."""

import math

import numpy as np
import pytest
from replay_harness import ROW_COUNT, run_config

from dpboost import DPGBClassifier, DPGBRegressor, PrivacyAccountant
from dpboost._auto import (
    CONSTANT_COUNT_MARGIN,
    SMALL_TREES,
    count_thresholds,
    regime,
    regime_counts,
)
from dpboost._records import Partition
from dpboost._row_count import ROW_COUNT_SHARE, count_records, row_count_release
from dpboost._sensitivities import row_count_sensitivity


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    return X, X[:, 0] + 0.1 * rng.normal(size=n)


def _regressor(**params):
    return DPGBRegressor(**{"n_samples_hint": "private", "feature_bounds": (-1, 1),
                            "target_bounds": (-2, 2), "random_state": 0, **params})


def _release_as(monkeypatch, released):
    """Make the fit's row count release (its ledger entry as planned) return ``released``."""
    import dpboost._row_count

    monkeypatch.setattr(dpboost._row_count, "release_row_count",
                        lambda records, entry, noise, ledger: (
                            ledger.record(mechanism=entry.mechanism, epsilon=entry.epsilon,
                                          sensitivity=entry.sensitivity, n_nodes=1,
                                          group=entry.group, tree=entry.tree,
                                          level=entry.level), released)[1])


def test_one_record_moves_the_count_by_the_sensitivity():
    y = np.zeros((1, 5))
    counts = [count_records(Partition.of(np.zeros((k, 1)), y[:, :k].T)) for k in (4, 5)]
    assert counts[1] - counts[0] == row_count_sensitivity() == 1.0


@pytest.mark.parametrize("regression, n_features", [(True, None), (False, 14)])
def test_every_regime_has_one_representative_count(regression, n_features):
    thresholds = count_thresholds(regression, n_features)
    values = [value for value, _ in thresholds]
    for epsilon in (0.01, 1.0, 7.0):
        counts = regime_counts(epsilon, thresholds)
        assert [regime(n, epsilon, 0.0, thresholds) for n in counts] == list(
            range(len(values) + 1))
        # the thresholds themselves open the next regime
        assert [regime(t / epsilon * (1 + 1e-12), epsilon, 0.0, thresholds)
                for t in values] == list(range(1, len(values) + 1))
        # and so does each with the margin a released count's noise adds
        scale = row_count_sensitivity() / (ROW_COUNT_SHARE * epsilon)
        assert [regime(n, epsilon, scale, thresholds) for n in counts] == list(
            range(len(values) + 1))
    # without a threshold (a classifier whose schema has no width): one regime
    assert regime_counts(1.0, ()) == [math.inf] and regime(5.0, 1.0, 1.0, ()) == 0


def test_a_released_count_leaves_the_constant_regime_a_margin_of_its_noise_late():
    thresholds = count_thresholds(True, None)
    (constant, _), (small, _) = thresholds
    scale = 100.0  # records, at epsilon 1: n x epsilon units
    late = constant + CONSTANT_COUNT_MARGIN * scale
    assert CONSTANT_COUNT_MARGIN > 0 and late < small
    assert regime(constant + 1.0, 1.0, 0.0, thresholds) == 1  # a public count
    assert regime(late - 1.0, 1.0, scale, thresholds) == 0
    assert regime(late + 1.0, 1.0, scale, thresholds) == 1
    assert regime(small + 1.0, 1.0, scale, thresholds) == 2  # the other threshold stays
    # a margin past the next threshold stops there: no count falls in the small-data regime
    assert [regime(n, 1.0, 1e6, thresholds) for n in (small - 1.0, small + 1.0)] == [0, 2]


@pytest.mark.parametrize("released, splits, sketch", [
    (1e9, "exponential", True), (3000.0, "uniform", True), (1500.0, "uniform", False)])
def test_the_classifiers_interaction_order_and_candidates_follow_its_released_count(
        monkeypatch, released, splits, sketch):
    # Three features at epsilon 1: unrestricted exponential-split trees from 24,000 records,
    # split candidates from the quantile sketch (a Laplace release) from 2,100.
    _release_as(monkeypatch, released)
    X, y = _data(400)
    model = DPGBClassifier(epsilon=1.0, n_samples_hint="private", feature_bounds=(-1, 1),
                           classes=[False, True], n_estimators=5, random_state=0).fit(X, y > 0)
    assert model.row_count_ == released and model.privacy_spent_ <= 1.0
    assert {e.mechanism for e in model.privacy_ledger_[1:]} == (
        {splits, "gaussian"} | ({"laplace"} if sketch else set()))
    assert (model._forest.binner.custom_thresholds is not None) == sketch


@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_the_count_is_released_first_within_the_budget(delta):
    X, y = _data(400)
    model = _regressor(epsilon=1.0, delta=delta,
                       leaf_noise="gaussian" if delta else "average").fit(X, y)
    first = model.privacy_ledger_[0]
    assert (first.mechanism, first.sensitivity) == ("laplace", 1.0)
    assert first.epsilon == pytest.approx(ROW_COUNT_SHARE * 1.0)
    assert model.privacy_spent_ <= 1.0
    assert math.isfinite(model.row_count_) and model.row_count_ >= 0
    # 400 records at epsilon 1 (n x epsilon ~ 400 < 700): the small-data regime was chosen
    assert (model.n_estimators_, model.privacy_ledger_[1].level) == (SMALL_TREES, -1)


@pytest.mark.parametrize("released, n_estimators, n_releases", [
    (1e6, 200, None),  # the large regime
    (400.0, SMALL_TREES, None),  # the small-data regime
    # the constant regime: 275 records at epsilon 1 are past its threshold (225) but within
    # the margin of the count's noise (scale 100 records); one release after the count
    (275.0, 1, 2)])
def test_the_regime_follows_the_released_count(monkeypatch, released, n_estimators, n_releases):
    # The choice reads the released value only: a count released as 10^6 picks the large regime
    # for 400 records.
    _release_as(monkeypatch, released)
    X, y = _data(400)
    model = _regressor(epsilon=1.0).fit(X, y)
    assert model.row_count_ == released and model.n_estimators_ == n_estimators
    if n_releases is not None:
        assert len(model.privacy_ledger_) == n_releases


def test_without_noise_no_count_is_released():
    X, y = _data(300)
    model = _regressor(epsilon=math.inf).fit(X, y)
    assert not hasattr(model, "row_count_")
    assert all(e.level != -4 for e in model.privacy_ledger_)


def test_an_accountant_reserves_every_plan_the_count_may_choose(tmp_path):
    X, y = _data(400)
    for path in (None, tmp_path / "budget.sqlite"):
        accountant = PrivacyAccountant(1.0, 1e-5, path=path)
        model = _regressor(epsilon=1.0, accountant=accountant).fit(X, y)
        assert accountant.spent() == pytest.approx(model.privacy_spent_)
        # nothing is left for a second such fit, whichever regime it would take
        with pytest.raises(Exception, match="Nothing was fitted or spent"):
            _regressor(epsilon=0.5, accountant=accountant).fit(X, y)


def test_a_reservation_holds_the_worst_alternative(tmp_path):
    # While a fit with alternatives is in progress, another fit is checked against the worst.
    for path in (None, tmp_path / "budget.sqlite"):
        accountant = PrivacyAccountant(2.0, 1e-5, path=path)
        cheap = [row_count_release(0.1)]
        dear = [row_count_release(150.0)]  # a Laplace release of epsilon 1.5
        accountant.reserve(cheap, "fit with a choice", alternatives=[dear])
        reopened = accountant if path is None else PrivacyAccountant(2.0, 1e-5, path=path)
        with pytest.raises(Exception, match="would be"):
            reopened.reserve([row_count_release(100.0)], "another fit")  # 1.0 more: 2.5 > 2
        reopened.reserve([row_count_release(40.0)], "a small fit")  # 0.4 more: 1.9


def test_warm_start_reuses_the_released_count():
    X, y = _data(400)
    model = _regressor(epsilon=1.0, warm_start=True, n_estimators=20).fit(X, y)
    count = model.row_count_
    model.set_params(n_estimators=25).fit(X, y)
    assert model.row_count_ == count
    assert sum(e.level == -4 for e in model.privacy_ledger_) == 1


@pytest.mark.parametrize("config", ROW_COUNT, ids=[
    f"{c['leaf_noise']}-d{c['delta']:g}-{c['bounds']}-n{c['n_samples_hint']}-{c.get('n_estimators', 5)}"
    for c in ROW_COUNT])
def test_replay_row_count(config):
    # Leak test: given D's released transcript, D' (one more record) releases the same model,
    # attributes and output bit for bit; the count moves by at most its sensitivity.
    run_config(config)


def test_replay_flags_an_understated_count_sensitivity(monkeypatch):
    import dpboost._row_count

    monkeypatch.setattr(dpboost._row_count, "row_count_sensitivity", lambda: 0.5)
    with pytest.raises(AssertionError, match=r"exceeds the declared sensitivity 0\.5"):
        run_config(ROW_COUNT[0])


def test_a_regime_that_cannot_be_planned_takes_its_neighbours_plan():
    from dpboost._row_count import plan_regimes

    configs = _regressor(epsilon=1.0)._configs(n_features=3)
    assert len(configs) == 3 and all(c.private_row_count for c in configs)
    assert [c.n_estimators for c in configs] == [0, SMALL_TREES, 200]  # constant, small, large

    def refuse(n_estimators):
        def plan(config):
            if config.n_estimators == n_estimators:
                raise ValueError("too small")
            return config.n_estimators
        return plan

    # the nearest regime that can be planned, the larger first
    assert [plan for _, plan in plan_regimes(configs, refuse(SMALL_TREES))] == [0, 200, 200]
    assert [plan for _, plan in plan_regimes(configs, refuse(0))] == [SMALL_TREES, SMALL_TREES,
                                                                       200]

    def refuse_counted(config):
        if config.private_row_count:
            raise ValueError("too small")
        return config.n_estimators

    # no plan with the count: the large regime without one
    [(config, plan)] = plan_regimes(configs, refuse_counted)
    assert (config.private_row_count, plan) == (False, 200)

    with pytest.raises(ValueError, match="always"):
        plan_regimes(configs, lambda c: (_ for _ in ()).throw(ValueError("always")))


def _hockey_gaussian(x, mu):
    """H_(e^x)(N(mu, 1) || N(0, 1)) at any real x (Balle & Wang 2018, Theorem 8)."""
    from scipy.stats import norm

    return norm.cdf(-x / mu + mu / 2) - np.exp(x) * norm.cdf(-x / mu - mu / 2)


def _hockey_laplace(x, epsilon):
    """H_(e^x)(Lap(1, 1 / epsilon) || Lap(0, 1 / epsilon)) at any real x: ``1 - e^((x - eps)
    / 2)`` on [0, eps], 0 beyond, and for x < 0 the other order's by symmetry."""
    def positive(y):
        return np.where(y <= epsilon, -np.expm1((np.minimum(y, epsilon) - epsilon) / 2), 0.0)

    x = np.asarray(x, dtype=np.float64)
    return np.where(x >= 0, positive(x), 1 - np.exp(x) + np.exp(x) * positive(np.abs(x)))


def _adaptive_delta(epsilon, count_epsilon, low, high, n=20_000):
    """Exact hockey-stick divergence at ``e^epsilon`` of: a Laplace count (sensitivity 1) of n
    records against n + 1, then the plan ``low`` where the released count is below
    n + 1/2 and ``high`` above (each a function of x giving its own divergence at e^x). The
    count's privacy loss is ``count_epsilon`` below n, ``-count_epsilon`` above n + 1 and
    linear between, so the divergence is the count's law integrated over the plan's divergence
    at the shifted epsilon (midpoint rule on (n, n + 1), exact masses outside)."""
    c = (np.arange(n) + 0.5) / n
    weight = 0.5 * count_epsilon * np.exp(-count_epsilon * c) / n
    loss = count_epsilon * (1 - 2 * c)
    middle = np.where(c < 0.5, low(epsilon - loss), high(epsilon - loss))
    return float(0.5 * low(epsilon - count_epsilon)
                 + 0.5 * math.exp(-count_epsilon) * high(epsilon + count_epsilon)
                 + np.sum(weight * middle))


def test_a_choice_by_the_count_is_bounded_by_the_envelope_not_by_the_plan_taken():
    # Two plans whose profiles cross (a Laplace release of epsilon 4 and a Gaussian of
    # mu = 2) chosen by a Laplace count of epsilon 0.3 at a neighbouring pair that straddles
    # the threshold: the exact divergence of the adaptive fit at epsilon 3.9 is 31 % above
    # either plan composed with the count as if fixed in advance. Composing the plan taken
    # (the broken accounting) claims less than the truth; the envelope (compose_fits, and its
    # PLD at every epsilon) never does.
    from dpboost._accountant import Alternatives, compose_fits
    from dpboost._accounting import LedgerEntry, compose
    from dpboost._pld import choice_distribution

    count_eps, laplace_eps, mu = 0.3, 4.0, 2.0
    count = row_count_release(count_eps / ROW_COUNT_SHARE)
    assert count.epsilon == pytest.approx(count_eps)
    node = {"group": 0, "tree": 0, "level": 0, "n_nodes": 1, "sensitivity": 1.0}
    plans = {"laplace": LedgerEntry("laplace", laplace_eps, **node),
             "gaussian": LedgerEntry("gaussian", math.inf, noise_multiplier=1 / mu, **node)}
    curves = {"laplace": lambda x: _hockey_laplace(x, laplace_eps),
              "gaussian": lambda x: _hockey_gaussian(x, mu)}

    def truth(epsilon):
        return max(_adaptive_delta(epsilon, count_eps, curves[a], curves[b])
                   for a, b in (("laplace", "gaussian"), ("gaussian", "laplace")))

    target = 3.9
    delta = truth(target)
    fixed = max(_adaptive_delta(target, count_eps, curves[k], curves[k]) for k in curves)
    assert delta > 1.25 * fixed
    # The broken accounting: the plan taken composed with the count as a fixed sequence. When
    # the count picks the Laplace plan it claims (3.886, delta): the fit is not that private.
    assert min(compose([count, plan], delta) for plan in plans.values()) < target
    choice = Alternatives([(count, plan) for plan in plans.values()])
    assert compose_fits([(choice, None)], delta) >= target
    # The envelope's distribution bounds the exact divergence at every epsilon.
    pld = choice_distribution([[(count,)], [(plan,) for plan in plans.values()]], 4.0, 1e-12)
    grid = np.linspace(0.0, 5.0, 51)
    exact = np.array([truth(e) for e in grid])
    assert np.all(pld.get_delta_for_epsilon(grid) >= exact - 1e-9)
    assert exact.max() > 0.5  # the grid covers the range where the profiles cross


def test_the_plans_a_count_chose_among_survive_a_model_file():
    # privacy_spent_ of a counted fit is its choice's bound; a model file keeps the choice
    # (entries at their defaults left out), so that a warm start of the loaded model charges it.
    from dpboost._accountant import fit_epsilon

    X, y = _data(400)
    model = _regressor(epsilon=1.0).fit(X, y)
    assert model._privacy_choices is not None and len(model._privacy_choices) > 1
    loaded = DPGBRegressor.from_json(model.to_json())
    assert loaded._privacy_choices == model._privacy_choices
    assert [e.fit for plan in loaded._privacy_choices for e in plan] == [
        loaded.privacy_ledger_[0].fit] * sum(map(len, model._privacy_choices))
    assert fit_epsilon(loaded.privacy_ledger_, loaded._privacy_choices, 1e-5, 1.0) == (
        model.privacy_spent_)
    # a file whose choices hold an empty ledger is refused by name
    import json

    document = json.loads(model.to_json())
    document["fitted"]["privacy_choices"] = [[]]
    with pytest.raises(ValueError, match="privacy_choices holds .* non-empty ledgers"):
        DPGBRegressor.from_json(json.dumps(document))
