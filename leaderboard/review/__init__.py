"""``review``: the maintainer's loop over submission pull requests."""
