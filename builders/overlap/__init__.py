"""Overlap between texts: near duplicates by word-set Jaccard, and a built folder's test texts.

Used by :mod:`consistency_bench.builders.fewshot` so that no few-shot demonstration is, exactly or
as a near
duplicate, a test row of any suite of the folder it ships in (issue 32, item 9).
"""
