"""List an OpenAI-compatible endpoint's models with the official `openai` SDK.

    openai_models.py [--max-retries N] [--timeout S]

Calls `client.models.list()` (GET {OPENAI_BASE_URL}/models) with
OPENAI_API_KEY (both from the environment only; the key is never printed).

Prints one JSON object per line on stdout: {"client": ...} first, then one
{"model": {...}} per model, then {"answer": ids}; the last line is the model
ids, space-separated. No models, or any failure: a message on stderr and a
non-zero exit.
"""

import argparse
from importlib.metadata import version

import openai

from agent_common import NAME, emit, env, run






def main() -> None:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    p.add_argument("--max-retries", type=int, default=2, help="the SDK's retries (default 2, its own)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    a = p.parse_args()

    client = openai.OpenAI(
        base_url=env("OPENAI_BASE_URL"),
        api_key=env("OPENAI_API_KEY"),
        max_retries=a.max_retries,
        timeout=a.timeout,
    )
    emit({"client": "openai", "version": version("openai"), "api": "models"})
    ids = []
    for m in client.models.list():
        emit({"model": m.model_dump(mode="json", exclude_none=True)})
        ids.append(m.id)
    if not ids:
        raise RuntimeError("the endpoint lists no models")
    answer = " ".join(ids)
    emit({"answer": answer})
    print(answer, flush=True)




if __name__ == "__main__":
    run(main, "OPENAI_API_KEY")
