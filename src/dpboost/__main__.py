"""Command line: ``python -m dpboost demo [options]``."""

import argparse
import sys


def main(argv=None):
    """Parse ``argv`` and run the chosen command; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m dpboost")
    commands = parser.add_subparsers(dest="command", required=True)
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
    args = parser.parse_args(argv)
    from ._demo import main as demo_main

    return demo_main(args)


if __name__ == "__main__":
    sys.exit(main())
