"""The ``submissions/`` folder: metadata, storage, reader, rescore."""
