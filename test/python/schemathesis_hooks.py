"""Schemathesis hooks for Keel's contract test (test/api/openapi.test.ts).

Two fields of a valid request would reach outside the machine: a `webhook` is delivered to its
URL (after a DNS lookup), and a model other than the scripted ones calls its provider. In
requests the fuzzer means to be valid they are pointed back at this machine: the webhook at the
test's receiver on loopback (KEEL_CONTRACT_WEBHOOK; the test allows KEEL_WEBHOOK_ALLOW_HOSTS=
127.0.0.1), the model (of a thread, a run or an assistant) at `scripted:demo`. A cron's
`schedule` is a cron expression that JSON Schema cannot describe: valid requests get a valid
one; and a run names no checkpoint, a run or cron the graph's own assistant, and a version
to make the latest is 1 (which checkpoints, assistants and versions exist is state). (The network hosts a
request may ask for are the operator's, and the served document says so: docs/decisions/0380.)
The stream operations read a thread and a run that exist, which no schema can name: valid
requests to them name the thread and the run the test made before the run (KEEL_CONTRACT_THREAD,
KEEL_CONTRACT_RUN), so they stream, rather than answer 404.
Requests meant to be invalid are sent as generated. How webhook addresses and
model names are checked has tests of its own (test/api/webhook-addresses.test.ts,
test/api/api.test.ts).
"""

import os

import schemathesis

LOOPBACK_WEBHOOK = os.environ["KEEL_CONTRACT_WEBHOOK"]
KNOWN_IDS = {
    name: os.environ[variable]
    for name, variable in (("thread_id", "KEEL_CONTRACT_THREAD"), ("run_id", "KEEL_CONTRACT_RUN"))
    if os.environ.get(variable)
}


def _existing(case):
    """A stream operation's thread and run: the ones the test made. Other operations keep theirs
    (a fuzzed DELETE would end the thread the streams read)."""
    if "stream" not in (case.operation.tags or []):
        return
    for name, value in KNOWN_IDS.items():
        if name in case.path_parameters:
            case.path_parameters[name] = value


def _offline(body):
    if not isinstance(body, dict):
        return
    if isinstance(body.get("webhook"), str):
        body["webhook"] = LOOPBACK_WEBHOOK
    config = body.get("config")
    if isinstance(config, dict) and isinstance(config.get("model"), str):
        config["model"] = "scripted:demo"
    # An assistant's settings name a model too (config.configurable, context).
    for settings in (config.get("configurable") if isinstance(config, dict) else None, body.get("context")):
        if isinstance(settings, dict) and isinstance(settings.get("model"), str):
            settings["model"] = "scripted:demo"
    # A cron's schedule is a cron expression, which JSON Schema cannot describe: a valid one.
    if isinstance(body.get("schedule"), str):
        body["schedule"] = "0 9 * * 1-5"
    # Which checkpoint is the thread's newest is state, not schema: a run names none.
    body.pop("checkpoint_id", None)
    body.pop("checkpoint", None)
    # Which assistants exist is state too: a run or a cron goes through the graph's own
    # assistant, which always does (an unknown one is 404 assistant_not_found, as in LangGraph).
    if ("input" in body or "command" in body or "schedule" in body) and "assistant_id" in body:
        body["assistant_id"] = "agent"
    # Likewise which versions an assistant has: every assistant has version 1.
    if set(body) == {"version"}:
        body["version"] = 1


@schemathesis.hook
def before_call(context, case, kwargs):
    meta = case.meta
    # Stateful steps may carry no generation metadata: they are meant to be valid.
    if meta is None or meta.generation.mode.is_positive:
        _offline(case.body)
        _existing(case)
