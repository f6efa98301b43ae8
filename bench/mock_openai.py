#!/usr/bin/env python3
"""A tiny OpenAI-compatible Chat Completions server for the peer comparison (BENCHMARKS.md).

One round, whoever asks: a request whose last message is not a tool result gets a call of the
request's write_file tool ({"path": "bench.txt", "content": "hello"}); a request after the tool
ran gets the answer "done". JSON only (no streaming), standard library only, so Airlock
(`airlock bench roundtrip --base-url`) and the Vercel AI SDK peer (bench/peer-vercel) talk to
the same server in the same run.

    python3 bench/mock_openai.py --port 8765     # base URL: http://127.0.0.1:8765/v1
"""

import argparse
import itertools
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNTER = itertools.count(1)


def reply(request):
    messages = request.get("messages", [])
    n = next(COUNTER)
    base = {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0,
            "model": request.get("model", "mock"),
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
    if messages and messages[-1].get("role") == "tool":
        message = {"role": "assistant", "content": "done"}
        finish = "stop"
    else:
        names = [t.get("function", {}).get("name", "") for t in request.get("tools", [])]
        name = next((x for x in names if x.endswith("write_file")), "write_file")
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{n}", "type": "function",
            "function": {"name": name,
                         "arguments": json.dumps({"path": "bench.txt", "content": "hello"})}}]}
        finish = "tool_calls"
    base["choices"] = [{"index": 0, "message": message, "finish_reason": finish}]
    return base


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body are two writes: without this, Nagle and the delayed ACK add 40 ms.
    disable_nagle_algorithm = True

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)
            return
        out = json.dumps(reply(json.loads(body or b"{}"))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
