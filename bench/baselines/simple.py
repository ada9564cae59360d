"""Baselines without training beyond counting: majority class, uniform random, VADER.

Pure functions of (task data, row); the random baseline's RNG comes from (seed, row id).
"""

from __future__ import annotations

import hashlib
import random

from consistency_bench.bench.registries.tasks import TaskSpec

#: VADER compound score at or above which a sentence is called positive.
VADER_THRESHOLD = 0.0


def majority_label(counts: list[int]) -> int:
    """Index of the most frequent label; ties go to the lowest index."""
    return max(range(len(counts)), key=lambda i: (counts[i], -i))


def row_rng(seed: int, row_id: str) -> random.Random:
    """RNG seeded from (seed, row id): independent of row order and of other rows."""
    digest = hashlib.sha256(f"{seed}\0{row_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def random_label(task: TaskSpec, row_id: str, seed: int = 0) -> int:
    """Uniformly random label index for one row."""
    return row_rng(seed, row_id).randrange(task.num_labels)


def vader_scorer():
    """VADER's ``polarity_scores`` (vaderSentiment, imported here)."""
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer().polarity_scores


def vader_label(compound: float) -> int:
    """SST-2 label from a VADER compound score: 1 (positive) at or above the threshold."""
    return 1 if compound >= VADER_THRESHOLD else 0
