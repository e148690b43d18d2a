"""One chat socket floods a running server with 1000 question frames; how long is it busy?

Usage: `.venv/bin/python -m benchmarks.socket_flood PORT [USERNAME PASSWORD]` against `./run serve`
(the demo user by default; its first project is asked). A warm-up question loads the model first.
Prints JSON: seconds to send, an HTTP request's latency during the flood, seconds until the socket's
last event (events stop 20 s before the run ends), and the events received by type.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import re
import sys
import time
import urllib.parse
import urllib.request

import websockets

FRAMES = 1000
QUIET_SECONDS = 20


def sign_in(base: str, username: str, password: str) -> tuple[urllib.request.OpenerDirector, str, str]:
    """A signed-in opener, its cookie header, and the id of the user's first project."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(f"{base}/accounts/login/").read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token, "no sign-in form"
    form = {"username": username, "password": password, "csrfmiddlewaretoken": token.group(1)}
    request = urllib.request.Request(
        f"{base}/accounts/login/", data=urllib.parse.urlencode(form).encode(), headers={"Referer": base}
    )
    opener.open(request)
    project = re.search(r'href="/projects/(\d+)/"', opener.open(f"{base}/").read().decode())
    assert project, "the user has no project"
    return opener, "; ".join(f"{c.name}={c.value}" for c in jar), project.group(1)


async def flood(port: int, username: str, password: str) -> dict[str, object]:
    base = f"http://127.0.0.1:{port}"
    opener, cookie, project = sign_in(base, username, password)
    headers = {"Origin": base, "Cookie": cookie}
    socket_url = f"ws://127.0.0.1:{port}/ws/projects/{project}/chat/"
    async with websockets.connect(socket_url, additional_headers=headers) as ws:
        await ws.recv()  # history
        await ws.send(json.dumps({"type": "question", "text": "What is this paper about?"}))
        while json.loads(await ws.recv())["type"] != "answer.done":
            pass
        start = time.monotonic()
        for i in range(FRAMES):
            await ws.send(json.dumps({"type": "question", "text": f"What is this paper about? ({i})"}))
        sent = time.monotonic() - start
        probe = time.monotonic()
        await asyncio.to_thread(lambda: opener.open(f"{base}/accounts/login/").read())
        latency = time.monotonic() - probe
        counts: dict[str, int] = {}
        last = time.monotonic()
        while True:
            try:
                event = json.loads(await asyncio.wait_for(ws.recv(), timeout=QUIET_SECONDS))
            except TimeoutError:
                break
            key = event["type"] + (f":{event['code']}" if event["type"] == "error" else "")
            counts[key] = counts.get(key, 0) + 1
            last = time.monotonic()
    return {
        "frames": FRAMES,
        "send_seconds": round(sent, 2),
        "http_latency_during_flood_seconds": round(latency, 2),
        "busy_until_last_event_seconds": round(last - start, 1),
        "events": counts,
    }


if __name__ == "__main__":
    args = sys.argv[1:]
    user, password = (args[1], args[2]) if len(args) >= 3 else ("demo", "annotagent-demo")
    print(json.dumps(asyncio.run(flood(int(args[0]), user, password)), indent=2))
