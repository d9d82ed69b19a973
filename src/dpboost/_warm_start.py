"""Warm start: the parameters a ``warm_start`` fit must share with the fitted model, and the
fitted model's public inputs, which the added trees take as they are."""


import numpy as np

from ._public_inputs import PublicInputs

#: Parameters a ``warm_start`` fit must share with the fitted model: the trees' shape, the grid
#: and its candidates, the loss, the accounting mode and the public inputs (the new trees use
#: the fitted model's; docs/privacy.md, Warm start).
WARM_START_FIXED = ("max_depth", "max_bins", "split_candidates", "loss", "delta",
                    "feature_bounds", "categorical_features", "categories", "classes",
                    "target_bounds")


def warm_start_inputs(estimator):
    """With ``warm_start=True`` and a fitted model, its forest and public inputs: the trees
    a new ``fit`` adds to and what it takes as public (the released grid, category lists,
    classes or target bounds, never read from the data again); None otherwise (a fresh fit).

    Returns
    -------
    previous : tuple (Forest, PublicInputs) or None

    Raises
    ------
    ValueError
        ``n_estimators`` below the fitted number of stages, a parameter of
        :data:`WARM_START_FIXED` changed since the fit (named), or a fitted model of no tree.
    """
    forest = getattr(estimator, "_forest", None)
    if not estimator.warm_start or forest is None:
        return None
    # The number of trees of the configuration the fit takes (its rules read the public hint
    # or the count the first fit released; without one, the first regime's, as the fit).
    n_estimators = estimator._configs(n_features=estimator.n_features_in_,
                                      previous=forest)[0].n_estimators
    if n_estimators < forest.n_stages:
        shown = "" if n_estimators == estimator.n_estimators else f" ({n_estimators})"
        raise ValueError(f"n_estimators={estimator.n_estimators!r}{shown} must be >= the "
                         f"{forest.n_stages} trees per output fitted so far when "
                         "warm_start=True (set warm_start=False to refit from scratch).")
    if not any(entry.tree >= 0 for entry in estimator.privacy_ledger_):
        # The constant regime's model (``_auto.constant_model``): its grid was never made for
        # trees (no Hessian sketch), so none can be added on it.
        raise ValueError("warm_start=True: the fitted model is the private mean alone (the "
                         "constant regime of a small row count times epsilon, no tree), which "
                         "trees cannot be added to; set warm_start=False to refit from scratch.")
    fitted = getattr(estimator, "_warm_start_params", None)
    if fitted is None:
        raise ValueError("warm_start=True: the fitted model does not record the parameters it "
                         "was fitted with (an older dpboost wrote it); set warm_start=False to "
                         "refit from scratch.")
    for name, value in estimator.get_params(deep=False).items():
        if name in WARM_START_FIXED and repr(value) != fitted[name]:
            raise ValueError(f"{name} changed from {fitted[name]} to {value!r} since the fit; "
                             "warm_start=True adds trees to the fitted model, which fixes it "
                             "(set warm_start=False to refit from scratch).")
    categories = estimator.categories_
    numeric = np.setdiff1d(np.arange(estimator.n_features_in_), list(categories))
    target = ({"classes_": estimator.classes_} if hasattr(estimator, "classes_")
              else {"target_bounds_": estimator.target_bounds_})
    return forest, PublicInputs(estimator.feature_bounds_, categories, numeric, target, ())


def warm_start_params(estimator):
    """What :func:`warm_start_inputs` compares a later fit's parameters with."""
    return {name: repr(value) for name, value in estimator.get_params(deep=False).items()
            if name in WARM_START_FIXED}
