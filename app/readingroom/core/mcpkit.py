"""The suite's thin MCP layer: tool declaration, the call boundary, and the stdio runner.

Uses the SDK's low-level ``Server`` (flat input schemas from pydantic models, our own error
envelopes, ``version=``). Arguments are validated by us, so a bad call gets a structured
``INVALID_ARGUMENT`` envelope rather than the SDK's plain-text error. Every result is one
:class:`~readingroom.core.envelope.Envelope`, sent as JSON text *and* ``structuredContent``.

``tools/call`` is answered by our own request handler, not the SDK's ``@server.call_tool()``
decorator: that decorator turns every exception into a tool result, while the MCP
specification answers a call to an unknown tool with a JSON-RPC error (``-32602``, invalid
params). Our handler raises :class:`~mcp.shared.exceptions.McpError` for that case, which the
low-level server sends as the error response; everything else is an envelope result.
"""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import anyio
import anyio.lowlevel
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import McpError
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import GenerateJsonSchema

from .declaration import ServerInfo
from .envelope import Envelope, envelope_json, json_safe, tool_output_schema
from .errors import Code, CoreError
from .settings import ENV_SERVER_CONCURRENCY, ENV_TOOL_DEADLINE, env_float, env_int

__all__ = [
    "ECHO_CHARS",
    "MAX_SHOWN_ERRORS",
    "PromptSpec",
    "Reply",
    "ResourceSpec",
    "ToolSpec",
    "build_server",
    "configure_logging",
    "input_schema",
    "run_stdio",
    "serve_stdio",
    "to_result",
    "unknown_tool_error",
]

log = logging.getLogger("readingroom.mcpkit")



@dataclass(frozen=True)
class Reply:
    """An envelope plus content blocks sent after its JSON text (e.g. a rendered image).

    A handler returns a plain :class:`Envelope` in the common case; a ``Reply`` only when the
    result carries more than the envelope.
    """

    envelope: Envelope
    attachments: Sequence[types.ContentBlock] = ()
    text: str | None = None
    """The text content instead of the envelope's JSON (e.g. a Markdown rendering of it);
    ``structuredContent`` still carries the whole envelope."""


@dataclass(frozen=True)
class ResourceSpec:
    """A static resource: its URI, names, and the function that renders its text."""

    uri: str
    name: str
    title: str
    description: str
    read: Callable[[], str]
    mime_type: str = "text/markdown"


@dataclass(frozen=True)
class PromptSpec:
    """A prompt template: its arguments ``(name, description, required)`` and its renderer."""

    name: str
    title: str
    description: str
    arguments: Sequence[tuple[str, str, bool]]
    render: Callable[[Mapping[str, str]], str]


Handler = Callable[[Any], Awaitable[Envelope | Reply]]


class _InputSchema(GenerateJsonSchema):
    """pydantic's JSON Schema without the titles it derives from names.

    pydantic gives every field a ``title`` made from its name (``from_year`` → "From Year")
    and the schema the class name: they repeat what the key already says, and across the
    suite's ``tools/list`` they cost about 100 bytes a tool. A title set on purpose
    (``Field(title=...)``, ``model_config["title"]``) is kept.
    """

    def field_title_should_be_set(self, schema: Any) -> bool:
        """Never a derived field title (a title given by ``Field(title=...)`` is kept)."""
        return False


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The ``inputSchema`` a tool declares for ``model``: pydantic's, less derived titles."""
    schema = model.model_json_schema(schema_generator=_InputSchema)
    if "title" not in model.model_config and schema.get("title") == model.__name__:
        del schema["title"]
    return schema


@dataclass(frozen=True)
class ToolSpec:
    """A fully declared tool: name, title, description for the model, input model, hints."""

    name: str
    title: str
    description: str
    input_model: type[BaseModel]
    handler: Handler
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = True
    structured: bool = True
    """False: results carry no ``structuredContent`` and the tool declares no output schema
    (for hosts that drop ``content`` when structured content is present)."""

    def declaration(self, server: str) -> types.Tool:
        """The ``tools/list`` entry, with all four annotations stated explicitly.

        The output schema is the compact one of :func:`~.envelope.tool_output_schema`: the
        tool's own constants and the fields an answer is read from, the rest of the envelope
        described by the published schema; the input schema is :func:`input_schema`'s.
        """
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            inputSchema=input_schema(self.input_model),
            outputSchema=tool_output_schema(server, self.name) if self.structured else None,
            annotations=types.ToolAnnotations(
                title=self.title,
                readOnlyHint=self.read_only,
                destructiveHint=self.destructive,
                idempotentHint=self.idempotent,
                openWorldHint=self.open_world,
            ),
        )


def to_result(
    env: Envelope,
    attachments: Sequence[types.ContentBlock] = (),
    *,
    structured: bool = True,
    text: str | None = None,
) -> types.CallToolResult:
    """One envelope → JSON text content + ``structuredContent``; ``isError`` iff it failed.

    ``attachments`` follow the text block; ``structured=False`` leaves out
    ``structuredContent`` (the text block still holds the whole envelope); ``text`` replaces
    the JSON text (structured content is then always sent).
    """
    data = env.to_data()
    shown = envelope_json(data) if text is None else json_safe(text)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=shown), *attachments],
        structuredContent=data if structured or text is not None else None,
        isError=env.error is not None,
    )


ECHO_CHARS = 80
"""The most characters of a refused argument (a name or a message quoting it) a reply shows."""
MAX_SHOWN_ERRORS = 20
"""The most validation errors a reply lists (a list of a million bad items has as many)."""


def _prefix(text: str, limit: int = ECHO_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters)"


def _validation_details(exc: ValidationError) -> list[dict[str, Any]]:
    """Where and what, never the refused input: no ``input_value``, no context, and every
    location part and message cut to a short prefix (a 50 MB unknown key is a location)."""
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    shown: list[dict[str, Any]] = [
        {"loc": [_prefix(str(p)) for p in e.get("loc", ())],
         "msg": _prefix(str(e.get("msg", "")), 4 * ECHO_CHARS), "type": e.get("type")}
        for e in errors[:MAX_SHOWN_ERRORS]
    ]
    if len(errors) > MAX_SHOWN_ERRORS:
        shown.append({"loc": [], "msg": f"and {len(errors) - MAX_SHOWN_ERRORS} more errors",
                      "type": "more"})
    return shown


def unknown_tool_error(server: str, tool_name: str, known: Sequence[str]) -> types.ErrorData:
    """The JSON-RPC error for a call to a tool the server does not have (``-32602``).

    ``data`` carries the suite's code and the tool names, so a model can correct its call.
    """
    return types.ErrorData(
        code=types.INVALID_PARAMS,
        message=f"Unknown tool: {tool_name!r} is not a tool of {server}.",
        data={"code": Code.UNKNOWN_TOOL.value, "tool": tool_name, "available_tools": list(known)},
    )


def _deadline_error(
    tool_name: str, deadline_s: float, *, started: bool, concurrency: int
) -> CoreError:
    """``DEADLINE_EXCEEDED`` for a call that ran out of time, running or still waiting."""
    if started:
        return CoreError(
            Code.DEADLINE_EXCEEDED,
            f"{tool_name} did not finish within {deadline_s:g} s.",
            details={"deadline_s": deadline_s},
            remediation="Narrow the request or try again later; the result is unknown.",
        )
    return CoreError(
        Code.DEADLINE_EXCEEDED,
        f"{tool_name} could not start within {deadline_s:g} s: the server was already "
        f"running {concurrency} calls, its limit.",
        details={"deadline_s": deadline_s, "started": False, "concurrency": concurrency},
        remediation="Send fewer calls at once, or try again later; the result is unknown.",
    )


def build_server(
    info: ServerInfo,
    instructions: str,
    tools: Sequence[ToolSpec],
    *,
    env: Mapping[str, str] | None = None,
    finish: Callable[[Envelope, str], None] | None = None,
    resources: Sequence[ResourceSpec] = (),
    prompts: Sequence[PromptSpec] = (),
) -> Server:
    """Build a low-level MCP server whose every tool answers with an :class:`Envelope`.

    The admission limit and the per-call deadline come from ``READINGROOM_CONCURRENCY``
    (default 4, 1-16) and ``READINGROOM_TOOL_DEADLINE`` (default ``info.deadline_s``, 1-900).
    The deadline counts from the call's arrival, so time spent waiting for admission counts
    too: a call that cannot start in time is answered ``DEADLINE_EXCEEDED`` (details
    ``started: false``) when its deadline passes, never later.

    Args:
        info: the server's declaration (``serverInfo.name`` and the envelope's ``server``).
        instructions: the tool-selection guide sent at ``initialize``.
        tools: the declared tools.
        env: where to read the settings (default ``os.environ``).
        finish: called on every envelope before it is sent (e.g. to add the attribution a
            licence requires on *every* response, failures included). An envelope that
            still has no attribution then gets ``info.credit``.
        resources: static resources (``resources/list`` and ``resources/read`` are served
            only when there are some).
        prompts: prompt templates (``prompts/list`` and ``prompts/get`` likewise).
    """
    from .. import __version__

    name = info.name
    concurrency = env_int(ENV_SERVER_CONCURRENCY, 4, 1, 16, env)
    deadline_s = env_float(ENV_TOOL_DEADLINE, info.deadline_s, 1.0, 900.0, env)
    version = __version__
    server: Server = Server(name, version=version, instructions=instructions)
    by_name = {t.name: t for t in tools}
    declarations = [t.declaration(name) for t in tools]
    admission = anyio.CapacityLimiter(concurrency)

    @server.list_tools()
    async def _list_tools() -> list[types.Tool]:
        return declarations

    def send(env: Envelope, spec: ToolSpec, attachments: Sequence[types.ContentBlock] = (),
             text: str | None = None) -> types.CallToolResult:
        try:
            if (env.server, env.operation) != (name, spec.name):
                # Each tool declares its server and operation as constants of its output
                # schema, which an SDK client holds every structuredContent to: an envelope
                # naming another would be refused whole. The answer is kept; the label is not.
                log.error("%s answered an envelope of %s/%s; sent as %s/%s", spec.name,
                          env.server, env.operation, name, spec.name)
                env.server, env.operation = name, spec.name
            if finish is not None:
                finish(env, spec.name)
            if not env.attribution and info.credit:
                env.attribution = list(info.credit)
            return to_result(env, attachments, structured=spec.structured, text=text)
        except Exception:  # a defect: the call is still answered, with what it really got
            log.exception("the reply of %s could not be built", spec.name)
            err = CoreError(
                Code.INTERNAL_ERROR,
                f"{spec.name} built a reply that could not be sent.",
                remediation="This is a defect; the server's stderr log has the traceback.",
            )
            # A receipt deposited for this envelope recorded this failure too (receipt.deposit
            # tries the same serialisation before it writes), so it stays with the answer.
            failed = Envelope.failure(name, spec.name, err, receipt=env.receipt,
                                      attribution=list(info.credit))
            return to_result(failed, structured=spec.structured)

    async def report_started(tool_name: str) -> None:
        # A host that asked for progress learns the call left the admission queue; it is also
        # the signal a client needs to cancel a call that has really begun.
        ctx = server.request_context
        token = ctx.meta.progressToken if ctx.meta is not None else None
        if token is not None:
            await ctx.session.send_progress_notification(
                token, 0.0, message=f"{tool_name} started",
                related_request_id=str(ctx.request_id),
            )

    async def run_tool(spec: ToolSpec, arguments: dict[str, Any]) -> types.CallToolResult:
        tool_name = spec.name
        try:
            args = spec.input_model.model_validate(arguments)
        except ValidationError as exc:
            err = CoreError(
                Code.INVALID_ARGUMENT,
                f"Arguments for {tool_name} do not match its input schema.",
                details={"errors": _validation_details(exc)},
                remediation="Fix the named arguments; the input schema is in tools/list.",
            )
            return send(Envelope.failure(name, tool_name, err), spec)
        attachments: Sequence[types.ContentBlock] = ()
        text: str | None = None
        # The deadline counts from the call's arrival, not from its admission: a host with its
        # own limit must get this structured answer even for a call that waited for a slot.
        started = False
        try:
            with anyio.fail_after(deadline_s):
                async with admission:
                    started = True
                    await report_started(tool_name)
                    out = await spec.handler(args)
            if isinstance(out, Reply):
                env, attachments, text = out.envelope, out.attachments, out.text
            else:
                env = out
        except TimeoutError:
            env = Envelope.failure(name, tool_name, _deadline_error(
                tool_name, deadline_s, started=started, concurrency=concurrency))
        except CoreError as exc:
            env = Envelope.failure(name, tool_name, exc)
        except Exception:  # a defect: log it, answer in the envelope, keep serving
            log.exception("tool %s failed", tool_name)
            err = CoreError(
                Code.INTERNAL_ERROR,
                f"{tool_name} failed inside the server.",
                remediation="This is a defect; the server's stderr log has the traceback.",
            )
            env = Envelope.failure(name, tool_name, err)
        return send(env, spec, attachments, text)

    async def _call_tool(req: types.CallToolRequest) -> types.ServerResult:
        tool_name = req.params.name
        spec = by_name.get(tool_name)
        if spec is None:
            raise McpError(unknown_tool_error(name, tool_name, sorted(by_name)))
        return types.ServerResult(await run_tool(spec, req.params.arguments or {}))

    server.request_handlers[types.CallToolRequest] = _call_tool
    if resources:
        _add_resources(server, resources)
    if prompts:
        _add_prompts(server, prompts)
    for request_type, handler in list(server.request_handlers.items()):
        server.request_handlers[request_type] = _cancel_aware(handler)
    return server


def _cancel_aware(
    handler: Callable[[Any], Awaitable[types.ServerResult]],
) -> Callable[[Any], Awaitable[types.ServerResult]]:
    """``handler``, ending in a checkpoint when its request was cancelled meanwhile.

    A client's cancel read while the handler's last await already holds its result (the task
    not yet resumed) is not delivered to it: anyio cancels only a task whose wait is pending.
    The SDK's cancel then answers the request and marks it answered, the handler returns, and
    the SDK's own ``respond()`` fails an assertion that ends the whole server (python-sdk
    #2416, open in 1.30). A checkpoint here lets the cancellation land first, which the SDK
    handles as a cancelled call; after it nothing awaits before ``respond()``.
    """

    async def answer(request: Any) -> types.ServerResult:
        result = await handler(request)
        await anyio.lowlevel.checkpoint_if_cancelled()
        return result

    return answer


def _add_resources(server: Server, specs: Sequence[ResourceSpec]) -> None:
    """Serve ``resources/list`` and ``resources/read`` for static resources."""
    from mcp.server.lowlevel.helper_types import ReadResourceContents
    from pydantic import AnyUrl

    by_uri = {s.uri: s for s in specs}

    @server.list_resources()
    async def _list_resources() -> list[types.Resource]:
        return [types.Resource(uri=AnyUrl(s.uri), name=s.name, title=s.title,
                               description=s.description, mimeType=s.mime_type) for s in specs]

    @server.read_resource()
    async def _read_resource(uri: AnyUrl) -> list[ReadResourceContents]:
        spec = by_uri.get(str(uri))
        if spec is None:
            raise McpError(types.ErrorData(code=types.INVALID_PARAMS,
                                           message=f"Unknown resource: {uri}"))
        return [ReadResourceContents(content=spec.read(), mime_type=spec.mime_type)]


def _add_prompts(server: Server, specs: Sequence[PromptSpec]) -> None:
    """Serve ``prompts/list`` and ``prompts/get`` for prompt templates."""
    by_name = {s.name: s for s in specs}

    @server.list_prompts()
    async def _list_prompts() -> list[types.Prompt]:
        return [types.Prompt(name=s.name, title=s.title, description=s.description,
                             arguments=[types.PromptArgument(name=n, description=d, required=r)
                                        for n, d, r in s.arguments]) for s in specs]

    @server.get_prompt()
    async def _get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        spec = by_name.get(name)
        if spec is None:
            raise McpError(types.ErrorData(code=types.INVALID_PARAMS,
                                           message=f"Unknown prompt: {name!r}"))
        given = dict(arguments or {})
        missing = [n for n, _d, required in spec.arguments if required and not given.get(n)]
        if missing:
            raise McpError(types.ErrorData(code=types.INVALID_PARAMS,
                                           message=f"{name} needs {', '.join(missing)}"))
        text = spec.render(given)
        return types.GetPromptResult(description=spec.description, messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])


def configure_logging(level: int = logging.INFO) -> None:
    """Log to stderr only, and quiet loggers that would print URLs or per-request noise."""
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    # The SDK logs every request at INFO; httpx logs full URLs (search terms travel in them).
    for noisy in ("mcp.server.lowlevel.server", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


async def serve_stdio(
    server: Server, proto_out: io.TextIOWrapper, stdin: BinaryIO | None = None
) -> None:
    """Serve ``server`` over stdin and the reserved protocol stream until stdin closes.

    The transport is the suite's own (:mod:`readingroom.core.transport`): a line the SDK would
    drop unanswered (not JSON, a batch, a bad id, a lone surrogate, too deep) is answered with
    the JSON-RPC error it deserves.
    """
    from .transport import stdio_transport

    async with stdio_transport(stdin or sys.stdin.buffer, proto_out) as (read, write):
        await server.run(read, write, server.create_initialization_options())


def run_stdio(server: Server, proto_out: io.TextIOWrapper) -> None:
    """Run a server over stdio to completion (the body of every server's ``main``)."""
    anyio.run(serve_stdio, server, proto_out)
