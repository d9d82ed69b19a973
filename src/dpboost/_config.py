"""The resolved configuration of one fit: :class:`FitConfig`, made once in ``fit`` from the
estimator's parameters (every ``"auto"`` resolved from public inputs by ``_auto``) before any
record is read, and passed down to the planner and the boosting loop, which read it only."""

from dataclasses import dataclass

from ._tree_mechanisms import SPLIT_SELECTIONS


@dataclass(frozen=True)
class FitConfig:
    """A fit's hyper-parameters, resolved and typed: what the plan and the boosting loop read.

    Every field is a public input (a parameter, or a value resolved from parameters and the
    schema by :func:`~dpboost._auto.resolve_config`); the records never enter it.

    Attributes
    ----------
    epsilon, delta : float
        The fit's budget.
    n_estimators : int
        Boosting stages, ``"auto"`` resolved.
    max_depth, max_bins, trees_per_ensemble : int
    learning_rate, l2_regularization, min_child_weight, subsample, gradient_bound : float
        ``"auto"`` resolved.
    split_selection, split_candidates, leaf_noise, budget_allocation : str
    interaction_cst : str or None
    leaf_clipping, gradient_filtering : bool
    renyi_filter : float or None
        The individual Renyi filter's share (None: no filter).
    weight_bound : float or None
        W, the bound of a record's weight (``_public_inputs.resolve_weight_bound``); None: an
        unweighted fit.
    private_feature_bounds, private_target_bounds : bool
        Whether the fit releases the numeric features' bounds / the target's bounds
        (``"private"``).
    init : {"private", "zero"}
        The initial scores: released (``_initial``) or 0.
    initial_share : float or None
        The share of the budget on the initial score's release: 1 in the constant regime
        (``_auto.constant_model``, no tree), ``_auto.SMALL_INITIAL_SHARE`` (the regime's own
        trees) or ``_auto.SMALL_GIVEN_TREES_SHARE`` (``n_estimators`` given) where
        ``n_samples_hint * epsilon`` is small, else None (the planner's ``INITIAL_SHARE``).
    random_state : None, int, Generator, RandomState or NoiseSource
        The source of the fit's noise (``_noise.make_noise``).
    verbose : int
    domain_groups : int, default=0
        Groups of the domain report's counts (``domain_report=True``: the columns of ``X``
        plus 2, from the schema); 0: no report.
    early_stopping : bool, default=False
    validation_fraction : float, default=0.1
    n_iter_no_change : int, default=20
        Early stopping on a private validation score (``_early_stopping``).
    accounting : {"auto", "rdp"}, default="auto"
        Whether the planner raises the trees' budget as far as the PLD accountant certifies
        (``_pld``; not with early stopping).
    private_row_count : bool, default=False
        Whether the fit releases its row count first (``n_samples_hint="private"``,
        ``_row_count``); this configuration is then the one its regime of the count chose.
    count_thresholds : tuple of (float, float), default=()
        With ``private_row_count``, the thresholds of ``n x epsilon`` and their margins that
        the released count is compared with (``_auto.count_thresholds``).
    n_samples : float or None, default=None
        The row count the rules were resolved with: a public ``n_samples_hint``, a count an
        earlier fit released, or with ``private_row_count`` a count inside the regime (the
        fit then reads the one it releases); None: none.
    interaction_choice : tuple of FitConfig, default=()
        A private choice of interactions (``_auto.chooses_interactions``,
        ``_interaction_choice``): the additive and the unrestricted configuration it chooses
        between (this one is the additive one); empty: none.
    """

    epsilon: float
    delta: float
    n_estimators: int
    max_depth: int
    max_bins: int
    learning_rate: float
    l2_regularization: float
    min_child_weight: float
    subsample: float
    gradient_bound: float
    split_selection: str
    split_candidates: str
    leaf_noise: str
    budget_allocation: str
    trees_per_ensemble: int
    interaction_cst: object
    leaf_clipping: bool
    gradient_filtering: bool
    renyi_filter: object
    weight_bound: object
    private_feature_bounds: bool
    private_target_bounds: bool
    init: str
    initial_share: object
    random_state: object
    verbose: int
    domain_groups: int = 0
    early_stopping: bool = False
    validation_fraction: float = 0.1
    n_iter_no_change: int = 20
    accounting: str = "auto"
    private_row_count: bool = False
    count_thresholds: tuple = ()
    n_samples: object = None
    interaction_choice: tuple = ()

    @property
    def cyclical(self):
        """Whether tree t of each output splits on feature ``t mod n_features`` only."""
        return (SPLIT_SELECTIONS[self.split_selection].one_feature_per_tree
                or self.interaction_cst == "no_interactions")
