"""The lm-evaluation-harness route: suites as tasks, samples back to predictions."""
