"""Command line: ``dpboost train | predict | report | schema | demo`` (or ``python -m dpboost``).

The parser lives here; the commands are in :mod:`dpboost._cli` (``train``, ``predict``,
``report``, ``schema``, with the schema file format) and :mod:`dpboost._demo` (``demo``).
Exit status: 0 on success, 2 for bad arguments (argparse), 1 for any other refusal (an unreadable
file, a missing column, an invalid schema, the estimator's own ``ValueError``); each error is one
line on stderr, never a traceback.
"""

import argparse
import sys


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit status 2): the message and where to get help."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser(prog):
    """The parser of every command; ``prog`` names the program in usage and error lines."""
    from . import __version__

    parser = _Parser(prog=prog, description="Differentially private gradient-boosted trees.")
    parser.add_argument("--version", action="version", version=f"dpboost {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    train = commands.add_parser(
        "train", help="fit a model on a CSV file and write it as JSON",
        description="Fit DPGBClassifier or DPGBRegressor on a CSV file and write the model as "
                    "JSON. The public inputs (feature bounds, category lists, classes or target "
                    "bounds) come from --schema; those it leaves out are read from the data, "
                    "with a PrivacyLeakWarning. Nothing about the records is printed.")
    train.add_argument("data", metavar="DATA.csv",
                       help="training data (.csv or .csv.gz, header line; empty fields and ? are "
                            "missing; with --schema each line is one record and each cell is read "
                            "by its column's type in the schema)")
    train.add_argument("--target", required=True, metavar="COL", help="label or target column")
    train.add_argument("--epsilon", required=True, type=float, metavar="E",
                       help="privacy budget, > 0 (inf: no privacy, the non-private baseline)")
    train.add_argument("--delta", type=float, metavar="D",
                       help="delta of (epsilon, delta)-DP (default: the estimator's, 1e-5; 0 = "
                            "pure DP, which needs --param leaf_noise=laplace or average)")
    train.add_argument("--schema", metavar="SCHEMA.json",
                       help="public inputs and column types, JSON (README, 'Command line'; "
                            "`schema adult` writes one); without it every input, and each "
                            "column's type, is read from the data")
    train.add_argument("--task", choices=["classification", "regression"],
                       help="default: regression if the schema has target_bounds, else "
                            "classification")
    train.add_argument("--random-state", type=int, metavar="N",
                       help="seed numpy's noise: reproducible, hence NOT private (experiments "
                            "only); default: secure noise from the operating system")
    train.add_argument("--n-estimators", type=int, metavar="T", help="number of trees")
    train.add_argument("--max-depth", type=int, metavar="D", help="depth of every tree")
    train.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                       help="any other estimator parameter (VALUE read as JSON, else as a "
                            "string), e.g. loss=logistic or learning_rate=0.2; repeatable")
    train.add_argument("-v", "--verbose", action="store_true",
                       help="print progress: trees done and epsilon spent")
    train.add_argument("--out", required=True, metavar="MODEL.json", help="model file to write")

    predict = commands.add_parser(
        "predict", help="predict a CSV file with a model",
        description="Predict every record of a CSV file (one a line; its columns are picked by "
                    "name, others, such as the target, are ignored, and each cell is read by "
                    "the model's type of its column) and write one CSV row per record.")
    predict.add_argument("model", metavar="MODEL.json")
    predict.add_argument("data", metavar="DATA.csv")
    predict.add_argument("--out", metavar="PRED.csv", help="default: standard output")
    predict.add_argument("--proba", action="store_true",
                         help="class probabilities (one column proba_<class> per class) instead "
                              "of labels; classifiers only")

    report = commands.add_parser(
        "report", help="print a model's privacy report",
        description="Print the privacy report of a model: the composed epsilon and its "
                    "ledger by mechanism.")
    report.add_argument("model", metavar="MODEL.json")

    schema = commands.add_parser(
        "schema", help="write the public schema of a shipped dataset",
        description="Write the public schema of a dataset of dpboost.datasets (bounds and "
                    "category lists from its documentation) as a --schema file.")
    schema.add_argument("dataset", choices=["adult", "diabetes"])
    schema.add_argument("--out", metavar="SCHEMA.json", help="default: standard output")

    demo = commands.add_parser(
        "demo", help="train DPGBClassifier on Adult or Diabetes130US at several epsilons, "
                     "print a table")
    demo.add_argument("--dataset", choices=["adult", "diabetes"], default="adult",
                      help="shared dataset, read with pd.read_csv and public bounds and category "
                           "lists (default: %(default)s)")
    demo.add_argument("--data", help="instead of --dataset: a training CSV (.csv or .csv.gz, "
                                     "binary label); bounds and categories read from it, with "
                                     "a PrivacyLeakWarning")
    demo.add_argument("--test", help="test CSV; without it, --data is split 80/20")
    demo.add_argument("--target", default="target", help="label column (default: target)")
    demo.add_argument("--epsilons", default="0.5,1,2,4,8,inf",
                      help="comma-separated budgets; inf = non-private (default: %(default)s)")
    demo.add_argument("--n-estimators", type=int, default=None,
                      help="trees of both settings (default: each setting's own, 100 for the "
                           "default estimator, 50 for the paper's setting)")
    demo.add_argument("--max-depth", type=int, default=None,
                      help="depth of both settings (default: each setting's own, 6)")
    demo.add_argument("--random-state", type=int, default=0)
    demo.add_argument("--shared", default="../shared/datasets",
                      help="folder of the shared datasets (default: %(default)s, relative to the "
                           "working directory); without it, scikit-learn's breast cancer data")
    return parser


def main(argv=None, prog="dpboost"):
    """Parse ``argv`` (default: ``sys.argv[1:]``) and run the chosen command.

    Parameters
    ----------
    argv : list of str or None, default=None
    prog : str, default="dpboost"
        The program's name in usage and error lines (``python -m dpboost`` when run so).

    Returns
    -------
    status : int
        0 on success (and for ``--help``, ``--version``), 2 for bad arguments, 1 for a refused
        run; the console script exits with it.
    """
    parser = _parser(prog)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit:  # --help, --version, or a usage error already printed
        return 0 if exit.code is None else exit.code
    if args.command == "demo":
        from ._demo import main as demo_main

        # As before the other commands existed: warnings and errors as Python raises them.
        return demo_main(args)
    from ._cli import run

    return run(args, f"{prog} {args.command}")


if __name__ == "__main__":
    sys.exit(main(prog="python -m dpboost"))
