"""CSV files as records: the record boundary of the command line.

With a schema, the schema alone types every column (``_cli.column_kinds``): the columns of
``categories`` and ``categorical_features`` are categorical, the target is a label
(classification) or a number (regression), every other column is numeric. :func:`read_records`
reads the file as text and :func:`typed_columns` converts each cell by its column's type, on its
own, so that no record can change how another is read:

- a record is one line: the first line is the header, blank lines are skipped, and a quote opens
  a field only up to the end of its line (a field cannot hold a line break, so an unclosed quote
  cannot take the lines after it into its record);
- a line whose number of fields is not the header's is a record whose every cell is missing (its
  label too, so that training leaves it out; ``predict`` writes its row);
- empty fields and ``?`` are missing in every column; bytes that are not UTF-8 are replaced
  (U+FFFD), so that such a cell reads as no number and no category;
- a numeric cell is the number ``float`` reads (``1e400`` is infinite, clipped to the bounds;
  ``nan`` is missing), or 1 for ``True``, ``TRUE``, ``true`` and 0 for ``False``, ``FALSE``,
  ``false`` (pandas' spellings); any other text is missing;
- a cell of a categorical column with a public list, or a label with public classes, is the
  value it spells, else missing; a cell of a categorical column whose list is not public, or a
  label without public classes, is its text (a record whose label is missing is then left out).

A file that cannot be read raises ``ValueError`` naming the file and the kind of failure, never
a line of it (the command line prints it as one line, exit status 1)."""

import bz2
import csv
import gzip
import lzma
import math
from pathlib import Path

import numpy as np

from .datasets import NA_VALUES


def is_number(value):
    """Whether a JSON value is a number (not a bool)."""
    return isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_))


def as_float(value):
    """A number as a float, None if it is too large for one (a JSON integer may be)."""
    try:
        return float(value)
    except OverflowError:
        return None


#: The public type of a numeric column (the target of a regression included).
NUMBER = "number"

#: The type of a categorical column whose list is not public, or of labels without public classes.
TEXT = "text"

#: The cells a numeric column reads as 1 and 0: pandas' spellings of booleans.
_BOOLEANS = {"True": 1.0, "TRUE": 1.0, "true": 1.0, "False": 0.0, "FALSE": 0.0, "false": 0.0}

#: Readers of compressed files, by suffix; any other file is read as it is.
_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def _number(cell):
    try:
        return float(cell)
    except ValueError:  # NA_VALUES included: float("") and float("?") raise
        return _BOOLEANS.get(cell, math.nan)


def _text(cell):
    return None if cell in NA_VALUES else cell


def _matcher(values):
    """The reader of a column whose values are the public ``values``: the value a cell spells
    (``categories`` in the module docstring), None for a missing cell or one matching none."""
    by_text = {}
    for v in values:
        by_text.setdefault(str(v), v)
        if isinstance(v, (bool, np.bool_)):
            by_text.setdefault(str(v).lower(), v)  # JSON's and many writers' true / false
    numbers = {as_float(v): v for v in values if is_number(v)}

    def match(cell):
        if cell in NA_VALUES:
            return None
        if cell in by_text:
            return by_text[cell]
        try:
            return numbers.get(float(cell)) if numbers else None
        except ValueError:
            return None
    return match


def cell_reader(kind):
    """The function that reads one cell (str) of a column of public type ``kind``.

    Parameters
    ----------
    kind : NUMBER, TEXT or sequence
        A sequence is the column's public values (categories, or classes for a label).

    Returns
    -------
    read : callable
        ``read(cell)``: for NUMBER a float (NaN for a missing cell or a text that is no number,
        1.0 / 0.0 for pandas' spellings of booleans); for TEXT the cell, None if missing; for
        public values the matching value (its own Python object), None if missing or matching
        none. The result depends on the cell alone.
    """
    if isinstance(kind, str):
        return {NUMBER: _number, TEXT: _text}[kind]
    return _matcher(kind)


def typed_columns(columns, records, kinds):
    """The record boundary: a text table as typed columns, each cell read by its column's
    public type (module docstring, "CSV files").

    Parameters
    ----------
    columns : list of str
        The header.
    records : iterable of list of str
        The records' fields (:func:`read_records`). A record whose number of fields is not
        ``len(columns)`` has every cell missing.
    kinds : dict of str to NUMBER, TEXT or sequence
        The type of each column to read (:func:`cell_reader`); the other columns are skipped.

    Returns
    -------
    typed : dict of str to ndarray of shape (n_records,)
        ``kinds``' columns in its order: dtype=float64 for NUMBER, dtype=object otherwise.
    """
    readers = [(columns.index(name), cell_reader(kind)) for name, kind in kinds.items()]
    missing = [""] * len(columns)
    cells = [[] for _ in readers]
    for record in records:
        fields = record if len(record) == len(columns) else missing
        for out, (j, read) in zip(cells, readers):
            out.append(read(fields[j]))
    typed = {}
    for (name, kind), values in zip(kinds.items(), cells):
        numeric = isinstance(kind, str) and kind == NUMBER
        typed[name] = np.array(values, dtype=np.float64 if numeric else object)
    return typed


def read_records(path):
    """The header and the records of a CSV file, as text (module docstring, "CSV files").

    Each line is parsed on its own (by :mod:`csv`, comma-separated, ``"`` quotes): a quote
    left open ends with its line, and a field too large for :mod:`csv` makes its line a record
    of the wrong number of fields (every cell missing), never an error.

    Parameters
    ----------
    path : path-like
        A ``.csv`` file, or one compressed by gzip, bzip2 or xz (``.gz``, ``.bz2``, ``.xz``).

    Returns
    -------
    columns : list of str
        The header's fields, distinct.
    records : iterator of list of str
        Each further line's fields; blank lines are skipped. Reading it may raise the
        ValueError below.

    Raises
    ------
    ValueError
        An unreadable file, a file without a header line, or a header naming a column twice;
        the message names the file and the kind of failure, never a record.
    """
    lines = _lines(path)
    header = next(lines, None)
    if header is None:
        raise ValueError(f"cannot read {path}: the file is empty (no header line)")
    columns = _fields(header)
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise ValueError(f"{path}: the header names column(s) {twice} more than once")
    return columns, map(_fields, lines)


def _lines(path):
    """The non-blank lines of a text file, without their line break (\\n, \\r\\n or \\r)."""
    opener = _OPENERS.get(Path(path).suffix.lower(), open)
    try:
        # utf-8-sig drops a byte-order mark; newline=None reads the three line breaks.
        with opener(path, "rt", encoding="utf-8-sig", errors="replace", newline=None) as file:
            for line in file:
                line = line.rstrip("\n")
                if line:
                    yield line
    except (OSError, EOFError, lzma.LZMAError) as error:
        # Missing, a directory, no permission, a broken or truncated compressed file.
        raise ValueError(f"cannot read {path}: "
                           f"{getattr(error, 'strerror', None) or type(error).__name__}"
                           ) from None


def _fields(line):
    try:
        return next(csv.reader((line,)))
    except csv.Error:  # a field over csv.field_size_limit() (or NUL, before Python 3.11)
        return []
