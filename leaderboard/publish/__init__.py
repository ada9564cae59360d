"""Publishing: plans, the one commit, a model's results, the command's steps."""
