"""A plain script that fans out: N conversations at once over the official
`openai` SDK's AsyncOpenAI (asyncio.gather), each offering two functions of
its own, word_count(text) and reverse(text), computed here.

    openai_fanout.py [--n N] [--twins] [--timeout S] PROMPT

--twins offers word_count and its twin word_count_mirror (the same
function, the same description) in place of reverse.

Each conversation runs the loop an agent runs: while the reply has
tool_calls, compute them, append the assistant message and one `tool`
message per call (with its tool_call_id), and ask again, at most 4 rounds.

Prints one JSON object per line on stdout: {"client": ...} first, then per
conversation {"conversation", "tool_results", "answer"}; the last line is
the answers joined by " | ". Any failure: a message on stderr and exit 1.
"""

import argparse
import asyncio
import json
from importlib.metadata import version

import openai

from agent_common import emit, env, run

MAX_ROUNDS = 4


def function(name, description):
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        },
    }


TOOLS = [
    function("word_count", "Count the words in a text."),
    function("reverse", "Reverse a text, character by character."),
]
TWINS = [
    function("word_count", "Count the words in a text."),
    function("word_count_mirror", "Count the words in a text."),
]


def own_tool(name: str, arguments) -> str:
    try:
        args = json.loads(arguments or "{}") if isinstance(arguments, str) else arguments
        text = str(args.get("text", ""))
    except Exception as e:  # a bad call is the model's to see
        return f"error: bad arguments for {name}: {e}"
    if name in ("word_count", "word_count_mirror"):
        return str(len(text.split()))
    if name == "reverse":
        return text[::-1]
    return f"error: unknown tool {name!r}"


async def conversation(client, i: int, prompt: str, tools) -> dict:
    messages = [{"role": "user", "content": f"{prompt} (conversation {i})"}]
    results = []
    for _ in range(MAX_ROUNDS):
        resp = await client.chat.completions.create(model="agent", messages=messages, tools=tools)
        msg = resp.choices[0].message
        if not msg.tool_calls:
            return {"conversation": i, "tool_results": results, "answer": msg.content or ""}
        messages.append(msg.model_dump(mode="json", exclude_none=True))
        for call in msg.tool_calls:
            out = own_tool(call.function.name, call.function.arguments)
            results.append({"tool": call.function.name, "result": out})
            messages.append({"role": "tool", "tool_call_id": call.id, "content": out})
    return {"conversation": i, "tool_results": results, "answer": ""}


async def fan_out(n: int, prompt: str, tools, timeout: float) -> None:
    client = openai.AsyncOpenAI(
        base_url=env("OPENAI_BASE_URL"), api_key=env("OPENAI_API_KEY"), max_retries=0, timeout=timeout
    )
    emit({"client": "openai-async", "version": version("openai")})
    done = await asyncio.gather(*(conversation(client, i, prompt, tools) for i in range(n)))
    for d in done:
        emit(d)
    print(" | ".join(d["answer"] for d in done), flush=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=2)
    p.add_argument("--twins", action="store_true", help="word_count and word_count_mirror")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds a model call may take")
    p.add_argument("prompt")
    a = p.parse_args()
    asyncio.run(fan_out(a.n, a.prompt, TWINS if a.twins else TOOLS, a.timeout))


if __name__ == "__main__":
    run(main, "OPENAI_API_KEY")
