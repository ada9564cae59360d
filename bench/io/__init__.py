"""Input and output helpers: atomic files and folders, bounded JSON and YAML, TSV."""
