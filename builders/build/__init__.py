"""One ``build`` run and the pool of processes that builds its suites."""
