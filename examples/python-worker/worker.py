#!/usr/bin/env python3
"""A longrun worker in Python, over the HTTP worker protocol: standard library only.

It registers the job type `py-wordcount` ({text: string} -> {words: number}), then leases jobs
with a long poll, heartbeats each run with its progress, stops a run whose task was cancelled,
asks for input when `text` is empty (the answer comes with the task's next lease), and completes.
It never talks to Redis: only to the longrun API, with a worker key (LONGRUN_WORKER_KEYS).

    LONGRUN_URL=http://127.0.0.1:3000 LONGRUN_WORKER_KEY=<key> python3 worker.py

Settings (environment): LONGRUN_URL, LONGRUN_WORKER_KEY, WORKER_MAX (leases run at once,
default 1), WORKER_WAIT_MS (long-poll wait, default 20000), WORKER_STEP_MS (a pause per word,
so a run takes a while and shows progress; default 0), WORKER_BATCH (1, the default: a run's
result goes back with the next lease call, `completions`, so one call finishes the runs done and
leases the next; 0: each run completes with its own `.../complete` call). It prints one JSON line
per event.

Runs go on a pool of WORKER_MAX threads; WORKER_LEASERS threads lease. With WORKER_BATCH, a finished
run hands its result to the leasers, which send every result ready with their next lease call (an
API that refuses `completions`, older than decision 68, makes the worker complete each on its own).
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
BATCH = os.environ.get("WORKER_BATCH", "1") != "0"
LEASERS = max(2, int(os.environ.get("WORKER_LEASERS", "2")))
# A result larger than this goes through .../complete: a lease call's body stays under 1 MiB.
BATCH_RESULT_BYTES = 64 * 1024
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
    """One run of one job: count the words, heartbeating; or ask for the text.

    Returns the completion to send with the next lease call (WORKER_BATCH), or None when the
    run is over without one (it asked for input, was cancelled, or completed on its own).
    """
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
        return None
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
                return None
            if body["cancelled"]:
                log("cancelled", taskId=task)
                return None
    result = {"words": len(words)}
    if BATCH and len(json.dumps(result)) <= BATCH_RESULT_BYTES:
        return {"leaseId": lease["leaseId"], "result": result, "taskId": task}
    complete_one({"leaseId": lease["leaseId"], "result": result, "taskId": task})
    return None


def complete_one(done):
    """Completes one run with its own call."""
    lid = urllib.parse.quote(done["leaseId"], safe="")
    status, body = call("POST", f"/v1/worker/leases/{lid}/complete", {"result": done["result"]})
    completed(done, status, body)


def completed(done, status, body):
    """Logs what became of a completion (its own call's answer, or its item in a lease call's)."""
    if status == 200:
        log("completed", taskId=done["taskId"], **done["result"])
    else:
        log("not completed", taskId=done["taskId"], status=status, code=(body or {}).get("code"))


class Slots:
    """The WORKER_MAX run slots, shared by the threads that lease (see `leaser`)."""

    def __init__(self):
        self.cond = threading.Condition()
        self.busy = 0  # runs under way
        self.asked = 0  # slots asked for by lease calls under way
        self.polling = False  # a lease call waits for jobs (waitMs > 0) now
        self.done = []  # completions to send with the next lease call

    def free(self):
        return MAX - self.busy - self.asked


def leaser(slots, pool):
    """Leases jobs while slots are free, sending the completions ready with each call.

    Two leasers run: while one long-polls for jobs (only one at a time does), the other sends
    the results of runs as they end, without waiting (WORKER_BATCH), and leases more with them.
    """
    global BATCH
    while True:
        with slots.cond:
            while not (slots.done or (slots.free() > 0 and not slots.polling)):
                slots.cond.wait()
            done, slots.done = slots.done, []
            want = slots.free()
            wait_ms = 0 if done else WAIT_MS
            slots.asked += want
            slots.polling = slots.polling or wait_ms > 0
        if want == 0:  # every slot is taken or asked for: these results go on their own
            complete_each(done)
            continue
        body = {"types": [TYPE], "max": want, "waitMs": wait_ms}
        if done:
            body["completions"] = [{"leaseId": d["leaseId"], "result": d["result"]} for d in done]
        try:
            status, answer = call("POST", "/v1/worker/leases", body)
        except (OSError, ValueError) as error:
            status, answer = None, {"error": str(error)}
        leases = answer["leases"] if status == 200 else []
        with slots.cond:
            slots.asked -= want
            slots.busy += len(leases)
            if wait_ms > 0:
                slots.polling = False
            slots.cond.notify_all()
        for lease in leases:
            pool.submit(safe_run, slots, lease)
        if status == 200 and (not done or "completions" in answer):
            for d, outcome in zip(done, answer.get("completions", [])):
                problem = outcome.get("problem")
                completed(d, problem["status"] if problem else 200, problem)
            continue
        if done and status in (200, 400) and "completions" in json.dumps(answer):
            # An API without `completions` (before decision 68): each run completes on its own.
            BATCH = False
            log("completions refused: completing each run on its own", status=status)
            complete_each(done)
            continue
        log("lease refused", status=status, body=answer)
        complete_each(done)  # each on its own (one may have been recorded: then a 409)
        time.sleep(1)


def complete_each(done):
    """Completes each of `done` with its own call, logging what cannot be sent."""
    for d in done:
        try:
            complete_one(d)
        except (OSError, ValueError) as error:
            log("not completed", taskId=d["taskId"], error=str(error))


def safe_run(slots, lease):
    done = None
    try:
        done = run(lease)
    except Exception as error:  # a run's failure is logged; the lease expires and runs again
        log("run error", taskId=lease.get("taskId"), error=repr(error))
    finally:
        with slots.cond:
            slots.busy -= 1
            if done is not None:
                slots.done.append(done)
            slots.cond.notify_all()


def main():
    if not KEY:
        raise SystemExit("set LONGRUN_WORKER_KEY (a key of LONGRUN_WORKER_KEYS)")
    register()
    log("worker ready", max=MAX)
    slots = Slots()
    with ThreadPoolExecutor(max_workers=MAX) as pool:
        others = [
            threading.Thread(target=leaser, args=(slots, pool), daemon=True)
            for _ in range(LEASERS - 1)
        ]
        for thread in others:
            thread.start()
        leaser(slots, pool)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
