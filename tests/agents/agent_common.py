"""What the client scripts share: one JSON object a line on stdout, the
environment they read their endpoint and key from, the `add` tool they
offer, and a failure as a message on stderr with the key masked and exit 1.

Imported by its neighbours (a script's own folder is on sys.path)."""

import json
import os
import sys

# The script's name, for its messages: every script is named as it calls itself.
NAME = os.path.splitext(os.path.basename(sys.argv[0]))[0]


def emit(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False), flush=True)


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"{NAME}: {name} is not set")
    return value


def run_tool(name: str, arguments) -> str:
    """The tool, computed here: add(a, b), or an error the model can read.
    `arguments` as the API gives them: a JSON text or an object."""
    if name != "add":
        return f"error: unknown tool {name!r}"
    try:
        args = json.loads(arguments or "{}") if isinstance(arguments, str) else arguments
        return str(args["a"] + args["b"])
    except Exception as e:  # a bad call is the model's to see, not a crash
        return f"error: bad arguments for add: {e}"


def run(main, key_var: str) -> None:
    """Runs `main`; any failure is one line on stderr, the key masked, exit 1."""
    try:
        main()
    except SystemExit:
        raise
    except BaseException as e:
        # anyio's task groups (the MCP SDK's) wrap the failure: the first
        # one inside is the cause.
        while isinstance(e, BaseExceptionGroup) and e.exceptions:
            e = e.exceptions[0]
        if isinstance(e, SystemExit):
            raise e
        msg = f"{type(e).__name__}: {e}"
        key = os.environ.get(key_var)
        if key:
            msg = msg.replace(key, "<key>")
        print(f"{NAME}: error: {msg}", file=sys.stderr, flush=True)
        sys.exit(1)
