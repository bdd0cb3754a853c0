"""Two conversations at once over the official `anthropic` SDK's
AsyncAnthropic (asyncio.gather), each one Messages call.

    anthropic_fanout.py [--timeout S] PROMPT [PROMPT...]

Each prompt is sent as `client.messages.create(max_tokens=256,
system="You are terse.", ...)` at ANTHROPIC_BASE_URL with ANTHROPIC_API_KEY
(from the environment only; the key is never printed), all at once.

Prints one JSON object per line: {"client": ...}, then {"prompt", "text"}
per call, then {"answer": text}; the last line is the texts joined by
" | ". Any failure: a message on stderr and a non-zero exit.
"""

import argparse
import asyncio
import os
from importlib.metadata import version

import anthropic

from agent_common import NAME, emit, env, run


async def ask_all(prompts: list[str], timeout: float) -> list[str]:
    client = anthropic.AsyncAnthropic(base_url=env("ANTHROPIC_BASE_URL"), api_key=env("ANTHROPIC_API_KEY"),
                                      max_retries=0, timeout=timeout)
    model = os.environ.get("AGENT_MODEL", "claude-haiku-4-5")

    async def ask(prompt: str) -> str:
        msg = await client.messages.create(model=model, max_tokens=256, system="You are terse.",
                                           messages=[{"role": "user", "content": prompt}])
        return "".join(b.text for b in msg.content if b.type == "text")

    return await asyncio.gather(*(ask(p) for p in prompts))


def main() -> None:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    p.add_argument("--timeout", type=float, default=60.0, help="seconds a model call may take")
    p.add_argument("prompts", nargs="+")
    a = p.parse_args()
    emit({"client": "anthropic", "version": version("anthropic"), "calls": len(a.prompts)})
    texts = asyncio.run(ask_all(a.prompts, a.timeout))
    for prompt, text in zip(a.prompts, texts):
        emit({"prompt": prompt, "text": text})
    answer = " | ".join(texts)
    emit({"answer": answer})
    print(answer, flush=True)


if __name__ == "__main__":
    run(main, "ANTHROPIC_API_KEY")
