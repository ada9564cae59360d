"""The dataset card: its rendering, what it states as data, the figures of the rows."""
