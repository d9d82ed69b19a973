"""The two mechanism choices of a tree, one class per parameter value: how a node picks its
split (``split_selection``: :data:`SPLIT_SELECTIONS`) and how a leaf is released
(``leaf_noise``: :data:`LEAF_RELEASES`). The parameter constraints, the planner (``_budget``),
the grower, the ``"auto"`` policy and the importances read what they need from these classes;
a new split selection or leaf release is one new class here, its sensitivity in
``_sensitivities``, its ledger kind in ``_releases``, and its tests.
"""

import math

from ._sensitivities import (
    average_leaf_sensitivity,
    gaussian_leaf_sensitivity,
    leaf_clip_bound,
    leaf_sensitivity,
    newton_hessian_scale,
    weighted_leaf_sensitivity,
)


class SplitSelection:
    """Split selection by the exponential mechanism over every candidate's gain (DPBoost, Li et
    al. 2020, Algorithm 1; ledger kind ``"exponential"``, ``"argmax"`` without noise)."""

    #: Whether the choice reads the records (and so spends budget on each level).
    reads_records = True
    #: Whether tree t of each output splits on feature ``t mod n_features`` only.
    one_feature_per_tree = False

    def ledger_mechanism(self, private):
        """The ledger kind (``_releases.RELEASES``) of one level's choice."""
        if not self.reads_records:
            return "uniform"
        return "exponential" if private else "argmax"


class CyclicalSplits(SplitSelection):
    """The exponential mechanism over the candidates of feature ``t mod n_features`` only (DP-XGB's
    cyclical trees)."""

    one_feature_per_tree = True


class RandomSplits(SplitSelection):
    """A uniform candidate of the public grid (S-BDT's random splits): data-independent, no
    budget (ledger kind ``"uniform"``)."""

    reads_records = False


#: Every ``split_selection`` value.
SPLIT_SELECTIONS = {"exponential": SplitSelection(), "cyclical": CyclicalSplits(),
                    "random": RandomSplits()}


class LaplaceLeaves:
    """The leaf value ``-sum g / (n + lambda)``, clipped by GLC, with Laplace noise (DPBoost, Li
    et al. 2020, Eq. 4 and Lemma 2): one number per leaf, no released weight."""

    #: Whether the noise is Gaussian (Renyi-accounted: needs delta > 0) rather than Laplace.
    gaussian = False
    #: Whether the leaf releases a weight (Hessian sum or count) beside its gradient sum.
    releases_weight = False
    #: Whether that weight is the Hessian sum (Newton leaves) rather than the count.
    newton = False
    #: The numbers released per leaf (what one record moves, on the secure samplers' lattice).
    coordinates = 1

    def weight_per_record(self, hessian_bound):
        """The most one record adds to the released weight (0: none released)."""
        return 0.0

    def hessian_scale(self, gradient_bound, hessian_bound):
        """The public factor of the released weight (1: released as it is)."""
        return 1.0

    def denominator_floor(self, l2_regularization):
        """The least denominator of a leaf value computed from a released (sum, weight)."""
        raise ValueError("leaf_noise='laplace' releases no weight to divide by.")

    def clip_and_sensitivity(self, position, *, learning_rate, leaf_clipping, gradient_bound,
                             hessian_bound, l2_regularization, weight_bound):
        """The leaf's public clip bound and the sensitivity of its release for the tree at
        ``position`` of its ensemble; ``weight_bound`` W: None without sample weights."""
        clip = (leaf_clip_bound(position, learning_rate, gradient_bound) if leaf_clipping
                else math.inf)
        return clip, self.value_sensitivity(clip, gradient_bound, l2_regularization, weight_bound)

    def value_sensitivity(self, clip, gradient_bound, l2_regularization, weight_bound):
        """Sensitivity of a leaf value clipped to ``[-clip, clip]``: Lemma 2, or its weighted
        bound with sample weights (docs/privacy.md, Sample weights)."""
        if weight_bound is None:
            return leaf_sensitivity(l2_regularization, clip, gradient_bound)
        return weighted_leaf_sensitivity(l2_regularization, clip, gradient_bound, weight_bound)


#: Fraction of a Newton leaf's zCDP budget spent on its gradient sum, the rest on its Hessian
#: sum (S-BDT, Kirschte et al.: reference code kirschte/sbdt, ``leaf_denom_noise_weight``,
#: the Hessian's share). The release of ``(G, H)`` as they are
#: (``c = 1``) is the share ``g*^2 / (g*^2 + h*^2)``: 0.8 for the classifier's g* = 0.5,
#: h* = 0.25, 0.5 for the regressor's g* = h* = 1. benchmarks/README.md, "Gradient and Hessian
#: shares of a leaf": 0.9 is within the seed spread of 0.8 on Adult and well ahead of 0.5 on
#: Abalone (tuning splits).
NEWTON_GRADIENT_SHARE = 0.9


class NewtonLeaves(LaplaceLeaves):
    """The (gradient sum, Hessian sum) of each leaf with Gaussian noise, the leaf
    ``-G~ / max(H~ + lambda, lambda)`` (DP-XGB, "Revisiting differentially private XGBoost",
    Sec. 3), 0 where ``H~ < min_child_weight`` (with ``min_child_weight=0``, S-BDT's cut-off
    of a negative noisy Hessian sum) and clipped to ``g* / h*`` after the release
    (post-processing). The Hessian sum is released as ``c H`` and divided by ``c`` after the
    release, ``c`` from :data:`NEWTON_GRADIENT_SHARE`
    (:func:`~dpboost._sensitivities.newton_hessian_scale`)."""

    gaussian = True
    releases_weight = True
    newton = True
    coordinates = 2

    def weight_per_record(self, hessian_bound):
        return hessian_bound

    def denominator_floor(self, l2_regularization):
        return l2_regularization

    def hessian_scale(self, gradient_bound, hessian_bound):
        return newton_hessian_scale(NEWTON_GRADIENT_SHARE, gradient_bound, hessian_bound)

    def clip_and_sensitivity(self, position, *, learning_rate, leaf_clipping, gradient_bound,
                             hessian_bound, l2_regularization, weight_bound):
        return (gradient_bound / hessian_bound,
                gaussian_leaf_sensitivity(hessian_bound, gradient_bound,
                                          1.0 if weight_bound is None else weight_bound,
                                          self.hessian_scale(gradient_bound, hessian_bound)))


class AverageLeaves(LaplaceLeaves):
    """The (gradient sum, count) of each leaf with Laplace noise, the leaf their noisy average
    (DP-XGBoost, Grislain & Gonzalvez 2021), clipped by GLC (or ``g*``) after the release."""

    releases_weight = True
    coordinates = 2

    def weight_per_record(self, hessian_bound):
        return 1.0

    def denominator_floor(self, l2_regularization):
        # A non-empty leaf's count is at least 1.
        return 1.0 + l2_regularization

    def clip_and_sensitivity(self, position, *, learning_rate, leaf_clipping, gradient_bound,
                             hessian_bound, l2_regularization, weight_bound):
        clip = (leaf_clip_bound(position, learning_rate, gradient_bound) if leaf_clipping
                else gradient_bound)
        return clip, average_leaf_sensitivity(gradient_bound,
                                              1.0 if weight_bound is None else weight_bound)


#: Every ``leaf_noise`` value.
LEAF_RELEASES = {"laplace": LaplaceLeaves(), "gaussian": NewtonLeaves(),
                 "average": AverageLeaves()}
