"""LangGraph's Python SDK (langgraph-sdk from PyPI), unmodified, against a running Keel.

Usage: python langgraph_sdk_smoke.py <api url>. Prints one JSON line of what it saw and exits 0,
or raises (exit 1) at the first call that does not behave as LangGraph's server would.
"""

import asyncio
import json
import sys

from langgraph_sdk import get_client


async def main(url: str) -> None:
    client = get_client(url=url)
    seen: dict = {}

    assistants = await client.assistants.search(graph_id="agent")
    seen["assistants"] = [assistant["assistant_id"] for assistant in assistants]

    thread = await client.threads.create(metadata={"from": "python"})
    thread_id = thread["thread_id"]
    found = await client.threads.search(metadata={"graph_id": "agent", "from": "python"})
    seen["found"] = thread_id in [candidate["thread_id"] for candidate in found]

    waited = await client.runs.wait(thread_id, "agent", input={"messages": [{"role": "user", "content": "hello from python"}]})
    seen["wait"] = [message["type"] for message in waited["messages"]]

    events = []
    async for part in client.runs.stream(
        thread_id,
        "agent",
        input={"messages": [{"type": "human", "content": "run: echo hi"}]},
        stream_mode=["values", "messages-tuple"],
    ):
        events.append(part.event)
    seen["stream"] = sorted(set(events))

    state = await client.threads.get_state(thread_id)
    seen["state"] = [message["type"] for message in state["values"]["messages"]]
    history = await client.threads.get_history(thread_id)
    seen["history"] = [entry["metadata"]["step"] for entry in history]

    careful = await client.assistants.create(
        graph_id="agent", config={"configurable": {"tool_rules": {"bash": "ask"}}}, name="careful"
    )
    gated = await client.threads.create()
    last = None
    async for part in client.runs.stream(
        gated["thread_id"], careful["assistant_id"], input={"messages": [{"role": "user", "content": "run: echo gated"}]}
    ):
        if part.event == "values":
            last = part
    seen["interrupt"] = last.data["__interrupt__"][0]["value"]["action_request"]
    resumed = await client.runs.wait(
        gated["thread_id"],
        careful["assistant_id"],
        command={"resume": [{"type": "edit", "args": {"action": "bash", "args": {"command": "echo edited"}}}]},
    )
    seen["resumed"] = [message["content"] for message in resumed["messages"] if message["type"] == "tool"]

    await client.threads.update(thread_id, metadata={"stage": "patched"})
    seen["patched"] = (await client.threads.get(thread_id))["metadata"]["stage"]
    copy = await client.threads.copy(thread_id)
    copied = await client.threads.get_state(copy["thread_id"])
    seen["copied"] = len(copied["values"]["messages"])

    stateless = await client.runs.wait(None, "agent", input={"messages": [{"role": "user", "content": "no thread"}]})
    seen["stateless"] = [message["type"] for message in stateless["messages"]]

    cron = await client.crons.create_for_thread(
        thread_id, "agent", schedule="0 9 * * *", input={"messages": [{"role": "user", "content": "later"}]}
    )
    await client.crons.delete(cron["cron_id"])
    seen["cron"] = cron["schedule"]

    # A graph input other than {messages}: taken, a run with nothing new that ends at once.
    graph_input = await client.runs.wait(thread_id, "agent", input={"message": "hi"})
    runs = await client.runs.list(thread_id, limit=1)
    seen["graph_input"] = [len(graph_input["messages"]), runs[0]["status"]]
    bare = await client.assistants.create(graph_id="agent", config={"configurable": {"model": "gpt-4o"}})
    seen["model"] = bare["config"]["configurable"]["model"]

    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
