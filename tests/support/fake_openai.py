"""A tiny OpenAI-compatible chat server on 127.0.0.1 for end-to-end tests, and an
in-process chat harness that talks to it through verifiers' interception.

`serve` answers POST /v1/chat/completions (streaming and not) with
``reply_for(messages)`` and records every request body. It serves only loopback and
stops with the test.

`InProcessChatHarness` is the null harness's one chat turn without its program: the
null harness launches a uv-managed Python program per rollout (16 rollouts took 22 s
through a warm 2-worker env-server pool on a 2-core machine), so the 2 x 128
rollouts of the env-server test would take minutes. verifiers' `Harness.launch`
contract allows a loop run in process as long as every model call goes through the
rollout's interception ``endpoint`` with its ``secret``; this one does exactly that,
so the trace is still recorded by verifiers from the intercepted call. Env-server
workers load it by harness id ``fake_openai`` (verifiers imports a harness id as a
top-level module), which needs this directory on ``sys.path`` (spawned workers inherit
the parent's). The real null-harness program is covered by ``test_taskset_e2e``.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import verifiers.v1 as vf
from openai import AsyncOpenAI

__all__ = ["InProcessChatConfig", "InProcessChatHarness", "serve"]
HARNESS_ID = "fake_openai"


def serve(reply_for: Callable[[list[dict]], str], *, whole_body: bool = False
          ) -> tuple[ThreadingHTTPServer, int, list[dict]]:
    """Starts the server; ``reply_for`` gets the request's messages, or with
    ``whole_body`` the whole request body (sampling fields such as ``seed`` included,
    which is how a test tells two rollouts of one prompt apart)."""
    requests: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def _send(self, status: int, ctype: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            requests.append(body)
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self._send(404, "application/json", b'{"error": {"message": "not found"}}')
            text = reply_for(body if whole_body else body.get("messages", []))
            head = {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "created": int(time.time()),
                    "model": body.get("model", "fake-model")}
            usage = {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}
            if not body.get("stream"):
                msg = {**head, "object": "chat.completion", "usage": usage, "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
                return self._send(200, "application/json", json.dumps(msg).encode())
            head["object"] = "chat.completion.chunk"
            start = {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            events = [{**head, "choices": [start]},
                      {**head, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
                      {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                      {**head, "choices": [], "usage": usage}]
            data = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"
            self._send(200, "text/event-stream", data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1], requests


class InProcessChatConfig(vf.HarnessConfig):
    pass


class InProcessChatHarness(vf.Harness[InProcessChatConfig]):
    """One chat completion through the interception endpoint, made in process (see
    the module doc). It notes the process that ran the rollout in
    ``trace.info["harness_pid"]``: the env-server worker, which also scores it."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    _client: AsyncOpenAI | None = None

    async def launch(self, ctx, trace, runtime, endpoint, secret, mcp_urls, data) -> vf.ProgramResult:
        system, prompt = self.resolve_text_prompt(data)
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        trace.info["harness_pid"] = os.getpid()
        if self._client is None:  # one connection pool per worker: a new client costs ~30 ms of CPU (TLS setup)
            self._client = AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0, timeout=120.0)
        client = self._client.with_options(base_url=endpoint, api_key=secret)
        await client.chat.completions.create(model=ctx.model, messages=messages)
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")
