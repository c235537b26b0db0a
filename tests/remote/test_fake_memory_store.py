"""The fake memory-stores server answers the real SDK as the documented API does."""

from __future__ import annotations

import anthropic
import pytest

from helpers.fake_memory_store import MAX_CONTENT_BYTES, memory_store, sha256  # noqa: F401  (fixture)


@pytest.fixture
def client(memory_store):
    return anthropic.Anthropic(max_retries=0).beta.memory_stores.memories


def test_create_list_pages_and_retrieve(memory_store, client):
    sid = memory_store.store_id
    for i in range(45):
        client.create(sid, path=f"/notes/n{i:02d}.md", content=f"note {i}\n")
    seen = [m.path for m in client.list(sid, limit=10)]  # the SDK follows next_page
    assert seen == sorted(f"/notes/n{i:02d}.md" for i in range(45))
    first = client.list(sid, view="full", limit=100)
    assert len(first.data) == 20 and first.next_page  # full view caps a page at 20
    one = client.retrieve(first.data[0].id, memory_store_id=sid)
    assert one.content == "note 0\n" and one.content_sha256 == sha256("note 0\n")
    basic = client.list(sid, path_prefix="/", depth=1)
    assert [(i.type, i.path) for i in basic.data] == [("memory_prefix", "/notes/")]


def test_preconditions_conflicts_and_limits(memory_store, client):
    sid = memory_store.store_id
    m = client.create(sid, path="/a.md", content="one\n")
    with pytest.raises(anthropic.ConflictError) as stale:
        client.update(m.id, memory_store_id=sid, content="two\n",
                      precondition={"type": "content_sha256", "content_sha256": sha256("zero\n")})
    assert stale.value.body["error"]["type"] == "memory_precondition_failed_error"
    with pytest.raises(anthropic.ConflictError) as taken:
        client.create(sid, path="/a.md", content="again\n")
    assert taken.value.body["error"]["conflicting_memory_id"] == m.id
    with pytest.raises(anthropic.BadRequestError):
        client.create(sid, path="/big.md", content="x" * (MAX_CONTENT_BYTES + 1))
    with pytest.raises(anthropic.ConflictError):
        client.delete(m.id, memory_store_id=sid, expected_content_sha256=sha256("zero\n"))
    client.delete(m.id, memory_store_id=sid, expected_content_sha256=sha256("one\n"))
    ops = [v.operation for v in anthropic.Anthropic().beta.memory_stores.memory_versions.list(sid, memory_id=m.id)]
    assert ops == ["deleted", "created"]
    assert (memory_store.unconditional_updates, memory_store.unconditional_deletes,
            memory_store.creates_over_existing) == (0, 0, 1)


def test_beta_header_is_required(memory_store):
    plain = anthropic.Anthropic(max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="anthropic-beta"):
        plain.get(f"/v1/memory_stores/{memory_store.store_id}/memories", cast_to=object)
