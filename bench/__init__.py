"""consistency-bench: measure whether language models are consistent, not just accurate.

`import bench` stays light: heavy libraries (torch, transformers, spacy) are imported by the
modules that use them.
"""

__version__ = "0.1.0"
