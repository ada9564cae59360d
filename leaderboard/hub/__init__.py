"""The leaderboard on the Hub: Eval Results, pull-request submissions, verify."""
