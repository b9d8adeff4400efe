"""The two wires the loopback server speaks: what a request says, and the stream to answer with.

- The Anthropic Messages API (`POST /v1/messages`, Claude Code): ``messages`` whose content
  is a string or blocks (``text``, ``tool_use``, ``tool_result``), roles ``user``,
  ``assistant`` and (Claude Code 2.1) ``system`` for context it adds mid-conversation;
  ``--json-schema`` arrives as a tool named ``StructuredOutput`` whose input schema is the
  answer's. The stream: ``message_start``, per block ``content_block_start``,
  ``content_block_delta`` (``text_delta`` / ``input_json_delta``), ``content_block_stop``,
  then ``message_delta`` (the stop reason) and ``message_stop``.
- The OpenAI Responses API (`POST /v1/responses`, Codex): ``input`` items (``message`` with
  ``input_text`` / ``output_text`` parts, roles ``user``, ``developer``, ``system``,
  ``assistant``; ``function_call``; ``function_call_output``), ``instructions``, ``tools``;
  ``--output-schema`` arrives as ``text.format`` of type ``json_schema``. The stream:
  ``response.created``, per item ``response.output_item.added``, for a message
  ``response.content_part.added``, ``response.output_text.delta``,
  ``response.output_text.done``, ``response.content_part.done``, for a function call
  ``response.function_call_arguments.delta`` / ``.done``, then
  ``response.output_item.done``, and last ``response.completed`` with the usage.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from rose.sim.hosts.play import Conversation, Message, Reply

STRUCTURED = "StructuredOutput"  # the tool Claude Code asks a structured answer through
Event = tuple[str, dict[str, Any]]


def _words(text: str) -> int:
    return max(1, len(text.split()))


def _pieces(text: str) -> list[str]:
    """`text` in two deltas, as a stream would send it."""
    half = len(text) // 2
    return [p for p in (text[:half], text[half:]) if p]


def _rid(prefix: str, body: Any) -> str:
    raw = json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)
    return prefix + hashlib.sha256(raw.encode()).hexdigest()[:24]


# -- Anthropic Messages -----------------------------------------------------------------------


def _block_texts(content: Any) -> list[tuple[str, str]]:
    """(kind, text) of a message's content: "text", "tool_use" or "tool_result"."""
    if isinstance(content, str):
        return [("text", content)]
    out = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            out.append(("text", str(block.get("text") or "")))
        elif kind == "tool_use":
            out.append(("tool_use", json.dumps(block.get("input"), ensure_ascii=False)))
        elif kind == "tool_result":
            inner = block.get("content")
            texts = [t for _, t in _block_texts(inner)] if not isinstance(inner, str) else [inner]
            out.append(("tool_result", "\n".join(texts)))
    return out


def anthropic_conversation(body: dict[str, Any]) -> Conversation:
    messages: list[Message] = []
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        role = str(msg.get("role") or "")
        blocks = _block_texts(msg.get("content"))
        if role == "assistant":
            messages.append(Message("assistant", "\n".join(t for _, t in blocks)))
            continue
        results = [t for k, t in blocks if k == "tool_result"]
        if results:
            messages.append(Message("tool", "\n".join(results)))
            continue
        text = "\n".join(t for k, t in blocks if k == "text")
        messages.append(Message("user" if role == "user" else "context", text))
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    schema = next(
        (t.get("input_schema") for t in tools if t.get("name") == STRUCTURED),
        None,
    )
    return Conversation(
        tuple(messages),
        tuple(str(t.get("name")) for t in tools),
        schema if isinstance(schema, dict) else None,
    )


def anthropic_message(reply: Reply, model: str, body: Any) -> dict[str, Any]:
    """The whole message, as a non-streaming request gets it."""
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    if reply.answer is not None:
        uses = [(_rid("toolu_", [body, "answer"]), STRUCTURED, reply.answer)]
    else:
        uses = [("toolu_" + c.id, c.name, c.arguments) for c in reply.calls]
    for use_id, name, arguments in uses:
        content.append({"type": "tool_use", "id": use_id, "name": name, "input": arguments})
    out_tokens = _words(json.dumps(content))
    return {
        "id": _rid("msg_", body),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if uses else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": _words(json.dumps(body)),
            "output_tokens": out_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def anthropic_events(reply: Reply, model: str, body: Any) -> list[Event]:
    msg = anthropic_message(reply, model, body)
    start = {
        **msg,
        "content": [],
        "stop_reason": None,
        "usage": {**msg["usage"], "output_tokens": 1},
    }
    events: list[Event] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(msg["content"]):
        if block["type"] == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
        else:
            opened = {**block, "input": {}}
            raw = json.dumps(block["input"], ensure_ascii=False)
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(raw)]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": opened},
            )
        )
        if i == 0:
            events.append(("ping", {"type": "ping"}))
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d})
            for d in deltas
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": msg["usage"]["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


# -- OpenAI Responses -------------------------------------------------------------------------


def _part_texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        str(p.get("text") or "") for p in content or [] if isinstance(p, dict) and "text" in p
    )


def responses_conversation(body: dict[str, Any]) -> Conversation:
    messages: list[Message] = []
    if body.get("instructions"):
        messages.append(Message("context", str(body["instructions"])))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for item in items or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            role = str(item.get("role") or "")
            text = _part_texts(item.get("content"))
            if role == "assistant":
                messages.append(Message("assistant", text))
            else:
                messages.append(Message("user" if role == "user" else "context", text))
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            messages.append(Message("assistant", str(item.get("arguments") or item.get("input"))))
        elif kind.endswith("_output"):
            output = item.get("output")
            messages.append(Message("tool", output if isinstance(output, str) else str(output)))
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    fmt = (body.get("text") or {}).get("format") if isinstance(body.get("text"), dict) else None
    schema = (
        fmt.get("schema") if isinstance(fmt, dict) and fmt.get("type") == "json_schema" else None
    )
    return Conversation(
        tuple(messages),
        tuple(str(t.get("name") or t.get("type")) for t in tools),
        schema if isinstance(schema, dict) else None,
    )


def responses_events(reply: Reply, model: str, body: Any) -> list[Event]:
    rid = _rid("resp_", body)
    shell: dict[str, Any] = {"id": rid, "object": "response", "model": model, "output": []}
    events: list[Event] = [
        (
            "response.created",
            {"type": "response.created", "response": {**shell, "status": "in_progress"}},
        ),
    ]
    text = json.dumps(reply.answer, ensure_ascii=False) if reply.answer is not None else reply.text
    items: list[dict[str, Any]] = []
    index = 0
    if text:
        mid = _rid("msg_", [body, "text"])
        part = {"type": "output_text", "text": text, "annotations": []}
        item = {
            "type": "message",
            "id": mid,
            "role": "assistant",
            "status": "completed",
            "content": [part],
        }
        where = {"item_id": mid, "output_index": index, "content_index": 0}
        events += [
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "content": []},
                },
            ),
            (
                "response.content_part.added",
                {"type": "response.content_part.added", **where, "part": {**part, "text": ""}},
            ),
            *[
                (
                    "response.output_text.delta",
                    {"type": "response.output_text.delta", **where, "delta": p},
                )
                for p in _pieces(text)
            ],
            (
                "response.output_text.done",
                {"type": "response.output_text.done", **where, "text": text},
            ),
            (
                "response.content_part.done",
                {"type": "response.content_part.done", **where, "part": part},
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": index, "item": item},
            ),
        ]
        items.append(item)
        index += 1
    for call in reply.calls:
        args = json.dumps(call.arguments, ensure_ascii=False)
        item = {
            "type": "function_call",
            "id": "fc_" + call.id,
            "call_id": "call_" + call.id,
            "name": call.name,
            "arguments": args,
            "status": "completed",
        }
        where = {"item_id": item["id"], "output_index": index}
        events += [
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "arguments": "", "status": "in_progress"},
                },
            ),
            *[
                (
                    "response.function_call_arguments.delta",
                    {"type": "response.function_call_arguments.delta", **where, "delta": p},
                )
                for p in _pieces(args)
            ],
            (
                "response.function_call_arguments.done",
                {"type": "response.function_call_arguments.done", **where, "arguments": args},
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": index, "item": item},
            ),
        ]
        items.append(item)
        index += 1
    n_in, n_out = _words(json.dumps(body)), _words(json.dumps(items))
    usage = {
        "input_tokens": n_in,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": n_out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": n_in + n_out,
    }
    done = {**shell, "status": "completed", "output": items, "usage": usage}
    events.append(("response.completed", {"type": "response.completed", "response": done}))
    return events
