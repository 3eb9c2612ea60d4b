"""A tiny OpenAI-compatible chat server on 127.0.0.1 for end-to-end tests.

It answers POST /v1/chat/completions (streaming and not) with ``reply_for(messages)``
and records every request body. It serves only loopback and stops with the test.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


def serve(reply_for: Callable[[list[dict]], str]) -> tuple[ThreadingHTTPServer, int, list[dict]]:
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
            text = reply_for(body.get("messages", []))
            head = {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "created": int(time.time()),
                    "model": body.get("model", "fake-model")}
            usage = {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}
            if not body.get("stream"):
                msg = {**head, "object": "chat.completion", "usage": usage, "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
                return self._send(200, "application/json", json.dumps(msg).encode())
            head["object"] = "chat.completion.chunk"
            events = [{**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
                      {**head, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
                      {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                      {**head, "choices": [], "usage": usage}]
            data = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"
            self._send(200, "text/event-stream", data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1], requests
