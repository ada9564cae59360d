"""The Hub Space's widget (evaluate's metric template): the ``tau_sem`` config.

Loaded by file, so that it works in the Space's folder whatever its name. Needs ``gradio``.
"""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).with_name("consistency_bench.py")), "tau_sem")
launch_gradio_widget(module)
