"""Vectors for a scale point (1M memories) without embedding 1M texts:
precomputed once, cached on disk.

Embedding a million texts through the model takes hours on two cores, so the harness embeds a real
base set (the 10k corpus's texts, through the configured model: a few minutes) once and
derives the rest from it:

- The texts are the corpus generator's: replica 0 is the base corpus itself, replica r > 0 is the
  corpus of seed ``seed + r`` with its projects renamed ``<project>-r<r>`` (so hashes, tags and the
  text index are those of real templates, never copies).
- Replica 0's vectors are the real embeddings. An item of replica r > 0 takes the real vector of a
  base item of the same scenario (fillers: of the same namespace), picked at random, moved by a
  random combination of its differences to three other real members of that group (the directions in
  which real twins differ: the same template with other values), normalised again. The move's scale
  is calibrated so that a derived vector is as far from its source as a real memory is from its
  nearest real neighbour (the median top-1 cosine of the base set): the derived neighbourhoods are
  as dense as the real ones. (A first version added isotropic Gaussian noise instead: every derived
  twin then differed from the others in its own random directions, a shell HNSW navigates badly;
  docs/benchmarks.md has both runs.)
- Both matrices are cached as .npy under ``~/.cache/kenning/bench/`` (``$XDG_CACHE_HOME``
  respected), keyed by model, backend, sizes and seed. The 1M float32 matrix is 1.5 GB.

Pure apart from the cache files; the same inputs give the same vectors.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.corpus import SIZES, Corpus, Item, generate

Matrix = np.ndarray[Any, np.dtype[np.float32]]
SCALE_SIZES: dict[str, int] = {"250k": 250_000, "500k": 500_000, "1m": 1_000_000}
CHUNK = 50_000  # rows per step when deriving or searching exactly (bounded memory)
SAMPLE = 2_000  # rows whose nearest neighbour calibrates the noise


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kenning" / "bench"


def scale_corpus(n: int, seed: int = 7, base_size: str = "10k") -> Corpus:
    """``n`` items: replicas of the ``base_size`` corpus (seeds seed, seed+1, ...),
    projects renamed per replica."""
    per = SIZES[base_size]
    corpus = Corpus(seed=seed, size=str(n))
    for replica in range(math.ceil(n / per)):
        items = generate(base_size, seed + replica).items[: n - len(corpus.items)]
        corpus.items += items if replica == 0 else [_renamed(item, replica) for item in items]
    return corpus


def _renamed(item: Item, replica: int) -> Item:
    if item.project == "global":
        return replace(item, uid=f"{item.uid}-r{replica}")
    project = f"{item.project}-r{replica}"
    return replace(item, uid=f"{project}/{item.uid.split('/', 1)[1]}", project=project)


def group_key(item: Item) -> str:
    """Which base items an item may take its vector from: the same scenario, or
    fillers of its namespace."""
    return item.scenario or f"filler:{item.namespace}"


def base_vectors(
    embed_many: Callable[[list[str]], list[Any]],
    texts: Sequence[str],
    path: Path,
    progress: Callable[[str], None] = print,
) -> Matrix:
    """The real embeddings of ``texts`` (each distinct text embedded once), cached at ``path``."""
    if path.exists():
        cached: Matrix = np.load(path)
        if cached.shape[0] == len(texts):
            return cached
    unique = list(dict.fromkeys(texts))
    progress(f"embedding {len(unique)} distinct base texts (cached at {path})")
    rows: list[Any] = []
    for start in range(0, len(unique), 2048):
        rows += embed_many(unique[start : start + 2048])
        progress(f"  embedded {len(rows)}/{len(unique)}")
    position = {t: i for i, t in enumerate(unique)}
    distinct = np.asarray(rows, dtype=np.float32)
    matrix = distinct[[position[t] for t in texts]]
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, matrix)
    return matrix


def nearest_cosines(matrix: Matrix, rows: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Each sampled row's cosine to its nearest other row with a different
    vector (rows are normalised)."""
    best = np.full(len(rows), -1.0, dtype=np.float32)
    sample = matrix[rows]
    for start in range(0, matrix.shape[0], CHUNK):
        sims = sample @ matrix[start : start + CHUNK].T
        sims[sims > 0.9999] = -1.0  # itself, and identical texts
        best = np.maximum(best, sims.max(axis=1))
    return best


# same-group base rows whose differences from the source shape a derived vector's offset
PARTNERS = 3


def _groups(base_items: Sequence[Item]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for i, item in enumerate(base_items):
        groups.setdefault(group_key(item), []).append(i)
    return groups


def _pick(
    groups: dict[str, list[int]], item: Item, pick: random.Random, everything: list[int]
) -> list[int]:
    """A source row and PARTNERS more of the item's group (with repeats when the group is small)."""
    members = groups.get(group_key(item), everything)
    return [pick.choice(members) for _ in range(PARTNERS + 1)]


def _offsets(base: Matrix, picks: np.ndarray[Any, Any], rng: np.random.Generator) -> Matrix:
    """sum_j w_j (partner_j - source), w ~ N(0, 1): a move along the directions
    in which real twins differ."""
    differences = base[picks[:, 1:]] - base[picks[:, :1]]
    weights = rng.standard_normal((len(picks), PARTNERS, 1), dtype=np.float32)
    moved: Matrix = (weights * differences).sum(axis=1)
    return moved


def calibrate(base: Matrix, base_items: Sequence[Item], seed: int) -> dict[str, float]:
    """The offset scale that puts a derived vector at the base set's median nearest-neighbour
    cosine from its source: for a unit x and an offset d (E|d|^2 = s^2 D at scale s),
    cos(x, x+d) ~ 1/sqrt(1+s^2 D)."""
    rng = np.random.default_rng(seed)
    rows = rng.choice(base.shape[0], size=min(SAMPLE, base.shape[0]), replace=False)
    target = float(np.median(nearest_cosines(base, rows)))
    groups = _groups(base_items)
    pick = random.Random(f"calibrate:{seed}")
    everything = list(range(len(base_items)))
    picks = np.asarray([_pick(groups, base_items[int(r)], pick, everything) for r in rows])
    spread = float((_offsets(base, picks, rng) ** 2).sum(axis=1).mean())
    sigma = math.sqrt(max(1.0 / (target * target) - 1.0, 0.0) / max(spread, 1e-9))
    return {"base_nn_cosine_median": target, "offset_square_mean": spread, "sigma": sigma}


def derive(
    base: Matrix,
    base_items: Sequence[Item],
    items: Sequence[Item],
    sigma: float,
    seed: int,
    out: Matrix,
) -> list[int]:
    """Fill ``out`` (len(items) x dim) with the vectors of ``items``; returns
    each row's source base row.

    Row i < len(base_items) is base row i (replica 0 is the base corpus); a later row is a base row
    of the same ``group_key`` moved by ``sigma`` times a random combination of its differences to
    PARTNERS other rows of that group (the directions in which real twins differ: other values in
    the same template), normalised.
    """
    groups = _groups(base_items)
    everything = list(range(len(base_items)))
    pick = random.Random(f"derive:{seed}")
    picks = np.asarray(
        [
            [i] * (PARTNERS + 1) if i < len(base_items) else _pick(groups, item, pick, everything)
            for i, item in enumerate(items)
        ]
    )
    rng = np.random.default_rng(seed)
    for start in range(0, len(items), CHUNK):
        stop = min(start + CHUNK, len(items))
        block = base[picks[start:stop, 0]].copy()
        fresh = np.arange(start, stop) >= len(base_items)
        if fresh.any():
            block[fresh] += sigma * _offsets(base, picks[start:stop][fresh], rng)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start:stop] = block
    return [int(p) for p in picks[:, 0]]


def cache_name(kind: str, model: str, backend: str, size: int | str, seed: int) -> str:
    tag = hashlib.sha256(model.encode()).hexdigest()[:8]
    return f"{kind}-{tag}-{backend}-{size}-seed{seed}.npy"


def scale_vectors(
    embed_many: Callable[[list[str]], list[Any]],
    corpus: Corpus,
    *,
    model: str,
    backend: str,
    seed: int,
    base_size: str = "10k",
    folder: Path | None = None,
    progress: Callable[[str], None] = print,
) -> tuple[Matrix, dict[str, Any]]:
    """The vectors of ``corpus`` (a ``scale_corpus``), derived from real ones and
    cached; with how they were made."""
    folder = folder or cache_dir()
    base_items = generate(base_size, seed).items
    base = base_vectors(
        embed_many,
        [i.content for i in base_items],
        folder / cache_name("base", model, backend, base_size, seed),
        progress,
    )
    noise = calibrate(base, base_items, seed)
    path = folder / cache_name(
        f"derived-twins-from-{base_size}", model, backend, len(corpus.items), seed
    )
    info: dict[str, Any] = {
        "method": "real base embeddings + same-scenario source moved along its twins' differences",
        "base_size": base_size,
        "base_items": len(base_items),
        "cache": str(path),
        **noise,
    }
    if path.exists():
        cached: Matrix = np.load(path, mmap_mode="r")
        if cached.shape == (len(corpus.items), base.shape[1]):
            return np.asarray(cached), info
    progress(f"deriving {len(corpus.items)} vectors (offset scale {noise['sigma']:.3f})")
    out = np.lib.format.open_memmap(
        path, mode="w+", dtype=np.float32, shape=(len(corpus.items), base.shape[1])
    )
    derive(base, base_items, corpus.items, noise["sigma"], seed, out)
    out.flush()
    return np.asarray(np.load(path, mmap_mode="r")), info
