"""Pure budget planner and the sensitivities it uses.

The plan depends only on public hyper-parameters, so ``fit`` computes it before it reads any data,
and every mechanism takes its epsilon and sensitivity from here (STYLE.md habit 4).
"""

import math
from dataclasses import dataclass

import numpy as np

from ._accounting import LedgerEntry, compose_pure
from ._common import GRADIENT_BOUND


def gain_sensitivity(gradient_bound=GRADIENT_BOUND):
    """Sensitivity of the split gain, ``3 g*^2`` (Li et al. 2020, Lemma 1; PRIVACY.md).

    Holds under add/remove of one record with ``|g| <= g*`` for every ``lambda >= 0``.
    """
    return 3.0 * gradient_bound**2


def leaf_clip_bound(position, learning_rate, gradient_bound=GRADIENT_BOUND):
    """Geometric leaf clipping threshold ``g* (1 - eta)^t_e`` (Li et al. 2020, Sec. 3.1, GLC).

    ``position`` is the 0-based position of the tree inside its ensemble (PRIVACY.md: the authors'
    code, not Algorithm 2's global index).
    """
    return gradient_bound * (1.0 - learning_rate) ** position


def leaf_sensitivity(l2_regularization, clip_bound=math.inf, gradient_bound=GRADIENT_BOUND):
    """Sensitivity of one leaf value.

    ``min(g* / (1 + lambda), 2 * clip_bound)``: Lemma 2 of Li et al. 2020 bounds an unclipped leaf
    ``-sum g / (n + lambda)`` by ``g* / (1 + lambda)``; a leaf clipped to ``[-c, c]`` moves by at most
    ``2 c`` (Corollary 2).
    """
    return min(gradient_bound / (1.0 + l2_regularization), 2.0 * clip_bound)


@dataclass(frozen=True)
class TreeBudget:
    """Budget and sensitivities of one tree.

    Attributes
    ----------
    tree, group, position : int
        Tree index; its composition group (see ``LedgerEntry.group``); its position in the ensemble.
    output : int
        The output (one-vs-rest class) the tree belongs to; 0 for a single output.
    epsilon_level : float
        Exponential-mechanism epsilon of each depth level, ``eps_t / (2 max_depth)`` (Algorithm 1).
    epsilon_leaf : float
        Laplace epsilon of the leaves, ``eps_t / 2`` (Algorithm 1).
    gain_sensitivity, leaf_sensitivity : float
    leaf_clip : float
        GLC bound on the leaf value before noise; ``inf`` without clipping.
    """

    tree: int
    group: int
    position: int
    output: int
    epsilon_level: float
    epsilon_leaf: float
    gain_sensitivity: float
    leaf_sensitivity: float
    leaf_clip: float


@dataclass(frozen=True)
class BudgetPlan:
    """Everything ``fit`` will release, decided before any data is read.

    Attributes
    ----------
    trees : tuple of TreeBudget
    record_shares : ndarray of shape (n_positions,), dtype=float64, or None
        Probability that a record goes to the tree at each position of its group (independent
        categorical draw per record); the rest of the probability mass is unused. ``None``: every
        tree sees every record.
    max_depth : int
    epsilon : float
        Composed pure-DP epsilon of :attr:`entries`, never above the requested epsilon.
    """

    trees: tuple
    record_shares: object
    max_depth: int
    epsilon: float

    @property
    def entries(self):
        """The ledger that fitting must produce, as a list of LedgerEntry."""
        private = math.isfinite(self.epsilon)
        out = []
        for tb in self.trees:
            for level in range(self.max_depth):
                out.append(LedgerEntry(
                    mechanism="exponential" if private else "argmax",
                    epsilon=tb.epsilon_level, sensitivity=tb.gain_sensitivity,
                    group=tb.group, tree=tb.tree, level=level, n_nodes=2**level))
            out.append(LedgerEntry(
                mechanism="laplace" if private else "exact",
                epsilon=tb.epsilon_leaf, sensitivity=tb.leaf_sensitivity,
                group=tb.group, tree=tb.tree, level=self.max_depth, n_nodes=2**self.max_depth))
        return out


def _layout(budget_allocation, n_estimators, trees_per_ensemble, learning_rate):
    """Groups, positions and record shares of the three allocations (Li et al. 2020, Sec. 3.2, 4)."""
    t = np.arange(n_estimators)
    if budget_allocation == "eoe":
        # Algorithm 2: ensembles of T_e trees on disjoint records, share proportional to the
        # GLC leaf bound eta (1 - eta)^t_e, normalised over a full ensemble.
        positions = np.arange(trees_per_ensemble)
        decay = (1.0 - learning_rate) ** positions
        shares = learning_rate * decay / (1.0 - (1.0 - learning_rate) ** trees_per_ensemble)
        return t // trees_per_ensemble, t % trees_per_ensemble, shares
    if budget_allocation == "parallel":
        # PARA (Zhao et al. 2018): each tree takes half of the still-unused records.
        return np.zeros_like(t), t, 0.5 ** (t + 1.0)
    # "sequential" (SEQ, Liu et al. 2018): every tree sees every record.
    return t, t, None


def plan_budget(*, epsilon, n_estimators, max_depth, learning_rate, l2_regularization,
                budget_allocation, trees_per_ensemble, leaf_clipping, n_outputs=1):
    """Plan every mechanism's epsilon and sensitivity.

    Parameters
    ----------
    epsilon : float
        Total pure-DP budget, in (0, inf]; ``inf`` plans the non-private NP baseline (argmax splits,
        exact leaves, every tree on every record, no clipping).
    n_estimators, max_depth : int
    learning_rate : float
        Shrinkage eta in (0, 1]; also the GLC decay and the EoE share ratio.
    l2_regularization : float
    budget_allocation : {"eoe", "sequential", "parallel"}
        ``"eoe"``: ``ceil(T / T_e)`` ensembles get ``eps / N_e`` each (Algorithm 2);
        ``"sequential"``: every tree gets ``eps / T``; ``"parallel"``: every tree gets ``eps``.
    trees_per_ensemble : int
    leaf_clipping : bool
        Apply GLC, with the tree's position in its ensemble.
    n_outputs : int, default=1
        Number of boosted outputs trained on the same records (one-vs-rest classes): each gets
        ``n_estimators`` trees and ``epsilon / n_outputs`` (sequential composition); tree
        ``k * n_estimators + t`` is tree ``t`` of output ``k``.

    Returns
    -------
    plan : BudgetPlan
    """
    n_trees = n_outputs * n_estimators
    if not math.isfinite(epsilon):
        trees = tuple(
            TreeBudget(tree=t, group=t, position=t % n_estimators, output=t // n_estimators,
                       epsilon_level=math.inf, epsilon_leaf=math.inf,
                       gain_sensitivity=gain_sensitivity(),
                       leaf_sensitivity=leaf_sensitivity(l2_regularization), leaf_clip=math.inf)
            for t in range(n_trees))
        return BudgetPlan(trees=trees, record_shares=None, max_depth=max_depth, epsilon=math.inf)

    groups, positions, shares = _layout(budget_allocation, n_estimators, trees_per_ensemble,
                                        learning_rate)
    n_groups = int(groups.max()) + 1
    epsilon_tree = epsilon / (n_outputs * n_groups)
    while True:
        trees = []
        for tree in range(n_trees):
            output, t = divmod(tree, n_estimators)
            clip = (leaf_clip_bound(int(positions[t]), learning_rate) if leaf_clipping
                    else math.inf)
            trees.append(TreeBudget(
                tree=tree, group=output * n_groups + int(groups[t]),
                position=int(positions[t]), output=output,
                epsilon_level=epsilon_tree / (2 * max_depth), epsilon_leaf=epsilon_tree / 2,
                gain_sensitivity=gain_sensitivity(),
                leaf_sensitivity=leaf_sensitivity(l2_regularization, clip), leaf_clip=clip))
        plan = BudgetPlan(trees=tuple(trees), record_shares=shares, max_depth=max_depth,
                          epsilon=0.0)
        spent = compose_pure(plan.entries)
        if spent <= epsilon:
            return BudgetPlan(trees=plan.trees, record_shares=shares, max_depth=max_depth,
                              epsilon=spent)
        # Floating-point rounding of eps / N_e / (2 depth) summed back can exceed eps by an ulp;
        # never overspend.
        epsilon_tree = np.nextafter(epsilon_tree, 0.0)
