"""The contract between the environment and its auditor.

`audit` regenerates tasks, rescores replies and re-derives private seeds; everything
it may rely on for that is exported here and nowhere else (a test keeps `audit` to
this module and the top-level API). A name leaving or changing meaning here changes
what an audit checks, so it is a versioned change: the environment version moves and
old archives name the release that verifies them.

What an auditor needs, by question:

- *Which build made this?* `build_identity`, `source_digest`, `ENVIRONMENT_VERSION`,
  `CORPUS_VERSION`, `REWARD_SCHEMA_VERSION` (the versions and the digest of the
  scoring source).
- *Which task was this?* The public ranges `PUBLIC_SPLITS`, the private split's size
  `PRIVATE_SIZE`, `private_seed` and `private_commitment` (HMAC re-derivation and the
  commitment a run publishes), `read_private_secret` (raising `PrivateSeedError`), and
  `task_from_seed`, which rebuilds a `RedactionTask` from its seed exactly as the
  taskset did, `durable_key`, the task's `Task.key` (SPEC §7) that traces record, and
  `task_hash`, the `Task.hash` verifiers records for a row of given task data.
- *What did the reply earn?* `score_completion` (the same function the taskset's
  reward calls; it returns a `Score`), the reward weights `WEIGHTS`, the default task
  parameters `DEFAULT_N_SHOWN`, `DEFAULT_N_EVAL` and `DEFAULT_LEVEL` (of `LEVELS`), and the default CPU budget
  `DEFAULT_BUDGET_S`.
- *What does the run add up to?* `SPLIT_LABELS` and `summary_means`: the one
  order-independent (``math.fsum``) mean of a set of traces, over their tasks (each
  task's rollouts averaged first, so every task weighs the same), used by the CLI and the
  manifest alike, and `MEAN_OVER_TASKS`, the words every reader shows beside such a mean
  when the tasks' rollout counts are uneven; `run_uncertainty` (standard errors and 95% intervals clustered by task,
  with a seeded bootstrap: the same bytes everywhere), `class_summary` (leaks and damage
  by class), `level_summaries` (each level of a run that mixes them), `coverage_of` and
  `coverage_label` (which tasks of the standard evaluation, `STANDARD_EVALUATIONS`, a
  run holds and what it misses), `evaluated_of` and `describe_evaluated` (the model,
  sampling settings, harness and run the traces record).
- *Which shapes are valid?* `schema_dir`, the directory of the versioned JSON Schemas,
  and `json_path`, how a schema error's place is written (as in a reply's errors).
- *Which split do the traces prove?* `prove_split` (giving a `SplitProof`): the split
  read from commitments and seeds, never from a label.
- *How is rescoring run in parallel?* `configure_scan_pool`, `prestart_scan_pool`,
  `stop_scan_pool` and `available_cpus`: a process of `audit verify --jobs N` gives
  itself one scan worker, so N jobs never run more than N scans;
  `scan_pool_setting_problem` says why the local scan-worker setting cannot be used
  (a usage error, asked before a run is read, never a verdict on it). `fork_context` says
  whether job workers may be forked (else the work runs serially: a spawned child
  starts with the current directory on its path), and `scrub_environment` leaves a
  forked worker the minimal environment of a fresh one.
- *How much rescoring does the reader grant?* `Allowance` (a budget per trace, CPU in
  total), by default `DEFAULT_MAX_BUDGET_S` and `DEFAULT_MAX_CPU_S`.
- *How are files from outside read and files written?* `open_regular` and
  `read_bounded` (regular files only, size from ``fstat`` checked before reading,
  raising `InputFileError`), `file_kind`, the cap `MAX_TRACES_BYTES` on a traces file,
  and `write_new` (exclusive, no-follow creation): one boundary for every command.
- *How deep may a file nest?* `check_json_nesting` (raising `NestedTooDeeply`), and
  how many values may a trace line hold for its bytes? `check_json_density` with
  `VALUE_BYTES` (raising `TooManyValues`): the one bound every traces reader applies, so
  `audit verify` accepts no line the report, `rescore` or `compare` would leave unread;
  and below `MIN_TRACE_BYTES` a line holds no trace, for every reader alike;
  `loads_toml` (dotted keys, nesting, and the tables, keys and values a text may make
  bounded before `tomllib`): fixed bounds, read off the text, so no reader's verdict
  depends on its stack; `MAX_MANIFEST_BYTES`, the one cap on an unsigned manifest.
- *How is a file's text shown?* `printable`: every character that could rewrite a
  terminal or reorder a line written as its escape; `sane_streams`: a character the
  terminal's encoding lacks is written as its escape too, never raised; `quiet_stdout`:
  after an output fails, nothing more is written to it.
"""

from __future__ import annotations

from .boundary.episodes import MIN_TRACE_BYTES, VALUE_BYTES
from .boundary.files import (
    MAX_MANIFEST_BYTES,
    MAX_TRACES_BYTES,
    InputFileError,
    file_kind,
    open_regular,
    read_bounded,
    write_new,
)
from .boundary.launch import fork_context, scrub_environment
from .boundary.parse_bounds import NestedTooDeeply, TooManyValues, check_json_density, check_json_nesting, loads_toml
from .boundary.terminal import printable, quiet_stdout, sane_streams
from .build.identity import build_identity, source_digest
from .build.schemas import json_path, schema_dir
from .build.versions import CORPUS_VERSION, ENVIRONMENT_VERSION, REWARD_SCHEMA_VERSION
from .corpus.levels import LEVELS
from .results.classes import class_summary
from .results.coverage import STANDARD_EVALUATIONS, coverage_of
from .results.coverage import label as coverage_label
from .results.evaluated import describe as describe_evaluated
from .results.evaluated import evaluated_of
from .results.summary import by_level as level_summaries
from .results.summary import uncertainty as run_uncertainty
from .scoring.allowance import DEFAULT_MAX_BUDGET_S, DEFAULT_MAX_CPU_S, Allowance
from .scoring.reward import WEIGHTS
from .scoring.scan_pool import available_cpus
from .scoring.scan_pool import prestart as prestart_scan_pool
from .scoring.scan_pool import set_pool_size as configure_scan_pool
from .scoring.scan_pool import setting_problem as scan_pool_setting_problem
from .scoring.scan_pool import shutdown as stop_scan_pool
from .scoring.scanner import DEFAULT_BUDGET_S
from .scoring.score import Score, score_completion
from .scoring.summary import MEAN_OVER_TASKS, SPLIT_LABELS, summary_means
from .task.splits import (
    PRIVATE_SIZE,
    PrivateSeedError,
    SplitProof,
    private_commitment,
    private_seed,
    prove_split,
    read_private_secret,
)
from .task.splits import PUBLIC as PUBLIC_SPLITS
from .task.tasks import (
    DEFAULT_LEVEL,
    DEFAULT_N_EVAL,
    DEFAULT_N_SHOWN,
    RedactionTask,
    durable_key,
    task_from_seed,
    task_hash,
)

__all__ = [
    "CORPUS_VERSION",
    "DEFAULT_BUDGET_S",
    "DEFAULT_LEVEL",
    "DEFAULT_MAX_BUDGET_S",
    "DEFAULT_MAX_CPU_S",
    "DEFAULT_N_EVAL",
    "DEFAULT_N_SHOWN",
    "ENVIRONMENT_VERSION",
    "LEVELS",
    "MAX_MANIFEST_BYTES",
    "MAX_TRACES_BYTES",
    "MEAN_OVER_TASKS",
    "MIN_TRACE_BYTES",
    "PRIVATE_SIZE",
    "PUBLIC_SPLITS",
    "REWARD_SCHEMA_VERSION",
    "SPLIT_LABELS",
    "STANDARD_EVALUATIONS",
    "VALUE_BYTES",
    "WEIGHTS",
    "Allowance",
    "InputFileError",
    "NestedTooDeeply",
    "PrivateSeedError",
    "RedactionTask",
    "Score",
    "SplitProof",
    "TooManyValues",
    "available_cpus",
    "build_identity",
    "check_json_density",
    "check_json_nesting",
    "class_summary",
    "configure_scan_pool",
    "coverage_label",
    "coverage_of",
    "describe_evaluated",
    "durable_key",
    "evaluated_of",
    "file_kind",
    "fork_context",
    "json_path",
    "level_summaries",
    "loads_toml",
    "open_regular",
    "prestart_scan_pool",
    "printable",
    "private_commitment",
    "private_seed",
    "prove_split",
    "quiet_stdout",
    "read_bounded",
    "read_private_secret",
    "run_uncertainty",
    "sane_streams",
    "scan_pool_setting_problem",
    "schema_dir",
    "score_completion",
    "scrub_environment",
    "source_digest",
    "stop_scan_pool",
    "summary_means",
    "task_from_seed",
    "task_hash",
    "write_new",
]
