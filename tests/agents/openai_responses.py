"""Drive an OpenAI Responses endpoint with the official `openai` SDK.

    openai_responses.py [--stream] [--tools] [--model M] [--max-retries N] [--timeout S] PROMPT

Calls `client.responses.create(input=PROMPT, store=False)` at OPENAI_BASE_URL
with OPENAI_API_KEY (both from the environment only; the key is never
printed). With --tools it offers one function tool, add(a: int, b: int), in
the Responses shape, and runs the loop statelessly: while the output has
function_call items, compute them here and ask again with the whole input
list (the prompt, the model's output items, one function_call_output per
call with its call_id), never previous_response_id; at most 4 rounds. With
--stream it asks with stream=True, joins the response.output_text.delta
events and takes the response from response.completed (the two texts must
agree).

Prints one JSON object per line on stdout: {"client": ...} first, then per
round {"round", "id", "status", "output_types", "text", "function_calls",
"usage"} (and "events", the stream's event types, with --stream), per call
{"tool_result"}, then {"answer": text}; the last line is the answer text
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
    "name": "add",
    "description": "Add two integers and return their sum.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    },
    "strict": True,
}








def ask_plain(client, kwargs):
    return client.responses.create(**kwargs), None, None


def ask_stream(client, kwargs):
    stream = client.responses.create(**kwargs, stream=True)
    deltas, events, final = [], [], None
    for event in stream:
        events.append(event.type)
        if event.type == "response.output_text.delta":
            deltas.append(event.delta)
        elif event.type == "response.completed":
            final = event.response
        elif event.type in ("response.failed", "response.incomplete"):
            raise RuntimeError(f"{event.type}: {event.response.error or event.response.incomplete_details}")
        elif event.type == "error":
            raise RuntimeError(f"error event: {getattr(event, 'message', event)}")
    if final is None:
        raise RuntimeError(f"the stream ended without response.completed (events: {events})")
    return final, "".join(deltas), events


def main() -> None:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    p.add_argument("prompt")
    p.add_argument("--stream", action="store_true", help="stream the responses (SSE)")
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
    emit({"client": "openai", "version": version("openai"), "api": "responses",
          "model": a.model, "stream": a.stream, "tools": a.tools})

    inputs = None  # the first request sends the prompt as a string
    for rnd in range(1, MAX_ROUNDS + 1):
        kwargs = {"model": a.model, "input": a.prompt if inputs is None else inputs, "store": False}
        if a.tools:
            kwargs["tools"] = [ADD_TOOL]
        resp, streamed, events = (ask_stream if a.stream else ask_plain)(client, kwargs)
        text = resp.output_text
        if streamed is not None and streamed != text:
            raise RuntimeError(f"the streamed text {streamed!r} differs from response.completed's {text!r}")
        calls = [
            {"call_id": o.call_id, "name": o.name, "arguments": o.arguments}
            for o in resp.output if o.type == "function_call"
        ]
        line = {"round": rnd, "id": resp.id, "status": resp.status,
                "output_types": [o.type for o in resp.output], "text": text,
                "function_calls": calls,
                "usage": resp.usage.model_dump(mode="json", exclude_none=True) if resp.usage else None}
        if events is not None:
            line["events"] = events
        emit(line)
        if resp.status not in (None, "completed"):
            raise RuntimeError(f"the response's status is {resp.status!r}")
        if not calls:
            emit({"answer": text})
            print(text, flush=True)
            return
        if not a.tools:
            raise RuntimeError("the output has function calls but no tools were offered")
        if inputs is None:
            inputs = [{"role": "user", "content": a.prompt}]
        # Stateless: the model's own output items go back in the next input.
        inputs += [o.model_dump(mode="json", exclude_none=True) for o in resp.output]
        for c in calls:
            if not c["call_id"]:
                raise RuntimeError(f"a function call has no call_id: {c}")
            result = run_tool(c["name"], c["arguments"])
            emit({"tool_result": {"call_id": c["call_id"], "name": c["name"], "output": result}})
            inputs.append({"type": "function_call_output", "call_id": c["call_id"], "output": result})
    raise RuntimeError(f"still calling tools after {MAX_ROUNDS} rounds")




if __name__ == "__main__":
    run(main, "OPENAI_API_KEY")
