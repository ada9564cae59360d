"""The decoder constants shared by :mod:`consistency_bench.builders.salad.pbsmt` and its compiled decoder.

Both :mod:`consistency_bench.builders.salad.pbsmt` (which re-exports them) and
:mod:`consistency_bench.builders.salad.pbsmt.stack_decoder` import them from here, so neither
imports the
other at
module level for them (no import circle; ``tests/test_layers.py``).
"""  # noqa: E501

from __future__ import annotations

import math

#: NLTK's ``StackDecoder`` defaults, kept: distortion factor 0.5, no beam threshold, no word
#: penalty.
LOG_DISTORTION = math.log(0.5)
#: Above any language-model log-probability change: a probability is at most 1, so its log is
#: at most 0 (this margin covers rounding). Float addition is monotone, so a hypothesis whose
#: score with this bound cannot enter a full stack is dropped without asking the model: the
#: stacks end up exactly as without the shortcut.
LM_CHANGE_BOUND = 1e-6
#: Margin of the cheaper bound checked first for a source phrase: its best option's score with
#: the future cost added in another order (rounding differs by ~1e-13 at these magnitudes).
APPROXIMATE = 1e-3
