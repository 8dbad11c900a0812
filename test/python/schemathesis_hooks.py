"""Schemathesis hooks for Keel's contract test (test/api/openapi.test.ts).

Two fields of a valid request would reach outside the machine: a `webhook` is delivered to its
URL (after a DNS lookup), and a model other than the scripted ones calls its provider. In
requests the fuzzer means to be valid they are pointed back at this machine: the webhook at the
test's receiver on loopback (KEEL_CONTRACT_WEBHOOK; the test allows KEEL_WEBHOOK_ALLOW_HOSTS=
127.0.0.1), the model (of a thread, a run or an assistant) at `scripted:demo`. A cron's
`schedule` is a cron expression that JSON Schema cannot describe: valid requests get a valid
one; a run names no checkpoint (which checkpoints exist is state); and valid settings ask for no
network hosts (the operator's list is configuration). Requests meant to be invalid are sent as generated. How webhook addresses and
model names are checked has tests of its own (test/api/webhook-addresses.test.ts,
test/api/api.test.ts).
"""

import os

import schemathesis

LOOPBACK_WEBHOOK = os.environ["KEEL_CONTRACT_WEBHOOK"]


def _offline(body):
    if not isinstance(body, dict):
        return
    if isinstance(body.get("webhook"), str):
        body["webhook"] = LOOPBACK_WEBHOOK
    config = body.get("config")
    # Network hosts are allowed by the operator, which a schema cannot say: valid requests ask
    # for none (test/api/sandbox-network.test.ts checks the policy).
    for settings in (
        config,
        config.get("configurable") if isinstance(config, dict) else None,
        body.get("context"),
    ):
        if isinstance(settings, dict) and "network_hosts" in settings:
            settings["network_hosts"] = []
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


@schemathesis.hook
def before_call(context, case, kwargs):
    meta = case.meta
    if meta is not None and meta.generation.mode.is_positive:
        _offline(case.body)
