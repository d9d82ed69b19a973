"""PLD accounting (``_pld``; docs/privacy.md, PLD accounting): dp-accounting's
privacy-loss-distribution accountant where it certifies less than the Renyi conversion."""

import math

import dp_accounting
import numpy as np
import pytest
from scipy.stats import norm

from dpboost import DPGBClassifier
from dpboost._accounting import LedgerEntry, compose, compose_rdp
from dpboost._budget import plan_budget
from dpboost._pld import pld_epsilon, pld_event


def _analytic_gaussian_epsilon(sigma, delta):
    """The exact epsilon of one Gaussian release of noise multiplier sigma (Balle & Wang 2018,
    Theorem 8): delta(eps) = Phi(-eps sigma + 1 / (2 sigma)) - e^eps Phi(-eps sigma - 1 / (2 sigma)),
    decreasing in eps; by bisection."""
    def delta_of(eps):
        return (norm.cdf(-eps * sigma + 0.5 / sigma)
                - math.exp(eps) * norm.cdf(-eps * sigma - 0.5 / sigma))

    low, high = 0.0, 50.0
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if delta_of(mid) > delta else (low, mid)
    return high


def _gaussian(sigma, rate=1.0, **fields):
    return LedgerEntry(**{"mechanism": "gaussian", "epsilon": math.inf, "sensitivity": 1.0,
                          "group": 0, "tree": 0, "level": 0, "n_nodes": 1,
                          "noise_multiplier": sigma, "sampling_rate": rate, **fields})


@pytest.mark.parametrize("sigma, delta", [(1.0, 1e-5), (3.0, 1e-6), (10.0, 5e-8)])
def test_one_gaussian_is_the_analytic_gaussian_mechanism(sigma, delta):
    exact = _analytic_gaussian_epsilon(sigma, delta)
    certified = pld_epsilon([_gaussian(sigma)], delta)
    # an upper bound (pessimistic discretisation), within the discretisation
    assert exact <= certified <= exact + 2e-3
    assert certified < compose_rdp([_gaussian(sigma)], delta)


def test_gaussians_of_one_sampled_tree_merge_into_one():
    sampled = dp_accounting.PoissonSampledDpEvent(0.3, dp_accounting.ComposedDpEvent(
        [dp_accounting.GaussianDpEvent(3.0), dp_accounting.GaussianDpEvent(4.0)]))
    merged = pld_event(sampled)
    assert merged.event.noise_multiplier == pytest.approx((3.0**-2 + 4.0**-2) ** -0.5)
    # unsampled, the merge is exact: two releases of 3 and 4 are one of 2.4
    assert pld_epsilon([_gaussian(3.0), _gaussian(4.0, level=1)], 1e-5) == pytest.approx(
        pld_epsilon([_gaussian(2.4)], 1e-5), abs=2e-3)
    # a sampled tree with an exponential-mechanism level has no PLD here
    assert pld_event(dp_accounting.PoissonSampledDpEvent(
        0.3, dp_accounting.ZCDpEvent(0.1))) is None


@pytest.mark.parametrize("entry", [
    LedgerEntry(mechanism="exponential", epsilon=0.1, sensitivity=1.0, group=0, tree=0,
                level=0, n_nodes=1),
    _gaussian(3.0, held_out=True),
    _gaussian(3.0, filtered=True),
    _gaussian(3.0, delta=1e-9),
    _gaussian(0.1),
    _gaussian(3.0, rate=1e-4),
], ids=["exponential", "held-out", "filtered", "threshold", "tiny-noise", "tiny-rate"])
def test_where_the_pld_does_not_apply_the_renyi_epsilon_stands(entry):
    entries = [_gaussian(5.0, level=1), entry]
    assert pld_epsilon(entries, 1e-5) == math.inf
    assert compose(entries, 1e-5) == compose_rdp(entries, 1e-5)


#: The default classifier's trees: 200, random splits, Gaussian leaves on Poisson samples.
DEFAULT = dict(n_estimators=200, max_depth=6, learning_rate=0.2, l2_regularization=10.0,
               budget_allocation="sequential", trees_per_ensemble=50, leaf_clipping=True,
               leaf_noise="gaussian", split_selection="random", hessian_bound=0.25,
               gradient_bound=0.5, delta=5e-8)


@pytest.mark.parametrize("epsilon, subsample", [(0.01, 0.1), (0.1, 0.1), (1.0, 0.3)])
def test_the_planner_spends_less_noise_within_epsilon(epsilon, subsample):
    renyi = plan_budget(epsilon=epsilon, subsample=subsample, **DEFAULT)
    pld = plan_budget(epsilon=epsilon, subsample=subsample, accounting="auto", **DEFAULT)
    ratio = pld.trees[0].leaf_noise_multiplier / renyi.trees[0].leaf_noise_multiplier
    assert 0.85 < ratio < 0.95  # 6-8 % less noise
    assert pld.epsilon == compose(pld.entries, 5e-8) <= epsilon
    assert pld.epsilon >= 0.99 * epsilon  # within the refinement's precision
    # the Renyi accountant alone would not certify the refined plan
    assert compose_rdp(pld.entries, 5e-8) > epsilon


def test_early_stopping_keeps_the_renyi_plan():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 3))
    y = (X[:, 0] > 0).astype(int)
    common = dict(n_estimators=20, feature_bounds=(-1, 1), classes=[0, 1], random_state=0)
    stopped = DPGBClassifier(early_stopping=True, n_iter_no_change=1000, **common).fit(X, y)
    renyi = DPGBClassifier(accounting="rdp", **common).fit(X, y)
    auto = DPGBClassifier(**common).fit(X, y)
    def noise(model):
        return [e.noise_multiplier for e in model.privacy_ledger_ if e.level == 6]
    assert noise(stopped) == noise(renyi) and noise(auto) < noise(renyi)
    assert stopped.privacy_spent_ <= 1.0 and auto.privacy_spent_ <= 1.0


def test_renyi_deltas_are_dp_accountings_conversion():
    # The vectorised conversion against dp-accounting's compute_delta, order by order.
    from dp_accounting.rdp.rdp_privacy_accountant import compute_delta

    from dpboost._pld import renyi_deltas

    orders = [1.5, 2, 4, 8, 16, 64, 256]
    curve = [0.01 * a for a in orders]  # a zCDP curve, rho = 0.01
    epsilons = np.array([0.0, 0.05, 0.3, 0.7, 2.0])
    expected = [compute_delta(orders, curve, e)[0] for e in epsilons]
    np.testing.assert_allclose(renyi_deltas(orders, curve, epsilons), expected, rtol=1e-12)


def test_the_convex_majorant_is_below_the_points_and_convex_in_exp_epsilon():
    from dpboost._pld import convex_majorant

    epsilons = np.linspace(-2, 2, 81)
    s = np.exp(epsilons)
    convex = np.maximum(0.0, 1 - s / 3) + 0.01 / s  # convex in s already: unchanged
    np.testing.assert_allclose(convex_majorant(epsilons, convex), convex, rtol=1e-12)
    bumpy = convex + 0.05 * (np.arange(81) % 2)  # every other point raised
    hull = convex_majorant(epsilons, bumpy)
    # the raised points leave the hull: the chords of their neighbours, between the convex
    # function (below its chords) and the raised points
    np.testing.assert_allclose(hull[::2], convex[::2], rtol=1e-12)
    assert np.all((convex[1::2] <= hull[1::2]) & (hull[1::2] < bumpy[1::2]))
    slopes = np.diff(hull) / np.diff(s)
    assert np.all(np.diff(slopes) >= -1e-12)


def test_a_choice_of_one_plan_is_that_plans_epsilon():
    # A part of one alternative is a fixed release: its profile distribution certifies the
    # plan's PLD epsilon within the connect-the-dots discretisation (never below).
    from dpboost._pld import choice_epsilon

    plan = plan_budget(epsilon=1.0, n_estimators=20, max_depth=3, learning_rate=0.1,
                       l2_regularization=1.0, budget_allocation="uniform", trees_per_ensemble=20,
                       leaf_clipping=True, delta=1e-5, leaf_noise="gaussian",
                       split_selection="random", subsample=0.3, accounting="auto")
    entries = list(plan.entries)
    exact = pld_epsilon(entries, 1e-5)
    assert exact <= choice_epsilon([[entries]], 1e-5, 1.0) <= exact * 1.002
    # twice the same plan as alternatives: the same
    assert choice_epsilon([[entries, entries]], 1e-5, 1.0) == choice_epsilon([[entries]], 1e-5, 1.0)


def test_a_gaussian_profile_is_at_least_the_exact_one():
    # One Gaussian release of noise multiplier 2: the profile (least of the Renyi conversion and
    # the PLD) bounds the analytic hockey-stick divergence at every epsilon, tightly.
    from dpboost._pld import ledger_profile

    entry = LedgerEntry("gaussian", math.inf, 1.0, 0, 0, 0, 1, noise_multiplier=2.0)
    epsilons = np.linspace(0, 3, 31)
    exact = norm.cdf(-epsilons * 2 + 0.25) - np.exp(epsilons) * norm.cdf(-epsilons * 2 - 0.25)
    profile = ledger_profile([entry], epsilons, 1e-4)
    assert np.all(profile >= exact - 1e-12)
    assert np.all(profile <= exact + 1e-3)
