"""The public schemas of ``dpboost.datasets`` are public: no bound is read off the shared files.

A bound equal to a column's exact minimum or maximum in a shared file is what reading the data
gives (Adult's capital_loss once had 4356, the training file's maximum). It is allowed only where
documentation puts the bound there, a code range or a top-code, listed below with its source.
"""

import math
from pathlib import Path

import numpy as np
import pytest

from dpboost.datasets import SCHEMAS, estimator_params, read_csv

SHARED = Path(__file__).parents[1].parent / "shared" / "datasets"

#: Bounds that may equal a data extreme because documentation puts them there:
#: (dataset, column, "lower" or "upper") -> the documented value.
DOCUMENTED_EXTREMES = {
    # adult.names, extraction condition AAGE>16
    ("adult", "age", "lower"): 17.0,
    # CPS top-code of age (IPUMS-CPS UH_AGE_B3: top coded at 90, July 1985-December 2002)
    ("adult", "age", "upper"): 90.0,
    # the 16 education levels of adult.names: CPS codes A-HGA 31-46 minus 30
    ("adult", "education_num", "lower"): 1.0,
    ("adult", "education_num", "upper"): 16.0,
    # capital gains and losses are non-negative amounts (net gain and net loss are separate fields)
    ("adult", "capital_gain", "lower"): 0.0,
    ("adult", "capital_loss", "lower"): 0.0,
    # the capital-gain field's five-digit top-code
    ("adult", "capital_gain", "upper"): 99_999.0,
    # adult.names, extraction condition HRSWK>0
    ("adult", "hours_per_week", "lower"): 1.0,
    # CPS ASEC top-code of hours worked last week (IPUMS-CPS AHRSWORKT)
    ("adult", "hours_per_week", "upper"): 99.0,
    # Strack et al. 2014, extraction criterion (3): a stay of 1 to 14 days
    ("diabetes", "time_in_hospital", "lower"): 1.0,
    ("diabetes", "time_in_hospital", "upper"): 14.0,
    # counts of events that may not happen: 0 is their floor, not a data minimum
    ("diabetes", "num_procedures", "lower"): 0.0,
    ("diabetes", "number_outpatient", "lower"): 0.0,
    ("diabetes", "number_emergency", "lower"): 0.0,
    ("diabetes", "number_inpatient", "lower"): 0.0,
}

#: Largest share of a column's values a public bound may clip: a good schema's bounds contain
#: nearly all the data (Diabetes130US's visit counts clip about 0.01 %).
MAX_CLIPPED_SHARE = 1e-3

needs_data = pytest.mark.skipif(
    not all((SHARED / f).exists() for schema in SCHEMAS.values() for f in schema.files),
    reason=f"the shared datasets are not in {SHARED}")

NUMERIC = [(name, column) for name, schema in SCHEMAS.items() for column in schema.bounds]


def _frames(name):
    """Every shared file of a dataset, read as the estimator's users read it."""
    return {f: read_csv(SHARED / f)[0] for f in SCHEMAS[name].files}


@pytest.fixture(scope="module")
def frames():
    pytest.importorskip("pandas")
    return {name: _frames(name) for name in SCHEMAS}


@pytest.mark.parametrize("name, column", NUMERIC)
def test_bound_is_finite_and_ordered(name, column):
    bound = SCHEMAS[name].bounds[column]
    assert len(bound) == 2
    lower, upper = (float(b) for b in bound)
    assert math.isfinite(lower) and math.isfinite(upper)
    assert lower < upper
    assert column not in SCHEMAS[name].categories


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_category_lists_have_no_duplicates(name):
    # the order of a list defines the split candidates; a repeated value would have two codes
    for column, values in SCHEMAS[name].categories.items():
        assert len(values) > 1, column
        assert len(set(values)) == len(values), column


def test_allow_list_matches_the_schemas():
    # every allowed extreme is a bound of the schema, at the value its comment documents
    for (name, column, side), value in DOCUMENTED_EXTREMES.items():
        lower, upper = SCHEMAS[name].bounds[column]
        assert (lower if side == "lower" else upper) == value, (name, column, side)


@needs_data
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_file_column_has_a_public_bound_or_list(frames, name):
    schema = SCHEMAS[name]
    for file, X in frames[name].items():
        assert set(X.columns) == set(schema.bounds) | set(schema.categories), file
        numeric = X.select_dtypes(include="number").columns
        assert all(c in schema.bounds or c in schema.categories for c in numeric), file
        params = estimator_params(name, X.columns)  # raises on a column without public input
        assert np.all(np.isfinite(params["feature_bounds"]))


def _column_values(frames, name, column):
    """``(file, values)`` of a numeric column in each shared file, missing values left out."""
    for file, X in frames[name].items():
        yield file, X[column].dropna().to_numpy(dtype=np.float64)


@needs_data
@pytest.mark.parametrize("name, column", NUMERIC)
def test_bound_is_not_a_data_extreme(frames, name, column):
    lower, upper = SCHEMAS[name].bounds[column]
    for file, values in _column_values(frames, name, column):
        for side, bound, extreme in (("lower", lower, values.min()),
                                     ("upper", upper, values.max())):
            if (name, column, side) in DOCUMENTED_EXTREMES:
                continue
            assert bound != extreme, (
                f"{name}.{column}: the {side} bound {bound} is the exact {side} extreme of {file}; "
                "a public bound must come from documentation (then add it, with its source, to "
                "DOCUMENTED_EXTREMES) or be a round generous value")


@needs_data
@pytest.mark.parametrize("name, column", NUMERIC)
def test_bounds_clip_few_values(frames, name, column):
    lower, upper = SCHEMAS[name].bounds[column]
    for file, values in _column_values(frames, name, column):
        clipped = np.mean((values < lower) | (values > upper))
        assert clipped <= MAX_CLIPPED_SHARE, (f"{name}.{column}: {clipped:.2%} of {file} "
                                              f"outside [{lower}, {upper}]")
