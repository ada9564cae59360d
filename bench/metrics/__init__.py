"""Pure metric functions over aligned numpy arrays, one module per paper family."""
