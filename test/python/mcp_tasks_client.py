"""An MCP client that speaks the 2026-07-28 Tasks extension (`io.modelcontextprotocol/tasks`)
through the Python MCP SDK's own extension hooks (`ClientExtension`, `ResultClaim`): a
`tools/call` answered with `resultType: "task"` is resolved by polling `tasks/get` until the task
ends, riding out a server that is away for a while (an API restarting on the same address): the
revision is stateless, so a poll that finds no server is asked again over a new connection (the
SDK's transport ends its session when a connection fails).

Usage: python mcp_tasks_client.py <url of /mcp> <message>
Prints one JSON line when the task is created ({"taskId": …}), then one with the result
({"version": …, "text": …, "polls": …, "failedPolls": …}).
"""

import asyncio
import json
import sys
import time
from typing import Any, ClassVar, Literal

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.streamable_http import streamable_http_client

TASKS = "io.modelcontextprotocol/tasks"
DEADLINE_S = 90


class CreatedTask(types.Result):
    result_type: Literal["task"] = "task"
    task_id: str
    status: str


class GetTaskParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[GetTaskParams, Literal["tasks/get"]]):
    # The extension's requests name their task in the Mcp-Name header.
    name_param: ClassVar[str] = "taskId"
    method: Literal["tasks/get"] = "tasks/get"
    params: GetTaskParams


class DetailedTask(types.Result):
    model_config = {"extra": "allow"}
    task_id: str
    status: str
    result: dict[str, Any] | None = None


stats = {"polls": 0, "failedPolls": 0}


def say(line: dict[str, Any]) -> None:
    print(json.dumps(line), flush=True)


def connect(url: str) -> Client:
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(timeout=30)), extensions=[Tasks()])


async def get_task(task_id: str) -> DetailedTask:
    async with connect(sys.argv[1]) as client:
        return await client.session.send_request(GetTask(params=GetTaskParams(task_id=task_id)), DetailedTask)


async def follow(created: CreatedTask, _ctx: ClaimContext) -> types.CallToolResult:
    say({"taskId": created.task_id})
    ends = time.monotonic() + DEADLINE_S
    while time.monotonic() < ends:
        stats["polls"] += 1
        try:
            task = await get_task(created.task_id)
        except Exception:  # the server away (restarting): ask again
            stats["failedPolls"] += 1
            await asyncio.sleep(0.3)
            continue
        if task.status == "completed":
            return types.CallToolResult.model_validate(task.result)
        if task.status in ("failed", "cancelled"):
            raise RuntimeError(f"task {created.task_id} {task.status}")
        await asyncio.sleep(0.3)
    raise TimeoutError(f"task {created.task_id} did not end in {DEADLINE_S} s")


class Tasks(ClientExtension):
    identifier = TASKS

    def claims(self):
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=follow)]


async def main(url: str, message: str) -> None:
    async with connect(url) as client:
        result = await client.call_tool("agent", {"message": message})
        say(
            {
                "version": client.protocol_version,
                "text": result.content[0].text,
                **stats,
            }
        )


asyncio.run(main(sys.argv[1], sys.argv[2]))
