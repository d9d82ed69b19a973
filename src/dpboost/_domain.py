"""The domain report (``domain_report=True``; docs/privacy.md, Domain report): noisy counts of
the records each column's public inputs leave out, clip or read as missing.

A record outside the data domain is treated by its own value (a label outside ``classes`` or a
target that is not a number leaves its record out, a category outside its list or a text cell
in a numeric column is missing, a value outside the bounds is clipped): the right private
treatment, but silent. A spelling mismatch between the data and a public list (``y`` in
``{"no", "yes"}`` with ``classes=["No", "Yes"]``) leaves every record out. The report releases,
once before anything else, how many records each treatment met, per column, with noise; its
warning reads the released counts only.

The counts' layout (which counts, in which order) is a function of the schema and the
parameters (:func:`domain_layout`); the counts themselves are computed from the records
(:func:`domain_counts`) and released by one Gaussian (``delta > 0``) or Laplace release
(:func:`release_domain_report`).
"""

import math
import warnings

import numpy as np

from ._accounting import LedgerEntry
from ._mechanisms import noise_scale
from ._thresholds import share_release

#: Kinds of count of a numeric column, of a categorical one, of the target, and the number of
#: records: each record holds one kind of each column at most (the kinds are exclusive).
MISSING, NOT_A_NUMBER, BELOW, ABOVE = "missing", "not a number", "below bounds", "above bounds"
NOT_IN_LIST, NOT_IN_CLASSES = "not in its list", "not in classes"
RECORDS = "records"
#: Cells per column of the released array (the most kinds of one column): the layout's other
#: cells are structural zeros, released and discarded.
CELLS = 4
#: A released share of records above this warns (:func:`warn_domain`), when the count is above
#: this many standard deviations of its noise.
WARN_SHARE = 0.05
SIGNIFICANCE = 5.0
#: ``delta`` times the released number of records above this warns: delta must be well below
#: 1 / n (docs/privacy.md, Public inputs).
DELTA_RECORDS = 0.1
#: Share of epsilon the report's noise alone would cost (at the fit's delta); the trees get
#: what the composition leaves.
DOMAIN_SHARE = 0.05
#: Ledger scope of the report: released first, sequentially composed.
DOMAIN_SCOPE = {"group": -1, "tree": -1, "level": -3}


def domain_count_sensitivity(n_groups, norm):
    """Sensitivity of the domain report's counts, ``sqrt(n_groups)`` (L2) or ``n_groups``
    (L1).

    The counts form one row of ``n_groups`` groups: one per column of X, one for the target,
    one holding the number of records. The kinds of a group are exclusive (a cell is missing,
    or not a number, or below its bounds, or above them, or none; a label is in the classes or
    not), so adding or removing one record moves at most one count of each group, by 1: at
    most ``n_groups`` coordinates by 1 each (a contribution bound of one count per group, as
    the category lists' counts, Wilson et al. 2020; docs/privacy.md, Domain report).

    Parameters
    ----------
    n_groups : int
        Columns of X plus 2.
    norm : {"l1", "l2"}

    Returns
    -------
    sensitivity : float
    """
    return float(n_groups) if norm == "l1" else math.sqrt(n_groups)


def domain_release(n_groups, epsilon, delta):
    """The ledger entry of the domain report of ``n_groups`` groups, from public inputs.

    ``delta > 0``: the Gaussian mechanism (secure sampler: a discrete Gaussian) on the L2
    sensitivity :func:`domain_count_sensitivity`, of the noise multiplier that alone is
    ``(DOMAIN_SHARE * epsilon, delta)``-DP (``_thresholds.category_noise_multiplier``), composed
    with the trees by Renyi accounting. ``delta = 0``: the Laplace mechanism at
    ``DOMAIN_SHARE * epsilon`` on the L1 sensitivity, composed sequentially. ``epsilon = inf``:
    the exact counts.

    Raises
    ------
    ValueError
        epsilon and delta too small for the report's noise.
    """
    if not math.isfinite(epsilon):
        return LedgerEntry(mechanism="exact", epsilon=math.inf,
                           sensitivity=domain_count_sensitivity(n_groups, "l2"), n_nodes=1,
                           **DOMAIN_SCOPE)
    if delta == 0:
        return LedgerEntry(mechanism="laplace", epsilon=DOMAIN_SHARE * epsilon,
                           sensitivity=domain_count_sensitivity(n_groups, "l1"), n_nodes=1,
                           **DOMAIN_SCOPE)
    return share_release(
        DOMAIN_SHARE, epsilon, delta, domain_count_sensitivity(n_groups, "l2"), DOMAIN_SCOPE,
        f"epsilon={epsilon} with delta={delta} is too small for domain_report=True: its "
        f"counts get {DOMAIN_SHARE:g} of epsilon, which no Gaussian noise up to 1e7 times their "
        "sensitivity reaches; set domain_report=False.")


def domain_layout(n_features, categorical, private_lists, private_feature_bounds, regression,
                  private_target_bounds):
    """The kinds of count of each group, from the schema and the parameters only.

    Parameters
    ----------
    n_features : int
    categorical : collection of int
        The categorical columns.
    private_lists : collection of int
        The columns whose category list the fit releases (every value seen is in its list at
        fit time; those the release leaves out are not counted here).
    private_feature_bounds, regression, private_target_bounds : bool
        Released bounds clip by construction (docs/privacy.md, Private feature bounds): their
        clipped values are not counted.

    Returns
    -------
    layout : list of tuple of str
        ``n_features + 2`` groups: the columns of X, the target, the records.
    """
    layout = []
    for j in range(n_features):
        if j in categorical:
            layout.append((MISSING,) if j in private_lists else (MISSING, NOT_IN_LIST))
        else:
            layout.append((MISSING, NOT_A_NUMBER) if private_feature_bounds
                          else (MISSING, NOT_A_NUMBER, BELOW, ABOVE))
    if not regression:
        layout.append((NOT_IN_CLASSES,))
    else:
        layout.append((NOT_A_NUMBER,) if private_target_bounds
                      else (NOT_A_NUMBER, BELOW, ABOVE))
    layout.append((RECORDS,))
    return layout


def _missing_cells(column):
    """Whether each raw cell is missing (None, NaN, pandas' NA or NaT), cell by cell."""
    values = np.asarray(column)
    if values.dtype.kind in "fc":
        return np.isnan(values)
    if values.dtype.kind in "biu":
        return np.zeros(values.shape, dtype=bool)
    try:
        import pandas as pd
    except ImportError:  # numpy input: None and float NaN are its missing cells
        return np.fromiter((v is None or (isinstance(v, float) and v != v) for v in values),
                           dtype=bool, count=values.size)
    return np.asarray(pd.isna(values), dtype=bool)


def domain_counts(raw, encoded, y, keep, layout, bounds, target_bounds):
    """The exact counts of the domain report (sensitive: released only by
    :func:`release_domain_report`).

    Each record is counted by its own cells: a raw cell that is missing is ``missing``; a
    non-missing cell that the column's coding turned into NaN is ``not in its list``
    (categorical) or ``not a number`` (numeric); a number below (above) its public bounds,
    ``-inf`` (``+inf``) included, is ``below bounds`` (``above bounds``). A label outside the
    classes, a target that is not a number, and a target outside its bounds likewise.

    Parameters
    ----------
    raw : DataFrame or array-like of shape (n_samples, n_features)
        The cells as given (``_cells.pandas_frame`` applied).
    encoded : ndarray of shape (n_samples, n_features), dtype=float64
        The same records in the data domain, before any is left out.
    y : ndarray of shape (n_samples,)
        The labels or targets as given.
    keep : ndarray of shape (n_samples,), dtype=bool
        Which records train.
    layout : list of tuple of str
        :func:`domain_layout`.
    bounds : ndarray of shape (n_features, 2)
        Public bounds (rows of columns without a ``below bounds`` count are not read).
    target_bounds : tuple or None
        The public target bounds (regressor), None otherwise.

    Returns
    -------
    counts : ndarray of shape (1, len(layout), CELLS), dtype=float64
    """
    from ._cells import float_cells  # which imports the planner, which imports this module

    counts = np.zeros((1, len(layout), CELLS))
    frame = hasattr(raw, "iloc")
    numeric_raw = not frame and np.asarray(raw).dtype.kind in "biuf"
    for j, kinds in enumerate(layout[:-2]):
        values = encoded[:, j]
        if numeric_raw:
            missing = np.isnan(values)
        else:
            missing = _missing_cells(raw.iloc[:, j].to_numpy() if frame
                                     else np.asarray(raw, dtype=object)[:, j])
        unread = np.isnan(values) & ~missing
        row = {MISSING: missing, NOT_IN_LIST: unread, NOT_A_NUMBER: unread}
        if BELOW in kinds:
            row[BELOW] = values < bounds[j, 0]
            row[ABOVE] = values > bounds[j, 1]
        counts[0, j, :len(kinds)] = [np.count_nonzero(row[k]) for k in kinds]
    target = layout[-2]
    counts[0, -2, 0] = np.count_nonzero(~keep)
    if BELOW in target:
        values = float_cells(y)[keep]
        counts[0, -2, 1:3] = (np.count_nonzero(values < target_bounds[0]),
                              np.count_nonzero(values > target_bounds[1]))
    counts[0, -1, 0] = keep.size
    return counts


def release_domain_report(layout, counts, names, entry, noise, ledger, delta=0.0):
    """Release the domain report's counts (``plan.domain``) and warn from the released values.

    Parameters
    ----------
    layout : list of tuple of str
    counts : ndarray of shape (1, len(layout), CELLS), dtype=float64
        :func:`domain_counts`.
    names : list of str
        The columns' names (``feature_names_in_``) or indices, as text.
    entry : LedgerEntry
        ``plan.domain``: Gaussian (``delta > 0``) or Laplace, sensitivity
        :func:`domain_count_sensitivity`.
    noise, ledger
        As the mechanisms'.
    delta : float, default=0.0
        The fit's delta: it warns when not below :data:`DELTA_RECORDS` over the released
        number of records.

    Returns
    -------
    report : dict
        ``{column: {kind: released count}}``, the columns by name (or index), then
        ``"target"`` and ``"records"``: what ``domain_report_`` holds.
    """
    from ._candidates import release_rows

    released = release_rows(counts[0], entry, noise, ledger)
    labels = list(names) + ["target", RECORDS]
    report = {label: {kind: float(released[g, i]) for i, kind in enumerate(kinds)}
              for g, (label, kinds) in enumerate(zip(labels, layout))}
    warn_domain(report, noise_scale(entry) * (1.0 if entry.mechanism == "gaussian"
                                              else math.sqrt(2.0)))
    records = report[RECORDS][RECORDS]
    if delta > 0 and delta * max(records, 1.0) > DELTA_RECORDS:
        warnings.warn(f"delta={delta:g} is not well below 1 / n_samples: the released number of "
                      f"records is about {records:.2g}, so delta n is above {DELTA_RECORDS:g} "
                      "(docs/privacy.md, Public inputs); lower delta.", UserWarning,
                      stacklevel=4)
    return report


def warn_domain(report, noise_std, share=WARN_SHARE):
    """Warn (UserWarning) for every count of ``report`` above ``share`` of the released number
    of records and above ``SIGNIFICANCE`` times the noise's standard deviation ``noise_std``
    (public, from the plan: a count of 0 passes it with probability below 1e-6 for the
    Gaussian): post-processing of released values only, so the warning is as private as the
    counts. Names the column, the kind and the released share (rounded), never an exact
    count."""
    records = max(report[RECORDS][RECORDS], 1.0)
    for column, kinds in report.items():
        if column == RECORDS:
            continue
        for kind, count in kinds.items():
            if count > share * records and count > SIGNIFICANCE * noise_std:
                where = ("the target (records left out)" if column == "target" and kind in (
                    NOT_IN_CLASSES, NOT_A_NUMBER) else "the target" if column == "target"
                    else f"column {column!r}")
                warnings.warn(
                    f"domain report: about {min(count / records, 1.0):.0%} of the records (a "
                    f"released, noisy share) are {kind} in {where}. Check that the public "
                    "inputs (classes, categories, bounds) are spelled and typed as the "
                    "data (docs/privacy.md, Domain report).", UserWarning, stacklevel=4)
