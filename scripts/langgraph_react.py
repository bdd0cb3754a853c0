"""LangGraph's side of scripts/langgraph-side-by-side.sh (issue 17).

The same loop as benches/engine_step.rs's instant-model group, in LangGraph: a
ReAct graph (StateGraph over MessagesState: an `agent` node calling the chat
model, a ToolNode `tools` with one builtin `calculator` tool, the conditional
edge tools/END of `tools_condition`), with a fake chat model that answers at
once: a tool call `calculator(expression="2+2")` first, then, once it sees the
tool's result, the final answer "4". The calculator really evaluates the
arithmetic.

One invocation runs three nodes (agent, tools, agent): two model calls and one
tool call. Switchyard counts a step as one model call plus the tool call it
asks for, if any (its calculator task is two steps: the call, then the
answer), so a model+tool step here is an invocation divided by its model calls
(2), and a node step an invocation divided by its node executions (3); both
counts are checked on a first run, not assumed.

    python langgraph_react.py [SECONDS] [BATCHES]

prints a line of JSON: the version, the counts, the median of BATCHES batches
(about SECONDS in all, 5 by default) of µs per invocation, per node step and
per model+tool step.
"""

import ast
import json
import operator
import statistics
import sys
import time
from importlib.metadata import version
from typing import Any, List, Optional

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.operand))
    raise ValueError("not arithmetic")


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression, e.g. "(45 - 5) * 2 + 10"."""
    v = _eval(ast.parse(expression, mode="eval"))
    return str(int(v) if float(v).is_integer() else v)


class InstantModel(BaseChatModel):
    """Calls the calculator once, then answers: the cheapest possible model."""

    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "instant"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "InstantModel":
        return self

    def _generate(
        self,
        messages: List[BaseMessage],
        stop: Optional[List[str]] = None,
        run_manager: Optional[CallbackManagerForLLMRun] = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls += 1
        if any(isinstance(m, ToolMessage) for m in messages):
            msg = AIMessage(content="4")
        else:
            msg = AIMessage(
                content="",
                tool_calls=[{"name": "calculator", "args": {"expression": "2+2"}, "id": "call_1"}],
            )
        return ChatResult(generations=[ChatGeneration(message=msg)])


model = InstantModel()
bound = model.bind_tools([calculator])


def agent(state: MessagesState) -> dict:
    return {"messages": [bound.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([calculator]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
builder.add_edge("tools", "agent")
graph = builder.compile()


def task() -> dict:
    return {"messages": [HumanMessage(content="Calculate 2+2.")]}


def check() -> tuple:
    """One run, streamed: the nodes it executes and the model calls it makes."""
    model.calls = 0
    nodes = [name for update in graph.stream(task(), stream_mode="updates") for name in update]
    out = graph.invoke(task())
    msgs = out["messages"]
    tool_results = [m.content for m in msgs if isinstance(m, ToolMessage)]
    assert tool_results == ["4"], tool_results
    assert msgs[-1].content == "4", msgs[-1]
    assert nodes == ["agent", "tools", "agent"], nodes
    calls = model.calls // 2
    assert calls == 2, model.calls
    return len(nodes), calls


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    batches = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    nodes, model_calls = check()
    # Warm-up, and the batch size: about seconds / batches a batch.
    t0 = time.perf_counter()
    warm = 0
    while time.perf_counter() - t0 < 0.5 or warm < 20:
        graph.invoke(task())
        warm += 1
    per = (time.perf_counter() - t0) / warm
    n = max(20, int(seconds / batches / per))
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(n):
            graph.invoke(task())
        times.append((time.perf_counter() - t0) / n * 1e6)
    inv = statistics.median(times)
    print(
        json.dumps(
            {
                "langgraph": version("langgraph"),
                "langchain_core": version("langchain-core"),
                "python": sys.version.split()[0],
                "invocations": n * batches,
                "batches": batches,
                "nodes_per_invocation": nodes,
                "model_calls_per_invocation": model_calls,
                "us_per_invocation": inv,
                "us_per_node_step": inv / nodes,
                "us_per_model_tool_step": inv / model_calls,
                "batch_us_per_invocation": times,
            }
        )
    )


if __name__ == "__main__":
    main()
