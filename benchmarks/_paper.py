"""The methods of the DPBoost paper's experiments (Li et al. 2020, Sec. 4) as estimators.

DPBoost: Ensemble-of-Ensembles with GDF and GLC. SEQ (Liu et al. 2018) and PARA (Zhao et al.
2018): sequential and parallel composition with GDF's sensitivities but no GLC, as in the paper's
baselines. NP: the same learner at epsilon = inf. Every model: depth 6, lambda 0.1, square loss,
g* = 1, 32 bins, numpy noise with a fixed seed (reproducible; experiments only). Scoring and timing:
``_harness``.
"""

import math

from dpboost import DPGBClassifier, DPGBRegressor

METHODS = {
    "DPBoost": {"budget_allocation": "eoe"},
    "SEQ": {"budget_allocation": "sequential", "leaf_clipping": False},
    "PARA": {"budget_allocation": "parallel", "leaf_clipping": False},
}


def make_model(data, method, epsilon, seed, **params):
    """Unfitted estimator of ``method`` ("DPBoost", "SEQ", "PARA", "NP", "DP-XGB", "preset")
    for ``data``.

    "preset" is dpboost's default estimator as shipped (only the data's public inputs and the
    seed added). "DP-XGB" (not a paper method) is the default's building blocks with the
    paper's shape (50 trees of depth 6, lambda 0.1): (epsilon, 1e-5)-DP by Renyi accounting,
    every tree on every record, Gaussian leaf statistics; ``params`` override it
    (bench_blocks_grid.py varies its blocks).
    """
    settings = ({} if method == "preset" else
                {"n_estimators": 50, "trees_per_ensemble": 50, "max_depth": 6,
                 "l2_regularization": 0.1, "max_bins": 32})
    settings.update({"feature_bounds": data["bounds"], "random_state": seed})
    settings.update(METHODS.get(method, {}))
    settings.update(params)
    settings["epsilon"] = math.inf if method == "NP" else epsilon
    if data["task"] == "regression":
        cls, settings["target_bounds"] = DPGBRegressor, data["target_bounds"]
    else:
        cls, settings["classes"] = DPGBClassifier, [0, 1]
    return (cls if method in ("DP-XGB", "preset") else cls.dpboost_paper)(**settings)
