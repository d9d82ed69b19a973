"""Accounting, ``_accounting``: the ledger, pure-DP composition (parallel inside a group,
sequential across groups), Renyi-DP composition cross-checked with dp-accounting and OpenDP, and
amplification by Poisson subsampling."""

import dataclasses
import logging
import math
import signal
import sys
import time
from contextlib import contextmanager

import numpy as np
import pytest

import dpboost._boosting as boosting_module
from dpboost import DPGBClassifier, DPGBRegressor
from dpboost._accounting import (
    MIN_ACCOUNTED_RATE,
    LedgerEntry,
    PrivacyLedger,
    amplify_pure,
    compose,
    compose_pure,
    compose_rdp,
    deamplify_pure,
    sampled_gaussian_rdp,
)
from dpboost._boosting import plan_fit
from dpboost._budget import plan_budget
from dpboost._loss import make_loss
from dpboost._pld import pld_epsilon
from dpboost._public_inputs import planned_shape


def _entry(epsilon, group=0, tree=0, level=0, mechanism="laplace", sampling_rate=1.0):
    return LedgerEntry(mechanism=mechanism, epsilon=epsilon, sensitivity=1.0, group=group,
                       tree=tree, level=level, n_nodes=1, sampling_rate=sampling_rate)


def test_pure_composition_is_parallel_inside_a_group_and_sequential_across_groups():
    # Levels of a tree add up; entries of one level (disjoint nodes) and the trees of a group
    # (disjoint records) take the largest; groups add up (Li et al. 2020, Theorems 7 and 8).
    group_0 = [_entry(0.125, tree=0, level=0), _entry(0.25, tree=0, level=1),
               _entry(0.5, tree=1, level=0)]
    group_1 = [_entry(0.25, group=1, tree=2), _entry(0.125, group=1, tree=2)]
    assert compose_pure(group_0) == 0.5
    assert compose_pure(group_1) == 0.25
    assert compose_pure(group_0 + group_1) == 0.75
    assert compose_pure([]) == 0.0
    assert compose_pure(group_0 + [_entry(math.inf, mechanism="exact")]) == math.inf


def test_a_sampled_tree_is_amplified_as_a_whole():
    tree = [_entry(0.5, level=0, sampling_rate=0.1), _entry(0.5, level=1, sampling_rate=0.1)]
    assert compose_pure(tree) == pytest.approx(amplify_pure(1.0, 0.1))
    assert compose_pure(tree) < 1.0


def test_renyi_composition_counts_a_group_of_equal_trees_once():
    delta = 1e-5
    tree = [_entry(0.5, mechanism="exponential", level=0), _entry(0.5, level=1)]
    twin = [LedgerEntry(**{**vars(e), "tree": 1}) for e in tree]
    other_group = [LedgerEntry(**{**vars(e), "group": 1, "tree": 2}) for e in tree]
    one = compose_rdp(tree, delta)
    assert 0 < one < math.inf
    assert compose_rdp(tree + twin, delta) == one
    assert compose_rdp(tree + other_group, delta) > one
    assert compose_rdp([], delta) == 0.0
    assert compose_rdp(tree + [_entry(math.inf, mechanism="argmax")], delta) == math.inf
    assert compose(tree, 0.0) == compose_pure(tree) == 1.0
    # releases that are all pure DP: the conversion (here looser) or their pure epsilon
    assert one > 1.0 and compose(tree, delta) == 1.0


def test_pure_releases_under_delta_compose_no_worse_than_their_pure_epsilon():
    # A tiny budget (the constant regime: a count and a mean, Laplace): the conversions of
    # Renyi and PLD accounting pass the plain sum of the epsilons, which is (eps, 0)-DP.
    from dpboost._pld import pld_epsilon

    delta = 5e-8
    releases = [_entry(1e-5, tree=-1, level=-4), _entry(1e-3, tree=-1, level=-1)]
    converted = min(compose_rdp(releases, delta), pld_epsilon(releases, delta))
    assert converted > 1.01e-3
    assert compose(releases, delta) == compose_pure(releases) == 1e-5 + 1e-3
    # one release that is not pure DP (a Gaussian): the conversions alone
    gaussian = LedgerEntry(mechanism="gaussian", epsilon=math.inf, sensitivity=1.0, group=0,
                           tree=0, level=0, n_nodes=1, noise_multiplier=1e4)
    assert compose_pure(releases + [gaussian]) == math.inf
    assert compose(releases + [gaussian], delta) == min(
        compose_rdp(releases + [gaussian], delta), pld_epsilon(releases + [gaussian], delta))


def test_ledger_records_entries_and_composes_them():
    ledger = PrivacyLedger()
    entry = ledger.record(mechanism="laplace", epsilon=0.5, sensitivity=1.0, group=0, tree=0,
                          level=1, n_nodes=2)
    assert ledger.entries == [entry]
    assert entry == LedgerEntry(mechanism="laplace", epsilon=0.5, sensitivity=1.0, group=0,
                                tree=0, level=1, n_nodes=2)
    assert ledger.epsilon() == 0.5 and ledger.epsilon(1e-5) == compose([entry], 1e-5)
    # a ledger's epsilon is the smaller of the Renyi and the PLD accountants' (_pld)
    assert compose([entry], 1e-5) == min(compose_rdp([entry], 1e-5), pld_epsilon([entry], 1e-5))


def _rho_of_tree(tb, depth):
    return depth * tb.epsilon_level**2 / 8 + 1 / (2 * tb.leaf_noise_multiplier**2)


def test_rdp_accounting_matches_dp_accounting_and_opendp(make_plan):
    import dp_accounting
    import opendp.prelude as dp
    from dp_accounting.rdp import RdpAccountant

    depth, delta = 3, 1e-5
    plan = make_plan(epsilon=2.0, delta=delta, leaf_noise="gaussian",
                     budget_allocation="sequential", n_estimators=12, max_depth=depth)
    # dp-accounting, composed event by event, independently of compose_rdp's grouping
    accountant = RdpAccountant()
    for tb in plan.trees:
        for _ in range(depth):
            accountant.compose(dp_accounting.ZCDpEvent(tb.epsilon_level**2 / 8))
        accountant.compose(dp_accounting.GaussianDpEvent(tb.leaf_noise_multiplier))
    assert accountant.get_epsilon(delta) == pytest.approx(plan.epsilon, abs=0.01)
    # OpenDP: its own privacy maps of the exponential mechanism (noisy max, Gumbel, zCDP) and of
    # the Gaussian mechanism give each release's rho; zCDP composes by addition; OpenDP converts.
    dp.enable_features("contrib")
    tb = plan.trees[0]
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=4)
    select = dp.m.make_noisy_max(domain, dp.linf_distance(T=float),
                                 dp.zero_concentrated_divergence(),
                                 scale=2 * tb.gain_sensitivity / tb.epsilon_level)
    leaves = dp.m.make_gaussian(domain, dp.l2_distance(T=float),
                                scale=tb.leaf_noise_multiplier * tb.leaf_sensitivity)
    rho_tree = depth * select.map(tb.gain_sensitivity) + leaves.map(tb.leaf_sensitivity)
    assert rho_tree == pytest.approx(_rho_of_tree(tb, depth), rel=1e-6)
    rho = len(plan.trees) * rho_tree
    total = dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
        scale=1 / math.sqrt(2 * rho)))
    assert total.map(1.0).epsilon(delta) == pytest.approx(plan.epsilon, abs=0.01)


def test_subsampled_rdp_amplifies_only_gaussian_trees(make_plan):
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    delta, gamma = 1e-5, 0.25
    plan = make_plan(epsilon=1.0, delta=delta, leaf_noise="gaussian", split_selection="random",
                     budget_allocation="sequential", subsample=gamma)
    # the Renyi planner's plan spends its budget by the Renyi accountant (its epsilon is the
    # smaller PLD one)
    renyi = compose_rdp(plan.entries, delta)
    assert 1.0 - 1e-3 <= renyi <= 1.0 and plan.epsilon <= renyi
    # independent composition: one Poisson-sampled Gaussian per tree
    accountant = RdpAccountant()
    for tb in plan.trees:
        accountant.compose(dp_accounting.PoissonSampledDpEvent(
            gamma, dp_accounting.GaussianDpEvent(tb.leaf_noise_multiplier)))
    assert accountant.get_epsilon(delta) == pytest.approx(renyi, abs=1e-6)
    unsampled = make_plan(epsilon=1.0, delta=delta, leaf_noise="gaussian",
                          split_selection="random", budget_allocation="sequential")
    assert plan.trees[0].leaf_noise_multiplier < unsampled.trees[0].leaf_noise_multiplier
    # exponential splits: no amplified form in the accountant, so the same plan as unsampled
    sampled_em = make_plan(epsilon=1.0, delta=delta, leaf_noise="gaussian", subsample=gamma)
    plain_em = make_plan(epsilon=1.0, delta=delta, leaf_noise="gaussian")
    assert sampled_em.trees[0].epsilon_level == plain_em.trees[0].epsilon_level


def test_sampled_gaussian_planning_does_not_flood_the_log(caplog, make_plan):
    # With a large noise multiplier the accountant cannot evaluate some fractional orders and
    # warns once per order per call (hundreds of calls in the bisection); leaving an order out is
    # conservative, so the warnings are silenced and the plan still meets the budget.
    level = logging.getLogger("absl").level
    with caplog.at_level(logging.WARNING):
        plan = make_plan(epsilon=1.0, delta=1e-5, leaf_noise="gaussian",
                         split_selection="random", budget_allocation="sequential",
                         n_estimators=100, subsample=0.5)
    assert not [r for r in caplog.records if r.name == "absl"]
    assert 1.0 - 1e-3 <= compose_rdp(plan.entries, 1e-5) <= 1.0
    assert logging.getLogger("absl").level == level  # restored


def test_amplification_round_trip_in_log_space():
    for epsilon in (1e-9, 0.01, 1.0, 50.0, 700.0, 1e5):
        for rate in (1e-320, 1e-10, 0.01, 0.5, 1.0):
            spend = deamplify_pure(epsilon, rate)
            assert math.isfinite(spend) and spend >= epsilon
            assert amplify_pure(spend, rate) == pytest.approx(epsilon, rel=1e-12)


def _sampled_tree(sampling_rate, noise_multiplier):
    """One tree of random splits and Gaussian leaves on a Poisson sample: a sampled Gaussian."""
    return [_entry(0.0, mechanism="uniform", level=0, sampling_rate=sampling_rate),
            LedgerEntry(mechanism="gaussian", epsilon=math.inf, sensitivity=1.0, group=0,
                        tree=0, level=1, n_nodes=2, noise_multiplier=noise_multiplier,
                        sampling_rate=sampling_rate)]


def test_a_rate_below_the_floor_is_accounted_at_the_floor_an_upper_bound():
    # The sampled Gaussian's Renyi divergence does not decrease with the rate (here its closed
    # form at integer orders, 1e-12 to 1), so accounting a smaller rate at the floor bounds it.
    rates = np.geomspace(1e-12, 1.0, 60)
    rdp = np.array([sampled_gaussian_rdp(q, [0.3, 1.0, 5.0], [2, 3, 8, 32, 256]) for q in rates])
    assert np.all(np.diff(rdp, axis=0) >= 0.0)
    at_floor = compose_rdp(_sampled_tree(MIN_ACCOUNTED_RATE, 0.3), 1e-5)
    assert 0 < at_floor < compose_rdp(_sampled_tree(1e-3, 0.3), 1e-5)
    for rate in (1e-7, 1e-300, sys.float_info.min, 5e-324):
        assert compose_rdp(_sampled_tree(rate, 0.3), 1e-5) == at_floor


@contextmanager
def _cpu_time_limit(seconds):
    """Raise TimeoutError in the main thread once this process has used ``seconds`` of CPU time
    (a hang fails; time other processes take on a busy machine does not count)."""
    def expire(signum, frame):
        raise TimeoutError(f"over {seconds} s of CPU time")

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _default_plan(estimator):
    """The plan ``estimator.fit`` makes before reading a record, on a schema of 2 columns (of
    the large regime, with a private row count)."""
    X = np.zeros((3, 2))
    shape = planned_shape(estimator, X)
    return plan_fit(estimator._configs(n_features=2)[-1],
                    make_loss(estimator._loss_name, shape[0]), *shape)


#: Poisson sampling rates from 1 down to the smallest subnormal, through the floor of the
#: accounting and the smallest normal float.
RATES = (1.0, 0.1, 1e-3, MIN_ACCOUNTED_RATE, 1e-7, 1e-12, 1e-100, 1e-300, sys.float_info.min,
         1e-310, 1e-320, 5e-324)


@pytest.mark.parametrize("estimator, public, rates", [
    # the full sweep plans 12 times (about 15 s): in the slow suite
    pytest.param(DPGBClassifier, {"classes": [0, 1]}, RATES, marks=pytest.mark.slow),
    (DPGBClassifier, {"classes": [0, 1]}, (MIN_ACCOUNTED_RATE, 1e-7, 5e-324)),
    (DPGBRegressor, {"target_bounds": (-1, 1)}, RATES[-3:])])
def test_the_default_planner_ends_quickly_at_every_sampling_rate(estimator, public, rates,
                                                                 fresh_plans):
    # Below the floor a plan took 5 s, ten times a plan above it (a bisection that never met its
    # tolerance), and below 5.6e-309 minutes (dp-accounting's series at 1 / q = inf); now each
    # is a plan at the floor. Each plan may take 3 times the CPU time of a plan above the floor
    # (rate 0.1, about 1 s here): CPU time of this process, so that a busy machine does not
    # fail the test, relative, so that a slower one does not either.
    def plan(rate):
        plan_budget.cache_clear()  # each plan computed, none recalled from the planner's memos
        boosting_module._fresh_plan.cache_clear()
        start = time.process_time()
        with _cpu_time_limit(60.0):
            plan = _default_plan(estimator(subsample=rate, feature_bounds=(-1, 1), **public))
        return plan, time.process_time() - start

    _, reference = plan(0.1)
    noise = {}
    for rate in rates:
        planned, seconds = plan(rate)
        assert seconds < 3 * reference, (rate, seconds, reference)
        assert planned.epsilon <= 1.0
        noise[rate] = planned.trees[0].leaf_noise_multiplier
    below = [noise[q] for q in rates if q <= MIN_ACCOUNTED_RATE]
    assert len(set(below)) == 1, below


def test_whole_data_releases_of_one_scope_compose_sequentially_under_pure_dp():
    # The private target bounds and the initial score share a ledger level; both read every
    # record, so pure composition adds them (it took the larger, 0.91 of epsilon 1 below).
    bounds = LedgerEntry(mechanism="laplace", epsilon=0.1, sensitivity=1.0, n_nodes=1,
                         group=-1, tree=-1, level=-1)
    initial = dataclasses.replace(bounds, epsilon=0.45)
    assert compose_pure([bounds, initial]) == pytest.approx(0.55)
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 2))
    model = DPGBRegressor(epsilon=1.0, delta=0.0, leaf_noise="average", feature_bounds=(0, 1),
                          target_bounds="private", init="private", n_estimators=5,
                          n_samples_hint=None, random_state=0).fit(X, X[:, 0])
    assert model.privacy_spent_ == pytest.approx(1.0, rel=1e-9)
    assert model.privacy_spent_ <= 1.0


def test_pure_private_bounds_plans_never_pass_epsilon_by_rounding():
    # The bounds' 10 % and the rest's 90 %, added back, passed epsilon by an ulp at 39 of
    # these epsilons: the bounds give the ulps up.
    for epsilon in np.geomspace(1e-3, 50, 100):
        for initial in (0, 2):
            plan = plan_budget(epsilon=float(epsilon), n_estimators=5, max_depth=3,
                               learning_rate=0.1, l2_regularization=1.0,
                               budget_allocation="sequential", trees_per_ensemble=1,
                               leaf_clipping=False, delta=0.0, leaf_noise="average",
                               split_selection="random", bounds_target=True, bounds_features=2,
                               initial_statistics=initial)
            assert epsilon * (1 - 1e-12) <= plan.epsilon <= epsilon


def test_plans_that_share_their_events_convert_them_once(fresh_plans):
    # A search over max_depth at one epsilon: the bisection of the second plan visits the first
    # one's events, whose divergences are recalled, and the plan is the one computed afresh.
    import dpboost._accounting as accounting

    def plan(max_depth):
        plan_budget.cache_clear()
        return plan_budget(epsilon=0.7, n_estimators=50, max_depth=max_depth, learning_rate=0.1,
                           l2_regularization=1.0, budget_allocation="sequential",
                           trees_per_ensemble=1, leaf_clipping=False, delta=1e-6,
                           leaf_noise="gaussian", split_selection="random", subsample=0.2)

    accounting._DIVERGENCES.clear()
    plan(3)
    converted = len(accounting._DIVERGENCES)
    recalled = plan(5)
    assert converted > 0 and len(accounting._DIVERGENCES) == converted
    accounting._DIVERGENCES.clear()
    afresh = plan(5)
    assert recalled.epsilon == afresh.epsilon
    assert recalled.trees[0].leaf_noise_multiplier == afresh.trees[0].leaf_noise_multiplier


def test_an_entry_of_a_fit_is_the_entry_with_that_identifier():
    # LedgerEntry.of_fit stamps a fit's planned entries: every field as dataclasses.replace
    # gives it, the original untouched, a LedgerEntry still (frozen, hashable, equal).
    entry = LedgerEntry(mechanism="gaussian", epsilon=0.1, sensitivity=0.5, group=2, tree=7,
                        level=-1, n_nodes=64, noise_multiplier=3.0, sampling_rate=0.1,
                        fit="plan", threshold=1.5, delta=1e-9, filtered=True, filter_trees=3,
                        held_out=True, part="B")
    stamped = entry.of_fit("abc")
    assert type(stamped) is LedgerEntry and stamped.fit == "abc" and entry.fit == "plan"
    assert dataclasses.asdict(stamped) == dataclasses.asdict(dataclasses.replace(entry, fit="abc"))
    assert stamped == entry and hash(stamped) == hash(entry)  # fit is not compared
    with pytest.raises(dataclasses.FrozenInstanceError):
        stamped.fit = "x"
