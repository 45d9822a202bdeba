"""SAX pattern representation (Shou et al., TKDE, Section 5.1; Lin et al., DMKD 2003).

Every function works on a whole float matrix ``X`` (``n_series x n_instants``) at once.

* **z-normalization** per row: ``z = (x - mean) / std`` (population std). A row whose std is at
  most ``CONSTANT_TOL * max(1, max|x|)`` counts as *constant* and gets ``z = 0`` everywhere, so
  its pattern is the symbol containing 0 at every position (the middle symbol for an odd level,
  the upper-middle one for an even level) and never NaN.
* **breakpoints** of level ``L`` (the alphabet size): the ``L-1`` standard-normal quantiles
  ``beta_j = Phi^-1(j/L)``, ``j = 1..L-1`` (:func:`scipy.stats.norm.ppf`).
* **symbol** ``j`` (0-based, letter ``chr(ord('a')+j)``) for ``z`` in ``[beta_{j}, beta_{j+1})``
  (with ``beta_0 = -inf``): a value exactly on a breakpoint gets the upper symbol (deterministic).
* **word length** ``n`` (one symbol per instant) unless ``paa=w`` asks for ``w`` PAA segments.
* **reconstruction** of symbol ``j`` at its interval's probabilistic median ``Phi^-1((j+1/2)/L)``.

Breakpoints are *not* nested across levels, so a series' pattern at level ``L`` is always
recomputed from its values, never derived from the pattern at another level.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.stats import norm

CONSTANT_TOL = 1e-9
MAX_LEVEL = 26  # one lowercase letter per symbol


@lru_cache(maxsize=64)
def breakpoints(level: int) -> np.ndarray:
    """The ``level-1`` breakpoints ``Phi^-1(j/level)`` (empty for level 1)."""
    if level < 1 or level > MAX_LEVEL:
        raise ValueError(f"SAX level must be in 1..{MAX_LEVEL}, got {level}")
    out = norm.ppf(np.arange(1, level) / level)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=64)
def medians(level: int) -> np.ndarray:
    """Reconstruction value of each symbol: the median ``Phi^-1((j+1/2)/level)`` of its interval."""
    out = norm.ppf((np.arange(level) + 0.5) / level)
    out.setflags(write=False)
    return out


def znormalize(X: np.ndarray) -> np.ndarray:
    """Row-wise z-normalization; constant rows (see module doc) become all zeros."""
    X = np.asarray(X, dtype=float)
    mean = X.mean(axis=1, keepdims=True)
    std = X.std(axis=1, keepdims=True)
    scale = np.maximum(1.0, np.abs(X).max(axis=1, keepdims=True)) if X.shape[1] else 1.0
    const = std <= CONSTANT_TOL * scale
    Z = (X - mean) / np.where(const, 1.0, std)
    Z[np.broadcast_to(const, Z.shape)] = 0.0
    return Z


def paa(Z: np.ndarray, segments: int | None) -> np.ndarray:
    """Piecewise aggregate approximation: the mean of each of ``segments`` near-equal chunks
    (``numpy.array_split`` boundaries). ``None`` or ``segments == n`` returns ``Z`` unchanged."""
    n = Z.shape[1]
    if segments is None or segments == n:
        return Z
    if not 1 <= segments <= n:
        raise ValueError(f"PAA needs 1 <= segments <= {n}, got {segments}")
    bounds = np.array([len(c) for c in np.array_split(np.arange(n), segments)])
    starts = np.concatenate(([0], np.cumsum(bounds)[:-1]))
    return np.add.reduceat(Z, starts, axis=1) / bounds


def expand_paa(Zr: np.ndarray, n: int) -> np.ndarray:
    """Spread each of the ``w`` columns of ``Zr`` over its PAA segment of an ``n``-point series
    (the ``numpy.array_split`` boundaries of :func:`paa`): the reconstructed series ``r'`` of
    Section 5.1 at full length. ``w == n`` returns ``Zr`` unchanged."""
    Zr = np.asarray(Zr)
    if Zr.shape[1] == n:
        return Zr
    lengths = np.array([len(c) for c in np.array_split(np.arange(n), Zr.shape[1])])
    return np.repeat(Zr, lengths, axis=1)


def symbols_of(Zp: np.ndarray, level: int) -> np.ndarray:
    """SAX symbols (uint8, 0 = lowest) of already normalized (and PAA'd) values at ``level``."""
    return np.searchsorted(breakpoints(level), Zp, side="right").astype(np.uint8)


def sax_words(X: np.ndarray, level: int, paa_segments: int | None = None) -> np.ndarray:
    """SAX word of every row of ``X`` at ``level``: a ``uint8`` matrix ``(n_series, w)``."""
    return symbols_of(paa(znormalize(X), paa_segments), level)


def sax_all_levels(X: np.ndarray, max_level: int, paa_segments: int | None = None) -> np.ndarray:
    """Words at every level ``1..max_level``: array ``(max_level+1, n_series, w)``, index = level
    (index 0 unused, all zeros)."""
    Zp = paa(znormalize(X), paa_segments)
    out = np.zeros((max_level + 1,) + Zp.shape, dtype=np.uint8)
    for level in range(1, max_level + 1):
        out[level] = symbols_of(Zp, level)
    return out


def word_ids(words: np.ndarray) -> np.ndarray:
    """Dense integer id of each row of a ``uint8`` word matrix (equal words, equal ids)."""
    words = np.ascontiguousarray(words, dtype=np.uint8)
    m, w = words.shape
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    base = int(words.max()) + 1
    if w * np.log2(max(base, 2)) < 62:
        code = words.astype(np.int64) @ (base ** np.arange(w, dtype=np.int64))
        return np.unique(code, return_inverse=True)[1].astype(np.int64)
    void = words.view(np.dtype((np.void, w))).ravel()
    return np.unique(void, return_inverse=True)[1].astype(np.int64)


def words_to_strings(words: np.ndarray) -> np.ndarray:
    """Letters ``a``.. for each row of a ``uint8`` word matrix (object array of ``str``)."""
    words = np.ascontiguousarray(words, dtype=np.uint8)
    if words.shape[0] == 0:
        return np.array([], dtype=object)
    letters = (words + ord("a")).astype(np.uint8)
    raw = letters.view(np.dtype((np.bytes_, words.shape[1]))).ravel()
    return raw.astype(str).astype(object)


def strings_to_words(patterns, width: int) -> np.ndarray:
    """Inverse of :func:`words_to_strings` (raises ``ValueError`` on a bad letter or length)."""
    arr = np.asarray(list(patterns), dtype=f"S{max(width, 1)}")
    buf = np.frombuffer(arr.tobytes(), dtype=np.uint8).reshape(len(arr), max(width, 1))[:, :width]
    return (buf.astype(np.int16) - ord("a")).astype(np.int16)


def reconstruct(words: np.ndarray, levels: np.ndarray | int) -> np.ndarray:
    """Normalized values reconstructed at the probabilistic medians (rows may have different
    levels)."""
    words = np.asarray(words)
    levels = np.broadcast_to(np.asarray(levels), (words.shape[0],))
    out = np.empty(words.shape, dtype=float)
    for level in np.unique(levels):
        rows = levels == level
        out[rows] = medians(int(level))[words[rows]]
    return out
