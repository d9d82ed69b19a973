"""The individual Renyi filter (Feldman & Zrnic 2021; docs/privacy.md, Individual Renyi filter):
which plans it applies to, and each record's budget and costs in integer ticks at every order of
``FILTER_ORDERS``."""

import functools
from dataclasses import dataclass

import numpy as np

from ._accounting import (
    FILTER_ORDERS,
    sampled_gaussian_rdp,
)
from ._common import read_only
from ._tree_mechanisms import LEAF_RELEASES, SPLIT_SELECTIONS

#: Ledger scope of the individual Renyi filter's budget (not a release): first in the ledger.
FILTER_SCOPE = {"group": -1, "tree": -1, "level": -2, "n_nodes": 0}


#: Individual filter: a record's norm ``c`` is charged at the next point of a grid of
#: ``FILTER_GRID`` equal steps in [0, c*] (the divergence grows with c, so rounding up bounds it).
FILTER_GRID = 1024


#: Individual filter: a worst-case tree costs ``FILTER_TICKS`` integer ticks at every order;
#: smaller losses are rounded up to whole ticks, so the budgets are exact integer sums.
FILTER_TICKS = 2**16


#: Individual filter: the norm charged is ``c + FILTER_SLACK * noise_multiplier * c*``, above
#: the L2 shift of a row by one record on the secure noise's lattice, ``c + 2 g`` with the step
#: ``g <= s 2^-24`` (docs/privacy.md, Secure noise).
FILTER_SLACK = 2.0**-22


def filter_tree_count(renyi_filter, n_trees, leaf_noise, delta, budget_allocation, split_selection,
                  subsample, sample_weight_bound):
    """The worst-case trees ``k`` of an individual filter's budget, after checking that the
    filter applies (docs/privacy.md, Individual Renyi filter).

    Raises
    ------
    ValueError
        Names the parameter that rules the filter out: it needs Gaussian leaves under Renyi
        accounting (``leaf_noise="gaussian"``, ``delta > 0``), every tree on every record
        (``budget_allocation="sequential"``), data-independent splits on a Poisson sample (the
        tree is then one sampled Gaussian release), and ``k`` worst-case trees within the
        integer budgets of :data:`FILTER_TICKS`; not with record weights (a weighted record's
        contribution is ``w (g, h)``, which the filter's costs do not yet read).
    """
    if sample_weight_bound is not None:
        raise ValueError(f"renyi_filter={renyi_filter!r} cannot be combined with sample_weight "
                         "or class_weight (sample_weight_bound is set): the filter charges a "
                         "record for its unweighted (g, h).")
    if not LEAF_RELEASES[leaf_noise].gaussian or delta == 0:
        raise ValueError(f"renyi_filter={renyi_filter!r} needs leaf_noise='gaussian' and "
                         f"delta > 0, got leaf_noise={leaf_noise!r}, delta={delta!r}: the "
                         "filter bounds each record's Renyi loss of Gaussian leaf releases.")
    if budget_allocation != "sequential":
        raise ValueError(f"renyi_filter={renyi_filter!r} needs budget_allocation='sequential', "
                         f"got {budget_allocation!r}: the filter decides per tree which records "
                         "take part.")
    if subsample < 1.0 and SPLIT_SELECTIONS[split_selection].reads_records:
        raise ValueError(f"renyi_filter={renyi_filter!r} with subsample={subsample!r} < 1 needs "
                         f"split_selection='random', got {split_selection!r}: only a tree whose "
                         "splits are data-independent is accounted as one sampled Gaussian.")
    k = max(1, round(renyi_filter * n_trees))
    if (k + 1) * FILTER_TICKS >= 2**31:
        raise ValueError(f"renyi_filter={renyi_filter!r} with {n_trees} trees gives a budget of "
                         f"{k} worst-case trees; at most {2**31 // FILTER_TICKS - 2} are supported.")
    return k


@dataclass(frozen=True)
class FilterBudget:
    """The individual Renyi filter's arithmetic, from its planned ``"renyi_filter"`` entry.

    A record whose clipped leaf contribution has L2 norm ``c`` (its ``(g, h)``; ``(g, 1)`` for
    the square loss) costs, in a tree it takes part in, the sampled Gaussian's divergence at
    noise multiplier ``s / c`` (:func:`~dpboost._accounting.sampled_gaussian_rdp`; ``s`` the
    noise standard deviation), at every order of :data:`FILTER_ORDERS`. Costs are integer ticks:
    ``c`` is rounded up to the grid ``c* j / FILTER_GRID`` (plus the lattice slack
    :data:`FILTER_SLACK`), and the divergence at grid point ``j`` over that of the worst case
    ``c*`` is rounded up to whole ``1 / FILTER_TICKS``. A worst-case tree costs exactly
    ``FILTER_TICKS`` at every order, the budget is ``filter_trees * FILTER_TICKS``: a record
    whose ticks stay within it has spent at most the planned curve at every order, in exact
    integer arithmetic.

    Attributes
    ----------
    ticks : ndarray of shape (FILTER_GRID + 1, len(FILTER_ORDERS)), dtype=int32
        Cost of grid point ``j`` at each order; row 0 (a record moving nothing) is 0.
    budget : int
        ``filter_trees * FILTER_TICKS``.
    sensitivity : float
        c*, the worst-case norm (``gaussian_leaf_sensitivity``).
    slack : float
        ``FILTER_SLACK * noise_multiplier``, in units of c*.
    """

    ticks: np.ndarray
    budget: int
    sensitivity: float
    slack: float

    @classmethod
    def of(cls, entry):
        """The filter of a planned ``"renyi_filter"`` :class:`LedgerEntry`."""
        return cls(ticks=filter_ticks(entry.noise_multiplier, entry.sampling_rate),
                   budget=entry.filter_trees * FILTER_TICKS, sensitivity=entry.sensitivity,
                   slack=FILTER_SLACK * entry.noise_multiplier)

    def cost(self, norms):
        """Ticks of records whose contributions have L2 norms ``norms`` (each at most c*).

        Parameters
        ----------
        norms : ndarray of shape (n,), dtype=float64

        Returns
        -------
        ticks : ndarray of shape (n, len(FILTER_ORDERS)), dtype=int32
        """
        # (1 + 2^-40) covers the rounding of the norm and of the division.
        scaled = (norms / self.sensitivity * (1.0 + 2.0**-40) + self.slack) * FILTER_GRID
        return self.ticks[np.minimum(np.ceil(scaled), FILTER_GRID).astype(np.intp)]


@functools.lru_cache(maxsize=32)
def filter_ticks(noise_multiplier, sampling_rate):
    """:attr:`FilterBudget.ticks` of a filter (memoised: public scalars; read-only).

    Grid point ``j`` of ``FILTER_GRID`` is a record of norm ``c* j / FILTER_GRID``, whose noise
    multiplier is ``noise_multiplier * FILTER_GRID / j``. Its ticks are
    ``floor(D_j / D_worst * FILTER_TICKS * (1 + 2^-45)) + 1`` (at least the ratio: the floor of a
    value just below an integer is one less, then one is added back), at most ``FILTER_TICKS``;
    the worst case (``j = FILTER_GRID``) is exactly ``FILTER_TICKS``.
    """
    j = np.arange(1, FILTER_GRID + 1, dtype=np.float64)
    rdp = sampled_gaussian_rdp(sampling_rate, noise_multiplier * FILTER_GRID / j, FILTER_ORDERS)
    worst = rdp[-1]
    ticks = np.minimum(np.floor(rdp / worst * FILTER_TICKS * (1.0 + 2.0**-45)) + 1.0,
                       FILTER_TICKS)
    ticks[-1] = FILTER_TICKS
    return read_only(np.vstack([np.zeros((1, len(FILTER_ORDERS))), ticks]).astype(np.int32))
