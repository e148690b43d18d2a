"""Chat models: any OpenAI-compatible endpoint through the `openai` SDK. The only module that calls
a chat model.

A chat model is configured when `OPENAI_API_KEY` is set (`OPENAI_BASE_URL` points the SDK at any
OpenAI-compatible server). Project chat uses `OPENAI_PROJECT_CHAT_MODEL`, falling back to
`OPENAI_CHAT_MODEL`; per-paper chat and blurbs use `OPENAI_CHAT_MODEL`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from functools import cache
from typing import Any, cast

import openai
from django.conf import settings
from openai import AsyncStream
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam

from annotagent.errors import ServiceUnavailableError


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
    kwargs: dict[str, Any] = {"api_key": api_key, "base_url": base_url, "timeout": timeout, "max_retries": 2}
    return openai.OpenAI(**kwargs), openai.AsyncOpenAI(**kwargs)


def get_openai_client() -> openai.OpenAI:
    return _clients(settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL, settings.OPENAI_TIMEOUT_SECONDS)[0]


def get_async_openai_client() -> openai.AsyncOpenAI:
    return _clients(settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL, settings.OPENAI_TIMEOUT_SECONDS)[1]


def complete(prompt: str, *, model: str, max_tokens: int = 200) -> str:
    """One non-streamed completion of a single user *prompt*. Raises ChatModelError."""
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
