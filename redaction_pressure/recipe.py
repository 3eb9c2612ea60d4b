"""The training recipe (configs/train-rl.toml): one file for both ends of RL training.

A trainer hosts a verifiers environment as env servers (`serve_env`, a pool of worker
processes behind one ZMQ address) and drives rollouts through `EnvClient`, shipping
each row's wire data with the sampling settings. Both ends must agree on the taskset
(which rows, at which levels), so both read this file: `serve` starts the servers from
its ``[env]`` and ``[serve]`` blocks, and `rows` gives the trainer the rows of the same
``[env.taskset]``, with ``[sampling]`` and ``group_size`` beside them.

``[env]``, ``[serve]`` and ``[sampling]`` are verifiers' own config types, validated by
verifiers. ``[curriculum]`` is a list of stages, each a level mix that replaces
``env.taskset.level_mix``; stages are checked against the level range of the
specification (1..5) when the file loads, and against the levels this build has when
one is chosen, so a curriculum written ahead of its levels loads today and refuses
only the stage that cannot run yet, with the reason.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from verifiers.v1.configs.serve import ServeConfig, pool_serve_kwargs
from verifiers.v1.serve import env_config_data, serve_env
from verifiers.v1.utils.generic import deep_merge
from verifiers.v1.utils.loaders import resolve_env_config

from .boundary.files import InputFileError, read_bounded
from .boundary.launch import safe_spawned_paths
from .boundary.parse_bounds import loads_toml
from .corpus.levels import LEVELS
from .scoring.scan_pool import WORKERS_ENV, available_cpus
from .task.splits import PRIVATE_SEED_ENV
from .task.tasks import check_level_mix, weights_total
from .taskset import RedactionRow

MAX_LEVEL = 5  # the specification's level range is 1..5; corpus.levels.LEVELS is what this build has


class RecipeError(ValueError):
    """The recipe cannot be used as asked (one clear line)."""


class Stage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    level_mix: dict[int, float]

    @field_validator("level_mix")
    @classmethod
    def _levels_in_range(cls, mix: dict[int, float]) -> dict[int, float]:
        if not mix:
            raise ValueError("a stage needs at least one level")
        for level, weight in mix.items():
            if not 1 <= level <= MAX_LEVEL:
                raise ValueError(f"level {level} is outside 1..{MAX_LEVEL}")
            if not (0 <= weight < math.inf):
                raise ValueError(f"level {level} has weight {weight}; weights are finite numbers >= 0")
        if not weights_total(mix.values(), "the level weights") > 0:
            raise ValueError("a stage needs a level with a positive weight")
        return mix


class Curriculum(BaseModel):
    model_config = ConfigDict(extra="forbid")
    advance_at: float = Field(ge=0, le=1)
    """Mean reward over the last `window` training steps at which to move to the next stage."""
    window: int = Field(ge=1)
    stages: list[Stage] = Field(min_length=1)


class Recipe(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    group_size: int = Field(ge=1)
    env: Any
    """The environment config, narrowed and validated by verifiers (`resolve_env_config`)."""
    serve: ServeConfig
    sampling: vf.SamplingConfig
    curriculum: Curriculum
    stage: int = 1
    """The curriculum stage whose level mix `env.taskset` carries (1-based)."""


MAX_RECIPE_BYTES = 1 << 20  # a recipe is a page of TOML


def _read(path: Path) -> dict[str, Any]:
    try:
        data = loads_toml(read_bounded(Path(path), MAX_RECIPE_BYTES, follow_links=True).decode("utf-8"))
    except InputFileError as exc:
        raise RecipeError(f"{path} does not exist" if exc.missing else f"cannot read {path}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecipeError(f"cannot read {path}: {exc}") from None
    except ValueError as exc:  # TOMLDecodeError, or refused by loads_toml's bounds
        raise RecipeError(f"{path} is not valid TOML: {exc}") from None
    return data


def _first_error(exc: ValidationError, path: Path, block: str = "") -> RecipeError:
    err = exc.errors()[0]
    where = block + ".".join(str(p) for p in err["loc"])
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return RecipeError(f"{path}: {where}: {err['msg']}{more}")


def load_recipe(path: str | Path, stage: int = 1, overrides: dict[str, Any] | None = None) -> Recipe:
    """The recipe at ``path`` at curriculum ``stage``, with ``overrides`` (nested
    tables, as in the file) merged over it, fully validated."""
    path = Path(path)
    data = deep_merge(_read(path), overrides or {})
    try:
        recipe = Recipe.model_validate({k: v for k, v in data.items() if k != "env"} | {"env": None, "stage": stage})
    except ValidationError as exc:
        raise _first_error(exc, path) from None
    stages = recipe.curriculum.stages
    if not 1 <= stage <= len(stages):
        raise RecipeError(f"stage {stage} does not exist: {path} has stages 1..{len(stages)}")
    chosen = stages[stage - 1]
    missing = sorted(set(chosen.level_mix) - set(LEVELS))
    if missing:
        raise RecipeError(f"stage {stage} ({chosen.name}) needs level(s) {', '.join(map(str, missing))}, which this "
                          f"build does not have yet (levels {', '.join(map(str, LEVELS))})")
    env = dict(data.get("env") or {})
    env["taskset"] = dict(env.get("taskset") or {}) | {"level_mix": chosen.level_mix}
    try:
        recipe.env = resolve_env_config(env)
    except ValidationError as exc:
        raise _first_error(exc, path, "env.") from None
    check_level_mix(recipe.env.taskset.level_mix)
    return recipe


def rows(recipe: Recipe, limit: int | None = None) -> Iterator[RedactionRow]:
    """The rows a trainer ships (`RedactionRow.wire_data`), in the taskset's order."""
    taskset = vf.load_taskset(recipe.env.taskset)
    return islice(iter(taskset), limit)


def serve(recipe: Recipe, address_queue: Any = None, death_pipe: Any = None,
          log_setup: Callable[[], None] | None = None) -> None:
    """Serves the recipe's env until stopped (SIGTERM, Ctrl-C, or ``death_pipe``'s
    other end closing). The workers verifiers spawns never import from the current
    directory, and hold the private secret only for ``split = "private_eval"``. Each
    worker gets CPUs / workers scan workers unless $REDACTION_PRESSURE_SCAN_WORKERS says
    otherwise, so the pool does not run more scans than the host has CPUs."""
    # verifiers spawns the pool's workers: nothing in the current directory may run in
    # them, and they hold the private secret only when they build private tasks.
    safe_spawned_paths()
    if recipe.env.taskset.split != "private_eval":
        os.environ.pop(PRIVATE_SEED_ENV, None)
    pool = recipe.serve.pool
    workers = pool_serve_kwargs(pool)["max_workers"] or 1
    os.environ.setdefault(WORKERS_ENV, str(max(1, available_cpus() // workers)))
    serve_env(**pool_serve_kwargs(pool), address=recipe.serve.address, address_queue=address_queue,
              death_pipe=death_pipe, log_setup=log_setup, config_data=env_config_data(recipe.env),
              max_concurrent=recipe.serve.max_concurrent)
