"""Activity logs derived from agents' own session transcripts.

Claude Code and Codex write JSONL transcripts, not activity logs. This
package reads both formats (`claude_code`, `codex`) and claude-mem's
database (`claude_mem`, read only), writes one log per
session into a store (`importer`, which renders logs with `render`), finds stores on a machine
(`discover`) and searches raw transcripts narrowly (`search`).

"""
