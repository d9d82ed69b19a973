"""The only module that draws randomness: exponential mechanism, Laplace mechanism, record partition.

Every function takes the ``numpy.random.Generator`` that ``fit`` made from ``random_state`` and
writes one ledger entry per release. These samplers use floating-point arithmetic and are therefore
not hardened against the attacks of Mironov (2012); a fixed ``random_state`` makes them
reproducible and predictable, for experiments only.
"""

import math

import numpy as np


def make_rng(random_state):
    """Turn ``random_state`` (None, int, or Generator) into one ``numpy.random.Generator``.

    ``None`` seeds from the operating system's entropy.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        # scikit-learn's check_random_state convention; draw a seed from it once.
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    return np.random.default_rng(random_state)


def exponential_mechanism(utilities, *, epsilon, sensitivity, rng, ledger, scope):
    """Pick one candidate per row with probability proportional to ``exp(eps * u / (2 * sensitivity))``.

    McSherry & Talwar (2007); DPBoost Algorithm 1, line 8. Sampled with the Gumbel-max trick
    (Medina & Gillenwater 2020): ``argmax(eps * u / (2 Delta) + Gumbel)`` has exactly that
    distribution and never overflows. Every candidate keeps a positive probability.

    Parameters
    ----------
    utilities : ndarray of shape (n_nodes, n_candidates), dtype=float64
        Utility of every candidate of every node; the nodes hold disjoint records.
    epsilon : float
        Budget of each node, in (0, inf]; ``inf`` returns the first maximiser (argmax, non-private).
    sensitivity : float
        Utility sensitivity Delta_u > 0.
    rng : numpy.random.Generator
    ledger : PrivacyLedger
    scope : dict
        ``group``, ``tree`` and ``level`` of the release.

    Returns
    -------
    choice : ndarray of shape (n_nodes,), dtype=int64
    """
    private = math.isfinite(epsilon)
    if private:
        scores = utilities * (epsilon / (2.0 * sensitivity)) + rng.gumbel(size=utilities.shape)
    else:
        scores = utilities
    ledger.record(mechanism="exponential" if private else "argmax", epsilon=epsilon,
                  sensitivity=sensitivity, n_nodes=utilities.shape[0], **scope)
    return np.argmax(scores, axis=1)


def laplace_mechanism(values, *, epsilon, sensitivity, rng, ledger, scope):
    """Release ``values + Laplace(sensitivity / epsilon)`` (Dwork et al. 2006; DPBoost Alg. 1, l. 14).

    Parameters
    ----------
    values : ndarray of shape (n_nodes,), dtype=float64
        One value per disjoint node.
    epsilon : float
        Budget in (0, inf]; ``inf`` releases ``values`` unchanged (non-private).
    sensitivity : float
    rng : numpy.random.Generator
    ledger : PrivacyLedger
    scope : dict

    Returns
    -------
    released : ndarray of shape (n_nodes,), dtype=float64
    """
    private = math.isfinite(epsilon)
    ledger.record(mechanism="laplace" if private else "exact", epsilon=epsilon,
                  sensitivity=sensitivity, n_nodes=values.shape[0], **scope)
    if not private:
        return values.copy()
    return values + rng.laplace(scale=sensitivity / epsilon, size=values.shape)


def partition_records(n_records, shares, rng):
    """Assign every record independently to a position with probability ``shares[position]``.

    An independent categorical draw per record (PRIVACY.md, EoE): a record's tree never depends on
    other records, so the trees of a group see disjoint records and compose in parallel exactly
    under add/remove.

    Parameters
    ----------
    n_records : int
    shares : ndarray of shape (n_positions,), dtype=float64
        Non-negative, summing to at most 1; the remaining mass means "unused".
    rng : numpy.random.Generator

    Returns
    -------
    position : ndarray of shape (n_records,), dtype=int64
        Position of each record, ``n_positions`` for unused records.
    """
    cumulative = np.cumsum(shares)
    return np.searchsorted(cumulative, rng.random(n_records), side="right")
