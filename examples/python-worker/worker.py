#!/usr/bin/env python3
"""A longrun worker in Python, over the HTTP worker protocol: standard library only.

It registers the job type `py-wordcount` ({text: string} -> {words: number}), then leases jobs
with a long poll, heartbeats each run with its progress, stops a run whose task was cancelled,
asks for input when `text` is empty (the answer comes with the task's next lease), and completes.
It never talks to Redis: only to the longrun API, with a worker key (LONGRUN_WORKER_KEYS).

    LONGRUN_URL=http://127.0.0.1:3000 LONGRUN_WORKER_KEY=<key> python3 worker.py

Settings (environment): LONGRUN_URL, LONGRUN_WORKER_KEY, WORKER_MAX (leases run at once,
default 1), WORKER_WAIT_MS (long-poll wait, default 20000), WORKER_STEP_MS (a pause per word,
so a run takes a while and shows progress; default 0). It prints one JSON line per event.
"""

import http.client
import json
import os
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

URL = urllib.parse.urlsplit(os.environ.get("LONGRUN_URL", "http://127.0.0.1:3000"))
KEY = os.environ.get("LONGRUN_WORKER_KEY", "")
MAX = int(os.environ.get("WORKER_MAX", "1"))
WAIT_MS = int(os.environ.get("WORKER_WAIT_MS", "20000"))
STEP_MS = int(os.environ.get("WORKER_STEP_MS", "0"))
TYPE = "py-wordcount"

_local = threading.local()
_print_lock = threading.Lock()


def log(msg, **fields):
    """One JSON line on stdout (what the tests read)."""
    with _print_lock:
        print(json.dumps({"msg": msg, **fields}, separators=(",", ":")), flush=True)


def call(method, path, body=None):
    """One request to the API; answers (status, parsed JSON body or None).

    urllib's urlopen opens a connection per request; http.client (what urllib is built on) keeps
    one per thread alive, which matters for a worker making several calls per job.
    """
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {KEY}"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    for attempt in range(2):
        conn = getattr(_local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection(URL.hostname, URL.port or 80, timeout=60)
            _local.conn = conn
        try:
            conn.request(method, path, body=data, headers=headers)
            res = conn.getresponse()
            raw = res.read()
            return res.status, (json.loads(raw) if raw else None)
        except (http.client.HTTPException, OSError):
            conn.close()
            _local.conn = None
            if attempt == 1:
                raise
    raise RuntimeError("unreachable")


def register():
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    }
    status, body = call("PUT", f"/v1/worker/job-types/{TYPE}", {"inputSchema": schema})
    if status != 200:
        raise SystemExit(f"register failed: {status} {body}")
    log("registered", type=TYPE, version=body["version"])


def run(lease):
    """One run of one job: count the words, heartbeating; or ask for the text."""
    lid = urllib.parse.quote(lease["leaseId"], safe="")
    task = lease["taskId"]
    log("leased", taskId=task, attempt=lease["attempt"], answer="answer" in lease)
    text = (lease.get("answer") or {}).get("text") if "answer" in lease else lease["input"]["text"]
    if not (text or "").strip():
        status, body = call(
            "POST",
            f"/v1/worker/leases/{lid}/input",
            {
                "message": "The text is empty: send the text to count",
                "schema": {
                    "type": "object",
                    "properties": {"text": {"type": "string", "minLength": 1}},
                    "required": ["text"],
                },
            },
        )
        log("asked for input", taskId=task, status=status)
        return
    words = text.split()
    beat_every = lease["leaseMs"] / 3000.0
    last_beat = time.monotonic()
    for i, _ in enumerate(words):
        if STEP_MS:
            time.sleep(STEP_MS / 1000.0)
        if STEP_MS or time.monotonic() - last_beat > beat_every:
            progress = round(100 * (i + 1) / len(words))
            status, body = call(
                "POST",
                f"/v1/worker/leases/{lid}/heartbeat",
                {"progress": progress, "message": f"counted {i + 1} of {len(words)}"},
            )
            last_beat = time.monotonic()
            if status != 200:
                log("lease lost", taskId=task, status=status, code=(body or {}).get("code"))
                return
            if body["cancelled"]:
                log("cancelled", taskId=task)
                return
    status, body = call("POST", f"/v1/worker/leases/{lid}/complete", {"result": {"words": len(words)}})
    if status == 200:
        log("completed", taskId=task, words=len(words))
    else:
        log("not completed", taskId=task, status=status, code=(body or {}).get("code"))


def main():
    if not KEY:
        raise SystemExit("set LONGRUN_WORKER_KEY (a key of LONGRUN_WORKER_KEYS)")
    register()
    log("worker ready", max=MAX)
    free = threading.Semaphore(MAX)
    busy = [0]
    lock = threading.Lock()

    def done(_):
        with lock:
            busy[0] -= 1
        free.release()

    with ThreadPoolExecutor(max_workers=MAX) as pool:
        while True:
            free.acquire()  # at least one slot is free: lease as many as are
            free.release()
            with lock:
                want = MAX - busy[0]
            try:
                status, body = call(
                    "POST", "/v1/worker/leases", {"types": [TYPE], "max": want, "waitMs": WAIT_MS}
                )
            except OSError as error:
                log("api unreachable", error=str(error))
                time.sleep(1)
                continue
            if status != 200:
                log("lease refused", status=status, body=body)
                time.sleep(1)
                continue
            for lease in body["leases"]:
                free.acquire()
                with lock:
                    busy[0] += 1
                pool.submit(safe_run, lease).add_done_callback(done)


def safe_run(lease):
    try:
        run(lease)
    except Exception as error:  # a run's failure is logged; the lease expires and runs again
        log("run error", taskId=lease.get("taskId"), error=repr(error))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
