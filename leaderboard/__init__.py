"""The leaderboard, in layers: submissions store, pure ranking, rendering, publishing.

``leaderboard.ranking`` is pure (a table of results in, ranks out); ``leaderboard.submissions``
owns the ``submissions/`` folder; ``leaderboard.render`` writes Markdown, HTML, PNG and JSON
(the page in ``leaderboard.page`` with its CSS, script and CSP in ``leaderboard.page_assets``
and its content as data, lazily loaded files included, in ``leaderboard.webpage``;
escaping and number formatting in ``leaderboard.render_format``);
``leaderboard.publish`` pushes to the Hugging Face Hub; ``leaderboard.hub_eval`` writes the Hub
Eval Results files (``eval.yaml``, ``.eval_results/*.yaml``); ``leaderboard.space`` makes the
static Space and adds the predictions to a publish. Submissions by pull request:
``leaderboard.hub_requests`` (``submit --hub``), ``leaderboard.review`` (``review``) and
``leaderboard.hub_verify`` (``verify``, and the Hub reads both use).
"""
