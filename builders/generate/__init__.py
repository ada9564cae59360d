"""Generate candidate consistency test sets from any corpus (BECEL section 3.2 rules).

Modules, one per step: ``tasktypes`` (label semantics and the applicability conditions of
BECEL Appendix A.2), ``inputs`` (read a local file or a Hub dataset), ``negation`` (spaCy
dependency-parse negation rules), ``antonyms`` (ConceptNet / WordNet antonym replacement),
``logical`` (symmetric, transitive, additive rows), ``paraphrase`` (pluggable seq2seq
paraphraser), ``pipeline`` (records to suite rows), ``writer`` (Parquet folder, manifest, card),
``verify`` (the human rating loop) and ``report`` (quality report). docs/generate.md describes
the rules and their limits.
"""
