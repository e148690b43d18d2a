"""The one error base of Annotagent.

Every error a user may see derives from `AnnotagentError`: a stable machine-readable `code` and a
user-safe `message`. Errors are raised in services and wrapper modules and mapped at the edges: the
DRF exception handler (`annotagent.exceptions`), the consumer's `error` event, `messages.error` in views.
"""

from http import HTTPStatus


class AnnotagentError(Exception):
    """Base of every user-facing error.

    Subclasses set `code` (stable, snake_case, part of the API contract) and `status` (the HTTP
    status the API answers with). `message` must be safe to show to the user who caused it.
    """

    code = "error"
    status = HTTPStatus.BAD_REQUEST

    def __init__(self, message: str = "") -> None:
        self.message = message or self.__doc__ or self.code
        super().__init__(self.message)


class ServiceUnavailableError(AnnotagentError):
    """A backing service (chunk index, embedding or chat model) could not be reached."""

    code = "service_unavailable"
    status = HTTPStatus.SERVICE_UNAVAILABLE


class ForbiddenError(AnnotagentError):
    """You may see this, but your role does not allow this action."""

    code = "forbidden"
    status = HTTPStatus.FORBIDDEN
