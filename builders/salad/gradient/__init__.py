"""Gradient-based word salad (Drop, Repeat, Replace, CopyOne): transforms, suite specs."""
