"""The registries: the registry type, tasks, families, source files."""
