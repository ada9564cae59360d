"""Lexical-overlap word salad (Sort, Reverse, Shuffle, CopySort): transforms, rows."""
