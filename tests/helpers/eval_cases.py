"""One labelled eval case for the harness tests: a store with a Jenkins memory, a log asking to forget it."""

from __future__ import annotations

_CASE = """
category: {category}
cases:
  - id: {case_id}
    store:
      MEMORY.md: |
        - [Jenkins](reference_jenkins.md) — old CI
        - [Tests]({tests_link}) — run make test
      reference_jenkins.md: |
        ---
        name: Jenkins
        description: old CI
        type: reference
        ---
        Builds ran on jenkins.internal.
      feedback_tests.md: |
        ---
        name: Tests
        description: run make test
        type: feedback
        ---
        Run make test.
    logs:
      - date: 2026-11-20
        text: |
          > forget about Jenkins
    expect:
{expect}"""


def jenkins_case(category: str, checks: list[str], case_id: str | None = None,
                 tests_link: str = "feedback_tests.md") -> str:
    """The case as YAML; `tests_link` may point where the file is not, for the pointer checks."""
    expect = "".join(f"      - {check}\n" for check in checks)
    return _CASE.format(category=category, case_id=case_id or f"{category}-case", tests_link=tests_link,
                        expect=expect)
