"""One budget over many fits: PrivacyAccountant, BudgetExceededError, fit identities in ledgers."""

import copy
import math
import multiprocessing
import pickle
import threading
import time
import warnings
from dataclasses import replace

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from dp_accounting.rdp import RdpAccountant
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning, NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.utils.validation import check_is_fitted

import dpboost._boosting as boosting_module
import dpboost._estimators as estimators_module
from dpboost import (
    BudgetExceededError,
    DPGBClassifier,
    DPGBRegressor,
    PrivacyAccountant,
)
from dpboost._accountant import filter_order
from dpboost._accounting import compose, compose_pure, compose_rdp


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 3))
    return X, (X[:, 0] > 0).astype(int)


def _paper(accountant, epsilon=1.0, **params):
    """DPBoost's setting (pure DP), small."""
    params = {"n_estimators": 4, "max_depth": 2, "feature_bounds": (-1, 1), "classes": [0, 1],
              "random_state": 0, "accountant": accountant, **params}
    return DPGBClassifier.dpboost_paper(epsilon=epsilon, **params)


def _default(accountant, epsilon=1.0, **params):
    """The default estimator (Renyi accounting, Gaussian leaves on Poisson samples), small."""
    params = {"n_estimators": 10, "max_depth": 2, "feature_bounds": (-1, 1), "classes": [0, 1],
              "random_state": 0, "accountant": accountant, **params}
    return DPGBClassifier(epsilon=epsilon, **params)


def _independent_epsilon(ledgers, delta):
    """Every release of every ledger composed sequentially by dp-accounting directly (the
    default allocation gives each tree its own group, so nothing composes in parallel), by its
    Renyi and its PLD accountant (discretisation 1e-4 times the Renyi epsilon, at least 1e-4):
    the smaller."""
    events = _independent_events(ledgers)
    renyi = RdpAccountant()
    renyi.compose(dp_accounting.ComposedDpEvent(events))
    renyi = renyi.get_epsilon(delta)
    pld = PLDAccountant(value_discretization_interval=1e-4 * max(1.0, renyi))
    pld.compose(dp_accounting.ComposedDpEvent(events))
    return min(renyi, pld.get_epsilon(delta))


def _independent_events(ledgers):
    """The dp-accounting events of the ledgers' releases, built here from each entry."""
    events = []
    for ledger in ledgers:
        for e in ledger:
            if e.mechanism == "gaussian":
                # One Gaussian release per tree (the default's leaves), on its Poisson sample.
                gaussian = dp_accounting.GaussianDpEvent(e.noise_multiplier)
                events.append(gaussian if e.sampling_rate == 1 else
                              dp_accounting.PoissonSampledDpEvent(e.sampling_rate, gaussian))
            elif e.mechanism == "laplace":
                events.append(dp_accounting.LaplaceDpEvent(1.0 / e.epsilon))
            elif e.mechanism == "exponential":
                # One level's splits (disjoint nodes): epsilon-DP with bounded range, so
                # epsilon^2 / 8-zCDP (Cesar & Rogers 2021, Lemma 3.2).
                events.append(dp_accounting.ZCDpEvent(e.epsilon**2 / 8.0))
            else:
                assert e.mechanism == "uniform", e.mechanism
    return events


def _epsilon_at_eight(events):
    """dp-accounting's epsilon (delta 1e-5) of ``events`` composed at Renyi order 8 alone
    (increasing in the curve there)."""
    at_eight = RdpAccountant([8])
    at_eight.compose(dp_accounting.ComposedDpEvent(events))
    return at_eight.get_epsilon(1e-5)


def test_two_renyi_fits_compose_sequentially_as_dp_accounting_does(data):
    # A public row count: one plan each, composed as dp-accounting composes their releases.
    X, y = data
    accountant = PrivacyAccountant(epsilon=3.0, delta=1e-5)
    a = _default(accountant, n_samples_hint=len(X)).fit(X, y)
    b = _default(accountant, random_state=1, n_samples_hint=len(X)).fit(X, y)
    expected = _independent_epsilon([a.privacy_ledger_, b.privacy_ledger_], 1e-5)
    assert accountant.spent() == pytest.approx(expected, rel=1e-9)
    # Sequential, so more than one fit's spend (each within 1e-3 below epsilon 1); Renyi
    # composition of the two is below the sum.
    assert a.privacy_spent_ < accountant.spent() < a.privacy_spent_ + b.privacy_spent_
    assert accountant.remaining() == pytest.approx(3.0 - expected)


def test_fits_whose_count_chose_their_plans_compose_their_choices(data):
    # A private row count (the default) chooses each fit's plan: the accountant composes every
    # plan each fit could have taken (compose_fits of its choices), which is at least the
    # composition of the plans taken and at most the sum of the fits' own bounds.
    from dpboost._accountant import Alternatives, compose_fits

    X, y = data
    accountant = PrivacyAccountant(epsilon=3.0, delta=1e-5)
    fits = [_default(accountant, random_state=seed).fit(X, y) for seed in (0, 1)]
    taken = _independent_epsilon([fit.privacy_ledger_ for fit in fits], 1e-5)
    choices = [(Alternatives(fit._privacy_choices), None) for fit in fits]
    assert accountant.spent() == compose_fits(choices, 1e-5, scale=3.0)
    assert taken < accountant.spent() < sum(fit.privacy_spent_ for fit in fits)
    for fit in fits:
        assert fit.privacy_ledger_ in [list(plan) for plan in fit._privacy_choices]
        # one fit: the count's epsilon plus the largest plan's (sequential composition)
        assert compose(fit.privacy_ledger_, 1e-5) <= fit.privacy_spent_ <= 1.0


def test_a_fits_spend_is_the_composition_of_its_choices_memoised_by_plan(data, monkeypatch):
    # A fresh fit's privacy_spent_ comes from its choices as planned (FitResult.planned),
    # memoised by the plans' identity: the same bits as fit_epsilon of the stamped choices,
    # every choice carrying the fit's identifier. A second fit of the setting shares the plans
    # (plan_fit is memoised) and reuses the composition; another epsilon does not.
    import dpboost._accountant as accountant_module

    memo = {}
    monkeypatch.setattr(accountant_module, "_CHOICES_EPSILON", memo)
    X, y = data
    fits = [_default(None, epsilon=eps, random_state=seed).fit(X, y)
            for eps, seed in ((0.7, 0), (0.7, 1), (0.9, 0))]
    for fit in fits:
        assert fit._privacy_choices is not None and len(fit._privacy_choices) > 1
        assert fit.privacy_spent_ == accountant_module.fit_epsilon(
            fit.privacy_ledger_, fit._privacy_choices, fit.delta, fit.epsilon)
        fit_ids = {e.fit for ledger in fit._privacy_choices for e in ledger}
        assert fit_ids == {fit.privacy_ledger_[0].fit}
    assert fits[0].privacy_spent_ == fits[1].privacy_spent_ != fits[2].privacy_spent_
    assert [key[1:] for key in memo] == [(1e-5, 0.7), (1e-5, 0.9)]  # the second fit of epsilon 0.7 (another seed) found the first's


def test_a_filter_composes_every_fit_at_its_one_order(data):
    # order=8: the fits' Renyi curves at order 8 alone, summed and converted there (a Renyi
    # filter); never below the composition at the best order or by the PLD.
    # A fit whose private count chose its plan is charged its choices' largest curve there.
    X, y = data
    filtered = PrivacyAccountant(epsilon=6.0, delta=1e-5, order=8)
    fixed = PrivacyAccountant(epsilon=6.0, delta=1e-5)
    largest = []
    for seed in (0, 1):
        fit = _default(filtered, random_state=seed).fit(X, y)
        _default(fixed, random_state=seed).fit(X, y)
        largest.append(max((_independent_events([plan]) for plan in fit._privacy_choices),
                           key=_epsilon_at_eight))
    assert filtered.spent() == pytest.approx(
        _epsilon_at_eight([e for events in largest for e in events]), rel=1e-9)
    assert filtered.spent() > fixed.spent() > 0
    assert "a Renyi filter at order 8" in filtered.report()
    assert repr(filtered) == "PrivacyAccountant(epsilon=6.0, delta=1e-05, order=8)"


def test_a_filter_refuses_the_fit_that_would_pass_its_total(data):
    X, y = data
    accountant = PrivacyAccountant(epsilon=2.5, delta=1e-5, order="auto")
    assert accountant.order == filter_order(2.5, 1e-5) == 11
    fits = 0
    with pytest.raises(BudgetExceededError):
        for seed in range(20):
            _default(accountant, random_state=seed).fit(X, y)
            fits += 1
    assert 0 < fits < 20 and accountant.spent() <= 2.5


@pytest.mark.parametrize("epsilon, delta, order", [
    (1.0, 1e-5, 24), (8.0, 1e-5, 4), (1.0, 1e-9, 40), (100.0, 1e-5, 2)])
def test_the_auto_order_is_where_a_zcdp_spend_of_the_budget_converts_best(epsilon, delta, order):
    # rho from epsilon = rho + 2 sqrt(rho log(1/delta)); the best order 1 + sqrt(log(1/delta) /
    # rho), to the nearest order every ledger is proven at.
    assert filter_order(epsilon, delta) == order
    log_inverse = math.log(1 / delta)
    rho = (math.sqrt(log_inverse + epsilon) - math.sqrt(log_inverse)) ** 2
    assert rho + 2 * math.sqrt(rho * log_inverse) == pytest.approx(epsilon)


def test_two_pure_fits_compose_to_the_sum(data):
    X, y = data
    accountant = PrivacyAccountant(epsilon=3.0)
    _paper(accountant).fit(X, y)
    _paper(accountant, epsilon=0.5).fit(X, y)
    assert accountant.spent() == pytest.approx(1.5, rel=1e-12)
    assert "2 fits" in accountant.report() and "remaining 1.5" in accountant.report()


def test_ledgers_of_two_fits_compose_sequentially_when_concatenated(data):
    # The case that motivated fit identifiers: concatenated ledgers of two epsilon-1 fits composed to 1.0 (they looked
    # parallel); each entry now carries its fit's random identifier.
    X, y = data
    a, b = _paper(None).fit(X, y), _paper(None).fit(X, y)
    assert a.privacy_ledger_ == b.privacy_ledger_  # the same releases (equality ignores the id)
    assert len({e.fit for e in a.privacy_ledger_}) == 1
    assert a.privacy_ledger_[0].fit != b.privacy_ledger_[0].fit
    assert compose_pure(a.privacy_ledger_ + b.privacy_ledger_) == pytest.approx(2.0)
    assert compose_pure(a.privacy_ledger_) == pytest.approx(1.0)
    default = _default(None).fit(X, y)
    again = _default(None).fit(X, y)
    assert (compose_rdp(default.privacy_ledger_ + again.privacy_ledger_, 1e-5)
            > compose_rdp(default.privacy_ledger_, 1e-5) + 0.2)


def test_fit_over_budget_raises_before_reading_any_record(data, monkeypatch):
    X, y = data
    accountant = PrivacyAccountant(epsilon=1.5)
    _paper(accountant).fit(X, y)
    reads = []
    real = estimators_module.fit_inputs
    monkeypatch.setattr(estimators_module, "fit_inputs",
                        lambda *args: reads.append(1) or real(*args))
    est = _paper(accountant)
    with pytest.raises(BudgetExceededError,
                       match=r"would spend epsilon 1; .* total would be 2 > the accountant's "
                             r"1\.5 \(remaining 0\.5"):
        est.fit(X, y)
    assert reads == []  # refused on the plan alone: no record was read
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    assert accountant.spent() == pytest.approx(1.0)
    _paper(accountant, epsilon=0.5).fit(X, y)  # what remains can still be spent
    assert accountant.spent() == pytest.approx(1.5)


def test_classes_read_from_the_data_reserve_after_y_only(data, monkeypatch):
    # Without public classes the number of outputs, hence the plan, needs y: the reservation
    # comes right after validation and still before any noise is drawn.
    X, y = data
    accountant = PrivacyAccountant(epsilon=0.5)
    grown = []
    monkeypatch.setattr(boosting_module, "grow_tree",
                        lambda *a, **k: grown.append(1) or pytest.fail("grew a tree"))
    est = _paper(accountant, classes=None)
    with pytest.warns(UserWarning, match="classes was not given"), \
            pytest.raises(BudgetExceededError, match="would spend epsilon 1"):
        est.fit(X, y)
    assert grown == [] and accountant.spent() == 0.0


def test_a_fit_that_raises_releases_its_reservation(data, monkeypatch):
    X, y = data
    accountant = PrivacyAccountant(epsilon=1.0)

    def broken(*args, **kwargs):
        raise RuntimeError("worker died")

    monkeypatch.setattr(boosting_module, "grow_tree", broken)
    with pytest.raises(RuntimeError, match="worker died"):
        _paper(accountant).fit(X, y)
    assert accountant.spent() == 0.0 and "0 fits" in accountant.report()
    monkeypatch.undo()
    _paper(accountant).fit(X, y)  # the whole budget is still there
    assert accountant.spent() == pytest.approx(1.0)


@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite")
def test_grid_search_spends_from_one_accountant_and_stops_at_its_total(data):
    X, y = data
    accountant = PrivacyAccountant(epsilon=3.5)
    search = GridSearchCV(_paper(accountant), {"max_depth": [1, 2]}, cv=2, refit=False)
    with pytest.warns(FitFailedWarning, match="BudgetExceededError"):
        search.fit(X, y)
    # 4 fits of epsilon 1 were attempted on overlapping folds: 3 fit in 3.5, the 4th was refused.
    assert accountant.spent() == pytest.approx(3.0)
    assert np.isnan(search.cv_results_["split1_test_score"][1])
    assert np.isfinite(search.cv_results_["split0_test_score"]).all()


def test_clone_keeps_the_accountant_and_copies_do_not_spend_silently(data):
    X, y = data
    accountant = PrivacyAccountant(epsilon=1.0)
    est = _paper(accountant)
    assert clone(est).accountant is accountant
    # A model holding an accountant pickles; a copy living in another process refuses to spend.
    copied = pickle.loads(pickle.dumps(est))
    copied.accountant._pid = -1  # as if unpickled in a joblib worker process
    with pytest.raises(RuntimeError, match="copy in another process"):
        copied.fit(X, y)
    assert accountant.spent() == 0.0
    assert copy.deepcopy(accountant).spent() == 0.0


@pytest.mark.parametrize("in_file", [False, True], ids=["memory", "file"])
def test_threads_sharing_an_accountant_cannot_overspend(data, tmp_path, in_file):
    X, y = data
    accountant = PrivacyAccountant(epsilon=2.5, path=tmp_path / "budget.db" if in_file else None)
    outcomes = []

    def fit():
        try:
            _paper(accountant).fit(X, y)
            outcomes.append("fitted")
        except BudgetExceededError:
            outcomes.append("refused")

    threads = [threading.Thread(target=fit) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["fitted", "fitted", "refused", "refused"]
    assert accountant.spent() == pytest.approx(2.0)


def test_pure_accountant_refuses_a_renyi_fit_before_reading_data(data, monkeypatch):
    X, y = data
    accountant = PrivacyAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match="registers pure-DP fits only"):
        _default(accountant).fit(X, y)
    with pytest.raises(ValueError, match="registers pure-DP fits only"):
        _paper(accountant, epsilon=math.inf).fit(X, y)
    assert accountant.spent() == 0.0


def test_a_pure_fit_in_a_renyi_accountant_costs_at_most_its_epsilon(data):
    X, y = data
    accountant = PrivacyAccountant(epsilon=2.0, delta=1e-6)
    est = _paper(accountant).fit(X, y)
    # min(pure sum, Renyi conversion): never more than the pure guarantee.
    assert accountant.spent() <= est.privacy_spent_ + 1e-12


@pytest.mark.parametrize("kwargs, match", [
    ({"epsilon": 0}, r"epsilon=0 must be a number in \(0, inf\)"),
    ({"epsilon": math.inf}, r"epsilon=inf must be"),
    ({"epsilon": 1.0, "delta": 1.0}, r"delta=1\.0 must be a number in \[0, 1\)"),
    ({"epsilon": "1"}, r"epsilon='1' must be"),
    ({"epsilon": 1.0, "order": 8}, r"order=8 needs delta > 0"),
    ({"epsilon": 1.0, "delta": 1e-5, "order": 13}, r"order=13 must be None, 'auto' or one of"),
    ({"epsilon": 1.0, "delta": 1e-5, "order": 8.0}, r"order=8\.0 must be"),
    ({"epsilon": 1.0, "delta": 1e-5, "order": True}, r"order=True must be"),
    ({"epsilon": 1.0, "delta": 1e-5, "order": "best"}, r"order='best' must be"),
])
def test_accountant_parameters_are_checked(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PrivacyAccountant(**kwargs)


def test_regressor_and_json_with_an_accountant(data):
    X, y = data
    accountant = PrivacyAccountant(epsilon=1.0)
    reg = DPGBRegressor.dpboost_paper(epsilon=1.0, n_estimators=3, max_depth=2,
                                      feature_bounds=(-1, 1), target_bounds=(0, 1),
                                      random_state=0, accountant=accountant).fit(X, y)
    assert accountant.spent() == pytest.approx(reg.privacy_spent_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = DPGBRegressor.from_json(reg.to_json())
    assert loaded.accountant is None  # the budget stays with its owner
    np.testing.assert_array_equal(loaded.predict(X), reg.predict(X))
    with pytest.raises(BudgetExceededError, match=r"DPGBRegressor\(epsilon=1, delta=0\) would "
                                                   r"spend epsilon 1; .* \(remaining 0, delta=0\)"):
        reg.fit(X, y)


# --- a budget file: one total across processes and sessions ---------------------------------------

def _spend_from_file(path, outcomes, start):
    """In another process: reserve a pure-DP spend of 0.6 from the file, hold it, register it."""
    from dpboost import BudgetExceededError, LedgerEntry, PrivacyAccountant

    accountant = PrivacyAccountant(1.0, path=path)
    entries = [LedgerEntry("laplace", 0.6, 1.0, 0, 0, 0, 1)]
    start.wait()
    try:
        fit_id = accountant.reserve(entries, "worker")
    except BudgetExceededError:
        outcomes.put("refused")
        return
    time.sleep(0.2)  # the reservation is held while the others try theirs
    accountant.commit(fit_id, [replace(e, fit=fit_id) for e in entries])
    outcomes.put("fitted")


def test_processes_spending_from_one_file_cannot_overspend(tmp_path):
    path = str(tmp_path / "budget.db")
    PrivacyAccountant(1.0, path=path)
    context = multiprocessing.get_context("spawn")
    outcomes, start = context.Queue(), context.Event()
    workers = [context.Process(target=_spend_from_file, args=(path, outcomes, start))
               for _ in range(2)]
    for w in workers:
        w.start()
    start.set()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0] * 2
    # 0.6 each in 1.0, reserved at the same moment: one fits, whichever it is; the other sees
    # its reservation (or its registered spend) and is refused
    assert sorted(outcomes.get() for _ in workers) == ["fitted", "refused"]
    assert PrivacyAccountant(1.0, path=path).spent() == pytest.approx(0.6)


def test_reopening_a_file_restores_the_spend(data, tmp_path):
    X, y = data
    path = tmp_path / "budget.db"
    renyi = PrivacyAccountant(3.0, delta=1e-5, path=path)
    a = _default(renyi).fit(X, y)
    b = _default(renyi, random_state=1).fit(X, y)
    spent = renyi.spent()
    # each fit's choice of plan is stored, and composed (above the plans taken)
    assert spent > _independent_epsilon([a.privacy_ledger_, b.privacy_ledger_], 1e-5)
    reopened = PrivacyAccountant(3.0, delta=1e-5, path=str(path))  # a later session
    assert reopened.spent() == spent and reopened.report() == renyi.report()
    with pytest.raises(BudgetExceededError):
        _default(reopened, epsilon=3.0).fit(X, y)
    assert reopened.spent() == spent
    with pytest.raises(ValueError, match="holds the budget epsilon=3.0, delta=1e-05, not "
                                         "epsilon=4.0"):
        PrivacyAccountant(4.0, delta=1e-5, path=path)
    with pytest.raises(ValueError, match="delta=1e-05, order=None, not epsilon=3.0, "
                                         "delta=1e-05, order=8"):
        PrivacyAccountant(3.0, delta=1e-5, path=path, order=8)
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not a database " * 100)
    with pytest.raises(ValueError, match="is not a budget file"):
        PrivacyAccountant(1.0, path=foreign)


def test_a_search_event_survives_the_file(tmp_path):
    from dpboost._search import search_event

    path = tmp_path / "budget.db"
    event = search_event(0.01, 0.001, 5, "poisson")
    accountant = PrivacyAccountant(5.0, delta=1e-6, path=path)
    accountant.commit(accountant.reserve((), "search", event))
    memory = PrivacyAccountant(5.0, delta=1e-6)
    memory.commit(memory.reserve((), "search", event))
    assert PrivacyAccountant(5.0, delta=1e-6, path=path).spent() == memory.spent() > 0


def test_grid_search_in_two_processes_spends_from_one_file(data, tmp_path):
    X, y = data
    path = tmp_path / "budget.db"
    accountant = PrivacyAccountant(epsilon=3.5, path=path)
    search = GridSearchCV(_paper(accountant), {"max_depth": [1, 2]}, cv=2, refit=False, n_jobs=2)
    with pytest.warns(FitFailedWarning, match="BudgetExceededError"), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "One or more of the test scores are non-finite")
        search.fit(X, y)
    # 4 fits of epsilon 1 in the workers (loky): 3 fit in 3.5, one was refused
    assert accountant.spent() == pytest.approx(3.0)
    assert sum(np.isnan(search.cv_results_[f"split{i}_test_score"]).sum() for i in (0, 1)) == 1


def test_a_file_keeps_its_filter_order_and_an_older_file_has_none(data, tmp_path):
    import sqlite3

    X, y = data
    path = tmp_path / "filter.db"
    filtered = PrivacyAccountant(3.0, delta=1e-5, path=path, order=8)
    _default(filtered).fit(X, y)
    reopened = PrivacyAccountant(3.0, delta=1e-5, path=path, order=8)
    assert reopened.spent() == filtered.spent() > 0
    with pytest.raises(ValueError, match="order=8, not epsilon=3.0, delta=1e-05, order=None"):
        PrivacyAccountant(3.0, delta=1e-5, path=path)
    # A budget file written before filters (no order column) opens without an order.
    older = tmp_path / "older.db"
    with sqlite3.connect(older) as db:
        db.execute("CREATE TABLE budget (id INTEGER PRIMARY KEY CHECK (id = 1), epsilon REAL "
                   "NOT NULL, delta REAL NOT NULL)")
        db.execute("INSERT INTO budget VALUES (1, 3.0, 1e-5)")
    assert PrivacyAccountant(3.0, delta=1e-5, path=older).spent() == 0.0
    with pytest.raises(ValueError, match="order=None, not epsilon=3.0, delta=1e-05, order=8"):
        PrivacyAccountant(3.0, delta=1e-5, path=older, order=8)


def test_an_accountant_pickled_before_filters_loads_without_an_order(data):
    X, y = data
    accountant = PrivacyAccountant(3.0, delta=1e-5)
    _default(accountant).fit(X, y)
    state = pickle.loads(pickle.dumps(accountant)).__dict__
    del state["order"]  # as an older version pickled it
    older = PrivacyAccountant.__new__(PrivacyAccountant)
    older.__dict__.update(state)
    assert older.order is None and older.spent() == accountant.spent() > 0


def test_a_filter_charges_even_one_counted_fit_at_its_order(data):
    # A filter converts at its order alone, also for a single fit whose row count chose its
    # plan: the count's curve plus the plans' largest at order 12, above the fit's own
    # sequential bound (its privacy_spent_).
    from dpboost._accountant import Alternatives, compose_fits

    X, y = data
    accountant = PrivacyAccountant(epsilon=10.0, delta=1e-5, order=12)
    fit = _default(accountant).fit(X, y)
    choice = [(Alternatives(fit._privacy_choices), None)]
    assert accountant.spent() == compose_fits(choice, 1e-5, order=12, scale=10.0)
    assert accountant.spent() > fit.privacy_spent_


def test_distinct_ledgers_are_those_dict_fromkeys_keeps():
    # _boosting._distinct tells a fit's plans apart without hashing their entries: the same
    # ledgers in the same order as dict.fromkeys (equal ones by value, not only by identity).
    from dpboost._accounting import LedgerEntry
    from dpboost._boosting import _distinct

    def entry(epsilon, tree=0):
        return LedgerEntry(mechanism="gaussian", epsilon=epsilon, sensitivity=1.0, group=0,
                           tree=tree, level=1, n_nodes=2)

    a = (entry(0.1), entry(0.2))
    b = (entry(0.1), entry(0.2))  # equal to a, another object
    c = (entry(0.1), entry(0.3))
    d = (entry(0.1),)
    e = (entry(0.1, tree=1), entry(0.2))
    ledgers = [a, c, a, b, d, e, c, d]
    assert _distinct(ledgers) == tuple(dict.fromkeys(ledgers))
    assert [id(x) for x in _distinct(ledgers)] == [id(a), id(c), id(d), id(e)]
