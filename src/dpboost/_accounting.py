"""The privacy ledger and pure-DP composition.

Every release writes one :class:`LedgerEntry`. A mechanism applied to all nodes of one tree level
at once is one entry: those nodes hold disjoint records, so they compose in parallel.
"""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class LedgerEntry:
    """One release.

    Attributes
    ----------
    mechanism : str
        ``"exponential"`` (split selection), ``"laplace"`` (leaf values), or ``"argmax"`` /
        ``"exact"`` for their non-private counterparts when ``epsilon = inf``.
    epsilon : float
        Pure-DP cost of the release (per node: the nodes of one entry are disjoint).
    sensitivity : float
        Sensitivity the noise was calibrated to, under add/remove of one record.
    group : int
        Trees of one group see disjoint records (an EoE ensemble, or all PARA trees) and compose in
        parallel; groups compose sequentially.
    tree : int
        Index of the tree in the model.
    level : int
        Depth of the split nodes, ``0 .. max_depth - 1``; ``max_depth`` for the leaves.
    n_nodes : int
        Number of disjoint nodes released together.
    """

    mechanism: str
    epsilon: float
    sensitivity: float
    group: int
    tree: int
    level: int
    n_nodes: int


def compose_pure(entries):
    """Pure-DP epsilon of a set of releases.

    Parallel composition (McSherry 2009) inside a level and across the trees of a group; sequential
    composition across the levels of a tree and across groups (Li et al. 2020, Theorems 7 and 8):
    ``eps = sum_groups max_trees sum_levels max_entries eps``.

    Parameters
    ----------
    entries : iterable of LedgerEntry

    Returns
    -------
    epsilon : float
        ``0.0`` for no entries; ``inf`` if any entry is non-private.
    """
    per_level = {}
    for e in entries:
        key = (e.group, e.tree, e.level)
        per_level[key] = max(per_level.get(key, 0.0), e.epsilon)
    per_tree = {}
    for (group, tree, _), eps in per_level.items():
        per_tree.setdefault((group, tree), []).append(eps)
    per_group = {}
    for (group, _), level_eps in per_tree.items():
        per_group[group] = max(per_group.get(group, 0.0), math.fsum(level_eps))
    return math.fsum(per_group.values())


class PrivacyLedger:
    """Append-only record of every release made while fitting one model."""

    def __init__(self):
        self.entries = []

    def record(self, **fields):
        """Append one :class:`LedgerEntry` built from ``fields``."""
        self.entries.append(LedgerEntry(**fields))

    def epsilon(self):
        """Composed pure-DP epsilon of everything recorded so far (see :func:`compose_pure`)."""
        return compose_pure(self.entries)
