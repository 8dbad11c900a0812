"""The peer agent: LangGraph's prebuilt tool-calling agent with one bash tool and Claude.

`ANTHROPIC_BASE_URL` points `ChatAnthropic` at the benchmark's fake Anthropic server, as Keel's
worker is pointed at it; the key is the fake's.
"""

import asyncio
import os

from langchain_anthropic import ChatAnthropic
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent


@tool
async def bash(command: str) -> str:
    """Run a bash command and return what it printed."""
    process = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        command,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    return output.decode("utf-8", errors="replace")


model = ChatAnthropic(
    model_name="claude-sonnet-4-5",
    base_url=os.environ["ANTHROPIC_BASE_URL"],
    api_key=os.environ["ANTHROPIC_API_KEY"],
    max_tokens=1024,
    max_retries=0,
    timeout=None,
    stop=None,
)

graph = create_react_agent(model, [bash])
