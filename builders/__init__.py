"""Suite builders: pure row generators per family, export to a Hub-style Parquet folder."""
