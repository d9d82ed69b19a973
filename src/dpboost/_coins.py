"""The record coins' keystream: ChaCha20 (RFC 8439) in counter mode, in parallel over blocks.

A record's coin is one 32-bit word of the ChaCha20 keystream under the fit's 256-bit key, with
the stream's identity as the 96-bit nonce and the record's row as the position: row ``r`` is word
``r mod 16`` of block ``r // 16`` (the 32-bit block counter), so rows up to ``2**36`` have a
word of their own. Any block can be computed alone, on any thread, from the key, the nonce and
its counter: a partition starting at any row, a chunk of rows on any thread and a recomputed Dask
task all draw the same words (``_records.RecordCoins``). ChaCha20 is a stream cipher whose
keystream is indistinguishable from uniform words without the key (Bernstein 2008, "ChaCha, a
variant of Salsa20"; RFC 8439, Section 2.3): the coins have the law of independent uniform words,
as SHAKE-128's did, and are computed here rather than by a library so that a kernel of any thread
draws them without the interpreter. tests/test_kernels.py checks the block against RFC 8439's
test vector and the keystream against the ``cryptography`` package's ChaCha20.

Arithmetic is on uint64 values below ``2**32`` (masked after every addition and rotation): Numba
widens 32-bit integers in arithmetic, and a 64-bit add of two words below ``2**32`` cannot wrap.
"""

import numpy as np
from numba import njit, prange

#: Rows up to which :func:`uniforms` runs on the calling thread.
COIN_CHUNK = 1 << 16
#: "expand 32-byte k": ChaCha20's four constant words (RFC 8439, Section 2.3).
_SIGMA = (0x61707865, 0x3320646E, 0x79622D32, 0x6B206574)
_MASK = np.uint64(0xFFFFFFFF)
#: Rows a stream can number: 16 words per block, 2**32 blocks.
MAX_ROWS = 1 << 36


@njit(cache=True, inline="always")
def _rotl(x, n):
    return ((x << np.uint64(n)) | (x >> np.uint64(32 - n))) & _MASK


@njit(cache=True, inline="always")
def _quarter(a, b, c, d):
    """RFC 8439, Section 2.1: the quarter round on four words."""
    a = (a + b) & _MASK
    d = _rotl(d ^ a, 16)
    c = (c + d) & _MASK
    b = _rotl(b ^ c, 12)
    a = (a + b) & _MASK
    d = _rotl(d ^ a, 8)
    c = (c + d) & _MASK
    b = _rotl(b ^ c, 7)
    return a, b, c, d


@njit(cache=True)
def chacha20_block(key, counter, nonce, out):
    """RFC 8439, Section 2.3: the 16 keystream words of block ``counter`` into ``out``.

    Parameters
    ----------
    key : ndarray of shape (8,), dtype=uint32
        The key's bytes read as little-endian words.
    counter : int
        In ``[0, 2**32)``.
    nonce : ndarray of shape (3,), dtype=uint32
    out : ndarray of shape (16,), dtype=uint32
        Overwritten; its words serialised little-endian are the block's 64 keystream bytes.
    """
    # The state as sixteen scalars: a local array would not stay in registers.
    s0, s1, s2, s3 = (np.uint64(_SIGMA[0]), np.uint64(_SIGMA[1]), np.uint64(_SIGMA[2]),
                      np.uint64(_SIGMA[3]))
    s4, s5, s6, s7 = np.uint64(key[0]), np.uint64(key[1]), np.uint64(key[2]), np.uint64(key[3])
    s8, s9, s10, s11 = (np.uint64(key[4]), np.uint64(key[5]), np.uint64(key[6]),
                        np.uint64(key[7]))
    s12 = np.uint64(counter) & _MASK
    s13, s14, s15 = np.uint64(nonce[0]), np.uint64(nonce[1]), np.uint64(nonce[2])
    x0, x1, x2, x3, x4, x5, x6, x7 = s0, s1, s2, s3, s4, s5, s6, s7
    x8, x9, x10, x11, x12, x13, x14, x15 = s8, s9, s10, s11, s12, s13, s14, s15
    for _ in range(10):  # 20 rounds: a column round and a diagonal round, ten times
        x0, x4, x8, x12 = _quarter(x0, x4, x8, x12)
        x1, x5, x9, x13 = _quarter(x1, x5, x9, x13)
        x2, x6, x10, x14 = _quarter(x2, x6, x10, x14)
        x3, x7, x11, x15 = _quarter(x3, x7, x11, x15)
        x0, x5, x10, x15 = _quarter(x0, x5, x10, x15)
        x1, x6, x11, x12 = _quarter(x1, x6, x11, x12)
        x2, x7, x8, x13 = _quarter(x2, x7, x8, x13)
        x3, x4, x9, x14 = _quarter(x3, x4, x9, x14)
    out[0], out[1] = (x0 + s0) & _MASK, (x1 + s1) & _MASK
    out[2], out[3] = (x2 + s2) & _MASK, (x3 + s3) & _MASK
    out[4], out[5] = (x4 + s4) & _MASK, (x5 + s5) & _MASK
    out[6], out[7] = (x6 + s6) & _MASK, (x7 + s7) & _MASK
    out[8], out[9] = (x8 + s8) & _MASK, (x9 + s9) & _MASK
    out[10], out[11] = (x10 + s10) & _MASK, (x11 + s11) & _MASK
    out[12], out[13] = (x12 + s12) & _MASK, (x13 + s13) & _MASK
    out[14], out[15] = (x14 + s14) & _MASK, (x15 + s15) & _MASK


def uniforms(key, nonce, start, stop, n_threads):
    """The coins of rows ``start .. stop - 1``: ``w * 2**-32`` for row ``r``'s keystream word.

    Parameters
    ----------
    key : ndarray of shape (8,), dtype=uint32
    nonce : ndarray of shape (3,), dtype=uint32
        The stream's identity.
    start, stop : int
        ``0 <= start <= stop <= MAX_ROWS``.
    n_threads : int
        The rows go in ``n_threads`` contiguous parallel chunks (at most :data:`COIN_CHUNK` rows,
        or one thread: on the calling thread). The coins do not depend on it.

    Returns
    -------
    coins : ndarray of shape (stop - start,), dtype=float64
        On the ``2**-32`` grid in [0, 1).
    """
    if stop > MAX_ROWS:
        raise ValueError(f"record coins are numbered below 2**36 rows, got stop={stop}")
    out = np.empty(max(stop - start, 0))
    if out.size == 0:
        return out
    if n_threads == 1 or out.size <= COIN_CHUNK:
        _coin_rows(key, nonce, np.int64(start), np.int64(start), np.int64(stop), out)
    else:
        _coin_chunks(key, nonce, np.int64(start), n_threads, out)
    return out


@njit(cache=True)
def _coin_rows(key, nonce, first, lo, hi, out):
    """``out[r - first]`` for rows ``lo .. hi - 1``."""
    block = np.empty(16, dtype=np.uint32)
    r = lo
    while r < hi:
        chacha20_block(key, r >> 4, nonce, block)
        stop = min(hi, (r | 15) + 1)
        for k in range(r, stop):
            out[k - first] = block[k & 15] * 2.0**-32
        r = stop


@njit(parallel=True, cache=True)
def _coin_chunks(key, nonce, first, n_threads, out):
    n = out.shape[0]
    for c in prange(n_threads):
        chunk = np.int64(c)
        _coin_rows(key, nonce, first, first + chunk * n // n_threads,
                   first + (chunk + 1) * n // n_threads, out)
