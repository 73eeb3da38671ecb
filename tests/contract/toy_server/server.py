"""toy-mcp's tools: an echo, a wait that deadline and cancel tests can hold open, a failure.

Built with :func:`readingroom.core.mcpkit.build_server` like every real server, so whatever
the contract checks here it checks of the kit, not of a server's own code.
"""

from __future__ import annotations

from collections.abc import Mapping

import anyio
from mcp.server.lowlevel import Server
from pydantic import BaseModel, ConfigDict, Field

from readingroom.core.envelope import Envelope
from readingroom.core.errors import Code, CoreError
from readingroom.core.mcpkit import ToolSpec, build_server

from . import SERVER

__all__ = ["INSTRUCTIONS", "WaitRoom", "build_toy_server", "tool_specs"]

INSTRUCTIONS = (
    "toy-mcp exists for tests: toy_echo sends text back, toy_wait waits, toy_fail always "
    "fails with NOT_FOUND."
)


class EchoInput(BaseModel):
    """The text to send back."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=1000, description="Text to send back unchanged.")


class WaitInput(BaseModel):
    """How long to wait, and a label to tell calls apart."""

    model_config = ConfigDict(extra="forbid")

    seconds: float = Field(ge=0, le=120, description="Seconds to wait before answering.")
    label: str = Field("", max_length=40, description="Echoed in the answer.")


class FailInput(BaseModel):
    """The record that will not be found."""

    model_config = ConfigDict(extra="forbid")

    record: str = Field(min_length=1, max_length=100, description="Any record id.")


class WaitRoom:
    """Lets an in-process test see when ``toy_wait`` calls begin and decide when they end.

    A call labelled ``x`` sets :meth:`entered` ``("x")``, then waits until :meth:`release`
    ``("x")`` or its ``seconds`` run out. :attr:`log` records ``start x`` / ``end x`` in order.
    Create it inside the event loop that runs the server.
    """

    def __init__(self) -> None:
        self.log: list[str] = []
        self._entered: dict[str, anyio.Event] = {}
        self._released: dict[str, anyio.Event] = {}

    def entered(self, label: str) -> anyio.Event:
        """The event set when the call labelled ``label`` has begun its body."""
        return self._entered.setdefault(label, anyio.Event())

    def release(self, label: str) -> None:
        """Let the call labelled ``label`` finish (now, or as soon as it begins)."""
        self._released.setdefault(label, anyio.Event()).set()

    async def hold(self, label: str, seconds: float) -> bool:
        """The body of a held call; True when it was released before ``seconds`` ran out."""
        self.log.append(f"start {label}")
        self.entered(label).set()
        with anyio.move_on_after(seconds):
            await self._released.setdefault(label, anyio.Event()).wait()
        self.log.append(f"end {label}")
        return self._released[label].is_set()


def tool_specs(room: WaitRoom | None = None) -> list[ToolSpec]:
    """The three toy tools; ``toy_wait`` is held by ``room`` when one is given."""

    async def echo(args: EchoInput) -> Envelope:
        return Envelope(server=SERVER.name, operation="toy_echo", data={"text": args.text})

    async def wait(args: WaitInput) -> Envelope:
        if room is None:
            await anyio.sleep(args.seconds)
            released = False
        else:
            released = await room.hold(args.label, args.seconds)
        return Envelope(server=SERVER.name, operation="toy_wait",
                        data={"label": args.label, "released": released})

    async def fail(args: FailInput) -> Envelope:
        raise CoreError(Code.NOT_FOUND, "The toy has no records.",
                        details={"record": args.record},
                        remediation="Nothing to do: toy_fail always fails.")

    return [
        ToolSpec(name="toy_echo", title="Echo text", input_model=EchoInput, handler=echo,
                 description="Send text back unchanged in data.text. Use to check the "
                 "connection."),
        ToolSpec(name="toy_wait", title="Wait, then answer", input_model=WaitInput,
                 handler=wait, open_world=False,
                 description="Wait `seconds`, then answer with data.label. Reports progress "
                 "once when it begins, if asked to. Use to test deadlines and cancels."),
        ToolSpec(name="toy_fail", title="Fail on purpose", input_model=FailInput,
                 handler=fail, open_world=False,
                 description="Always fails with a NOT_FOUND envelope. Use to test failures."),
    ]


def build_toy_server(env: Mapping[str, str] | None = None, *, room: WaitRoom | None = None
                     ) -> Server:
    """Build toy-mcp (settings from ``env``, default ``os.environ``)."""
    return build_server(SERVER, INSTRUCTIONS, tool_specs(room), env=env)
