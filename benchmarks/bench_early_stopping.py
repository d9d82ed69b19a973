"""Early stopping (``early_stopping=True``) against none, at epsilon 1 and 4.

Adult: an inner split of ``adult.data`` only (5-fold KFold(shuffle=True, random_state=0) of the
training file, the official test file untouched), the default classifier; California housing
(5-fold cross-validation), the default regressor. Each cell is the default with and without
early stopping (``validation_fraction=0.1``, ``n_iter_no_change=20``: the defaults), seeded
numpy noise (``random_state = fold``), the same folds for both. Reports the test error / ROC AUC
or RMSE, the stages fitted (``n_iter_``) and the fit time; the privacy spent is the same (the
whole plan). results/early_stopping.csv; ``--quick``: 2 folds, 5,000 rows at most.
"""

import _harness
import _loaders

DATASETS = ("adult", "california")
EPSILONS = (1.0, 4.0)


def load_inner(name):
    """The dataset without its official test split: Adult's folds come from adult.data alone."""
    return {k: v for k, v in _loaders.load(name).items() if k not in ("X_test", "y_test")}


def cells(data, fold):
    from dpboost import DPGBClassifier, DPGBRegressor

    for epsilon in EPSILONS:
        for early in (False, True):
            params = dict(epsilon=epsilon, random_state=fold.fold, early_stopping=early,
                          feature_bounds=data["bounds"])
            model = (DPGBRegressor(target_bounds=data["target_bounds"], **params)
                     if data["task"] == "regression" else DPGBClassifier(classes=[0, 1], **params))
            yield {"epsilon": epsilon, "early_stopping": early}, model


def describe(data, model, fold):
    return {**_harness.scores(data, model, fold), "n_iter": model.n_iter_,
            "n_estimators": model._config(None, fold.X.shape[1]).n_estimators,
            "privacy_spent": model.privacy_spent_}


def main():
    args = _harness.parser(__doc__).parse_args()
    rows = _harness.run_grid(DATASETS, cells, 2 if args.quick else 5,
                             max_rows=5000 if args.quick else None, load=load_inner,
                             describe=describe)
    name = _harness.result_name("early_stopping", args)
    _harness.write_results(name, rows)
    _harness.print_table(_harness.summarise(
        rows, ["dataset", "epsilon", "early_stopping"],
        {"error_or_rmse": _harness.main_metric, "n_iter": "n_iter",
         "fit_s": "fit_s"}))


if __name__ == "__main__":
    main()
