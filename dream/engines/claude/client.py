"""The SDK client as the Claude engine uses it: timeouts, retries, and what its failures are called.

Replies are streamed, so the read timeout is the longest silence between two
events, not the length of a reply: a long reply from a slow model is never
cut off, retried and billed again. The SDK retries a request that fails
before its reply starts (429 with its `retry-after`, 5xx, 529, a refused
connection) `MAX_RETRIES` times, but never waits past the run's wall clock.
A stream that breaks half way is not the SDK's to retry: the engine asks for
the turn again (`UnreadableReply`, `MID_STREAM`).
"""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2

from dream.engines.claude.budget import Budget
from dream.errors import BudgetExceeded

MAX_RETRIES = 4
MAX_REQUEST_SECONDS = 600.0
MIN_REQUEST_SECONDS = 60.0
CONNECT_SECONDS = 10.0


class Client(anthropic.Anthropic):
    """The SDK's client, except that a retry wait (a 429's `retry-after`) never outlasts the run's wall clock."""

    budget: Budget | None = None

    def _calculate_retry_timeout(self, remaining_retries: int, options: Any, response_headers: Any = None) -> float:
        wait = super()._calculate_retry_timeout(remaining_retries, options, response_headers)
        left = self.budget.remaining_seconds() if self.budget is not None else wait
        if wait > left:
            raise BudgetExceeded("timeout", f"the Anthropic API asked to wait {wait:.0f} s before a retry, more than "
                                            f"the {max(left, 0):.0f} s left of timeout_seconds")
        return wait


def make_client(timeout_seconds: float) -> Client:
    """A client that reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL itself, as the SDK does."""
    timeout = anthropic.Timeout(request_timeout(timeout_seconds), connect=CONNECT_SECONDS)
    return Client(max_retries=MAX_RETRIES, timeout=timeout)


class UnreadableReply(Exception):
    """A streamed reply that broke off or could not be parsed; the turn is asked for again."""


# A stream that breaks or goes silent after it started: the SDK does not retry these.
MID_STREAM = (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.ReadTimeout, UnreadableReply)


def request_timeout(budget_seconds: float) -> float:
    """The longest silence allowed in one request, so that a hanging API cannot hold a run far past its budget.

    A request may be tried 1 + MAX_RETRIES times, so each try gets a share of
    the budget, but at least a minute (a slow first token takes that) and never
    more than the budget itself or the SDK's ten-minute ceiling.
    """
    share = budget_seconds / (MAX_RETRIES + 1)
    return min(budget_seconds, MAX_REQUEST_SECONDS, max(MIN_REQUEST_SECONDS, share))


def describe_status(err: anthropic.APIStatusError, client: anthropic.Anthropic) -> str:
    body = err.body if isinstance(err.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else {}
    detail = error.get("message") if error else None
    message = detail or (err.message if isinstance(err.message, str) else str(err))
    if err.status_code == 200:  # an error event inside a streamed reply
        kind = error.get("type", "error") if error else "error"
        return f"the Anthropic API broke off its reply {MAX_RETRIES + 1} times with {kind}: {message}"[:500]
    retried = err.status_code in (408, 409, 429) or err.status_code >= 500
    after = f" after {client.max_retries} retries" if retried else ""
    return f"the Anthropic API answered {err.status_code}{after}: {message}"[:500]


def describe_connection(err: Exception, client: anthropic.Anthropic) -> str:
    if isinstance(err, UnreadableReply):
        return f"the replies of the Anthropic API at {client.base_url} could not be read after {MAX_RETRIES} tries: {err}"
    kind = "timed out" if isinstance(err, anthropic.APITimeoutError) else "failed"
    return f"the connection to the Anthropic API at {client.base_url} {kind} after {client.max_retries} retries"
