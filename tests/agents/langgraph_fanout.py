"""A LangGraph graph that fans out with `Send`: one branch per question,
each asking its own model call through langchain-openai's ChatOpenAI, the
branches run at once, then joined.

    langgraph_fanout.py [--timeout S] QUESTION [QUESTION...]

A `StateGraph` whose start routes to a `solve` node once per question
(`Send("solve", {"question": q})`); each `solve` calls
`ChatOpenAI($AGENT_MODEL or gpt-4o-mini)` at OPENAI_BASE_URL with
OPENAI_API_KEY (the key is never printed) with that question alone; the
answers are gathered by an `operator.add` reducer. Run with `ainvoke`.

Prints one JSON object per line: {"client": ...}, then {"question",
"answer"} per branch, then {"answer": text}; the last line is the answers
joined by " | ". Any failure: a message on stderr and a non-zero exit.
"""

import argparse
import asyncio
import operator
import os
from importlib.metadata import version
from typing import Annotated, TypedDict

os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"

from langchain_core.messages import HumanMessage  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.types import Send  # noqa: E402

from agent_common import NAME, emit, env, run  # noqa: E402


class State(TypedDict):
    questions: list[str]
    answers: Annotated[list[dict], operator.add]


class Branch(TypedDict):
    question: str


def main() -> None:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    p.add_argument("--timeout", type=float, default=60.0, help="seconds a model call may take")
    p.add_argument("questions", nargs="+")
    a = p.parse_args()
    model = ChatOpenAI(model=os.environ.get("AGENT_MODEL", "gpt-4o-mini"), temperature=0,
                       base_url=env("OPENAI_BASE_URL"), api_key=env("OPENAI_API_KEY"), max_retries=0, timeout=a.timeout)

    async def solve(b: Branch) -> dict:
        reply = await model.ainvoke([HumanMessage(b["question"])])
        return {"answers": [{"question": b["question"], "answer": str(reply.text)}]}

    def fan_out(state: State):
        return [Send("solve", {"question": q}) for q in state["questions"]]

    g = StateGraph(State)
    g.add_node("solve", solve)
    g.add_conditional_edges(START, fan_out, ["solve"])
    g.add_edge("solve", END)
    emit({"client": "langgraph", "version": version("langgraph"), "branches": len(a.questions)})
    state = asyncio.run(g.compile().ainvoke({"questions": a.questions, "answers": []}))
    for line in state["answers"]:
        emit(line)
    if len(state["answers"]) != len(a.questions):
        raise RuntimeError(f"{len(a.questions)} branches but {len(state['answers'])} answers")
    answer = " | ".join(x["answer"] for x in state["answers"])
    emit({"answer": answer})
    print(answer, flush=True)


if __name__ == "__main__":
    run(main, "OPENAI_API_KEY")
