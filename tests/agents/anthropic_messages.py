"""Drive an Anthropic Messages endpoint with the official `anthropic` SDK.

    anthropic_messages.py [--stream] [--tools] [--model M] [--max-retries N] [--timeout S] PROMPT

Calls `anthropic.Anthropic().messages.create(max_tokens=256, system="You are
terse.", ...)` at ANTHROPIC_BASE_URL with ANTHROPIC_API_KEY (both from the
environment only, passed explicitly so no profile or other credential is
consulted; the key is never printed). With --tools it offers one tool,
add(a: int, b: int), with an input_schema, and runs the loop: while the reply
stops for tool_use, compute the tool_use blocks here, append the assistant
turn and a user turn of tool_result blocks (with their tool_use_id), and ask
again, at most 4 rounds. With --stream it asks through the
`client.messages.stream(...)` context manager, joins the text deltas and takes
`get_final_message()` (the two texts must agree).

Prints one JSON object per line on stdout: {"client": ...} first, then per
round {"round", "id", "stop_reason", "content", "text", "usage"} (and
"events", the stream's raw event types, with --stream), per tool call
{"tool_result"}, then {"answer": text}; the last line is the answer text
itself. Any failure: a message on stderr and a non-zero exit.
"""

import argparse
import os
from importlib.metadata import version

import anthropic

from agent_common import NAME, emit, env, run, run_tool
MAX_ROUNDS = 4
RAW_EVENTS = {"message_start", "content_block_start", "content_block_delta",
              "content_block_stop", "message_delta", "message_stop"}

ADD_TOOL = {
    "name": "add",
    "description": "Add two integers and return their sum.",
    "input_schema": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}








def ask_plain(client, kwargs):
    return client.messages.create(**kwargs), None, None


def ask_stream(client, kwargs):
    deltas, events = [], []
    with client.messages.stream(**kwargs) as stream:
        for event in stream:
            if event.type in RAW_EVENTS:
                events.append(event.type)
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                deltas.append(event.delta.text)
        final = stream.get_final_message()
    if not events or events[0] != "message_start" or events[-1] != "message_stop":
        raise RuntimeError(f"the stream is not message_start ... message_stop: {events}")
    return final, "".join(deltas), events


def block(b) -> dict:
    """A reply's content block as the next request sends it back."""
    if b.type == "text":
        return {"type": "text", "text": b.text}
    if b.type == "tool_use":
        return {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input}
    return b.model_dump(mode="json", exclude_none=True)


def main() -> None:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    p.add_argument("prompt")
    p.add_argument("--stream", action="store_true", help="stream the replies (SSE)")
    p.add_argument("--tools", action="store_true", help="offer the add tool and run the tool loop")
    p.add_argument("--model", default=os.environ.get("AGENT_MODEL", "claude-haiku-4-5"))
    p.add_argument("--max-retries", type=int, default=2, help="the SDK's retries (default 2, its own)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    a = p.parse_args()

    client = anthropic.Anthropic(
        base_url=env("ANTHROPIC_BASE_URL"),
        api_key=env("ANTHROPIC_API_KEY"),
        max_retries=a.max_retries,
        timeout=a.timeout,
    )
    emit({"client": "anthropic", "version": version("anthropic"), "api": "messages",
          "model": a.model, "stream": a.stream, "tools": a.tools})

    messages = [{"role": "user", "content": a.prompt}]
    for rnd in range(1, MAX_ROUNDS + 1):
        kwargs = {"model": a.model, "max_tokens": 256, "system": "You are terse.", "messages": messages}
        if a.tools:
            kwargs["tools"] = [ADD_TOOL]
        msg, streamed, events = (ask_stream if a.stream else ask_plain)(client, kwargs)
        text = "".join(b.text for b in msg.content if b.type == "text")
        if streamed is not None and streamed != text:
            raise RuntimeError(f"the streamed text {streamed!r} differs from the final message's {text!r}")
        uses = [b for b in msg.content if b.type == "tool_use"]
        line = {"round": rnd, "id": msg.id, "stop_reason": msg.stop_reason,
                "content": [block(b) for b in msg.content], "text": text,
                "usage": msg.usage.model_dump(mode="json", exclude_none=True) if msg.usage else None}
        if events is not None:
            line["events"] = events
        emit(line)
        if not uses:
            emit({"answer": text})
            print(text, flush=True)
            return
        if not a.tools:
            raise RuntimeError("the reply has tool_use blocks but no tools were offered")
        if msg.stop_reason != "tool_use":
            raise RuntimeError(f"the reply has tool_use blocks but stop_reason {msg.stop_reason!r}")
        messages.append({"role": "assistant", "content": [block(b) for b in msg.content]})
        results = []
        for u in uses:
            result = run_tool(u.name, u.input)
            emit({"tool_result": {"tool_use_id": u.id, "name": u.name, "content": result}})
            results.append({"type": "tool_result", "tool_use_id": u.id, "content": result})
        messages.append({"role": "user", "content": results})
    raise RuntimeError(f"still calling tools after {MAX_ROUNDS} rounds")




if __name__ == "__main__":
    run(main, "ANTHROPIC_API_KEY")
