"""Verdicts that do not depend on load (issue 15), and env-server throughput.

    uv run python benchmarks/bench_load.py [--quick]

1. Builds a fixed set of near-budget VALID replies: a built-in policy's reply
   (oracle, baseline or induce) on a dev task plus k rules that never match and
   cost ~n^2 steps per position (``[\\s\\S]{0,n}[\\s\\S]{0,n}[\\x00\\ue000]``: no
   required literal, so every held-out record is scanned; compiled size 8n + 5, at
   most 805 against the pattern guard's 20,000 per pattern and 60,000 per reply),
   with k and n calibrated per reply so the scan alone uses 0.5-0.95 s of CPU of its
   2.0 s budget, and checked to leave the base reply's verdict unchanged. Prints each
   reply's cost alone.
2. Scores the set alone, then with 4/16/32 concurrent scorers as threads of this
   process and as separate processes (each scorer released by one barrier, so the
   scans really overlap), then beside CPU-burning processes (cores + 1), then
   through verifiers' env-server pool (2 workers) at concurrency 1 and 16 (the
   issue measured 0.8125 vs 0.375 mean reward there before the fix), and prints
   whether every verdict (reward, recall, precision, clean, matches, errors) is
   identical to the one alone (exit status 1 if one is not). It must be: the budget
   is CPU time of the episode's own scan, in its own scan worker process.
3. Scoring throughput (rollouts/s) in env-server mode with 1 and 2 workers (both
   pools up, timed in alternation): 64 dev tasks x 2 rollouts of the built-in
   policies' replies at concurrency 32, through `EnvClient` and a fake model on
   127.0.0.1 (the in-process chat harness of ``tests/support/fake_openai.py``, so the figure
   is env-server routing + task build + interception + scoring, not a model or a
   harness program). Scan workers per env worker: available CPUs / workers, as the
   README advises.

A scan that waits past its wall-clock ceiling (10x the budget) is an infrastructure
error, not a verdict; it is counted separately ("no verdict"). That happens when far
more scans run at once than there are cores (32 scorer processes on 2 cores, more so
with other jobs on the host): the remedy is sizing, not the budget. The same scan's
CPU time itself grows under contention (up to ~1.6x measured on a shared 2-core VM),
which is why the replies stay at or below 0.95 s: twice the margin to the budget.
--quick: 3 replies, 4 and 16 concurrent scorers, 32 tasks x 2 rollouts and two timed
runs per pool.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import multiprocessing as mp
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests" / "support"))  # the fake model and its harness (env-server workers import it)
from _common import machine, table  # noqa: E402

from redaction_pressure import load_task, policies  # noqa: E402
from redaction_pressure.scoring.scan_pool import ScanInfrastructureError, available_cpus  # noqa: E402
from redaction_pressure.scoring.score import score_with_cost  # noqa: E402

BUDGET_S = 2.0
TARGET_S = (0.5, 0.95)  # CPU seconds alone, per reply
BASES = (("oracle", policies.oracle), ("baseline", policies.baseline), ("induce", policies.induce))
WAIT_S = 300.0  # any single wait in this script; nothing here should come close


def ballast(n: int, k: int) -> list[dict]:
    """k distinct rules that never match (each ends in a class of U+0000 and a
    private-use character no record holds, after trying ~n^2 ways per position) and
    name no literal a record must contain, so every held-out record is scanned k times."""
    return [{"pattern": f"[\\s\\S]{{0,{n}}}[\\s\\S]{{0,{n}}}[\\x00\\u{0xE000 + i:04x}]", "replacement": ""}
            for i in range(k)]


def rules_of(reply: str) -> list[dict]:
    body = reply.split("```json\n", 1)[1].rsplit("```", 1)[0] if "```" in reply else reply
    return json.loads(body)["rules"]


def verdict(score) -> tuple:
    return (score.reward, score.recall, score.precision, score.clean, score.matches,
            tuple((e.code, e.rule) for e in score.errors))


def trace_verdict(trace) -> tuple:
    r = trace.info["redaction"]
    return (r["reward"], r["recall"], r["precision"], r["clean"], r["matches"],
            tuple((e["code"], e.get("rule")) for e in trace.info["redaction_errors"]))


def calibrate(n_replies: int) -> list[dict]:
    """The fixed set: per reply, k ballast rules of width n chosen so the scan alone
    costs a target CPU time spread over 0.60-0.85 s, confirmed by three runs alone.
    Ballast work grows as k n^2 while n stays under a record's length (n <= 100)."""
    jobs = []
    for j in range(n_replies):
        task = load_task("dev", j, budget_s=BUDGET_S)
        name, policy = BASES[j % len(BASES)]
        rules = rules_of(policy(task))
        target = 0.6 + 0.25 * j / max(1, n_replies - 1)
        base = [score_with_cost(task, json.dumps({"rules": rules})) for _ in range(3)]
        base_cost = statistics.median(cpu for _, cpu, _ in base)
        n, k, runs = 60, 1, None
        for _ in range(10):
            reply = json.dumps({"rules": rules + ballast(n, k)})
            probe = [score_with_cost(task, reply)]
            if abs(probe[0][1] - target) < 0.08:  # close: confirm on the median of 3
                probe += [score_with_cost(task, reply) for _ in range(2)]
            cost = statistics.median(cpu for _, cpu, _ in probe)
            if {verdict(s) for s, _, _ in probe} != {verdict(base[0][0])}:
                raise SystemExit(f"reply {j}: the ballast changed the verdict or it is unstable ({probe[0][0].errors})")
            if len(probe) == 3 and TARGET_S[0] <= cost <= TARGET_S[1]:
                runs = probe
                break
            work = k * n * n * max(0.05, target - base_cost) / max(0.01, cost - base_cost)
            k = min(24 - len(rules), max(1, math.ceil(work / 100 ** 2)))
            n = min(100, max(10, round(math.sqrt(work / k))))
        if runs is None:
            raise SystemExit(f"could not calibrate reply {j} into {TARGET_S} s of CPU (last {cost:.2f} s, {k} x n={n})")
        jobs.append({"task": task, "index": j, "base": name, "n": n, "k": k, "reply": reply,
                     "cpu_alone": cost, "verdict": verdict(runs[0][0])})
    return jobs


class Tally:
    """Verdicts of one scenario against the ones alone, and each scan's CPU time
    against the same reply's alone (CPU time itself inflates on contended cores)."""

    def __init__(self, name: str) -> None:
        self.name, self.scored, self.same, self.infra, self.inflation, self.wall = name, 0, 0, 0, [], 0.0

    def add(self, job: dict, got: tuple | None, cpu: float | None = None) -> None:
        if got is None:
            self.infra += 1
            return
        self.scored += 1
        self.same += got == job["verdict"]
        if cpu is not None:
            self.inflation.append(cpu / job["cpu_alone"])

    @property
    def differing(self) -> int:
        return self.scored - self.same

    def row(self) -> tuple[str, str, str]:
        infra = f", {self.infra} no verdict" if self.infra else ""
        cpu = f"{max(self.inflation):.2f}x, " if self.inflation else ""
        return (self.name, f"{self.same}/{self.scored} identical{infra}", f"{cpu}{self.wall:.1f} s")


def score_one(job: dict) -> tuple[tuple | None, float | None]:
    try:
        score, cpu, _ = score_with_cost(job["task"], job["reply"])
    except ScanInfrastructureError:
        return None, None
    return verdict(score), cpu


def alone(jobs: list[dict]) -> Tally:
    tally = Tally("alone (again, one at a time)")
    start = time.perf_counter()
    for job in jobs:
        tally.add(job, *score_one(job))
    tally.wall = time.perf_counter() - start
    return tally


def threads(jobs: list[dict], n: int) -> Tally:
    """n scorer threads in this process, released together; scans queue for this
    process's scan workers (one per CPU)."""
    tally = Tally(f"{n} concurrent scorer threads")
    gate = threading.Barrier(n)
    work = [jobs[i % len(jobs)] for i in range(n)]

    def one(job):
        gate.wait(WAIT_S)
        return score_one(job)

    start = time.perf_counter()
    with ThreadPoolExecutor(n) as pool:
        for job, got in zip(work, pool.map(one, work, timeout=WAIT_S), strict=False):
            tally.add(job, *got)
    tally.wall = time.perf_counter() - start
    return tally


def _process_scorer(i: int, job: dict, gate, results) -> None:
    # Start our scan worker.
    score_one({**job, "reply": json.dumps({"rules": [{"pattern": "AKIA", "replacement": ""}]})})
    gate.wait(WAIT_S)
    results.put((i, *score_one(job)))


def processes(jobs: list[dict], n: int) -> Tally:
    """n scorer processes (forked; each starts its own scan worker), released
    together: n scans at once on this machine's cores."""
    tally = Tally(f"{n} concurrent scorer processes")
    ctx = mp.get_context("fork")
    gate, results = ctx.Barrier(n), ctx.Queue()
    work = [jobs[i % len(jobs)] for i in range(n)]
    procs = [ctx.Process(target=_process_scorer, args=(i, job, gate, results), daemon=True)
             for i, job in enumerate(work)]
    start = time.perf_counter()
    try:
        for p in procs:
            p.start()
        got = dict((i, rest) for i, *rest in (results.get(timeout=WAIT_S) for _ in procs))
        tally.wall = time.perf_counter() - start
    finally:
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
                p.join()
    for i, job in enumerate(work):
        tally.add(job, *got[i])
    return tally


@contextlib.contextmanager
def cpu_burners(n: int):
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(0.2)
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def beside_burners(jobs: list[dict]) -> Tally:
    n = (os.cpu_count() or 1) + 1  # more busy processes than cores
    with cpu_burners(n):
        tally = alone(jobs)
    tally.name = f"beside {n} CPU-burning processes"
    return tally


# -- env-server mode ------------------------------------------------------------------

def _run_broker(lifeline, **kwargs) -> None:
    from verifiers.v1.serve import serve_env

    lifeline.close()  # the forked copy of our end: our death (EOF) still stops the pool
    serve_env(**kwargs)


@contextlib.contextmanager
def env_server(workers: int, jobs_by_seed: dict):
    """A fixed verifiers env-server pool of ``workers`` processes serving this
    taskset, and a fake model answering each request with ``jobs_by_seed[seed]``.
    The broker is forked (it only routes); `EnvServerPool` spawns the workers."""
    import verifiers.v1 as vf
    from fake_openai import HARNESS_ID, serve
    from verifiers.v1.serve import env_config_data
    from verifiers.v1.utils.loaders import resolve_env_config

    model, port, _ = serve(lambda body: jobs_by_seed[body["seed"]], whole_body=True)
    config = resolve_env_config({"taskset": {"id": "redaction-pressure", "split": "dev"},
                                 "agent": {"harness": {"id": HARNESS_ID}, "runtime": {"type": "subprocess"}}})
    ctx = mp.get_context("fork")
    addresses, (lifeline, death_pipe) = ctx.Queue(), ctx.Pipe()
    broker = ctx.Process(target=_run_broker, args=(lifeline,), kwargs=dict(
        max_workers=workers, elastic=False, address="tcp://127.0.0.1:0", address_queue=addresses,
        death_pipe=death_pipe, config_data=env_config_data(config)))
    scan_workers = max(1, available_cpus() // workers)
    with mock.patch.dict(os.environ, {"REDACTION_PRESSURE_SCAN_WORKERS": str(scan_workers)}):
        broker.start()
    death_pipe.close()
    try:
        deadline = time.monotonic() + WAIT_S
        while True:
            with contextlib.suppress(queue.Empty):
                address = addresses.get(timeout=0.5)
                break
            if not broker.is_alive() or time.monotonic() > deadline:
                raise SystemExit(f"the env-server broker did not bind (exit code {broker.exitcode})")
        yield address, vf.EvalClientConfig(base_url=f"http://127.0.0.1:{port}/v1"), scan_workers
    finally:
        broker.terminate()
        broker.join(30)
        if broker.is_alive():
            broker.kill()
            broker.join()
        lifeline.close()
        model.shutdown()
        model.server_close()


def drive(address: str, client_config, requests: list[tuple[dict, int]], concurrency: int) -> tuple[list, float]:
    """Runs (task wire data, seed) requests through `EnvClient`, at most
    ``concurrency`` in flight; returns the traces in request order and the wall time."""
    import verifiers.v1 as vf
    from verifiers.v1.serve import EnvClient

    async def run_all():
        client = EnvClient(address)
        gate = asyncio.Semaphore(concurrency)

        async def one(data, seed):
            async with gate:
                episode = await client.run(client_config, "fake-model", vf.SamplingConfig(seed=seed), data)
            (trace,) = episode.traces
            return trace

        try:
            await client.wait_for_server_startup(timeout=WAIT_S, interval=0.2)
            start = time.perf_counter()
            traces = await asyncio.wait_for(asyncio.gather(*(one(d, s) for d, s in requests)), WAIT_S)
            return traces, time.perf_counter() - start
        finally:
            await client.close()

    return asyncio.run(run_all())


def wire(split: str, index: int) -> dict:
    import verifiers.v1 as vf

    from redaction_pressure.taskset import RedactionConfig

    (row,) = vf.load_taskset(RedactionConfig(id="redaction-pressure", split=split, start_index=index, num_tasks=1))
    return row.wire_data()


def pool_verdicts(address: str, client_config, jobs: list[dict], seed0: int) -> list[Tally]:
    """The near-budget set through the pool at concurrency 1 and 16 (the issue saw
    mean rewards 0.8125 and 0.375 there before scans ran in CPU-budgeted workers)."""
    tallies = []
    for concurrency, count in ((1, len(jobs)), (16, 16)):
        work = [jobs[i % len(jobs)] for i in range(count)]
        requests = [(wire("dev", job["index"]), seed0 + i % len(jobs)) for i, job in enumerate(work)]
        traces, wall = drive(address, client_config, requests, concurrency)
        tally = Tally(f"env-server pool, 2 workers, concurrency {concurrency}")
        for job, trace in zip(work, traces, strict=False):
            if not trace.ok and "redaction_infrastructure_error" not in trace.info:
                raise SystemExit(f"a rollout failed: {trace.errors}")
            tally.add(job, trace_verdict(trace) if trace.ok else None)
        tally.wall = wall
        tallies.append(tally)
    return tallies


def env_server_modes(n_tasks: int, repeats: int, jobs: list[dict]) -> tuple[list[dict], list[Tally]]:
    """Rollouts/s of n_tasks dev tasks x 2 rollouts of built-in policies' replies at
    concurrency 32 through a 1-worker and a 2-worker pool, both up at once and timed
    in alternation (``repeats`` rounds after a warm-up), so a change in the host's
    other load hits both alike; then the near-budget set's verdicts through the
    2-worker pool."""
    tasks = [load_task("dev", i) for i in range(n_tasks)]
    replies = {2 * i + k: BASES[(2 * i + k) % len(BASES)][1](t) for i, t in enumerate(tasks) for k in range(2)}
    seed0 = len(replies)
    replies.update({seed0 + j: job["reply"] for j, job in enumerate(jobs)})
    data = [wire("dev", i) for i in range(n_tasks)]
    requests = [(data[i], 2 * i + k) for i in range(n_tasks) for k in range(2)]
    with contextlib.ExitStack() as stack:
        pools = {w: stack.enter_context(env_server(w, replies)) for w in (1, 2)}
        for w, (address, client_config, _) in pools.items():
            drive(address, client_config, requests[: 8 * w], 8 * w)  # warm-up: boot the workers
        rates: dict[int, list[float]] = {w: [] for w in pools}
        for _ in range(repeats):
            for w, (address, client_config, _) in pools.items():
                traces, wall = drive(address, client_config, requests, 32)
                if not all(t.ok for t in traces):
                    raise SystemExit(f"a rollout failed: {next(t.errors for t in traces if not t.ok)}")
                rates[w].append(len(traces) / wall)
        address, client_config, _ = pools[2]
        tallies = pool_verdicts(address, client_config, jobs, seed0)
    modes = [{"workers": w, "scan_workers": pools[w][2], "rollouts": len(requests), "runs": rates[w],
              "rate": statistics.median(rates[w])} for w in pools]
    return modes, tallies


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="3 replies, 4 and 16 concurrent scorers, 32 tasks x 2 rollouts, 2 timed runs per pool")
    args = ap.parse_args(argv)
    n_replies, levels, n_tasks, repeats = (3, (4, 16), 32, 2) if args.quick else (6, (4, 16, 32), 64, 3)
    started = time.perf_counter()
    print(f"bench_load on {machine()}, {available_cpus()} CPUs available" + (" (quick)" if args.quick else ""),
          flush=True)

    jobs = calibrate(n_replies)
    print("\nnear-budget valid replies (budget 2.0 s of scan CPU; cost alone = median of 3 runs):")
    print(table([("reply (reward)", "ballast rules x n", "scan CPU alone")]
                + [(f"dev {j['index']} {j['base']} + ballast ({j['verdict'][0]:.4f})", f"{j['k']} x {j['n']}",
                    f"{j['cpu_alone']:.2f} s") for j in jobs]), flush=True)

    tallies = [alone(jobs)]
    tallies += [threads(jobs, n) for n in levels]
    tallies += [processes(jobs, n) for n in levels]
    tallies.append(beside_burners(jobs))
    modes, pool_tallies = env_server_modes(n_tasks, repeats, jobs)
    tallies += pool_tallies
    identical = not any(t.differing for t in tallies)
    infra = sum(t.infra for t in tallies)
    print("\nverdicts (reward, recall, precision, clean, matches, errors) against the ones alone:")
    print(table([("scenario", "verdicts", "max scan CPU / alone, wall")] + [t.row() for t in tallies]))
    print(f"verdicts identical everywhere: {'yes' if identical else 'NO'} "
          f"({sum(t.same for t in tallies)} of {sum(t.scored for t in tallies)} verdicts match the ones alone)")
    if infra:
        print(f"{infra} rollouts had no verdict: a scan starved past its 20 s wall ceiling, an infrastructure "
              "error (dropped, never scored); "
              + ", ".join(f"{t.name}: {t.infra}/{t.infra + t.scored}" for t in tallies if t.infra))

    print(f"\nenv-server scoring throughput ({n_tasks} dev tasks x 2 rollouts, concurrency 32, policy replies):")
    print(table([("pool", "rollouts/s (median)", "runs")]
                + [(f"{m['workers']} worker(s) x {m['scan_workers']} scan worker(s)", f"{m['rate']:.1f}",
                    ", ".join(f"{x:.1f}" for x in m["runs"])) for m in modes]))
    print(f"2 workers / 1 worker: {modes[1]['rate'] / modes[0]['rate']:.2f}x (ratio of medians; per round: "
          + ", ".join(f"{b / a:.2f}x" for a, b in zip(modes[0]["runs"], modes[1]["runs"], strict=True)) + ")")
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return {"identical": identical, "infra": infra, "jobs": jobs, "tallies": tallies, "throughput": modes}

if __name__ == "__main__":
    sys.exit(0 if main()["identical"] else 1)
