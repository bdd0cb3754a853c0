"""The OpenAI Agents SDK, instrumented with OpenTelemetry, exporting its
spans over OTLP/HTTP.

    openai_agents_otel.py TASK [TASK ...]

One `Agent` with the `add` tool on `OpenAIChatCompletionsModel($AGENT_MODEL
or gpt-4o-mini)` over an `AsyncOpenAI` client built from OPENAI_BASE_URL and
OPENAI_API_KEY, run once per TASK. Its spans come from
`opentelemetry-instrumentation-openai-agents-v2` (the GenAI semantic
conventions: `invoke_agent`, `chat`, `execute_tool`), with message content
(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT), through the SDK's
batch processor and OTLP/HTTP protobuf exporter to
$OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces. The SDK's own exporter to OpenAI's
backend is removed: nothing leaves the machine.

Prints one JSON object per line: {"client": ...}, then {"answer": text} per
task; the last line is the last answer. Any failure: a message on stderr and
a non-zero exit.
"""

import argparse
import os
from importlib.metadata import version

os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_trace_processors
from openai import AsyncOpenAI
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agent_common import NAME, emit, env, run
from openai_agents_sdk import add  # the one-agent script's tool

MAX_TURNS = 6


def main() -> None:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    p.add_argument("tasks", nargs="+")
    a = p.parse_args()

    base_url, api_key = env("OPENAI_BASE_URL"), env("OPENAI_API_KEY")
    endpoint = env("OTEL_EXPORTER_OTLP_ENDPOINT").rstrip("/") + "/v1/traces"

    provider = TracerProvider(resource=Resource.create({"service.name": NAME}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    # Only the OpenTelemetry processor: not the SDK's exporter to OpenAI.
    set_trace_processors([])
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)

    client = AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=60.0)
    model_name = os.environ.get("AGENT_MODEL", "gpt-4o-mini")
    agent = Agent(
        name="calculator",
        instructions="You are terse. Use the add tool for any addition, then answer with the number.",
        tools=[add],
        model=OpenAIChatCompletionsModel(model=model_name, openai_client=client),
    )
    emit({"client": "openai-agents", "version": version("openai-agents"),
          "instrumentation": version("opentelemetry-instrumentation-openai-agents-v2"), "model": model_name})
    answer = None
    for task in a.tasks:
        result = Runner.run_sync(agent, task, max_turns=MAX_TURNS)
        answer = str(result.final_output)
        emit({"answer": answer})
    # Sends what the batch processor still holds before the process ends.
    provider.shutdown()
    print(answer, flush=True)


if __name__ == "__main__":
    run(main, "OPENAI_API_KEY")
