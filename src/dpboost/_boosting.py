"""The boosting loop: from binned records and a budget plan to a :class:`~dpboost._predictor.Forest`.

The only caller of the grower. Everything here is independent of scikit-learn: the estimators
(and any other front end) call :func:`train` with validated records and their public inputs.
"""

import math

import numpy as np

from ._accounting import PrivacyLedger
from ._budget import plan_budget
from ._candidates import (
    hessian_sketch_candidates,
    initial_binner,
    initial_candidates,
    private_bounds,
)
from ._common import G_H_DTYPE, SAMPLE_INDEX_DTYPE
from ._grower import grow_tree
from ._loss import scale_target
from ._mechanisms import make_noise, partition_records, poisson_sample
from ._predictor import Forest


def plan_fit(params, loss, n_outputs, n_numeric):
    """The fit's budget plan, from public inputs only (hyper-parameters, the number of outputs
    from the classes, how many columns are numeric, the loss's bounds): made before any record is
    read, so that an accountant can refuse the fit first.

    Parameters
    ----------
    params : dict
        As :func:`train`'s.
    loss : loss object or class of ``_loss``
        Its ``hessian_bound`` and ``hessian_sketch_rounds``.
    n_outputs, n_numeric : int

    Returns
    -------
    plan : BudgetPlan
    """
    return plan_budget(
        epsilon=float(params["epsilon"]), n_estimators=params["n_estimators"],
        max_depth=params["max_depth"], learning_rate=float(params["learning_rate"]),
        l2_regularization=float(params["l2_regularization"]),
        budget_allocation=params["budget_allocation"],
        trees_per_ensemble=params["trees_per_ensemble"], leaf_clipping=params["leaf_clipping"],
        n_outputs=n_outputs, delta=float(params["delta"]),
        leaf_noise=params["leaf_noise"], hessian_bound=loss.hessian_bound,
        split_selection=params["split_selection"], subsample=float(params["subsample"]),
        sketch_features=n_numeric if params["split_candidates"] == "sketch" else 0,
        hessian_sketch_features=n_numeric if params["split_candidates"] == "hessian" else 0,
        hessian_sketch_rounds=loss.hessian_sketch_rounds,
        gradient_bound=float(params["gradient_bound"]),
        bounds_features=(n_numeric * _is_private(params["feature_bounds"])
                         + _is_private(params.get("target_bounds"))))


def _is_private(value):
    """Whether a public-input parameter asks for a private release (``"private"``)."""
    return isinstance(value, str) and value == "private"


def train(X, y_scaled, inputs, loss, params, plan, n_threads, fit_id=None):
    """Place the split candidates and boost: the whole private fit after its plan.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype=float64
        The records in the data domain (``_validation.fit_inputs``).
    y_scaled : ndarray of shape (n_samples, n_outputs), dtype=float64
        Labels or targets in [-1, 1] (with ``target_bounds="private"``: the targets, scaled once
        their bounds are released).
    inputs : PublicInputs
    loss : SquareLoss, LogisticLoss or SoftmaxLoss
    params : dict
        The estimator's parameters (``get_params()``), ``min_child_weight`` resolved to a number.
    plan : BudgetPlan
        From :func:`plan_fit` with ``y_scaled.shape[1]`` outputs and ``inputs.numeric.size``
        numeric features.
    n_threads : int
        Threads of every kernel; the model does not depend on it.
    fit_id : str or None, default=None
        The fit's identifier in the ledger (None: a random one).

    Returns
    -------
    forest : Forest
    ledger : PrivacyLedger
        Every release, in the plan's order.
    filtered : ndarray of shape (n_trees,), dtype=float64
        The exact GDF filtered fraction per tree (NOT private: only stored on request).
    released : dict
        Public inputs released by the fit: ``{"target_bounds_": (lower, upper)}`` with
        ``target_bounds="private"``, else empty (released feature bounds are the forest's grid).
    """
    numeric = inputs.numeric
    noise = make_noise(params["random_state"])
    ledger = PrivacyLedger(fit_id)
    bounds, released = inputs.feature_bounds, {}
    if plan.bounds is not None:
        # Public inputs released from the data first (docs/privacy.md, Private feature bounds).
        private_features = _is_private(params["feature_bounds"])
        private_target = _is_private(params.get("target_bounds"))
        columns = np.column_stack(([X[:, numeric]] if private_features else [])
                                  + ([y_scaled] if private_target else []))
        values = private_bounds(columns, plan.bounds, noise, ledger)
        if private_features:
            bounds = bounds.copy()
            bounds[numeric] = values[:numeric.size]
        if private_target:
            released["target_bounds_"] = tuple(float(v) for v in values[-1])
            y_scaled = scale_target(y_scaled[:, 0], released["target_bounds_"])[:, None]
    binner = initial_binner(X, bounds, numeric, params["max_bins"], plan, noise, ledger)
    candidates = initial_candidates(binner, X.shape[1], inputs.categories)
    forest = Forest.empty(y_scaled.shape[1], params["n_estimators"], params["max_depth"], binner)

    def progress(trees_done):
        # Counts and the planned spend only: wall-clock time would track n.
        print(f"[dpboost] {trees_done}/{len(plan.trees)} trees, epsilon spent "
              f"{ledger.epsilon(float(params['delta'])):.4g}")

    filtered = boost(binner.transform(X, order="F"), y_scaled, plan, loss, candidates, forest,
                     noise, ledger, n_threads, numeric=numeric, max_depth=params["max_depth"],
                     learning_rate=float(params["learning_rate"]),
                     l2_regularization=float(params["l2_regularization"]),
                     gradient_filtering=params["gradient_filtering"],
                     cyclical=(params["split_selection"] == "cyclical"
                               or params["interaction_cst"] == "no_interactions"),
                     min_child_weight=params["min_child_weight"], max_bins=params["max_bins"],
                     progress=progress if params["verbose"] else None)
    return forest, ledger, filtered, released


def boost(X_binned, y_scaled, plan, loss, candidates, forest, noise, ledger, n_threads, *,
          numeric, max_depth, learning_rate, l2_regularization, gradient_filtering, cyclical,
          min_child_weight, max_bins, progress=None):
    """Grow every tree of ``plan`` into ``forest`` (Li et al. 2020, Algorithms 1 and 2; DP-XGB).

    For each planned tree t of output k, in the plan's order (with a loss that couples the
    outputs, round by round: every round's K trees use the scores after the previous round):

    1. gradients (and Hessians) of every record from the current scores ``F_k``, F0 = 0
       (docs/privacy.md, rule 15: a data mean would leak);
    2. before the trees ``plan.hessian_sketch_trees``, the Hessian sketch's release replaces
       the numeric features' candidates of output k;
    3. record selection, each record by its own coins: its EoE ensemble position (one partition
       per ensemble, drawn at the ensemble's first tree), a Poisson sample at the tree's
       ``sampling_rate``, and GDF (``|g| > g*`` leaves the tree) or gradient clipping;
    4. ``grow_tree`` with the tree's budget, leaves shrunk by ``learning_rate``;
    5. ``F_k += tree(x)`` for every record.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype=uint8, Fortran order
    y_scaled : ndarray of shape (n_samples, n_outputs), dtype=float64
    plan : BudgetPlan
    loss : loss object of ``_loss``
    candidates : ndarray of dtype=int64 or None
        Initial boundary indices (None: all).
    forest : Forest
        Filled in place.
    noise : NoiseSource
    ledger : PrivacyLedger
        Receives every release; sorted into the plan's order at the end.
    n_threads : int
    numeric : ndarray of int
        The numeric features (those the Hessian sketch places).
    max_depth : int
    learning_rate, l2_regularization : float
    gradient_filtering : bool
    cyclical : bool
        Tree t of each output splits on feature ``t mod n_features`` only.
    min_child_weight : float
    max_bins : int
    progress : callable or None
        Called with the number of trees done after the last tree of each composition group.

    Returns
    -------
    filtered : ndarray of shape (n_trees,), dtype=float64
        Exact GDF filtered fraction per tree (a non-private diagnostic).
    """
    n_samples = X_binned.shape[0]
    n_trees, n_stages = len(plan.trees), forest.n_stages
    filtered = np.zeros(n_trees)
    raw = np.zeros((y_scaled.shape[1], n_samples))
    y_rows = np.ascontiguousarray(y_scaled.T)
    coupled = loss.couples_outputs and raw.shape[0] > 1
    order = (sorted(plan.trees, key=lambda tb: (tb.tree % n_stages, tb.output))
             if coupled else plan.trees)
    all_gradients = np.empty(raw.shape, dtype=G_H_DTYPE)
    all_hessians = np.empty(raw.shape, dtype=G_H_DTYPE) if loss.has_hessians else None
    private = math.isfinite(plan.epsilon)
    position_of_record = {}  # per output: the EoE partition of its current ensemble
    candidates_of = [candidates] * raw.shape[0]  # per output: the Hessian sketch's
    n_rounds = len(plan.hessian_sketch_trees)

    for i, tb in enumerate(order):
        if plan.record_shares is not None and (tb.position == 0
                                               or tb.output not in position_of_record):
            position_of_record[tb.output] = partition_records(n_samples, plan.record_shares,
                                                              noise)
        loss.gradients(raw, y_rows, all_gradients, all_hessians, tb.output)
        gradients = all_gradients[tb.output]
        hessians = None if all_hessians is None else all_hessians[tb.output]
        t = tb.tree % n_stages
        if t in plan.hessian_sketch_trees:
            release = plan.hessian_sketches[tb.output * n_rounds
                                            + plan.hessian_sketch_trees.index(t)]
            candidates_of[tb.output] = hessian_sketch_candidates(
                X_binned, hessians, numeric, candidates, max_bins, release, noise, ledger,
                n_threads)
        selected = (np.ones(n_samples, dtype=bool) if plan.record_shares is None
                    else position_of_record[tb.output] == tb.position)
        if tb.sampling_rate < 1.0:
            selected &= poisson_sample(n_samples, tb.sampling_rate, noise)
        # The gradients are float32: filter or clip at the largest float32 <= g* (float32(0.4)
        # exceeds 0.4, and the sensitivities assume |g| <= g*; found by tests/test_replay.py).
        bound = np.float32(tb.gradient_bound)
        if float(bound) > tb.gradient_bound:  # a float32 comparison would call them equal
            bound = np.nextafter(bound, np.float32(0))
        if private and gradient_filtering:
            keep = np.abs(gradients) <= bound
            n_selected = np.count_nonzero(selected)
            selected &= keep
            if n_selected:
                filtered[tb.tree] = 1.0 - np.count_nonzero(selected) / n_selected
        elif private:
            np.clip(gradients, -bound, bound, out=gradients)
        indices = np.flatnonzero(selected).astype(SAMPLE_INDEX_DTYPE)
        f, b, m, v = grow_tree(X_binned, indices, gradients[indices], budget=tb,
                               max_depth=max_depth,
                               n_bins=forest.binner.max_bins,
                               l2_regularization=l2_regularization, noise=noise, ledger=ledger,
                               n_threads=n_threads,
                               hessians=None if hessians is None else hessians[indices],
                               feature=t % X_binned.shape[1] if cyclical else None,
                               min_child_weight=min_child_weight,
                               candidates=candidates_of[tb.output])
        forest.set_tree(tb.tree, f, b, m, v * learning_rate)
        forest.add_trees(X_binned, slice(tb.tree, tb.tree + 1), n_threads, raw[tb.output])
        if progress is not None and (i + 1 == n_trees or order[i + 1].group != tb.group):
            progress(tb.tree + 1)
    # the ledger in the plan's order (tree by tree), whatever the growing order
    ledger.entries.sort(key=lambda e: (e.tree, e.level))
    return filtered
