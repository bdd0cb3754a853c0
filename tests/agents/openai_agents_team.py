"""A team of agents on the OpenAI Agents SDK (`agents`): a `calculator`
agent with one `@function_tool`, add(a, b), that another agent uses.

    openai_agents_team.py (--as-tool | --handoff) [--agent-header] [--timeout S] TASK

--as-tool: an `orchestrator` offers the calculator as a tool of its own
(`calculator.as_tool(...)`): the SDK runs the calculator's conversation
while the orchestrator's tool call waits, and hands its answer back; the
orchestrator may ask it several things in one reply (`parallel_tool_calls`),
and the SDK runs those conversations at once.
--handoff: a `triage` agent hands the conversation off to the calculator
(`handoffs=[calculator]`, the SDK's `transfer_to_calculator`).
--agent-header: each agent's client sends `X-Switchyard-Agent: NAME`.

Both agents are on `OpenAIChatCompletionsModel($AGENT_MODEL or gpt-4o-mini)`
over `AsyncOpenAI` clients built from OPENAI_BASE_URL and OPENAI_API_KEY
(the key is never printed), tracing disabled. Prints one JSON object per
line: {"client": ...}, then each item the run produced {"type", "agent"},
then {"answer": text}; the last line is the final output. Any failure: a
message on stderr and a non-zero exit.
"""

import argparse
import os
from importlib.metadata import version

from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from openai import AsyncOpenAI

from agent_common import NAME, emit, env, run
from openai_agents_sdk import add  # the calculator's tool, as the one-agent script offers it

MAX_TURNS = 8


def model(name: str, header: bool, timeout: float):
    headers = {"X-Switchyard-Agent": name} if header else None
    client = AsyncOpenAI(base_url=env("OPENAI_BASE_URL"), api_key=env("OPENAI_API_KEY"),
                         max_retries=0, timeout=timeout, default_headers=headers)
    return OpenAIChatCompletionsModel(model=os.environ.get("AGENT_MODEL", "gpt-4o-mini"), openai_client=client)


def main() -> None:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    p.add_argument("task")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--as-tool", action="store_true", help="the orchestrator uses the calculator as a tool")
    how.add_argument("--handoff", action="store_true", help="triage hands off to the calculator")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds a model call may take")
    p.add_argument("--agent-header", action="store_true", help="send X-Switchyard-Agent: NAME")
    a = p.parse_args()
    set_tracing_disabled(True)

    calculator = Agent(
        name="calculator",
        handoff_description="The calculator: it adds numbers.",
        instructions="You are terse. Use the add tool for any addition, then answer with the number.",
        tools=[add],
        model=model("calculator", a.agent_header, a.timeout),
    )
    if a.as_tool:
        lead = Agent(
            name="orchestrator",
            instructions="Ask the calculator tool for any sum; answer with what it says.",
            tools=[calculator.as_tool(tool_name="ask_calculator",
                                      tool_description="The calculator: give it the sum to work out as input.")],
            model=model("orchestrator", a.agent_header, a.timeout),
            model_settings=ModelSettings(parallel_tool_calls=True),
        )
    else:
        lead = Agent(
            name="triage",
            instructions="Hand any sum off to the calculator.",
            handoffs=[calculator],
            model=model("triage", a.agent_header, a.timeout),
        )
    emit({"client": "openai-agents", "version": version("openai-agents"), "lead": lead.name,
          "how": "as_tool" if a.as_tool else "handoff"})
    result = Runner.run_sync(lead, a.task, max_turns=MAX_TURNS)
    for item in result.new_items:
        emit({"type": item.type, "agent": item.agent.name})
    if result.final_output is None:
        raise RuntimeError("the run ended without a final output")
    answer = str(result.final_output)
    emit({"answer": answer, "last_agent": result.last_agent.name})
    print(answer, flush=True)


if __name__ == "__main__":
    run(main, "OPENAI_API_KEY")
