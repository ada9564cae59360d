"""TF-IDF + logistic regression per task, trained on the mirror's training data.

Features: word uni- and bigram TF-IDF (sublinear tf, min_df 2) of ``text``, of ``text_pair``
and their element-wise product (shared terms), stacked; one ``LogisticRegression`` (lbfgs,
C=1). Fitting and prediction run with one BLAS thread (``threadpoolctl``): with several, the
order of floating-point reductions may vary from run to run, and two regenerations of
the committed entry differed in the 6th decimal of two probabilities. WiC inputs use the
runner's ``word-prefix`` format. scikit-learn is imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class TfidfModel:
    """A fitted vectoriser and classifier."""

    vectorizer: object
    classifier: object
    pair: bool

    def features(self, pairs: Sequence[tuple[str, str | None]]):
        """Sparse feature matrix of input pairs."""
        from scipy.sparse import hstack

        first = self.vectorizer.transform([t for t, _ in pairs])
        if not self.pair:
            return first
        second = self.vectorizer.transform([p or "" for _, p in pairs])
        return hstack([first, second, first.multiply(second)]).tocsr()

    def predict_proba(self, pairs: Sequence[tuple[str, str | None]]) -> list[list[float]]:
        """Class probabilities, one list per input, in label index order."""
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):
            probs = self.classifier.predict_proba(self.features(pairs))
        classes = list(self.classifier.classes_)
        n = max(classes) + 1
        out = []
        for row in probs:
            full = [0.0] * n
            for c, p in zip(classes, row, strict=True):
                full[c] = float(p)
            out.append(full)
        return out


def fit_tfidf(
    pairs: Sequence[tuple[str, str | None]], labels: Sequence[int], num_labels: int
) -> TfidfModel:
    """Fit the vectoriser on all training texts and the classifier on the features."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    pair = any(p is not None for _, p in pairs)
    corpus = [t for t, _ in pairs] + ([p or "" for _, p in pairs] if pair else [])
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    vectorizer.fit(corpus)
    model = TfidfModel(vectorizer, LogisticRegression(C=1.0, max_iter=2000), pair)
    with threadpool_limits(1):  # reductions in one fixed order: the same floats on every run
        model.classifier.fit(model.features(pairs), list(labels))
    if len(model.classifier.classes_) != num_labels:
        raise ValueError(f"training data has {len(model.classifier.classes_)} classes, "
                         f"task has {num_labels}")
    return model
