"""Errors mapped once: each library error class to one status code and a JSON body.

Every error answer has the shape ``{"error": {"type": ..., "message": ...}}``;
``type`` is the hindsight error class, so :mod:`hindsight.client` raises the
same class again. No answer carries a stack trace: an unexpected exception is
logged on the server and answered with a plain 500.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any, Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from hindsight.errors import (
    AccessError,
    AuthenticationError,
    ConflictError,
    EmbeddingError,
    ExtractionError,
    HindsightError,
    LLMError,
    MissingExtraError,
    NotFoundError,
    PluginError,
    StoreError,
    ValidationError,
)
from hindsight.serving import public_message

log = logging.getLogger("hindsight.api")

# Most specific first: the first class an error is an instance of decides its status.
STATUS_OF: Final[tuple[tuple[type[HindsightError], int], ...]] = (
    (ValidationError, 400),
    (AuthenticationError, 401),
    (AccessError, 403),
    (NotFoundError, 404),
    (ConflictError, 409),
    (StoreError, 503),
    (EmbeddingError, 503),
    (ExtractionError, 503),
    (LLMError, 503),  # the LLM provider failed: the caller may try again later
    (PluginError, 503),
    (MissingExtraError, 503),
)
# What an HTTP-level error (no route, wrong method, too large) is called in the body.
_HTTP_TYPES: Final = {404: "NotFoundError", 413: "RequestTooLarge", 422: "ValidationError"}
_MAX_LISTED = 5  # validation problems named in one message


def error_body(type_: str, message: str) -> dict[str, Any]:
    return {"error": {"type": type_, "message": message}}


def status_of(exc: HindsightError) -> int:
    for cls, status in STATUS_OF:
        if isinstance(exc, cls):
            return status
    return 400


def _headers(status: int) -> dict[str, str] | None:
    if status == 401:
        return {"WWW-Authenticate": "Bearer"}
    if status == 503:
        return {"Retry-After": "1"}
    return None


async def _domain(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HindsightError)
    status = status_of(exc)
    return JSONResponse(
        error_body(type(exc).__name__, public_message(exc)),
        status_code=status,
        headers=_headers(status),
    )


def describe_validation(errors: Any) -> str:
    """Pydantic's errors as one line, each naming where it was: ``body.owner: Field required``."""
    parts = []
    for err in list(errors)[:_MAX_LISTED]:
        where = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{where}: {err.get('msg', 'invalid')}" if where else err.get("msg", ""))
    more = len(list(errors)) - _MAX_LISTED
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


async def _request_validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return JSONResponse(
        error_body("ValidationError", describe_validation(exc.errors())), status_code=422
    )


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"
    type_ = _HTTP_TYPES.get(status, phrase.replace(" ", "").replace("-", ""))
    if status == 404:
        message = f"no route {request.method} {request.url.path}"
    elif status == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    else:
        message = str(exc.detail)
    return JSONResponse(error_body(type_, message), status_code=status, headers=exc.headers)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    # The traceback goes to the server log, never to the caller.
    log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse(
        error_body("InternalError", "an unexpected error occurred; the server log has details"),
        status_code=500,
    )


def install(app: FastAPI) -> None:
    """Register the one handler per error class."""
    app.add_exception_handler(HindsightError, _domain)
    app.add_exception_handler(RequestValidationError, _request_validation)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(Exception, _unexpected)
