"""Chat models: any OpenAI-compatible endpoint through the `openai` SDK. The only module that calls
a chat model.

It sits in the bottom layer, below `indexing` (contextual blurbs), `chat` (answers) and `notes`
(copilots), so each of them reaches the model without importing the others.

A chat model is configured when `OPENAI_API_KEY` is set (`OPENAI_BASE_URL` points the SDK at any
OpenAI-compatible server). Project chat uses `OPENAI_PROJECT_CHAT_MODEL`, falling back to
`OPENAI_CHAT_MODEL`; per-paper chat and blurbs use `OPENAI_CHAT_MODEL`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings

from annotagent.errors import ServiceUnavailableError

if TYPE_CHECKING:
    # Imported where a model is called: the SDK takes about a second to import, which every
    # process (`manage.py ask` without a chat model too) would otherwise pay.
    import openai
    from openai import AsyncStream
    from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam


class ChatModelError(ServiceUnavailableError):
    """The chat model could not answer."""

    code = "chat_model_failed"


def chat_model_configured() -> bool:
    return bool(settings.OPENAI_API_KEY)


def configured_chat_model(*, project: bool) -> str:
    """The model name for project chat (*project*) or per-paper chat."""
    if project and settings.OPENAI_PROJECT_CHAT_MODEL:
        return settings.OPENAI_PROJECT_CHAT_MODEL
    return settings.OPENAI_CHAT_MODEL


@cache
def _clients(api_key: str, base_url: str | None, timeout: float) -> tuple[openai.OpenAI, openai.AsyncOpenAI]:
    import openai

    kwargs: dict[str, Any] = {"api_key": api_key, "base_url": base_url, "timeout": timeout, "max_retries": 2}
    return openai.OpenAI(**kwargs), openai.AsyncOpenAI(**kwargs)


def get_openai_client() -> openai.OpenAI:
    return _clients(settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL, settings.OPENAI_TIMEOUT_SECONDS)[0]


def get_async_openai_client() -> openai.AsyncOpenAI:
    return _clients(settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL, settings.OPENAI_TIMEOUT_SECONDS)[1]


def complete(prompt: str, *, model: str, max_tokens: int = 200) -> str:
    """One non-streamed completion of a single user *prompt*. Raises ChatModelError."""
    import openai

    try:
        response = get_openai_client().chat.completions.create(
            model=model, messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens, temperature=0
        )
    except openai.OpenAIError as exc:
        raise ChatModelError(f"The chat model {model} failed: {exc}") from exc
    return response.choices[0].message.content or ""


async def stream_chat(messages: list[dict[str, str]], *, model: str) -> AsyncGenerator[str, None]:
    """Stream the answer to *messages* (OpenAI chat format) as text pieces.

    Cancelling the consuming task, or closing this generator (`contextlib.aclosing`), closes the
    HTTP stream, which cancels generation on the server. Raises ChatModelError when the model cannot
    be reached or fails mid-stream.
    """
    import openai

    try:
        stream: AsyncStream[ChatCompletionChunk] = await get_async_openai_client().chat.completions.create(
            model=model,
            messages=cast("list[ChatCompletionMessageParam]", messages),
            stream=True,
            temperature=0.1,
        )
    except openai.OpenAIError as exc:
        raise ChatModelError(f"The chat model {model} failed: {exc}") from exc
    try:
        async for event in stream:
            if event.choices and event.choices[0].delta.content:
                yield event.choices[0].delta.content
    except openai.OpenAIError as exc:
        raise ChatModelError(f"The chat model {model} stopped answering: {exc}") from exc
    finally:
        await stream.close()


# --- tool calling (notes copilots) ----------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for: *arguments* is the model's JSON text, unparsed."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ToolReply:
    """One completion: its text ("" when the model wrote none) and its tool calls, in order."""

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)

    def as_message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation before answering the tool calls."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                for call in self.tool_calls
            ]
        return message


def complete_with_tools(
    messages: list[dict[str, Any]], *, model: str, tools: list[dict[str, Any]] | None, max_tokens: int = 2000
) -> ToolReply:
    """One non-streamed completion of *messages* (OpenAI chat format, tool turns included) offering
    *tools* (OpenAI function-tool schemas; None or [] offers none). Raises ChatModelError."""
    import openai

    kwargs: dict[str, Any] = {"model": model, "messages": messages, "max_tokens": max_tokens, "temperature": 0.1}
    if tools:
        kwargs["tools"] = tools
    try:
        response = get_openai_client().chat.completions.create(**kwargs)
    except openai.OpenAIError as exc:
        raise ChatModelError(f"The chat model {model} failed: {exc}") from exc
    if not response.choices:
        return ToolReply(text="")
    message = response.choices[0].message
    calls = [
        ToolCall(id=call.id, name=call.function.name, arguments=call.function.arguments or "")
        for call in message.tool_calls or []
        if getattr(call, "function", None) is not None
    ]
    return ToolReply(text=message.content or "", tool_calls=calls)


async def stream_chat_with_tools(
    messages: list[dict[str, Any]], *, model: str, tools: list[dict[str, Any]], calls: list[ToolCall]
) -> AsyncGenerator[str, None]:
    """Stream the text of one completion of *messages* offering *tools*, as `stream_chat` does;
    the tool calls the model makes are appended to *calls* once the stream has ended (their
    arguments arrive in pieces). Raises ChatModelError."""
    import openai

    try:
        stream: AsyncStream[ChatCompletionChunk] = await get_async_openai_client().chat.completions.create(
            model=model,
            messages=cast("list[ChatCompletionMessageParam]", messages),
            tools=cast("Any", tools),
            stream=True,
            temperature=0.1,
        )
    except openai.OpenAIError as exc:
        raise ChatModelError(f"The chat model {model} failed: {exc}") from exc
    pending: dict[int, dict[str, str]] = {}
    try:
        async for event in stream:
            if not event.choices:
                continue
            delta = event.choices[0].delta
            for part in delta.tool_calls or []:
                call = pending.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                call["id"] = part.id or call["id"]
                if part.function is not None:
                    call["name"] += part.function.name or ""
                    call["arguments"] += part.function.arguments or ""
            if delta.content:
                yield delta.content
    except openai.OpenAIError as exc:
        raise ChatModelError(f"The chat model {model} stopped answering: {exc}") from exc
    finally:
        await stream.close()
    calls.extend(
        ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"])
        for i, c in sorted(pending.items())
    )
