"""Scoring: suites against predictions, bootstrap, results JSON, text report."""
