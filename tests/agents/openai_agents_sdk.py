"""Drive an OpenAI-compatible endpoint with the OpenAI Agents SDK (`agents`).

    openai_agents_sdk.py [--responses] [--max-retries N] [--timeout S] TASK

An `Agent` with one `@function_tool`, add(a, b), on
`OpenAIChatCompletionsModel($AGENT_MODEL or gpt-4o-mini)` over an
`AsyncOpenAI` client built from OPENAI_BASE_URL and OPENAI_API_KEY (from the
environment only; the key is never printed), run by `Runner.run_sync(...,
max_turns=6)`, tracing disabled (`set_tracing_disabled(True)`: nothing is
exported). --responses puts the agent on `OpenAIResponsesModel` (the Responses
API) instead.

Prints one JSON object per line on stdout: {"client": ...} first, then each
item the run produced {"type", "raw"} (and "output" for tool results), one
{"model_response"} per model call, then {"answer": text}; the last line is the
final output itself. Any failure (an error, max_turns exceeded): a message on
stderr and a non-zero exit.
"""

import argparse
import os
from importlib.metadata import version

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from agents.exceptions import MaxTurnsExceeded
from openai import AsyncOpenAI

from agent_common import NAME, emit, env, run
MAX_TURNS = 6






def plain(obj):
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_none=True)
    return obj


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers and return their sum.

    Args:
        a: The first integer.
        b: The second integer.
    """
    return a + b


def main() -> None:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    p.add_argument("task")
    p.add_argument("--responses", action="store_true", help="use OpenAIResponsesModel (the Responses API)")
    p.add_argument("--max-retries", type=int, default=2, help="the SDK's retries (default 2, its own)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    a = p.parse_args()

    base_url, api_key = env("OPENAI_BASE_URL"), env("OPENAI_API_KEY")

    set_tracing_disabled(True)

    client = AsyncOpenAI(base_url=base_url, api_key=api_key,
                         max_retries=a.max_retries, timeout=a.timeout)
    model_name = os.environ.get("AGENT_MODEL", "gpt-4o-mini")
    model_cls = OpenAIResponsesModel if a.responses else OpenAIChatCompletionsModel
    agent = Agent(
        name="calculator",
        instructions="You are terse. Use the add tool for any addition, then answer with the number.",
        tools=[add],
        model=model_cls(model=model_name, openai_client=client),
    )
    emit({"client": "openai-agents", "version": version("openai-agents"), "openai": version("openai"),
          "api": "responses" if a.responses else "chat.completions", "model": model_name})

    try:
        result = Runner.run_sync(agent, a.task, max_turns=MAX_TURNS)
    except MaxTurnsExceeded as e:
        raise RuntimeError(f"no final output within max_turns {MAX_TURNS}: {e}") from None
    for item in result.new_items:
        line = {"type": item.type, "raw": plain(item.raw_item)}
        if item.type == "tool_call_output_item":
            line["output"] = item.output
        emit(line)
    for r in result.raw_responses:
        emit({"model_response": {"response_id": r.response_id,
                                 "usage": {"requests": r.usage.requests,
                                           "input_tokens": r.usage.input_tokens,
                                           "output_tokens": r.usage.output_tokens}}})
    if result.final_output is None:
        raise RuntimeError("the run ended without a final output")
    answer = str(result.final_output)
    emit({"answer": answer})
    print(answer, flush=True)




if __name__ == "__main__":
    run(main, "OPENAI_API_KEY")
