"""The leaderboard dataset repo's data configs (its card's ``configs:``), one list."""
