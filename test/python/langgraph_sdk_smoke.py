"""LangGraph's Python SDK (langgraph-sdk from PyPI), unmodified, against a running Keel.

Usage: python langgraph_sdk_smoke.py <api url>. Prints one JSON line of what it saw and exits 0,
or raises (exit 1) at the first call that does not behave as LangGraph's server would.
"""

import asyncio
import json
import sys
import uuid

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

    seen["join"] = await join_parity(client)
    seen["paging"] = await paging_parity(client)

    print(json.dumps(seen))


async def join_parity(client) -> dict:
    """join_stream without stream_mode after a run streamed in ['values', 'messages']: the run's
    own modes, the whole run again, or exactly what came after the event the client had."""
    thread = await client.threads.create()
    streamed = [
        part
        async for part in client.runs.stream(
            thread["thread_id"],
            "agent",
            input={"messages": [{"type": "human", "content": "run: echo joined"}]},
            stream_mode=["values", "messages"],
        )
    ]
    run_id = streamed[0].data["run_id"]
    events = [(part.id, part.event) for part in streamed if part.event != "metadata"]

    async def join(**options):
        parts = client.runs.join_stream(thread["thread_id"], run_id, **options)
        return [(part.id, part.event) async for part in parts if part.event != "metadata"]

    cut = len(events) // 2
    return {
        "modes": sorted({event for _, event in events}),
        "whole": await join() == events,
        "after": await join(last_event_id=events[cut][0]) == events[cut + 1 :],
    }


async def paging_parity(client) -> dict:
    """Assistants, threads, a thread's runs and crons paged with limit and offset: every one once,
    newest first, in the order of one listing; sort_by without sort_order is descending."""
    tag = f"paged-{uuid.uuid4()}"
    assistants = [
        (await client.assistants.create(graph_id="agent", name=tag, metadata={"tag": tag}))["assistant_id"]
        for _ in range(3)
    ]
    threads = [(await client.threads.create(metadata={"tag": tag}))["thread_id"] for _ in range(3)]
    runs = [
        (await client.runs.create(threads[0], "agent", input={"messages": [{"role": "user", "content": f"turn {n}"}]}))[
            "run_id"
        ]
        for n in range(3)
    ]
    await client.runs.join(threads[0], runs[-1])
    crons = [
        (
            await client.crons.create_for_thread(
                threads[0], "agent", schedule=f"{n} 3 * * *", input={"messages": [{"role": "user", "content": "nightly"}]}
            )
        )["cron_id"]
        for n in range(3)
    ]

    async def paged(search, key):
        pages = [await search(limit=2, offset=offset) for offset in (0, 2)]
        return [item[key] for page in pages for item in page]

    newest_first = lambda made: list(reversed(made))  # noqa: E731
    by_id_descending = lambda made: sorted(made, reverse=True)  # noqa: E731
    try:
        return {
            "assistants": await paged(
                lambda **page: client.assistants.search(metadata={"tag": tag}, **page), "assistant_id"
            )
            == newest_first(assistants),
            "assistants_by_id": [
                a["assistant_id"] for a in await client.assistants.search(metadata={"tag": tag}, sort_by="assistant_id")
            ]
            == by_id_descending(assistants),
            "threads": await paged(lambda **page: client.threads.search(metadata={"tag": tag}, **page), "thread_id")
            == newest_first(threads),
            "threads_by_id": [
                t["thread_id"] for t in await client.threads.search(metadata={"tag": tag}, sort_by="thread_id")
            ]
            == by_id_descending(threads),
            "runs": await paged(lambda **page: client.runs.list(threads[0], **page), "run_id") == newest_first(runs),
            "runs_succeeded": [r["run_id"] for r in await client.runs.list(threads[0], status="success")]
            == newest_first(runs),
            "crons": await paged(lambda **page: client.crons.search(thread_id=threads[0], **page), "cron_id")
            == newest_first(crons),
            "crons_by_id": [c["cron_id"] for c in await client.crons.search(thread_id=threads[0], sort_by="cron_id")]
            == by_id_descending(crons),
        }
    finally:
        for cron_id in crons:
            await client.crons.delete(cron_id)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
