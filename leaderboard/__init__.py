"""The leaderboard, in layers: submissions store, pure ranking, rendering, publishing.

``leaderboard.ranking`` is pure (a table of results in, ranks out); ``leaderboard.submissions``
owns the ``submissions/`` folder; ``leaderboard.render`` writes Markdown, HTML, PNG and JSON;
``leaderboard.publish`` pushes to the Hugging Face Hub; ``leaderboard.hub_eval`` writes the Hub
Eval Results files (``eval.yaml``, ``.eval_results/*.yaml``).
"""
