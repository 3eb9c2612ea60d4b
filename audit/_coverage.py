"""Coverage, as the audit computes it from an archive's traces (never taken from the
archive): which task indices of the split the traces hold, how many rollouts each, and
what the split's standard evaluation misses. The definitions live with the environment
(`contract.coverage_of`, `contract.STANDARD_EVALUATIONS`), so a run's summary, report and
archive all say the same; `audit verify` recomputes the record and fails a manifest whose
coverage is not its traces'.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from redaction_pressure.contract import coverage_label as label
from redaction_pressure.contract import coverage_of

__all__ = ["coverage_of", "label", "trace_indices"]


def trace_indices(traces: Iterable[dict[str, Any]]) -> list[int]:
    return [t["info"]["environment"]["task_index"] for t in traces]
