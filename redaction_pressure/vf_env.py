"""The verifiers `Env` this taskset brings: why `vf-eval redaction-pressure` runs locally.

verifiers lets a taskset's package export an `Env` whose config declares the defaults of
its agent seat. The seat's verifiers default is the Prime sandbox runtime, which needs a
platform login before the first rollout; this environment's episodes are one tool-less
chat turn that runs nothing, so the seat defaults to the local ``subprocess`` runtime
(any ``--env.agent.runtime.*`` flag still wins). Everything else is `SingleAgentEnv`'s:
one ``agent`` seat, one trace per episode, so vf-replay and env servers treat it alike.

A run directory written by `redaction-pressure eval` holds a resolved config too, and
``vf-eval @ RUN_DIR/configs/resolved/eval.json --resume`` reads it. Its tasks were
answered by a built-in policy, not a model: ``env.policy`` names that policy, and this
env refuses to start rollouts under such a config, after verifiers' resume planner has
found nothing owed (then vf-eval says so and exits 0) and before any model is called.

A resume drops every recorded line whose task hash no current task has, and rewrites
traces.jsonl with the rest before any env hook runs; a task's hash covers the build
that issued it, so resuming a run after installing another build would empty it. The
one hook verifiers calls before that rewrite is the keep-verdict, `complete`, once per
recorded episode: it refuses there (a SystemExit, which verifiers' per-line error
handling does not swallow) when the episode was recorded by another build.
"""

from __future__ import annotations

import verifiers.v1 as vf

from .build.identity import build_identity
from .taskset import BUILD_KEYS

POLICY_RUN_REFUSAL = (
    "this run directory was written by `redaction-pressure eval --policy {policy}`: its replies came from a "
    "built-in policy, not a model, so there is no model to run the {owed} with. Re-create the run with "
    "`redaction-pressure eval --policy {policy} ... --force`, or evaluate a model from configs/vf-eval-dev.toml "
    "(or pass --env.policy None with your own --model and --client.base-url)"
)


class RedactionEnvConfig(vf.SingleAgentEnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """The one seat. Its runtime defaults to the local subprocess: an episode is one chat turn with no tools."""
    policy: str | None = None
    """Set only in the resolved config of a `redaction-pressure eval` run: the built-in policy that answered its
    tasks. Such a config has no model endpoint, so this env refuses to run rollouts under it."""


OTHER_BUILD_REFUSAL = (
    "this run was recorded by another build of redaction-pressure ({diff}): its tasks' hashes name that build, "
    "so a resume here would drop every recorded rollout and rewrite traces.jsonl without them. Nothing was "
    "changed. Resume with the build that recorded the run, or start a new run"
)


def _recorded_build(episode: object) -> dict[str, object] | None:
    """The build identity a recorded episode's task names, or None when it names none."""
    data = getattr(getattr(episode, "task", None), "data", None)
    dump = getattr(data, "model_dump", None)
    if callable(dump):
        data = dump(mode="json")
    identity = data.get("identity") if isinstance(data, dict) else None
    return {k: identity.get(k) for k in BUILD_KEYS} if isinstance(identity, dict) else None


def _short(value: object) -> str:
    """A recorded value for the message, cut: a hostile trace may hold megabytes."""
    text = repr(value)
    return text if len(text) <= 100 else text[:100] + "..."


class RedactionEnv(vf.SingleAgentEnv, vf.Env[RedactionEnvConfig]):
    def complete(self, episode: vf.Episode) -> bool:
        """verifiers' keep-verdict, asked of each recorded episode before a resume
        rewrites traces.jsonl: refuses the resume when the episode's build is not this
        one (see the module doc), else the default (``episode.ok``)."""
        recorded = _recorded_build(episode)
        if recorded is not None:
            here = build_identity()
            diff = [f"{k}: recorded {_short(recorded[k])}, here {here[k]!r}" for k in BUILD_KEYS
                    if recorded[k] != here[k]]
            if diff:
                raise SystemExit(OTHER_BUILD_REFUSAL.format(diff="; ".join(diff)))
        return bool(super().complete(episode))

    async def start(self) -> None:
        """Runs inside ``serving()``, after a resume has planned and before the first
        rollout: the last point at which a policy run's config can refuse cleanly (a
        SystemExit, so vf-eval prints one line and writes no trace)."""
        if self.config.policy is not None:
            raise SystemExit(POLICY_RUN_REFUSAL.format(policy=self.config.policy, owed="missing rollouts"))
