"""The pure part of tasks (mcplite/protocol/tasks.py): the lifecycle table, the changes, the modes, the wire.

No threads, no clocks: every change takes ``now``.
"""

from typing import Any, Dict, Optional

import pytest

from mcplite.errors import INVALID_PARAMS, METHOD_NOT_FOUND, RPCError
from mcplite.protocol import tasks as t

NOW = 1_790_000_000.0
QUESTION = {"method": "elicitation/create", "params": {"message": "Sure?", "requestedSchema": {"type": "object"}}}


def fresh(form: str = t.EXTENSION, ttl_ms: Optional[int] = 60_000) -> t.TaskRecord:
    return t.new_task("abc", form, now=NOW, ttl_ms=ttl_ms, poll_interval_ms=500, owner=None, tool="slow")


# ---- the lifecycle table --------------------------------------------------------------------------------------
@pytest.mark.parametrize("start", t.STATUSES)
@pytest.mark.parametrize("end", t.STATUSES)
def test_every_move_is_allowed_or_refused_by_the_table(start: str, end: str) -> None:
    record = fresh().replace(status=start)
    if end == start or end in t.TRANSITIONS[start]:
        assert t.move(record, end, now=NOW + 1).status == end
    else:
        with pytest.raises(t.TaskStateError):
            t.move(record, end, now=NOW + 1)


def test_terminal_statuses_lead_nowhere() -> None:
    assert all(not t.TRANSITIONS[status] for status in t.TERMINAL)
    assert set(t.TRANSITIONS) == set(t.STATUSES)


def test_a_new_task_is_working_and_dated() -> None:
    record = fresh()
    assert (record.status, record.created_at, record.updated_at) == (t.WORKING, NOW, NOW)
    with pytest.raises(ValueError):
        t.new_task("x", "other", now=NOW, ttl_ms=None, poll_interval_ms=1)


def test_changes_return_copies() -> None:
    record = fresh()
    asked = t.ask(record, {"q": QUESTION}, now=NOW + 1)
    assert record.status == t.WORKING and record.input_requests == {}
    assert asked.status == t.INPUT_REQUIRED and asked.updated_at == NOW + 1


# ---- questions and answers ----------------------------------------------------------------------------------
def test_a_partial_answer_keeps_the_task_waiting_for_the_rest() -> None:
    record = t.ask(fresh(), {"a": QUESTION, "b": QUESTION}, now=NOW)
    record = t.answer(record, {"a": {"action": "accept"}, "unknown": {"x": 1}}, now=NOW + 1)
    assert record.status == t.INPUT_REQUIRED
    assert list(record.input_requests) == ["b"] and record.input_responses == {"a": {"action": "accept"}}
    record = t.answer(record, {"b": {"action": "decline"}}, now=NOW + 2)
    assert record.status == t.WORKING and record.input_requests == {}
    assert set(record.input_responses) == {"a", "b"}


def test_answers_to_questions_not_asked_change_nothing() -> None:
    record = t.ask(fresh(), {"a": QUESTION}, now=NOW)
    assert t.answer(record, {"zzz": {}}, now=NOW + 5) is record


def test_a_terminal_task_cannot_ask_and_ignores_answers() -> None:
    done = t.settle(fresh(), t.COMPLETED, now=NOW, result={"content": []})
    with pytest.raises(t.TaskStateError):
        t.ask(done, {"a": QUESTION}, now=NOW)
    assert t.answer(done, {"a": {}}, now=NOW) is done


# ---- endings ----------------------------------------------------------------------------------------------------
def test_the_first_ending_wins() -> None:
    cancelled = t.cancel(fresh(), now=NOW + 1)
    assert cancelled.status == t.CANCELLED and cancelled.status_message
    assert t.settle(cancelled, t.COMPLETED, now=NOW + 2, result={"content": []}) is cancelled
    assert t.cancel(cancelled, now=NOW + 3) is cancelled  # idempotent


def test_an_ending_needs_its_payload_and_clears_the_questions() -> None:
    with pytest.raises(t.TaskStateError):
        t.settle(fresh(), t.COMPLETED, now=NOW)
    with pytest.raises(t.TaskStateError):
        t.settle(fresh(), t.FAILED, now=NOW)
    tool_error = t.settle(fresh(t.CORE), t.FAILED, now=NOW, result={"content": [], "isError": True})
    assert tool_error.result == {"content": [], "isError": True} and tool_error.error is None
    with pytest.raises(t.TaskStateError):
        t.settle(fresh(), t.WORKING, now=NOW)
    asked = t.ask(fresh(), {"a": QUESTION}, now=NOW)
    failed = t.settle(asked, t.FAILED, now=NOW + 1, error={"code": -32603, "message": "boom"})
    assert failed.input_requests == {} and failed.result is None and failed.error["code"] == -32603


def test_expiry_counts_from_creation() -> None:
    record = fresh(ttl_ms=1000)
    assert not t.expired(record, NOW + 0.999)
    assert t.expired(record, NOW + 1.0)
    assert not t.expired(fresh(ttl_ms=None), NOW + 10 ** 9)


def test_a_record_round_trips_through_json_data() -> None:
    record = t.ask(fresh(), {"a": QUESTION}, now=NOW).replace(progress={"progress": 1}, owner="me")
    assert t.TaskRecord.from_dict(record.to_dict()) == record


# ---- how a call is served -------------------------------------------------------------------------------------
@pytest.mark.parametrize("support, extension, expected", [
    (t.FORBIDDEN, True, t.SYNC), (t.FORBIDDEN, False, t.SYNC),
    (t.OPTIONAL, True, t.EXTENSION), (t.OPTIONAL, False, t.SYNC),
    (t.REQUIRED, True, t.EXTENSION),
])
def test_envelope_modes(support: str, extension: bool, expected: str) -> None:
    # A v1 `task` param means nothing on 2026-07-28.
    for task_param in (None, {"ttl": 1000}):
        assert t.execution_mode(support, enveloped=True, extension=extension, core_tasks=False,
                                task_param=task_param) == expected


def test_a_required_task_tool_without_the_extension_is_missing_a_capability() -> None:
    with pytest.raises(RPCError) as caught:
        t.execution_mode(t.REQUIRED, enveloped=True, extension=False, core_tasks=False, task_param=None)
    assert caught.value.code == -32021
    assert caught.value.data == {"requiredCapabilities": {"extensions": {t.EXTENSION_ID: {}}}}


@pytest.mark.parametrize("support, task_param, expected", [
    (t.FORBIDDEN, None, t.SYNC), (t.OPTIONAL, None, t.SYNC), (t.OPTIONAL, {}, t.CORE),
    (t.REQUIRED, {"ttl": 5}, t.CORE),
    (t.FORBIDDEN, {}, METHOD_NOT_FOUND), (t.REQUIRED, None, METHOD_NOT_FOUND), (t.OPTIONAL, 3, INVALID_PARAMS),
])
def test_core_modes(support: str, task_param: Any, expected: Any) -> None:
    if isinstance(expected, int):
        with pytest.raises(RPCError) as caught:
            t.execution_mode(support, enveloped=False, extension=False, core_tasks=True, task_param=task_param)
        assert caught.value.code == expected
    else:
        assert t.execution_mode(support, enveloped=False, extension=False, core_tasks=True,
                                task_param=task_param) == expected


def test_revisions_without_tasks_run_every_tool_directly() -> None:
    for support in t.TASK_SUPPORT:
        assert t.execution_mode(support, enveloped=False, extension=False, core_tasks=False, task_param={}) == t.SYNC


def test_extension_declared() -> None:
    assert t.extension_declared({"extensions": {t.EXTENSION_ID: {}}})
    assert not t.extension_declared({"extensions": {t.EXTENSION_ID: True}})
    assert not t.extension_declared({"extensions": []})
    assert not t.extension_declared(None)
    with pytest.raises(ValueError):
        t.check_support("sometimes")


# ---- wire shapes ------------------------------------------------------------------------------------------------
def test_create_task_result_is_flat_and_carries_only_task_fields() -> None:
    shaped = t.create_task_result(fresh())
    assert shaped == {"resultType": "task", "taskId": "abc", "status": "working",
                      "createdAt": t.iso8601(NOW), "lastUpdatedAt": t.iso8601(NOW), "ttlMs": 60_000,
                      "pollIntervalMs": 500}
    assert t.create_task_result(fresh(ttl_ms=None))["ttlMs"] is None


def test_detailed_task_inlines_by_status() -> None:
    asked = t.ask(fresh(), {"a": QUESTION}, now=NOW)
    assert t.detailed_task(asked)["inputRequests"] == {"a": QUESTION}
    done = t.settle(asked, t.COMPLETED, now=NOW, result={"content": [{"type": "text", "text": "ok"}]})
    shaped: Dict[str, Any] = t.detailed_task(done)
    assert shaped["result"]["content"][0]["text"] == "ok" and "inputRequests" not in shaped and "error" not in shaped
    failed = t.settle(fresh(), t.FAILED, now=NOW, error={"code": 1, "message": "m"})
    assert t.detailed_task(failed)["error"] == {"code": 1, "message": "m"} and "result" not in t.detailed_task(failed)
    for record in (asked, done, failed):
        assert "requestState" not in t.detailed_task(record) and "resultType" not in t.detailed_task(record)


def test_core_task_uses_the_2025_field_names() -> None:
    shaped = t.core_task(fresh())
    assert shaped["ttl"] == 60_000 and shaped["pollInterval"] == 500 and "ttlMs" not in shaped


def test_iso8601() -> None:
    assert t.iso8601(0) == "1970-01-01T00:00:00.000Z"
    assert t.iso8601(1.25) == "1970-01-01T00:00:01.250Z"
