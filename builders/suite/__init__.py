"""Suites: the typed spec and its registry, and writing one built suite."""
