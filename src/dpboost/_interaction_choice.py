"""A private choice of interactions (``interaction_cst="auto"``, the classifier between
:data:`~dpboost._auto.CHOICE_N_EPSILON_PER_FEATURE` and
:data:`~dpboost._auto.INTERACTION_N_EPSILON_PER_FEATURE` per feature): additive trees or
unrestricted trees, chosen by a release on records neither was fitted on (docs/privacy.md,
Private choice of interactions).

Each record falls by its own keyed coin (:data:`~dpboost._records.PART_STREAM`) into one of
four parts: A, B and V (each :data:`PART_FRACTIONS` of the records) and T (the rest). The
additive plan is boosted on A, the unrestricted plan on B, each at the fit's budget; one
statistic of V comparing the two models (:func:`pairs_statistic`) is released with noise
(Gaussian; Laplace under pure DP); the plan it favours is boosted on T and is the model. A
record is in one part, so its divergence is that of the one release that read it, composed
after the releases over every record (the row count, bounds, ...): the fit is charged the
largest of the three (a choice of alternatives, ``_accountant.compose_fits``).

The statistic (:func:`pairs_statistic`) is an ROC AUC difference on pairs of V's records, made
of sums over records so that every record set computes it (:func:`slot_sums`). Pairing V's
records in the order of their coins would let one added record shift every later pair; here each
record's coin puts it in one of ``SLOTS_PER_BUCKET`` slots of one bucket, a slot that holds
exactly one record counts, and a bucket's term is the mean over its pairs of two counted records
of different labels of ``[the unrestricted model orders the pair as its labels] - [the additive
model does]`` (0 without such a pair): one record changes one bucket's term, by at most 1
(:func:`~dpboost._sensitivities.choice_statistic_sensitivity`).
"""

import dataclasses
import functools
import math

import numpy as np

from ._accounting import LedgerEntry, compose, compose_rdp, zcdp_rho
from ._mechanisms import noise_scale, partition_records, planned_release
from ._noise import SecureNoise
from ._records import PART_STREAM
from ._sensitivities import choice_statistic_sensitivity

#: Fractions of the records in the parts A, B and V (T: the rest). On the tuning splits of
#: ``bench_capacity.py --select`` (benchmarks/README.md, "A private choice of interactions"),
#: 5 % each chose worse and 15 / 15 / 10 % cost the additive cells more.
PART_FRACTIONS = (0.1, 0.1, 0.1)
#: Slots per bucket, and V's expected records per slot (so 4 per bucket): a slot with one
#: record counts (``exp(-1/4)`` = 78 % of V's records), and four records give a pair of two
#: labels more often than two do where one label is rare.
SLOTS_PER_BUCKET, RECORDS_PER_SLOT = 16, 0.25
#: The unrestricted plan is chosen where the released statistic exceeds this many times the
#: square root of the number of buckets (the spread of the statistic over V's records grows as
#: that root): a close call goes to the additive trees, which lose less where they lose. On the
#: tuning splits of ``bench_capacity.py --margins`` (benchmarks/README.md, "A private choice of
#: interactions") 0.2 kept the mean gain of margin 0 over the cells from 3,000 to 8,000 per
#: feature (+0.0192 ROC AUC against +0.0194, 6 seeds) and raised the worst cell from -0.0036 to
#: -0.0005 (0.3: -0.0001, but less found: +0.0189).
CHOICE_MARGIN = 0.2
#: The parts' names in the ledger (``LedgerEntry.part``), by :func:`part_of`'s index.
PARTS = ("A", "B", "V", "T")
#: Ledger scope of the statistic's release (tree -1: the releases outside the trees).
CHOICE_SCOPE = {"group": -1, "tree": -1, "level": -5, "part": "V"}
#: At most this many slots (buckets of 16): the sums a record set returns stay within 256 MiB
#: (4 float64 per slot).
MAX_SLOTS = 2**23


def n_slots(n_records):
    """The slots of V for a fit of ``n_records`` (the released row count, or the public
    hint): ``n_records * PART_FRACTIONS[2] / RECORDS_PER_SLOT`` rounded up to whole buckets,
    at least one bucket and at most :data:`MAX_SLOTS`. A public input of the statistic.

    Returns
    -------
    n_slots : int
    """
    wanted = max(n_records, 0.0) * PART_FRACTIONS[2] / RECORDS_PER_SLOT
    buckets = max(1, math.ceil(min(wanted, MAX_SLOTS) / SLOTS_PER_BUCKET))
    return buckets * SLOTS_PER_BUCKET


def part_of(coins):
    """Each record's part from its coin (uniform in [0, 1)): 0 (A), 1 (B), 2 (V) or 3 (T), an
    independent categorical draw per record (``_mechanisms.partition_records``).

    Returns
    -------
    part : ndarray of dtype=int8
    """
    return partition_records(coins, np.asarray(PART_FRACTIONS)).astype(np.int8)


def slot_of(coins, slots):
    """The slot in ``[0, slots)`` of each of V's records, from its coin (V's coins are uniform
    on ``[a, a + f)``, ``a`` the fractions of A and B, ``f`` V's)."""
    start = PART_FRACTIONS[0] + PART_FRACTIONS[1]
    position = (np.asarray(coins) - start) / PART_FRACTIONS[2]
    return np.clip(np.floor(position * slots), 0, slots - 1).astype(np.int64)


def slot_sums(slot, label, margin_additive, margin_unrestricted, slots):
    """Per slot: the number of V's records, and the sums of their labels and of the two
    models' margins (a record set adds these over its partitions).

    Parameters
    ----------
    slot : ndarray of shape (n,), dtype=int64
        :func:`slot_of` of V's records.
    label : ndarray of shape (n,)
        0 or 1.
    margin_additive, margin_unrestricted : ndarray of shape (n,)
        The two models' raw scores of the records.
    slots : int

    Returns
    -------
    sums : ndarray of shape (4 * slots,), dtype=float64
        Counts, labels, additive margins, unrestricted margins, slot by slot in four blocks.
    """
    return np.concatenate([np.bincount(slot, weights=np.asarray(values, dtype=np.float64),
                                       minlength=slots)
                           for values in (np.ones(slot.size), label, margin_additive,
                                          margin_unrestricted)])


#: Buckets whose pairs are compared at once (bounds the temporary arrays: 16 x 16 per bucket).
_BUCKET_BLOCK = 4096


def pairs_statistic(sums):
    """The sum over buckets of their terms (module docstring) from :func:`slot_sums` added
    over every partition: in ``[-B, B]`` for ``B`` buckets, its expectation the difference of
    the two models' ROC AUCs times the buckets with a pair of two labels.

    Returns
    -------
    statistic : float
    """
    counts, labels, additive, unrestricted = np.asarray(sums, dtype=np.float64).reshape(4, -1)
    shape = (-1, SLOTS_PER_BUCKET)
    counted, labels = (counts == 1).reshape(shape), labels.reshape(shape)
    additive, unrestricted = additive.reshape(shape), unrestricted.reshape(shape)
    upper = np.triu(np.ones((SLOTS_PER_BUCKET, SLOTS_PER_BUCKET), dtype=bool), 1)
    terms = []
    for start in range(0, counted.shape[0], _BUCKET_BLOCK):
        block = slice(start, start + _BUCKET_BLOCK)
        order = np.sign(labels[block, None, :] - labels[block, :, None])
        pairs = (counted[block, None, :] & counted[block, :, None] & upper & (order != 0))

        def correct(margins):
            return np.sign(margins[block, None, :] - margins[block, :, None]) * order > 0

        wins = np.sum(pairs & correct(unrestricted), axis=(1, 2)) - np.sum(
            pairs & correct(additive), axis=(1, 2))
        n_pairs = np.sum(pairs, axis=(1, 2))
        terms.append(np.divide(wins, n_pairs, out=np.zeros(wins.shape), where=n_pairs > 0))
    return math.fsum(np.concatenate(terms)) if terms else 0.0


@dataclasses.dataclass(frozen=True)
class ChoicePlan:
    """The plan of a fit that chooses its interactions (:func:`plan_choice`).

    Attributes
    ----------
    additive, unrestricted : BudgetPlan
        The two plans, each at the fit's budget with the same releases before the trees (the
        row count's included), boosted on A and B, the chosen one again on T.
    release : LedgerEntry
        The statistic's release on V (:func:`statistic_release`, :data:`CHOICE_SCOPE`).
    """

    additive: object
    unrestricted: object
    release: LedgerEntry

    @property
    def count(self):
        """The row count's release (``_row_count``), the plans' own; None: none."""
        return self.additive.count

    @functools.cached_property
    def ledgers(self):
        """What one record may be read by, by its part: the additive plan's ledger (A, or T),
        the unrestricted plan's (B, or T), and the releases over every record followed by the
        statistic's (V). The fit is charged the largest (docs/privacy.md, Private choice of
        interactions). Built once per plan: a memoised plan gives every fit the same
        ledgers."""
        additive, = self.additive.ledgers
        before = tuple(e for e in additive if e.tree < 0)
        return (additive, *self.unrestricted.ledgers, (*before, self.release))


def plan_choice(additive, unrestricted, epsilon, delta):
    """A :class:`ChoicePlan` of two plans made at the fit's ``(epsilon, delta)``, with the
    statistic's release (:func:`statistic_release`) after their releases over every record.

    Raises
    ------
    ValueError
        The plans' releases over every record differ (they are made once, for both), or the
        statistic's noise cannot be drawn.
    """
    counts = [plan.count for plan in (additive, unrestricted) if plan.count is not None]
    if counts:
        # Each plan lowered its count's epsilon by ulps where the sum passed epsilon: one count
        # is released, the smaller, and each plan's cost only falls.
        count = min(counts, key=lambda entry: entry.epsilon)
        additive, unrestricted = (dataclasses.replace(plan, count=count)
                                  for plan in (additive, unrestricted))
    before = tuple(e for e in additive.entries if e.tree < 0)
    if list(before) != [e for e in unrestricted.entries if e.tree < 0]:
        raise ValueError("a private choice of interactions needs the same releases before the "
                         "trees in both plans")
    # Within the plans' zCDP too, where they have one: a private search's trials are checked
    # against it (``_search``).
    rho = min(zcdp_rho(ledger) for ledger in (*additive.ledgers, *unrestricted.ledgers))
    release = statistic_release(before, epsilon, delta, rho)
    noise_scale(release)  # refused before any record is read where it cannot be drawn
    SecureNoise.check(release, 1)
    return ChoicePlan(additive, unrestricted, release)


@functools.lru_cache(maxsize=64)
def statistic_release(before, epsilon, delta, rho=math.inf):
    """The statistic's release after the releases ``before`` (a tuple of LedgerEntry, the
    count's included): the least noise with which they compose within ``(epsilon, delta)``
    (and within zCDP ``rho``, the plans' own, where finite).
    With ``delta > 0`` a Gaussian, its noise multiplier bisected in log (to 1e-4) on the Renyi
    composition (``_accounting.compose_rdp``, at most the fit's own conversion): its curve
    and profile are those of the plans' Gaussian releases, so the choice's alternative costs
    several fits composed little more than the plans alone (a Laplace release at the same
    epsilon composes far worse: seven default classifier fits of epsilon 1, 6.96 instead of
    3.16); with ``delta = 0`` a Laplace release at the epsilon ``before`` leaves, lowered by
    ulps as ``_budget.within_epsilon`` does. A finite ``epsilon`` (the choice is made only
    with noise).

    Returns
    -------
    release : LedgerEntry
    """
    common = {"sensitivity": choice_statistic_sensitivity(), "n_nodes": 1, **CHOICE_SCOPE}
    if delta > 0:
        def gaussian(multiplier):
            return LedgerEntry(mechanism="gaussian", epsilon=math.inf,
                               noise_multiplier=multiplier, **common)

        low, high = 1e-3, 1e7
        if compose_rdp([*before, gaussian(high)], delta) > epsilon:
            raise ValueError(f"epsilon={epsilon} is too small for a private choice of "
                             "interactions; pass interaction_cst.")
        while high / low > 1 + 1e-4:
            middle = math.sqrt(low * high)
            low, high = ((middle, high) if compose_rdp([*before, gaussian(middle)], delta)
                         > epsilon else (low, middle))
        left = rho - zcdp_rho(before)
        if math.isfinite(rho) and left > 0:
            # 1 / (2 sigma^2) <= left (Bun & Steinke 2016, Proposition 1.6)
            high = max(high, math.sqrt(0.5 / left) * (1 + 1e-9))
        return gaussian(high)
    release = LedgerEntry(mechanism="laplace",
                          epsilon=max(epsilon - compose(before, delta), 0.0), **common)
    for step in range(64):
        if compose([*before, release], delta) <= epsilon:
            break
        release = dataclasses.replace(release, epsilon=release.epsilon
                                      - math.ulp(release.epsilon) * 2.0**step)
    return release


def keep_part(partition, coins, part):
    """The partition with every record outside ``part`` (:func:`part_of`'s index, by the
    record's coin in :data:`~dpboost._records.PART_STREAM`) held out of the trees."""
    held_out = part_of(coins.uniforms((PART_STREAM, 0, 0), *partition.rows)) != part
    return dataclasses.replace(partition, held_out=held_out)


def choice_sums(partition, coins, additive, unrestricted, slots):
    """:func:`slot_sums` of the partition's records in V, scored by the released forests
    ``additive`` and ``unrestricted`` (one output; a label is ``y > 0``)."""
    uniforms = coins.uniforms((PART_STREAM, 0, 0), *partition.rows)
    rows = np.flatnonzero(part_of(uniforms) == 2)
    X = partition.X_binned[rows]
    margins = [forest.raw_predict(X, partition.n_threads)[:, 0]
               for forest in (additive, unrestricted)]
    return slot_sums(slot_of(uniforms[rows], slots), partition.y_rows[0, rows] > 0, *margins,
                     slots)


def release_choice(records, coins, additive, unrestricted, n_records, release, noise, ledger):
    """Release :func:`pairs_statistic` of V (``release``: the plan's) and read the
    choice from it: whether the unrestricted plan is the model (the released value exceeds
    :data:`CHOICE_MARGIN` times the root of the number of buckets; post-processing).
    ``n_records``: the row count the slots are sized from (:func:`n_slots`).

    Returns
    -------
    released : float
    unrestricted : bool
    """
    slots = n_slots(n_records)
    statistic = pairs_statistic(records.reduce(choice_sums, coins, additive, unrestricted,
                                               slots))
    released = float(planned_release(np.array([statistic]), release, noise=noise, ledger=ledger,
                                     scope=CHOICE_SCOPE)[0])
    return released, released > CHOICE_MARGIN * math.sqrt(slots / SLOTS_PER_BUCKET)
