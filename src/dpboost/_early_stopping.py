"""Early stopping on a private validation score (``early_stopping=True``).

Each record is held out of every tree with probability ``validation_fraction``, by its own keyed
coin (:func:`draw_held_out`). Every :data:`VALIDATION_INTERVAL` boosting stages the sum over the
held-out records of their loss, clipped to ``[0, C]`` (the loss's ``validation_clip``), is
released with Gaussian noise (Laplace under pure DP); the fit stops when the best released loss has not
improved for ``n_iter_no_change`` stages (:class:`EarlyStopping`), a function of released values
only. The releases are calibrated so that their Renyi curve is at most the trees' curve at every
order (:func:`validation_releases`), and are left out of every composition: a record is either
held out or not, by an independent coin, so the transcript's divergence is at most the larger
of the two parts' (docs/privacy.md, Early stopping).
"""

import dataclasses
import math

import numpy as np

from ._accounting import (
    FILTER_ORDERS,
    LARGE_ORDERS,
    SAMPLED_ORDERS,
    LedgerEntry,
    compose,
    compose_pure,
    ledger_event,
)
from ._budget import _first_tree
from ._mechanisms import noise_scale, planned_release
from ._noise import SecureNoise
from ._records import HELD_OUT_STREAM
from ._sensitivities import validation_loss_sensitivity

#: Boosting stages between two releases of the validation loss (after stages 10, 20, ...): each
#: release costs the held-out records' budget, so fewer, less noisy checks.
VALIDATION_INTERVAL = 10
#: Safety factor on the validation releases' zCDP rho, so that ``rho alpha`` stays below the
#: trees' curve at every order after the rounding of the division and of the accountant.
_RHO_MARGIN = 1.0 - 1e-9


def check_early_stopping(params):
    """Refuse the settings early stopping does not support, before any budget is spent.

    Raises
    ------
    ValueError
        ``early_stopping=True`` with ``warm_start=True``, with ``budget_allocation`` other
        than ``"sequential"`` or with ``renyi_filter``.
    """
    if not params.get("early_stopping"):
        return
    for name, value, allowed in (("warm_start", params.get("warm_start", False), False),
                                 ("budget_allocation", params["budget_allocation"], "sequential"),
                                 ("renyi_filter", params.get("renyi_filter"), None)):
        if value != allowed:
            raise ValueError(f"early_stopping=True needs {name}={allowed!r}, got {name}="
                             f"{value!r}: the held-out records' releases are accounted against "
                             "sequentially composed trees of one fit (docs/privacy.md, Early "
                             "stopping).")


def n_checks(n_estimators):
    """Releases of the validation loss planned for ``n_estimators`` stages."""
    return n_estimators // VALIDATION_INTERVAL


def _all_orders():
    """Every order any conversion of a ledger reads (dp-accounting's defaults,
    ``LARGE_ORDERS``, ``SAMPLED_ORDERS``, ``FILTER_ORDERS``): the validation curve is bounded
    at each."""
    from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS

    return sorted(set(DEFAULT_RDP_ORDERS) | set(LARGE_ORDERS) | set(SAMPLED_ORDERS)
                  | set(FILTER_ORDERS))


def tree_curve(entries, repeats, orders):
    """The trees' Renyi divergence at ``orders`` (dp-accounting's ``RdpAccountant`` on
    :func:`~dpboost._accounting.ledger_event` of the trees' ``entries`` with ``repeats``)."""
    from dp_accounting.rdp import RdpAccountant

    accountant = RdpAccountant(list(orders))
    accountant.compose(ledger_event(entries, repeats))
    return np.asarray(accountant.rdp, dtype=np.float64)


def validation_releases(tree_entries, repeats, *, n_estimators, n_outputs, max_depth, clip,
                        epsilon, delta):
    """The planned validation releases, one per check, marked ``held_out``.

    Their composed curve is at most the trees' at every order (docs/privacy.md, Early stopping):
    with ``delta > 0``, Gaussian releases of zCDP ``rho / n_checks`` each, where
    ``rho = min_alpha R_trees(alpha) / alpha`` over every conversion order, so that
    ``rho alpha <= R_trees(alpha)`` (Gaussian: ``alpha / (2 sigma^2)``, Mironov 2017, Prop. 7);
    with ``delta = 0``, Laplace releases of ``epsilon_trees / n_checks`` each (pure DP composes
    by sums, McSherry 2009). Non-private fits release the exact sum.

    Parameters
    ----------
    tree_entries : list of LedgerEntry
        The trees' releases only (none of the releases over every record: bounds, category
        lists, sketches), with ``repeats`` as :func:`~dpboost._accounting.compose`'s.
    repeats : dict
    n_estimators, n_outputs, max_depth : int
    clip : float
        :meth:`~dpboost._loss.SquareLoss.validation_clip`.
    epsilon, delta : float
        The fit's.

    Returns
    -------
    releases : tuple of LedgerEntry
        Scoped to the last tree of the stage checked (``level = max_depth + 1``).
    """
    k = n_checks(n_estimators)
    sensitivity = validation_loss_sensitivity(clip)
    common = {"sensitivity": sensitivity, "n_nodes": 1, "held_out": True}
    if not math.isfinite(epsilon):
        kind = {"mechanism": "exact", "epsilon": math.inf}
    elif delta == 0:
        kind = {"mechanism": "laplace", "epsilon": compose_pure(tree_entries, repeats) / k}
    else:
        orders = _all_orders()
        rho = _RHO_MARGIN * float(np.min(tree_curve(tree_entries, repeats, orders)
                                         / np.asarray(orders)))
        kind = {"mechanism": "gaussian", "epsilon": math.inf,
                "noise_multiplier": math.sqrt(k / (2.0 * rho))}
    last = (n_outputs - 1) * n_estimators
    return tuple(LedgerEntry(**kind, **common, group=last + stage, tree=last + stage,
                             level=max_depth + 1)
                 for stage in range((VALIDATION_INTERVAL - 1), n_estimators,
                                    VALIDATION_INTERVAL)[:k])


def plan_validation(plan, clip, n_outputs, delta):
    """``plan`` (``_budget.plan_budget``'s) with its validation releases
    (:attr:`~dpboost._budget.BudgetPlan.validation`), their noise scales checked.

    The releases are calibrated against the trees' releases alone: those over every record
    (bounds, category lists, domain report, sketches, initial score, filter) read a held-out
    record as much as one in the trees, so they are counted in both branches of its coin
    (docs/privacy.md, Early stopping).

    Parameters
    ----------
    plan : BudgetPlan
    clip : float
        :meth:`~dpboost._loss.SquareLoss.validation_clip`.
    n_outputs : int
    delta : float
        The fit's.

    Raises
    ------
    ValueError
        A release's scale that the secure samplers cannot draw (``SecureNoise.check``).

    Returns
    -------
    plan : BudgetPlan
        ``plan`` itself with fewer than :data:`VALIDATION_INTERVAL` stages (no check).
    """
    n_estimators = len(plan.trees) // n_outputs
    if n_estimators < VALIDATION_INTERVAL:
        return plan
    trees_only = dataclasses.replace(plan, sketch=None, hessian_sketches=(), bounds=None,
                                     categories=None, domain=None, filter=None, initial=None)
    entries, repeats = _first_tree(trees_only, len({tb.group for tb in plan.trees}))
    releases = validation_releases(entries, repeats, n_estimators=n_estimators,
                                   n_outputs=n_outputs, max_depth=plan.max_depth, clip=clip,
                                   epsilon=plan.epsilon, delta=delta)
    for e in releases:
        noise_scale(e)
        SecureNoise.check(e, 1)
    checked = dataclasses.replace(plan, validation=releases)
    # Its epsilon is its ledger's: with the checks, the trees' Renyi epsilon (no PLD, _pld).
    return dataclasses.replace(checked, epsilon=compose(checked.entries, delta))


# The partition side (``_records``): pure functions of a partition, as on Dask.

def draw_held_out(partition, coins, fraction):
    """The partition with each record held out with probability ``fraction``, by its own coin
    (``coins`` of the fit, stream :data:`~dpboost._records.HELD_OUT_STREAM`): independent of the
    data and of every other record."""
    held_out = coins.uniforms((HELD_OUT_STREAM, 0, 0), *partition.rows) < fraction
    return dataclasses.replace(partition, held_out=held_out)


def validation_loss(partition, loss, clip):
    """``[sum over the held-out records of min(loss, clip)]`` from the partition's scores (each
    record's loss: ``loss.record_losses``). Unweighted: every held-out record moves the sum by
    at most ``clip``."""
    rows = partition.held_out
    losses = loss.record_losses(partition.raw[:, rows], partition.y_rows[:, rows])
    return np.array([math.fsum(np.clip(losses, 0.0, clip))])


class EarlyStopping:
    """The stopping rule of one fit: reads released validation losses only.

    Parameters
    ----------
    releases : tuple of LedgerEntry
        The plan's validation releases (:func:`validation_releases`).
    n_iter_no_change : int
        Stop once the best released loss is this many stages old.
    loss : loss object of ``_loss``
    fraction : float
        ``validation_fraction``: each record's probability of being held out.
    n_stages : int
        The planned stages.

    Attributes
    ----------
    scores : list of float
        The released validation losses so far.
    n_iter : int
        Stages grown: the stage at which the rule stopped, else every planned stage.
    """

    def __init__(self, releases, n_iter_no_change, loss, fraction, n_stages):
        self.releases = {e.tree: e for e in releases}
        self.n_iter_no_change = n_iter_no_change
        self.loss = loss
        self.fraction = fraction
        self.scores = []
        self.best = (math.inf, 0)  # (released loss, stages done)
        self.n_iter = n_stages

    def check(self, records, tree, stages_done, noise, ledger):
        """After the stage whose last tree is ``tree``: release the validation loss if the plan
        holds a release there, and say whether to stop."""
        entry = self.releases.get(tree)
        if entry is None:
            return False
        value = records.reduce(validation_loss, self.loss, entry.sensitivity)
        released = planned_release(value[None, :], entry, noise=noise, ledger=ledger,
                                   scope={**entry.scope, "held_out": True})
        score = float(released[0, 0])
        self.scores.append(score)
        if score < self.best[0]:
            self.best = (score, stages_done)
        if stages_done - self.best[1] < self.n_iter_no_change:
            return False
        self.n_iter = stages_done
        return True


def first_stages(forest, n_stages, values=None):
    """The forest of ``forest``'s first ``n_stages`` stages of every output, or with
    ``values`` (one per tree of ``forest``, tree ``k * forest.n_stages + t``) those of its
    trees."""
    def keep(a):
        shape = (forest.n_outputs, forest.n_stages) + a.shape[1:]
        return a.reshape(shape)[:, :n_stages].reshape((-1,) + a.shape[1:])

    if values is not None:
        return keep(values)
    return dataclasses.replace(
        forest, split_feature=keep(forest.split_feature), split_bin=keep(forest.split_bin),
        missing_left=keep(forest.missing_left), leaf_value=keep(forest.leaf_value),
        leaf_statistics=keep(forest.leaf_statistics), n_stages=n_stages)
