"""Drive an OpenAI Chat Completions endpoint with the official `openai` SDK.

    openai_chat.py [--stream] [--tools] [--model M] [--max-retries N] [--timeout S] PROMPT

Calls `client.chat.completions.create` at OPENAI_BASE_URL with OPENAI_API_KEY
(both from the environment only; the key is never printed). With --tools it
offers one function tool, add(a: int, b: int), and runs the loop an agent runs:
while the reply has tool_calls, compute them here, append the assistant
message and one `tool` message per call (with its tool_call_id), and ask
again, at most 4 rounds. With --stream it asks with stream=True and
stream_options={"include_usage": True} and reassembles the content and the
tool calls' deltas (by index).

Prints one JSON object per line on stdout: {"client": ...} first, then per
round {"round", "content", "tool_calls", "finish_reason", "usage"}, per tool
call {"tool_result"}, then {"answer": text}; the last line is the answer text
itself. Any failure: a message on stderr and a non-zero exit.
"""

import argparse
import os
from importlib.metadata import version

import openai

from agent_common import NAME, emit, env, run, run_tool
MAX_ROUNDS = 4

ADD_TOOL = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two integers and return their sum.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
    },
}








def dump(obj):
    return obj.model_dump(mode="json", exclude_none=True) if obj is not None else None


def ask_plain(client, kwargs):
    resp = client.chat.completions.create(**kwargs)
    if not resp.choices:
        raise RuntimeError("the reply has no choices")
    choice = resp.choices[0]
    msg = choice.message
    calls = [
        {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
        for c in (msg.tool_calls or [])
    ]
    return msg.content, calls, choice.finish_reason, dump(resp.usage)


def ask_stream(client, kwargs):
    stream = client.chat.completions.create(
        **kwargs, stream=True, stream_options={"include_usage": True}
    )
    content, calls, finish, usage, chunks = [], {}, None, None, 0
    for chunk in stream:
        chunks += 1
        if chunk.usage is not None:
            usage = dump(chunk.usage)
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            delta = choice.delta
            if delta is not None and delta.content:
                content.append(delta.content)
            for tc in (delta.tool_calls if delta is not None else None) or []:
                call = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                if tc.id:
                    call["id"] = tc.id
                if tc.function is not None:
                    if tc.function.name:
                        call["name"] += tc.function.name
                    if tc.function.arguments:
                        call["arguments"] += tc.function.arguments
            if choice.finish_reason:
                finish = choice.finish_reason
    if chunks == 0:
        raise RuntimeError("the stream had no chunks")
    text = "".join(content) if content else None
    return text, [calls[i] for i in sorted(calls)], finish, usage


def main() -> None:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    p.add_argument("prompt")
    p.add_argument("--stream", action="store_true", help="stream the replies (SSE)")
    p.add_argument("--tools", action="store_true", help="offer the add tool and run the tool loop")
    p.add_argument("--model", default=os.environ.get("AGENT_MODEL", "gpt-4o-mini"))
    p.add_argument("--max-retries", type=int, default=2, help="the SDK's retries (default 2, its own)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    a = p.parse_args()

    client = openai.OpenAI(
        base_url=env("OPENAI_BASE_URL"),
        api_key=env("OPENAI_API_KEY"),
        max_retries=a.max_retries,
        timeout=a.timeout,
    )
    emit({"client": "openai", "version": version("openai"), "api": "chat.completions",
          "model": a.model, "stream": a.stream, "tools": a.tools})

    messages = [{"role": "user", "content": a.prompt}]
    for rnd in range(1, MAX_ROUNDS + 1):
        kwargs = {"model": a.model, "messages": messages}
        if a.tools:
            kwargs["tools"] = [ADD_TOOL]
        content, calls, finish, usage = (ask_stream if a.stream else ask_plain)(client, kwargs)
        emit({"round": rnd, "content": content, "tool_calls": calls,
              "finish_reason": finish, "usage": usage})
        if not calls:
            answer = content or ""
            emit({"answer": answer})
            print(answer, flush=True)
            return
        if not a.tools:
            raise RuntimeError("the reply has tool_calls but no tools were offered")
        for c in calls:
            if not c["id"]:
                raise RuntimeError(f"a tool call has no id: {c}")
        messages.append({
            "role": "assistant",
            "content": content,
            "tool_calls": [
                {"id": c["id"], "type": "function",
                 "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in calls
            ],
        })
        for c in calls:
            result = run_tool(c["name"], c["arguments"])
            emit({"tool_result": {"tool_call_id": c["id"], "name": c["name"], "content": result}})
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": result})
    raise RuntimeError(f"still calling tools after {MAX_ROUNDS} rounds")




if __name__ == "__main__":
    run(main, "OPENAI_API_KEY")
