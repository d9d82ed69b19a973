"""A private choice of interactions (``_interaction_choice``; docs/privacy.md, Private choice of
interactions): the statistic against a naive count, its sensitivity on neighbours (and a
pairing by coin order, which has none), the plan within the budget, the record-and-replay
harness with the added record in each part, and records of one part that reach no other part's
release."""

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from replay_harness import INTERACTION_CHOICE, run_config
from sklearn.datasets import make_classification

import dpboost._boosting
import dpboost._interaction_choice
from dpboost import DPGBClassifier, PrivacyAccountant
from dpboost._accountant import Alternatives, compose_fits
from dpboost._accounting import compose, compose_rdp
from dpboost._auto import (
    CHOICE_N_EPSILON_PER_FEATURE,
    INTERACTION_N_EPSILON_PER_FEATURE,
    resolve_configs,
)
from dpboost._boosting import plan_fit
from dpboost._interaction_choice import (
    MAX_SLOTS,
    PART_FRACTIONS,
    SLOTS_PER_BUCKET,
    ChoicePlan,
    n_slots,
    pairs_statistic,
    part_of,
    slot_of,
    slot_sums,
)
from dpboost._loss import LogisticLoss
from dpboost._sensitivities import choice_statistic_sensitivity

V_START = PART_FRACTIONS[0] + PART_FRACTIONS[1]


def _v_records(n, rng):
    """``n`` records of V: coins, labels, the two models' margins."""
    coins = V_START + PART_FRACTIONS[2] * rng.random(n)
    return coins, rng.integers(0, 2, n), rng.normal(size=n), rng.normal(size=n)


def _statistic(coins, labels, additive, unrestricted, slots):
    return pairs_statistic(slot_sums(slot_of(coins, slots), labels, additive, unrestricted,
                                     slots))


def _naive_statistic(coins, labels, additive, unrestricted, slots):
    """The module docstring's definition, record by record."""
    slot = slot_of(coins, slots)
    counted = [i for i in range(len(coins)) if np.sum(slot == slot[i]) == 1]
    total = 0.0
    for bucket in range(slots // SLOTS_PER_BUCKET):
        members = [i for i in counted if slot[i] // SLOTS_PER_BUCKET == bucket]
        terms = []
        for i, j in itertools.combinations(members, 2):
            if labels[i] == labels[j]:
                continue
            hi, lo = (i, j) if labels[i] > labels[j] else (j, i)
            terms.append(float(unrestricted[hi] > unrestricted[lo])
                         - float(additive[hi] > additive[lo]))
        total += np.mean(terms) if terms else 0.0
    return total


@pytest.mark.parametrize("n, slots", [(30, 32), (200, 320), (500, 160)])
def test_the_statistic_is_the_naive_count(n, slots):
    rng = np.random.default_rng(n)
    records = _v_records(n, rng)
    # ties of margins order no pair
    records[2][: n // 5] = 0.0
    assert _statistic(*records, slots) == pytest.approx(_naive_statistic(*records, slots),
                                                        abs=1e-9)


def test_the_statistic_favours_the_model_that_orders_better():
    rng = np.random.default_rng(0)
    coins, labels, _, _ = _v_records(4000, rng)
    good, bad = labels + rng.normal(0, 0.5, 4000), labels + rng.normal(0, 2.0, 4000)
    slots = n_slots(40_000)
    assert _statistic(coins, labels, bad, good, slots) > 50
    assert _statistic(coins, labels, good, bad, slots) < -50
    assert _statistic(coins, labels, good, good, slots) == 0.0


def _worst_change(statistic, n=60, slots=64, trials=3000, seed=1):
    """The largest change of ``statistic`` over random neighbours (one record of V added), on
    few records per bucket, where one record weighs most."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(trials):
        records = _v_records(n, rng)
        added = _v_records(1, rng)
        neighbour = [np.concatenate([a, b]) for a, b in zip(records, added)]
        worst = max(worst, abs(statistic(*neighbour, slots) - statistic(*records, slots)))
    return worst


def test_one_record_moves_the_statistic_by_at_most_its_sensitivity():
    worst = _worst_change(_statistic)
    assert worst == pytest.approx(choice_statistic_sensitivity())  # attained, never passed


def _coin_order_pairs(coins, labels, additive, unrestricted, slots):
    """A broken statistic: V's records paired in the order of their coins (an added record
    shifts every later pair)."""
    order = np.argsort(coins)[: len(coins) // 2 * 2]
    first, second = order[0::2], order[1::2]
    sign = np.sign(labels[second] - labels[first])
    return float(np.sum((np.sign(unrestricted[second] - unrestricted[first]) * sign > 0)
                        .astype(float) - (np.sign(additive[second] - additive[first]) * sign > 0)))


def test_the_audit_flags_pairs_in_coin_order():
    assert _worst_change(_coin_order_pairs, trials=300) > 2 * choice_statistic_sensitivity()


def test_parts_and_slots_are_each_records_own_coin():
    coins = np.arange(2**16) / 2**16
    part = part_of(coins)
    assert [np.mean(part == k) for k in range(4)] == pytest.approx(
        [*PART_FRACTIONS, 1 - sum(PART_FRACTIONS)], abs=1e-4)
    slots = 1024
    slot = slot_of(coins[part == 2], slots)
    counts = np.bincount(slot, minlength=slots)
    assert counts.size == slots and counts.max() - counts.min() <= 1  # evenly spread
    assert n_slots(0) == n_slots(-5.0) == SLOTS_PER_BUCKET
    assert n_slots(1e15) == MAX_SLOTS
    assert n_slots(10_000) % SLOTS_PER_BUCKET == 0


def _choice_config(epsilon, delta, private_count, n_features=20):
    classifier = DPGBClassifier(epsilon=epsilon, delta=delta,
                                n_samples_hint=("private" if private_count
                                                else round(5000 * n_features / epsilon)),
                                **({"leaf_noise": "laplace"} if delta == 0 else {}))
    configs = resolve_configs(classifier.get_params(deep=False), 0.25, False, None, n_features)
    return next(c for c in configs if c.interaction_choice)


@pytest.mark.parametrize("epsilon, delta, private_count", [
    (1.0, 1e-5, True), (20.0, 1e-5, False), (0.3, 1e-6, True), (1.0, 0.0, True)])
def test_each_part_fits_the_budget_and_the_fit_is_charged_the_largest(epsilon, delta,
                                                                      private_count):
    config = _choice_config(epsilon, delta, private_count)
    plan = plan_fit(config, LogisticLoss, 1, 20)
    assert isinstance(plan, ChoicePlan)
    assert (plan.count is not None) == private_count
    ledgers = plan.ledgers
    assert [e.part for e in ledgers[2]][-1] == "V"
    costs = [compose(ledger, delta) for ledger in ledgers]
    assert max(costs) <= epsilon
    # the statistic gets the budget the releases before the trees leave (its Renyi conversion;
    # within the plans' zCDP, 1 % less)
    assert 0.98 * epsilon <= (compose_rdp if delta else compose)(ledgers[2], delta) <= epsilon
    charged = compose_fits([(Alternatives(ledgers), None)], delta)
    assert max(costs) * (1 - 1e-9) <= charged <= epsilon
    # composed as parts, not in sequence
    assert charged < compose([e for ledger in ledgers for e in ledger], delta)


@pytest.mark.filterwarnings("ignore::dpboost.ReproducibleNoiseWarning")
def test_the_statistics_alternative_costs_nothing_when_fits_compose():
    # Every default classifier fit with a private count holds the choice's alternatives (its
    # count may take that regime); the statistic's Gaussian release adds nothing to seven
    # fits composed (a Laplace release at the same epsilon: 6.96 instead of 3.16).
    X, y = _additive(n=3000)
    choices = _classifier(epsilon=1.0, feature_bounds=(-5, 5)).fit(X[:, :14], y)._privacy_choices
    without = tuple(ledger for ledger in choices if all(e.part != "V" for e in ledger))
    assert len(without) == len(choices) - 1
    seven = [compose_fits([(Alternatives(c), None)] * 7, 1e-5, scale=7.0)
             for c in (choices, without)]
    assert seven[0] == pytest.approx(seven[1], rel=1e-6)


def test_the_choice_is_planned_only_where_the_rule_admits_it():
    params = DPGBClassifier(n_samples_hint=1).get_params(deep=False)
    for per_feature, chooses in ((CHOICE_N_EPSILON_PER_FEATURE * 0.99, False),
                                 (CHOICE_N_EPSILON_PER_FEATURE, True),
                                 (INTERACTION_N_EPSILON_PER_FEATURE * 0.99, True),
                                 (INTERACTION_N_EPSILON_PER_FEATURE, False)):
        config, = resolve_configs({**params, "n_samples_hint": per_feature * 10}, 0.25, False,
                                  None, 10)
        assert bool(config.interaction_choice) == chooses
    for change in ({"warm_start": True}, {"early_stopping": True}, {"renyi_filter": 0.5},
                   {"interaction_cst": "no_interactions"}, {"split_selection": "random"},
                   {"split_candidates": "hessian"}):
        config, = resolve_configs({**params, "n_samples_hint": 50_000, **change}, 0.25, False,
                                  None, 10)
        assert not config.interaction_choice
    # the regressor keeps its rule
    config, = resolve_configs({**params, "n_samples_hint": 50_000}, 1.0, True, None, 10)
    assert not config.interaction_choice


def test_several_classes_take_the_additive_plan():
    config = _choice_config(1.0, 1e-5, True)
    plan = plan_fit(config, LogisticLoss, 3, 20)
    assert not isinstance(plan, ChoicePlan)
    additive = replace(config.interaction_choice[0], private_row_count=True)
    assert plan.entries == plan_fit(additive, LogisticLoss, 3, 20).entries


@pytest.mark.filterwarnings("ignore::dpboost.ReproducibleNoiseWarning")
def test_plans_with_different_releases_before_the_trees_take_the_additive_plan():
    # init="private": the initial score's release is planned with each plan's trees, so the
    # two plans' releases over every record differ and cannot be made once for both.
    X, y = _interacting(n=3000)
    model = _classifier(n_samples_hint=20_000, init="private", n_estimators=20).fit(X, y)
    assert model.interaction_cst_ == "no_interactions"
    assert {e.part for e in model.privacy_ledger_} == {""}
    assert not hasattr(model, "interaction_statistic_")


def _interacting(n=20_000, seed=0):
    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, random_state=seed)
    return X, y


def _additive(n=20_000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 20))
    return X, (X[:, :5].sum(axis=1) + rng.normal(size=n) > 0).astype(int)


def _classifier(**params):
    return DPGBClassifier(**{"epsilon": 4.0, "feature_bounds": (-8, 8), "classes": [0, 1],
                             "random_state": 0, **params})


@pytest.mark.filterwarnings("ignore::dpboost.ReproducibleNoiseWarning")
@pytest.mark.parametrize("data, interactions", [(_interacting, True), (_additive, False)])
def test_the_default_classifier_chooses_its_interactions_in_the_band(data, interactions):
    # 30,000 records (6,000 per feature at epsilon 4): with the quantile sketch's bins the
    # additive part comes closer to the unrestricted one; at 20,000 the interacting data's
    # statistic cleared the margin on 4 of seeds 0-5, at 30,000 on all six (statistic 20-40).
    X, y = data(n=30_000)
    model = _classifier().fit(X, y)
    assert (model.interaction_cst_ is None) == interactions
    assert CHOICE_N_EPSILON_PER_FEATURE <= model.row_count_ * 4.0 / 20
    assert {e.part for e in model.privacy_ledger_} == {"", "A", "B", "V", "T"}
    assert model.privacy_spent_ <= 4.0
    assert len(model._privacy_choices) >= 3
    report = model.privacy_report()
    assert "choice of interactions" in report
    assert f"{model.privacy_spent_:.6g}" in report


def _parts_of_a_fit(monkeypatch, X, y, **params):
    """Fit with ``params`` and return the model and each record's part (0-3), read from the
    masks the fit held out."""
    kept = {}
    original = dpboost._interaction_choice.keep_part

    def spy(partition, coins, part):
        result = original(partition, coins, part)
        kept[part] = ~result.held_out
        return result

    monkeypatch.setattr(dpboost._boosting, "keep_part", spy)
    model = _classifier(**params).fit(X, y)
    parts = np.full(len(y), -1)
    for part, rows in kept.items():
        parts[rows] = part
    return model, parts


@pytest.mark.filterwarnings("ignore::dpboost.ReproducibleNoiseWarning")
def test_records_reach_the_releases_of_their_own_part_only(monkeypatch):
    X, y = _interacting(n=12_000)
    model, parts = _parts_of_a_fit(monkeypatch, X, y, n_samples_hint=20_000, n_estimators=20)
    parts[parts < 0] = 2  # V's records: held out of every tree
    # each part its fraction of the records, within 5 standard deviations of the coins' count
    for part, fraction in enumerate([*PART_FRACTIONS, 1 - sum(PART_FRACTIONS)]):
        assert abs(np.mean(parts == part) - fraction) < 5 * math.sqrt(fraction / len(y))
    flipped = {}
    for part in (0, 2, 3):
        y_changed = np.where(parts == part, 1 - y, y)
        flipped[part] = _classifier(n_samples_hint=20_000, n_estimators=20).fit(X, y_changed)
    # V's statistic reads none of T's records; T's trees none of A's (the choice is the same)
    assert flipped[3].interaction_statistic_ == model.interaction_statistic_
    assert flipped[0].interaction_cst_ == model.interaction_cst_
    np.testing.assert_array_equal(flipped[0].decision_function(X), model.decision_function(X))
    # and the changes are seen where they are read
    assert flipped[2].interaction_statistic_ != model.interaction_statistic_
    assert np.any(flipped[3].decision_function(X) != model.decision_function(X))


@pytest.mark.filterwarnings("ignore::dpboost.ReproducibleNoiseWarning")
def test_an_accountant_charges_a_choice_its_largest_part(tmp_path):
    X, y = _interacting(n=12_000)
    accountant = PrivacyAccountant(epsilon=1.7, delta=1e-5)
    fits = [_classifier(epsilon=1.0, n_samples_hint=60_000, n_estimators=20,
                        accountant=accountant).fit(X, y) for _ in range(2)]
    # two fits of epsilon 1: their parts' largest ledgers composed, not every part's
    assert accountant.spent() == compose_fits(
        [(Alternatives(fit._privacy_choices), None) for fit in fits], 1e-5, scale=1.7)
    assert 1.0 < accountant.spent() < 1.7
    with pytest.raises(Exception, match="would spend"):
        _classifier(epsilon=1.0, n_samples_hint=60_000, n_estimators=20,
                    accountant=accountant).fit(X, y)


@pytest.mark.filterwarnings("ignore::dpboost.ReproducibleNoiseWarning")
def test_a_choice_survives_a_model_file(tmp_path):
    X, y = _interacting(n=12_000)
    model = _classifier(n_samples_hint=20_000, n_estimators=20).fit(X, y)
    model.save_model(tmp_path / "model.json")
    loaded = DPGBClassifier().load_model(tmp_path / "model.json")
    assert loaded.privacy_ledger_ == model.privacy_ledger_
    assert [e.part for e in loaded.privacy_ledger_] == [e.part for e in model.privacy_ledger_]
    assert loaded._privacy_choices == model._privacy_choices
    assert loaded.privacy_spent_ == model.privacy_spent_
    np.testing.assert_array_equal(loaded.predict_proba(X[:100]), model.predict_proba(X[:100]))


@pytest.mark.parametrize("config", INTERACTION_CHOICE, ids=[
    f"{c['data']}-coin{c['coin']}-hint{c['n_samples_hint']}" for c in INTERACTION_CHOICE])
def test_replay_interaction_choice(config):
    run_config(config)


def test_replay_flags_an_understated_statistic_sensitivity(monkeypatch, fresh_plans):
    monkeypatch.setattr(dpboost._interaction_choice, "choice_statistic_sensitivity",
                        lambda: 1e-3)
    with pytest.raises(AssertionError, match="exceeds the declared sensitivity"):
        run_config(INTERACTION_CHOICE[2])  # the added record in V


def test_replay_flags_parts_that_overlap(monkeypatch):
    original = dpboost._interaction_choice.keep_part

    def keep_part(partition, coins, part):  # a broken cut: T's trees read V's records too
        kept = original(partition, coins, part)
        if part != 3:
            return kept
        return replace(kept, held_out=kept.held_out & original(partition, coins, 2).held_out)

    monkeypatch.setattr(dpboost._boosting, "keep_part", keep_part)
    with pytest.raises(AssertionError, match=r"parts \['T', 'V'\] differ"):
        run_config(INTERACTION_CHOICE[2])  # the added record in V
