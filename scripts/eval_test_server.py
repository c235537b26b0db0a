"""`dream eval --engine claude` against the test server (tests/helpers/fake_anthropic.py), no key, no network.

The test server's model works like a current one that finds nothing to do:
it thinks every turn, opens with a preamble ("I'll start by reviewing the
index."), and after the nudge answers "nothing to change". So the scorecard
shows what the pipeline does for any model (the deterministic finish:
pointers, orphans, long lines) and that the cases needing a model fail. It is
the "test server" column of docs/eval.md. The server holds the engine to the API's
rules (thinking bound to its prefix, four breakpoints).

    python scripts/eval_test_server.py            # the scorecard as a markdown table
    python scripts/eval_test_server.py --json
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.fake_anthropic import FakeAnthropic, Reply, text  # noqa: E402
from helpers.scripted_models import PREAMBLE  # noqa: E402

from dream.eval import evaluate  # noqa: E402


def idle_model(body: dict) -> Reply:
    """A preamble first, then nothing to change; 1,200 tokens of thinking each time."""
    if len(body["messages"]) == 1:
        return Reply([text(PREAMBLE)], thinking=1200)
    return Reply([text("I read the memory and the logs; nothing to change.")], thinking=1200)


def main(argv: list[str]) -> int:
    fake = FakeAnthropic().start()
    os.environ["ANTHROPIC_BASE_URL"] = fake.url
    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-test-server"
    try:
        fake.play(*[idle_model] * 5000)
        card = evaluate(engine="claude")
    finally:
        fake.stop()
    print(json.dumps(card.to_json(), indent=1) if "--json" in argv else card.markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
