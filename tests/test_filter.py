"""The individual Renyi filter (``renyi_filter``; Feldman & Zrnic 2021; docs/privacy.md,
Individual Renyi filter): per-record losses against dp-accounting, the integer budgets, the
per-record decisions, the plan and the ledger, the refused combinations and the report.

The record-and-replay harness covers the filter on its grid (tests/test_replay.py, axis
``renyi_filter`` and check (d)); the audit is in tests/test_privacy_audit.py; the leak test in
tests/test_no_leak.py.
"""

import dataclasses
import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import RdpAccountant

from dpboost import DPGBClassifier, DPGBRegressor
from dpboost._accounting import FILTER_ORDERS, LedgerEntry, compose_rdp, sampled_gaussian_rdp
from dpboost._boosting import open_budgets, select_records
from dpboost._budget import plan_budget
from dpboost._filter import FILTER_GRID, FILTER_SCOPE, FILTER_TICKS, FilterBudget
from dpboost._records import Partition, RecordCoins
from dpboost._sensitivities import gaussian_leaf_sensitivity

DELTA = 1e-6


def _rdp(sampling_rate, noise_multiplier, orders=FILTER_ORDERS):
    """dp-accounting's Renyi curve of one sampled Gaussian release (the accountant keeps it in
    ``_rdp``; there is no public accessor)."""
    event = dp_accounting.GaussianDpEvent(noise_multiplier)
    if sampling_rate < 1:
        event = dp_accounting.PoissonSampledDpEvent(sampling_rate, event)
    accountant = RdpAccountant(list(orders))
    accountant.compose(event)
    return np.asarray(accountant._rdp)


@pytest.mark.parametrize("q, sigma, c", [(0.1, 20.0, 0.559), (0.1, 20.0, 0.05), (0.01, 3.0, 1.0),
                                         (0.3, 1.5, 0.2), (1.0, 10.0, 0.3), (0.5, 0.9, 1.0)])
def test_individual_loss_is_dp_accountings_sampled_gaussian(q, sigma, c):
    # A record of norm c under noise of standard deviation sigma (in units of c* = 1): the
    # sampled Gaussian at noise multiplier sigma / c.
    ours = sampled_gaussian_rdp(q, np.array([sigma / c]), FILTER_ORDERS)[0]
    np.testing.assert_allclose(ours, _rdp(q, sigma / c), rtol=1e-9)


def _filter(q=0.1, sigma=15.0, trees=4, c_star=gaussian_leaf_sensitivity(0.25, 0.5)):
    return FilterBudget.of(LedgerEntry(
        mechanism="renyi_filter", epsilon=math.inf, sensitivity=c_star, noise_multiplier=sigma,
        sampling_rate=q, filter_trees=trees, **FILTER_SCOPE))


@pytest.mark.parametrize("q, sigma", [(0.1, 15.0), (1.0, 4.0), (0.01, 2.0)])
def test_charged_ticks_bound_the_true_loss(q, sigma):
    renyi = _filter(q, sigma)
    c_star = renyi.sensitivity
    norms = np.concatenate([np.linspace(0.0, c_star, 61),
                            np.random.default_rng(0).uniform(0, c_star, 40)])
    ticks = renyi.cost(norms)
    worst = sampled_gaussian_rdp(q, np.array([sigma]), FILTER_ORDERS)[0]
    true = sampled_gaussian_rdp(q, sigma * c_star / np.maximum(norms, 1e-300), FILTER_ORDERS)
    assert np.all(ticks / FILTER_TICKS * worst >= true)  # never undercharged
    # ... and not by much: one grid step of c* / FILTER_GRID plus one tick
    above = sampled_gaussian_rdp(q, sigma * c_star / np.minimum(norms + 2 * c_star / FILTER_GRID,
                                                                 c_star), FILTER_ORDERS)
    assert np.all(ticks / FILTER_TICKS * worst <= above + 2 * worst / FILTER_TICKS)
    assert np.all(renyi.cost(np.array([c_star])) == FILTER_TICKS)  # worst case: exactly 1 tree


def _partition(gradients, hessians):
    n = len(gradients)
    partition = Partition(None, np.zeros((1, n)), X_binned=np.zeros((n, 1), np.uint8),
                          gradients=np.asarray(gradients, np.float32)[None],
                          hessians=np.asarray(hessians, np.float32)[None], positions={})
    return partition


def _run(partition, renyi, n_trees, q=1.0, key=b"k" * 32):
    """Participation (n_trees, n) of every record through ``n_trees`` trees of select_records."""
    partition = open_budgets(partition, renyi)
    taken = []
    for t in range(n_trees):
        partition = select_records(partition, RecordCoins(key), 0, t, None, q,
                                   np.float32(0.5), False, renyi)
        row = np.zeros(partition.y_rows.shape[1], bool)
        row[partition.tree.selected] = True
        taken.append(row)
    return np.array(taken), partition.spent


def test_a_worst_case_record_takes_part_in_exactly_its_budget_and_a_fitted_one_in_more():
    renyi = _filter(q=1.0, sigma=6.0, trees=4)
    # worst case (g clipped to 0.5, h = 1/4), typical, well fitted, nothing
    taken, spent = _run(_partition([0.9, -0.3, 0.05, 0.0], [0.25, 0.21, 0.0475, 0.0]), renyi, 40)
    counts = taken.sum(axis=0)
    assert counts[0] == 4 and taken[:4, 0].all()  # its first four trees, then never again
    assert 4 < counts[1] < 40 and counts[2] == 40 and counts[3] == 40
    assert np.all(spent <= renyi.budget)


def test_each_decision_reads_only_its_own_record():
    renyi = _filter(q=0.5, sigma=3.0, trees=3)
    rng = np.random.default_rng(1)
    g, h = rng.uniform(-0.6, 0.6, 50), rng.uniform(0, 0.25, 50)
    taken, spent = _run(_partition(g, h), renyi, 25, q=0.5)
    # the neighbour: one more record, worst case, in the last row (its own coin)
    taken2, spent2 = _run(_partition(np.append(g, 0.5), np.append(h, 0.25)), renyi, 25, q=0.5)
    np.testing.assert_array_equal(taken2[:, :50], taken)
    np.testing.assert_array_equal(spent2[:50], spent)
    # ... and it is charged (whether or not its coin samples it) only within its budget
    assert np.all(spent2[50] <= renyi.budget) and spent2[50, 0] == 3 * FILTER_TICKS


def _plan(renyi_filter, epsilon=0.3, n_estimators=40, subsample=0.2, split_selection="random"):
    return plan_budget(epsilon=epsilon, n_estimators=n_estimators, max_depth=3, learning_rate=0.1,
                       l2_regularization=10.0, budget_allocation="sequential",
                       trees_per_ensemble=50, leaf_clipping=True, delta=DELTA,
                       leaf_noise="gaussian", hessian_bound=0.25, split_selection=split_selection,
                       subsample=subsample, gradient_bound=0.5, renyi_filter=renyi_filter)


def test_plan_composes_the_filter_budget_not_the_filtered_trees():
    plan = _plan(0.25)
    budget = plan.filter
    assert budget.mechanism == "renyi_filter" and budget.filter_trees == 10
    assert plan.entries[0] == budget
    leaves = [e for e in plan.entries if e.mechanism == "gaussian"]
    assert len(leaves) == 40 and all(e.filtered for e in leaves)
    # the guarantee: 10 worst-case sampled Gaussian trees, converted at FILTER_ORDERS
    accountant = RdpAccountant(list(FILTER_ORDERS))
    accountant.compose(dp_accounting.PoissonSampledDpEvent(
        0.2, dp_accounting.GaussianDpEvent(budget.noise_multiplier)), 10)
    assert math.isclose(plan.epsilon, accountant.get_epsilon(DELTA), rel_tol=1e-12)
    assert plan.epsilon <= 0.3
    # the same noise for 10 trees without the filter, where 40 trees would cost more
    unfiltered = [dataclasses.replace(e, filtered=False) for e in leaves]
    assert compose_rdp(unfiltered, DELTA) > 1.5 * plan.epsilon
    # exponential splits (on every record) stay on worst-case accounting beside the filter
    exact = _plan(0.25, subsample=1.0, split_selection="exponential")
    splits = [e for e in exact.entries if e.mechanism == "exponential"]
    assert len(splits) == 120 and not any(e.filtered for e in splits)


def test_fitted_ledger_equals_the_plan_and_states_the_filter():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(int)
    model = DPGBClassifier(epsilon=0.5, delta=DELTA, n_estimators=12, max_depth=2,
                           renyi_filter=0.5, feature_bounds=[(-1, 1)] * 3, classes=[0, 1],
                           random_state=0).fit(X, y)
    plan = _plan_of(model)
    assert model.privacy_ledger_ == plan.entries
    # its row count chose this plan among others: charged the choice (the count's epsilon
    # plus the largest plan's), at least the plan taken's composition
    assert plan.epsilon <= model.privacy_spent_ <= 0.5
    report = model.privacy_report()
    assert "individual Renyi filter" in report and "6 worst-case trees" in report
    assert "12 filtered leaf releases are not composed one by one" in report


def _plan_of(model):
    from dpboost._boosting import plan_fit
    from dpboost._loss import make_loss

    return plan_fit(model._configs()[0], make_loss(model.loss, 1), 1, 3)


@pytest.mark.parametrize("change, match", [
    ({"leaf_noise": "average"}, r"renyi_filter=0\.5 needs leaf_noise='gaussian' and delta > 0"),
    ({"budget_allocation": "eoe"}, r"renyi_filter=0\.5 needs budget_allocation='sequential'"),
    ({"split_selection": "exponential", "subsample": 0.5},
     r"renyi_filter=0\.5 with subsample=0\.5 < 1 needs split_selection='random'"),
    ({"n_estimators": 70_000}, r"at most 32766 are supported"),
    ({"class_weight": {0: 2.0}}, r"cannot be combined with sample_weight or class_weight"),
])
def test_combinations_the_filter_cannot_honour_are_refused_before_any_record(change, match):
    model = DPGBClassifier(renyi_filter=0.5, classes=[0, 1], feature_bounds=[(0, 1)], **change)
    with pytest.raises(ValueError, match=match):
        model.fit(np.array([[object()]]), [0])  # never read: the plan refuses first


def test_renyi_filter_is_validated_by_name():
    with pytest.raises(ValueError, match="renyi_filter"):
        DPGBRegressor(renyi_filter=1.5).fit(np.zeros((4, 1)), np.zeros(4))
