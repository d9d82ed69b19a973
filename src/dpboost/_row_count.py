"""The private row count (``n_samples_hint="private"``): the number of records, released first,
as the public input that the ``"auto"`` rules reading ``n x epsilon`` choose from
(docs/privacy.md, Private row count).

One Laplace release (the secure samplers' discrete Laplace on the count's integer lattice) of
the number of records, at :data:`ROW_COUNT_SHARE` of epsilon, sensitivity 1
(:func:`~dpboost._sensitivities.row_count_sensitivity`). Every plan the released count may
choose (one per regime of the rules, ``_auto.regime_counts``) is made, checked and reserved
before the count is drawn, each at the rest of the budget, ``(epsilon - epsilon_count,
delta)``: whichever is chosen, the fit is ``(epsilon, delta)``-DP by sequential composition
with an adaptive choice (Dwork & Roth 2014, Theorem 3.16 and Section 3.5.2: the second
mechanism may depend on the first's output when each of its choices meets its own budget).
The choice reads only the released value (post-processing).
"""

from dataclasses import replace

import numpy as np

from ._accounting import LedgerEntry
from ._auto import regime
from ._budget import within_epsilon
from ._mechanisms import laplace_mechanism, noise_scale
from ._noise import SecureNoise
from ._sensitivities import row_count_sensitivity

#: Share of epsilon spent on the row count. Its noise in ``n x epsilon`` is a Laplace of scale
#: ``1 / ROW_COUNT_SHARE`` = 100 whatever epsilon: small against the rules' thresholds (700
#: and up), and 1 % of the budget costs the trees about 1 % more noise.
ROW_COUNT_SHARE = 0.01
#: Ledger scope of the row count: before every other release (the domain report is at -3).
ROW_COUNT_SCOPE = {"group": -1, "tree": -1, "level": -4}


def row_count_release(epsilon):
    """The ledger entry of the row count: Laplace at ``ROW_COUNT_SHARE * epsilon``,
    sensitivity :func:`row_count_sensitivity` (only at a finite epsilon: without noise the
    rules read no count)."""
    return LedgerEntry(mechanism="laplace", epsilon=ROW_COUNT_SHARE * epsilon,
                       sensitivity=row_count_sensitivity(), n_nodes=1, **ROW_COUNT_SCOPE)


def split_count(ledger):
    """A plan's ledger as (the row count's releases, the rest): what precedes the plan's
    choice and what the choice released.

    Returns
    -------
    count, rest : tuple of LedgerEntry
    """
    first = tuple(e for e in ledger if e.scope == ROW_COUNT_SCOPE)
    return first, tuple(e for e in ledger if e.scope != ROW_COUNT_SCOPE)


def rest_epsilon(epsilon):
    """The epsilon the plans after the row count are made with (``epsilon`` times
    ``1 - ROW_COUNT_SHARE``)."""
    return epsilon * (1.0 - ROW_COUNT_SHARE)


def with_row_count(plan, epsilon, delta):
    """``plan`` (made at :func:`rest_epsilon`) with the row count's release, composed; the
    count's epsilon is lowered by ulps where floating-point rounding of the sum would pass
    ``epsilon`` (never overspend).

    Returns
    -------
    plan : BudgetPlan
    """
    entry = row_count_release(epsilon)
    noise_scale(entry)  # refused before any record is read where the samplers cannot draw it
    SecureNoise.check(entry, 1)
    counted = within_epsilon(lambda count: replace(plan, count=count), entry, epsilon, delta,
                             steps=16)
    if counted is not None:
        return counted
    raise ValueError(f"epsilon={epsilon} cannot be planned with a private row count (the "
                     "accountant's conversion of so small a budget exceeds it); pass "
                     "n_samples_hint=None or a public count.")


def plan_regimes(configs, plan):
    """The plans of ``configs`` (one per regime, ``_auto.regime_counts``): ``plan(config)``
    for each; a regime whose configuration cannot be planned (ValueError: its budget split
    leaves too little at a tiny epsilon) takes the plan of the nearest one that can, the
    larger regime first; where none can, the large regime without a count. Which regimes can
    be planned is a fact of the public inputs.

    Returns
    -------
    options : list of (FitConfig, BudgetPlan)

    Raises
    ------
    ValueError
        The first regime's error, when no regime can be planned.
    """
    planned, errors = [], []
    for config in configs:
        try:
            planned.append((config, plan(config)))
        except ValueError as error:
            planned.append(None)
            errors.append(error)
    usable = [k for k, option in enumerate(planned) if option is not None]
    if not usable and configs[-1].private_row_count:
        # Where no plan with the count fits (a budget so small that the accountant's conversion
        # of the count alone passes it), the fit releases no count and takes the large regime,
        # as without one.
        return plan_regimes([replace(configs[-1], private_row_count=False)], plan)
    if not usable:
        raise errors[0]
    return [option if option is not None
            else planned[min(usable, key=lambda j: (abs(j - k), -j))]
            for k, option in enumerate(planned)]


def count_records(partition):
    """A partition's number of records (its rows; sample weights do not count). Sensitive:
    released only by :func:`release_row_count`.

    Returns
    -------
    count : ndarray of shape (1,), dtype=float64
    """
    return np.array([partition.y_rows.shape[1]], dtype=np.float64)


def release_row_count(records, entry, noise, ledger):
    """Release the number of records once (``entry``: ``plan.count``).

    Returns
    -------
    count : float
        The released count, floored at 0 (post-processing).
    """
    total = records.reduce(count_records)
    released = laplace_mechanism(total, epsilon=entry.epsilon,
                                 sensitivity=entry.sensitivity, noise=noise, ledger=ledger,
                                 scope=entry.scope)
    return max(float(released[0]), 0.0)


def choose_plan(records, options, noise, ledger):
    """The configuration and plan of the fit: the only option, or (a private row count) the
    option of the regime of the released count (``_auto.regime``), read after its release.

    Parameters
    ----------
    records : record set (``_records``)
    options : list of (FitConfig, BudgetPlan)
        One per regime of ``_auto.regime_counts``, in its order, each plan with the count's
        release (``plan.count``); or one option.
    noise : NoiseSource
    ledger : PrivacyLedger

    Returns
    -------
    config : FitConfig
    plan : BudgetPlan
    count : float or None
        The released count (None: none released).
    """
    config, plan = options[0]
    if plan.count is None:
        return config, plan, None
    count = release_row_count(records, plan.count, noise, ledger)
    return (*options[regime(count, config.epsilon, noise_scale(plan.count),
                            config.count_thresholds)], count)
