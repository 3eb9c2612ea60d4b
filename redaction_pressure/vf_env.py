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
"""

from __future__ import annotations

import verifiers.v1 as vf

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


class RedactionEnv(vf.SingleAgentEnv, vf.Env[RedactionEnvConfig]):
    async def start(self) -> None:
        """Runs inside ``serving()``, after a resume has planned and before the first
        rollout: the last point at which a policy run's config can refuse cleanly (a
        SystemExit, so vf-eval prints one line and writes no trace)."""
        if self.config.policy is not None:
            raise SystemExit(POLICY_RUN_REFUSAL.format(policy=self.config.policy, owed="missing rollouts"))
